//! CSV recipients streamed with the csv crate: UTF-8 with or without BOM, or CP949, detected or declared.
//!
//! Every record becomes one row. A record with more or fewer fields than the header is `Ragged`;
//! a mapped field that is not text (invalid bytes, a NUL) is `NotText`; a field over the cap is
//! `FieldTooLarge`. A record the lenient csv crate reads across line breaks is checked against
//! its raw bytes, and a quote that is never closed, or closes in the middle of a later line,
//! refuses the file naming the row and column where it opened: otherwise the lines it takes in
//! would silently be one field instead of rows.

use super::decode::Cp949Reader;
use super::raw_record::{self, QuoteFault};
use super::record_window::{RecordWindow, CHUNK_BYTES};
use super::{
    locate, record_row, sheet_row, text_problem, ColumnSpec, InputError, RawRow, Row, RowSource, RowView, Unreadable,
};
use crate::campaign::Encoding;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

const BOM: &[u8] = b"\xEF\xBB\xBF";
const SNIFF_BYTES: usize = 64 * 1024;

type Source = RecordWindow<Box<dyn Read + Send>>;

pub struct CsvRows {
    columns: Columns,
    reader: csv::Reader<Source>,
    record: csv::ByteRecord,
    /// The data records read so far: the next one's row is `record_row(records)`.
    records: u64,
    /// Lines before the first byte this reader sees (a block of a file read in parallel starts
    /// part-way down the file).
    line_offset: u64,
}

/// What every reader of one file shares: its header, the mapped columns and how fields are read.
#[derive(Debug, Clone)]
pub(super) struct Columns {
    pub path: PathBuf,
    pub headers: Vec<String>,
    pub phone: usize,
    pub name: Option<usize>,
    pub vars: Vec<usize>,
    pub encoding: &'static str,
    pub max_field: usize,
    /// Decoded from CP949: a U+FFFD in a field marks bytes that were not CP949 (see `decode`). A
    /// block of such a file with no U+FFFD anywhere is parsed with this off: no field of it needs
    /// looking at for one.
    pub from_cp949: bool,
}

/// A file opened for reading: its encoding chosen, the first bytes read, the file positioned
/// after them.
pub(super) struct Sniffed {
    pub file: File,
    pub prefix: Vec<u8>,
    pub encoding: Encoding,
    /// Bytes of a UTF-8 byte-order mark to skip.
    pub skip: usize,
}

/// Opens `path` and decides its encoding from its first 64 KiB (see the module's doc).
pub(super) fn sniff(path: &Path, encoding: Encoding) -> Result<Sniffed, InputError> {
    let open_error = |source| InputError::Open {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(open_error)?;
    let mut prefix = vec![0u8; SNIFF_BYTES];
    let mut filled = 0;
    while filled < prefix.len() {
        match file.read(&mut prefix[filled..]).map_err(open_error)? {
            0 => break,
            n => filled += n,
        }
    }
    prefix.truncate(filled);
    let has_bom = prefix.starts_with(BOM);
    let chosen = match encoding {
        Encoding::Utf8 => Encoding::Utf8,
        Encoding::Cp949 => Encoding::Cp949,
        Encoding::Auto if has_bom || looks_like_utf8(&prefix) => Encoding::Utf8,
        Encoding::Auto => Encoding::Cp949,
    };
    let skip = if has_bom && chosen == Encoding::Utf8 {
        BOM.len()
    } else {
        0
    };
    Ok(Sniffed {
        file,
        prefix,
        encoding: chosen,
        skip,
    })
}

/// The name of the encoding rows are read in, for the report.
pub(super) fn encoding_name(encoding: Encoding, skip: usize) -> &'static str {
    match (encoding, skip) {
        (Encoding::Cp949, _) => "cp949",
        (_, 0) => "utf-8",
        _ => "utf-8 (BOM)",
    }
}

/// Whether `prefix` reads as UTF-8, allowing a character cut off at its end.
fn looks_like_utf8(prefix: &[u8]) -> bool {
    match std::str::from_utf8(prefix) {
        Ok(_) => true,
        Err(error) => error.error_len().is_none() && prefix.len() - error.valid_up_to() < 4,
    }
}

