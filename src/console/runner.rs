//! The runs the console drives: each is the engine's own `run` or `resume` in a task, with its control handle and a board that keeps the live figures from the engine's events.

use super::campaigns::{CampaignRecord, RunRecord, State};
use super::error::ConsoleError;
use super::jobs::Kind;
use super::{Console, Shared};
use crate::engine::rules::RunOutcome;
use crate::engine::status::{Live, Snapshot};
use crate::engine::{self, Control, Event, RunEnd, RunOptions, RunReport, Sink};
use chrono::{DateTime, FixedOffset};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Errors the live page lists, newest first.
const LAST_ERRORS: usize = 10;
/// The rate is measured over this much of the recent past.
const RATE_WINDOW: Duration = Duration::from_secs(10);

/// The live figures of one run, from its events.
pub struct Board {
    live: Live,
    errors: Mutex<VecDeque<String>>,
    waiting: Mutex<Option<String>>,
    samples: Mutex<VecDeque<(Instant, u64)>>,
    finished: Mutex<Option<String>>,
    /// Woken on every change the page shows.
    pub changed: tokio::sync::watch::Sender<u64>,
}

impl Board {
    fn new() -> Board {
        Board {
            live: Live::in_memory(),
            errors: Mutex::new(VecDeque::new()),
            waiting: Mutex::new(None),
            samples: Mutex::new(VecDeque::new()),
            finished: Mutex::new(None),
            changed: tokio::sync::watch::channel(0).0,
        }
    }

    fn note_error(&self, text: String) {
        let mut errors = self.errors.lock();
        errors.push_front(crate::phone::mask_phones(&text).into_owned());
        errors.truncate(LAST_ERRORS);
    }

    /// What the live page shows now.
    pub fn view(&self) -> LiveView {
        let snapshot = self.live.snapshot();
        let status = &snapshot.status;
        let now = Instant::now();
        let phase = self.phase_of(&snapshot);
        // Paused, nothing goes: no rate and no time left, and the rate measured afresh after.
        if phase == "paused" {
            self.samples.lock().clear();
        }
        let rate = if phase == "paused" {
            0.0
        } else {
            let mut samples = self.samples.lock();
            samples.push_back((now, status.sent + status.uncertain));
            while samples.len() > 2 && now.duration_since(samples[0].0) > RATE_WINDOW {
                samples.pop_front();
            }
            let (first_time, first_count) = samples[0];
            let seconds = now.duration_since(first_time).as_secs_f64();
            if seconds >= 0.5 {
                (status.sent + status.uncertain).saturating_sub(first_count) as f64 / seconds
            } else {
                0.0
            }
        };
        let left = status.pending + status.sending;
        let time_left = if phase == "paused" {
            "–".to_string()
        } else if left == 0 {
            "0 s".to_string()
        } else if rate > 0.0 {
            seconds_text((left as f64 / rate).ceil() as u64)
        } else {
            "–".to_string()
        };
        LiveView {
            phase,
            lanes: LaneRow::all(status),
            sent: status.sent,
            accepted: status.accepted,
            not_accepted: status.not_accepted,
            uncertain: status.uncertain,
            in_flight: status.sending,
            pending: status.pending,
            rate: format!("{rate:.0}"),
            pace: snapshot
                .pace
                .map(|pace| match pace.rate {
                    Some(rate) => format!("{rate} / s, {} at once", pace.concurrency),
                    None => format!("as fast as answered, {} at once", pace.concurrency),
                })
                .unwrap_or_default(),
            time_left,
            charged: status.budget.map(|budget| budget.charged),
            reserved: status.budget.map(|budget| budget.reserved),
            budget: status.budget.and_then(|budget| budget.limit),
            spend: spend_text(
                status.budget.map(|budget| budget.charged),
                status.budget.and_then(|b| b.limit),
            ),
            errors: self.errors.lock().iter().cloned().collect(),
            waiting: self.waiting.lock().clone(),
            finished: self.finished.lock().clone(),
        }
    }

