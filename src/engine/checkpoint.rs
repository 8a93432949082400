//! The run's sled checkpoint: run metadata, chunk states and per-recipient results, written by one owner thread.
//!
//! At-most-once: a chunk is durably `in_flight` (flushed) before its request leaves; its results
//! and `done` are written together in one batch; a chunk found `in_flight` later is uncertain.
//! Every chunk record carries the chunk's identity, and `engine::known::KnownChunks` checks the
//! plan cut again against it, so a chunk that would now hold other rows is never taken for the one
//! that was sent.

pub use crate::engine::budget::ChunkCost;
pub use crate::plan::ChunkKey;
use crate::plan::{ChunkIdentity, Scan};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Bumped when the stored layout or its meaning changes: 3 numbers rows as a spreadsheet shows
/// them (`input::sheet_row`; one less for CSV and Parquet in 2), in every chunk's identity.
pub const FORMAT_VERSION: u32 = 3;

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("run directory {path} is in use by another msgbatch process")]
    InUse { path: PathBuf },
    #[error("checkpoint {path}: {message}")]
    Store { path: PathBuf, message: String },
    #[error("{path} holds no msgbatch run (no checkpoint)")]
    NotARun { path: PathBuf },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChunkState {
    /// Durably marked before the request left; if found on resume, the chunk is uncertain.
    InFlight,
    /// The service answered; per-recipient results are stored.
    Done,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredChunkRecord")]
pub struct ChunkRecord {
    pub state: ChunkState,
    /// The chunk as it was cut when it was marked, to recognise it again on resume and report.
    #[serde(flatten)]
    pub identity: ChunkIdentity,
    /// Requests made for this chunk (retries of provably-unapplied attempts included).
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_group_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// A done chunk's results counted by status, written with them (see [`Checkpoint::complete`]),
    /// so that the status of a run does not decode every result. Records written before these
    /// counts existed have none; their results are counted instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statuses: Option<Vec<StatusCount>>,
    /// What the chunk costs, in won, when the campaign gives prices (see [`ChunkCost`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<ChunkCost>,
}

/// A [`ChunkRecord`] as read: its identity's fields beside the others, as `flatten` writes them.
/// Read through `flatten`, serde gathers every field of a record into a buffer of its own first:
/// at 100,000 records that was most of the time a report took before its first row.
#[derive(Deserialize)]
struct StoredChunkRecord {
    state: ChunkState,
    first_row: u64,
    last_row: u64,
    recipients: u32,
    digest: String,
    attempts: u32,
    #[serde(default)]
    send_group_id: Option<String>,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    statuses: Option<Vec<StatusCount>>,
    #[serde(default)]
    cost: Option<ChunkCost>,
}

impl From<StoredChunkRecord> for ChunkRecord {
    fn from(stored: StoredChunkRecord) -> ChunkRecord {
        ChunkRecord {
            state: stored.state,
            identity: ChunkIdentity {
                first_row: stored.first_row,
                last_row: stored.last_row,
                recipients: stored.recipients,
                digest: stored.digest,
            },
            attempts: stored.attempts,
            send_group_id: stored.send_group_id,
            note: stored.note,
            statuses: stored.statuses,
            cost: stored.cost,
        }
    }
}

/// One recipient's acceptance, as the service answered it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecipientResult {
    pub row: u64,
    pub status: String,
    /// `uid` (a number on the standard deployment, text on the gateway).
    pub uid: String,
    /// Gateway per-recipient `id` (UUID).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub date: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Whether the service took it (`OK`, `SMS_00`, `MMS_0000`, `GW_PENDING`).
    pub accepted: bool,
}

/// A chunk's results as stored: columns, with row numbers and numeric uids as deltas and the
/// status codes as a small dictionary, so a chunk of 100 standard results takes well under 1 KB.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct StoredResults {
    /// Distinct statuses and whether each means accepted.
    codes: Vec<(String, bool)>,
    status: Vec<u16>,
    rows: Vec<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    uid_numbers: Vec<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    uid_text: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    ids: Vec<String>,
    /// One date when all rows share it, else per-row dates as deltas.
    dates: Vec<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    errors: Vec<(u32, String)>,
    accepted_override: Vec<u32>,
}

