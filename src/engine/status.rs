//! Where every input row of a run stands, from the checkpoint alone: `rows = rejected + duplicates + suppressed + sent + uncertain + pending`.

use super::checkpoint::{Checkpoint, ChunkKey, ChunkState, RunMeta};
use super::{Refusal, CHECKPOINT_DIR};
use crate::campaign::Lane;
use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
                lane.sent += record.identity.recipients as u64;
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
                lane.uncertain += record.identity.recipients as u64;
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
    // Uncertain rows are not settled: `resume` would still have them to decide, so the run is not complete.
    status.complete = status.pending == 0 && status.uncertain == 0;
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
