//! Collecting gateway results: every send group walked page by page, pending records re-read with backoff until a horizon.
//!
//! Collecting only reads, and reads change nothing at the service, so a read that failed in a
//! way that may pass (429, 503, another 5xx, a timeout, a lost connection) is tried again.

use super::checkpoint::{Checkpoint, ChunkState, FinalResult, RunMeta};
use super::control::{until_stopped, Control};
use super::events::{Event, Sink};
use super::pace;
use crate::api::gateway::{final_result, SendRecord, RESULT_PAGE_MAX};
use crate::api::now_millis;
use crate::client::{Client, ClientError, ErrorKind};
use anyhow::Result;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::time::Duration;

/// Tries of one read before collect gives up on it.
pub const READ_ATTEMPTS: u32 = 5;

#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    /// An answer another try would not change (a 4xx, an unreadable body).
    #[error(transparent)]
    Read(ClientError),
    #[error("collect gave up after {attempts} tries of one read (429, 503, other 5xx, timeouts and lost connections are tried again, with backoff)")]
    GaveUp {
        attempts: u32,
        #[source]
        last: ClientError,
    },
    #[error("the result listing of send group {send_group_id} answered lastKey {last_key:?} a second time: the service repeats itself, so collect stops instead of reading the same pages forever")]
    RepeatedLastKey { send_group_id: String, last_key: String },
}

/// How `collect` waits.
#[derive(Debug, Clone)]
pub struct CollectOptions {
    /// No lookup before a send is this old: the service fixes results "about 5 minutes" after
    /// acceptance and advises that an immediate re-read has no effect.
    pub min_age: Duration,
    /// First wait between re-reads of records still pending; doubles up to 5 minutes.
    pub poll_every: Duration,
    /// After this long since acceptance, a record still pending is left `provisional`.
    pub horizon: Duration,
    /// Page size for the send-group listing (1 to 500).
    pub page_size: u32,
}

impl Default for CollectOptions {
    fn default() -> Self {
        CollectOptions {
            min_age: Duration::from_secs(300),
            poll_every: Duration::from_secs(60),
            horizon: Duration::from_secs(3_600),
            page_size: RESULT_PAGE_MAX,
        }
    }
}

/// What a collection found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CollectReport {
    /// Accepted gateway recipients (the ones that have a final result to collect).
    pub accepted: u64,
    /// Final results by value (`OK`, `FAILED`, `GIVEUP`, `GW_PENDING` for provisional ones).
    pub results: BTreeMap<String, u64>,
    pub provisional: u64,
    /// Records that neither the listing nor the single lookup returned.
    pub missing: u64,
    pub pages_read: u64,
    /// Records a listing returned more than once (a listing that repeats is the service's fault).
    pub repeated: u64,
    pub single_lookups: u64,
    /// Reads tried again after a failure that may pass (429, 503, another 5xx, a timeout, a lost connection).
    pub read_retries: u64,
    /// Accepted recipients whose final result was still to be read when a stop came.
    #[serde(skip_serializing_if = "is_zero")]
    pub left_by_stop: u64,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

impl CollectReport {
    /// What was collected, in one line (`msgbatch collect` prints it; the console shows it).
    pub fn line(&self) -> String {
        let results: Vec<String> = self.results.iter().map(|(result, n)| format!("{result} {n}")).collect();
        format!(
            "collected {} accepted gateway recipient(s): {} ({} page(s), {} single lookup(s)); provisional {}, missing {}",
            self.accepted,
            results.join(", "),
            self.pages_read,
            self.single_lookups,
            self.provisional,
            self.missing
        )
    }
}

/// Accepted ids still to settle, per send group, with the time the group was accepted.
struct Group {
    accepted_at: i64,
    ids: HashSet<String>,
    next_read_at: i64,
    wait: Duration,
}

fn record_final(record: &SendRecord, provisional: bool) -> FinalResult {
    FinalResult {
        result: record
            .result
            .clone()
            .unwrap_or_else(|| final_result::PENDING.to_string()),
        status: record.status.clone(),
        error_message: record.error_message.clone(),
        date: record.date,
        checked_at: now_millis(),
        provisional,
    }
}

