//! Sending one chunk at most once: durable mark, the request, and what its outcome means (done, released, uncertain).
//!
//! Which failures may be retried is decided by [`after_failure`]; when to retry is `pace::backoff`'s
//! business (as vector separates `RetryLogic` from its backoff).

use super::checkpoint::{ChunkKey, ChunkRecord, ChunkState};
use super::feed::Chunk;
use super::progress::Progress;
use super::status::Live;
use super::writer::Write;
use super::{pace, until_stopped, wire};
use crate::campaign::Campaign;
use crate::client::{Client, ClientError, ErrorKind};
use crate::failpoint;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};
use tokio::sync::{oneshot, watch};

/// What every sender task shares.
pub(super) struct Shared {
    pub campaign: Campaign,
    pub client: Client,
    pub writer: std_mpsc::Sender<Write>,
    pub fatal: Arc<Mutex<Option<String>>>,
    pub stop: watch::Receiver<bool>,
    pub progress: Progress,
    pub uncertain: AtomicU64,
    pub live: Live,
}

impl Shared {
    pub fn fail(&self, message: String) {
        self.fatal.lock().expect("fatal lock").get_or_insert(message);
    }
    pub fn failed(&self) -> bool {
        self.fatal.lock().expect("fatal lock").is_some()
    }
}

/// What a failed attempt means for its chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AfterFailure {
    /// The service provably did not take it, and attempts are left: try again after a backoff.
    Retry,
    /// The service provably did not take it (or refused it with a 4xx): the chunk is pending again
    /// and the run stops.
    Release { refused: bool },
    /// The request may have taken effect: the chunk stays uncertain and is not sent again.
    Uncertain,
}

/// Which failures to retry: only where nothing can have taken effect (connect errors before any
/// byte left, 429, 503); a 4xx answer is a refusal; anything else may have been applied.
fn after_failure(error: &ClientError, attempts: u32, max_attempts: u32) -> AfterFailure {
    let refused =
        error.kind() == ErrorKind::Service && error.http_status().is_some_and(|status| (400..500).contains(&status));
    if error.provably_not_applied() {
        if attempts < max_attempts {
            AfterFailure::Retry
        } else {
            AfterFailure::Release { refused: false }
        }
    } else if refused {
        AfterFailure::Release { refused: true }
    } else {
        AfterFailure::Uncertain
    }
}

/// Sends one chunk: durable mark, request with retries only where nothing took effect, then
/// results and `done` together; anything else leaves it uncertain.
pub(super) async fn send_chunk(shared: Arc<Shared>, chunk: Chunk, _permit: tokio::sync::OwnedSemaphorePermit) {
    let count = chunk.recipients.len() as u64;
    let record = |state, attempts, send_group_id, note| ChunkRecord {
        state,
        identity: chunk.identity.clone(),
        attempts,
        send_group_id,
        note,
        statuses: None,
    };
    let (ack, acked) = oneshot::channel();
    let mark = Write::Mark {
        key: chunk.key,
        record: record(ChunkState::InFlight, 0, None, None),
        ack,
    };
    if shared.writer.send(mark).is_err() {
        return;
    }
    match acked.await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => {
            return shared.fail(format!(
                "chunk {}: cannot mark it in flight, not sent: {error}",
                chunk.key
            ))
        }
        Err(_) => return,
    }
    shared.live.marked(chunk.key.lane, count, chunk.was_uncertain);
    failpoint::reached("after-in-flight");
    let mut attempts = 0;
    loop {
        attempts += 1;
        let error = match wire::send(&shared.client, &shared.campaign, chunk.key.lane, &chunk.recipients).await {
            Ok(answer) => {
                failpoint::reached("after-response");
                let write = match wire::results(&answer, &chunk.recipients) {
                    Ok((results, send_group_id)) => {
                        shared.live.answered(chunk.key.lane, &results);
                        Write::Complete {
                            key: chunk.key,
                            record: record(ChunkState::Done, attempts, send_group_id, None),
                            results,
                        }
                    }
                    Err(why) => uncertain(
                        &shared,
                        chunk.key,
                        count,
                        record(ChunkState::InFlight, attempts, None, Some(why)),
                    ),
                };
                let _ = shared.writer.send(write);
                shared.progress.add(count);
                return;
            }
            Err(error) => error,
        };
        match after_failure(&error, attempts, shared.campaign.send.max_attempts) {
            AfterFailure::Retry => {
                let wait = pace::backoff(attempts, error.retry_after());
                let mut stop = shared.stop.clone();
                tokio::select! {
                    _ = tokio::time::sleep(wait) => continue,
                    _ = until_stopped(&mut stop) => {
                        shared.live.released(chunk.key.lane, count);
                        let _ = shared.writer.send(Write::Release { key: chunk.key });
                        return;
                    }
                }
            }
            AfterFailure::Release { refused } => {
                shared.live.released(chunk.key.lane, count);
                let _ = shared.writer.send(Write::Release { key: chunk.key });
                let why = if refused { "refused" } else { "gave up" };
                return shared.fail(format!(
                    "chunk {} {why} after {attempts} attempt(s), not sent: {error}",
                    chunk.key
                ));
            }
            AfterFailure::Uncertain => {
                let note = record(ChunkState::InFlight, attempts, None, Some(error.to_string()));
                let write = uncertain(&shared, chunk.key, count, note);
                let _ = shared.writer.send(write);
                return;
            }
        }
    }
}

/// Leaves a chunk marked in flight, with the reason it may or may not have been taken.
fn uncertain(shared: &Shared, key: ChunkKey, count: u64, record: ChunkRecord) -> Write {
    shared.uncertain.fetch_add(count, Ordering::Relaxed);
    shared.live.uncertain(key.lane, count);
    let why = record.note.as_deref().unwrap_or("no reason recorded");
    shared
        .progress
        .say(&format!("chunk {key}: uncertain, not resent: {why}"));
    Write::Note { key, record }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service_error(status: u16) -> ClientError {
        match status {
            429 => ClientError::RateLimited {
                path: "/sms".into(),
                retry_after: None,
            },
            503 => ClientError::Unavailable {
                path: "/sms".into(),
                retry_after: None,
            },
            _ => ClientError::Service {
                path: "/sms".into(),
                http: status,
                code: None,
                message: None,
            },
        }
    }

    #[test]
    fn only_provably_unapplied_failures_are_retried_and_then_released() {
        for status in [429, 503] {
            assert_eq!(
                after_failure(&service_error(status), 1, 3),
                AfterFailure::Retry,
                "{status}"
            );
            assert_eq!(
                after_failure(&service_error(status), 3, 3),
                AfterFailure::Release { refused: false },
                "{status}"
            );
        }
        assert_eq!(
            after_failure(&service_error(400), 1, 3),
            AfterFailure::Release { refused: true }
        );
        for status in [500, 502, 504] {
            assert_eq!(
                after_failure(&service_error(status), 1, 3),
                AfterFailure::Uncertain,
                "{status}"
            );
        }
    }
}