/// Whether recipient `index` was accepted: its status's usual answer, unless it is listed as
/// the exception (a status that is accepted for most recipients but not for this one).
fn accepted_at<'a>(
    codes: &'a [(String, bool)],
    status: &[u16],
    accepted_override: &[u32],
    index: usize,
) -> (&'a str, bool) {
    let (code, accepted) = &codes[status[index] as usize];
    (code, *accepted != accepted_override.contains(&(index as u32)))
}

/// The columns of [`StoredResults`] that say each recipient's status and acceptance: what the
/// status counts need, read without building rows, uids, ids and dates (the other columns are
/// skipped by the parser).
#[derive(Deserialize)]
struct StoredStatuses {
    codes: Vec<(String, bool)>,
    status: Vec<u16>,
    accepted_override: Vec<u32>,
}

/// How many of a chunk's recipients got one status, accepted or not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCount {
    pub status: String,
    pub accepted: u64,
    pub not_accepted: u64,
}

/// Each status's count, in the order the statuses first appear.
pub(crate) fn count_statuses<'a>(results: impl Iterator<Item = (&'a str, bool)>) -> Vec<StatusCount> {
    let mut counts: Vec<StatusCount> = Vec::new();
    for (status, accepted) in results {
        let index = match counts.iter().position(|count| count.status == status) {
            Some(index) => index,
            None => {
                counts.push(StatusCount {
                    status: status.to_string(),
                    accepted: 0,
                    not_accepted: 0,
                });
                counts.len() - 1
            }
        };
        match accepted {
            true => counts[index].accepted += 1,
            false => counts[index].not_accepted += 1,
        }
    }
    counts
}

impl StoredStatuses {
    fn counts(&self) -> Result<Vec<StatusCount>, String> {
        if let Some(code) = self.status.iter().find(|code| usize::from(**code) >= self.codes.len()) {
            return Err(format!("status {code} is not among {} codes", self.codes.len()));
        }
        Ok(count_statuses((0..self.status.len()).map(|index| {
            accepted_at(&self.codes, &self.status, &self.accepted_override, index)
        })))
    }
}

fn deltas(values: impl Iterator<Item = i64>) -> Vec<i64> {
    let mut previous = 0i64;
    values
        .map(|value| {
            let delta = value.wrapping_sub(previous);
            previous = value;
            delta
        })
        .collect()
}

fn undeltas(deltas: &[i64]) -> Vec<i64> {
    let mut value = 0i64;
    deltas
        .iter()
        .map(|delta| {
            value = value.wrapping_add(*delta);
            value
        })
        .collect()
}

impl StoredResults {
    fn encode(results: &[RecipientResult]) -> StoredResults {
        let mut stored = StoredResults::default();
        for (index, result) in results.iter().enumerate() {
            let code = match stored.codes.iter().position(|(code, _)| code == &result.status) {
                Some(code) => code,
                None => {
                    stored.codes.push((result.status.clone(), result.accepted));
                    stored.codes.len() - 1
                }
            };
            if stored.codes[code].1 != result.accepted {
                stored.accepted_override.push(index as u32);
            }
            stored.status.push(code as u16);
            if let Some(error) = &result.error {
                stored.errors.push((index as u32, error.clone()));
            }
        }
        stored.rows = deltas(results.iter().map(|r| r.row as i64));
        let numeric: Option<Vec<i64>> = results
            .iter()
            .map(|r| r.uid.parse::<i64>().ok().filter(|n| n.to_string() == r.uid))
            .collect();
        match numeric {
            Some(numbers) => stored.uid_numbers = deltas(numbers.into_iter()),
            None => stored.uid_text = results.iter().map(|r| r.uid.clone()).collect(),
        }
        if results.iter().any(|r| r.id.is_some()) {
            stored.ids = results.iter().map(|r| r.id.clone().unwrap_or_default()).collect();
        }
        let first_date = results.first().map_or(0, |r| r.date);
        stored.dates = if results.iter().all(|r| r.date == first_date) {
            vec![first_date]
        } else {
            deltas(results.iter().map(|r| r.date))
        };
        stored
    }