    /// `sending`, `paused`, `scheduled`, `stopping` or `finished`, without touching the rate's samples.
    pub fn phase(&self) -> &'static str {
        self.phase_of(&self.live.snapshot())
    }

    fn phase_of(&self, snapshot: &Snapshot) -> &'static str {
        if self.finished.lock().is_some() {
            "finished"
        } else if snapshot.stopping {
            "stopping"
        } else if snapshot.paused.is_some() {
            "paused"
        } else if self.waiting.lock().is_some() {
            "scheduled"
        } else {
            "sending"
        }
    }
}

impl Sink for Board {
    fn event(&self, event: &Event) {
        self.live.event(event);
        match event {
            Event::Started { .. } => *self.waiting.lock() = None,
            Event::Waiting { start_at, seconds_left } => {
                *self.waiting.lock() = Some(format!("{start_at} (in {})", seconds_text(*seconds_left)));
            }
            Event::Uncertain { recipients, reason, .. } => {
                self.note_error(format!("{recipients} uncertain: {reason}"));
            }
            Event::Answered { statuses, .. } => {
                for count in statuses.iter().filter(|count| count.not_accepted > 0) {
                    self.note_error(format!("{} not accepted: {}", count.not_accepted, count.status));
                }
            }
            Event::Warning { text } => self.note_error(text.clone()),
            Event::BudgetReached(reached) => {
                self.note_error(format!("budget reached: the limit is ₩{}", reached.limit));
            }
            Event::Finished { end, .. } => *self.finished.lock() = Some(end_text(end)),
            _ => {}
        }
        self.changed.send_modify(|count| *count += 1);
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct LaneRow {
    pub lane: &'static str,
    pub valid: u64,
    pub sent: u64,
    pub uncertain: u64,
    pub sending: u64,
    pub pending: u64,
}

impl LaneRow {
    /// The lanes of a status, in lane order.
    pub fn all(status: &crate::engine::Status) -> Vec<LaneRow> {
        status
            .lanes
            .iter()
            .map(|(lane, figures)| LaneRow {
                lane: lane.as_str(),
                valid: figures.valid,
                sent: figures.sent,
                uncertain: figures.uncertain,
                sending: figures.sending,
                pending: figures.pending,
            })
            .collect()
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct LiveView {
    pub phase: &'static str,
    pub lanes: Vec<LaneRow>,
    pub sent: u64,
    pub accepted: u64,
    pub not_accepted: u64,
    pub uncertain: u64,
    pub in_flight: u64,
    pub pending: u64,
    pub rate: String,
    pub pace: String,
    pub time_left: String,
    pub charged: Option<i64>,
    pub reserved: Option<i64>,
    pub budget: Option<i64>,
    /// Charged, and the budget, in won as people read them.
    pub spend: String,
    pub errors: Vec<String>,
    pub waiting: Option<String>,
    pub finished: Option<String>,
}

/// `₩64 / ₩100,000`, or the charge alone without a budget.
pub fn spend_text(charged: Option<i64>, budget: Option<i64>) -> String {
    let charged = charged.map(crate::report::won).unwrap_or_else(|| "–".into());
    match budget {
        Some(limit) => format!("{charged} / {}", crate::report::won(limit)),
        None => charged,
    }
}

fn seconds_text(seconds: u64) -> String {
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 => format!("{} min {} s", seconds / 60, seconds % 60),
        _ => format!("{} h {} min", seconds / 3600, seconds % 3600 / 60),
    }
}

pub fn end_text(end: &RunEnd) -> String {
    match end {
        RunEnd::Complete => "every chunk was answered".into(),
        RunEnd::Stopped => "stopped: chunks not yet sent are pending".into(),
        RunEnd::BudgetReached(reached) => format!(
            "budget reached (₩{}): chunks not yet sent are pending; resume with a larger budget",
            reached.limit
        ),
        RunEnd::Failed(reason) => format!("failed: {}", crate::phone::mask_phones(reason)),
    }
}

/// The campaign's run, while this process drives it.
pub fn active(console: &Console, id: &str) -> Option<Arc<ActiveRun>> {
    console.jobs.get(id, Kind::Run)
}

/// A run this process drives.
pub struct ActiveRun {
    pub control: Control,
    pub board: Arc<Board>,
}

/// What to do with a campaign whose run starts now.
pub enum Launch {
    Start { start_at: Option<DateTime<FixedOffset>> },
    Resume { resend_uncertain: bool },
}

/// Starts (or resumes) the campaign's run in a task; the record is already `sending`.
pub fn launch(console: &Shared, record: &CampaignRecord, launch: Launch) -> Result<(), ConsoleError> {
    let id = record.id.clone();
    let run_dir = console.workspace.run_dir(&id);
    let campaign = super::compose::load(&console.workspace, &id)?;
    let active = Arc::new(ActiveRun {
        control: Control::new(),
        board: Arc::new(Board::new()),
    });
    let (task_console, task_id, task_run) = (console.clone(), id.clone(), active.clone());
    super::jobs::spawn(console, &id, Kind::Run, active.control.clone(), active, async move {
        let (active, console, id) = (task_run, task_console, task_id);
        let events: Arc<dyn Sink> = active.board.clone();
        let report = match launch {
            Launch::Start { start_at } => {
                let options = RunOptions {
                    out: Some(run_dir.clone()),
                    start_at,
                    ..RunOptions::default()
                };
                engine::run(campaign, options, &active.control, events).await
            }
            Launch::Resume { resend_uncertain } => {
                // A resume that found the run held has done nothing yet: it is tried again.
                while_held(|| {
                    let options = RunOptions {
                        resend_uncertain,
                        ..RunOptions::default()
                    };
                    engine::resume(&run_dir, options, &active.control, events.clone())
                })
                .await
            }
        };
        if let Err(error) = finish(&console, &id, report).await {
            tracing::error!("campaign {id}: cannot record the end of its run: {error}");
        }
    })
}

/// Records how a run ended and writes its report.
async fn finish(console: &Shared, id: &str, report: anyhow::Result<RunReport>) -> Result<(), ConsoleError> {
    let run_dir = console.workspace.run_dir(id);
    // Whether the run recorded anything: a run directory that did is never removed below, so a
    // status that cannot be read because a reader holds the run counts as recorded.
    let mut figures = None;
    let recorded = run_dir.join(engine::CHECKPOINT_DIR).exists()
        && match status_when_free(&run_dir).await {
            Ok(status) => {
                figures = Some(super::campaigns::RunFigures::of(&status));
                true
            }
            Err(error) => held_by_another(&error),
        };
    // The engine's one reading of how a run ended, as the CLI's exit code reads it.
    let state = match RunOutcome::of(&report) {
        RunOutcome::Done => State::Done,
        RunOutcome::Stopped => State::Stopped,
        RunOutcome::Incomplete => State::Incomplete,
        RunOutcome::Failed if recorded => State::Failed,
        // A resume refused (a changed input): the run stays as it was left, its rows still to send.
        RunOutcome::Refused if recorded => State::Incomplete,
        // Refused or failed before anything was recorded (quiet hours, the service refused the key): it can start again.
        RunOutcome::Failed | RunOutcome::Refused => State::Approved,
    };
    let end = match &report {
        Ok(report) => end_text(&report.end),
        Err(error) if state == State::Approved => {
            format!("not started: {}", crate::phone::mask_phones(&format!("{error:#}")))
        }
        Err(error) => format!(
            "ended by an error: {}",
            crate::phone::mask_phones(&format!("{error:#}"))
        ),
    };
    {
        let _transition = console.transitions.lock().await;
        let mut record = super::campaigns::find(&console.store, id)?;
        record.state = state;
        if let Some(run) = &mut record.run {
            run.end = Some(end.clone());
            run.figures = figures;
        }
        if state == State::Approved {
            // The run directory a refused start made holds nothing; the next start makes it
            // again. The run record stays, so the campaign's page says why it did not start.
            let _ = std::fs::remove_dir_all(&run_dir);
        }
        record.touch("console");
        console.store.put_campaign(id, &record)?;
        console.store.audit("console", "run ended", Some(id), &end)?;
    }
    if recorded {
        write_report(console, id).await?;
    }
    Ok(())
}

/// Writes report.csv (and report.raw.csv for programs), report.parquet, report.xlsx and the
/// summaries into the run directory.
pub async fn write_report(console: &Console, id: &str) -> Result<(), ConsoleError> {
    let run_dir = console.workspace.run_dir(id);
    let options = crate::report::ReportOptions {
        lang: console.report_lang(),
        csv_bom: false,
        xlsx: crate::report::Workbook::WhenOneSheet,
        raw_csv: crate::report::RawCsv::Write,
    };
    waiting_for_run_dir(move || crate::report::write(&run_dir, None, &options))
        .await
        .map(|_| ())
        .map_err(ConsoleError::from)
}

/// The run's status, once no reader holds it (see [`waiting_for_run_dir`]).
pub async fn status_when_free(run_dir: &std::path::Path) -> anyhow::Result<engine::Status> {
    let run_dir = run_dir.to_path_buf();
    waiting_for_run_dir(move || engine::status(&run_dir)).await
}

/// `work` on a blocking thread, tried again while the run directory is held (see [`while_held`]).
async fn waiting_for_run_dir<T: Send + 'static>(
    work: impl Fn() -> anyhow::Result<T> + Send + Sync + 'static,
) -> anyhow::Result<T> {
    let work = Arc::new(work);
    while_held(|| {
        let attempt = work.clone();
        async move {
            tokio::task::spawn_blocking(move || attempt())
                .await
                .map_err(|error| anyhow::anyhow!("a blocking task ended: {error}"))?
        }
    })
    .await
}

/// `attempt`, tried again while a reader (a status page, `msgbatch status`) holds the run
/// directory, for up to a minute: readers hold it a moment at a time, and an attempt that found
/// it held has done nothing.
async fn while_held<T, F, Fut>(mut attempt: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match attempt().await {
            Err(error) if held_by_another(&error) && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            done => return done,
        }
    }
}

/// Whether an engine error says another process (or task) holds the run directory.
fn held_by_another(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<crate::engine::checkpoint::CheckpointError>(),
            Some(crate::engine::checkpoint::CheckpointError::InUse { .. })
        )
    })
}

