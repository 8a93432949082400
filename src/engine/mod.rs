//! Running a campaign: validate, plan deterministic chunks, send them at most once with a checkpoint, resume, and report status.

pub mod budget;
pub mod checkpoint;
pub mod collect;
pub mod control;
mod dispatch;
pub mod events;
mod failing;
mod feed;
pub mod known;
mod pace;
pub mod rules;
mod run_dir;
pub mod schedule;
mod sender;
pub mod session;
pub mod status;
pub mod test_send;
mod wire;
mod writer;

use crate::campaign::quiet::{now_kst, QuietWindow};
use crate::campaign::{Campaign, Endpoint, QuietHoursMode};
use crate::files;
use crate::plan::{self, Scan};
use anyhow::{anyhow, bail, Context, Result};
use checkpoint::{Checkpoint, ChunkKey, ChunkRecord, RunMeta};
use chrono::{DateTime, FixedOffset};
pub use control::{Control, Controls};
pub use events::{Event, Sink};
use run_dir::{campaign_fingerprint, claim_run_dir, default_run_dir, release_run_dir};
pub use run_dir::{checkpoint_dir, fingerprint_file, is_purged, refuse_purged, verify_unchanged, PURGED_DIR};
use serde::Serialize;
use session::Session;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use status::{look, status, status_from, status_of, LaneStatus, Snapshot, Status};

/// Folder names inside a run directory.
pub const CHECKPOINT_DIR: &str = "checkpoint";
pub const REJECTS_FILE: &str = "rejects.csv";

/// A refusal to start that is the campaign's or the environment's fault, not a failure while running.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Run directory (default: `[output] dir`, else `runs/NAME-TIMESTAMP`).
    pub out: Option<PathBuf>,
    /// Send again the chunks whose earlier request may or may not have taken effect.
    pub resend_uncertain: bool,
    /// After sending, collect the gateway results with these settings (`run --wait`).
    pub wait: Option<collect::CollectOptions>,
    /// Send from this time on; the run directory is written at once (`run --start-at`).
    pub start_at: Option<DateTime<FixedOffset>>,
    /// Spend cap in won (`--budget`); wins over the campaign's `[send] budget`.
    pub budget: Option<i64>,
    /// Messages per second for this process (`--rate`); wins over the campaign's.
    pub rate: Option<f64>,
    /// Requests at once for this process (`--concurrency`); wins over the campaign's.
    pub concurrency: Option<usize>,
    /// A ledger shared with other runs (the console's month) that this run's budget is part of:
    /// it already counts what the run's checkpoint holds.
    pub ledger: Option<std::sync::Arc<budget::Budget>>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "end", content = "reason")]
pub enum RunEnd {
    /// Every chunk was answered (some may be uncertain).
    Complete,
    /// Stopped (Ctrl-C, `msgbatch stop`, the control handle): chunks not started are still pending.
    Stopped,
    /// The next chunk would have taken the spend past the budget: chunks not started are pending.
    BudgetReached(budget::BudgetReached),
    /// A fatal error stopped the run; chunks not started are still pending.
    Failed(String),
}

#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub run_dir: PathBuf,
    pub end: RunEnd,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collected: Option<collect::CollectReport>,
    /// A budget that would let the pending rows go, for `resume --budget` after a budget stop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_to_finish: Option<i64>,
}

