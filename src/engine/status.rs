//! Where every input row of a run stands: `rows = rejected + duplicates + suppressed + sent + uncertain + pending`, from the checkpoint, or live from the snapshot a running process keeps.

use super::checkpoint::{Checkpoint, ChunkKey, ChunkRecord, ChunkState, RunMeta};
use super::{Refusal, CHECKPOINT_DIR};
use crate::campaign::Lane;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// Buckets of one lane.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LaneStatus {
    pub valid: u64,
    pub sent: u64,
    pub uncertain: u64,
    pub pending: u64,
    /// In a request being sent right now (live snapshots only).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sending: u64,
    pub chunks: u64,
    pub chunks_done: u64,
    pub chunks_uncertain: u64,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// Where every input row stands, from the checkpoint alone:
/// `rows = rejected + duplicates + suppressed + sent + uncertain + pending`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// In requests being sent right now: only in the live snapshot of a running process.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sending: u64,
    /// Per-recipient status codes of the sent rows.
    pub statuses: BTreeMap<String, u64>,
    pub lanes: BTreeMap<Lane, LaneStatus>,
    pub complete: bool,
}

impl Status {
    pub fn balanced(&self) -> bool {
        self.rows
            == self.rejected
                + self.duplicates
                + self.suppressed
                + self.sent
                + self.uncertain
                + self.pending
                + self.sending
    }

    /// The accounting equation in one line.
    pub fn equation(&self) -> String {
        let sending = if self.sending > 0 {
            format!(" + sending {}", self.sending)
        } else {
            String::new()
        };
        format!(
            "rows {} = rejected {} + duplicates {} + suppressed {} + sent {} + uncertain {} + pending {}{sending}",
            self.rows, self.rejected, self.duplicates, self.suppressed, self.sent, self.uncertain, self.pending
        )
    }

    /// Adds up the lanes into the totals, and says whether the run is complete.
    fn total(&mut self) {
        (self.sent, self.uncertain, self.pending, self.sending) = (0, 0, 0, 0);
        for lane in self.lanes.values() {
            self.sent += lane.sent;
            self.uncertain += lane.uncertain;
            self.pending += lane.pending;
            self.sending += lane.sending;
        }
        // Uncertain rows are not settled: `resume` would still have them to decide, so the run is not complete.
        self.complete = self.pending == 0 && self.uncertain == 0 && self.sending == 0;
    }
}

/// Status from the checkpoint alone.
pub fn status_of(checkpoint: &Checkpoint, meta: &RunMeta) -> Result<Status> {
    status_from(checkpoint, meta, &checkpoint.chunk_records()?)
}

