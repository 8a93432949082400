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
    /// The recipients gathered for a chunk are not the ones its identity counts: a fault of
    /// msgbatch itself, stopped before that chunk is sent.
    #[error("chunk {key}: {gathered} recipients gathered for {cut} cut (an internal error; nothing was sent for this chunk)")]
    Gathered { key: ChunkKey, gathered: usize, cut: u32 },
}

/// The recipients of a lane's chunk being cut; those of a chunk that will not be sent (done
/// before, or uncertain and not to be resent) are not kept.
#[derive(Default)]
struct Gathering {
    key: Option<ChunkKey>,
    keep: bool,
    recipients: Vec<Recipient>,
}

struct Feed {
    known: KnownChunks,
    resend_uncertain: bool,
    chunk_size: usize,
    gathering: BTreeMap<Lane, Gathering>,
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
}

/// Whether a chunk in this state in the checkpoint (none: never marked) is to be sent.
fn wanted(state: Option<ChunkState>, resend_uncertain: bool) -> bool {
    match state {
        None => true,
        Some(ChunkState::Done) => false,
        Some(ChunkState::InFlight) => resend_uncertain,
    }
}

impl plan::Visitor for Feed {
    type Error = FeedError;

    fn row(&mut self, row: PlannedRow) -> Result<(), FeedError> {
        let Some(slot) = &row.chunk else { return Ok(()) };
        let gathering = self.gathering.entry(slot.key.lane).or_default();
        if gathering.key != Some(slot.key) {
            gathering.key = Some(slot.key);
            gathering.keep = wanted(self.known.state(slot.key), self.resend_uncertain);
        }
        // Moved out of the planned row only when kept: a recipient is large, and on a resume most
        // rows belong to chunks already done.
        if gathering.keep {
            if let Fate::Valid(recipient) = row.fate {
                gathering.recipients.push(recipient);
            }
        }
        Ok(())
    }

    fn chunk(&mut self, key: ChunkKey, identity: ChunkIdentity) -> Result<(), FeedError> {
        let state = self.known.recognise(key, &identity)?.map(|record| record.state);
        let gathering = self.gathering.entry(key.lane).or_default();
        if !wanted(state, self.resend_uncertain) {
            gathering.recipients.clear();
            return Ok(());
        }
        let recipients = std::mem::replace(&mut gathering.recipients, Vec::with_capacity(self.chunk_size));
        // Gathering decides row by row what the chunk decides here; should they ever disagree,
        // nothing is sent rather than a chunk with other recipients than the identity says.
        if recipients.len() != identity.recipients as usize {
            return Err(FeedError::Gathered {
                key,
                gathered: recipients.len(),
                cut: identity.recipients,
            });
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
        chunk_size: campaign.send.chunk_size,
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
