//! `msgbatch purge`: a run's personal data destroyed once its purpose is served — every name, variable and full number in its reports and checkpoint — while its totals, charges, statement and ledger comparison stay; a kill at any point leaves the run purged or not, and readable.
//!
//! The purge writes, in `purged.partial/` beside the run's files, the rows as the report knows
//! them with numbers masked and nothing a person typed (`report::frozen`), and a new checkpoint
//! of chunk records alone (each done chunk's statuses counted, notes masked), both on stable
//! storage. Renaming that folder to `purged/` is the one commit point: from then every reader
//! takes the run's rows and checkpoint from there. Only then is everything else in the run
//! directory deleted (the old checkpoint, report files, rejects, the live files) and the report
//! written again from the kept rows; a purge killed in that cleaning finishes it when run again.
//! A run that could still send (pending or uncertain rows, gateway results not settled) is never
//! purged.

use crate::engine::checkpoint::{Checkpoint, ChunkKey, ChunkRecord, ChunkState};
use crate::engine::{self, Refusal, CHECKPOINT_DIR, PURGED_DIR};
use crate::report::frozen::{FrozenWriter, FROZEN_ROWS};
use crate::report::{ChargeState, ReportOptions, RunRows};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::path::Path;

const STAGING: &str = "purged.partial";
/// In `purged/`: the cleaning after the commit is done.
const CLEANED: &str = "cleaned";

/// What a purge did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "purge", rename_all = "snake_case")]
pub enum Purged {
    /// Destroyed now: the rows kept countable, when the run's last answer came (epoch ms), and
    /// the summary of the report written again (for a caller that writes more from it).
    Purged {
        rows: u64,
        ended_at: Option<i64>,
        #[serde(skip)]
        report: Option<Box<crate::report::Summary>>,
    },
    /// Purged before (a cleaning left unfinished was finished).
    Already,
    /// Ended less than the retention ago: kept.
    Kept { ended_at: Option<i64> },
}

/// Purges `run_dir` if it ended (its last answer) at least `older_than_days` ago, or at once
/// without it; the report is written again from the kept rows with `report`.
pub fn purge(run_dir: &Path, older_than_days: Option<u32>, report: &ReportOptions) -> Result<Purged> {
    if engine::is_purged(run_dir) {
        clean(run_dir, report)?;
        return Ok(Purged::Already);
    }
    let staging = run_dir.join(STAGING);
    remove(&staging)?;
    let rows = RunRows::open(run_dir)?;
    crate::files::create_private_dir(&staging).with_context(|| format!("cannot create {}", staging.display()))?;
    let (summary, ended_at, unsettled) = match freeze_rows(&rows, &staging) {
        Ok(frozen) => frozen,
        Err(error) => {
            drop(rows);
            remove(&staging)?;
            return Err(error);
        }
    };
    let refusal = if !summary.status.complete {
        Some(format!(
            "{} can still send ({} pending, {} uncertain): a run that may be resumed is never purged",
            run_dir.display(),
            summary.status.pending,
            summary.status.uncertain
        ))
    } else if unsettled > 0 {
        Some(format!(
            "{}: {unsettled} gateway results are not settled yet (GW_PENDING): collect them before the run is purged",
            run_dir.display()
        ))
    } else {
        None
    };
    // The clock the quiet hours read (`MSGBATCH_CLOCK` sets it for tests).
    let now = crate::campaign::quiet::now_kst().map_err(|error| anyhow::anyhow!(error))?;
    let young = older_than_days.is_some_and(|days| {
        let ended = ended_at.unwrap_or(0);
        now.timestamp_millis() - ended < i64::from(days) * 86_400_000
    });
    if refusal.is_some() || young {
        drop(rows);
        remove(&staging)?;
        if let Some(refusal) = refusal {
            bail!(Refusal(refusal));
        }
        return Ok(Purged::Kept { ended_at });
    }
    copy_records(&rows, &staging)?;
    drop(rows);
    crate::failpoint::reached("purge-staged");
    sync_dir(&staging)?;
    std::fs::rename(&staging, run_dir.join(PURGED_DIR))
        .with_context(|| format!("cannot commit the purge of {}", run_dir.display()))?;
    sync_dir(run_dir)?;
    crate::failpoint::reached("purge-committed");
    let report = clean(run_dir, report)?.map(Box::new);
    Ok(Purged::Purged {
        rows: summary.status.rows,
        ended_at,
        report,
    })
}

/// Writes the kept rows; answers the summary, the last answer's time and the rows whose
/// gateway result is still pending.
fn freeze_rows(rows: &RunRows, staging: &Path) -> Result<(crate::report::Summary, Option<i64>, u64)> {
    let mut writer = FrozenWriter::create(&staging.join(FROZEN_ROWS))?;
    let mut ended_at: Option<i64> = None;
    let mut unsettled = 0u64;
    let summary = rows.walk_sent(|walked| {
        if let Some(at) = walked.sent_at {
            ended_at = Some(ended_at.map_or(at, |ended| ended.max(at)));
        }
        if walked.row.charge_state == ChargeState::Provisional {
            unsettled += 1;
        }
        writer.push(&walked.row, walked.sent_at)
    })?;
    writer.finish()?;
    Ok((summary, ended_at, unsettled))
}

/// The new checkpoint: the run's meta, its spend cap and its chunk records, each done chunk with
/// its statuses counted (its results are not copied) and its note masked.
fn copy_records(rows: &RunRows, staging: &Path) -> Result<()> {
    let source = rows.checkpoint();
    let copy = Checkpoint::open(&staging.join(CHECKPOINT_DIR), true)?;
    copy.put_meta(rows.meta())?;
    if let Some(limit) = source.budget()? {
        copy.put_budget(limit)?;
    }
    let mut records: Vec<(ChunkKey, ChunkRecord)> = Vec::new();
    for (key, mut record) in source.chunk_records()? {
        if record.state == ChunkState::Done && record.statuses.is_none() {
            record.statuses = Some(source.status_counts(key, &record)?);
        }
        record.note = record.note.map(|note| crate::phone::mask_phones(&note).into_owned());
        records.push((key, record));
    }
    copy.record_in_flight(&records)?;
    copy.flush()?;
    Ok(())
}

/// After the commit: deletes everything of the run but the purge's folder, then writes the
/// report again from the kept rows (answering its summary; nothing when cleaned before). Run
/// again after a kill, it finishes.
fn clean(run_dir: &Path, report: &ReportOptions) -> Result<Option<crate::report::Summary>> {
    let kept = run_dir.join(PURGED_DIR);
    if kept.join(CLEANED).exists() {
        return Ok(None);
    }
    for entry in std::fs::read_dir(run_dir).with_context(|| format!("cannot read {}", run_dir.display()))? {
        let entry = entry?;
        if entry.file_name() != PURGED_DIR {
            remove(&entry.path())?;
        }
    }
    crate::failpoint::reached("purge-cleaning");
    let summary = crate::report::write(run_dir, None, report)?;
    let marker = crate::files::create_private(&kept.join(CLEANED))?;
    marker.sync_all()?;
    sync_dir(&kept)?;
    Ok(Some(summary))
}

fn remove(path: &Path) -> Result<()> {
    crate::files::remove_any(path).with_context(|| format!("cannot delete {}", path.display()))
}

fn sync_dir(dir: &Path) -> Result<()> {
    std::fs::File::open(dir)
        .and_then(|file| file.sync_all())
        .with_context(|| format!("cannot flush {}", dir.display()))
}
