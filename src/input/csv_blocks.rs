//! Large CSV files read on every core: cut into blocks at record boundaries by a quote-aware scan, each block parsed by the same reader as a whole file, the rows put back in file order and numbered.
//!
//! The scan follows the csv crate's own rule for quotes (a quote opens a quoted field only at the
//! start of a field; `""` inside one is a quote; text after the closing quote goes on unquoted), so
//! a block never starts inside a quoted field and its records are the records the sequential
//! reader would see. Everything that decides a row (ragged, not text, the field cap, a quote that
//! does not balance) is the sequential reader's code, run on the block; row and line numbers are
//! shifted by what came before. A file this path is not sure of (not a regular file, small, a
//! header with quotes or line breaks in it) is read sequentially.

use super::csv_source::{
    encoding_name, header_name, make_row, make_view, record_limit, sniff, Columns, CsvRows, Sniffed,
};
use super::decode::{Cp949Reader, NOT_CP949};
use super::plain_lines::Line;
use super::record_window::CHUNK_BYTES;
use super::{locate, ordered, plain_lines, record_row, ColumnSpec, InputError, Numbered, RawRow, RowSource, RowView};
use crate::campaign::Encoding;
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// The environment variable that sets the block size, in bytes (a tuning and testing knob).
pub const BLOCK_BYTES_VAR: &str = "MSGBATCH_CSV_BLOCK_BYTES";
/// Bytes a block holds: large enough that starting a reader is noise, small enough that the few
/// blocks per core in flight (their rows take about six times their bytes) keep memory near what
/// reading in one piece takes. Measured at 1 M realistic rows: 0.62 s and 46 MB peak at 256 KiB,
/// 0.56 s and 120–160 MB at 1 MiB.
pub const DEFAULT_BLOCK_BYTES: usize = 256 * 1024;

/// Where the scan stands in the csv grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scan {
    /// At the start of a field (or of a record).
    FieldStart,
    Unquoted,
    Quoted,
    /// A quote inside a quoted field: it closes the field, or a second quote makes it `""`.
    QuoteInQuoted,
}

impl Scan {
    fn next(self, byte: u8) -> Scan {
        match (self, byte) {
            (Scan::Quoted, b'"') => Scan::QuoteInQuoted,
            (Scan::Quoted, _) => Scan::Quoted,
            (Scan::QuoteInQuoted, b'"') => Scan::Quoted,
            (_, b',' | b'\n' | b'\r') => Scan::FieldStart,
            (Scan::FieldStart, b'"') => Scan::Quoted,
            _ => Scan::Unquoted,
        }
    }
}

/// One block cut and not parsed yet: whole records from a record boundary, and the file line it
/// starts on. Any thread may parse it; `BlockedCsv::number` then puts its rows in file order.
struct Block {
    columns: Columns,
    bytes: Vec<u8>,
    first_line: u64,
    /// No record boundary in far more than the record limit: the block is one record that does
    /// not end, which its reader refuses.
    runaway: bool,
}

/// Reads a CSV file's records in parallel blocks, in file order.
pub struct BlockedCsv {
    columns: Columns,
    file: File,
    /// Bytes read from the file and not yet cut into a block; they start at a record boundary.
    carry: Vec<u8>,
    /// `carry[..scanned]` has been scanned, ending in `state`.
    scanned: usize,
    state: Scan,
    /// The last record boundary found in `carry`: the offset after a line break (LF or CR)
    /// outside quotes. A CR LF may be cut between the two: a record starting with a line break
    /// skips it, as the csv reader skips empty lines.
    boundary: Option<usize>,
    block_bytes: usize,
    /// The most bytes a record may take (as the sequential reader's window).
    record_limit: usize,
    /// Lines before `carry[0]`.
    lines_before: u64,
    /// Rows handed out or waiting in `waiting`.
    rows_before: u64,
    /// Rows of the block parsed last that `next_batch` has not handed out yet.
    waiting: Vec<RawRow>,
    /// No more bytes will be cut: the file ended, or a record ran past the limit.
    ended: bool,
}

