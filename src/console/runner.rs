//! The runs the console drives: each is the engine's own `run` or `resume` in a task, with its control handle and a board that keeps the live figures from the engine's events.

use super::campaigns::{CampaignRecord, RunRecord, State};
use super::error::ConsoleError;
use super::jobs::Kind;
use super::live_chart::{self, RateHistory};
pub use super::live_view::{end_text, spend_text, KeptLive, LiveError, LiveView, Reading};
use super::words::{fill, Words, EN};
use super::{Console, Shared};
use crate::engine::rules::RunOutcome;
use crate::engine::status::{Live, Snapshot};
use crate::engine::{self, Control, Event, RunOptions, RunReport, Sink};
use chrono::{DateTime, FixedOffset};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod reports;
use reports::write_report_and_sends;
pub use reports::{report_options, viewer_summary_name, write_report, write_viewer_summaries};

/// Errors the live page lists, newest first (and the run's record keeps).
const LAST_ERRORS: usize = 10;
/// The rate is measured over this much of the recent past.
const RATE_WINDOW: Duration = Duration::from_secs(10);

/// The live figures of one run, from its events.
pub struct Board {
    live: Live,
    errors: Mutex<VecDeque<LiveError>>,
    /// A scheduled start: when, and how many seconds until then.
    waiting: Mutex<Option<(String, u64)>>,
    samples: Mutex<VecDeque<(Instant, u64)>>,
    history: Mutex<RateHistory>,
    /// How it ended, as [`end_text`] says it.
    finished: Mutex<Option<String>>,
    /// Woken on every change the page shows.
    pub changed: tokio::sync::watch::Sender<u64>,
    /// Who hears that the run paused itself: the console (weakly) and the campaign (id, name).
    pauses_told_to: Option<(std::sync::Weak<super::Console>, String, String)>,
}

impl Board {
    /// A board that starts with the errors an earlier run of the campaign left (newest first).
    fn new(errors: Vec<LiveError>) -> Board {
        Board {
            live: Live::in_memory(),
            errors: Mutex::new(errors.into_iter().take(LAST_ERRORS).collect()),
            waiting: Mutex::new(None),
            samples: Mutex::new(VecDeque::new()),
            history: Mutex::new(RateHistory::default()),
            finished: Mutex::new(None),
            changed: tokio::sync::watch::channel(0).0,
            pauses_told_to: None,
        }
    }

    /// The run's own pauses (its failures, quiet hours) are told to the console's channels; a
    /// person's pause is told where the person pressed it.
    fn telling_pauses(self, console: &Shared, id: &str, name: &str) -> Board {
        Board {
            pauses_told_to: Some((Arc::downgrade(console), id.to_string(), name.to_string())),
            ..self
        }
    }

    fn tell_pause(&self, cause: &crate::engine::events::PauseCause) {
        let Some((console, id, name)) = &self.pauses_told_to else {
            return;
        };
        let Some(console) = console.upgrade() else { return };
        let w: &Words = console.lang.unwrap_or(&EN);
        if let Some(why) = super::live_view::paused_words(w, cause) {
            console.notify(super::notify::NoticeKind::Paused, Some((id, name)), "console", &why);
        }
    }

    fn note_error(&self, error: LiveError) {
        let mut errors = self.errors.lock();
        errors.push_front(error);
        errors.truncate(LAST_ERRORS);
    }

    /// A sample of the rate's history, when one is due (or `last`, the run's end, whatever the
    /// spacing); the count is read only then.
    fn sample(&self, last: bool) {
        let now = Instant::now();
        let mut history = self.history.lock();
        if last || history.due(now) {
            let status = self.live.snapshot().status;
            history.record(now, status.sent + status.uncertain, last);
        }
    }

    /// What the run's record keeps when it ends.
    pub fn kept(&self) -> KeptLive {
        KeptLive {
            errors: self.errors.lock().iter().cloned().collect(),
            rate: self.history.lock().points(),
        }
    }

    /// The run's figures now, as its checkpoint would give them; unlike [`Board::view`] it takes
    /// no rate sample and draws nothing (for the progress webhooks, `/metrics`, a backup).
    pub fn status(&self) -> engine::Status {
        self.live.snapshot().status
    }

