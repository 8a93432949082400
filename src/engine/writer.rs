//! The one thread that owns the checkpoint's writes: marks, results and releases applied in arrival order, with group commit.

use super::checkpoint::{Checkpoint, ChunkKey, ChunkRecord, Completed, RecipientResult};
use crate::failpoint;
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// Commands to the thread that owns the checkpoint.
pub(super) enum Write {
    Mark {
        key: ChunkKey,
        record: ChunkRecord,
        ack: oneshot::Sender<Result<(), String>>,
    },
    Complete {
        key: ChunkKey,
        record: ChunkRecord,
        results: Vec<RecipientResult>,
    },
    Note {
        key: ChunkKey,
        record: ChunkRecord,
    },
    Release {
        key: ChunkKey,
    },
}

/// How long the writer waits for more in-flight marks to share one flush.
const GATHER_MARKS: Duration = Duration::from_micros(500);
/// The longest a written `done` waits for a flush when no mark comes to carry it.
const FLUSH_DONE_WITHIN: Duration = Duration::from_millis(50);

/// Applies writes in arrival order with group commit. A mark is acknowledged only after a flush
/// that covers it, so no request leaves before its mark is on disk; marks arriving together
/// share that flush. Results and `done` ride on the next flush, at most 50 ms later.
pub(super) fn writer_loop(
    checkpoint: Checkpoint,
    commands: std_mpsc::Receiver<Write>,
    fatal: Arc<Mutex<Option<String>>>,
) -> Checkpoint {
    let fail = |message: String| {
        fatal.lock().expect("fatal lock").get_or_insert(message);
    };
    let mut unflushed_done = 0usize;
    let mut flush_done_by: Option<Instant> = None;
    let mut open = true;
    while open {
        let first = match flush_done_by {
            Some(deadline) => match commands.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(command) => Some(command),
                Err(std_mpsc::RecvTimeoutError::Timeout) => None,
                Err(std_mpsc::RecvTimeoutError::Disconnected) => {
                    open = false;
                    None
                }
            },
            None => match commands.recv() {
                Ok(command) => Some(command),
                Err(_) => break,
            },
        };
        let mut batch: Vec<Write> = first.into_iter().collect();
        batch.extend(commands.try_iter());
        if batch.iter().any(|c| matches!(c, Write::Mark { .. })) {
            let until = Instant::now() + GATHER_MARKS;
            while let Ok(command) = commands.recv_timeout(until.saturating_duration_since(Instant::now())) {
                batch.push(command);
            }
        }
        let mut acks = Vec::new();
        let mut applied = Ok(());
        // A chunk's task sends one of Complete, Note or Release, after its mark was acknowledged
        // by an earlier flush: writing the batch's completions last, together, keeps every
        // chunk's own writes in order.
        let mut completed = Vec::new();
        for command in batch {
            let written = match command {
                Write::Mark { key, record, ack } => {
                    acks.push(ack);
                    checkpoint.record_in_flight(&[(key, record)])
                }
                Write::Complete { key, record, results } => {
                    unflushed_done += 1;
                    flush_done_by.get_or_insert(Instant::now() + FLUSH_DONE_WITHIN);
                    completed.push(Completed { key, record, results });
                    Ok(())
                }
                Write::Note { key, record } => checkpoint.record_in_flight(&[(key, record)]),
                Write::Release { key } => checkpoint.release(key),
            };
            if applied.is_ok() {
                applied = written;
            }
        }
        if !completed.is_empty() {
            let written = checkpoint.complete(&completed);
            if applied.is_ok() {
                applied = written;
            }
        }
        let due = flush_done_by.is_some_and(|deadline| Instant::now() >= deadline) || !open;
        if acks.is_empty() && !due && applied.is_ok() {
            continue;
        }
        let durable = applied.and_then(|()| checkpoint.flush()).map_err(|e| e.to_string());
        if let Err(error) = &durable {
            fail(format!("cannot write the checkpoint: {error}"));
        }
        for ack in acks {
            let _ = ack.send(durable.clone());
        }
        for _ in 0..std::mem::take(&mut unflushed_done) {
            failpoint::reached("after-done");
        }
        flush_done_by = None;
    }
    if let Err(error) = checkpoint.flush() {
        fail(format!("cannot flush the checkpoint: {error}"));
    }
    for _ in 0..unflushed_done {
        failpoint::reached("after-done");
    }
    checkpoint
}
