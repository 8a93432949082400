//! The report's files: the pinned columns, and each row's typed cells (text only at the CSV boundary, optionally after a UTF-8 BOM, a formula-like text marked for spreadsheets).

use super::row::ReportRow;
use crate::api::ledger::BillingClass;
use crate::campaign::Lane;
use std::borrow::Cow;

/// The report's columns, in order. Pinned: scripts read them by name.
pub const COLUMNS: [&str; 18] = [
    "row",
    "phone",
    "name",
    "kind",
    "lane",
    "chunk",
    "uid",
    "id",
    "send_group_id",
    "acceptance",
    "final_result",
    "error",
    "fallback_sent",
    "billing_class",
    "charge_state",
    "amount",
    "fallback_class",
    "fallback_amount",
];

/// A report cell, typed, for the files that keep types (the workbook) and those that do not (CSV).
/// A row's texts are lent, not copied: this is every cell of a report.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell<'a> {
    /// Text, phone numbers included: never a number, so a leading zero stays.
    Text(Cow<'a, str>),
    Count(Option<u64>),
    /// Won, no fraction.
    Money(Option<i64>),
    Flag(bool),
}

impl<'a> Cell<'a> {
    /// A text cell lending `text`.
    pub fn borrowed(text: &'a str) -> Cell<'a> {
        Cell::Text(Cow::Borrowed(text))
    }

    /// The cell as CSV text, as it is (for machines): an absent number is empty.
    pub fn text(&self) -> String {
        self.csv_text(&mut itoa::Buffer::new()).to_string()
    }

    /// The cell as CSV text for a file people open in a spreadsheet: a text that would be read
    /// as a formula gets a leading `'` ([`crate::files::spreadsheet_safe`]); numbers, which are
    /// typed, stay as they are.
    pub fn spreadsheet_text(&self) -> String {
        match self {
            Cell::Text(text) => crate::files::spreadsheet_safe(text).into_owned(),
            other => other.text(),
        }
    }

    /// As [`Cell::text`], a number formatted in `number`, on the stack.
    pub(super) fn csv_text<'b>(&'b self, number: &'b mut itoa::Buffer) -> &'b str {
        match self {
            Cell::Text(text) => text,
            Cell::Count(Some(count)) => number.format(*count),
            Cell::Money(Some(amount)) => number.format(*amount),
            Cell::Count(None) | Cell::Money(None) => "",
            Cell::Flag(flag) => {
                if *flag {
                    "true"
                } else {
                    "false"
                }
            }
        }
    }
}

/// A row's cells, in the order of [`COLUMNS`].
pub(super) fn cells(row: &ReportRow) -> [Cell<'_>; 18] {
    let text = Cell::borrowed;
    let class = |value: Option<BillingClass>| Cell::borrowed(value.map_or("", BillingClass::as_str));
    [
        Cell::Count(Some(row.row)),
        text(&row.phone),
        text(&row.name),
        text(row.kind.as_str()),
        text(row.lane.map_or("", Lane::as_str)),
        Cell::Count(row.chunk.map(u64::from)),
        text(&row.uid),
        text(&row.id),
        text(&row.send_group_id),
        Cell::Text(row.outcome.acceptance()),
        text(&row.final_result),
        text(&row.error),
        Cell::Flag(row.fallback.is_some()),
        class(row.billing_class),
        text(row.charge_state.as_str()),
        Cell::Money(row.amount),
        class(row.fallback),
        Cell::Money(row.fallback_amount),
    ]
}

/// The byte-order mark Excel needs to read a CSV file as UTF-8 rather than the system's code page.
pub const UTF8_BOM: &[u8] = "\u{feff}".as_bytes();

/// A CSV writer on `file` (the statement's and the reconciliation's files; report.csv has its own,
/// `csv_rows`), opening with the UTF-8 byte-order mark when `bom` asks for it.
pub(crate) fn csv_writer(mut file: std::fs::File, bom: bool) -> std::io::Result<csv::Writer<std::fs::File>> {
    if bom {
        std::io::Write::write_all(&mut file, UTF8_BOM)?;
    }
    Ok(csv::Writer::from_writer(file))
}
