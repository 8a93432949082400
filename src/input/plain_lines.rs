//! Blocks of a CSV file with no quote in them, split without the csv state machine: with no quote, every line break ends a record and every comma ends a field, exactly as the csv crate reads them.
//!
//! Most recipient lists quote nothing, and splitting on line breaks and commas with `memchr`
//! takes a fraction of what the csv crate's byte-at-a-time parser does. The row each record
//! becomes is made by the same `make_row` as the csv reader's, so only the splitting differs; the
//! property tests read files in blocks and in one piece and compare the rows.

use super::csv_source::{has_control_byte, make_row, Columns, Fields};
use super::record_row;
use super::RawRow;

/// One line of a block as its fields: field `i` ends at `ends[i]` and starts after the comma
/// that ends the one before.
struct Line<'a> {
    text: &'a str,
    ends: &'a [usize],
}

impl Line<'_> {
    fn field_text(&self, index: usize) -> Option<&str> {
        let end = *self.ends.get(index)?;
        let start = match index {
            0 => 0,
            _ => self.ends[index - 1] + 1,
        };
        Some(&self.text[start..end])
    }
}

impl Fields for Line<'_> {
    fn count(&self) -> usize {
        self.ends.len()
    }
    fn field(&self, index: usize) -> Option<&[u8]> {
        self.field_text(index).map(str::as_bytes)
    }
    /// The block was checked as UTF-8 once, as a whole: a field cut at commas is text too.
    fn text(&self, index: usize) -> Option<Result<&str, std::str::Utf8Error>> {
        self.field_text(index).map(Ok)
    }
    fn bytes(&self) -> &[u8] {
        self.text.as_bytes()
    }
}

/// The rows of `text`, whole records with no quote in them, numbered as if `text` were the whole
/// file (its first record is row 2, [`record_row`]; a blank line is no record, as for the csv
/// crate). `None` when a line runs past `record_limit`: the csv reader's
/// path decides what becomes of it.
pub(super) fn rows(columns: &Columns, text: &str, record_limit: usize) -> Option<Vec<RawRow>> {
    debug_assert!(memchr::memchr(b'"', text.as_bytes()).is_none());
    let bytes = text.as_bytes();
    // About 40 bytes a row: one allocation for most blocks.
    let mut rows = Vec::with_capacity(bytes.len() / 32 + 1);
    let mut ends = Vec::with_capacity(columns.headers.len() + 1);
    let mut line_start = 0;
    // One pass over the block's bytes (separators come every few bytes: a plain loop beats a
    // vectorised search here); the end of the block ends the last line when no line break does.
    for at in 0..=bytes.len() {
        match bytes.get(at) {
            Some(b',') => {
                ends.push(at - line_start);
                continue;
            }
            Some(b'\n' | b'\r') | None => {}
            Some(_) => continue,
        }
        if at > line_start {
            if at - line_start > record_limit {
                return None;
            }
            // Line breaks and commas are ASCII: every cut falls between characters.
            let line = &text[line_start..at];
            ends.push(line.len());
            let record = Line {
                text: line,
                ends: &ends,
            };
            let suspicious = has_control_byte(line.as_bytes());
            rows.push(make_row(columns, record_row(rows.len() as u64), suspicious, &record));
        }
        ends.clear();
        line_start = at + 1;
    }
    Some(rows)
}
