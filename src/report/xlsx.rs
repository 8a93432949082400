//! report.xlsx for people: the rows streamed in constant memory under a frozen, filtered header (phones as text, won amounts as numbers), split into further sheets at Excel's row limit, and a Summary sheet.

use super::files::{cells, Cell, COLUMNS};
use super::{ClassSummary, ReportRow, Summary};
use anyhow::{Context, Result};
use rust_xlsxwriter::{ColNum, Format, RowNum, Workbook, Worksheet};
use std::path::Path;

/// Won amounts: no fraction, thousands grouped.
pub(crate) const MONEY_FORMAT: &str = "₩#,##0";

/// Excel's rows per sheet, the header row included.
pub(crate) const EXCEL_MAX_ROWS: u32 = 1_048_576;

/// The name of the `number`th sheet of rows: "Rows", then "Rows 2", "Rows 3", …
fn rows_sheet_name(number: u32) -> String {
    if number == 1 {
        "Rows".into()
    } else {
        format!("Rows {number}")
    }
}

/// The formats every workbook of ours uses.
pub(crate) struct Formats {
    pub money: Format,
    pub header: Format,
}

impl Formats {
    pub fn new() -> Formats {
        Formats {
            money: Format::new().set_num_format(MONEY_FORMAT),
            header: Format::new().set_bold(),
        }
    }
}

/// A workbook whose sheets are written row by row to temporary files in `temp_dir` (unnamed,
/// owner-only), so a run of any size takes the same memory.
pub(crate) fn streaming_workbook(temp_dir: &Path) -> Result<Workbook> {
    let mut workbook = Workbook::new();
    // Compressing the sheets took most of a report's time at level 6 (1 M rows: about 12 of 16 s);
    // level 1 is the fastest, for a somewhat larger file.
    workbook.set_zip_compression_level(1);
    workbook
        .set_tempdir(temp_dir)
        .with_context(|| format!("cannot keep the workbook's temporary files in {}", temp_dir.display()))?;
    Ok(workbook)
}

/// Adds a streamed sheet named `name` and answers its index.
pub(crate) fn add_sheet(workbook: &mut Workbook, name: &str) -> Result<usize> {
    let sheet = workbook.add_worksheet_with_constant_memory()?;
    sheet.set_name(name)?;
    Ok(workbook.worksheets().len() - 1)
}

/// Writes a bold header row at `row`, frozen when it is the sheet's first row.
pub(crate) fn write_header(sheet: &mut Worksheet, row: RowNum, names: &[&str], formats: &Formats) -> Result<()> {
    for (col, name) in names.iter().enumerate() {
        sheet.write_string_with_format(row, col as ColNum, *name, &formats.header)?;
    }
    if row == 0 {
        sheet.set_freeze_panes(1, 0)?;
    }
    Ok(())
}

/// Puts the filter buttons on the header at `header_row` over the table below it, down to `last_row`.
pub(crate) fn filter(sheet: &mut Worksheet, header_row: RowNum, last_row: RowNum, columns: usize) -> Result<()> {
    let last_col = columns.saturating_sub(1) as ColNum;
    sheet.autofilter(header_row, 0, last_row.max(header_row), last_col)?;
    Ok(())
}

/// Writes one typed cell; an empty text or an absent number stays a blank cell, which filters as "(Blanks)".
pub(crate) fn write_cell(
    sheet: &mut Worksheet,
    row: RowNum,
    col: ColNum,
    cell: &Cell,
    formats: &Formats,
) -> Result<()> {
    match cell {
        Cell::Text(text) if text.is_empty() => {}
        Cell::Text(text) => {
            sheet.write_string(row, col, text.as_ref())?;
        }
        Cell::Count(Some(count)) => {
            sheet.write_number(row, col, *count as f64)?;
        }
        Cell::Money(Some(amount)) => {
            sheet.write_number_with_format(row, col, *amount as f64, &formats.money)?;
        }
        Cell::Count(None) | Cell::Money(None) => {}
        Cell::Flag(flag) => {
            sheet.write_boolean(row, col, *flag)?;
        }
    }
    Ok(())
}

/// Column widths of the rows sheets, in characters, by column name.
fn width_of(column: &str) -> f64 {
    match column {
        "row" | "chunk" | "kind" | "lane" => 8.0,
        "phone" | "billing_class" | "charge_state" | "fallback_class" | "final_result" => 14.0,
        "uid" | "acceptance" | "amount" | "fallback_amount" | "fallback_sent" => 12.0,
        "id" | "send_group_id" => 38.0,
        "error" => 40.0,
        _ => 12.0,
    }
}