/// Opens `path` for reading in parallel blocks when that reads it exactly as the sequential
/// reader would; `None` when it should be read sequentially.
pub(super) fn open(
    path: &Path,
    encoding: Encoding,
    spec: &ColumnSpec,
    max_field: usize,
    block_bytes: usize,
) -> Result<Option<BlockedCsv>, InputError> {
    let is_large_file = std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() >= 2 * block_bytes as u64);
    if !is_large_file {
        return Ok(None);
    }
    let Sniffed {
        file,
        prefix,
        encoding,
        skip,
    } = sniff(path, encoding)?;
    // A plain header line only: one without quotes or carriage returns inside it, ending in the
    // prefix, so that cutting after its line break is exactly where the sequential reader starts.
    let Some(end) = memchr::memchr(b'\n', &prefix[skip..]).map(|at| skip + at) else {
        return Ok(None);
    };
    let line = prefix[skip..end].strip_suffix(b"\r").unwrap_or(&prefix[skip..end]);
    if line.is_empty() || line.iter().any(|&b| b == b'"' || b == b'\r') || line.len() > max_field {
        return Ok(None);
    }
    let mut decoded = Vec::new();
    let decoding = match encoding {
        Encoding::Cp949 => Cp949Reader::new(line).read_to_end(&mut decoded),
        _ => std::io::Read::read_to_end(&mut &line[..], &mut decoded),
    };
    if decoding.is_err() {
        return Ok(None);
    }
    let headers: Vec<String> = decoded.split(|&b| b == b',').map(header_name).collect();
    let (phone, name, vars) = locate(path, &headers, spec)?;
    let record_limit = record_limit(max_field, headers.len());
    let columns = Columns {
        path: path.to_path_buf(),
        headers,
        phone,
        name,
        vars,
        encoding: encoding_name(encoding, skip),
        max_field,
        from_cp949: encoding == Encoding::Cp949,
    };
    let carry = prefix[end + 1..].to_vec();
    Ok(Some(BlockedCsv {
        columns,
        file,
        carry,
        scanned: 0,
        state: Scan::FieldStart,
        boundary: None,
        block_bytes,
        record_limit,
        lines_before: 1,
        rows_before: 0,
        waiting: Vec::new(),
        ended: false,
    }))
}

impl BlockedCsv {
    /// Scans the bytes of `carry` not scanned yet for the first record boundary at or after
    /// `block_bytes`, where the next block ends.
    fn scan(&mut self) {
        if self.boundary.is_some() {
            return;
        }
        let from = self.scanned;
        let fresh = &self.carry[from..];
        // A boundary counts when the block before it holds `block_bytes`: its line break at `at`
        // with `from + at + 1 >= block_bytes`.
        let first_counting = self.block_bytes.saturating_sub(from + 1).min(fresh.len());
        let plain = matches!(self.state, Scan::FieldStart | Scan::Unquoted) && memchr::memchr(b'"', fresh).is_none();
        if plain {
            // No quote: every line break ends a record.
            if let Some(at) = memchr::memchr2(b'\n', b'\r', &fresh[first_counting..]) {
                self.end_block_at(from + first_counting + at + 1);
                return;
            }
            if let Some(&last) = fresh.last() {
                self.state = self.state.next(last);
            }
        } else {
            for (at, &byte) in fresh.iter().enumerate() {
                let before = self.state;
                self.state = before.next(byte);
                if (byte == b'\n' || byte == b'\r') && before != Scan::Quoted && at >= first_counting {
                    self.end_block_at(from + at + 1);
                    return;
                }
            }
        }
        self.scanned = self.carry.len();
    }

    fn end_block_at(&mut self, boundary: usize) {
        self.boundary = Some(boundary);
        self.scanned = boundary;
        self.state = Scan::FieldStart;
    }

