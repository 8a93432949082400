//! Turns a page-at-a-time call that returns `lastKey` into a stream of every item, to the end.

use super::ClientError;
use futures::{Stream, TryStreamExt};
use std::future::Future;

/// Calls `fetch` with no key, then with each `lastKey` it returns, until one comes back absent.
pub fn paginate<'a, T, F, Fut>(fetch: F) -> impl Stream<Item = Result<T, ClientError>> + 'a
where
    T: 'a,
    F: FnMut(Option<String>) -> Fut + 'a,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), ClientError>> + 'a,
{
    // `None` means done; `Some(None)` the first page; `Some(Some(key))` a following one.
    futures::stream::try_unfold((fetch, Some(None::<String>)), |(mut fetch, next)| async move {
        let Some(last_key) = next else { return Ok(None) };
        let (items, following) = fetch(last_key).await?;
        let page = futures::stream::iter(items.into_iter().map(Ok));
        Ok(Some((page, (fetch, following.map(Some)))))
    })
    .try_flatten()
}