    /// The live page's figures in English (for pages that show only its numbers).
    pub fn view(&self) -> LiveView {
        self.view_in(&EN)
    }

    /// What the live page shows now, in the words `w`.
    pub fn view_in(&self, w: &Words) -> LiveView {
        let snapshot = self.live.snapshot();
        let status = &snapshot.status;
        let now = Instant::now();
        let phase = self.phase_of(&snapshot);
        if matches!(phase, "sending" | "paused" | "stopping") {
            self.sample(false);
        }
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
            live_chart::duration_text(w, 0)
        } else if rate > 0.0 {
            live_chart::duration_text(w, (left as f64 / rate).ceil() as u64)
        } else {
            "–".to_string()
        };
        let errors: Vec<LiveError> = self.errors.lock().iter().cloned().collect();
        let waiting = self.waiting.lock().clone().map(|(at, seconds)| {
            fill(
                w.live_in,
                &[
                    ("at", &crate::campaign::quiet::wall_time(&at)),
                    ("t", &live_chart::duration_text(w, seconds)),
                ],
            )
        });
        let reading = Reading {
            paused: snapshot.paused.as_ref(),
            phase,
            status,
            rate,
            pace: snapshot.pace,
            time_left,
            errors: &errors,
            waiting,
            finished: self.finished.lock().clone(),
            points: &self.history.lock().points(),
        };
        reading.view(w)
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
        let masked = |text: &str| crate::phone::mask_phones(text).into_owned();
        match event {
            Event::Started { .. } => *self.waiting.lock() = None,
            Event::Paused(cause) => self.tell_pause(cause),
            Event::Waiting { start_at, seconds_left } => {
                *self.waiting.lock() = Some((start_at.clone(), *seconds_left));
            }
            Event::Uncertain { recipients, reason, .. } => {
                self.note_error(LiveError::Uncertain {
                    recipients: *recipients,
                    reason: masked(reason),
                });
            }
            Event::Answered { statuses, .. } => {
                for count in statuses.iter().filter(|count| count.not_accepted > 0) {
                    self.note_error(LiveError::NotAccepted {
                        recipients: count.not_accepted,
                        status: masked(&count.status),
                    });
                }
                self.sample(false);
            }
            Event::Warning { text } => self.note_error(LiveError::Warning { text: masked(text) }),
            Event::BudgetReached(reached) => {
                self.note_error(LiveError::BudgetReached {
                    limit: reached.limit,
                    month: reached.scope == crate::engine::budget::BudgetScope::Month,
                });
            }
            Event::Finished { end, .. } => {
                self.sample(true);
                *self.finished.lock() = Some(end_text(end));
            }
            _ => {}
        }
        self.changed.send_modify(|count| *count += 1);
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
    if let Launch::Start { .. } = launch {
        // The frequency cap as it stands now: sends since the check count too. A resume keeps
        // the list its run began with (its chunks were cut by it).
        let cap = super::frequency::rule(&console.store)?;
        super::frequency::place(
            &console.workspace,
            &id,
            &super::compose::load(&console.workspace, &id)?,
            cap,
        )?;
    }
    let campaign = super::compose::load(&console.workspace, &id)?;
    // The month the run started in: a resume counts there too.
    let ledger = console.months.ledger(&super::month::month_of(
        &record
            .run
            .as_ref()
            .map(|run| run.started_at.clone())
            .unwrap_or_else(super::campaigns::now_text),
    ));
    let active = Arc::new(ActiveRun {
        control: Control::new(),
        // A resumed run starts with the errors its earlier run left.
        board: Arc::new(
            Board::new(
                record
                    .run
                    .as_ref()
                    .map(|run| run.live.errors.clone())
                    .unwrap_or_default(),
            )
            .telling_pauses(console, &record.id, &record.name),
        ),
    });
    let board = active.board.clone();
    super::webhooks::watch_progress(console, &id, &record.name, move || {
        let status = board.status();
        let (done, total) = super::live_view::done_and_total(&status);
        super::webhooks::Progress {
            done,
            total,
            accepted: status.accepted,
            not_accepted: status.not_accepted,
            uncertain: status.uncertain,
            finished: board.phase() == "finished",
        }
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
                    ledger: Some(ledger),
                    ..RunOptions::default()
                };
                engine::run(campaign, options, &active.control, events).await
            }
            Launch::Resume { resend_uncertain } => {
                // A resume that found the run held has done nothing yet: it is tried again.
                while_held(|| {
                    let options = RunOptions {
                        resend_uncertain,
                        ledger: Some(ledger.clone()),
                        ..RunOptions::default()
                    };
                    engine::resume(&run_dir, options, &active.control, events.clone())
                })
                .await
            }
        };
        if let Err(error) = finish(&console, &id, report, &active.board).await {
            tracing::error!("campaign {id}: cannot record the end of its run: {error}");
        }
    })
}

