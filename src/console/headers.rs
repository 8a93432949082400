//! The column names (and sheet names) of an uploaded recipients file (CSV, spreadsheet, Parquet), for the edit page's lists; a file that cannot be read yields none, and the check page then names the problem.

use crate::campaign::InputFormat;
use calamine::{open_workbook_auto, Data, Reader};
use std::path::Path;

/// (sheet names, column names of `sheet` or the first sheet); CSV has no sheets.
pub fn read(path: &Path, sheet: &str) -> (Vec<String>, Vec<String>) {
    match InputFormat::from_path(path) {
        Some(InputFormat::Csv) => (Vec::new(), csv_header(path).unwrap_or_default()),
        Some(InputFormat::Parquet) => (Vec::new(), crate::input::parquet_column_names(path).unwrap_or_default()),
        Some(format) if format.is_spreadsheet() => crate::contained::catch(|| spreadsheet_header(path, sheet))
            .ok()
            .flatten()
            .unwrap_or_default(),
        _ => (Vec::new(), Vec::new()),
    }
}

fn csv_header(path: &Path) -> Option<Vec<String>> {
    use std::io::BufRead;
    let mut line = Vec::new();
    std::io::BufReader::new(std::fs::File::open(path).ok()?)
        .read_until(b'\n', &mut line)
        .ok()?;
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&line);
    let text = match std::str::from_utf8(line) {
        Ok(text) => text.to_string(),
        Err(_) => encoding_rs::EUC_KR.decode(line).0.into_owned(),
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes());
    let record = reader.records().next()?.ok()?;
    Some(record.iter().map(|name| name.trim().to_string()).collect())
}

fn spreadsheet_header(path: &Path, sheet: &str) -> Option<(Vec<String>, Vec<String>)> {
    let mut workbook = open_workbook_auto(path).ok()?;
    let sheets = workbook.sheet_names();
    let chosen = if sheet.is_empty() {
        sheets.first()?.clone()
    } else {
        sheet.to_string()
    };
    let range = workbook.worksheet_range(&chosen).ok()?;
    let columns = range
        .rows()
        .find(|row| row.iter().any(|cell| !matches!(cell, Data::Empty)))
        .map(|row| row.iter().map(|cell| cell.to_string().trim().to_string()).collect())
        .unwrap_or_default();
    Some((sheets, columns))
}