/// report.xlsx being written: a Summary sheet (filled at the end) and the rows, in as many sheets
/// as Excel's row limit needs.
pub(super) struct RowsWorkbook {
    workbook: Workbook,
    formats: Formats,
    summary_sheet: usize,
    sheet: usize,
    sheet_number: u32,
    /// The next row of the current sheet to write; row 0 is its header.
    next_row: RowNum,
    rows_per_sheet: u32,
}

impl RowsWorkbook {
    pub fn new(temp_dir: &Path) -> Result<RowsWorkbook> {
        RowsWorkbook::with_rows_per_sheet(temp_dir, EXCEL_MAX_ROWS - 1)
    }

    /// A workbook that starts a new sheet after `rows_per_sheet` rows (Excel's limit, or fewer in tests).
    fn with_rows_per_sheet(temp_dir: &Path, rows_per_sheet: u32) -> Result<RowsWorkbook> {
        let mut workbook = streaming_workbook(temp_dir)?;
        let summary_sheet = add_sheet(&mut workbook, "Summary")?;
        let mut rows = RowsWorkbook {
            workbook,
            formats: Formats::new(),
            summary_sheet,
            sheet: 0,
            sheet_number: 0,
            next_row: 0,
            rows_per_sheet,
        };
        rows.start_sheet()?;
        Ok(rows)
    }

    fn start_sheet(&mut self) -> Result<()> {
        self.sheet_number += 1;
        self.sheet = add_sheet(&mut self.workbook, &rows_sheet_name(self.sheet_number))?;
        let sheet = self.workbook.worksheet_from_index(self.sheet)?;
        for (col, name) in COLUMNS.iter().enumerate() {
            sheet.set_column_width(col as ColNum, width_of(name))?;
        }
        write_header(sheet, 0, &COLUMNS, &self.formats)?;
        self.next_row = 1;
        Ok(())
    }

    fn close_sheet(&mut self) -> Result<()> {
        let sheet = self.workbook.worksheet_from_index(self.sheet)?;
        filter(sheet, 0, self.next_row - 1, COLUMNS.len())
    }

    pub fn push(&mut self, row: &ReportRow) -> Result<()> {
        if self.next_row > self.rows_per_sheet {
            self.close_sheet()?;
            self.start_sheet()?;
        }
        let sheet = self.workbook.worksheet_from_index(self.sheet)?;
        for (col, cell) in cells(row).iter().enumerate() {
            write_cell(sheet, self.next_row, col as ColNum, cell, &self.formats)?;
        }
        self.next_row += 1;
        Ok(())
    }

    /// Writes the Summary sheet and the whole workbook to `file`.
    pub fn finish(mut self, summary: &Summary, file: std::fs::File) -> Result<()> {
        self.close_sheet()?;
        let sheet = self.workbook.worksheet_from_index(self.summary_sheet)?;
        write_summary(sheet, summary, &self.formats)?;
        self.workbook.save_to_writer(std::io::BufWriter::new(file))?;
        Ok(())
    }
}

/// The Summary sheet: the run, the accounting, the statuses and the charges by billing class.
fn write_summary(sheet: &mut Worksheet, summary: &Summary, formats: &Formats) -> Result<()> {
    sheet.set_column_width(0, 22)?;
    for col in 1..9 {
        sheet.set_column_width(col, 14)?;
    }
    let status = &summary.status;
    let mut row: RowNum = 0;
    let mut line = |sheet: &mut Worksheet, cells: &[Cell]| -> Result<()> {
        for (col, cell) in cells.iter().enumerate() {
            write_cell(sheet, row, col as ColNum, cell, formats)?;
        }
        row += 1;
        Ok(())
    };
    fn text(text: &str) -> Cell<'_> {
        Cell::borrowed(text)
    }
    let count = |count: u64| Cell::Count(Some(count));
    // The campaign's name, never its file's path: the workbook is forwarded, and a path tells
    // the server's folders.
    line(sheet, &[text("campaign"), text(&summary.campaign_name)])?;
    line(sheet, &[text("kind"), text(&summary.kind)])?;
    line(sheet, &[text("complete"), Cell::Flag(status.complete)])?;
    line(sheet, &[])?;
    line(sheet, &[text("accounting"), text("rows")])?;
    for (name, value) in [
        ("rows", status.rows),
        ("rejected", status.rejected),
        ("duplicates", status.duplicates),
        ("suppressed", status.suppressed),
        ("capped", status.capped),
        ("sent", status.sent),
        ("uncertain", status.uncertain),
        ("pending", status.pending),
    ] {
        line(sheet, &[text(name), count(value)])?;
    }
    line(sheet, &[text(&status.equation())])?;
    line(sheet, &[])?;
    line(sheet, &[text("acceptance"), text("rows")])?;
    for (acceptance, rows) in &summary.acceptance {
        line(sheet, &[text(acceptance), count(*rows)])?;
    }
    if !summary.final_results.is_empty() {
        line(sheet, &[])?;
        line(sheet, &[text("final result"), text("rows")])?;
        for (result, rows) in &summary.final_results {
            line(sheet, &[text(result), count(*rows)])?;
        }
    }
    line(sheet, &[])?;
    let header: Vec<Cell> = std::iter::once("billing class")
        .chain(TOTALS_HEADER)
        .map(text)
        .collect();
    line(sheet, &header)?;
    for (class, totals) in &summary.classes {
        let cells: Vec<Cell> = std::iter::once(text(class.as_str()))
            .chain(totals_cells(totals))
            .collect();
        line(sheet, &cells)?;
    }
    if !summary.prices_known {
        line(sheet, &[])?;
        line(sheet, &[text("Amounts are 0: the campaign gives no [prices].")])?;
    }
    Ok(())
}