    fn decode(self) -> Vec<RecipientResult> {
        let rows = undeltas(&self.rows);
        let uids: Vec<String> = if self.uid_text.is_empty() {
            undeltas(&self.uid_numbers).into_iter().map(|n| n.to_string()).collect()
        } else {
            self.uid_text
        };
        let errors: std::collections::HashMap<u32, String> = self.errors.into_iter().collect();
        let dates = if self.dates.len() == 1 {
            self.dates.clone()
        } else {
            undeltas(&self.dates)
        };
        // Each uid moved into its result, not copied: this is every row a report reads.
        let mut uids = uids.into_iter();
        rows.into_iter()
            .enumerate()
            .map(|(index, row)| {
                let (status, accepted) = accepted_at(&self.codes, &self.status, &self.accepted_override, index);
                RecipientResult {
                    row: row as u64,
                    status: status.to_string(),
                    uid: uids.next().unwrap_or_default(),
                    id: self.ids.get(index).cloned().filter(|id| !id.is_empty()),
                    date: *dates.get(index).or(dates.first()).unwrap_or(&0),
                    error: errors.get(&(index as u32)).cloned(),
                    accepted,
                }
            })
            .collect()
    }
}

/// A chunk the service answered: its `done` record and its results, to be written together.
#[derive(Debug, Clone)]
pub struct Completed {
    pub key: ChunkKey,
    pub record: ChunkRecord,
    pub results: Vec<RecipientResult>,
}

/// A gateway recipient's final record, as read from the result endpoints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinalResult {
    /// `OK`, `FAILED`, `GIVEUP`, or `GW_PENDING` while it has not settled.
    pub result: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<i64>,
    /// When it was read (epoch ms).
    pub checked_at: i64,
    /// Still pending when the collection horizon passed.
    #[serde(default)]
    pub provisional: bool,
}

/// What the checkpoint knows of the run as a whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    pub format: u32,
    pub campaign_file: PathBuf,
    pub campaign_fingerprint: String,
    pub input_fingerprint: String,
    pub input_file: PathBuf,
    pub kind: String,
    pub chunk_size: usize,
    pub created_at: String,
    pub scan: Scan,
}

const META_KEY: &[u8] = b"meta";
/// sled's page cache; its default of 1 GB would let memory grow with the size of the run.
const CACHE_BYTES: u64 = 32 * 1024 * 1024;

pub struct Checkpoint {
    path: PathBuf,
    db: sled::Db,
    /// sled's log file: `flush` syncs it, because sled's own flush (`pwrite` plus
    /// `sync_file_range`) survives `kill -9` but not a power cut.
    log: std::fs::File,
    chunks: sled::Tree,
    results: sled::Tree,
    finals: sled::Tree,
}

fn store_error(path: &Path) -> impl Fn(sled::Error) -> CheckpointError + '_ {
    move |error| CheckpointError::Store {
        path: path.to_path_buf(),
        message: error.to_string(),
    }
}

