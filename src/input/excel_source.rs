//! Spreadsheet recipients (Excel `.xlsx`/`.xlsm`, Excel 97–2003 `.xls`, ODS) through calamine: the first sheet or `recipients.sheet`, and the rule that turns a cell into text.
//!
//! The header is the sheet's first row that is not blank; every row below it that is not blank
//! is one `RawRow` numbered as the sheet numbers it (header on row 1: the first recipient is row
//! 2), so a reject can be found in Excel. A blank row (no cell shows anything: each is empty, or
//! empty text such as a formula's saved `""`) is no recipient, like an empty line in a CSV file,
//! and its number is skipped; blank rows at the end are no rows. A text of only whitespace (a
//! line break) is not empty, also in an XLSX file that writes it without `xml:space="preserve"`,
//! which calamine trims to nothing (`sheet_markup` reads it back). A merged area reads as the sheet
//! shows it: the value in its first cell, the cells it covers empty, also when the file keeps what
//! they held before the merge (LibreOffice does, in .ods, .xlsx and .xls), so they make no row of
//! their own and no value. calamine loads the whole sheet
//! into memory (an `.xlsx` is zipped XML that cannot be read from the middle); rows are still
//! handed out in batches.
//!
//! Cells become text as Parquet values do (`parquet_types` holds those forms): text as written,
//! empty text being an empty cell; a number without a fraction as its digits (`1012345678`, a
//! phone typed as a number, whose leading zero normalisation restores), other numbers in
//! shortest form (`2500.5`); booleans `true`/`false`; a date `2026-11-23`; a date with a time
//! `2026-11-23T09:30:00+09:00` (the sheet's wall clock, taken as Seoul's); a time alone (a serial
//! below 1) `09:30:00`; a duration (`[h]:mm` format) ISO 8601 `PT1H30M`. A formula gives its
//! saved value. Rejected, with why: a number with a fraction in the phone column (its digits
//! would make a number no one wrote: `phone_invalid`), an error cell such as `#N/A` and a formula
//! saved without its value, by a program that does not compute formulas (`cell_error`), a date
//! Excel cannot show (`not_text`).

use super::parquet_types::{day_text, duration_text, float_text, seoul_wall_clock_text, time_text};
use super::sheet_markup::{self, Area};
use super::xls_biff;
use super::{locate, sheet_row, text_problem, ColumnSpec, FieldText, InputError, RawRow, RowSource, Unreadable};
use crate::campaign::InputFormat;
use calamine::{
    open_workbook_from_rs, CellType, Data, Dimensions, ExcelDateTime, Ods, Range, Reader, SheetType, SheetVisible,
    Sheets, Xls, XlsOptions, Xlsx,
};
use chrono::{NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use std::collections::HashSet;
use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::ops::RangeInclusive;
use std::path::Path;

/// Windows' number for UTF-16LE, the code page of every BIFF8 text.
const UTF_16_CODE_PAGE: u16 = 1200;

/// Why a cell has no text.
#[derive(Debug, Clone, PartialEq)]
pub enum CellProblem {
    /// An error value (`#N/A`, `#DIV/0!`, ...).
    Error(String),
    /// A value with no text form (a date Excel cannot show), or text with a NUL.
    NotText(String),
}

/// One cell as text (`None`: empty), or why it has none.
pub fn cell_text(cell: &Data) -> Result<Option<String>, CellProblem> {
    let text = match cell {
        // Empty text (a formula's `""`, pandas' NaN in ODS) shows as an empty cell does.
        Data::Empty => return Ok(None),
        Data::String(text) if text.is_empty() => return Ok(None),
        Data::String(text) => match text_problem(text) {
            Some(problem) => return Err(CellProblem::NotText(problem.into())),
            None => text.clone(),
        },
        Data::Float(number) => float_text(*number),
        Data::Int(number) => number.to_string(),
        Data::Bool(value) => value.to_string(),
        Data::DateTime(moment) => date_time_text(moment)?,
        Data::DateTimeIso(text) => iso_date_time_text(text),
        Data::DurationIso(text) => text.clone(),
        Data::Error(error) => return Err(CellProblem::Error(error.to_string())),
    };
    Ok(Some(text))
}

/// Excel's serial date-times: days since its epoch, the time of day as the fraction.
fn date_time_text(moment: &ExcelDateTime) -> Result<String, CellProblem> {
    const MILLIS_PER_DAY: f64 = 86_400_000.0;
    let serial = moment.as_f64();
    if moment.is_duration() {
        return Ok(duration_text(
            (serial * MILLIS_PER_DAY).round() as i64,
            polars::prelude::TimeUnit::Milliseconds,
        ));
    }
    // Beyond these Excel shows `####`, and calamine would clamp to the nearest date it can make.
    if !(0.0..2_958_466.0).contains(&serial) {
        return Err(CellProblem::NotText(format!(
            "the date serial {serial} is outside the dates Excel can show"
        )));
    }
    let (year, month, day, hour, minute, second, milli) = moment.to_ymd_hms_milli();
    let time = NaiveTime::from_hms_milli_opt(hour.into(), minute.into(), second.into(), milli.into())
        .expect("calamine gives a valid time of day");
    if serial < 1.0 {
        let nanos = i64::from(time.num_seconds_from_midnight()) * 1_000_000_000 + i64::from(time.nanosecond());
        return Ok(time_text(nanos).expect("a time of day"));
    }
    let Some(date) = NaiveDate::from_ymd_opt(year.into(), month.into(), day.into()) else {
        return Err(CellProblem::NotText(format!(
            "{year}-{month:02}-{day:02} is a day that does not exist (Excel's 1900 leap-year bug)"
        )));
    };
    Ok(wall_clock_text(date.and_time(time)))
}

/// A date at midnight is a date; any other time is a moment, on Seoul's wall clock.
fn wall_clock_text(moment: NaiveDateTime) -> String {
    if moment.time() == NaiveTime::MIN {
        day_text(moment.date())
    } else {
        seoul_wall_clock_text(moment).expect("+09:00 has no gaps")
    }
}

/// ODS (and `t="d"` Excel) date-times written as ISO 8601 text; any other shape as written.
fn iso_date_time_text(text: &str) -> String {
    if let Ok(moment) = NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f") {
        return wall_clock_text(moment);
    }
    match NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        Ok(date) => day_text(date),
        Err(_) => text.to_string(),
    }
}

