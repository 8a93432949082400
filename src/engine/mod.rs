//! Running a campaign: validate, plan deterministic chunks, send them at most once with a checkpoint, resume, and report status.

pub mod checkpoint;
pub mod collect;
mod feed;
pub mod known;
mod pace;
pub mod progress;
mod run_dir;
pub mod schedule;
mod sender;
pub mod session;
pub mod status;
mod wire;
mod writer;

use crate::campaign::quiet::{now_kst, QuietWindow};
use crate::campaign::{Campaign, Endpoint, QuietHoursMode};
use crate::files;
use crate::interrupt::Interrupts;
use crate::plan::{self, Scan};
use anyhow::{anyhow, bail, Context, Result};
use checkpoint::{Checkpoint, ChunkKey, ChunkRecord, RunMeta};
use chrono::{DateTime, FixedOffset};
use feed::{Chunk, FeedError};
use progress::Progress;
pub use run_dir::verify_unchanged;
use run_dir::{campaign_fingerprint, claim_run_dir, default_run_dir, fingerprint_file, release_run_dir};
use sender::Shared;
use serde::Serialize;
use session::Session;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, watch, Semaphore};
use writer::{writer_loop, Write};

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
    /// No progress output (for `--json`).
    pub quiet: bool,
    /// Send again the chunks whose earlier request may or may not have taken effect.
    pub resend_uncertain: bool,
    /// After sending, collect the gateway results with these settings (`run --wait`).
    pub wait: Option<collect::CollectOptions>,
    /// Send from this time on; the run directory is written at once (`run --start-at`).
    pub start_at: Option<DateTime<FixedOffset>>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "end", content = "reason")]
pub enum RunEnd {
    /// Every chunk was answered (some may be uncertain).
    Complete,
    /// Ctrl-C: chunks not started are still pending.
    Stopped,
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
}

/// Refuses (enforce) or warns when the campaign would start inside its quiet hours: now, or at
/// its scheduled start, so that a start planned for 10 p.m. is refused when it is planned.
pub fn check_quiet_hours(
    campaign: &Campaign,
    start_at: Option<DateTime<FixedOffset>>,
    say: impl Fn(&str),
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
            say(&format!(
                "warning: sending during quiet hours {}: {when} (quiet_hours = \"warn\")",
                window.describe()
            ));
            Ok(())
        }
        QuietHoursMode::Off => Ok(()),
    }
}

/// Whether the campaign may start when asked (now, or at `--start-at`): a start time in the past
/// and a start inside quiet hours under `enforce` are refused.
fn check_start(campaign: &Campaign, options: &RunOptions) -> Result<()> {
    let start_at = options
        .start_at
        .map(schedule::check_start)
        .transpose()
        .map_err(Refusal)?;
    // Warnings go to stderr even with --json: stdout carries the JSON, and a warning must not vanish.
    check_quiet_hours(campaign, start_at, |text| eprintln!("{text}"))
}

/// `msgbatch validate`: the whole accounting without sending; rejects go to `rejects_path`.
pub fn validate(campaign: &Campaign, rejects_path: &Path, quiet: bool) -> Result<Scan> {
    validate_with(campaign, rejects_path, quiet, |_| {})
}

/// As [`validate`], with every planned row shown to `inspect` (for previews).
pub fn validate_with(
    campaign: &Campaign,
    rejects_path: &Path,
    quiet: bool,
    inspect: impl FnMut(&plan::PlannedRow),
) -> Result<Scan> {
    let progress = Progress::new("read", "rows", None, quiet);
    let scan = plan::account(campaign, rejects_path, |rows| progress.add(rows), inspect)?;
    progress.finish();
    Ok(scan)
}