/// The most bytes a record of `columns` fields may take before it is stopped: every field at the
/// cap and one more, so that a field over the cap in a record that does end is rejected as a row,
/// and only a record that does not end refuses the file.
pub(super) fn record_limit(max_field: usize, columns: usize) -> usize {
    max_field.saturating_mul(columns + 1)
}

/// Whether any byte is below 0x0E (NUL, tab, LF, CR and the like), eight at a time: most records
/// have none and need no closer look.
pub(super) fn has_control_byte(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let word = u64::from_le_bytes([word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7]]);
        if word.wrapping_sub(ONES * 0x0E) & !word & HIGHS != 0 {
            return true;
        }
    }
    words.remainder().iter().any(|&byte| byte < 0x0E)
}

/// Where the quotes of a record read across line breaks do not balance, if they do not: the
/// field, the line it opens on (the record starting on `first_line`), and what goes wrong.
fn unbalanced_quote(raw: &[u8], first_line: u64) -> Option<(usize, u64, String)> {
    let (fields, fault) = raw_record::split(raw);
    let fault = fault?;
    let line_of = |offset: usize| first_line + raw[..offset].iter().filter(|&&b| b == b'\n').count() as u64;
    let problem = match fault {
        QuoteFault::Unclosed { .. } => format!(
            "a quoted field opens here and is never closed: it takes in the rest of the file, to line {}",
            line_of(raw.len().saturating_sub(1))
        ),
        QuoteFault::TextAfterClosingQuote { closing, .. } => format!(
            "a quoted field opens here and closes on line {} with text after the closing quote: \
             the quotes do not balance, and the lines between would be read as one field",
            line_of(closing)
        ),
    };
    Some((fault.field(), line_of(fields[fault.field()].start), problem))
}

/// A header field as a column name: its text, trimmed (bytes that are not UTF-8 shown as U+FFFD).
pub(super) fn header_name(field: &[u8]) -> String {
    String::from_utf8_lossy(field).trim().to_string()
}

fn has_line_break(bytes: &[u8]) -> bool {
    bytes.iter().any(|&b| b == b'\n' || b == b'\r')
}

/// The fields of one record, as a row is made of them: from the csv crate's record, or from a
/// line of a block with no quote in it (see `plain_lines`).
pub(super) trait Fields {
    fn count(&self) -> usize;
    fn field(&self, index: usize) -> Option<&[u8]>;
    /// The field's text, or the bytes that are not UTF-8.
    fn text(&self, index: usize) -> Option<Result<&str, std::str::Utf8Error>> {
        self.field(index).map(std::str::from_utf8)
    }
    /// Every byte of the record's fields (what separates them may be included: it is no control
    /// byte, and it only makes the size a bound).
    fn bytes(&self) -> &[u8];
}

impl Fields for csv::ByteRecord {
    fn count(&self) -> usize {
        self.len()
    }
    fn field(&self, index: usize) -> Option<&[u8]> {
        self.get(index)
    }
    fn bytes(&self) -> &[u8] {
        self.as_slice()
    }
}

impl Columns {
    fn column_name(&self, index: usize) -> String {
        match self.headers.get(index) {
            Some(name) => name.clone(),
            None => format!("column {} (beyond the header)", index + 1),
        }
    }
}

/// The row of one record, `row` in the file; `suspicious` when the record has a control byte
/// (see `has_control_byte`). The one rule for what a CSV record's row holds and why it cannot be
/// read, whichever way the record was split.
pub(super) fn make_row(columns: &Columns, row: u64, suspicious: bool, record: &impl Fields) -> RawRow {
    make_row_as(columns, row, suspicious, record, super::field_text)
}

/// As [`make_row`], with the row's texts borrowed from `record`.
#[inline]
pub(super) fn make_view<'r>(columns: &Columns, row: u64, suspicious: bool, record: &'r impl Fields) -> RowView<'r> {
    make_row_as(columns, row, suspicious, record, |text| text)
}

