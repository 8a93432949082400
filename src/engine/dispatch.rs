//! The dispatcher of a run: chunks from the feed to the senders at the pace asked, paused, stopped, adjusted and capped by the budget while it goes, every change told as an event.

use super::budget::{Budget, BudgetReached, Spend};
use super::checkpoint::{Checkpoint, ChunkKey, ChunkRecord, RunMeta};
use super::control::{until_stopped, Control, ControlWatch, Controls};
use super::events::{Event, Pace, PauseCause, Sink, Tee};
use super::feed::{self, Chunk, FeedError};
use super::pace::{Admission, RateLimiter};
use super::sender::{self, Senders, SendersEnded, Shared};
use super::session::Session;
use super::{panic_text, schedule, status, RunEnd, RunOptions, RunReport};
use crate::campaign::quiet::{now_kst, QuietWindow};
use crate::campaign::{Campaign, QuietHoursMode};
use crate::plan::billing::Pricer;
use anyhow::{anyhow, Result};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::{mpsc, watch};

/// Everything a send needs once the run is recorded.
pub(super) struct Start<'a> {
    pub campaign: Campaign,
    pub meta: &'a RunMeta,
    pub checkpoint: Checkpoint,
    pub existing: HashMap<ChunkKey, ChunkRecord>,
    pub session: &'a Session,
    pub run_dir: PathBuf,
    pub options: &'a RunOptions,
    /// The spend cap of this start.
    pub limit: Option<i64>,
    pub control: &'a Control,
    pub watch: ControlWatch,
    pub events: Arc<dyn Sink>,
}

/// The pace in force: the campaign's, with what the control handle overrides.
fn pace_of(campaign: &Campaign, controls: &Controls) -> Pace {
    Pace {
        rate: controls.rate.or(campaign.send.messages_per_second),
        concurrency: controls.concurrency.unwrap_or(campaign.send.concurrency),
    }
}

