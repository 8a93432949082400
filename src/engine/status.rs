//! Where every input row of a run stands: `rows = rejected + duplicates + suppressed (+ capped) + sent + uncertain + pending`, from the checkpoint, or live from the snapshot a running process keeps.

use super::budget::Spend;
use super::checkpoint::{Checkpoint, ChunkKey, ChunkRecord, ChunkState, RunMeta};
use super::events::{Event, Pace, PauseCause, Sink};
use super::Refusal;
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
    /// Held back by the workspace's frequency cap.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub capped: u64,
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
    /// The spend against the cap, when the campaign gives prices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetStatus>,
}

/// The spend cap and where the run stands against it, in won.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct BudgetStatus {
    /// `None`: prices are given but no cap.
    pub limit: Option<i64>,
    pub charged: i64,
    /// Worst cases of chunks in flight or uncertain, and gateway fallbacks that may follow.
    pub reserved: i64,
}

impl Status {
    pub fn balanced(&self) -> bool {
        self.rows
            == self.rejected
                + self.duplicates
                + self.suppressed
                + self.capped
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
        // A bucket only the console's frequency cap fills: named when it holds rows.
        let capped = if self.capped > 0 {
            format!(" + capped {}", self.capped)
        } else {
            String::new()
        };
        format!(
            "rows {} = rejected {} + duplicates {} + suppressed {}{capped} + sent {} + uncertain {} + pending {}{sending}",
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
        capped: scan.capped,
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
    let limit = checkpoint.budget()?;
    let mut spend = Spend::default();
    // Sums only: the records' order does not matter.
    for (key, record) in records {
        if let Some(cost) = &record.cost {
            let chunk = cost.spend(record.state);
            spend.charged += chunk.charged;
            spend.reserved += chunk.reserved;
        }
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
    status.budget = limit.map(|limit| BudgetStatus {
        limit,
        charged: spend.charged,
        reserved: spend.reserved,
    });
    status.total();
    Ok(status)
}

/// `msgbatch status`: where every row stands, from the checkpoint alone.
pub fn status(run_dir: &Path) -> Result<Status> {
    let checkpoint = Checkpoint::open(&crate::engine::checkpoint_dir(run_dir), false)?;
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
/// reports it); of a running one, `live` and `updated_at` say so, with its pace and controls.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    /// True while a process is running the campaign (the figures are as of `updated_at`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub live: bool,
    /// RFC 3339, for a live snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// Paused (asked, or quiet hours): no new chunk goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<PauseCause>,
    /// The pace the running process sends at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace: Option<Pace>,
    /// The last control command the running process read (see `control.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<ControlSeen>,
    /// The budget stopped the run from taking new chunks.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub budget_reached: bool,
    /// A stop was asked: requests in flight are ending.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stopping: bool,
    #[serde(flatten)]
    pub status: Status,
}

/// Which command of `control.json` a running process has read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlSeen {
    pub owner: String,
    pub seq: u64,
}

impl Snapshot {
    fn of(status: Status) -> Snapshot {
        Snapshot {
            live: false,
            updated_at: None,
            paused: None,
            pace: None,
            control: None,
            budget_reached: false,
            stopping: false,
            status,
        }
    }
}

/// A running send's snapshot, kept up to date from the run's events and written to
/// `status.json`: what `status` shows of a run another process holds.
pub struct Live {
    /// `None`: kept in memory only (the console's live page), never written.
    run_dir: Option<PathBuf>,
    snapshot: std::sync::Mutex<Snapshot>,
    /// One write of `status.json` at a time: they share the name written aside.
    writing: std::sync::Mutex<()>,
}

impl Live {
    pub fn new(run_dir: &Path, start: Status) -> Live {
        Live {
            run_dir: Some(run_dir.to_path_buf()),
            snapshot: std::sync::Mutex::new(Snapshot::of(start)),
            writing: std::sync::Mutex::new(()),
        }
    }

    /// A snapshot kept in memory from the events, for a front end that shows it as it changes.
    pub fn in_memory() -> Live {
        Live {
            run_dir: None,
            snapshot: std::sync::Mutex::new(Snapshot::of(Status::default())),
            writing: std::sync::Mutex::new(()),
        }
    }

    /// The snapshot as the events so far made it.
    pub fn snapshot(&self) -> Snapshot {
        let mut snapshot = self.snapshot.lock().expect("live status lock").clone();
        snapshot.live = true;
        snapshot
    }

    fn change(&self, lane: Lane, change: impl FnOnce(&mut LaneStatus)) {
        let mut snapshot = self.snapshot.lock().expect("live status lock");
        change(snapshot.status.lanes.entry(lane).or_default());
        snapshot.status.total();
    }

    fn spend(&self, change: impl FnOnce(&mut BudgetStatus)) {
        if let Some(budget) = &mut self.snapshot.lock().expect("live status lock").status.budget {
            change(budget);
        }
    }

    /// Replaces the run directory's snapshot with the status as it is now.
    pub fn write(&self) -> std::io::Result<()> {
        let Some(run_dir) = &self.run_dir else { return Ok(()) };
        let _one_at_a_time = self.writing.lock().expect("live write lock");
        write_snapshot(run_dir, self.snapshot())
    }
}

impl Sink for Live {
    fn event(&self, event: &Event) {
        match event {
            Event::Started {
                status,
                pace,
                budget,
                spend,
                ..
            } => {
                let mut snapshot = self.snapshot.lock().expect("live status lock");
                snapshot.status = (**status).clone();
                snapshot.pace = Some(*pace);
                if status.budget.is_some() || budget.is_some() {
                    snapshot.status.budget = Some(BudgetStatus {
                        limit: *budget,
                        charged: spend.charged,
                        reserved: spend.reserved,
                    });
                }
            }
            Event::Dispatched {
                key,
                recipients,
                was_uncertain,
                reserved,
            } => {
                self.change(key.lane, |lane| {
                    if *was_uncertain {
                        lane.uncertain = lane.uncertain.saturating_sub(*recipients);
                        lane.chunks_uncertain = lane.chunks_uncertain.saturating_sub(1);
                    } else {
                        lane.pending = lane.pending.saturating_sub(*recipients);
                    }
                    lane.sending += recipients;
                });
                // A chunk sent again keeps the reservation it held as uncertain.
                if !was_uncertain {
                    self.spend(|budget| budget.reserved += reserved);
                }
            }
            Event::Answered {
                key,
                recipients,
                accepted,
                not_accepted,
                statuses,
                charged,
                kept,
                reserved,
            } => {
                let mut snapshot = self.snapshot.lock().expect("live status lock");
                let status = &mut snapshot.status;
                status.accepted += accepted;
                status.not_accepted += not_accepted;
                for count in statuses {
                    // Counted without an allocation per chunk: the codes repeat.
                    let n = count.accepted + count.not_accepted;
                    match status.statuses.get_mut(count.status.as_str()) {
                        Some(total) => *total += n,
                        None => {
                            status.statuses.insert(count.status.clone(), n);
                        }
                    }
                }
                let lane = status.lanes.entry(key.lane).or_default();
                lane.sending = lane.sending.saturating_sub(*recipients);
                lane.sent += recipients;
                lane.chunks_done += 1;
                if let Some(budget) = &mut status.budget {
                    budget.reserved += kept - reserved;
                    budget.charged += charged;
                }
                status.total();
            }
            Event::Uncertain { key, recipients, .. } => self.change(key.lane, |lane| {
                lane.sending = lane.sending.saturating_sub(*recipients);
                lane.uncertain += recipients;
                lane.chunks_uncertain += 1;
            }),
            Event::Released {
                key,
                recipients,
                reserved,
            } => {
                self.change(key.lane, |lane| {
                    lane.sending = lane.sending.saturating_sub(*recipients);
                    lane.pending += recipients;
                });
                self.spend(|budget| budget.reserved -= reserved);
            }
            Event::Pace(pace) => {
                self.snapshot.lock().expect("live status lock").pace = Some(*pace);
                let _ = self.write();
            }
            Event::Paused(cause) => {
                self.snapshot.lock().expect("live status lock").paused = Some(cause.clone());
                let _ = self.write();
            }
            Event::Resumed => {
                self.snapshot.lock().expect("live status lock").paused = None;
                let _ = self.write();
            }
            Event::ControlRead { owner, seq } => {
                self.snapshot.lock().expect("live status lock").control = Some(ControlSeen {
                    owner: owner.clone(),
                    seq: *seq,
                });
                // At once: the controlling process waits for this.
                let _ = self.write();
            }
            Event::BudgetReached(_) => self.snapshot.lock().expect("live status lock").budget_reached = true,
            Event::Stopping => self.snapshot.lock().expect("live status lock").stopping = true,
            _ => {}
        }
    }
}

/// Writes `status.json` whole under a temporary name and renames it, so a reader never sees half of it.
fn write_snapshot(run_dir: &Path, mut snapshot: Snapshot) -> std::io::Result<()> {
    snapshot.updated_at = Some(chrono::Utc::now().to_rfc3339());
    let temporary = run_dir.join(format!("{SNAPSHOT_FILE}.partial"));
    let body = serde_json::to_vec_pretty(&snapshot).map_err(std::io::Error::other)?;
    std::io::Write::write_all(&mut crate::files::create_private(&temporary)?, &body)?;
    std::fs::rename(&temporary, run_dir.join(SNAPSHOT_FILE))
}

impl Live {
    /// Leaves the final status of the run in `status.json` (not live), with the last control
    /// command it read: a controller waiting for a stop to be read sees it even after the end.
    pub fn write_final(&self, status: &Status) -> std::io::Result<()> {
        let Some(run_dir) = &self.run_dir else { return Ok(()) };
        let _one_at_a_time = self.writing.lock().expect("live write lock");
        let control = self.snapshot.lock().expect("live status lock").control.clone();
        write_snapshot(
            run_dir,
            Snapshot {
                control,
                ..Snapshot::of(status.clone())
            },
        )
    }
}

/// Where a run stands: from its checkpoint when no process holds it, else from the snapshot the
/// running process keeps (`None` while it is still reading its input).
pub fn look(run_dir: &Path) -> Result<Option<Snapshot>> {
    match Checkpoint::open(&crate::engine::checkpoint_dir(run_dir), false) {
        Ok(checkpoint) => {
            let meta = checkpoint.meta()?.ok_or_else(|| {
                Refusal(format!(
                    "{} stopped before it sent anything (while reading its input)",
                    run_dir.display()
                ))
            })?;
            Ok(Some(Snapshot::of(status_of(&checkpoint, &meta)?)))
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
