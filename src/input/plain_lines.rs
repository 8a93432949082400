//! Blocks of a CSV file with no quote in them, split without the csv state machine: with no quote, every line break ends a record and every comma ends a field, exactly as the csv crate reads them.
//!
//! Most recipient lists quote nothing, and finding line breaks and commas eight bytes at a time
//! takes a fraction of what the csv crate's byte-at-a-time parser does. The row each record
//! becomes is made by the same `make_view` as the csv reader's, so only the splitting differs; the
//! property tests read files in blocks and in one piece and compare the rows.

use super::csv_source::{Columns, Fields};
use super::record_row;

/// One line of a block as its fields: field `i` ends at `ends[i]` and starts after the comma
/// that ends the one before.
pub(super) struct Line<'a> {
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

/// The rows of `text`, whole records with no quote in them, each made by `make` (`make_row`, or
/// what is made of its view) from its number, whether it holds a control byte, and its fields.
/// Rows are numbered as if `text` were the whole file (its first record is row 2,
/// [`record_row`]; a blank line is no record, as for the csv crate). `None` when a line runs past
/// `record_limit`: the csv reader's path decides what becomes of it.
pub(super) fn rows<T>(
    columns: &Columns,
    text: &str,
    record_limit: usize,
    mut make: impl FnMut(&Columns, u64, bool, &Line<'_>) -> T,
) -> Option<Vec<T>> {
    debug_assert!(memchr::memchr(b'"', text.as_bytes()).is_none());
    let bytes = text.as_bytes();
    // About 40 bytes a row: one allocation for most blocks.
    let mut rows = Vec::with_capacity(bytes.len() / 32 + 1);
    let mut ends = Vec::with_capacity(columns.headers.len() + 1);
    // The line of `text` from `start` to `end` (its separators' offsets in `ends`) made a row,
    // unless it is blank; false when it runs past `record_limit`.
    let mut end_line = |start: usize, end: usize, control: bool, ends: &mut Vec<usize>| -> bool {
        if end > start {
            if end - start > record_limit {
                return false;
            }
            // Line breaks and commas are ASCII: every cut falls between characters.
            let line = &text[start..end];
            ends.push(line.len());
            let record = Line { text: line, ends };
            rows.push(make(columns, record_row(rows.len() as u64), control, &record));
        }
        ends.clear();
        true
    };
    let mut line_start = 0;
    // Whether the line so far holds a control byte other than its line break.
    let mut control = false;
    let mut at = 0;
    // Eight bytes at a time: the separators and control bytes of a word found at once, each then
    // visited (a field is a few bytes, so a word holds about one); the last bytes one by one.
    while at < bytes.len() {
        let mut marks = match bytes.get(at..at + 8) {
            Some(word) => marked(u64::from_le_bytes(word.try_into().expect("8 bytes"))),
            None => u64::from(marked_byte(bytes[at])) << 7,
        };
        let width = if bytes.len() - at >= 8 { 8 } else { 1 };
        while marks != 0 {
            let here = at + (marks.trailing_zeros() / 8) as usize;
            marks &= marks - 1;
            match bytes[here] {
                b',' => ends.push(here - line_start),
                b'\n' | b'\r' => {
                    if !end_line(line_start, here, control, &mut ends) {
                        return None;
                    }
                    line_start = here + 1;
                    control = false;
                }
                _ => control = true,
            }
        }
        at += width;
    }
    // The end of the block ends the last line when no line break does.
    if !end_line(line_start, bytes.len(), control, &mut ends) {
        return None;
    }
    Some(rows)
}

const ONES: u64 = 0x0101_0101_0101_0101;
const LOWS: u64 = 0x7F7F_7F7F_7F7F_7F7F;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` (little-endian) that is a comma or below 0x0E (a line
/// break, or a control byte `make_view` looks at): exact for every byte, with no carry between
/// bytes.
#[inline]
fn marked(word: u64) -> u64 {
    // A byte is below 0x0E when its low seven bits plus 0x72 stay below 0x80 and its high bit is clear.
    let below = !(((word & LOWS) + ONES * 0x72) | word) & HIGHS;
    let commas = word ^ (ONES * u64::from(b','));
    let comma = !(((commas & LOWS) + LOWS) | commas) & HIGHS;
    below | comma
}

fn marked_byte(byte: u8) -> bool {
    byte == b',' || byte < 0x0E
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_word_marks_exactly_its_commas_and_low_bytes(word in any::<[u8; 8]>()) {
            let marks = marked(u64::from_le_bytes(word));
            for (index, &byte) in word.iter().enumerate() {
                prop_assert_eq!(marks >> (index * 8 + 7) & 1 == 1, marked_byte(byte), "byte {} of {:?}", index, word);
            }
            prop_assert_eq!(marks & !HIGHS, 0);
        }
    }
}
