//! Running a campaign: validate, plan deterministic chunks, send them at most once with a checkpoint, resume, and report status.

pub mod checkpoint;
pub mod collect;
mod pace;
pub mod progress;
pub mod session;
mod wire;

use crate::campaign::quiet::{now_kst, QuietWindow};
use crate::campaign::{Campaign, Endpoint, Lane, QuietHoursMode};
use crate::client::{Client, ErrorKind};
use crate::failpoint;
use crate::files;
use crate::prepare::{self, Fate, PrepareError, Recipient, RejectsWriter, Scan};
use anyhow::{anyhow, bail, Context, Result};
use checkpoint::{Checkpoint, ChunkKey, ChunkRecord, ChunkState, RecipientResult, RunMeta};
use progress::Progress;
use serde::Serialize;
use session::Session;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot, watch, Semaphore};

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

/// Buckets of one lane.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LaneStatus {
    pub valid: u64,
    pub sent: u64,
    pub uncertain: u64,
    pub pending: u64,
    pub chunks: u64,
    pub chunks_done: u64,
    pub chunks_uncertain: u64,
}

/// Where every input row stands, from the checkpoint alone:
/// `rows = rejected + duplicates + suppressed + sent + uncertain + pending`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Status {
    pub campaign: PathBuf,
    pub kind: String,
    pub rows: u64,
    pub rejected: u64,
    pub rejected_by_reason: BTreeMap<String, u64>,
    pub duplicates: u64,
    pub suppressed: u64,
    pub sent: u64,
    /// Of `sent`: taken by the service (`OK`, `SMS_00`, `MMS_0000`, `GW_PENDING`).
    pub accepted: u64,
    /// Of `sent`: answered with a per-recipient failure.
    pub not_accepted: u64,
    pub uncertain: u64,
    pub pending: u64,
    /// Per-recipient status codes of the sent rows.
    pub statuses: BTreeMap<String, u64>,
    pub lanes: BTreeMap<Lane, LaneStatus>,
    pub complete: bool,
}

impl Status {
    pub fn balanced(&self) -> bool {
        self.rows == self.rejected + self.duplicates + self.suppressed + self.sent + self.uncertain + self.pending
    }

    /// The accounting equation in one line.
    pub fn equation(&self) -> String {
        format!(
            "rows {} = rejected {} + duplicates {} + suppressed {} + sent {} + uncertain {} + pending {}",
            self.rows, self.rejected, self.duplicates, self.suppressed, self.sent, self.uncertain, self.pending
        )
    }
}

/// Hex digest of a file's bytes (xxh3-128): enough to notice any change.
fn fingerprint_file(path: &Path) -> Result<String> {
    let mut file = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let read = file
            .read(&mut buffer)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(format!("{:032x}", hasher.digest128()))
}

/// Fingerprint of everything that decides what is sent, other than the recipients file: the
/// campaign file, its message text (which may come from `text_file`) and the suppression list.
fn campaign_fingerprint(campaign: &Campaign) -> Result<String> {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(fingerprint_file(&campaign.file)?.as_bytes());
    hasher.update(campaign.message_text().unwrap_or("").as_bytes());
    if let Some(path) = &campaign.recipients.suppression {
        hasher.update(fingerprint_file(path)?.as_bytes());
    }
    Ok(format!("{:032x}", hasher.digest128()))
}