/// `msgbatch run`: account for every row, record, then send every chunk once.
///
/// The input is walked twice: once for the accounting (and `rejects.csv`), then to feed the
/// senders. The first walk costs a few percent of a run (see the README's performance table) and
/// buys what a user is promised: a file that must be refused is refused before anything is sent,
/// and the totals are known from the first chunk on.
pub async fn run(campaign: Campaign, options: RunOptions) -> Result<RunReport> {
    let say = |text: &str| {
        if !options.quiet {
            eprintln!("{text}");
        }
    };
    check_start(&campaign, &options)?;
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
        let session = Session::connect(&campaign).await?;
        let campaign_fingerprint = campaign_fingerprint(&campaign)?;
        let input_fingerprint = fingerprint_file(&campaign.recipients.path)?;
        say(&format!("run directory {}", run_dir.display()));
        let scan = {
            let campaign = campaign.clone();
            let rejects = run_dir.join(REJECTS_FILE);
            let quiet = options.quiet;
            tokio::task::spawn_blocking(move || validate(&campaign, &rejects, quiet)).await??
        };
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
        anyhow::Ok((session, meta))
    }
    .await;
    let (session, meta) = match started {
        Ok(started) => started,
        Err(error) => {
            drop(checkpoint);
            release_run_dir(&run_dir, created);
            return Err(error);
        }
    };
    for warning in &meta.scan.warnings {
        eprintln!("warning: {warning}");
    }
    let existing = checkpoint.chunk_records()?;
    let (mut report, checkpoint) = send_all(campaign, &meta, checkpoint, existing, &session, run_dir, &options).await?;
    if let Some(wait) = &options.wait {
        if report.end == RunEnd::Complete {
            report.collected = Some(collect::collect(&checkpoint, &meta, &session.client, wait).await?);
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
pub async fn resume(run_dir: &Path, options: RunOptions) -> Result<RunReport> {
    let checkpoint = Checkpoint::open(&run_dir.join(CHECKPOINT_DIR), false)?;
    let meta = checkpoint.meta()?.ok_or_else(|| {
        Refusal(format!(
            "{} stopped before it sent anything: start it again with `msgbatch run CAMPAIGN --out {}`",
            run_dir.display(),
            run_dir.display()
        ))
    })?;
    let campaign = Campaign::load(&meta.campaign_file)?;
    // Nothing is sent before both end.
    let existing = verified_chunk_records(&checkpoint, &campaign, &meta)?;
    check_start(&campaign, &options)?;
    let session = Session::connect(&campaign).await?;
    let (report, _) = send_all(
        campaign,
        &meta,
        checkpoint,
        existing,
        &session,
        run_dir.to_path_buf(),
        &options,
    )
    .await?;
    Ok(report)
}

/// `msgbatch collect`: the gateway results of a run, into its checkpoint.
pub async fn collect_results(run_dir: &Path, options: &collect::CollectOptions) -> Result<collect::CollectReport> {
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
    let session = Session::connect(&campaign).await?;
    let report = collect::collect(&checkpoint, &meta, &session.client, options).await?;
    checkpoint.flush()?;
    Ok(report)
}

async fn send_all(
    campaign: Campaign,
    meta: &RunMeta,
    checkpoint: Checkpoint,
    existing: HashMap<ChunkKey, ChunkRecord>,
    session: &Session,
    run_dir: PathBuf,
    options: &RunOptions,
) -> Result<(RunReport, Checkpoint)> {
    // Where the run stands, from the records just read: what is left to send and the live
    // status start from it.
    let before = status::status_from(&checkpoint, meta, &existing)?;
    let (done, uncertain_before) = (before.sent, before.uncertain);
    let to_send = meta.scan.valid - done - if options.resend_uncertain { 0 } else { uncertain_before };
    if uncertain_before > 0 && !options.quiet {
        let action = if options.resend_uncertain {
            "sending them again (--resend-uncertain)"
        } else {
            "not resending them (use --resend-uncertain to)"
        };
        eprintln!("{uncertain_before} recipient(s) in chunks that may or may not have been sent: {action}");
    }

    // The plan is walked from here on: on a resume it must check every chunk the checkpoint knows
    // before its first chunk comes out. Nothing is sent before the loop further down takes a chunk.
    let concurrency = campaign.send.concurrency;
    let (chunk_tx, mut chunk_rx) = mpsc::channel::<Chunk>(concurrency * 2);
    let producer = {
        let campaign = campaign.clone();
        let resend_uncertain = options.resend_uncertain;
        tokio::task::spawn_blocking(move || feed::feed(&campaign, existing, resend_uncertain, chunk_tx))
    };
    let live = status::Live::new(before);
    if let Err(error) = live.write(&run_dir, true) {
        eprintln!(
            "warning: cannot write the live status {}: {error}",
            status::SNAPSHOT_FILE
        );
    }
    let (stop_tx, stop_rx) = watch::channel(false);
    // Installed here, before the wait notice that promises it and before any chunk is sent.
    let mut interrupts = Interrupts::listen().context("cannot listen for Ctrl-C")?;
    let ctrl_c = tokio::spawn({
        let quiet = options.quiet;
        async move {
            if interrupts.next().await.is_some() {
                if !quiet {
                    eprintln!(
                        "\nstopping: no new chunks; waiting for the requests in flight (Ctrl-C again to quit now)"
                    );
                }
                let _ = stop_tx.send(true);
                if interrupts.next().await.is_some() {
                    std::process::exit(130);
                }
            }
        }
    });
    if let Some(start) = options.start_at {
        if !schedule::wait_until(start, options.quiet, &mut stop_rx.clone()).await {
            ctrl_c.abort();
            return finish(run_dir, RunEnd::Stopped, checkpoint, meta);
        }
    }

    let fatal = Arc::new(Mutex::new(None));
    let (writer_tx, writer_rx) = std_mpsc::channel::<Write>();
    let writer = {
        let fatal = fatal.clone();
        std::thread::spawn(move || writer_loop(checkpoint, writer_rx, fatal))
    };
    let shared = Arc::new(Shared {
        campaign: campaign.clone(),
        client: session.client.clone(),
        writer: writer_tx,
        fatal: fatal.clone(),
        stop: stop_rx.clone(),
        progress: Progress::new("send", "recipients", Some(to_send), options.quiet),
        uncertain: AtomicU64::new(0),
        live,
    });
    // `status` from another terminal reads this snapshot while the run holds the checkpoint.
    let snapshots = tokio::spawn({
        let shared = shared.clone();
        let run_dir = run_dir.clone();
        async move {
            let mut every = tokio::time::interval(status::SNAPSHOT_EVERY);
            loop {
                every.tick().await;
                let _ = shared.live.write(&run_dir, true);
            }
        }
    });

    let semaphore = Arc::new(Semaphore::new(concurrency));
    let limiter = campaign
        .send
        .messages_per_second
        .map(|rate| pace::RateLimiter::new(rate, campaign.send.chunk_size));
    let window = QuietWindow::for_campaign(&campaign).filter(|_| campaign.send.quiet_hours == QuietHoursMode::Enforce);
    let mut stop = stop_rx.clone();
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        let chunk = tokio::select! {
            chunk = chunk_rx.recv() => chunk,
            _ = until_stopped(&mut stop) => None,
        };
        let Some(chunk) = chunk else { break };
        if shared.failed() || *stop.borrow() {
            break;
        }
        if let Some(window) = window {
            if pause_for_quiet_hours(&window, &shared, &mut stop).await {
                break;
            }
        }
        let permit = tokio::select! {
            permit = semaphore.clone().acquire_owned() => permit.expect("semaphore stays open"),
            _ = until_stopped(&mut stop) => break,
        };
        if let Some(limiter) = &limiter {
            // Ctrl-C during the wait must not let this chunk go.
            tokio::select! {
                _ = limiter.acquire(chunk.recipients.len()) => {}
                _ = until_stopped(&mut stop) => break,
            }
        }
        tasks.spawn(sender::send_chunk(shared.clone(), chunk, permit));
        while let Some(joined) = tasks.try_join_next() {
            settle_task(&shared, joined);
        }
    }
    drop(chunk_rx);
    while let Some(joined) = tasks.join_next().await {
        settle_task(&shared, joined);
    }
    let produced = producer.await.map_err(|e| anyhow!("reader task: {e}"))?;
    ctrl_c.abort();
    snapshots.abort();
    let _ = snapshots.await;
    shared.progress.finish();
    let stopped = *stop_rx.borrow();
    let shared = Arc::try_unwrap(shared).map_err(|_| anyhow!("sender tasks outlived the run"))?;
    drop(shared.writer);
    let checkpoint = writer.join().map_err(|_| anyhow!("checkpoint writer panicked"))?;
    let fatal = fatal.lock().expect("fatal lock").clone();
    let end = match (fatal, produced) {
        (_, Err(FeedError::Mismatch(mismatch))) => {
            return Err(anyhow::Error::new(mismatch).context("refusing to go on, nothing more was sent"))
        }
        (Some(message), _) => RunEnd::Failed(message),
        (None, Err(FeedError::Stopped)) if stopped => RunEnd::Stopped,
        (None, Err(error)) => RunEnd::Failed(error.to_string()),
        (None, Ok(())) if stopped => RunEnd::Stopped,
        (None, Ok(())) => RunEnd::Complete,
    };
    finish(run_dir, end, checkpoint, meta)
}

/// How a send ended: the final status, also left in the snapshot that `status` reads.
fn finish(run_dir: PathBuf, end: RunEnd, checkpoint: Checkpoint, meta: &RunMeta) -> Result<(RunReport, Checkpoint)> {
    let status = status_of(&checkpoint, meta)?;
    if let Err(error) = status::write_snapshot(&run_dir, &status, false) {
        eprintln!("warning: cannot write {}: {error}", status::SNAPSHOT_FILE);
    }
    Ok((
        RunReport {
            run_dir,
            end,
            status,
            collected: None,
        },
        checkpoint,
    ))
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

/// The message of a panic payload.
pub fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    crate::contained::panic_message(payload.as_ref()).unwrap_or_else(|| "no message".into())
}

/// Completes once Ctrl-C asked the run to stop.
async fn until_stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopped| *stopped).await;
}