fn is_settled(record: &SendRecord) -> bool {
    record.result.as_deref().is_some_and(|r| r != final_result::PENDING)
}

/// Whether a failed read may succeed when tried again. Which failures, not when: that is `read`.
fn read_may_pass(error: &ClientError) -> bool {
    match error.kind() {
        ErrorKind::RateLimited
        | ErrorKind::Unavailable
        | ErrorKind::Timeout
        | ErrorKind::Connect
        | ErrorKind::ConnectionDropped => true,
        ErrorKind::Service => error.http_status().is_some_and(|status| status >= 500),
        ErrorKind::Decode | ErrorKind::Transport | ErrorKind::Redirect | ErrorKind::Endpoint => false,
    }
}

/// One read, tried up to `READ_ATTEMPTS` times with the engine's capped, jittered backoff, never
/// sooner than the service's `Retry-After`.
async fn read<T, F, Fut>(retries: &mut u64, mut call: F) -> Result<T, CollectError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ClientError>>,
{
    let mut attempt = 1;
    loop {
        match call().await {
            Ok(answer) => return Ok(answer),
            Err(error) if !read_may_pass(&error) => return Err(CollectError::Read(error)),
            Err(error) if attempt >= READ_ATTEMPTS => {
                return Err(CollectError::GaveUp {
                    attempts: attempt,
                    last: error,
                })
            }
            Err(error) => {
                *retries += 1;
                tokio::time::sleep(pace::backoff(attempt, error.retry_after())).await;
                attempt += 1;
            }
        }
    }
}

fn is_not_found(error: &CollectError) -> bool {
    matches!(error, CollectError::Read(error) if error.http_status() == Some(404))
}