impl Checkpoint {
    /// Opens (or creates) the checkpoint folder; a second process gets `InUse`.
    pub fn open(path: &Path, create: bool) -> Result<Checkpoint, CheckpointError> {
        if !create && !path.join("db").exists() && !path.join("conf").exists() {
            return Err(CheckpointError::NotARun {
                path: path.to_path_buf(),
            });
        }
        // The checkpoint ties rows to send results: owner-only like the reports, from before sled
        // writes into it; what sled creates with its own modes is fixed up once it is open.
        if create {
            crate::files::create_private_dir(path).map_err(|e| CheckpointError::Store {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        }
        let db = sled::Config::new()
            .path(path)
            .cache_capacity(CACHE_BYTES)
            .flush_every_ms(Some(200))
            .open()
            .map_err(|error| {
                let text = error.to_string();
                if text.contains("lock") || text.contains("WouldBlock") || text.contains("temporarily unavailable") {
                    CheckpointError::InUse {
                        path: path.parent().unwrap_or(path).to_path_buf(),
                    }
                } else {
                    CheckpointError::Store {
                        path: path.to_path_buf(),
                        message: text,
                    }
                }
            })?;
        crate::files::make_private_tree(path).map_err(|e| CheckpointError::Store {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let chunks = db.open_tree("chunks").map_err(store_error(path))?;
        let results = db.open_tree("results").map_err(store_error(path))?;
        let finals = db.open_tree("finals").map_err(store_error(path))?;
        let log = durable_log(path).map_err(|e| CheckpointError::Store {
            path: path.to_path_buf(),
            message: format!("cannot sync the checkpoint's log: {e}"),
        })?;
        Ok(Checkpoint {
            path: path.to_path_buf(),
            db,
            log,
            chunks,
            results,
            finals,
        })
    }

    pub fn meta(&self) -> Result<Option<RunMeta>, CheckpointError> {
        match self.db.get(META_KEY).map_err(store_error(&self.path))? {
            None => Ok(None),
            Some(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| CheckpointError::Store {
                    path: self.path.clone(),
                    message: format!("run metadata: {e}"),
                }),
        }
    }

    pub fn put_meta(&self, meta: &RunMeta) -> Result<(), CheckpointError> {
        let bytes = serde_json::to_vec(meta).expect("metadata serialises");
        self.db.insert(META_KEY, bytes).map_err(store_error(&self.path))?;
        self.flush()
    }

    /// Every chunk record, by key.
    pub fn chunk_records(&self) -> Result<HashMap<ChunkKey, ChunkRecord>, CheckpointError> {
        let mut records = HashMap::new();
        for entry in self.chunks.iter() {
            let (key, value) = entry.map_err(store_error(&self.path))?;
            let (Some(key), Ok(record)) = (
                ChunkKey::from_bytes(&key),
                serde_json::from_slice::<ChunkRecord>(&value),
            ) else {
                return Err(CheckpointError::Store {
                    path: self.path.clone(),
                    message: "unreadable chunk record".into(),
                });
            };
            records.insert(key, record);
        }
        Ok(records)
    }

    /// The stored results of a chunk.
    pub fn results(&self, key: ChunkKey) -> Result<Option<Vec<RecipientResult>>, CheckpointError> {
        match self.results.get(key.to_bytes()).map_err(store_error(&self.path))? {
            None => Ok(None),
            Some(bytes) => serde_json::from_slice::<StoredResults>(&bytes)
                .map(|stored| Some(stored.decode()))
                .map_err(|e| CheckpointError::Store {
                    path: self.path.clone(),
                    message: format!("results of {key}: {e}"),
                }),
        }
    }

    /// How many of a done chunk's recipients got each status, accepted or not: the counts its
    /// record carries, or for an older record, its results counted.
    pub fn status_counts(&self, key: ChunkKey, record: &ChunkRecord) -> Result<Vec<StatusCount>, CheckpointError> {
        match &record.statuses {
            Some(counts) => Ok(counts.clone()),
            None => Ok(self.counted_results(key)?.unwrap_or_default()),
        }
    }

    /// A chunk's stored results counted by status (see [`StoredStatuses`]).
    fn counted_results(&self, key: ChunkKey) -> Result<Option<Vec<StatusCount>>, CheckpointError> {
        let unreadable = |message: String| CheckpointError::Store {
            path: self.path.clone(),
            message: format!("results of {key}: {message}"),
        };
        match self.results.get(key.to_bytes()).map_err(store_error(&self.path))? {
            None => Ok(None),
            Some(bytes) => serde_json::from_slice::<StoredStatuses>(&bytes)
                .map_err(|e| unreadable(e.to_string()))?
                .counts()
                .map(Some)
                .map_err(unreadable),
        }
    }

    /// Records chunks as in flight. Not durable until [`Checkpoint::flush`]: the caller flushes
    /// before any of their requests leaves, which is the promise that lets a crash be recognised
    /// as "maybe sent". Each record is one key, written by a plain insert (atomic on its own):
    /// a sled batch or transaction seals and writes sled's log buffer twice, each time through
    /// sled's thread pool, which on a run of chunks of 100 cost more than the request itself.
    pub fn record_in_flight(&self, chunks: &[(ChunkKey, ChunkRecord)]) -> Result<(), CheckpointError> {
        for (key, record) in chunks {
            let bytes = serde_json::to_vec(record).expect("record serialises");
            self.chunks
                .insert(key.to_bytes(), bytes)
                .map_err(store_error(&self.path))?;
        }
        Ok(())
    }

    /// Writes the results and `done` record of each chunk, all in one sled transaction (durable
    /// at the next flush): each chunk's two writes stay together, and chunks answered at about
    /// the same time share the cost of a transaction (sled seals and writes its log buffer twice
    /// for each one).
    pub fn complete(&self, completed: &[Completed]) -> Result<(), CheckpointError> {
        use sled::Transactional;
        let writes: Vec<([u8; 5], Vec<u8>, Vec<u8>)> = completed
            .iter()
            .map(|Completed { key, record, results }| {
                // The sender counts them already; a caller that did not is counted for here.
                let statuses = record
                    .statuses
                    .clone()
                    .unwrap_or_else(|| count_statuses(results.iter().map(|r| (r.status.as_str(), r.accepted))));
                let record = ChunkRecord {
                    statuses: Some(statuses),
                    ..record.clone()
                };
                (
                    key.to_bytes(),
                    serde_json::to_vec(&record).expect("record serialises"),
                    serde_json::to_vec(&StoredResults::encode(results)).expect("results serialise"),
                )
            })
            .collect();
        (&self.chunks, &self.results)
            .transaction(|(chunks, results)| {
                for (key, record, stored) in &writes {
                    chunks.insert(key, record.as_slice())?;
                    results.insert(key, stored.as_slice())?;
                }
                Ok::<(), sled::transaction::ConflictableTransactionError<()>>(())
            })
            .map_err(|e| CheckpointError::Store {
                path: self.path.clone(),
                message: format!("{e:?}"),
            })?;
        Ok(())
    }

    /// Forgets an in-flight mark for a request the service provably did not take (so the chunk is pending again).
    pub fn release(&self, key: ChunkKey) -> Result<(), CheckpointError> {
        self.chunks.remove(key.to_bytes()).map_err(store_error(&self.path))?;
        Ok(())
    }

    /// The final record of a gateway `id`, if collected.
    pub fn final_result(&self, id: &str) -> Result<Option<FinalResult>, CheckpointError> {
        match self.finals.get(id.as_bytes()).map_err(store_error(&self.path))? {
            None => Ok(None),
            Some(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| CheckpointError::Store {
                    path: self.path.clone(),
                    message: format!("final result of {id}: {e}"),
                }),
        }
    }

    /// Stores final records (durable at the next flush).
    pub fn put_finals(&self, finals: &[(String, FinalResult)]) -> Result<(), CheckpointError> {
        let mut batch = sled::Batch::default();
        for (id, record) in finals {
            batch.insert(id.as_bytes(), serde_json::to_vec(record).expect("final serialises"));
        }
        self.finals.apply_batch(batch).map_err(store_error(&self.path))
    }

    /// Puts everything written so far on stable storage: sled's flush, then `fdatasync` of its log.
    pub fn flush(&self) -> Result<(), CheckpointError> {
        self.db.flush().map_err(store_error(&self.path))?;
        self.log.sync_data().map_err(|e| CheckpointError::Store {
            path: self.path.clone(),
            message: format!("cannot sync the checkpoint: {e}"),
        })
    }
}

/// Opens sled's log file for syncing, and syncs the checkpoint folder once so that the log's
/// directory entry survives a power cut too.
fn durable_log(path: &Path) -> std::io::Result<std::fs::File> {
    let log = std::fs::File::open(path.join("db"))?;
    log.sync_all()?;
    for folder in [Some(path), path.parent().filter(|p| !p.as_os_str().is_empty())]
        .into_iter()
        .flatten()
    {
        std::fs::File::open(folder)?.sync_all()?;
    }
    Ok(log)
}

mod budget_limit;
#[cfg(test)]
mod tests;