/// Refuses (enforce) or warns when the campaign would start inside its quiet hours: now, or at
/// its scheduled start, so that a start planned for 10 p.m. is refused when it is planned.
pub fn check_quiet_hours(
    campaign: &Campaign,
    start_at: Option<DateTime<FixedOffset>>,
    events: &dyn Sink,
) -> Result<()> {
    let Some(window) = QuietWindow::for_campaign(campaign) else {
        return Ok(());
    };
    let now = match start_at {
        Some(start) => start,
        None => now_kst().map_err(|e| anyhow!(e))?,
    };
    if !window.contains(now) {
        return Ok(());
    }
    let when = format!(
        "{} {} and {}; the quiet hours end at {}",
        if start_at.is_some() { "the start is" } else { "it is" },
        now.format("%Y-%m-%d %H:%M KST"),
        window.reason,
        window.next_end(now).format("%Y-%m-%d %H:%M KST")
    );
    match campaign.send.quiet_hours {
        QuietHoursMode::Enforce => Err(Refusal(format!(
            "refusing to start during quiet hours {}: {when} (quiet_hours = \"enforce\")",
            window.describe()
        ))
        .into()),
        QuietHoursMode::Warn => {
            events.event(&Event::Warning {
                text: format!(
                    "sending during quiet hours {}: {when} (quiet_hours = \"warn\")",
                    window.describe()
                ),
            });
            Ok(())
        }
        QuietHoursMode::Off => Ok(()),
    }
}

/// Whether the campaign may start when asked (now, or at `--start-at`): a start time in the past
/// and a start inside quiet hours under `enforce` are refused.
fn check_start(campaign: &Campaign, options: &RunOptions, events: &dyn Sink) -> Result<()> {
    let start_at = options
        .start_at
        .map(schedule::check_start)
        .transpose()
        .map_err(Refusal)?;
    check_quiet_hours(campaign, start_at, events)
}

/// The spend cap of a start: `--budget`, else the campaign's; a cap needs prices to count with.
fn budget_limit(campaign: &Campaign, options: &RunOptions) -> Result<Option<i64>> {
    let limit = options.budget.or(campaign.send.budget);
    let estimate = if campaign.prices.is_some() {
        rules::Estimate::NotYetCounted
    } else {
        rules::Estimate::NoPrices
    };
    rules::check_estimate(estimate, limit)?;
    Ok(limit)
}

/// Refuses a run whose estimate is over its budget, naming both amounts.
fn check_estimate(scan: &Scan, limit: Option<i64>) -> Result<()> {
    let estimate = match &scan.estimated_charge {
        Some(charge) => rules::Estimate::Won(charge.values().sum()),
        None => rules::Estimate::NoPrices,
    };
    Ok(rules::check_estimate(estimate, limit)?)
}

/// `msgbatch validate`: the whole accounting without sending; rejects go to `rejects_path`.
pub fn validate(campaign: &Campaign, rejects_path: &Path, events: &dyn Sink) -> Result<Scan> {
    validate_with(campaign, rejects_path, events, None)
}

/// As [`validate`], with every planned row shown to `inspect` when given (for previews).
pub fn validate_with(
    campaign: &Campaign,
    rejects_path: &Path,
    events: &dyn Sink,
    inspect: Option<&mut dyn FnMut(&plan::PlannedRow)>,
) -> Result<Scan> {
    let started = std::time::Instant::now();
    let mut rows = 0;
    let scan = plan::account(
        campaign,
        rejects_path,
        |read| {
            rows += read;
            events.event(&Event::Read { rows });
        },
        inspect,
    )?;
    events.event(&Event::ReadDone {
        rows: scan.rows,
        seconds: started.elapsed().as_secs_f64(),
    });
    Ok(scan)
}