/// Reads the final result of every accepted gateway recipient of the run into the checkpoint.
pub async fn collect(
    checkpoint: &Checkpoint,
    meta: &RunMeta,
    client: &Client,
    options: &CollectOptions,
    control: &Control,
    events: &dyn Sink,
) -> Result<CollectReport> {
    let mut report = CollectReport::default();
    if meta.kind != crate::campaign::Kind::GatewayAlimtalk.as_str() {
        return Ok(report);
    }
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    let records = checkpoint.chunk_records()?;
    let mut keys: Vec<_> = records.iter().filter(|(_, r)| r.state == ChunkState::Done).collect();
    keys.sort_by_key(|(key, _)| **key);
    for (key, record) in keys {
        let Some(send_group_id) = &record.send_group_id else {
            continue;
        };
        for result in checkpoint.results(*key)?.unwrap_or_default() {
            let Some(id) = result.id.filter(|_| result.accepted) else {
                continue;
            };
            report.accepted += 1;
            if checkpoint
                .final_result(&id)?
                .is_some_and(|f| f.result != final_result::PENDING)
            {
                continue;
            }
            let group = groups.entry(send_group_id.clone()).or_insert_with(|| Group {
                accepted_at: result.date,
                ids: HashSet::new(),
                next_read_at: result.date + options.min_age.as_millis() as i64,
                wait: options.poll_every,
            });
            group.ids.insert(id);
        }
    }
    let to_settle: u64 = groups.values().map(|g| g.ids.len() as u64).sum();
    let mut settled = 0;
    let mut tell = |more: u64| {
        settled += more;
        events.event(&Event::Collecting {
            settled,
            total: to_settle,
        });
    };
    tell(0);
    while !groups.is_empty() {
        let now = now_millis();
        let next = groups.values().map(|g| g.next_read_at).min().expect("not empty");
        if next > now {
            let wait = Duration::from_millis((next - now) as u64);
            if wait > Duration::from_secs(5) {
                events.event(&Event::CollectWait {
                    seconds: wait.as_secs(),
                });
            }
            let mut controls = control.watch();
            tokio::select! {
                _ = tokio::time::sleep(wait) => continue,
                _ = until_stopped(&mut controls) => {
                    // What is read stays read; the rest is for the next `collect`.
                    report.left_by_stop = groups.values().map(|group| group.ids.len() as u64).sum();
                    break;
                }
            }
        }
        let due: Vec<String> = groups
            .iter()
            .filter(|(_, g)| g.next_read_at <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for send_group_id in due {
            let group = groups.get_mut(&send_group_id).expect("due group exists");
            let mut finals = Vec::new();
            let mut listed = HashSet::new();
            let mut last_key: Option<String> = None;
            let mut keys_given = HashSet::new();
            loop {
                let page = match read(&mut report.read_retries, || {
                    client.result_page(&send_group_id, Some(options.page_size), last_key.as_deref())
                })
                .await
                {
                    Ok(page) => page,
                    Err(error) if is_not_found(&error) => break,
                    Err(error) => return Err(error.into()),
                };
                report.pages_read += 1;
                for record in &page.items {
                    if !listed.insert(record.id.clone()) {
                        report.repeated += 1;
                        continue;
                    }
                    if group.ids.contains(&record.id) && is_settled(record) {
                        finals.push((record.id.clone(), record_final(record, false)));
                    }
                }
                match page.last_key {
                    Some(key) if !keys_given.insert(key.clone()) => {
                        return Err(CollectError::RepeatedLastKey {
                            send_group_id: send_group_id.clone(),
                            last_key: key,
                        }
                        .into())
                    }
                    Some(key) => last_key = Some(key),
                    None => break,
                }
            }
            // Stragglers: accepted ids the listing did not show, looked up one by one.
            let stragglers: Vec<String> = group.ids.iter().filter(|id| !listed.contains(*id)).cloned().collect();
            for id in stragglers {
                report.single_lookups += 1;
                match read(&mut report.read_retries, || client.result(&id)).await {
                    Ok(record) if is_settled(&record) => finals.push((id, record_final(&record, false))),
                    Ok(_) => {}
                    Err(error) if is_not_found(&error) => {
                        report.missing += 1;
                        group.ids.remove(&id);
                    }
                    Err(error) => return Err(error.into()),
                }
            }
            for (id, _) in &finals {
                group.ids.remove(id);
            }
            tell(finals.len() as u64);
            checkpoint.put_finals(&finals)?;
            let now = now_millis();
            if group.ids.is_empty() {
                groups.remove(&send_group_id);
            } else if now - group.accepted_at >= options.horizon.as_millis() as i64 {
                let provisional: Vec<(String, FinalResult)> = group
                    .ids
                    .iter()
                    .map(|id| {
                        let record = SendRecord {
                            id: id.clone(),
                            result: Some(final_result::PENDING.into()),
                            ..SendRecord::default()
                        };
                        (id.clone(), record_final(&record, true))
                    })
                    .collect();
                checkpoint.put_finals(&provisional)?;
                tell(provisional.len() as u64);
                groups.remove(&send_group_id);
            } else {
                let horizon_at = group.accepted_at + options.horizon.as_millis() as i64;
                group.next_read_at = (now + group.wait.as_millis() as i64).min(horizon_at);
                group.wait = (group.wait * 2).min(Duration::from_secs(300));
            }
        }
        checkpoint.flush()?;
    }
    // Tally what the checkpoint now holds for every accepted id.
    for (key, record) in checkpoint.chunk_records()? {
        if record.state != ChunkState::Done || record.send_group_id.is_none() {
            continue;
        }
        for result in checkpoint.results(key)?.unwrap_or_default() {
            let Some(id) = result.id.filter(|_| result.accepted) else {
                continue;
            };
            if let Some(found) = checkpoint.final_result(&id)? {
                *report.results.entry(found.result.clone()).or_default() += 1;
                report.provisional += found.provisional as u64;
            }
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn unavailable(retry_after: Option<Duration>) -> ClientError {
        ClientError::Unavailable {
            path: "/result/x".into(),
            retry_after,
        }
    }

    fn service(http: u16) -> ClientError {
        ClientError::Service {
            path: "/result/x".into(),
            http,
            code: None,
            message: None,
        }
    }

    /// Runs `read` over answers given in order, and counts the calls.
    async fn read_through(answers: Vec<Result<u8, ClientError>>) -> (Result<u8, CollectError>, u32, u64) {
        let answers = std::cell::RefCell::new(answers.into_iter());
        let calls = Cell::new(0);
        let mut retries = 0;
        let outcome = read(&mut retries, || {
            calls.set(calls.get() + 1);
            let answer = answers.borrow_mut().next().expect("no more calls than answers");
            async move { answer }
        })
        .await;
        (outcome, calls.get(), retries)
    }

    #[tokio::test(start_paused = true)]
    async fn a_refused_read_is_tried_again_no_sooner_than_retry_after() {
        let start = tokio::time::Instant::now();
        let answers = vec![
            Err(unavailable(Some(Duration::from_secs(7)))),
            Err(ClientError::RateLimited {
                path: "/result/x".into(),
                retry_after: Some(Duration::from_secs(3)),
            }),
            Ok(1),
        ];
        let (outcome, calls, retries) = read_through(answers).await;
        assert_eq!(outcome.expect("the third try answers"), 1);
        assert_eq!((calls, retries), (3, 2));
        assert!(start.elapsed() >= Duration::from_secs(10), "{:?}", start.elapsed());
    }

    #[tokio::test(start_paused = true)]
    async fn a_read_that_keeps_failing_gives_up_after_the_bounded_tries() {
        let answers = (0..READ_ATTEMPTS).map(|_| Err(service(502))).collect();
        let (outcome, calls, retries) = read_through(answers).await;
        match outcome {
            Err(CollectError::GaveUp { attempts, last }) => {
                assert_eq!(attempts, READ_ATTEMPTS);
                assert_eq!(last.http_status(), Some(502));
            }
            other => panic!("expected GaveUp, got {other:?}"),
        }
        assert_eq!(calls, READ_ATTEMPTS);
        assert_eq!(retries, u64::from(READ_ATTEMPTS - 1));
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_another_try_would_not_change_is_not_tried_again() {
        let unreadable = ClientError::Decode {
            path: "/result/x".into(),
            http: 200,
            source: crate::client::Cause::of(&serde_json::from_str::<u8>("x").unwrap_err()),
            body_start: "x".into(),
        };
        for error in [service(404), service(400), unreadable] {
            let (outcome, calls, retries) = read_through(vec![Err(error)]).await;
            assert!(matches!(outcome, Err(CollectError::Read(_))), "{outcome:?}");
            assert_eq!((calls, retries), (1, 0));
        }
    }

    /// A real timeout: a loopback listener that takes the connection and never answers.
    async fn timed_out() -> ClientError {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("binds");
        let url = format!("http://{}/result/x", listener.local_addr().expect("has an address"));
        let _held = tokio::spawn(async move {
            let (_stream, _) = listener.accept().await.expect("accepts");
            std::future::pending::<()>().await;
        });
        let http = reqwest::Client::builder()
            .timeout(Duration::from_millis(100))
            .build()
            .expect("client builds");
        let source = http.get(&url).send().await.expect_err("no answer comes");
        assert!(source.is_timeout(), "{source:?}");
        ClientError::Timeout {
            path: url,
            source: crate::client::Cause::of(&source),
        }
    }

    #[tokio::test]
    async fn a_timed_out_read_is_tried_again() {
        let (outcome, calls, retries) = read_through(vec![Err(timed_out().await), Ok(1)]).await;
        assert_eq!(outcome.expect("the second try answers"), 1);
        assert_eq!((calls, retries), (2, 1));
    }

    #[test]
    fn failures_that_may_pass_are_the_refusals_server_errors_and_lost_connections() {
        assert!(read_may_pass(&unavailable(None)));
        assert!(read_may_pass(&service(500)));
        assert!(read_may_pass(&service(504)));
        assert!(!read_may_pass(&service(404)));
        assert!(!read_may_pass(&service(401)));
    }
}