/// Refuses (enforce) or warns when the campaign would start inside its quiet hours.
pub fn check_quiet_hours(campaign: &Campaign, say: impl Fn(&str)) -> Result<()> {
    let Some(window) = QuietWindow::for_campaign(campaign) else {
        return Ok(());
    };
    let now = now_kst().map_err(|e| anyhow!(e))?;
    if !window.contains(now) {
        return Ok(());
    }
    let when = format!(
        "it is {} and {}; the quiet hours end at {}",
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

/// `msgbatch validate`: the whole accounting without sending; rejects go to `rejects_path`.
pub fn validate(campaign: &Campaign, rejects_path: &Path, quiet: bool) -> Result<Scan> {
    let progress = Progress::new("read", "rows", None, quiet);
    let mut rejects = RejectsWriter::create(rejects_path)?;
    let scan = prepare::walk(
        campaign,
        |row, fate| match fate {
            Fate::Rejected(rejection) => rejects.write(row.row, &rejection),
            _ => Ok(()),
        },
        |rows| progress.add(rows),
    )?;
    rejects.finish()?;
    progress.finish();
    Ok(scan)
}

fn default_run_dir(campaign: &Campaign) -> PathBuf {
    let stamp = chrono::Utc::now()
        .with_timezone(&crate::campaign::quiet::kst())
        .format("%Y%m%d-%H%M%S");
    let safe: String = campaign
        .name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    PathBuf::from("runs").join(format!("{safe}-{stamp}"))
}

/// `msgbatch run`: scan, record, then send every chunk once.
pub async fn run(campaign: Campaign, options: RunOptions) -> Result<RunReport> {
    let say = |text: &str| {
        if !options.quiet {
            eprintln!("{text}");
        }
    };
    // Warnings go to stderr even with --json: stdout carries the JSON, and a warning must not vanish.
    check_quiet_hours(&campaign, |text| eprintln!("{text}"))?;
    let run_dir = options
        .out
        .clone()
        .or_else(|| campaign.output_dir.clone())
        .unwrap_or_else(|| default_run_dir(&campaign));
    if run_dir.join(CHECKPOINT_DIR).exists() {
        bail!(Refusal(format!(
            "{} already holds a run: continue it with `msgbatch resume {}` or choose another --out",
            run_dir.display(),
            run_dir.display()
        )));
    }
    files::create_private_dir(&run_dir)
        .with_context(|| format!("cannot create run directory {}", run_dir.display()))?;
    let checkpoint = Checkpoint::open(&run_dir.join(CHECKPOINT_DIR), true)?;
    let session = Session::connect(&campaign).await?;
    let campaign_fingerprint = campaign_fingerprint(&campaign)?;
    let input_fingerprint = fingerprint_file(&campaign.recipients.path)?;
    let campaign_text = std::fs::read(&campaign.file).context("cannot read the campaign file")?;
    std::io::Write::write_all(
        &mut files::create_private(&run_dir.join("campaign.toml"))?,
        &campaign_text,
    )
    .context("cannot copy the campaign file")?;

    say(&format!("run directory {}", run_dir.display()));
    let scan = {
        let campaign = campaign.clone();
        let rejects = run_dir.join(REJECTS_FILE);
        let quiet = options.quiet;
        tokio::task::spawn_blocking(move || validate(&campaign, &rejects, quiet)).await??
    };
    for warning in &scan.warnings {
        eprintln!("warning: {warning}");
    }
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
    let (mut report, checkpoint) = send_all(campaign, &meta, checkpoint, &session, run_dir, &options).await?;
    if let Some(wait) = &options.wait {
        if report.end == RunEnd::Complete {
            report.collected = Some(collect::collect(&checkpoint, &meta, &session.client, wait).await?);
        }
    }
    Ok(report)
}

/// `msgbatch resume`: the same campaign and input, continued from the checkpoint.
pub async fn resume(run_dir: &Path, options: RunOptions) -> Result<RunReport> {
    let checkpoint = Checkpoint::open(&run_dir.join(CHECKPOINT_DIR), false)?;
    let meta = checkpoint
        .meta()?
        .ok_or_else(|| Refusal(format!("{} holds no finished scan: start a new run", run_dir.display())))?;
    let campaign = Campaign::load(&meta.campaign_file)?;
    verify_unchanged(&campaign, &meta)?;
    check_quiet_hours(&campaign, |text| eprintln!("{text}"))?;
    let session = Session::connect(&campaign).await?;
    let (report, _) = send_all(campaign, &meta, checkpoint, &session, run_dir.to_path_buf(), &options).await?;
    Ok(report)
}

/// Refuses a campaign whose file, message text, suppression list, input or chunking changed
/// since the run started: the chunks and rows of the checkpoint would no longer be the same.
pub fn verify_unchanged(campaign: &Campaign, meta: &RunMeta) -> Result<()> {
    if campaign_fingerprint(campaign)? != meta.campaign_fingerprint {
        bail!(Refusal(format!(
            "the campaign changed since this run started ({}, its message text or its suppression list): refusing to resume; start a new run",
            meta.campaign_file.display()
        )));
    }
    let input = std::fs::canonicalize(&campaign.recipients.path).unwrap_or(campaign.recipients.path.clone());
    if input != meta.input_file || fingerprint_file(&campaign.recipients.path)? != meta.input_fingerprint {
        bail!(Refusal(format!(
            "the recipients file changed since this run started ({}): refusing to resume; start a new run",
            meta.input_file.display()
        )));
    }
    if campaign.send.chunk_size != meta.chunk_size {
        bail!(Refusal(
            "chunk_size changed since this run started: refusing to resume".into()
        ));
    }
    Ok(())
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

/// A chunk ready to send.
struct Chunk {
    key: ChunkKey,
    recipients: Vec<Recipient>,
}

/// Commands to the thread that owns the checkpoint.
enum Write {
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
fn writer_loop(
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
        for command in batch {
            let written = match command {
                Write::Mark { key, record, ack } => {
                    acks.push(ack);
                    checkpoint.record_in_flight(&[(key, record)])
                }
                Write::Complete { key, record, results } => {
                    unflushed_done += 1;
                    flush_done_by.get_or_insert(Instant::now() + FLUSH_DONE_WITHIN);
                    checkpoint.complete(key, &record, &results)
                }
                Write::Note { key, record } => checkpoint.record_in_flight(&[(key, record)]),
                Write::Release { key } => checkpoint.release(key),
            };
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

/// What every sender task shares.
struct Shared {
    campaign: Campaign,
    client: Client,
    writer: std_mpsc::Sender<Write>,
    fatal: Arc<Mutex<Option<String>>>,
    stop: watch::Receiver<bool>,
    progress: Progress,
    uncertain: AtomicU64,
}

impl Shared {
    fn fail(&self, message: String) {
        self.fatal.lock().expect("fatal lock").get_or_insert(message);
    }
    fn failed(&self) -> bool {
        self.fatal.lock().expect("fatal lock").is_some()
    }
}

/// Sends one chunk: durable mark, request with retries only where nothing took effect, then
/// results and `done` together; anything else leaves it uncertain.
async fn send_chunk(shared: Arc<Shared>, chunk: Chunk, _permit: tokio::sync::OwnedSemaphorePermit) {
    let count = chunk.recipients.len() as u32;
    let first_row = chunk.recipients.first().map_or(0, |r| r.row);
    let record = |state, attempts, send_group_id, note| ChunkRecord {
        state,
        recipients: count,
        first_row,
        attempts,
        send_group_id,
        note,
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
    failpoint::reached("after-in-flight");
    let mut attempts = 0;
    loop {
        attempts += 1;
        let answer = wire::send(&shared.client, &shared.campaign, chunk.key.lane, &chunk.recipients).await;
        let error = match answer {
            Ok(answer) => {
                failpoint::reached("after-response");
                let write = match wire::results(&answer, &chunk.recipients) {
                    Ok((results, send_group_id)) => Write::Complete {
                        key: chunk.key,
                        record: record(ChunkState::Done, attempts, send_group_id, None),
                        results,
                    },
                    Err(why) => {
                        shared.uncertain.fetch_add(count as u64, Ordering::Relaxed);
                        shared.progress.say(&format!("chunk {}: uncertain: {why}", chunk.key));
                        Write::Note {
                            key: chunk.key,
                            record: record(ChunkState::InFlight, attempts, None, Some(why)),
                        }
                    }
                };
                let _ = shared.writer.send(write);
                shared.progress.add(count as u64);
                return;
            }
            Err(error) => error,
        };
        let refused =
            error.kind() == ErrorKind::Service && error.http_status().is_some_and(|s| (400..500).contains(&s));
        if error.provably_not_applied() && attempts < shared.campaign.send.max_attempts {
            let wait = pace::backoff(attempts, error.retry_after());
            let mut stop = shared.stop.clone();
            tokio::select! {
                _ = tokio::time::sleep(wait) => continue,
                _ = until_stopped(&mut stop) => {
                    let _ = shared.writer.send(Write::Release { key: chunk.key });
                    return;
                }
            }
        }
        if error.provably_not_applied() || refused {
            // The service did not take it: the chunk is pending again, and the run stops.
            let _ = shared.writer.send(Write::Release { key: chunk.key });
            let why = if refused { "refused" } else { "gave up" };
            return shared.fail(format!(
                "chunk {} {why} after {attempts} attempt(s), not sent: {error}",
                chunk.key
            ));
        }
        shared.uncertain.fetch_add(count as u64, Ordering::Relaxed);
        shared
            .progress
            .say(&format!("chunk {}: uncertain, not resent: {error}", chunk.key));
        let note = Write::Note {
            key: chunk.key,
            record: record(ChunkState::InFlight, attempts, None, Some(error.to_string())),
        };
        let _ = shared.writer.send(note);
        return;
    }
}

/// Reads the input again in the same order, cuts the same chunks, and feeds them to `chunks`.
fn produce_chunks(campaign: &Campaign, chunks: mpsc::Sender<Chunk>) -> Result<(), PrepareError> {
    let chunk_size = campaign.send.chunk_size;
    let mut lanes: BTreeMap<Lane, (u32, Vec<Recipient>)> = BTreeMap::new();
    let emit = |lane: Lane, index: u32, recipients: Vec<Recipient>| {
        chunks
            .blocking_send(Chunk {
                key: ChunkKey { lane, index },
                recipients,
            })
            .map_err(|_| PrepareError::Stopped)
    };
    prepare::walk(
        campaign,
        |_, fate| {
            if let Fate::Valid(recipient) = fate {
                let (next, buffer) = lanes
                    .entry(recipient.lane)
                    .or_insert_with(|| (0, Vec::with_capacity(chunk_size)));
                buffer.push(recipient.clone());
                if buffer.len() == chunk_size {
                    let full = std::mem::replace(buffer, Vec::with_capacity(chunk_size));
                    emit(recipient.lane, *next, full)?;
                    *next += 1;
                }
            }
            Ok(())
        },
        |_| {},
    )?;
    for (lane, (index, buffer)) in lanes {
        if !buffer.is_empty() {
            emit(lane, index, buffer)?;
        }
    }
    Ok(())
}

async fn send_all(
    campaign: Campaign,
    meta: &RunMeta,
    checkpoint: Checkpoint,
    session: &Session,
    run_dir: PathBuf,
    options: &RunOptions,
) -> Result<(RunReport, Checkpoint)> {
    let existing = checkpoint.chunk_records()?;
    let done: u64 = existing
        .values()
        .filter(|r| r.state == ChunkState::Done)
        .map(|r| r.recipients as u64)
        .sum();
    let uncertain_before: u64 = existing
        .values()
        .filter(|r| r.state == ChunkState::InFlight)
        .map(|r| r.recipients as u64)
        .sum();
    let to_send = meta.scan.valid - done - if options.resend_uncertain { 0 } else { uncertain_before };
    if uncertain_before > 0 && !options.quiet {
        let action = if options.resend_uncertain {
            "sending them again (--resend-uncertain)"
        } else {
            "not resending them (use --resend-uncertain to)"
        };
        eprintln!("{uncertain_before} recipient(s) in chunks that may or may not have been sent: {action}");
    }

    let (stop_tx, stop_rx) = watch::channel(false);
    let ctrl_c = tokio::spawn({
        let quiet = options.quiet;
        async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                if !quiet {
                    eprintln!(
                        "\nstopping: no new chunks; waiting for the requests in flight (Ctrl-C again to quit now)"
                    );
                }
                let _ = stop_tx.send(true);
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(130);
                }
            }
        }
    });

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
    });

    let concurrency = campaign.send.concurrency;
    let (chunk_tx, mut chunk_rx) = mpsc::channel::<Chunk>(concurrency * 2);
    let producer = {
        let campaign = campaign.clone();
        tokio::task::spawn_blocking(move || produce_chunks(&campaign, chunk_tx))
    };
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
        match existing.get(&chunk.key).map(|r| r.state) {
            Some(ChunkState::Done) => continue,
            Some(ChunkState::InFlight) if !options.resend_uncertain => continue,
            _ => {}
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
            limiter.acquire(chunk.recipients.len()).await;
        }
        tasks.spawn(send_chunk(shared.clone(), chunk, permit));
        while tasks.try_join_next().is_some() {}
    }
    drop(chunk_rx);
    while tasks.join_next().await.is_some() {}
    let produced = producer.await.map_err(|e| anyhow!("reader task: {e}"))?;
    ctrl_c.abort();
    shared.progress.finish();
    let stopped = *stop_rx.borrow();
    let shared = Arc::try_unwrap(shared).map_err(|_| anyhow!("sender tasks outlived the run"))?;
    drop(shared.writer);
    let checkpoint = writer.join().map_err(|_| anyhow!("checkpoint writer panicked"))?;
    let fatal = fatal.lock().expect("fatal lock").clone();
    let end = match (fatal, produced) {
        (Some(message), _) => RunEnd::Failed(message),
        (None, Err(PrepareError::Stopped)) if stopped => RunEnd::Stopped,
        (None, Err(error)) => RunEnd::Failed(error.to_string()),
        (None, Ok(())) if stopped => RunEnd::Stopped,
        (None, Ok(())) => RunEnd::Complete,
    };
    let status = status_of(&checkpoint, meta)?;
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

/// Status from the checkpoint alone.
pub fn status_of(checkpoint: &Checkpoint, meta: &RunMeta) -> Result<Status> {
    let scan = &meta.scan;
    let records = checkpoint.chunk_records()?;
    let mut status = Status {
        campaign: meta.campaign_file.clone(),
        kind: meta.kind.clone(),
        rows: scan.rows,
        rejected: scan.rejected,
        rejected_by_reason: scan.rejected_by_reason.clone(),
        duplicates: scan.duplicates,
        suppressed: scan.suppressed,
        ..Status::default()
    };
    for (lane, valid) in &scan.per_lane {
        status.lanes.insert(
            *lane,
            LaneStatus {
                valid: *valid,
                chunks: scan.chunks_in(*lane, meta.chunk_size),
                ..LaneStatus::default()
            },
        );
    }
    let mut keys: Vec<&ChunkKey> = records.keys().collect();
    keys.sort();
    for key in keys {
        let record = &records[key];
        let lane = status.lanes.entry(key.lane).or_default();
        match record.state {
            ChunkState::Done => {
                lane.sent += record.recipients as u64;
                lane.chunks_done += 1;
                for result in checkpoint.results(*key)?.unwrap_or_default() {
                    if result.accepted {
                        status.accepted += 1;
                    } else {
                        status.not_accepted += 1;
                    }
                    *status.statuses.entry(result.status).or_default() += 1;
                }
            }
            ChunkState::InFlight => {
                lane.uncertain += record.recipients as u64;
                lane.chunks_uncertain += 1;
            }
        }
    }
    for lane in status.lanes.values_mut() {
        lane.pending = lane.valid.saturating_sub(lane.sent + lane.uncertain);
        status.sent += lane.sent;
        status.uncertain += lane.uncertain;
        status.pending += lane.pending;
    }
    status.complete = status.pending == 0;
    Ok(status)
}

/// `msgbatch status`: where every row stands, from the checkpoint alone.
pub fn status(run_dir: &Path) -> Result<Status> {
    let checkpoint = Checkpoint::open(&run_dir.join(CHECKPOINT_DIR), false)?;
    let meta = checkpoint.meta()?.ok_or_else(|| {
        Refusal(format!(
            "{} has a checkpoint but no scan yet (the run stopped while reading)",
            run_dir.display()
        ))
    })?;
    status_of(&checkpoint, &meta)
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