    /// Reads more of the file into `carry`; answers false at the end of the file.
    fn fill(&mut self) -> Result<bool, InputError> {
        let filled = self.carry.len();
        self.carry.resize(filled + CHUNK_BYTES, 0);
        let read = loop {
            match self.file.read(&mut self.carry[filled..]) {
                Ok(read) => break read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(InputError::Read {
                        path: self.columns.path.clone(),
                        row: record_row(self.rows_before),
                        source,
                    })
                }
            }
        };
        self.carry.truncate(filled + read);
        self.scan();
        Ok(read > 0)
    }

    /// The next block of whole records, or `None` when the file is all cut.
    fn cut(&mut self) -> Result<Option<Block>, InputError> {
        if self.ended {
            return Ok(None);
        }
        loop {
            self.scan();
            if let Some(boundary) = self.boundary.take() {
                let rest = self.carry.split_off(boundary);
                self.scanned -= boundary;
                let bytes = std::mem::replace(&mut self.carry, rest);
                return Ok(Some(self.take(bytes)));
            }
            if self.carry.len() > self.block_bytes + self.record_limit + 4 * CHUNK_BYTES {
                // A record runs far past the limit: the block's reader names it and stops.
                self.ended = true;
                let bytes = std::mem::take(&mut self.carry);
                let mut block = self.take(bytes);
                block.runaway = true;
                return Ok(Some(block));
            }
            if !self.fill()? {
                self.ended = true;
                let rest = std::mem::take(&mut self.carry);
                return Ok((!rest.is_empty()).then(|| self.take(rest)));
            }
        }
    }

    fn take(&mut self, bytes: Vec<u8>) -> Block {
        let first_line = self.lines_before + 1;
        self.lines_before += memchr::memchr_iter(b'\n', &bytes).count() as u64;
        Block {
            columns: self.columns.clone(),
            bytes,
            first_line,
            runaway: false,
        }
    }

    /// The rows of the next block in file order (every block cut comes back here or to
    /// `placed_error`, in the order it was cut), numbered from the start of the file: a block
    /// numbers its rows as if it were the whole file, and the records before it shift each
    /// (`record_row(k) + n` is `record_row(k + n)`).
    fn number<T: Numbered>(&mut self, mut rows: Vec<T>) -> Vec<T> {
        for row in &mut rows {
            row.shift_row(self.rows_before);
        }
        self.rows_before += rows.len() as u64;
        rows
    }

    /// The error that stopped the next block, its row counted from the start of the file.
    fn placed_error(&self, mut error: InputError) -> InputError {
        match &mut error {
            InputError::UnbalancedQuote { row, .. }
            | InputError::FieldTooLarge { row, .. }
            | InputError::Malformed { row, .. }
            | InputError::Read { row, .. } => *row += self.rows_before,
            _ => {}
        }
        error
    }

    /// Reads every row, each block parsed by one worker thread per core (with `with_each` run on
    /// its rows there, while they are fresh), while this thread cuts the next blocks a few ahead;
    /// hands each block's rows, numbered in the file, and what `with_each` made of them to
    /// `deliver` in file order, until it answers false.
    pub fn read_parallel<D: Send>(
        &mut self,
        with_each: impl Fn(&[RawRow]) -> D + Sync,
        mut deliver: impl FnMut(Vec<RawRow>, D) -> bool,
    ) -> Result<(), InputError> {
        ordered::in_order(
            self,
            BlockedCsv::cut,
            |block: Block| {
                block.parse().map(|rows| {
                    let made = with_each(&rows);
                    (rows, made)
                })
            },
            |this, parsed| {
                let (rows, made) = parsed.map_err(|error| this.placed_error(error))?;
                let rows = this.number(rows);
                Ok(rows.is_empty() || deliver(rows, made))
            },
        )
    }

    /// As [`BlockedCsv::read_parallel`], handing `deliver` only what `each` made of each row, on
    /// the worker that read it, from the row's texts where they lie in the block: no row is copied.
    pub fn read_each<T: Numbered + Send>(
        &mut self,
        each: impl Fn(RowView<'_>) -> T + Sync,
        mut deliver: impl FnMut(Vec<T>) -> bool,
    ) -> Result<(), InputError> {
        ordered::in_order(
            self,
            BlockedCsv::cut,
            |block: Block| {
                block.parse_each(
                    |columns, row, control, line| each(make_view(columns, row, control, line)),
                    |rows| rows.iter().map(|row| each(row.view())).collect(),
                )
            },
            |this, parsed| {
                let made = this.number(parsed.map_err(|error| this.placed_error(error))?);
                Ok(made.is_empty() || deliver(made))
            },
        )
    }
}