/// Values and formulas of one sheet, at the sheet's own (0-based) positions.
struct Grid {
    values: Range<Data>,
    /// Only the cells that hold a formula; a formula whose value was not saved shows as an empty value.
    formulas: Range<String>,
}

impl Grid {
    fn value(&self, row: u32, column: u32) -> &Data {
        self.values.get_value((row, column)).unwrap_or(&Data::Empty)
    }

    fn formula(&self, row: u32, column: u32) -> Option<&str> {
        self.formulas
            .get_value((row, column))
            .map(String::as_str)
            .filter(|formula| !formula.is_empty())
    }

    /// Whether no cell of `row` shows anything: each is empty, or text that is empty (as a
    /// formula's saved `""` is). A formula without its saved value might show something.
    fn is_blank(&self, row: u32, columns: RangeInclusive<u32>) -> bool {
        columns.into_iter().all(|column| match self.value(row, column) {
            Data::Empty => self.formula(row, column).is_none(),
            Data::String(text) => text.is_empty(),
            _ => false,
        })
    }

    /// Cells of empty text that no formula made: where calamine may have trimmed an XLSX text of
    /// only whitespace to nothing.
    fn empty_texts(&self) -> HashSet<(u32, u32)> {
        let (first_row, first_column) = self.values.start().unwrap_or_default();
        self.values
            .used_cells()
            .filter(|(_, _, value)| matches!(value, Data::String(text) if text.is_empty()))
            .map(|(row, column, _)| (first_row + row as u32, first_column + column as u32))
            .filter(|&(row, column)| self.formula(row, column).is_none())
            .collect()
    }

    /// Empties the cells of `area`: a merge hides them, and the sheet shows none of their content
    /// (LibreOffice keeps it when asked to, and writes it to .ods, .xlsx and .xls alike).
    fn hide(&mut self, area: Area) {
        fn clear<T: CellType + Default + PartialEq>(range: &mut Range<T>, area: Area) {
            let (Some(start), Some(end)) = (range.start(), range.end()) else {
                return;
            };
            for row in area.first.0.max(start.0)..=area.last.0.min(end.0) {
                for column in area.first.1.max(start.1)..=area.last.1.min(end.1) {
                    if range.get_value((row, column)).is_some_and(|cell| *cell != T::default()) {
                        range.set_value((row, column), T::default());
                    }
                }
            }
        }
        clear(&mut self.values, area);
        clear(&mut self.formulas, area);
    }

    /// The first and last row, and the first and last column, holding anything.
    fn bounds(&self) -> Option<((u32, u32), (u32, u32))> {
        let spans = [
            self.values.start().zip(self.values.end()),
            self.formulas.start().zip(self.formulas.end()),
        ];
        spans.into_iter().flatten().reduce(|(low, high), (start, end)| {
            (
                (low.0.min(start.0), low.1.min(start.1)),
                (high.0.max(end.0), high.1.max(end.1)),
            )
        })
    }
}