/// `msgbatch run`: account for every row, record, then send every chunk once. `control` pauses,
/// resumes, stops and adjusts it while it goes; `events` hears of every change.
///
/// The input is walked twice: once for the accounting (and `rejects.csv`), then to feed the
/// senders. The first walk costs a few percent of a run (see docs/performance.md) and
/// buys what a user is promised: a file that must be refused is refused before anything is sent,
/// and the totals are known from the first chunk on.
pub async fn run(
    campaign: Campaign,
    options: RunOptions,
    control: &Control,
    events: Arc<dyn Sink>,
) -> Result<RunReport> {
    check_start(&campaign, &options, events.as_ref())?;
    let limit = budget_limit(&campaign, &options)?;
    let run_dir = options
        .out
        .clone()
        .or_else(|| campaign.output_dir.clone())
        .unwrap_or_else(|| default_run_dir(&campaign));
    let created = claim_run_dir(&run_dir)?;
    // The checkpoint's lock is taken first: a second process on the same directory is told it is in use.
    let checkpoint = match Checkpoint::open(&run_dir.join(CHECKPOINT_DIR), true) {
        Ok(checkpoint) => checkpoint,
        Err(error) => {
            release_run_dir(&run_dir, created);
            return Err(error.into());
        }
    };
    // Everything that can refuse the start runs before the run is recorded.
    let started = async {
        let watch = control::ControlWatch::take(&run_dir, control).context("cannot write the control file")?;
        let session = Session::connect(&campaign, events.as_ref()).await?;
        let campaign_fingerprint = campaign_fingerprint(&campaign)?;
        let input_fingerprint = fingerprint_file(&campaign.recipients.path)?;
        let scan = {
            let campaign = campaign.clone();
            let rejects = run_dir.join(REJECTS_FILE);
            let events = events.clone();
            tokio::task::spawn_blocking(move || validate(&campaign, &rejects, events.as_ref())).await??
        };
        check_estimate(&scan, limit)?;
        let campaign_text = std::fs::read(&campaign.file).context("cannot read the campaign file")?;
        std::io::Write::write_all(
            &mut files::create_private(&run_dir.join("campaign.toml"))?,
            &campaign_text,
        )
        .context("cannot copy the campaign file")?;
        let meta = RunMeta {
            format: checkpoint::FORMAT_VERSION,
            campaign_file: std::fs::canonicalize(&campaign.file).unwrap_or(campaign.file.clone()),
            campaign_fingerprint,
            input_fingerprint,
            input_file: std::fs::canonicalize(&campaign.recipients.path).unwrap_or(campaign.recipients.path.clone()),
            kind: campaign.kind.as_str().to_string(),
            chunk_size: campaign.send.chunk_size,
            created_at: chrono::Utc::now().to_rfc3339(),
            scan,
        };
        checkpoint.put_meta(&meta)?;
        anyhow::Ok((session, meta, watch))
    }
    .await;
    let (session, meta, watch) = match started {
        Ok(started) => started,
        Err(error) => {
            drop(checkpoint);
            release_run_dir(&run_dir, created);
            let _ = std::fs::remove_file(run_dir.join(control::CONTROL_FILE));
            return Err(error);
        }
    };
    for warning in &meta.scan.warnings {
        events.event(&Event::Warning { text: warning.clone() });
    }
    let existing = checkpoint.chunk_records()?;
    let start = dispatch::Start {
        campaign,
        meta: &meta,
        checkpoint,
        existing,
        session: &session,
        run_dir,
        options: &options,
        limit,
        control,
        watch,
        events: events.clone(),
    };
    let (mut report, checkpoint) = dispatch::send_all(start).await?;
    if let Some(wait) = &options.wait {
        if report.end == RunEnd::Complete {
            report.collected =
                Some(collect::collect(&checkpoint, &meta, &session.client, wait, control, events.as_ref()).await?);
        }
    }
    Ok(report)
}

/// The chunk records of a run, once its campaign and input are found unchanged since it started.
/// Reading the whole input for its fingerprint and reading the chunk records are both
/// single-threaded: side by side they take one core each.
pub fn verified_chunk_records(
    checkpoint: &Checkpoint,
    campaign: &Campaign,
    meta: &RunMeta,
) -> Result<HashMap<ChunkKey, ChunkRecord>> {
    let (unchanged, records) = std::thread::scope(|scope| {
        let unchanged = scope.spawn(|| verify_unchanged(campaign, meta));
        let records = checkpoint.chunk_records();
        (unchanged.join(), records)
    });
    unchanged.map_err(|panic| {
        let message = crate::contained::panic_message(panic.as_ref()).unwrap_or_else(|| "a panic".into());
        anyhow!("the check that the input is unchanged stopped: {message}")
    })??;
    Ok(records?)
}