impl Block {
    /// Every row of the block, numbered as if the block were the whole file (its first record is
    /// row 2); or the error that stops the file, with its row numbered so too.
    fn parse(self) -> Result<Vec<RawRow>, InputError> {
        self.parse_each(
            |columns, row, control, line| make_row(columns, row, control, line),
            |rows| rows,
        )
    }

    /// What `make` makes of every row of the block (see [`Block::parse`] and `plain_lines::rows`):
    /// a block with no quote hands `make` its rows' fields where they lie; the rows the csv reader
    /// made (they own their texts) go to `of_rows`.
    fn parse_each<T>(
        mut self,
        mut make: impl FnMut(&Columns, u64, bool, &Line<'_>) -> T,
        of_rows: impl FnOnce(Vec<RawRow>) -> Vec<T>,
    ) -> Result<Vec<T>, InputError> {
        let bytes = if self.columns.from_cp949 {
            let mut decoded = Vec::with_capacity(self.bytes.len() + self.bytes.len() / 2);
            Cp949Reader::new(&self.bytes[..])
                .read_to_end(&mut decoded)
                .expect("decoding bytes in memory cannot fail");
            // Searched once here rather than in every field.
            self.columns.from_cp949 = memchr::memmem::find(&decoded, NOT_CP949).is_some();
            decoded
        } else {
            self.bytes
        };
        let record_limit = record_limit(self.columns.max_field, self.columns.headers.len());
        if !self.runaway && memchr::memchr(b'"', &bytes).is_none() {
            let plain = simdutf8::basic::from_utf8(&bytes)
                .ok()
                .and_then(|text| plain_lines::rows(&self.columns, text, record_limit, &mut make));
            if let Some(rows) = plain {
                return Ok(rows);
            }
        }
        // About 40 bytes a row: one allocation for most blocks.
        let mut rows = Vec::with_capacity(bytes.len() / 32 + 1);
        let (path, limit) = (self.columns.path.clone(), self.columns.max_field);
        let column = self.columns.headers.first().cloned().unwrap_or_default();
        let mut reader = CsvRows::block(self.columns, bytes, self.first_line);
        while reader.read_rows(&mut rows, CHUNK_BYTES)? {}
        if self.runaway {
            // The reader stops such a record at its window's limit; should it ever not, the file
            // is still refused rather than cut in the middle of a record.
            return Err(InputError::FieldTooLarge {
                path,
                row: record_row(rows.len() as u64),
                line: self.first_line,
                column,
                limit,
                cause: "no line break ends the record: is this a CSV file?",
            });
        }
        Ok(of_rows(rows))
    }
}

impl RowSource for BlockedCsv {
    /// The rows of the blocks one at a time, parsed on the calling thread ([`BlockedCsv::read_parallel`]
    /// reads on every core); at most `max` at once.
    fn next_batch(&mut self, max: usize) -> Result<Option<Vec<RawRow>>, InputError> {
        while self.waiting.is_empty() {
            let Some(block) = self.cut()? else {
                return Ok(None);
            };
            let rows = block.parse().map_err(|error| self.placed_error(error))?;
            self.waiting = self.number(rows);
        }
        if self.waiting.len() <= max {
            return Ok(Some(std::mem::take(&mut self.waiting)));
        }
        let rest = self.waiting.split_off(max);
        Ok(Some(std::mem::replace(&mut self.waiting, rest)))
    }

