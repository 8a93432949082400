//! Delivery reports: every input row joined with the checkpoint (CSV, Parquet and a workbook, owner-readable only) and a summary (JSON, Markdown, HTML).
//!
//! The rows come from the plan walked again; each chunk the checkpoint knows is checked against
//! the chunk cut again before its rows are trusted, and the files appear only when every row was.

mod csv_rows;
mod files;
pub mod frozen;
mod options;
mod parquet;
mod row;
mod run_rows;
mod summary;
pub(crate) mod xlsx;

pub(crate) use files::{csv_writer, Cell};
pub use files::{COLUMNS, UTF8_BOM};
pub use options::{RawCsv, ReportOptions, Workbook, RAW_CSV_FILE};
pub use row::{ChargeState, Outcome, ReportRow};
pub use run_rows::{RunRows, Walked};
pub(crate) use summary::escape;
pub use summary::{
    class_label, final_result_label, html as summary_html, kind_label, lane_label, reject_detail, reject_reason,
    status_label, won, Answers, Funnel, Lang, SendTimes,
};

use crate::api::ledger::BillingClass;
use crate::campaign::Lane;
use crate::engine;
use anyhow::{Context, Result};
use csv_rows::CellTexts;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The fields of [`ClassSummary`] as summary.json and statement.csv name them, in order.
pub const CLASS_TOTALS: [&str; 8] = [
    "charged",
    "charged_count",
    "refunded",
    "refunded_count",
    "provisional",
    "provisional_count",
    "disputed",
    "disputed_count",
];

/// Totals of one billing class.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ClassSummary {
    pub charged: i64,
    pub refunded: i64,
    pub provisional: i64,
    pub disputed: i64,
    pub charged_count: u64,
    pub refunded_count: u64,
    pub provisional_count: u64,
    pub disputed_count: u64,
}

impl ClassSummary {
    /// Adds other totals (another class's, day's or run's) to these.
    pub fn absorb(&mut self, other: &ClassSummary) {
        self.charged += other.charged;
        self.refunded += other.refunded;
        self.provisional += other.provisional;
        self.disputed += other.disputed;
        self.charged_count += other.charged_count;
        self.refunded_count += other.refunded_count;
        self.provisional_count += other.provisional_count;
        self.disputed_count += other.disputed_count;
    }

    /// What stays charged: the charges less the refunds.
    pub fn net(&self) -> i64 {
        self.charged - self.refunded
    }