/// As [`make_row`], each text made by `text_as`.
#[inline]
fn make_row_as<'r, T>(
    columns: &Columns,
    row: u64,
    suspicious: bool,
    record: &'r impl Fields,
    text_as: impl Fn(&'r str) -> T,
) -> Row<T> {
    let mut unreadable = None;
    if record.count() != columns.headers.len() {
        unreadable = Some(Box::new(Unreadable::Ragged {
            fields: record.count(),
            expected: columns.headers.len(),
            column: columns.column_name(record.count().min(columns.headers.len())),
        }));
    }
    if record.bytes().len() > columns.max_field {
        let oversized =
            (0..record.count()).find(|&index| record.field(index).is_some_and(|f| f.len() > columns.max_field));
        if let Some(index) = oversized {
            unreadable.get_or_insert_with(|| {
                Box::new(Unreadable::FieldTooLarge {
                    column: columns.column_name(index),
                    bytes: record.field(index).map_or(0, <[u8]>::len),
                    limit: columns.max_field,
                })
            });
        }
    }
    // A record no longer than the limit has no field over it: the common case looks at no field's length.
    let short = record.bytes().len() <= columns.max_field;
    let mut field = |index: usize| -> Option<T> {
        if !short && record.field(index)?.len() > columns.max_field {
            return None;
        }
        let problem = match record.text(index)? {
            Err(_) => "bytes that are not UTF-8 text",
            Ok(text) if columns.from_cp949 && text.contains('\u{FFFD}') => "bytes that are not CP949 (EUC-KR) text",
            Ok(text) => match suspicious.then(|| text_problem(text)).flatten() {
                None => return Some(text_as(text)),
                Some(problem) => problem,
            },
        };
        unreadable.get_or_insert_with(|| {
            Box::new(Unreadable::NotText {
                column: columns.column_name(index),
                detail: problem.to_string(),
            })
        });
        None
    };
    let phone = field(columns.phone);
    let name = columns.name.and_then(&mut field);
    let mut vars = smallvec::SmallVec::new();
    for &index in &columns.vars {
        vars.push(field(index));
    }
    Row {
        row,
        phone,
        name,
        vars,
        unreadable,
    }
}

impl CsvRows {
    pub fn open(
        path: &Path,
        encoding: Encoding,
        columns: &ColumnSpec,
        max_field: usize,
    ) -> Result<CsvRows, InputError> {
        let Sniffed {
            mut file,
            encoding: chosen,
            skip,
            ..
        } = sniff(path, encoding)?;
        file.seek(SeekFrom::Start(skip as u64))
            .map_err(|source| InputError::Open {
                path: path.to_path_buf(),
                source,
            })?;
        let name = encoding_name(chosen, skip);
        let source: Box<dyn Read + Send> = match chosen {
            Encoding::Cp949 => Box::new(Cp949Reader::new(BufReader::with_capacity(CHUNK_BYTES, file))),
            _ => Box::new(file),
        };
        let window = RecordWindow::new(source, record_limit(max_field, 1));
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .buffer_capacity(CHUNK_BYTES)
            .from_reader(window);
        let headers = match reader.byte_headers().cloned() {
            Ok(headers) => headers,
            Err(_) if reader.get_ref().overflowed() => {
                return Err(InputError::HeaderTooLong {
                    path: path.to_path_buf(),
                    limit: record_limit(max_field, 1),
                })
            }
            Err(error) => {
                return Err(InputError::Malformed {
                    path: path.to_path_buf(),
                    row: sheet_row(0),
                    message: format!("header: {error}"),
                })
            }
        };
        if has_line_break(headers.as_slice()) {
            let raw = reader.get_ref().raw(0, reader.position().byte()).unwrap_or_default();
            if let Some((field, line, problem)) = unbalanced_quote(raw, 1) {
                return Err(InputError::Malformed {
                    path: path.to_path_buf(),
                    row: sheet_row(0),
                    message: format!("the header (line {line}), its column {}: {problem}", field + 1),
                });
            }
        }
        let headers: Vec<String> = headers.iter().map(header_name).collect();
        let (phone, name_index, vars) = locate(path, &headers, columns)?;
        let data_start = reader.position().byte();
        let window = reader.get_mut();
        window.record_starts_at(data_start);
        window.set_limit(record_limit(max_field, headers.len()));
        Ok(CsvRows {
            columns: Columns {
                path: path.to_path_buf(),
                headers,
                phone,
                name: name_index,
                vars,
                encoding: name,
                max_field,
                from_cp949: chosen == Encoding::Cp949,
            },
            reader,
            record: csv::ByteRecord::new(),
            records: 0,
            line_offset: 0,
        })
    }

