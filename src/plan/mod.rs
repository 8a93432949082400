//! The plan of the rows: the one rule "input row → fate → chunk and position" that every command walks.
//!
//! `walk` reads the recipients once, in input order, classifies each row (rejected, suppressed,
//! held back by the frequency cap, duplicate or valid in a lane), places every valid row in its chunk, and hands the visitor each
//! [`PlannedRow`] and each chunk as it closes, with the identity that recognises it again (a
//! visitor that only accounts has each row drafted where it was read and is handed only the rows
//! rejects.csv lists: `Visitor::every_row`).
//! Nothing else classifies a row, cuts a chunk or picks a billing class.

mod accounting;
pub mod billing;
pub mod capped;
pub mod chunks;
pub mod classify;
mod lane_rule;
pub mod phone_list;
mod rejection;

pub use accounting::{warnings, AdvertisingWarning, RejectsWriter, Scan};
pub use chunks::{ChunkIdentity, ChunkKey, ChunkSlot, Cutter};
pub use classify::{
    Classifier, Counted, Draft, DraftedRow, Drafter, Fate, Recipient, RejectReason, Rejection, RowRef, Screen, Settled,
};

use crate::campaign::Campaign;
use crate::input::{self, InputError, RawRow};
use rayon::prelude::*;
use std::path::PathBuf;

/// Rows read and classified per batch.
pub const BATCH_ROWS: usize = 16 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("the reader of {path} stopped unexpectedly: {message}")]
    ReaderPanicked { path: PathBuf, message: String },
}

/// One input row and what becomes of it. `chunk` is set exactly when the row is valid.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedRow {
    pub row: RowRef,
    pub fate: Fate,
    pub chunk: Option<ChunkSlot>,
}

/// What a command does with the plan as it is walked.
pub trait Visitor {
    type Error: From<PlanError>;

    /// Whether the chunks' identities need the digest of their recipients (`chunk` sees it).
    const DIGESTS: bool = true;

    /// Every input row, in input order.
    fn row(&mut self, row: PlannedRow) -> Result<(), Self::Error>;

    /// A chunk is complete: called right after the row that filled it, and at the end of the input
    /// for the chunks left partly filled.
    fn chunk(&mut self, _key: ChunkKey, _identity: ChunkIdentity) -> Result<(), Self::Error> {
        Ok(())
    }

    /// Whether `row` is to see every row. A visitor that only accounts answers false: each row is
    /// then drafted where it was read and kept no further, `listed` is handed the rows with a
    /// line in rejects.csv (rejected, held back by the frequency cap), and neither `row` nor
    /// `chunk` is called: building, handing over and dropping every row took about a third of
    /// `validate`'s CPU. (A campaign whose fallbacks are counted is walked row by row all the
    /// same: the count fills each valid row's text.) A visitor that answers false writes `listed`.
    fn every_row(&self) -> bool {
        true
    }

    /// A row with a line in rejects.csv, `row` its number, for a visitor that does not see every row.
    fn listed(&mut self, _row: u64, _fate: &Fate) -> Result<(), Self::Error> {
        Ok(())
    }

    /// A batch of this many rows was read (for progress).
    fn read(&mut self, _rows: u64) {}
}