    /// Whether some of the charges are still provisional or disputed, and so may change.
    pub fn unsettled(&self) -> bool {
        self.provisional > 0 || self.disputed > 0
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    pub campaign: PathBuf,
    pub campaign_name: String,
    pub kind: String,
    pub status: engine::Status,
    pub acceptance: BTreeMap<String, u64>,
    pub final_results: BTreeMap<String, u64>,
    pub charge_states: BTreeMap<ChargeState, u64>,
    pub classes: BTreeMap<BillingClass, ClassSummary>,
    pub prices_known: bool,
    pub files: Vec<PathBuf>,
    /// Why report.xlsx was left out by default (too many rows for one sheet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workbook_left_out: Option<String>,
    pub funnel: Funnel,
    pub lanes: BTreeMap<Lane, Funnel>,
    pub answers: Answers,
    pub sends: SendTimes,
}

/// Adds what a row was charged to the totals of its billing classes: its message, and the
/// fallback SMS/LMS the service sent for it. A class's `charged` counts every charge made,
/// including those later refunded, so that it compares with the ledger's charges, and
/// `refunded` its refunds.
pub fn add_charges(classes: &mut BTreeMap<BillingClass, ClassSummary>, row: &ReportRow) {
    if let (true, Some(class)) = (row.charge_state.billed(), row.billing_class) {
        let totals = classes.entry(class).or_default();
        let amount = row.amount.unwrap_or(0);
        totals.charged += amount;
        totals.charged_count += 1;
        let also = match row.charge_state {
            ChargeState::Refunded => Some((&mut totals.refunded, &mut totals.refunded_count)),
            ChargeState::Provisional => Some((&mut totals.provisional, &mut totals.provisional_count)),
            ChargeState::Disputed => Some((&mut totals.disputed, &mut totals.disputed_count)),
            _ => None,
        };
        if let Some((total, count)) = also {
            *total += amount;
            *count += 1;
        }
    }
    if let Some(class) = row.fallback {
        let totals = classes.entry(class).or_default();
        totals.charged += row.fallback_amount.unwrap_or(0);
        totals.charged_count += 1;
    }
}

impl Summary {
    /// Adds a row. A class's `charged` counts every charge made, including those later refunded,
    /// so that it compares with the ledger's charges, and `refunded` its refunds.
    fn tally(&mut self, row: &ReportRow, sent_at: Option<i64>) {
        self.count_for_people(row, sent_at);
        count_text(&mut self.acceptance, &row.outcome.bucket());
        if !row.final_result.is_empty() {
            count_text(&mut self.final_results, &row.final_result);
        }
        *self.charge_states.entry(row.charge_state).or_default() += 1;
        add_charges(&mut self.classes, row);
    }
}

/// Counts one more of `key`; the key is copied only the first time it comes (this is every row).
fn count_text(counts: &mut BTreeMap<String, u64>, key: &str) {
    match counts.get_mut(key) {
        Some(count) => *count += 1,
        None => {
            counts.insert(key.to_string(), 1);
        }
    }
}

/// A file written under a temporary name (owner-only) and put in place only when complete.
pub(crate) struct Staged {
    path: PathBuf,
    temporary: PathBuf,
}

impl Staged {
    pub fn new(path: PathBuf) -> Staged {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(".partial");
        Staged {
            temporary: path.with_file_name(name),
            path,
        }
    }

    pub fn create(&self) -> Result<std::fs::File> {
        crate::files::create_private(&self.temporary)
            .with_context(|| format!("cannot create {}", self.temporary.display()))
    }

    pub fn commit(self) -> Result<PathBuf> {
        std::fs::rename(&self.temporary, &self.path)
            .with_context(|| format!("cannot write {}", self.path.display()))?;
        Ok(self.path.clone())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.temporary);
    }
}

/// Rows handed to the report.csv, report.parquet and report.xlsx builders at a time.
const FILE_BATCH_ROWS: usize = 4096;

/// Batches a builder may have waiting (about 1 MB each). With 4, a builder that fell behind soon
/// stopped the walk, and with it the other builders and the input: at 10 M rows the two cores
/// stood idle 2.8–3.6 s of the report's 9.5–13 s; with 16, 1.0–1.4 s, for about 20 MB more.
const BATCHES_AHEAD: usize = 16;

/// Writes the report of a run: `report.csv` (after a UTF-8 byte-order mark with `csv_bom`, for
/// Excel; its formula-like texts marked for spreadsheets), `report.raw.csv` (with `raw_csv`:
/// every cell as it is, never a byte-order mark, for programs), `report.parquet`, `report.xlsx`
/// (unless `xlsx` is off), `summary.json`, `summary.md`, `summary.html` (in `lang`).
pub fn write(run_dir: &Path, out: Option<&Path>, options: &ReportOptions) -> Result<Summary> {
    write_seeing(run_dir, out, options, |_| {})
}