/// Records how a run ended and writes its report.
async fn finish(
    console: &Shared,
    id: &str,
    report: anyhow::Result<RunReport>,
    board: &Board,
) -> Result<(), ConsoleError> {
    let run_dir = console.workspace.run_dir(id);
    // Whether the run recorded anything: a run directory that did is never removed below, so a
    // status that cannot be read because a reader holds the run counts as recorded.
    let mut figures = None;
    let recorded = engine::checkpoint_dir(&run_dir).exists()
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
        Err(error) if state == State::Approved => fill(
            EN.live_end_not_started,
            &[("reason", &crate::phone::mask_phones(&format!("{error:#}")))],
        ),
        Err(error) => fill(
            EN.live_end_error,
            &[("reason", &crate::phone::mask_phones(&format!("{error:#}")))],
        ),
    };
    {
        let _transition = console.transitions.lock().await;
        let mut record = super::campaigns::find(&console.store, id)?;
        record.state = state;
        if let Some(run) = &mut record.run {
            run.end = Some(end.clone());
            run.figures = figures;
            // The last errors and the rate over time, for the live page after the end.
            run.live = board.kept();
        }
        if state == State::Approved {
            // The run directory a refused start made holds nothing; the next start makes it
            // again. The run record stays, so the campaign's page says why it did not start.
            let _ = std::fs::remove_dir_all(&run_dir);
        }
        record.touch("console");
        console.store.put_campaign(id, &record)?;
        console.store.audit("console", "run ended", Some(id), &end)?;
        if state != State::Approved {
            let w: &Words = console.lang.unwrap_or(&EN);
            let figures_text = figures
                .map(|figures| {
                    fill(
                        w.notice_figures,
                        &[
                            ("sent", &crate::text::count(figures.sent)),
                            ("charged", &crate::text::won_opt(figures.charged)),
                        ],
                    )
                })
                .unwrap_or_default();
            console.notify(
                super::notify::NoticeKind::Finished,
                Some((id, &record.name)),
                "console",
                &format!("{} · {figures_text}", super::words::ends::end_words(w, &end)),
            );
            let event = if state == State::Stopped {
                "campaign.stopped"
            } else {
                "campaign.finished"
            };
            console.tell_state(event, id, &record.name, state.as_str(), "console", &end);
        }
        if let Some(run) = &record.run {
            let month = super::month::month_of(&run.started_at);
            for percent in console.months.newly_reached(&console.store, &month)? {
                console
                    .store
                    .audit("console", "month threshold", None, &format!("{month} {percent} %"))?;
                console.notify(
                    super::notify::NoticeKind::MonthThreshold,
                    None,
                    "console",
                    &format!("{month} {percent} %"),
                );
            }
        }
    }
    if recorded {
        write_report_and_sends(console, id).await?;
        // Other systems hear the final results once the report that holds them is written.
        console.webhooks.tell(super::webhooks::Event {
            kind: "campaign.results",
            campaign: Some(id.to_string()),
            data: serde_json::Value::Null,
        });
    }
    Ok(())
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
                run.end = Some(EN.live_end_interrupted.into());
                run.figures = figures;
            }
            console.store.put_campaign(&record.id, &record)?;
            console
                .store
                .audit("console", "interrupted", Some(&record.id), EN.live_end_interrupted)?;
            console.notify(
                super::notify::NoticeKind::Interrupted,
                Some((&record.id, &record.name)),
                "console",
                console.lang.unwrap_or(&EN).live_end_interrupted,
            );
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
        live: KeptLive::default(),
        purged: None,
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
        let board = Board::new(Vec::new());
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
