//! report.csv (and report.raw.csv): each row's cells written straight into one buffer, quoted exactly as the csv crate quotes them, and the buffer handed to the file 64 KiB at a time.
//!
//! report.csv is every row of a run (930 MB at 10 M rows). Through the csv crate each cell was
//! copied twice, into a reused `ByteRecord` and then into the writer's buffer, and each one scanned
//! for quoting on the way; here a record is copied once and scanned once, whole. The output is the
//! csv crate's (`QuoteStyle::Necessary`, a quote doubled, `\n` after each record): a test holds
//! the two byte for byte on any texts.
//!
//! report.csv is for people and is opened in spreadsheets: a text cell a spreadsheet would read
//! as a formula (`=…`, `+…`, `-…` but a plain number, `@…`, tab, CR) is written after a `'`
//! (`crate::files::spreadsheet`). Only the first byte of a cell is looked at, so the ordinary
//! cell costs nothing more. report.raw.csv, for machines, has every cell as it is.

use super::files::{cells, Cell, COLUMNS, UTF8_BOM};
use super::row::ReportRow;
use crate::files::spreadsheet_safe;
use std::io::Write;

/// How a CSV file of the report writes its text cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CellTexts {
    /// report.csv, for people: a text a spreadsheet would evaluate starts with `'`.
    SpreadsheetSafe,
    /// report.raw.csv, for machines: every cell as it is.
    AsTheyAre,
}

/// The buffer is handed to the file once it holds this much.
const WRITE_BYTES: usize = 64 * 1024;

/// report.csv being written: its header is written when it is created.
pub(super) struct CsvRows<W: Write> {
    out: W,
    buffer: Vec<u8>,
    texts: CellTexts,
}

impl<W: Write> CsvRows<W> {
    /// A report CSV on `out` writing its texts as `texts` says, opening with the UTF-8 byte-order
    /// mark when `bom` asks for it, then the header.
    pub fn create(out: W, bom: bool, texts: CellTexts) -> std::io::Result<CsvRows<W>> {
        let mut rows = CsvRows {
            out,
            buffer: Vec::with_capacity(WRITE_BYTES + 4096),
            texts,
        };
        if bom {
            rows.buffer.extend_from_slice(UTF8_BOM);
        }
        rows.record(&COLUMNS.map(Cell::borrowed))?;
        Ok(rows)
    }

    pub fn push(&mut self, row: &ReportRow) -> std::io::Result<()> {
        self.record(&cells(row))
    }

    /// Writes what is left in the buffer, and hands the file back.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.write_all(&self.buffer)?;
        self.out.flush()?;
        Ok(self.out)
    }

    /// A record of `cells`; the buffer goes to the file once it holds [`WRITE_BYTES`].
    fn record(&mut self, cells: &[Cell<'_>]) -> std::io::Result<()> {
        // Almost no record needs a quote: it is written as it is, then checked once, whole,
        // which is cheaper than checking each of its fields; the rare one is written again.
        let start = self.buffer.len();
        write_fields(&mut self.buffer, cells, self.texts, |buffer, text| {
            buffer.extend_from_slice(text)
        });
        let written = &self.buffer[start..];
        let commas = written.iter().filter(|&&byte| byte == b',').count();
        let breaks_or_quotes = written
            .iter()
            .fold(false, |seen, &byte| seen | matches!(byte, b'"' | b'\n' | b'\r'));
        if commas != cells.len() - 1 || breaks_or_quotes {
            self.buffer.truncate(start);
            write_fields(&mut self.buffer, cells, self.texts, push_field);
        }
        self.buffer.push(b'\n');
        if self.buffer.len() >= WRITE_BYTES {
            self.out.write_all(&self.buffer)?;
            self.buffer.clear();
        }
        Ok(())
    }
}

