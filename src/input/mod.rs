//! Reading recipients: CSV (UTF-8 or CP949), Parquet and spreadsheets (Excel, ODS), handed out in bounded batches of raw rows.
//!
//! The promise kept here: every record of the file comes out as one `RawRow` (or, to a plan that
//! only accounts, one `RowView` borrowing its texts), in order, or the whole file is refused with
//! an `InputError` naming the file (and the row and column when there is one). A row that is a
//! record but cannot be read carries why in `unreadable`, and the plan rejects it with that reason.

mod csv_blocks;
mod csv_source;
mod decode;
mod excel_source;
mod ordered;
mod parquet_footer;
mod parquet_gzip;
mod parquet_mend;
mod parquet_source;
mod parquet_types;
pub mod phone_set;
mod plain_lines;
mod raw_record;
mod record_window;
mod sheet_markup;
mod thrift_compact;
mod xls_biff;

use crate::campaign::{Encoding, InputFormat};
pub use csv_blocks::BlockedCsv;
pub use excel_source::{cell_text, CellProblem};
use std::path::{Path, PathBuf};

/// The row number a spreadsheet program shows beside the sheet's row `index`, counted from 0 (the
/// sheet's first line, whatever it holds). The one rule of row numbers: every reader numbers its
/// rows through it (a spreadsheet by its own rows, a CSV or Parquet file by [`record_row`]), so the
/// same person has the same number in a reject, report.csv, a preview, a test send's `--rows` and
/// in Excel or LibreOffice, whatever the file's format. A row number is part of a chunk's identity
/// (`plan::chunks`): changing this rule changes the checkpoint's format version.
pub const fn sheet_row(index: u64) -> u64 {
    index + 1
}

/// The row number of a file's data record `index`, counted from 0, in a file whose first record
/// is its header (a CSV file; a Parquet file is numbered as if its column names were one): the
/// header is the sheet's row 1, so data record 0 is row 2. A record is counted once however many
/// lines it spans (a quoted line break is a line break within one cell); a line with nothing on
/// it is no record, as for the csv crate (a spreadsheet exporting a blank row writes its commas).
pub const fn record_row(index: u64) -> u64 {
    sheet_row(index + 1)
}

/// A field's text as read. Most values of a recipient list (a phone number, a name, a code, a
/// date) fit in its 24 bytes and need no allocation of their own: rows are made on one thread and
/// dropped on another, and allocating and freeing several fields a row cost more than parsing them.
pub type FieldText = compact_str::CompactString;
/// `text` as a [`FieldText`], made the same way whatever its length. A short text is copied with
/// its length known to the compiler: the general copy (a call to `memcpy` of a variable length,
/// whose small stores the buffer's word reads then wait on) took half of making a row.
#[inline]
pub fn field_text(text: &str) -> FieldText {
    macro_rules! of_length {
        ($($length:literal)*) => {
            match text.len() {
                $($length => FieldText::from(&text[..$length]),)*
                _ => FieldText::from(text),
            }
        };
    }
    of_length!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24)
}
/// The variables' values of a row, in the campaign's order. Three are held inline, as most
/// campaigns have at most that many; a fourth moves them to the heap. Rows are moved several times
/// on their way through the plan, so more room inline costs every row.
pub type FieldValues = smallvec::SmallVec<[Option<FieldText>; 3]>;

/// One input row as read: the mapped columns only, each text a `T`: owned ([`RawRow`], what
/// readers hand out) or borrowed from where it was read ([`RowView`], what a plan that only
/// accounts classifies, keeping none of it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row<T> {
    /// The number a spreadsheet program shows beside the row, increasing through the file (see
    /// [`sheet_row`], the one rule every reader numbers by): header on row 1, so the first
    /// recipient is row 2, whether the file is CSV, Parquet, .xlsx, .xls or .ods.
    pub row: u64,
    pub phone: Option<T>,
    pub name: Option<T>,
    /// The variables' values in the campaign's order (see [`FieldValues`]).
    pub vars: smallvec::SmallVec<[Option<T>; 3]>,
    /// Why the row cannot be read, when it cannot; its values are then not to be trusted. Boxed:
    /// rare, and every row is moved between threads, so its size costs every row.
    pub unreadable: Option<Box<Unreadable>>,
}

