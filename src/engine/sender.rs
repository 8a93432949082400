//! Sending one chunk at most once: durable mark, the request, and what its outcome means (done, released, uncertain).
//!
//! Which failures may be retried is decided by [`after_failure`]; when to retry is `pace::backoff`'s
//! business (as vector separates `RetryLogic` from its backoff).

use super::budget::Budget;
use super::checkpoint::{ChunkCost, ChunkKey, ChunkRecord, ChunkState, RecipientResult};
use super::control::{until_stopped, Controls};
use super::events::{Event, Sink};
use super::feed::Chunk;
use super::writer::Write;
use super::{pace, wire};
use crate::campaign::Campaign;
use crate::client::{Client, ClientError, ErrorKind};
use crate::failpoint;
use crate::plan::billing::{Cost, Pricer};
use crate::plan::Recipient;
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};
use tokio::sync::{oneshot, watch};

/// What every sender task shares.
pub(super) struct Shared {
    pub campaign: Campaign,
    pub client: Client,
    pub writer: std_mpsc::Sender<Write>,
    pub fatal: Arc<Mutex<Option<String>>>,
    pub controls: watch::Receiver<Controls>,
    pub events: Arc<dyn Sink>,
    pub budget: Budget,
    /// `None` without `[prices]`: nothing is reserved or charged.
    pub pricer: Option<Pricer>,
    /// The run's own pause, for `[send] pause_when_failing`.
    pub control: super::Control,
    /// `None` without `[send] pause_when_failing`.
    failing: Option<Mutex<super::failing::FailureWatch>>,
    /// Why the run paused itself, told when the dispatcher holds (an asked pause has none).
    pause_cause: Mutex<Option<super::events::PauseCause>>,
}

impl Shared {
    pub fn fail(&self, message: String) {
        self.fatal.lock().expect("fatal lock").get_or_insert(message);
    }
    pub fn failed(&self) -> bool {
        self.fatal.lock().expect("fatal lock").is_some()
    }

    /// Notes a chunk's answers against `[send] pause_when_failing`; pauses the run when they
    /// pass it. A recipient the service did not take counts as failed unless a fallback follows.
    fn note_failures(&self, lane: crate::campaign::Lane, results: &[RecipientResult]) {
        let Some(watch) = &self.failing else { return };
        let failures = results
            .iter()
            .map(|result| !result.accepted && !crate::plan::billing::fallback_follows(lane, &result.status));
        let cause = watch.lock().expect("failure watch lock").answered(failures);
        if let Some(cause) = cause {
            *self.pause_cause.lock().expect("pause cause lock") = Some(cause);
            self.control.pause();
        }
    }

    /// Why the run holds now: the run's own reason, else a person asked.
    pub fn pause_cause(&self) -> super::events::PauseCause {
        self.pause_cause
            .lock()
            .expect("pause cause lock")
            .take()
            .unwrap_or(super::events::PauseCause::Asked)
    }

    /// A person resumed: the failures that paused the run are not counted again.
    pub fn resumed(&self) {
        if let Some(watch) = &self.failing {
            watch.lock().expect("failure watch lock").restart();
        }
    }

    /// The worst case of a chunk, as the budget reserves it.
    pub fn worst_case(&self, recipients: &[Recipient]) -> i64 {
        self.pricer
            .as_ref()
            .map_or(0, |pricer| pricer.worst_case_of(&self.campaign, recipients))
    }

    /// What the answers of a chunk cost.
    fn cost(&self, recipients: &[Recipient], results: &[RecipientResult]) -> Cost {
        let Some(pricer) = &self.pricer else {
            return Cost::default();
        };
        recipients
            .iter()
            .zip(results)
            .fold(Cost::default(), |total, (recipient, result)| {
                let cost = pricer.cost(&self.campaign, recipient, &result.status, result.accepted);
                Cost {
                    charged: total.charged + cost.charged,
                    kept: total.kept + cost.kept,
                }
            })
    }
}

/// The senders' shared state, and the thread that owns the checkpoint's writes while they send.
pub(super) struct Senders {
    pub shared: Arc<Shared>,
    writer: std::thread::JoinHandle<super::checkpoint::Checkpoint>,
}

/// What the senders leave when the last one ended.
pub(super) struct SendersEnded {
    pub checkpoint: super::checkpoint::Checkpoint,
    /// The error that stopped the run, if one did.
    pub fatal: Option<String>,
    pub pricer: Option<Pricer>,
}

impl Senders {
    /// Hands the checkpoint to its writer thread and makes the state every sender shares.
    pub fn start(
        checkpoint: super::checkpoint::Checkpoint,
        campaign: Campaign,
        client: Client,
        control: super::Control,
        events: Arc<dyn Sink>,
        budget: Budget,
        pricer: Option<Pricer>,
    ) -> Senders {
        let fatal = Arc::new(Mutex::new(None));
        let (writer_tx, writer_rx) = std_mpsc::channel::<Write>();
        let writer = {
            let fatal = fatal.clone();
            std::thread::spawn(move || super::writer::writer_loop(checkpoint, writer_rx, fatal))
        };
        let failing = campaign
            .send
            .pause_when_failing
            .map(|rule| Mutex::new(super::failing::FailureWatch::new(rule)));
        let shared = Arc::new(Shared {
            campaign,
            client,
            writer: writer_tx,
            fatal,
            controls: control.watch(),
            events,
            budget,
            pricer,
            control,
            failing,
            pause_cause: Mutex::new(None),
        });
        Senders { shared, writer }
    }