/// Each cell's CSV text through `write`, a comma between two; a text cell marked for
/// spreadsheets when `texts` asks for it (the mark inside the quotes of a quoted field).
fn write_fields(buffer: &mut Vec<u8>, cells: &[Cell<'_>], texts: CellTexts, write: impl Fn(&mut Vec<u8>, &[u8])) {
    let mut number = itoa::Buffer::new();
    for (index, cell) in cells.iter().enumerate() {
        if index > 0 {
            buffer.push(b',');
        }
        let text = cell.csv_text(&mut number);
        // Marked only when needed (a recipient's value that looks like a formula): the ordinary
        // cell is borrowed as it is.
        let text = match (texts, cell) {
            (CellTexts::SpreadsheetSafe, Cell::Text(_)) => spreadsheet_safe(text),
            _ => std::borrow::Cow::Borrowed(text),
        };
        write(buffer, text.as_bytes());
    }
}

/// A field as the csv crate writes it: in quotes, its quotes doubled, when it holds a comma, a
/// quote or a line break; as it is otherwise.
fn push_field(buffer: &mut Vec<u8>, field: &[u8]) {
    if !field.iter().any(|&byte| matches!(byte, b',' | b'"' | b'\n' | b'\r')) {
        buffer.extend_from_slice(field);
        return;
    }
    buffer.push(b'"');
    for part in field.split_inclusive(|&byte| byte == b'"') {
        buffer.extend_from_slice(part);
        if part.last() == Some(&b'"') {
            buffer.push(b'"');
        }
    }
    buffer.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{charged_row, Outcome};
    use proptest::prelude::*;

    /// What the csv crate writes for the same rows (each cell's text as `Cell` gives it, marked
    /// for spreadsheets or as it is), the way report.csv was written before.
    fn through_the_csv_crate(rows: &[ReportRow], bom: bool, texts: CellTexts) -> Vec<u8> {
        let mut out = Vec::new();
        if bom {
            out.extend_from_slice(UTF8_BOM);
        }
        let mut writer = csv::Writer::from_writer(out);
        writer.write_record(COLUMNS).unwrap();
        for row in rows {
            let text = |cell: &Cell| match texts {
                CellTexts::SpreadsheetSafe => cell.spreadsheet_text(),
                CellTexts::AsTheyAre => cell.text(),
            };
            writer.write_record(cells(row).iter().map(text)).unwrap();
        }
        writer.into_inner().unwrap()
    }

    fn written(rows: &[ReportRow], bom: bool) -> Vec<u8> {
        written_as(rows, bom, CellTexts::SpreadsheetSafe)
    }

    fn written_as(rows: &[ReportRow], bom: bool, texts: CellTexts) -> Vec<u8> {
        let mut csv = CsvRows::create(Vec::new(), bom, texts).unwrap();
        for row in rows {
            csv.push(row).unwrap();
        }
        csv.finish().unwrap()
    }

    #[test]
    fn texts_with_commas_quotes_and_line_breaks_are_quoted_as_the_csv_crate_quotes_them() {
        let mut row = charged_row(7, "010-1234-5678", 20);
        row.name = "김, \"민수\"".into();
        row.error = "line\r\nbreak".into();
        row.final_result = "\"".into();
        row.outcome = Outcome::Answered {
            status: "a\rb".into(),
            accepted: false,
        };
        let bytes = written(std::slice::from_ref(&row), true);
        assert_eq!(
            bytes,
            through_the_csv_crate(std::slice::from_ref(&row), true, CellTexts::SpreadsheetSafe)
        );
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.contains(",\"김, \"\"민수\"\"\",") && text.contains(",\"line\r\nbreak\","),
            "{text}"
        );
        let records: Vec<csv::StringRecord> = csv::Reader::from_reader(text.trim_start_matches('\u{feff}').as_bytes())
            .records()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            (records.len(), &records[0][2], &records[0][11]),
            (1, "김, \"민수\"", "line\r\nbreak")
        );
    }

    #[test]
    fn rows_past_the_write_size_all_reach_the_file_in_order() {
        let rows: Vec<ReportRow> = (1..=3000)
            .map(|index| charged_row(index, &format!("010{index:08}"), 20))
            .collect();
        let bytes = written(&rows, false);
        assert!(bytes.len() > 2 * WRITE_BYTES, "{} bytes", bytes.len());
        assert_eq!(bytes, through_the_csv_crate(&rows, false, CellTexts::SpreadsheetSafe));
    }

    #[test]
    fn formula_like_texts_are_marked_inside_their_quotes_and_numbers_and_the_raw_file_are_left_alone() {
        let mut row = charged_row(3, "+821012345678", -1200);
        row.name = "=HYPERLINK(\"http://x\",\"y\")".into();
        row.error = "@cmd".into();
        row.uid = "-2+3".into();
        row.id = "-1200".into();
        let people = String::from_utf8(written(std::slice::from_ref(&row), false)).unwrap();
        let record = people.lines().nth(1).unwrap();
        assert!(
            record.starts_with("3,'+821012345678,\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",sms,"),
            "{record}"
        );
        assert!(record.contains(",'-2+3,-1200,"), "{record}");
        assert!(record.contains(",'@cmd,"), "{record}");
        assert!(
            record.contains(",charged,-1200,"),
            "the amount, a number, is as it is: {record}"
        );
        let raw = String::from_utf8(written_as(std::slice::from_ref(&row), false, CellTexts::AsTheyAre)).unwrap();
        let record = raw.lines().nth(1).unwrap();
        assert!(
            record.starts_with("3,+821012345678,\"=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",sms,")
                && record.contains(",-2+3,-1200,")
                && record.contains(",@cmd,"),
            "{record}"
        );
    }

    proptest! {
        #[test]
        fn any_texts_are_written_as_the_csv_crate_writes_them(
            texts in proptest::collection::vec(("[a-z,\"\r\n 김=@+-]{0,6}", "\\PC{0,8}", "[0-9\",=-]{0,4}"), 1..20),
            bom: bool,
            raw: bool,
        ) {
            let cell_texts = if raw { CellTexts::AsTheyAre } else { CellTexts::SpreadsheetSafe };
            let rows: Vec<ReportRow> = texts
                .iter()
                .enumerate()
                .map(|(index, (name, error, uid))| {
                    let mut row = charged_row(index as u64 + 1, name, index as i64 - 5);
                    row.name = name.as_str().into();
                    row.error = error.as_str().into();
                    row.uid = uid.as_str().into();
                    row
                })
                .collect();
            prop_assert_eq!(written_as(&rows, bom, cell_texts), through_the_csv_crate(&rows, bom, cell_texts));
        }
    }
}