/// Status from the checkpoint, its chunk records already read.
pub fn status_from(
    checkpoint: &Checkpoint,
    meta: &RunMeta,
    records: &HashMap<ChunkKey, ChunkRecord>,
) -> Result<Status> {
    let scan = &meta.scan;
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
    // Sums only: the records' order does not matter.
    for (key, record) in records {
        let lane = status.lanes.entry(key.lane).or_default();
        match record.state {
            ChunkState::Done => {
                lane.sent += record.identity.recipients as u64;
                lane.chunks_done += 1;
                for count in checkpoint.status_counts(*key, record)? {
                    status.accepted += count.accepted;
                    status.not_accepted += count.not_accepted;
                    *status.statuses.entry(count.status).or_default() += count.accepted + count.not_accepted;
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
    }
    status.total();
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

/// The file a running process keeps its live status in, replaced whole every second.
pub const SNAPSHOT_FILE: &str = "status.json";
/// How often a running process refreshes its snapshot.
pub const SNAPSHOT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// What `status` finds. Of a run no process holds, it is the status alone (as `run --json`
/// reports it); of a running one, `live` and `updated_at` say so.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    /// True while a process is running the campaign (the figures are as of `updated_at`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub live: bool,
    /// RFC 3339, for a live snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    #[serde(flatten)]
    pub status: Status,
}

/// A running send's status, kept up to date by the senders as chunks change state.
pub struct Live {
    status: std::sync::Mutex<Status>,
}

impl Live {
    pub fn new(start: Status) -> Live {
        Live {
            status: std::sync::Mutex::new(start),
        }
    }

    fn change(&self, lane: Lane, change: impl FnOnce(&mut LaneStatus)) {
        let mut status = self.status.lock().expect("live status lock");
        change(status.lanes.entry(lane).or_default());
        status.total();
    }

    /// A chunk is marked in flight: taken from pending, or from uncertain when it is sent again.
    pub fn marked(&self, lane: Lane, recipients: u64, was_uncertain: bool) {
        self.change(lane, |lane| {
            if was_uncertain {
                lane.uncertain = lane.uncertain.saturating_sub(recipients);
                lane.chunks_uncertain = lane.chunks_uncertain.saturating_sub(1);
            } else {
                lane.pending = lane.pending.saturating_sub(recipients);
            }
            lane.sending += recipients;
        });
    }

    /// The service answered a chunk.
    pub fn answered(&self, lane: Lane, results: &[super::checkpoint::RecipientResult]) {
        let mut status = self.status.lock().expect("live status lock");
        for result in results {
            if result.accepted {
                status.accepted += 1;
            } else {
                status.not_accepted += 1;
            }
            // Counted without an allocation per recipient: the codes repeat.
            match status.statuses.get_mut(result.status.as_str()) {
                Some(count) => *count += 1,
                None => {
                    status.statuses.insert(result.status.clone(), 1);
                }
            }
        }
        let lane = status.lanes.entry(lane).or_default();
        let count = results.len() as u64;
        lane.sending = lane.sending.saturating_sub(count);
        lane.sent += count;
        lane.chunks_done += 1;
        status.total();
    }

    /// A chunk's request may or may not have taken effect.
    pub fn uncertain(&self, lane: Lane, recipients: u64) {
        self.change(lane, |lane| {
            lane.sending = lane.sending.saturating_sub(recipients);
            lane.uncertain += recipients;
            lane.chunks_uncertain += 1;
        });
    }

    /// A chunk the service provably did not take is pending again.
    pub fn released(&self, lane: Lane, recipients: u64) {
        self.change(lane, |lane| {
            lane.sending = lane.sending.saturating_sub(recipients);
            lane.pending += recipients;
        });
    }

    /// Replaces the run directory's snapshot with the status as it is now.
    pub fn write(&self, run_dir: &Path, live: bool) -> std::io::Result<()> {
        let status = self.status.lock().expect("live status lock").clone();
        write_snapshot(run_dir, &status, live)
    }
}

/// Writes `status.json` whole under a temporary name and renames it, so a reader never sees half of it.
pub fn write_snapshot(run_dir: &Path, status: &Status, live: bool) -> std::io::Result<()> {
    let snapshot = Snapshot {
        live,
        updated_at: Some(chrono::Utc::now().to_rfc3339()),
        status: status.clone(),
    };
    let temporary = run_dir.join(format!("{SNAPSHOT_FILE}.partial"));
    let body = serde_json::to_vec_pretty(&snapshot).map_err(std::io::Error::other)?;
    std::io::Write::write_all(&mut crate::files::create_private(&temporary)?, &body)?;
    std::fs::rename(&temporary, run_dir.join(SNAPSHOT_FILE))
}

/// Where a run stands: from its checkpoint when no process holds it, else from the snapshot the
/// running process keeps (`None` while it is still reading its input).
pub fn look(run_dir: &Path) -> Result<Option<Snapshot>> {
    match Checkpoint::open(&run_dir.join(CHECKPOINT_DIR), false) {
        Ok(checkpoint) => {
            let meta = checkpoint.meta()?.ok_or_else(|| {
                Refusal(format!(
                    "{} stopped before it sent anything (while reading its input)",
                    run_dir.display()
                ))
            })?;
            Ok(Some(Snapshot {
                live: false,
                updated_at: None,
                status: status_of(&checkpoint, &meta)?,
            }))
        }
        Err(super::checkpoint::CheckpointError::InUse { .. }) => match std::fs::read(run_dir.join(SNAPSHOT_FILE)) {
            Ok(bytes) => {
                let mut snapshot: Snapshot = serde_json::from_slice(&bytes)?;
                snapshot.live = true;
                Ok(Some(snapshot))
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error.into()),
        },
        Err(error) => Err(error.into()),
    }
}
