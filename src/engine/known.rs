//! The chunks a checkpoint knows, recognised again in the plan: the check that refuses a chunk cut differently from the one that was sent.

use super::checkpoint::{ChunkKey, ChunkRecord, ChunkState};
use crate::plan::ChunkIdentity;
use std::collections::HashMap;

/// The chunks a checkpoint knows, checked one by one against the plan cut again: a chunk whose
/// first or last row, count or recipient digest differs is refused, and so is a chunk the input
/// no longer makes.
pub struct KnownChunks {
    records: HashMap<ChunkKey, ChunkRecord>,
    checked: std::collections::HashSet<ChunkKey>,
}

impl KnownChunks {
    pub fn new(records: HashMap<ChunkKey, ChunkRecord>) -> KnownChunks {
        KnownChunks {
            records,
            checked: Default::default(),
        }
    }

    /// The record of a chunk cut again, once its identity is checked; `None` for a chunk never marked.
    pub fn recognise(&mut self, key: ChunkKey, identity: &ChunkIdentity) -> Result<Option<&ChunkRecord>, Mismatch> {
        let Some(record) = self.records.get(&key) else {
            return Ok(None);
        };
        if let Some(difference) = identity.difference(&record.identity) {
            return Err(Mismatch(format!(
                "chunk {key} is not the chunk that was sent: {difference}"
            )));
        }
        self.checked.insert(key);
        Ok(Some(record))
    }

    /// The state the checkpoint holds for a chunk, before its identity is checked: what decides
    /// whether its recipients are worth gathering while it is cut.
    pub fn state(&self, key: ChunkKey) -> Option<ChunkState> {
        self.records.get(&key).map(|record| record.state)
    }

    /// Whether some known chunk has not been cut again yet.
    pub fn pending_checks(&self) -> bool {
        self.checked.len() < self.records.len()
    }

    /// After the whole input: the known chunks the plan no longer makes are a mismatch too.
    pub fn finish(&self) -> Result<(), Mismatch> {
        if !self.pending_checks() {
            return Ok(());
        }
        let mut missing: Vec<ChunkKey> = self
            .records
            .keys()
            .filter(|key| !self.checked.contains(key))
            .copied()
            .collect();
        missing.sort();
        let named: Vec<String> = missing.iter().take(5).map(ChunkKey::to_string).collect();
        Err(Mismatch(format!(
            "the input no longer makes {} chunk(s) the checkpoint knows ({}{})",
            missing.len(),
            named.join(", "),
            if missing.len() > 5 { ", ..." } else { "" }
        )))
    }

    pub fn records(&self) -> &HashMap<ChunkKey, ChunkRecord> {
        &self.records
    }
}

/// The plan cut again does not match what the checkpoint recorded.
#[derive(Debug, thiserror::Error)]
#[error("{0}: the rows are classified differently from when the run sent them (a changed input, or another msgbatch release)")]
pub struct Mismatch(pub String);