/// A row with its texts its own.
pub type RawRow = Row<FieldText>;

/// A row with its texts borrowed from where they were read (a block of the file, or a [`RawRow`]).
pub type RowView<'a> = Row<&'a str>;

impl RawRow {
    /// The row's texts borrowed.
    pub fn view(&self) -> RowView<'_> {
        RowView {
            row: self.row,
            phone: self.phone.as_deref(),
            name: self.name.as_deref(),
            vars: self.vars.iter().map(|value| value.as_deref()).collect(),
            unreadable: self.unreadable.clone(),
        }
    }
}

/// What a reader makes of each row that is numbered in its piece of the file before it knows how
/// many rows came before the piece (a block of a CSV file read on every core).
pub trait Numbered {
    /// The row number shifted by the rows before the piece (`record_row(k) + n` is `record_row(k + n)`).
    fn shift_row(&mut self, rows_before: u64);
}

impl<T> Numbered for Row<T> {
    fn shift_row(&mut self, rows_before: u64) {
        self.row += rows_before;
    }
}

/// Why a record of the file cannot be read as a row.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    /// More or fewer fields than the header: the values may sit under the wrong columns.
    #[error("{fields} fields, the header has {expected}")]
    Ragged {
        fields: usize,
        expected: usize,
        /// The first column missing, or the first position beyond the header.
        column: String,
    },
    /// Bytes that are not text in the file's encoding, a NUL, or a value with no text form.
    #[error("{detail}")]
    NotText { column: String, detail: String },
    /// A field longer than the field-size cap.
    #[error("{bytes} bytes, over the field-size cap of {limit} ({MAX_FIELD_BYTES_VAR})")]
    FieldTooLarge { column: String, bytes: usize, limit: usize },
    /// A spreadsheet cell holding an error (`#N/A`), or a formula saved without its value.
    #[error("{detail}")]
    CellError { column: String, detail: String },
    /// A number with a fraction where the phone number is: its digits would make a number no one wrote.
    #[error("the number {value} has a fraction: not a phone number")]
    PhoneFraction { column: String, value: String },
}

impl Unreadable {
    /// The column the reject names.
    pub fn column(&self) -> &str {
        match self {
            Unreadable::Ragged { column, .. }
            | Unreadable::NotText { column, .. }
            | Unreadable::FieldTooLarge { column, .. }
            | Unreadable::CellError { column, .. }
            | Unreadable::PhoneFraction { column, .. } => column,
        }
    }
}

/// Which columns to read.
#[derive(Debug, Clone)]
pub struct ColumnSpec {
    pub phone: String,
    pub name: Option<String>,
    pub vars: Vec<String>,
}

