//! A run opened for reading its rows: the plan walked again and each row joined with what the checkpoint holds for it (each chunk recognised first), or a purged run's kept rows.

use super::row::{self, Pricing, Sent};
use super::{frozen, Outcome, ReportRow, Summary};
use crate::campaign::{Campaign, Kind, Lane};
use crate::engine::checkpoint::{Checkpoint, ChunkKey, ChunkRecord, RecipientResult, RunMeta};
use crate::engine::known::KnownChunks;
use crate::engine::{self, Refusal};
use crate::plan::{self, ChunkIdentity, Fate, PlannedRow, Recipient};
use anyhow::Result;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A run opened for reading its rows: the checkpoint, the campaign checked unchanged, and the
/// chunk records read meanwhile (for the first walk; a second one reads them again).
pub struct RunRows {
    checkpoint: Checkpoint,
    meta: RunMeta,
    campaign: Campaign,
    records: std::cell::Cell<Option<HashMap<ChunkKey, ChunkRecord>>>,
    /// A purged run's rows, read instead of the plan (its recipients are gone).
    frozen: Option<PathBuf>,
}

/// Walks the plan and joins each row with what the checkpoint holds for it.
struct Joiner<'a, F> {
    campaign: &'a Campaign,
    checkpoint: &'a Checkpoint,
    known: KnownChunks,
    pricing: Pricing,
    /// The results of the chunk each lane is in (by `Lane as usize`) and that chunk's index,
    /// loaded once per chunk: looked up for every row, so by index rather than by a hash of the
    /// lane.
    loaded: [(Option<u32>, Vec<RecipientResult>); Lane::ALL.len()],
    summary: Summary,
    on_row: F,
}

/// What `walk` hands over for each row.
pub struct Walked<'a> {
    /// Handed over, not lent: the report keeps every row in a batch for its file builders.
    pub row: ReportRow,
    /// The recipient, when the row was valid.
    pub recipient: Option<&'a Recipient>,
    /// When the service answered the row's request (epoch ms, its `date`), once it has.
    pub sent_at: Option<i64>,
}

