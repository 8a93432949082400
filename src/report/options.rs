//! What `report` is asked to write besides report.csv, report.parquet and the summaries: the summary's language, a byte-order mark, the workbook, the raw CSV for programs.

use super::{xlsx, Lang};

/// What `report` writes besides report.csv, report.parquet and the summaries.
#[derive(Debug, Clone, Copy)]
pub struct ReportOptions {
    /// The language of summary.html.
    pub lang: Lang,
    /// report.csv starts with a UTF-8 byte-order mark (for Excel).
    pub csv_bom: bool,
    /// Whether report.xlsx is written too.
    pub xlsx: Workbook,
    /// Whether report.raw.csv is written too.
    pub raw_csv: RawCsv,
}

/// Whether `report` writes report.xlsx. Building it takes most of a large report's time (10 M
/// rows: about 50 of 60 s), for a workbook of ten sheets that Excel opens one at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Workbook {
    /// When the rows fit one sheet (1,048,575 rows under the header); otherwise it is left out,
    /// and the summary says so.
    #[default]
    WhenOneSheet,
    /// Always (`--xlsx`), on as many sheets as the rows need.
    Always,
    /// Never (`--no-xlsx`).
    Never,
}

impl Workbook {
    /// Whether a report of `rows` rows gets report.xlsx; when not by default, why.
    pub(super) fn decide(self, rows: u64) -> (bool, Option<String>) {
        let one_sheet = u64::from(xlsx::EXCEL_MAX_ROWS - 1);
        match self {
            Workbook::Always => (true, None),
            Workbook::Never => (false, None),
            Workbook::WhenOneSheet if rows <= one_sheet => (true, None),
            Workbook::WhenOneSheet => (
                false,
                Some(format!(
                    "report.xlsx is not written: {rows} rows do not fit one Excel sheet ({one_sheet}); report.csv and report.parquet hold them all, and --xlsx writes the workbook anyway, on several sheets"
                )),
            ),
        }
    }
}

/// Whether `report` also writes `report.raw.csv`: report.csv's rows with every cell as it is,
/// for programs that read CSV (`msgbatch report --raw-csv`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RawCsv {
    /// Not written; one an earlier report left is taken away (it would no longer match).
    #[default]
    Leave,
    Write,
}

/// The name of the CSV file for machines, beside report.csv.
pub const RAW_CSV_FILE: &str = "report.raw.csv";