/// [`write`], with `see` shown every row on the way (so that a caller needing the rows too,
/// the frequency cap's history, does not walk the run a second time).
pub fn write_seeing(
    run_dir: &Path,
    out: Option<&Path>,
    options: &ReportOptions,
    mut see: impl FnMut(&Walked<'_>),
) -> Result<Summary> {
    let ReportOptions {
        lang,
        csv_bom,
        xlsx,
        raw_csv,
    } = *options;
    let rows = RunRows::open(run_dir)?;
    let (xlsx, workbook_left_out) = xlsx.decide(rows.meta().scan.rows);
    let out = out.map(Path::to_path_buf).unwrap_or_else(|| run_dir.to_path_buf());
    crate::files::create_private_dir(&out)?;
    let csv_file = Staged::new(out.join("report.csv"));
    let raw_csv_file = Staged::new(out.join(RAW_CSV_FILE));
    let parquet_file = Staged::new(out.join("report.parquet"));
    let xlsx_file = Staged::new(out.join("report.xlsx"));
    let mut csv_rows = csv_rows::CsvRows::create(csv_file.create()?, csv_bom, CellTexts::SpreadsheetSafe)?;
    let mut raw_csv_rows = match raw_csv {
        RawCsv::Write => Some(csv_rows::CsvRows::create(
            raw_csv_file.create()?,
            false,
            CellTexts::AsTheyAre,
        )?),
        RawCsv::Leave => None,
    };
    let mut parquet = parquet::ParquetSink::create(parquet_file.create()?)?;
    let workbook = if xlsx {
        Some(xlsx::RowsWorkbook::new(&out)?)
    } else {
        None
    };
    // report.csv, report.parquet and report.xlsx are each built on their own thread, fed the rows
    // in shared batches, while this thread walks the plan and joins each row with its results (the
    // workbook's cells alone cost as much as the rest together). The workbook's Summary sheet
    // comes once the walk is done.
    type Batch = std::sync::Arc<Vec<ReportRow>>;
    let (to_csv, csv_batches) = std::sync::mpsc::sync_channel::<Batch>(BATCHES_AHEAD);
    let (to_parquet, parquet_batches) = std::sync::mpsc::sync_channel::<Batch>(BATCHES_AHEAD);
    let (to_workbook, workbook_batches) = std::sync::mpsc::sync_channel::<Batch>(BATCHES_AHEAD);
    let (summary_out, summary_in) = std::sync::mpsc::sync_channel::<Summary>(1);
    let xlsx_target = if xlsx { Some(xlsx_file.create()?) } else { None };
    let (walked, csv_built, parquet_built, workbook_built) = std::thread::scope(|scope| {
        // report.raw.csv, when asked for, is written by the same thread from the same batches.
        let csv_builder = scope.spawn(move || -> Result<()> {
            let written = (|| -> std::io::Result<()> {
                for batch in csv_batches {
                    for row in batch.iter() {
                        csv_rows.push(row)?;
                        if let Some(raw) = raw_csv_rows.as_mut() {
                            raw.push(row)?;
                        }
                    }
                }
                csv_rows.finish()?;
                if let Some(raw) = raw_csv_rows {
                    raw.finish()?;
                }
                Ok(())
            })();
            written.context("cannot write report.csv")
        });
        let parquet_builder = scope.spawn(move || -> Result<()> {
            let written = (|| {
                for batch in parquet_batches {
                    parquet.push(&batch)?;
                }
                parquet.finish()
            })();
            written.context("cannot write report.parquet")
        });
        let workbook_builder = scope.spawn(move || -> Result<()> {
            let (Some(mut workbook), Some(xlsx_target)) = (workbook, xlsx_target) else {
                return Ok(());
            };
            // rust_xlsxwriter's streamed sheets panic when a write fails (a full disk).
            crate::contained::contain("cannot write report.xlsx", || {
                for batch in workbook_batches {
                    for row in batch.iter() {
                        workbook.push(row)?;
                    }
                }
                // No summary: the walk failed, and the report is not written.
                let Ok(summary) = summary_in.recv() else {
                    return Ok(());
                };
                workbook.finish(&summary, xlsx_target)
            })
        });
        let walked = (|| -> Result<Summary> {
            let mut batch = Vec::with_capacity(FILE_BATCH_ROWS);
            let mut builders = vec![to_csv, to_parquet];
            if xlsx {
                builders.push(to_workbook);
            }
            // A builder that stopped has its error to tell, below: a failed send is not the error.
            let hand_on = |batch: Vec<ReportRow>| {
                let batch: Batch = std::sync::Arc::new(batch);
                for builder in &builders {
                    let _ = builder.send(batch.clone());
                }
            };
            let summary = rows.walk_sent(|walked| {
                see(&walked);
                batch.push(walked.row);
                if batch.len() == FILE_BATCH_ROWS {
                    hand_on(std::mem::replace(&mut batch, Vec::with_capacity(FILE_BATCH_ROWS)));
                }
                Ok(())
            })?;
            hand_on(batch);
            drop(builders);
            let _ = summary_out.send(summary.clone());
            Ok(summary)
        })();
        drop(summary_out);
        (
            walked,
            csv_builder.join(),
            parquet_builder.join(),
            workbook_builder.join(),
        )
    });
    let mut summary = walked?;
    let built = [
        ("report.csv", csv_built),
        ("report.parquet", parquet_built),
        ("report.xlsx", workbook_built),
    ];
    for (file, built) in built {
        match built {
            Ok(built) => built?,
            Err(_) => anyhow::bail!("the {file} builder stopped unexpectedly"),
        }
    }
    summary.workbook_left_out = workbook_left_out;
    summary.files = vec![csv_file.commit()?];
    match raw_csv {
        RawCsv::Write => summary.files.push(raw_csv_file.commit()?),
        RawCsv::Leave => remove_earlier(&out.join(RAW_CSV_FILE))?,
    }
    summary.files.push(parquet_file.commit()?);
    if xlsx {
        summary.files.push(xlsx_file.commit()?);
    } else {
        // A workbook left by an earlier report would no longer match the files beside it.
        remove_earlier(&out.join("report.xlsx"))?;
    }
    for (name, body) in [
        ("summary.json", serde_json::to_string_pretty(&summary)?),
        ("summary.md", summary::markdown(&summary)),
        ("summary.html", summary::html(&summary, lang)),
    ] {
        let file = Staged::new(out.join(name));
        file.create()?
            .write_all(body.as_bytes())
            .with_context(|| format!("cannot write {}", file.temporary.display()))?;
        summary.files.push(file.commit()?);
    }
    Ok(summary)
}

/// Takes away a file an earlier report left and this one does not write: it would no longer
/// match the files beside it.
fn remove_earlier(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            Err(error).context(format!("cannot remove the earlier {name}"))
        }
        _ => Ok(()),
    }
}