impl<F: FnMut(Walked<'_>) -> Result<()>> Joiner<'_, F> {
    /// The row's report line, and when the service answered for it.
    fn sent_row(&mut self, planned: &PlannedRow) -> Result<(ReportRow, Option<i64>)> {
        let Some(slot) = planned.chunk else {
            return Ok((row::build(self.campaign, planned, None, &self.pricing), None));
        };
        let Some(record) = self.known.records().get(&slot.key) else {
            return Ok((row::build(self.campaign, planned, None, &self.pricing), None));
        };
        let (loaded_index, results) = &mut self.loaded[slot.key.lane as usize];
        if *loaded_index != Some(slot.key.index) {
            *results = self.checkpoint.results(slot.key)?.unwrap_or_default();
            *loaded_index = Some(slot.key.index);
        }
        let result = results.get(slot.position as usize);
        if let (Some(result), Fate::Valid(recipient)) = (result, &planned.fate) {
            anyhow::ensure!(
                result.row == recipient.row,
                "the checkpoint's results of chunk {} do not match the input at row {}",
                slot.key,
                recipient.row
            );
        }
        let final_record = match result {
            Some(result) if self.campaign.kind == Kind::GatewayAlimtalk && result.accepted => {
                let id = result.id.as_deref().unwrap_or_default();
                self.checkpoint
                    .final_result(id)?
                    .map(|found| (found.result, found.error_message))
            }
            _ => None,
        };
        let answered_at = result.map(|result| result.date);
        let sent = Sent {
            record,
            result,
            final_record,
        };
        let row = row::build(self.campaign, planned, Some(sent), &self.pricing);
        let sent_at = answered_at.filter(|_| matches!(row.outcome, Outcome::Answered { .. }));
        Ok((row, sent_at))
    }
}

impl<F: FnMut(Walked<'_>) -> Result<()>> plan::Visitor for Joiner<'_, F> {
    type Error = anyhow::Error;

    fn row(&mut self, planned: PlannedRow) -> Result<()> {
        let (row, sent_at) = self.sent_row(&planned)?;
        self.summary.tally(&row, sent_at);
        let recipient = match &planned.fate {
            Fate::Valid(recipient) => Some(recipient),
            _ => None,
        };
        (self.on_row)(Walked {
            row,
            recipient,
            sent_at,
        })
    }

    fn chunk(&mut self, key: ChunkKey, identity: ChunkIdentity) -> Result<()> {
        self.known.recognise(key, &identity)?;
        Ok(())
    }
}

impl RunRows {
    pub fn open(run_dir: &Path) -> Result<RunRows> {
        let checkpoint = Checkpoint::open(&crate::engine::checkpoint_dir(run_dir), false)?;
        let meta = checkpoint
            .meta()?
            .ok_or_else(|| Refusal(format!("{} holds no scan yet: nothing was sent", run_dir.display())))?;
        let campaign = Campaign::load(&meta.campaign_file)?;
        let (records, frozen) = if engine::is_purged(run_dir) {
            // Nothing left to check the chunks against: the purge kept them as they were.
            let rows = run_dir.join(engine::PURGED_DIR).join(frozen::FROZEN_ROWS);
            (checkpoint.chunk_records()?, Some(rows))
        } else {
            (engine::verified_chunk_records(&checkpoint, &campaign, &meta)?, None)
        };
        Ok(RunRows {
            checkpoint,
            meta,
            campaign,
            records: std::cell::Cell::new(Some(records)),
            frozen,
        })
    }

    /// The checkpoint the rows are read with.
    pub fn checkpoint(&self) -> &Checkpoint {
        &self.checkpoint
    }

    /// The run's meta record (its scan, its campaign file).
    pub fn meta(&self) -> &RunMeta {
        &self.meta
    }

    /// Whether the rows come from a purge (no recipient, no name, numbers masked).
    pub fn purged(&self) -> bool {
        self.frozen.is_some()
    }

    pub fn campaign(&self) -> &Campaign {
        &self.campaign
    }

    /// Every input row as a report line, in input order, with its recipient when it was valid;
    /// answers the summary of them all. Refuses when a chunk the checkpoint knows is not cut
    /// again the same: its rows would be joined with another chunk's results.
    pub fn walk(&self, mut on_row: impl FnMut(ReportRow, Option<&Recipient>) -> Result<()>) -> Result<Summary> {
        self.walk_sent(|walked| on_row(walked.row, walked.recipient))
    }

    /// As [`RunRows::walk`], with when each row's request was answered.
    pub fn walk_sent(&self, on_row: impl FnMut(Walked<'_>) -> Result<()>) -> Result<Summary> {
        // Read once: the status counts them, and the walk recognises each chunk against them.
        let records = match self.records.take() {
            Some(records) => records,
            None => self.checkpoint.chunk_records()?,
        };
        let summary = Summary {
            campaign: self.meta.campaign_file.clone(),
            campaign_name: self.campaign.name.clone(),
            kind: self.meta.kind.clone(),
            status: engine::status_from(&self.checkpoint, &self.meta, &records)?,
            prices_known: self.campaign.prices.is_some(),
            ..Summary::default()
        };
        if let Some(path) = &self.frozen {
            let mut summary = summary;
            let mut on_row = on_row;
            frozen::read(path, |row, sent_at| {
                summary.tally(&row, sent_at);
                on_row(Walked {
                    row,
                    recipient: None,
                    sent_at,
                })
            })?;
            return Ok(summary);
        }
        let mut joiner = Joiner {
            campaign: &self.campaign,
            checkpoint: &self.checkpoint,
            known: KnownChunks::new(records),
            pricing: Pricing::new(&self.campaign),
            loaded: Default::default(),
            summary,
            on_row,
        };
        plan::walk(&self.campaign, &mut joiner)?;
        joiner.known.finish()?;
        Ok(joiner.summary)
    }
}