/// Why a whole file is refused (or, for `Read`, why reading it failed part-way).
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {path}: {source}")]
    Open { path: PathBuf, source: std::io::Error },
    #[error("{path}: column {column:?} is not in the file (columns: {available})")]
    MissingColumn {
        path: PathBuf,
        column: String,
        available: String,
    },
    #[error("{path}: column {column:?} appears twice in the header (columns {first} and {second}): which one is meant is ambiguous")]
    AmbiguousColumn {
        path: PathBuf,
        column: String,
        first: usize,
        second: usize,
    },
    #[error("{path}: column {column:?} has type {type_name}, which is not one text value per row; supported: text, binary holding UTF-8, integers, decimals, floats, booleans, dates, timestamps, times and durations")]
    UnsupportedType {
        path: PathBuf,
        column: String,
        type_name: String,
    },
    #[error("{path}: row {row} (line {line}), column {column:?}: {problem}")]
    UnbalancedQuote {
        path: PathBuf,
        row: u64,
        line: u64,
        column: String,
        problem: String,
    },
    #[error("{path}: row {row} (line {line}), column {column:?}: a field runs past {limit} bytes without ending ({cause}); {MAX_FIELD_BYTES_VAR} sets the cap")]
    FieldTooLarge {
        path: PathBuf,
        row: u64,
        line: u64,
        column: String,
        limit: usize,
        cause: &'static str,
    },
    #[error("{path}: the first line runs past {limit} bytes without ending: is this a CSV file?")]
    HeaderTooLong { path: PathBuf, limit: usize },
    #[error("{variable}={value:?} is not a number of bytes above 0")]
    BadLimit { variable: &'static str, value: String },
    #[error("{path}: row {row}: {message}")]
    Malformed { path: PathBuf, row: u64, message: String },
    #[error("{path}: not a readable Parquet file: {message}")]
    Parquet { path: PathBuf, message: String },
    #[error("{path}: not a readable spreadsheet: {message}")]
    Spreadsheet { path: PathBuf, message: String },
    #[error("{path}: `recipients.sheet`: no sheet is named {sheet:?} (sheets: {available})")]
    UnknownSheet {
        path: PathBuf,
        sheet: String,
        available: String,
    },
    /// The file could be opened but reading it failed part-way (an I/O error, not its content).
    #[error("{path}: reading failed at row {row}: {source}")]
    Read {
        path: PathBuf,
        row: u64,
        source: std::io::Error,
    },
}

/// The environment variable that sets the CSV field-size cap, in bytes.
pub const MAX_FIELD_BYTES_VAR: &str = "MSGBATCH_MAX_FIELD_BYTES";
/// The CSV field-size cap when the environment does not set one: far above any name, number or
/// message variable, far below what a runaway quote or a binary file would make of a field.
pub const DEFAULT_MAX_FIELD_BYTES: usize = 256 * 1024;

/// The CSV field-size cap: `MSGBATCH_MAX_FIELD_BYTES`, else the default.
pub fn max_field_bytes() -> Result<usize, InputError> {
    match std::env::var(MAX_FIELD_BYTES_VAR) {
        Err(_) => Ok(DEFAULT_MAX_FIELD_BYTES),
        Ok(value) => match value.trim().parse::<usize>() {
            Ok(bytes) if bytes > 0 => Ok(bytes),
            _ => Err(InputError::BadLimit {
                variable: MAX_FIELD_BYTES_VAR,
                value,
            }),
        },
    }
}

/// A source of raw rows, read a batch at a time.
pub trait RowSource: Send {
    /// Up to `max` rows, or `None` at the end.
    fn next_batch(&mut self, max: usize) -> Result<Option<Vec<RawRow>>, InputError>;
    /// The encoding the rows were decoded from, for the report.
    fn encoding(&self) -> &'static str;
    /// A source whose rows are made on every core (a large CSV file, Parquet), for a caller
    /// that does more with each piece's rows on the thread that made them.
    fn in_parallel(&mut self) -> Option<Parallel<'_>> {
        None
    }
}