/// Sends every chunk still to send, and answers how the send ended with the final status.
pub(super) async fn send_all(start: Start<'_>) -> Result<(RunReport, Checkpoint)> {
    let Start {
        campaign,
        meta,
        checkpoint,
        existing,
        session,
        run_dir,
        options,
        limit,
        control,
        watch,
        events,
    } = start;
    control.adjust(options.rate, options.concurrency);
    let pricer = Pricer::new(&campaign);
    if pricer.is_some() {
        checkpoint.put_budget(limit)?;
    }
    // Where the run stands, from the records just read: what is left to send, the spend so far
    // and the live status start from it.
    let before = status::status_from(&checkpoint, meta, &existing)?;
    let spend = before.budget.map_or(Spend::default(), |budget| Spend {
        charged: budget.charged,
        reserved: budget.reserved,
    });
    let (done, uncertain_before) = (before.sent, before.uncertain);
    let to_send = meta.scan.valid - done - if options.resend_uncertain { 0 } else { uncertain_before };

    // The plan is walked from here on: on a resume it must check every chunk the checkpoint knows
    // before its first chunk comes out. Nothing is sent before the loop further down takes a chunk.
    let (chunk_tx, mut chunk_rx) = mpsc::channel::<Chunk>(campaign.send.concurrency * 2);
    let producer = {
        let campaign = campaign.clone();
        let resend_uncertain = options.resend_uncertain;
        tokio::task::spawn_blocking(move || feed::feed(&campaign, existing, resend_uncertain, chunk_tx))
    };
    let live = Arc::new(status::Live::new(&run_dir, before.clone()));
    let events: Arc<dyn Sink> = Arc::new(Tee::new(vec![live.clone(), events]));
    let pace = pace_of(&campaign, &control.current());
    events.event(&Event::Started {
        run_dir: run_dir.clone(),
        to_send,
        uncertain_before,
        resend_uncertain: options.resend_uncertain,
        status: Box::new(before),
        pace,
        budget: limit,
        spend,
    });
    let _ = live.write();

    let limiter = Arc::new(RateLimiter::new(pace.rate, campaign.send.chunk_size));
    let admission = Arc::new(Admission::new(pace.concurrency));
    let controller = tokio::spawn(follow_controls(
        watch,
        control.clone(),
        campaign.clone(),
        limiter.clone(),
        admission.clone(),
        events.clone(),
    ));
    // `status` from another terminal reads this snapshot while the run holds the checkpoint.
    let snapshots = tokio::spawn({
        let live = live.clone();
        async move {
            let mut every = tokio::time::interval(status::SNAPSHOT_EVERY);
            loop {
                every.tick().await;
                let _ = live.write();
            }
        }
    });
    let mut controls = control.watch();
    let stop_tasks = || {
        controller.abort();
        snapshots.abort();
    };
    if let Some(start) = options.start_at {
        if !schedule::wait_until(start, &mut controls, events.as_ref()).await {
            stop_tasks();
            return finish(
                run_dir,
                RunEnd::Stopped,
                checkpoint,
                meta,
                pricer.as_ref(),
                &live,
                events.as_ref(),
            );
        }
    }

    let senders = Senders::start(
        checkpoint,
        campaign.clone(),
        session.client.clone(),
        control.clone(),
        events.clone(),
        match &options.ledger {
            // Without prices nothing is charged, so nothing counts in the ledger.
            Some(ledger) if pricer.is_some() => Budget::new(limit, spend).within(ledger.clone()),
            _ => Budget::new(limit, spend),
        },
        pricer,
    );
    let shared = senders.shared.clone();
    let window = QuietWindow::for_campaign(&campaign).filter(|_| campaign.send.quiet_hours == QuietHoursMode::Enforce);
    let semaphore = admission.semaphore();
    let mut budget_reached = None;
    let mut tasks = tokio::task::JoinSet::new();
    'chunks: loop {
        let chunk = tokio::select! {
            chunk = chunk_rx.recv() => chunk,
            _ = until_stopped(&mut controls) => None,
        };
        let Some(chunk) = chunk else { break };
        // The gate: not paused, outside quiet hours, a request free and the rate's tokens; a
        // pause that comes while this chunk waits holds it back again.
        let permit = loop {
            if shared.failed() || !until_running(&mut controls, events.as_ref(), &shared).await {
                break 'chunks;
            }
            if let Some(window) = window {
                if pause_for_quiet_hours(&window, events.as_ref(), &mut controls).await {
                    break 'chunks;
                }
            }
            let permit = tokio::select! {
                permit = semaphore.clone().acquire_owned() => permit.expect("semaphore stays open"),
                _ = until_stopped(&mut controls) => break 'chunks,
            };
            // A stop during the wait must not let this chunk go.
            tokio::select! {
                _ = limiter.acquire(chunk.recipients.len()) => {}
                _ = until_stopped(&mut controls) => break 'chunks,
            }
            if !controls.borrow().paused {
                break permit;
            }
        };
        let worst = shared.worst_case(&chunk.recipients);
        // A chunk sent again keeps the reservation it held as uncertain.
        if !chunk.was_uncertain {
            match reserve(&shared, worst, &mut tasks, &mut controls).await {
                Reserved::Yes => {}
                Reserved::Stopped => break,
                Reserved::Reached(reached) => {
                    events.event(&Event::BudgetReached(reached));
                    budget_reached = Some(reached);
                    break;
                }
            }
        }
        events.event(&Event::Dispatched {
            key: chunk.key,
            recipients: chunk.recipients.len() as u64,
            was_uncertain: chunk.was_uncertain,
            reserved: worst,
        });
        tasks.spawn(sender::send_chunk(shared.clone(), chunk, worst, permit));
        while let Some(joined) = tasks.try_join_next() {
            settle_task(&shared, joined);
        }
    }
    drop(chunk_rx);
    while let Some(joined) = tasks.join_next().await {
        settle_task(&shared, joined);
    }
    let produced = producer.await.map_err(|e| anyhow!("reader task: {e}"))?;
    stop_tasks();
    let _ = snapshots.await;
    let stopped = control.is_stopped();
    drop(shared);
    let SendersEnded {
        checkpoint,
        fatal,
        pricer,
    } = senders.finish()?;
    let end = match (fatal, produced, budget_reached) {
        (_, Err(FeedError::Mismatch(mismatch)), _) => {
            return Err(anyhow::Error::new(mismatch).context("refusing to go on, nothing more was sent"))
        }
        (Some(message), _, _) => RunEnd::Failed(message),
        (None, _, Some(reached)) => RunEnd::BudgetReached(reached),
        (None, Err(FeedError::Stopped), None) if stopped => RunEnd::Stopped,
        (None, Err(error), None) => RunEnd::Failed(error.to_string()),
        (None, Ok(()), None) if stopped => RunEnd::Stopped,
        (None, Ok(()), None) => RunEnd::Complete,
    };
    finish(run_dir, end, checkpoint, meta, pricer.as_ref(), &live, events.as_ref())
}

/// How a send ended: the final status, also left in the snapshot that `status` reads.
fn finish(
    run_dir: PathBuf,
    end: RunEnd,
    checkpoint: Checkpoint,
    meta: &RunMeta,
    pricer: Option<&Pricer>,
    live: &status::Live,
    events: &dyn Sink,
) -> Result<(RunReport, Checkpoint)> {
    let status = status::status_of(&checkpoint, meta)?;
    if let Err(error) = live.write_final(&status) {
        events.event(&Event::Warning {
            text: format!("cannot write {}: {error}", status::SNAPSHOT_FILE),
        });
    }
    // What the pending rows may cost at most, on top of what is spent: the budget to resume with.
    let budget_to_finish = match (&end, pricer, status.budget) {
        (RunEnd::BudgetReached(_), Some(pricer), Some(budget)) => Some(
            budget.charged
                + budget.reserved
                + status
                    .lanes
                    .iter()
                    .map(|(lane, detail)| detail.pending as i64 * pricer.worst_case_of_lane(*lane))
                    .sum::<i64>(),
        ),
        _ => None,
    };
    events.event(&Event::Finished {
        end: end.clone(),
        status: Box::new(status.clone()),
    });
    Ok((
        RunReport {
            run_dir,
            end,
            status,
            collected: None,
            budget_to_finish,
        },
        checkpoint,
    ))
}