    /// A reader of one block of a file whose header was read already: `bytes`, in UTF-8 (decoded
    /// already from CP949), start at a record boundary, on line `first_line` of the file (see
    /// `csv_blocks`). Rows are numbered as if the block were the whole file (its first record is row
    /// 2); the caller adds the rows before it.
    pub(super) fn block(columns: Columns, bytes: Vec<u8>, first_line: u64) -> CsvRows {
        let capacity = bytes.len().clamp(1, CHUNK_BYTES);
        let nothing_more: Box<dyn Read + Send> = Box::new(std::io::empty());
        let limit = record_limit(columns.max_field, columns.headers.len());
        let window = RecordWindow::holding(bytes, nothing_more, limit);
        let reader = csv::ReaderBuilder::new()
            .flexible(true)
            .has_headers(false)
            .buffer_capacity(capacity)
            .from_reader(window);
        CsvRows {
            columns,
            reader,
            record: csv::ByteRecord::new(),
            records: 0,
            line_offset: first_line - 1,
        }
    }

    /// Reads up to `max` more rows into `rows`; answers whether the file may hold more.
    pub(super) fn read_rows(&mut self, rows: &mut Vec<RawRow>, max: usize) -> Result<bool, InputError> {
        let goal = rows.len() + max;
        while rows.len() < goal {
            let row = record_row(self.records);
            let start = self.reader.position().clone();
            match self.reader.read_byte_record(&mut self.record) {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(error) => return Err(self.read_error(error, row, &start)),
            }
            let end = self.reader.position().byte();
            let bytes = self.record.as_slice();
            let suspicious = has_control_byte(bytes);
            if suspicious && has_line_break(bytes) {
                self.check_quotes(row, &start, end)?;
            }
            rows.push(make_row(&self.columns, row, suspicious, &self.record));
            self.records += 1;
            self.reader.get_mut().record_starts_at(end);
        }
        Ok(true)
    }

    fn column_name(&self, index: usize) -> String {
        self.columns.column_name(index)
    }

    /// Refuses a record read across line breaks whose quotes do not balance.
    fn check_quotes(&self, row: u64, start: &csv::Position, end: u64) -> Result<(), InputError> {
        let Some(raw) = self.reader.get_ref().raw(start.byte(), end) else {
            debug_assert!(false, "the window holds the record just read");
            return Ok(());
        };
        match unbalanced_quote(raw, start.line() + self.line_offset) {
            None => Ok(()),
            Some((field, line, problem)) => Err(InputError::UnbalancedQuote {
                path: self.columns.path.clone(),
                row,
                line,
                column: self.column_name(field),
                problem,
            }),
        }
    }

    /// The error for a read that failed on the record of `row`, starting at `start`.
    fn read_error(&self, error: csv::Error, row: u64, start: &csv::Position) -> InputError {
        let window = self.reader.get_ref();
        if !window.overflowed() {
            let source = match error.into_kind() {
                csv::ErrorKind::Io(source) => source,
                other => std::io::Error::other(format!("{other:?}")),
            };
            return InputError::Read {
                path: self.columns.path.clone(),
                row,
                source,
            };
        }
        let (fields, fault) = raw_record::split(window.current_record());
        let index = fields
            .iter()
            .position(|field| field.len() > self.columns.max_field)
            .unwrap_or(fields.len().saturating_sub(1));
        let cause = match fault {
            Some(QuoteFault::Unclosed { field }) if field == index => "a quote opens it and is never closed",
            _ => "no line break ends the record: is this a CSV file?",
        };
        InputError::FieldTooLarge {
            path: self.columns.path.clone(),
            row,
            line: start.line() + self.line_offset,
            column: self.column_name(index),
            limit: self.columns.max_field,
            cause,
        }
    }
}

impl RowSource for CsvRows {
    fn next_batch(&mut self, max: usize) -> Result<Option<Vec<RawRow>>, InputError> {
        let mut rows = Vec::with_capacity(max);
        self.read_rows(&mut rows, max)?;
        Ok((!rows.is_empty()).then_some(rows))
    }

    fn encoding(&self) -> &'static str {
        self.columns.encoding
    }
}

#[cfg(test)]
mod tests;