    fn in_parallel(&mut self) -> Option<super::Parallel<'_>> {
        Some(super::Parallel::Csv(self))
    }

    fn encoding(&self) -> &'static str {
        self.columns.encoding
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::spec;
    use super::*;
    use std::io::Write;

    fn file_of(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(bytes).unwrap();
        file
    }

    fn blocked(file: &tempfile::NamedTempFile, block: usize, max_field: usize) -> BlockedCsv {
        open(file.path(), Encoding::Auto, &spec(), max_field, block)
            .unwrap()
            .expect("read in blocks")
    }

    fn all(mut source: impl RowSource) -> Result<Vec<RawRow>, InputError> {
        let mut rows = Vec::new();
        while let Some(batch) = source.next_batch(3)? {
            rows.extend(batch);
        }
        Ok(rows)
    }

    #[test]
    fn blocks_cut_at_line_breaks_outside_quotes_keep_every_row_whole_and_numbered() {
        let mut text = String::from("phone,name,order\r\n");
        for i in 0..200 {
            if i % 7 == 0 {
                text.push_str(&format!("0101234{i:04},\"이름\r\n{i}, \"\"인용\"\"\",A{i}\r\n"));
            } else {
                text.push_str(&format!("0101234{i:04},이름{i},A{i}\r\n"));
            }
        }
        let file = file_of(text.as_bytes());
        let mut source = blocked(&file, 50, 1 << 20);
        let mut blocks = 0;
        while let Some(block) = source.cut().unwrap() {
            assert!(
                block.bytes.starts_with(b"0101234") || block.bytes.starts_with(b"\n"),
                "a block starts a record"
            );
            blocks += 1;
        }
        assert!(blocks > 20, "{blocks} blocks");
        let rows = all(blocked(&file, 50, 1 << 20)).unwrap();
        assert_eq!(rows.len(), 200);
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(row.row, i as u64 + 2, "record {i}: one row however many lines it spans");
            assert_eq!(row.phone.as_deref(), Some(format!("0101234{i:04}").as_str()));
            assert_eq!(row.unreadable, None, "row {}", row.row);
            let name = row.name.as_deref().unwrap();
            if i % 7 == 0 {
                assert_eq!(name, format!("이름\r\n{i}, \"인용\""));
            } else {
                assert_eq!(name, format!("이름{i}"));
            }
        }
    }

    #[test]
    fn a_quote_never_closed_in_a_large_file_is_refused_at_its_row_and_line() {
        let mut text = String::from("phone,name,order\n");
        for i in 1..=1000 {
            let name = if i == 10 {
                "\"Kim".to_string()
            } else {
                format!("Lee{i}")
            };
            text.push_str(&format!("01012340{i:03},{name},A\n"));
        }
        let file = file_of(text.as_bytes());
        let error = all(blocked(&file, 64, 1 << 20)).unwrap_err().to_string();
        assert!(
            error.contains("row 11 (line 11)") && error.contains("\"name\""),
            "{error}"
        );
    }

    #[test]
    fn a_large_file_without_line_breaks_is_refused_with_memory_bounded() {
        let file = file_of(&[b"phone,name,order\n".as_slice(), &vec![0u8; 4 << 20]].concat());
        let error = all(blocked(&file, 1 << 16, 1024)).unwrap_err();
        assert!(
            matches!(error, InputError::FieldTooLarge { row: 2, line: 2, .. }),
            "{error}"
        );
    }

    #[test]
    fn small_files_and_headers_with_quotes_are_read_in_one_piece() {
        let small = file_of(b"phone,name,order\n01012345678,Kim,A\n");
        assert!(open(small.path(), Encoding::Auto, &spec(), 1 << 20, 1 << 20)
            .unwrap()
            .is_none());
        let quoted = file_of(&b"\"phone\",name,order\n01012345678,Kim,A\n".repeat(10));
        assert!(open(quoted.path(), Encoding::Auto, &spec(), 1 << 20, 8)
            .unwrap()
            .is_none());
    }
}