/// Campaigns that were sending when the console last ended: `interrupted`, never resumed by
/// themselves.
pub fn mark_interrupted(console: &Console) -> Result<usize, ConsoleError> {
    let mut marked = 0;
    for mut record in console.store.campaigns::<CampaignRecord>()? {
        if record.state == State::Sending {
            record.state = State::Interrupted;
            // Nothing drives the run now: its figures are read once, here.
            let figures = engine::status(&console.workspace.run_dir(&record.id))
                .ok()
                .map(|status| super::campaigns::RunFigures::of(&status));
            if let Some(run) = &mut record.run {
                run.end = Some("the console ended while it sent".into());
                run.figures = figures;
            }
            console.store.put_campaign(&record.id, &record)?;
            console.store.audit(
                "console",
                "interrupted",
                Some(&record.id),
                "the console ended while it sent",
            )?;
            marked += 1;
        }
    }
    Ok(marked)
}

/// The run record of a start now.
pub fn run_record(by: &str, start_at: Option<&DateTime<FixedOffset>>) -> RunRecord {
    RunRecord {
        started_by: by.to_string(),
        started_at: super::campaigns::now_text(),
        start_at: start_at.map(|at| at.to_rfc3339()),
        end: None,
        collected: None,
        figures: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::Lane;
    use crate::engine::events::PauseCause;
    use crate::plan::ChunkKey;

    #[test]
    fn a_paused_run_shows_no_rate_and_no_time_left() {
        let board = Board::new();
        let key = ChunkKey {
            lane: Lane::Sms,
            index: 0,
        };
        board.event(&Event::Released {
            key,
            recipients: 100,
            reserved: 0,
        });
        board
            .samples
            .lock()
            .push_back((Instant::now() - Duration::from_secs(5), 0));
        board.event(&Event::Answered {
            key,
            recipients: 50,
            accepted: 50,
            not_accepted: 0,
            statuses: Vec::new(),
            charged: 0,
            kept: 0,
            reserved: 0,
        });
        let sending = board.view();
        assert!(sending.rate != "0" && sending.time_left != "–", "{sending:?}");
        board.event(&Event::Paused(PauseCause::Asked));
        let paused = board.view();
        assert_eq!(
            (paused.phase, paused.rate.as_str(), paused.time_left.as_str()),
            ("paused", "0", "–")
        );
    }
}
