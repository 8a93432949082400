//! What a run tells its front ends: typed events pushed to a [`Sink`] (terminal bars, plain lines, the `status.json` snapshot, the console), never printed by the engine.
//!
//! As ripgrep's searcher pushes to a `Sink` that its printers implement, the engine pushes each
//! change of a run here and each face decides what to show. Control goes the other way, through
//! [`super::control::Control`].

use super::budget::{BudgetReached, Spend};
use super::checkpoint::{ChunkKey, StatusCount};
use super::status::Status;
use super::RunEnd;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;

/// The pace a run sends at: messages per second (none: as fast as answers come) and requests at once.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Pace {
    pub rate: Option<f64>,
    pub concurrency: usize,
}

/// Why sending is paused.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "cause")]
pub enum PauseCause {
    /// `msgbatch pause`, the console, or the control handle asked.
    Asked,
    /// Quiet hours began while the run went on (`quiet_hours = "enforce"`).
    QuietHours {
        /// The window, like `21:00–08:00`, and why it applies.
        window: String,
        reason: String,
        /// When sending goes on, RFC 3339 in Asia/Seoul.
        until: String,
    },
    /// More than `percent` % of the last `window` answered recipients were not accepted
    /// (`[send] pause_when_failing`): the run waits for a person to resume or stop it.
    Failing { percent: u32, window: u32, failed: u64 },
}

/// One change of a run, in the order it happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "event")]
pub enum Event {
    /// Rows of the input read so far (the accounting before a run, `validate`).
    Read {
        rows: u64,
    },
    /// The whole input was read.
    ReadDone {
        rows: u64,
        seconds: f64,
    },
    /// Something a person must see even when nothing else is shown.
    Warning {
        text: String,
    },
    /// The run is recorded and about to send: where it stands, what is left to send, its pace
    /// and its spend so far.
    Started {
        run_dir: PathBuf,
        to_send: u64,
        /// Recipients of chunks an earlier process left uncertain, and whether they are sent again.
        uncertain_before: u64,
        resend_uncertain: bool,
        status: Box<Status>,
        pace: Pace,
        budget: Option<i64>,
        spend: Spend,
    },
    /// Waiting for a scheduled start (sent about once a second).
    Waiting {
        start_at: String,
        seconds_left: u64,
    },
    /// A chunk passed the gate (not paused, a request free, the rate's tokens) and its budget
    /// reservation of `reserved` won: it is being sent from now on.
    Dispatched {
        key: ChunkKey,
        recipients: u64,
        was_uncertain: bool,
        reserved: i64,
    },
    /// The chunk is durably marked in flight and its request leaves now.
    ChunkMarked {
        key: ChunkKey,
        recipients: u64,
        was_uncertain: bool,
        reserved: i64,
    },
    /// The service answered a chunk; `charged` won is what it cost and `kept` stays reserved.
    Answered {
        key: ChunkKey,
        recipients: u64,
        accepted: u64,
        not_accepted: u64,
        statuses: Vec<StatusCount>,
        charged: i64,
        kept: i64,
        reserved: i64,
    },
    /// The chunk's request may or may not have taken effect; its reservation stays.
    Uncertain {
        key: ChunkKey,
        recipients: u64,
        reason: String,
    },
    /// The service provably did not take the chunk (or it was never marked): pending again, its
    /// reservation given back.
    Released {
        key: ChunkKey,
        recipients: u64,
        reserved: i64,
    },
    /// The pace changed (or was set at the start).
    Pace(Pace),
    /// No new chunk goes until [`Event::Resumed`]; requests in flight end.
    Paused(PauseCause),
    Resumed,
    /// A control command from another process was read (`seq` of the run directory's `control.json`).
    ControlRead {
        owner: String,
        seq: u64,
    },
    /// The next chunk would take charged + reserved past the budget: no new chunk goes.
    BudgetReached(BudgetReached),
    /// A stop was asked: no new chunk; requests in flight end.
    Stopping,
    /// Gateway results settled so far, of those to settle.
    Collecting {
        settled: u64,
        total: u64,
    },
    /// The next result read is this far off.
    CollectWait {
        seconds: u64,
    },
    /// The run ended; its status is the checkpoint's.
    Finished {
        end: RunEnd,
        status: Box<Status>,
    },
}

/// Where a run's events go. Called on the engine's threads: keep it quick.
pub trait Sink: Send + Sync {
    fn event(&self, event: &Event);
}

/// A sink that drops everything (a caller that only wants the result).
pub struct Ignore;

impl Sink for Ignore {
    fn event(&self, _event: &Event) {}
}

/// Every event to each of several sinks, in order.
#[derive(Clone, Default)]
pub struct Tee(Vec<Arc<dyn Sink>>);

impl Tee {
    pub fn new(sinks: Vec<Arc<dyn Sink>>) -> Tee {
        Tee(sinks)
    }

    pub fn with(mut self, sink: Arc<dyn Sink>) -> Tee {
        self.0.push(sink);
        self
    }
}

impl Sink for Tee {
    fn event(&self, event: &Event) {
        for sink in &self.0 {
            sink.event(event);
        }
    }
}

/// A sink that hands every event on to a stream, for a caller that reads events as they come.
pub struct Stream(tokio::sync::mpsc::UnboundedSender<Event>);

impl Sink for Stream {
    fn event(&self, event: &Event) {
        let _ = self.0.send(event.clone());
    }
}

/// A sink and the stream of its events.
pub fn stream() -> (Arc<Stream>, tokio::sync::mpsc::UnboundedReceiver<Event>) {
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    (Arc::new(Stream(sender)), receiver)
}
