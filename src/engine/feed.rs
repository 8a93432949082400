//! Feeding the senders from the plan: each chunk as the plan closes it, checked against the checkpoint, then skipped, held or handed on.
//!
//! A chunk the checkpoint knows must be cut again exactly as it was (first and last row, count,
//! recipient digest). Until every known chunk has been checked, the chunks to send are held back,
//! so that a mismatch found late in the input refuses the resume before anything is sent.

use super::checkpoint::{ChunkKey, ChunkRecord, ChunkState};
use super::known::{KnownChunks, Mismatch};
use crate::campaign::Lane;
use crate::plan::{self, ChunkIdentity, Fate, PlanError, PlannedRow, Recipient};
use std::collections::{BTreeMap, HashMap};
use tokio::sync::mpsc;

/// A chunk ready to send.
pub(super) struct Chunk {
    pub key: ChunkKey,
    pub identity: ChunkIdentity,
    pub recipients: Vec<Recipient>,
    /// Marked in flight by an earlier process and sent again (`--resend-uncertain`).
    pub was_uncertain: bool,
}

/// Why the feed stopped early.
#[derive(Debug, thiserror::Error)]
pub(super) enum FeedError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Mismatch(#[from] Mismatch),
    /// The senders stopped taking chunks (Ctrl-C or a fatal error).
    #[error("stopped")]
    Stopped,
}

struct Feed {
    known: KnownChunks,
    resend_uncertain: bool,
    gathering: BTreeMap<Lane, Vec<Recipient>>,
    held: Vec<Chunk>,
    chunks: mpsc::Sender<Chunk>,
}

impl Feed {
    fn hand_on(&mut self, chunk: Chunk) -> Result<(), FeedError> {
        if self.known.pending_checks() {
            self.held.push(chunk);
            return Ok(());
        }
        for held in std::mem::take(&mut self.held) {
            self.chunks.blocking_send(held).map_err(|_| FeedError::Stopped)?;
        }
        self.chunks.blocking_send(chunk).map_err(|_| FeedError::Stopped)
    }

    fn wanted(&self, state: Option<ChunkState>) -> bool {
        match state {
            None => true,
            Some(ChunkState::Done) => false,
            Some(ChunkState::InFlight) => self.resend_uncertain,
        }
    }
}

impl plan::Visitor for Feed {
    type Error = FeedError;

    fn row(&mut self, row: PlannedRow) -> Result<(), FeedError> {
        if let Fate::Valid(recipient) = row.fate {
            self.gathering.entry(recipient.lane).or_default().push(recipient);
        }
        Ok(())
    }

    fn chunk(&mut self, key: ChunkKey, identity: ChunkIdentity) -> Result<(), FeedError> {
        let recipients = std::mem::take(self.gathering.entry(key.lane).or_default());
        let state = self.known.recognise(key, &identity)?.map(|record| record.state);
        if !self.wanted(state) {
            return Ok(());
        }
        self.hand_on(Chunk {
            key,
            identity,
            recipients,
            was_uncertain: state == Some(ChunkState::InFlight),
        })
    }
}

/// Walks the plan and hands every chunk still to send to `chunks`, in plan order.
pub(super) fn feed(
    campaign: &crate::campaign::Campaign,
    known: HashMap<ChunkKey, ChunkRecord>,
    resend_uncertain: bool,
    chunks: mpsc::Sender<Chunk>,
) -> Result<(), FeedError> {
    let mut feed = Feed {
        known: KnownChunks::new(known),
        resend_uncertain,
        gathering: BTreeMap::new(),
        held: Vec::new(),
        chunks,
    };
    plan::walk(campaign, &mut feed)?;
    feed.known.finish()?;
    for held in std::mem::take(&mut feed.held) {
        feed.chunks.blocking_send(held).map_err(|_| FeedError::Stopped)?;
    }
    Ok(())
}