/// Reads the whole input and walks every row through the plan. A reader thread feeds batches
/// through a bounded channel, so memory stays flat whatever the size. Answers the accounting.
pub fn walk<V: Visitor>(campaign: &Campaign, visitor: &mut V) -> Result<Scan, V::Error> {
    let Classifier { drafter, mut screen } = Classifier::new(campaign)?;
    let spec = Classifier::column_spec(campaign);
    let path = campaign.recipients.path.clone();
    let recipients = &campaign.recipients;
    let mut source = input::open_sheet(
        &path,
        recipients.format,
        recipients.encoding,
        recipients.sheet.as_deref(),
        &spec,
    )
    .map_err(PlanError::from)?;
    let mut scan = Scan {
        encoding: source.encoding().to_string(),
        suppression_entries: screen.suppression_entries(),
        opt_out_entries: screen.opt_out_entries(),
        capped_entries: screen.capped().map_or(0, |list| list.len() as u64),
        ..Scan::default()
    };
    let fallbacks = billing::FallbackCounter::new(campaign);
    let mut cutter = if V::DIGESTS {
        Cutter::new(campaign.send.chunk_size)
    } else {
        Cutter::without_digests(campaign.send.chunk_size)
    };
    let drafter = &drafter;
    // Counting the fallbacks fills each valid row's text, so it needs the row built.
    if !visitor.every_row() && !fallbacks.counts() {
        // Each row is drafted where it was read and only its draft comes here: nothing of it is
        // built, moved or dropped that the accounting does not need.
        in_background::<_, V::Error>(
            &path,
            |deliver| read_drafted(source.as_mut(), drafter, deliver),
            |batch: Vec<DraftedRow>| {
                let read = batch.len() as u64;
                for DraftedRow { row, draft } in batch {
                    match screen.settle_drafted(draft) {
                        Settled::Counted(counted) => scan.count(counted),
                        Settled::Listed(fate) => {
                            scan.count(fate.counted());
                            visitor.listed(row, &fate)?;
                        }
                    }
                }
                visitor.read(read);
                Ok(())
            },
        )?;
    } else {
        // The reader thread reads and drafts (the order-free part, on every core) while this
        // thread settles each drafted batch in input order and hands its rows to the visitor.
        in_background::<_, V::Error>(
            &path,
            |deliver| read_and_draft(source.as_mut(), drafter, deliver),
            |(mut batch, drafts): (Vec<RawRow>, Vec<Draft>)| {
                let read = batch.len() as u64;
                for (row, draft) in batch.iter_mut().zip(drafts) {
                    let mut planned = screen.settle_row(row, draft);
                    scan.count(planned.fate.counted());
                    let closed = match &planned.fate {
                        Fate::Valid(recipient) => {
                            fallbacks.count(campaign, recipient, &mut scan);
                            let (slot, closed) = cutter.place(recipient);
                            planned.chunk = Some(slot);
                            closed
                        }
                        _ => None,
                    };
                    visitor.row(planned)?;
                    if let Some((key, identity)) = closed {
                        visitor.chunk(key, identity)?;
                    }
                }
                visitor.read(read);
                Ok(())
            },
        )?;
    }
    scan.opted_out = screen.opted_out();
    for (key, identity) in cutter.finish() {
        visitor.chunk(key, identity)?;
    }
    scan.warnings = warnings(campaign);
    scan.estimated_charge = billing::estimate(campaign, &scan);
    scan.worst_case_charge = billing::worst_case(campaign, &scan);
    Ok(scan)
}

/// Runs `read` on a thread of its own, handing each batch it delivers (through a bounded channel)
/// to `take` on this thread, in order, until the batches end, `take` fails, or reading fails.
fn in_background<B: Send, E: From<PlanError>>(
    path: &std::path::Path,
    read: impl FnOnce(&mut dyn FnMut(B) -> bool) -> Result<(), InputError> + Send,
    mut take: impl FnMut(B) -> Result<(), E>,
) -> Result<(), E> {
    let (sender, receiver) = std::sync::mpsc::sync_channel::<Result<B, InputError>>(2);
    let (outcome, reader) = std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            let outcome = read(&mut |batch| sender.send(Ok(batch)).is_ok());
            if let Err(error) = outcome {
                let _ = sender.send(Err(error));
            }
        });
        let outcome = (|| -> Result<(), E> {
            for batch in receiver.iter() {
                take(batch.map_err(PlanError::from)?)?;
            }
            Ok(())
        })();
        drop(receiver);
        (outcome, reader.join())
    });
    // A reader that panicked sent no error: without this check its rows would silently be missing.
    if let Err(panic) = reader {
        let message = crate::contained::panic_message(panic.as_ref()).unwrap_or_else(|| "a panic".into());
        return Err(PlanError::ReaderPanicked {
            path: path.to_path_buf(),
            message,
        }
        .into());
    }
    outcome
}

/// Reads every row and drafts it where it was read, handing each batch of [`DraftedRow`]s to
/// `deliver` in input order until it answers false (see `Visitor::every_row`).
fn read_drafted(
    source: &mut dyn input::RowSource,
    drafter: &Drafter,
    deliver: &mut dyn FnMut(Vec<DraftedRow>) -> bool,
) -> Result<(), InputError> {
    match source.in_parallel() {
        Some(parallel) => parallel.read_each(|row| drafter.drafted(row), deliver),
        None => read_then(
            source,
            |batch| batch.par_iter().map(|row| drafter.drafted(row.view())).collect(),
            deliver,
        ),
    }
}

