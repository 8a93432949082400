//! Live control from another terminal: `pause`, `stop`, `adjust`, and `resume` of a paused run, through the run directory's control file; `resume` of a run no process holds goes on as a new send.

use super::exit::Exit;
use crate::engine::checkpoint::{Checkpoint, CheckpointError};
use crate::engine::control::{send_command, ControlFile, Controls};
use crate::engine::events::PauseCause;
use crate::engine::status::SNAPSHOT_FILE;
use crate::engine::{resume_command, Refusal, RunOptions, Snapshot};
use anyhow::{bail, Result};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a command waits for the running process to say it read it.
const ANSWER_WITHIN: Duration = Duration::from_secs(5);
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// Whether a process holds the run directory (its checkpoint's lock).
fn is_running(run_dir: &Path) -> Result<bool> {
    match Checkpoint::open(&crate::engine::checkpoint_dir(run_dir), false) {
        Ok(_) => Ok(false),
        Err(CheckpointError::InUse { .. }) => Ok(true),
        Err(error) => Err(error.into()),
    }
}

/// A command for the process running `run_dir` (see [`command`]); refused, saying what to do
/// `instead`, when no process runs it.
async fn command_running(
    run_dir: &Path,
    verb: &str,
    instead: &str,
    change: impl FnOnce(&mut Controls),
) -> Result<Option<Snapshot>> {
    if !is_running(run_dir)? {
        bail!(Refusal(format!(
            "no msgbatch process is running {dir}: {verb} applies to a running campaign. `msgbatch status {dir}` shows where it stands; {instead}",
            dir = run_dir.display()
        )));
    }
    command(run_dir, change).await
}

/// Sends a command to the process running `run_dir` and waits (a few seconds at most) until its
/// snapshot says it read it; `None` when it did not say so in time.
async fn command(run_dir: &Path, change: impl FnOnce(&mut Controls)) -> Result<Option<Snapshot>> {
    let sent: ControlFile = send_command(run_dir, change)?;
    let deadline = Instant::now() + ANSWER_WITHIN;
    while Instant::now() < deadline {
        if let Some(snapshot) = read_snapshot(run_dir) {
            let read = snapshot
                .control
                .as_ref()
                .is_some_and(|seen| seen.owner == sent.owner && seen.seq >= sent.seq);
            if read {
                return Ok(Some(snapshot));
            }
        }
        tokio::time::sleep(LOOK_EVERY).await;
    }
    Ok(None)
}

fn read_snapshot(run_dir: &Path) -> Option<Snapshot> {
    let bytes = std::fs::read(run_dir.join(SNAPSHOT_FILE)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// What to say when the running process did not confirm in time: it is still reading its input
/// (it reads its control file only once it sends), or it is busy.
fn unconfirmed(run_dir: &Path) -> Exit {
    println!(
        "{} has the command: the running process applies it when it next looks (it may still be reading its input)",
        run_dir.display()
    );
    Exit::Done
}

pub async fn pause(run_dir: &Path) -> Result<Exit> {
    let instead = "a stopped run stays as it is until `msgbatch resume`";
    let Some(snapshot) = command_running(run_dir, "pause", instead, |wanted| wanted.paused = true).await? else {
        return Ok(unconfirmed(run_dir));
    };
    println!(
        "paused {}: no new chunk is sent; {} recipient(s) in requests in flight end",
        run_dir.display(),
        snapshot.status.sending
    );
    println!("go on with: {}", resume_command(run_dir));
    Ok(Exit::Done)
}

pub async fn stop(run_dir: &Path) -> Result<Exit> {
    let instead = "it is not running, so there is nothing to stop";
    let Some(snapshot) = command_running(run_dir, "stop", instead, |wanted| wanted.stopped = true).await? else {
        return Ok(unconfirmed(run_dir));
    };
    println!(
        "stopping {}: no new chunk is sent; {} recipient(s) in requests in flight end, then the run exits 3",
        run_dir.display(),
        snapshot.status.sending
    );
    println!("resume with: {}", resume_command(run_dir));
    Ok(Exit::Done)
}

pub async fn adjust(run_dir: &Path, rate: Option<f64>, concurrency: Option<usize>) -> Result<Exit> {
    if rate.is_none() && concurrency.is_none() {
        bail!(Refusal("adjust: give --rate, --concurrency or both".into()));
    }
    let instead = format!(
        "`{} --rate N --concurrency N` continues it at a new pace",
        resume_command(run_dir)
    );
    let Some(snapshot) = command_running(run_dir, "adjust", &instead, |wanted| {
        wanted.rate = rate.or(wanted.rate);
        wanted.concurrency = concurrency.or(wanted.concurrency);
    })
    .await?
    else {
        return Ok(unconfirmed(run_dir));
    };
    print_pace(run_dir, &snapshot);
    Ok(Exit::Done)
}

fn print_pace(run_dir: &Path, snapshot: &Snapshot) {
    if let Some(pace) = &snapshot.pace {
        let rate = pace.rate.map_or("no rate limit".to_string(), |rate| {
            format!("{rate} message(s) per second")
        });
        println!(
            "pace of {}: {rate}, {} request(s) at once",
            run_dir.display(),
            pace.concurrency
        );
    }
}

/// `msgbatch resume`: a live paused run goes on; a stopped or crashed one is sent on.
pub async fn resume(run_dir: &Path, options: RunOptions, json: bool) -> Result<Exit> {
    if !is_running(run_dir)? {
        return super::campaign::resume(run_dir, options, json).await;
    }
    // Asked to pause: the run holds its next chunk as soon as it reaches it (a rate wait may
    // come first), and `resume` may undo the pause meanwhile.
    let asked = ControlFile::read(run_dir)?.is_some_and(|file| file.controls.paused);
    // Held by a person or by its own failure pause: either way a person's resume goes on.
    let holding = read_snapshot(run_dir)
        .is_some_and(|snapshot| matches!(snapshot.paused, Some(PauseCause::Asked | PauseCause::Failing { .. })));
    if !asked && !holding {
        bail!(Refusal(format!(
            "{dir} is in use by another msgbatch process, which is sending (not paused): `msgbatch pause {dir}`, `msgbatch adjust {dir}` or `msgbatch stop {dir}` reach it",
            dir = run_dir.display()
        )));
    }
    if options.budget.is_some() || options.resend_uncertain || options.start_at.is_some() {
        bail!(Refusal(format!(
            "{dir} is paused in a running process: --budget, --resend-uncertain and --start-at apply when a stopped run is resumed; `msgbatch resume {dir}` goes on as it is, or stop it first (msgbatch stop {dir})",
            dir = run_dir.display()
        )));
    }
    let Some(snapshot) = command(run_dir, |wanted| {
        wanted.paused = false;
        wanted.rate = options.rate.or(wanted.rate);
        wanted.concurrency = options.concurrency.or(wanted.concurrency);
    })
    .await?
    else {
        return Ok(unconfirmed(run_dir));
    };
    println!("resumed {}: chunks go out again", run_dir.display());
    print_pace(run_dir, &snapshot);
    Ok(Exit::Done)
}