pub struct SheetRows {
    grid: Grid,
    /// Sheet column and header name of the mapped columns: phone, name, then variables.
    columns: Vec<(u32, String)>,
    has_name: bool,
    /// The sheet columns holding anything, for telling blank rows.
    span: RangeInclusive<u32>,
    next_row: u32,
    /// One past the last row holding anything.
    end_row: u32,
    encoding: &'static str,
}

/// Why a workbook could not give a sheet.
enum LoadError {
    Unreadable(String),
    UnknownSheet { sheet: String, available: String },
}

impl From<calamine::Error> for LoadError {
    fn from(error: calamine::Error) -> LoadError {
        LoadError::Unreadable(error.to_string())
    }
}

/// The sheet to read: the one named (case as Excel ignores it), or the first visible worksheet.
fn pick_sheet<RS: Read + Seek>(workbook: &Sheets<RS>, wanted: Option<&str>) -> Result<String, LoadError> {
    let sheets: Vec<_> = workbook
        .sheets_metadata()
        .iter()
        .filter(|sheet| sheet.typ == SheetType::WorkSheet)
        .collect();
    let found = match wanted {
        Some(wanted) => sheets.iter().find(|sheet| sheet.name == wanted).or_else(|| {
            sheets
                .iter()
                .find(|sheet| sheet.name.to_lowercase() == wanted.to_lowercase())
        }),
        None => sheets
            .iter()
            .find(|sheet| sheet.visible == SheetVisible::Visible)
            .or(sheets.first()),
    };
    match (found, wanted) {
        (Some(sheet), _) => Ok(sheet.name.clone()),
        (None, None) => Err(LoadError::Unreadable("it has no worksheet".into())),
        (None, Some(wanted)) => Err(LoadError::UnknownSheet {
            sheet: wanted.to_string(),
            available: sheets
                .iter()
                .map(|sheet| format!("{:?}", sheet.name))
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// The cells a merged area hides: all but its first (top left), as up to two areas.
fn hidden_by_merge(merged: Dimensions) -> impl Iterator<Item = Area> {
    let (first, last) = (merged.start, merged.end);
    let rest_of_first_row = (last.1 > first.1).then(|| Area {
        first: (first.0, first.1 + 1),
        last: (first.0, last.1),
    });
    let rows_below = (last.0 > first.0).then(|| Area {
        first: (first.0 + 1, first.1),
        last,
    });
    rest_of_first_row.into_iter().chain(rows_below)
}

fn load(
    path: &Path,
    file: BufReader<File>,
    format: InputFormat,
    wanted: Option<&str>,
) -> Result<(String, Grid), LoadError> {
    let mut workbook = match format {
        InputFormat::Xlsx => Sheets::Xlsx(open_workbook_from_rs::<Xlsx<_>, _>(file).map_err(calamine::Error::Xlsx)?),
        InputFormat::Xls => {
            // A BIFF8 workbook's texts are UTF-16 whatever its CODEPAGE record says (`xls_biff`).
            let mut options = XlsOptions::default();
            if xls_biff::is_biff8(path) == Some(true) {
                options.force_codepage = Some(UTF_16_CODE_PAGE);
            }
            Sheets::Xls(Xls::new_with_options(file, options).map_err(calamine::Error::Xls)?)
        }
        InputFormat::Ods => Sheets::Ods(open_workbook_from_rs::<Ods<_>, _>(file).map_err(calamine::Error::Ods)?),
        InputFormat::Csv | InputFormat::Parquet => unreachable!("not a spreadsheet format"),
    };
    let name = pick_sheet(&workbook, wanted)?;
    let values = workbook.worksheet_range(&name)?;
    let formulas = workbook.worksheet_formula(&name)?;
    let mut grid = Grid { values, formulas };
    if format == InputFormat::Xlsx {
        // A cell holding a line break is not an empty cell, whatever calamine made of its text.
        let empty_texts = grid.empty_texts();
        if !empty_texts.is_empty() {
            for (at, text) in
                sheet_markup::xlsx_whitespace_texts(path, &name, &empty_texts).map_err(LoadError::Unreadable)?
            {
                grid.values.set_value(at, Data::String(text));
            }
        }
    }
    let hidden: Vec<Area> = match &mut workbook {
        Sheets::Xlsx(xlsx) => {
            if sheet_markup::xlsx_has_merges(path, &name).map_err(LoadError::Unreadable)? {
                let merged = xlsx.merge_cells_by_sheet_name(&name).map_err(calamine::Error::Xlsx)?;
                merged.into_iter().flat_map(hidden_by_merge).collect()
            } else {
                Vec::new()
            }
        }
        Sheets::Xls(xls) => {
            let merged = xls.merge_cells_by_sheet_name(&name).map_err(calamine::Error::Xls)?;
            merged.into_iter().flat_map(hidden_by_merge).collect()
        }
        // calamine says nothing of ODS merges: the covered cells are read from content.xml.
        Sheets::Ods(_) => sheet_markup::ods_covered(path, &name).map_err(LoadError::Unreadable)?,
        Sheets::Xlsb(_) => Vec::new(),
    };
    for area in hidden {
        grid.hide(area);
    }
    Ok((name, grid))
}

impl SheetRows {
    pub fn open(
        path: &Path,
        format: InputFormat,
        sheet: Option<&str>,
        columns: &ColumnSpec,
    ) -> Result<SheetRows, InputError> {
        let file = File::open(path).map_err(|source| InputError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let refusal = |message: String| InputError::Spreadsheet {
            path: path.to_path_buf(),
            message,
        };
        // A damaged file must refuse, naming it, also when the reader panics on it.
        let loaded = crate::contained::catch(|| {
            crate::failpoint::reached("spreadsheet-reader");
            load(path, BufReader::new(file), format, sheet)
        })
        .map_err(refusal)?;
        let (name, grid) = match loaded {
            Ok(loaded) => loaded,
            Err(LoadError::Unreadable(message)) => return Err(refusal(message)),
            Err(LoadError::UnknownSheet { sheet, available }) => {
                return Err(InputError::UnknownSheet {
                    path: path.to_path_buf(),
                    sheet,
                    available,
                })
            }
        };
        let ((first_row, first_column), (last_row, last_column)) = grid.bounds().unwrap_or_default();
        let span = first_column..=last_column;
        let Some(header_row) = (first_row..=last_row).find(|&row| !grid.is_blank(row, span.clone())) else {
            return Err(refusal(format!("sheet {name:?} is empty: it has no header row")));
        };
        let headers: Vec<String> = (first_column..=last_column)
            .map(|column| {
                let cell = grid.value(header_row, column);
                match cell_text(cell) {
                    Ok(text) => text.unwrap_or_default(),
                    Err(_) => cell.to_string(),
                }
            })
            .collect();
        let (phone, name_index, vars) = locate(path, &headers, columns)?;
        let columns = std::iter::once(phone)
            .chain(name_index)
            .chain(vars)
            .map(|index| (first_column + index as u32, headers[index].clone()))
            .collect();
        Ok(SheetRows {
            grid,
            columns,
            has_name: name_index.is_some(),
            span,
            next_row: header_row + 1,
            end_row: last_row + 1,
            encoding: match format {
                InputFormat::Xls => "xls",
                InputFormat::Ods => "ods",
                _ => "xlsx",
            },
        })
    }

    fn row(&self, row: u32) -> RawRow {
        let mut unreadable = None;
        let mut values = self.columns.iter().enumerate().map(|(position, (column, name))| {
            let cell = self.grid.value(row, *column);
            let problem = match cell_text(cell) {
                Ok(None) => match self.grid.formula(row, *column) {
                    None => return None,
                    Some(formula) => Unreadable::CellError {
                        column: name.clone(),
                        detail: format!(
                            "the formula ={} has no saved value (the file was written by a program that does not compute formulas: open and save it in Excel or LibreOffice)",
                            shortened(formula)
                        ),
                    },
                },
                Ok(Some(text)) => match cell {
                    Data::Float(number) if position == 0 && number.fract() != 0.0 => Unreadable::PhoneFraction {
                        column: name.clone(),
                        value: text,
                    },
                    _ => return Some(FieldText::from(text)),
                },
                Err(CellProblem::Error(error)) => Unreadable::CellError {
                    column: name.clone(),
                    detail: format!("the cell holds the error {error}"),
                },
                Err(CellProblem::NotText(detail)) => Unreadable::NotText {
                    column: name.clone(),
                    detail,
                },
            };
            unreadable.get_or_insert_with(|| Box::new(problem));
            None
        });
        let phone = values.next().flatten();
        let name = if self.has_name { values.next().flatten() } else { None };
        let vars = values.collect();
        RawRow {
            row: sheet_row(u64::from(row)),
            phone,
            name,
            vars,
            unreadable,
        }
    }
}

/// A formula as a reject's detail shows it: whole when short.
fn shortened(formula: &str) -> String {
    const SHOWN: usize = 60;
    match formula.char_indices().nth(SHOWN) {
        None => formula.to_string(),
        Some((cut, _)) => format!("{}…", &formula[..cut]),
    }
}

impl RowSource for SheetRows {
    fn next_batch(&mut self, max: usize) -> Result<Option<Vec<RawRow>>, InputError> {
        let mut rows = Vec::new();
        while rows.len() < max && self.next_row < self.end_row {
            if !self.grid.is_blank(self.next_row, self.span.clone()) {
                rows.push(self.row(self.next_row));
            }
            self.next_row += 1;
        }
        Ok((!rows.is_empty()).then_some(rows))
    }

    fn encoding(&self) -> &'static str {
        self.encoding
    }
}