/// Follows the control handle (and, through `watch`, the run directory's control file): a new
/// pace takes effect at once, and every change is told as an event.
async fn follow_controls(
    mut watch: ControlWatch,
    control: Control,
    campaign: Campaign,
    limiter: Arc<RateLimiter>,
    admission: Arc<Admission>,
    events: Arc<dyn Sink>,
) {
    let mut wanted = control.watch();
    // From nothing asked: a run paused or adjusted before it started says so at once.
    let mut applied = Controls::default();
    let mut every = tokio::time::interval(super::control::CONTROL_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let read = tokio::select! {
            _ = every.tick() => watch.look(&control),
            changed = wanted.changed() => {
                if changed.is_err() {
                    return;
                }
                None
            }
        };
        let now = wanted.borrow_and_update().clone();
        let (before, after) = (pace_of(&campaign, &applied), pace_of(&campaign, &now));
        if after != before {
            limiter.set_rate(after.rate).await;
            admission.set(after.concurrency);
            events.event(&Event::Pace(after));
        }
        if now.stopped && !applied.stopped {
            events.event(&Event::Stopping);
        }
        applied = now;
        // Said after the command took effect, so that whoever waits for it sees its result.
        if let Some(seq) = read {
            events.event(&Event::ControlRead {
                owner: watch.owner().to_string(),
                seq,
            });
        }
    }
}

/// What became of a chunk's reservation.
enum Reserved {
    Yes,
    /// A stop came while it waited.
    Stopped,
    /// Nothing is in flight and the chunk still does not fit.
    Reached(BudgetReached),
}

/// Reserves a chunk's worst case. One that does not fit waits for the requests in flight, whose
/// answers turn worst cases into charges; it is refused only when nothing is in flight and it
/// still does not fit.
async fn reserve(
    shared: &Shared,
    worst: i64,
    tasks: &mut tokio::task::JoinSet<()>,
    controls: &mut watch::Receiver<Controls>,
) -> Reserved {
    loop {
        let Err(reached) = shared.budget.reserve(worst) else {
            return Reserved::Yes;
        };
        let answered = tokio::select! {
            joined = tasks.join_next() => joined,
            _ = until_stopped(controls) => return Reserved::Stopped,
        };
        match answered {
            Some(joined) => settle_task(shared, joined),
            None => return Reserved::Reached(reached),
        }
    }
}

/// Holds the dispatcher while the run is paused; false once it is stopped. The pause is told
/// here, where no chunk can pass any more: every chunk dispatched before it is already counted;
/// with why (asked, or the run's own failure pause).
async fn until_running(controls: &mut watch::Receiver<Controls>, events: &dyn Sink, shared: &Shared) -> bool {
    let (paused, stopped) = {
        let now = controls.borrow();
        (now.paused, now.stopped)
    };
    if stopped {
        return false;
    }
    if !paused {
        return true;
    }
    events.event(&Event::Paused(shared.pause_cause()));
    let running = match controls.wait_for(|controls| !controls.paused || controls.stopped).await {
        Ok(controls) => !controls.stopped,
        Err(_) => false,
    };
    if running {
        shared.resumed();
        events.event(&Event::Resumed);
    }
    running
}

/// A sender task that panicked fails the run; its chunk stays marked in flight, so uncertain.
fn settle_task(shared: &Shared, joined: Result<(), tokio::task::JoinError>) {
    if let Err(error) = joined {
        if error.is_panic() {
            shared.fail(format!(
                "a sender task panicked; its chunk is left uncertain: {}",
                panic_text(error.into_panic())
            ));
        }
    }
}

/// Waits out quiet hours that begin while the run goes on; true if the run was stopped meanwhile.
async fn pause_for_quiet_hours(
    window: &QuietWindow,
    events: &dyn Sink,
    controls: &mut watch::Receiver<Controls>,
) -> bool {
    let Ok(now) = now_kst() else { return false };
    if !window.contains(now) {
        return false;
    }
    let resume_at = window.next_end(now);
    events.event(&Event::Paused(PauseCause::QuietHours {
        window: window.describe(),
        reason: window.reason.to_string(),
        until: resume_at.to_rfc3339(),
    }));
    let wait = (resume_at - now).to_std().unwrap_or_default();
    let stopped = tokio::select! {
        _ = tokio::time::sleep(wait) => false,
        _ = until_stopped(controls) => true,
    };
    if !stopped {
        events.event(&Event::Resumed);
    }
    stopped
}