/// A source read on every core (see [`RowSource::in_parallel`]).
pub enum Parallel<'a> {
    Csv(&'a mut BlockedCsv),
    Parquet(&'a mut parquet_source::ParquetRows),
}

impl Parallel<'_> {
    /// Reads every row, with `with_each` run on each piece's rows on the thread that made them;
    /// hands each piece's rows, numbered in the file, and what `with_each` made of them to
    /// `deliver` in file order, until it answers false.
    pub fn read<D: Send>(
        self,
        with_each: impl Fn(&[RawRow]) -> D + Sync,
        deliver: impl FnMut(Vec<RawRow>, D) -> bool,
    ) -> Result<(), InputError> {
        match self {
            Parallel::Csv(blocked) => blocked.read_parallel(with_each, deliver),
            Parallel::Parquet(parquet) => parquet.read_parallel(with_each, deliver),
        }
    }

    /// Reads every row, handing `deliver` only what `each` made of each row on the thread that
    /// read it, a piece at a time in file order, until it answers false. A CSV block's rows are
    /// never copied out of it (see [`RowView`]).
    pub fn read_each<T: Numbered + Send>(
        self,
        each: impl Fn(RowView<'_>) -> T + Sync,
        mut deliver: impl FnMut(Vec<T>) -> bool,
    ) -> Result<(), InputError> {
        match self {
            Parallel::Csv(blocked) => blocked.read_each(each, deliver),
            Parallel::Parquet(parquet) => parquet.read_parallel(
                |rows| rows.iter().map(|row| each(row.view())).collect::<Vec<T>>(),
                |_, made| deliver(made),
            ),
        }
    }
}

/// The top-level column names of a Parquet file, read from its footer alone (the console's
/// column lists); `None` when the file is not readable Parquet (the check then names why).
pub fn parquet_column_names(path: &Path) -> Option<Vec<String>> {
    let footer = parquet_footer::Footer::read(path).ok()?;
    let columns = footer.columns().ok()?;
    Some(columns.into_iter().map(|column| column.name).collect())
}

/// Opens `path` as `format` (a spreadsheet at its first sheet), checking the columns exist (and,
/// for Parquet, that their types are readable).
pub fn open(
    path: &Path,
    format: InputFormat,
    encoding: Encoding,
    columns: &ColumnSpec,
) -> Result<Box<dyn RowSource>, InputError> {
    open_sheet(path, format, encoding, None, columns)
}

/// As `open`, reading the spreadsheet's `sheet` when one is named (see `recipients.sheet`).
pub fn open_sheet(
    path: &Path,
    format: InputFormat,
    encoding: Encoding,
    sheet: Option<&str>,
    columns: &ColumnSpec,
) -> Result<Box<dyn RowSource>, InputError> {
    match format {
        InputFormat::Csv => open_csv(path, encoding, columns, max_field_bytes()?),
        InputFormat::Parquet => Ok(Box::new(parquet_source::ParquetRows::open(path, columns)?)),
        InputFormat::Xlsx | InputFormat::Xls | InputFormat::Ods => {
            Ok(Box::new(excel_source::SheetRows::open(path, format, sheet, columns)?))
        }
    }
}

/// Opens a CSV file with the field-size cap given (`open` takes it from the environment).
pub fn open_csv(
    path: &Path,
    encoding: Encoding,
    columns: &ColumnSpec,
    max_field_bytes: usize,
) -> Result<Box<dyn RowSource>, InputError> {
    open_csv_in_blocks(path, encoding, columns, max_field_bytes, csv_block_bytes())
}

/// As [`open_csv`], reading a file of at least two blocks of `block_bytes` on every core.
pub fn open_csv_in_blocks(
    path: &Path,
    encoding: Encoding,
    columns: &ColumnSpec,
    max_field_bytes: usize,
    block_bytes: usize,
) -> Result<Box<dyn RowSource>, InputError> {
    if let Some(blocked) = csv_blocks::open(path, encoding, columns, max_field_bytes, block_bytes.max(1))? {
        return Ok(Box::new(blocked));
    }
    Ok(Box::new(csv_source::CsvRows::open(
        path,
        encoding,
        columns,
        max_field_bytes,
    )?))
}

/// The size of the blocks a large CSV file is read in: `MSGBATCH_CSV_BLOCK_BYTES`, else 256 KiB.
fn csv_block_bytes() -> usize {
    std::env::var(csv_blocks::BLOCK_BYTES_VAR)
        .ok()
        .and_then(|value| value.trim().parse::<usize>().ok())
        .filter(|&bytes| bytes > 0)
        .unwrap_or(csv_blocks::DEFAULT_BLOCK_BYTES)
}

/// Why a text value cannot go into a message, if it cannot: a NUL would reach the handset.
fn text_problem(text: &str) -> Option<&'static str> {
    text.contains('\0').then_some("contains a NUL byte")
}