    /// Once every sender task ended: the writer flushes and hands the checkpoint back.
    pub fn finish(self) -> anyhow::Result<SendersEnded> {
        let shared = Arc::try_unwrap(self.shared).map_err(|_| anyhow::anyhow!("sender tasks outlived the run"))?;
        drop(shared.writer);
        let checkpoint = self
            .writer
            .join()
            .map_err(|_| anyhow::anyhow!("checkpoint writer panicked"))?;
        let fatal = shared.fatal.lock().expect("fatal lock").clone();
        Ok(SendersEnded {
            checkpoint,
            fatal,
            pricer: shared.pricer,
        })
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

/// Sends one chunk whose worst case `worst` the budget already holds: durable mark, request with
/// retries only where nothing took effect, then results and `done` together; anything else
/// leaves it uncertain (still reserved) or releases it (its reservation given back).
pub(super) async fn send_chunk(
    shared: Arc<Shared>,
    chunk: Chunk,
    worst: i64,
    _permit: tokio::sync::OwnedSemaphorePermit,
) {
    let count = chunk.recipients.len() as u64;
    let priced = shared.pricer.is_some();
    let record = |state, attempts, send_group_id, note, cost: Option<ChunkCost>| ChunkRecord {
        state,
        identity: chunk.identity.clone(),
        attempts,
        send_group_id,
        note,
        statuses: None,
        cost: cost.filter(|_| priced),
    };
    let reserved = Some(ChunkCost {
        worst,
        ..ChunkCost::default()
    });
    // Pending again: its reservation given back, and its mark removed when it was made.
    let unsent = |marked: bool, why: Option<String>| {
        shared.budget.release(worst);
        shared.events.event(&Event::Released {
            key: chunk.key,
            recipients: count,
            reserved: worst,
        });
        if marked {
            let _ = shared.writer.send(Write::Release { key: chunk.key });
        }
        if let Some(why) = why {
            shared.fail(why);
        }
    };
    let (ack, acked) = oneshot::channel();
    let mark = Write::Mark {
        key: chunk.key,
        record: record(ChunkState::InFlight, 0, None, None, reserved),
        ack,
    };
    if shared.writer.send(mark).is_err() {
        return unsent(false, None);
    }
    match acked.await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => {
            return unsent(
                false,
                Some(format!(
                    "chunk {}: cannot mark it in flight, not sent: {error}",
                    chunk.key
                )),
            )
        }
        Err(_) => return unsent(false, None),
    }
    shared.events.event(&Event::ChunkMarked {
        key: chunk.key,
        recipients: count,
        was_uncertain: chunk.was_uncertain,
        reserved: worst,
    });
    failpoint::reached("after-in-flight");
    let mut attempts = 0;
    loop {
        attempts += 1;
        let error = match wire::send(&shared.client, &shared.campaign, chunk.key.lane, &chunk.recipients).await {
            Ok(answer) => {
                failpoint::reached("after-response");
                let write = match wire::results(&answer, &chunk.recipients) {
                    Ok((results, send_group_id)) => {
                        let cost = shared.cost(&chunk.recipients, &results);
                        shared.budget.settle(worst, cost.charged, cost.kept);
                        let statuses = super::checkpoint::count_statuses(
                            results.iter().map(|result| (result.status.as_str(), result.accepted)),
                        );
                        let accepted = statuses.iter().map(|status| status.accepted).sum::<u64>();
                        let done = ChunkRecord {
                            // Counted once, here: the record stores them (see `Checkpoint::complete`).
                            statuses: Some(statuses.clone()),
                            ..record(
                                ChunkState::Done,
                                attempts,
                                send_group_id,
                                None,
                                Some(ChunkCost {
                                    worst,
                                    charged: Some(cost.charged),
                                    kept: cost.kept,
                                }),
                            )
                        };
                        shared.note_failures(chunk.key.lane, &results);
                        shared.events.event(&Event::Answered {
                            key: chunk.key,
                            recipients: count,
                            accepted,
                            not_accepted: count - accepted,
                            statuses,
                            charged: cost.charged,
                            kept: cost.kept,
                            reserved: worst,
                        });
                        Write::Complete {
                            key: chunk.key,
                            record: done,
                            results,
                        }
                    }
                    Err(why) => uncertain(
                        &shared,
                        chunk.key,
                        count,
                        record(ChunkState::InFlight, attempts, None, Some(why), reserved),
                    ),
                };
                let _ = shared.writer.send(write);
                return;
            }
            Err(error) => error,
        };
        match after_failure(&error, attempts, shared.campaign.send.max_attempts) {
            AfterFailure::Retry => {
                crate::metrics::service_retry();
                let wait = pace::backoff(attempts, error.retry_after());
                let mut controls = shared.controls.clone();
                tokio::select! {
                    _ = tokio::time::sleep(wait) => continue,
                    _ = until_stopped(&mut controls) => return unsent(true, None),
                }
            }
            AfterFailure::Release { refused } => {
                let why = if refused { "refused" } else { "gave up" };
                return unsent(
                    true,
                    Some(format!(
                        "chunk {} {why} after {attempts} attempt(s), not sent: {error}",
                        chunk.key
                    )),
                );
            }
            AfterFailure::Uncertain => {
                let note = record(ChunkState::InFlight, attempts, None, Some(error.to_string()), reserved);
                let write = uncertain(&shared, chunk.key, count, note);
                let _ = shared.writer.send(write);
                return;
            }
        }
    }
}

/// Leaves a chunk marked in flight, with the reason it may or may not have been taken; its
/// reservation stays.
fn uncertain(shared: &Shared, key: ChunkKey, count: u64, record: ChunkRecord) -> Write {
    let reason = record.note.clone().unwrap_or_else(|| "no reason recorded".into());
    shared.events.event(&Event::Uncertain {
        key,
        recipients: count,
        reason,
    });
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