/// Waits out quiet hours that begin while the run goes on; true if the run was stopped meanwhile.
async fn pause_for_quiet_hours(window: &QuietWindow, shared: &Shared, stop: &mut watch::Receiver<bool>) -> bool {
    let Ok(now) = now_kst() else { return false };
    if !window.contains(now) {
        return false;
    }
    let resume_at = window.next_end(now);
    shared.progress.say(&format!(
        "paused: quiet hours {} began ({}); going on at {}",
        window.describe(),
        window.reason,
        resume_at.format("%Y-%m-%d %H:%M KST")
    ));
    let wait = (resume_at - now).to_std().unwrap_or_default();
    tokio::select! {
        _ = tokio::time::sleep(wait) => false,
        _ = until_stopped(stop) => true,
    }
}

/// The command that resumes a run directory.
pub fn resume_command(run_dir: &Path) -> String {
    format!("msgbatch resume {}", run_dir.display())
}

/// Per-chunk detail for diagnostics: key, state, recipients, note.
pub fn chunk_notes(run_dir: &Path) -> Result<Vec<(ChunkKey, ChunkRecord)>> {
    let checkpoint = Checkpoint::open(&run_dir.join(CHECKPOINT_DIR), false)?;
    let mut records: Vec<(ChunkKey, ChunkRecord)> = checkpoint.chunk_records()?.into_iter().collect();
    records.sort_by_key(|(key, _)| *key);
    Ok(records)
}