/// Reads every row and drafts it, handing each batch with its drafts to `deliver` in input order
/// until it answers false. A source read on every core (a large CSV file, Parquet) has each piece
/// drafted on the worker thread that made its rows (see `input::Parallel`).
fn read_and_draft(
    source: &mut dyn input::RowSource,
    drafter: &Drafter,
    deliver: &mut dyn FnMut((Vec<RawRow>, Vec<Draft>)) -> bool,
) -> Result<(), InputError> {
    match source.in_parallel() {
        Some(parallel) => parallel.read(|rows| drafter.draft_here(rows), |rows, drafts| deliver((rows, drafts))),
        None => read_then(
            source,
            |batch| {
                let drafts = drafter.draft(&batch);
                (batch, drafts)
            },
            deliver,
        ),
    }
}

/// For a source read one batch at a time (a spreadsheet, a small CSV file): one thread reads the
/// next batch while `made` (drafting, on every core) is made of the one before and handed to
/// `deliver`, in input order, until it answers false.
fn read_then<D>(
    source: &mut dyn input::RowSource,
    made: impl Fn(Vec<RawRow>) -> D,
    mut deliver: impl FnMut(D) -> bool,
) -> Result<(), InputError> {
    let (batches, read) = std::sync::mpsc::sync_channel::<Result<Vec<RawRow>, InputError>>(1);
    std::thread::scope(|scope| {
        scope.spawn(move || loop {
            let batch = source.next_batch(BATCH_ROWS).transpose();
            let last = !matches!(batch, Some(Ok(_)));
            if let Some(batch) = batch {
                if batches.send(batch).is_err() {
                    return;
                }
            }
            if last {
                return;
            }
        });
        for batch in read {
            if !deliver(made(batch?)) {
                return Ok(());
            }
        }
        Ok(())
    })
}

/// Walks the plan for its accounting, writing the rejected rows to `rejects`; `inspect`, when
/// given, sees every planned row on the way (for previews).
pub fn account(
    campaign: &Campaign,
    rejects: &std::path::Path,
    on_read: impl FnMut(u64),
    inspect: Option<&mut dyn FnMut(&PlannedRow)>,
) -> Result<Scan, PlanError> {
    struct Accountant<'a, 'i, F> {
        rejects: RejectsWriter,
        on_read: F,
        /// What sees every planned row, when something does (previews).
        inspect: Option<&'i mut dyn FnMut(&PlannedRow)>,
        phone_column: &'a str,
        cap: Option<capped::CapRule>,
        /// The line of each mark met so far: marks repeat (a few days, a few counts) and the
        /// rows held back may be half a list.
        capped_lines: std::collections::HashMap<capped::CapMark, Rejection>,
    }
    impl<F: FnMut(u64)> Visitor for Accountant<'_, '_, F> {
        type Error = PlanError;
        const DIGESTS: bool = false;
        fn every_row(&self) -> bool {
            self.inspect.is_some()
        }
        fn row(&mut self, row: PlannedRow) -> Result<(), PlanError> {
            if let Some(inspect) = &mut self.inspect {
                inspect(&row);
            }
            self.listed(row.row.row, &row.fate)
        }
        fn listed(&mut self, row: u64, fate: &Fate) -> Result<(), PlanError> {
            match fate {
                Fate::Rejected(rejection) => self.rejects.write(row, rejection),
                Fate::Capped(mark) => {
                    // How rejects.csv lists a row the frequency cap held back: the rule and the
                    // number's last send.
                    let (column, cap) = (self.phone_column, self.cap);
                    let line = self.capped_lines.entry(*mark).or_insert_with(|| Rejection {
                        reason: RejectReason::FrequencyCap,
                        column: column.to_string(),
                        detail: cap.map(|rule| rule.detail(*mark)).unwrap_or_default(),
                    });
                    self.rejects.write(row, line)
                }
                _ => Ok(()),
            }
        }
        fn read(&mut self, rows: u64) {
            (self.on_read)(rows)
        }
    }
    let cap = match campaign.frequency_capped_applied() {
        Some(path) => Some(capped::rule_of(path).map_err(|source| InputError::Open {
            path: path.to_path_buf(),
            source,
        })?),
        None => None,
    };
    let mut accountant = Accountant {
        rejects: RejectsWriter::create(rejects)?,
        on_read,
        inspect,
        phone_column: &campaign.recipients.phone_column,
        cap,
        capped_lines: std::collections::HashMap::new(),
    };
    let scan = walk(campaign, &mut accountant)?;
    accountant.rejects.finish()?;
    Ok(scan)
}