/// A valid SMS row that was charged `amount`, for tests of what is built from rows.
#[cfg(test)]
pub(crate) fn charged_row(row: u64, phone: &str, amount: i64) -> ReportRow {
    ReportRow {
        row,
        phone: phone.into(),
        name: Default::default(),
        kind: crate::campaign::Kind::Sms,
        lane: Some(Lane::Sms),
        chunk: Some(0),
        uid: (1000 + row).to_string().into(),
        id: Default::default(),
        send_group_id: Default::default(),
        outcome: Outcome::Answered {
            status: "SMS_00".into(),
            accepted: true,
        },
        final_result: "SMS_00".into(),
        error: Default::default(),
        billing_class: Some(BillingClass::Sms),
        charge_state: ChargeState::Charged,
        amount: Some(amount),
        fallback: None,
        fallback_amount: None,
    }
}

#[cfg(test)]
mod tests {
    use super::Workbook;

    #[test]
    fn the_workbook_is_written_by_default_only_when_the_rows_fit_one_sheet() {
        let one_sheet = 1_048_575;
        assert_eq!(Workbook::WhenOneSheet.decide(one_sheet), (true, None));
        let (written, why) = Workbook::WhenOneSheet.decide(one_sheet + 1);
        assert!(!written);
        assert!(why.expect("a reason").contains("--xlsx"));
        assert_eq!(Workbook::Always.decide(10_000_000), (true, None));
        assert_eq!(Workbook::Never.decide(10), (false, None));
    }
}