/// `msgbatch resume`: the same campaign and input, continued from the checkpoint.
pub async fn resume(
    run_dir: &Path,
    options: RunOptions,
    control: &Control,
    events: Arc<dyn Sink>,
) -> Result<RunReport> {
    refuse_purged(run_dir, "resumed")?;
    let checkpoint = Checkpoint::open(&run_dir.join(CHECKPOINT_DIR), false)?;
    let meta = checkpoint.meta()?.ok_or_else(|| {
        Refusal(format!(
            "{} stopped before it sent anything: start it again with `msgbatch run CAMPAIGN --out {}`",
            run_dir.display(),
            run_dir.display()
        ))
    })?;
    let watch = control::ControlWatch::take(run_dir, control).context("cannot write the control file")?;
    let campaign = Campaign::load(&meta.campaign_file)?;
    // Nothing is sent before both end.
    let existing = verified_chunk_records(&checkpoint, &campaign, &meta)?;
    check_start(&campaign, &options, events.as_ref())?;
    let limit = budget_limit(&campaign, &options)?;
    let session = Session::connect(&campaign, events.as_ref()).await?;
    let start = dispatch::Start {
        campaign,
        meta: &meta,
        checkpoint,
        existing,
        session: &session,
        run_dir: run_dir.to_path_buf(),
        options: &options,
        limit,
        control,
        watch,
        events,
    };
    let (report, _) = dispatch::send_all(start).await?;
    Ok(report)
}

/// `msgbatch collect`: the gateway results of a run, into its checkpoint.
pub async fn collect_results(
    run_dir: &Path,
    options: &collect::CollectOptions,
    control: &Control,
    events: &dyn Sink,
) -> Result<collect::CollectReport> {
    refuse_purged(run_dir, "collected")?;
    let checkpoint = Checkpoint::open(&run_dir.join(CHECKPOINT_DIR), false)?;
    let meta = checkpoint
        .meta()?
        .ok_or_else(|| Refusal(format!("{} holds no scan yet: nothing was sent", run_dir.display())))?;
    if meta.kind != crate::campaign::Kind::GatewayAlimtalk.as_str() {
        bail!(Refusal(format!(
            "{} is a {} run: on the standard deployment the send response is the final record, so there is nothing to collect",
            run_dir.display(),
            meta.kind
        )));
    }
    let campaign = Campaign::load(&meta.campaign_file)?;
    if matches!(campaign.endpoint, Endpoint::Sandbox { .. }) {
        bail!(Refusal(format!(
            "{} ran against the in-process sandbox, which ended with it: its results are gone. Use `msgbatch run --wait`, or run the sandbox as its own process (`msgbatch sandbox`) and point the campaign's endpoint at it",
            run_dir.display()
        )));
    }
    let session = Session::connect(&campaign, events).await?;
    let report = collect::collect(&checkpoint, &meta, &session.client, options, control, events).await?;
    checkpoint.flush()?;
    Ok(report)
}

/// The message of a panic payload.
pub fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    crate::contained::panic_message(payload.as_ref()).unwrap_or_else(|| "no message".into())
}

/// The command that resumes a run directory.
pub fn resume_command(run_dir: &Path) -> String {
    format!("msgbatch resume {}", run_dir.display())
}

/// Per-chunk detail for diagnostics: key, state, recipients, note.
pub fn chunk_notes(run_dir: &Path) -> Result<Vec<(ChunkKey, ChunkRecord)>> {
    let checkpoint = Checkpoint::open(&checkpoint_dir(run_dir), false)?;
    let mut records: Vec<(ChunkKey, ChunkRecord)> = checkpoint.chunk_records()?.into_iter().collect();
    records.sort_by_key(|(key, _)| *key);
    Ok(records)
}