/// The columns of charge totals, as [`totals_cells`] fills them.
pub(crate) const TOTALS_HEADER: [&str; 8] = [
    "charged",
    "charged rows",
    "refunded",
    "refunded rows",
    "provisional",
    "provisional rows",
    "disputed",
    "disputed rows",
];

/// Charge totals as cells, amounts in won.
pub(crate) fn totals_cells(totals: &ClassSummary) -> [Cell<'static>; 8] {
    [
        Cell::Money(Some(totals.charged)),
        Cell::Count(Some(totals.charged_count)),
        Cell::Money(Some(totals.refunded)),
        Cell::Count(Some(totals.refunded_count)),
        Cell::Money(Some(totals.provisional)),
        Cell::Count(Some(totals.provisional_count)),
        Cell::Money(Some(totals.disputed)),
        Cell::Count(Some(totals.disputed_count)),
    ]
}

/// Adds a sheet holding one table: a frozen, filtered header and its rows.
pub(crate) fn table_sheet<'a>(
    workbook: &mut Workbook,
    name: &str,
    header: &[&str],
    rows: impl IntoIterator<Item = Vec<Cell<'a>>>,
    formats: &Formats,
) -> Result<()> {
    let index = add_sheet(workbook, name)?;
    let sheet = workbook.worksheet_from_index(index)?;
    for col in 0..header.len() {
        sheet.set_column_width(col as ColNum, 14)?;
    }
    write_header(sheet, 0, header, formats)?;
    let mut last: RowNum = 0;
    for cells in rows {
        last += 1;
        for (col, cell) in cells.iter().enumerate() {
            write_cell(sheet, last, col as ColNum, cell, formats)?;
        }
    }
    filter(sheet, 0, last, header.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charged_row;
    use std::io::Read;

    fn entry(path: &Path, name: &str) -> String {
        let mut archive = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
        let mut text = String::new();
        archive.by_name(name).unwrap().read_to_string(&mut text).unwrap();
        text
    }

    #[test]
    fn rows_beyond_a_sheet_go_on_in_further_sheets_each_with_its_header_and_filter() {
        let dir = tempfile::tempdir().unwrap();
        let mut workbook = RowsWorkbook::with_rows_per_sheet(dir.path(), 2).unwrap();
        for row in 1..=5 {
            workbook.push(&charged_row(row, "01020000001", 9)).unwrap();
        }
        let path = dir.path().join("report.xlsx");
        workbook
            .finish(&Summary::default(), std::fs::File::create(&path).unwrap())
            .unwrap();
        let names: Vec<String> = entry(&path, "xl/workbook.xml")
            .split("<sheet name=\"")
            .skip(1)
            .map(|rest| rest[..rest.find('"').unwrap()].to_string())
            .collect();
        assert_eq!(names, ["Summary", "Rows", "Rows 2", "Rows 3"]);
        for (sheet, rows, first_row) in [(2, 2, 1), (3, 2, 3), (4, 1, 5)] {
            let xml = entry(&path, &format!("xl/worksheets/sheet{sheet}.xml"));
            assert!(xml.contains("state=\"frozen\""), "sheet {sheet} header frozen");
            assert!(
                xml.contains(&format!("<autoFilter ref=\"A1:R{}\"/>", rows + 1)),
                "sheet {sheet}: {xml}"
            );
            assert_eq!(
                xml.matches("<row ").count(),
                rows + 1,
                "sheet {sheet}: header and its rows"
            );
            assert!(xml.contains("<is><t>row</t></is>"), "sheet {sheet} repeats the header");
            assert!(
                xml.contains(&format!("<c r=\"A2\"><v>{first_row}</v></c>")),
                "sheet {sheet} goes on from input row {first_row}: {xml}"
            );
        }
    }
}