/// A header as an error message lists it: as written, or quoted and escaped when it holds a line
/// break or another control character (a spreadsheet's wrapped header), so the message stays one
/// line.
fn shown(header: &str) -> std::borrow::Cow<'_, str> {
    if header.chars().any(char::is_control) {
        std::borrow::Cow::Owned(format!("{header:?}"))
    } else {
        std::borrow::Cow::Borrowed(header)
    }
}

/// Positions of the wanted columns among `headers` (phone, name, then variables). A wanted
/// column that appears twice is refused: reading either could send the wrong value.
fn locate(
    path: &Path,
    headers: &[String],
    columns: &ColumnSpec,
) -> Result<(usize, Option<usize>, Vec<usize>), InputError> {
    let find = |name: &str| {
        let mut matching = headers
            .iter()
            .enumerate()
            .filter(|(_, h)| h.trim() == name.trim())
            .map(|(index, _)| index);
        let first = matching.next().ok_or_else(|| InputError::MissingColumn {
            path: path.to_path_buf(),
            column: name.to_string(),
            available: headers
                .iter()
                .map(|header| shown(header))
                .collect::<Vec<_>>()
                .join(", "),
        })?;
        match matching.next() {
            None => Ok(first),
            Some(second) => Err(InputError::AmbiguousColumn {
                path: path.to_path_buf(),
                column: name.to_string(),
                first: first + 1,
                second: second + 1,
            }),
        }
    };
    let phone = find(&columns.phone)?;
    let name = columns.name.as_deref().map(find).transpose()?;
    let vars = columns.vars.iter().map(|v| find(v)).collect::<Result<_, _>>()?;
    Ok((phone, name, vars))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// However long the text, and whatever it holds, `field_text` makes what the general copy makes.
        #[test]
        fn a_field_text_is_its_text_at_every_length(
            text in prop_oneof!["[a-z0-9-]{0,26}", "[가-힣a-z]{0,10}", "\\PC{0,30}"]
        ) {
            let made = field_text(&text);
            prop_assert_eq!(made.as_str(), text.as_str());
            prop_assert_eq!(made, FieldText::from(text.as_str()));
        }
    }

    /// The columns the readers' unit tests map.
    pub(crate) fn spec() -> ColumnSpec {
        ColumnSpec {
            phone: "phone".into(),
            name: Some("name".into()),
            vars: vec!["order".into()],
        }
    }

    fn headers(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn the_header_is_row_1_and_a_files_first_record_row_2() {
        assert_eq!(
            (sheet_row(0), sheet_row(1)),
            (1, 2),
            "a sheet's own rows, from its first line"
        );
        assert_eq!(
            (record_row(0), record_row(27)),
            (2, 29),
            "data records under a header on row 1"
        );
    }

    #[test]
    fn a_mapped_column_twice_in_the_header_is_refused_with_both_positions() {
        let error = locate(
            Path::new("r.csv"),
            &headers(&["phone", "name", "order", "phone"]),
            &spec(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("\"phone\"") && error.contains("columns 1 and 4"),
            "{error}"
        );
    }

    #[test]
    fn a_missing_column_is_refused_in_one_line_listing_wrapped_headers_escaped() {
        let error = locate(
            Path::new("r.xlsx"),
            &headers(&["전화\r\n번호", "name", "order"]),
            &spec(),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(error.lines().count(), 1, "{error}");
        assert!(error.ends_with("(columns: \"전화\\r\\n번호\", name, order)"), "{error}");
    }

    #[test]
    fn an_unmapped_column_twice_is_no_problem() {
        let found = locate(
            Path::new("r.csv"),
            &headers(&["memo", "phone", "name", "memo", "order"]),
            &spec(),
        )
        .unwrap();
        assert_eq!(found, (1, Some(2), vec![4]));
    }
}
