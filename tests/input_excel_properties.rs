//! Property tests of the spreadsheet reader: the cell → text rule on any cell never panics and keeps its forms, and any generated sheet of mixed cells (texts of only whitespace among them), blank rows and merged areas comes out one row per sheet row that shows something, numbered as the sheet numbers it, with the rows that cannot be read saying so.
//!
//! The sheets are real `.xlsx` files, zipped here by hand (stored, not compressed), so the test
//! needs no writer. A bounded number of cases runs in `cargo test`; `PROPTEST_CASES=100000 cargo
//! test --release --test input_excel_properties` runs a long search.

mod common;

use calamine::{CellErrorType, Data, ExcelDateTime, ExcelDateTimeType};
use msgbatch::campaign::{Encoding, InputFormat};
use msgbatch::input::{self, cell_text, CellProblem, ColumnSpec, RawRow, Unreadable};
use proptest::prelude::*;
use std::path::Path;

// ---------------------------------------------------------------------------------------------
// The cell → text rule.

fn error_type() -> impl Strategy<Value = CellErrorType> {
    prop::sample::select(vec![
        CellErrorType::Div0,
        CellErrorType::NA,
        CellErrorType::Name,
        CellErrorType::Null,
        CellErrorType::Num,
        CellErrorType::Ref,
        CellErrorType::Value,
        CellErrorType::GettingData,
    ])
}

fn any_cell() -> impl Strategy<Value = Data> {
    let serial = prop_oneof![
        4 => 0.0..2_958_466.0f64,
        1 => any::<f64>(),
        1 => prop::sample::select(vec![0.0, 59.0, 60.0, 60.5, 61.0, 0.999_999_999, 2_958_465.999_999_9]),
    ];
    prop_oneof![
        Just(Data::Empty),
        any::<f64>().prop_map(Data::Float),
        (-1e16..1e16f64).prop_map(|n| Data::Float(n.trunc())),
        any::<i64>().prop_map(Data::Int),
        any::<bool>().prop_map(Data::Bool),
        ".{0,12}".prop_map(Data::String),
        (serial, any::<bool>(), any::<bool>()).prop_map(|(serial, duration, is_1904)| {
            let kind = if duration {
                ExcelDateTimeType::TimeDelta
            } else {
                ExcelDateTimeType::DateTime
            };
            Data::DateTime(ExcelDateTime::new(serial, kind, is_1904))
        }),
        "[0-9T:.-]{0,20}".prop_map(Data::DateTimeIso),
        "P[0-9THMS]{0,10}".prop_map(Data::DurationIso),
        error_type().prop_map(Data::Error),
    ]
}

fn is_date_or_moment(text: &str) -> bool {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| bytes[range].iter().all(u8::is_ascii_digit);
    let date =
        bytes.len() >= 10 && digits(0..4) && bytes[4] == b'-' && digits(5..7) && bytes[7] == b'-' && digits(8..10);
    date && (bytes.len() == 10 || (bytes[10] == b'T' && text.ends_with("+09:00")))
}

fn is_time(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() >= 8
        && bytes[2] == b':'
        && bytes[5] == b':'
        && text[..8].bytes().filter(u8::is_ascii_digit).count() == 6
}

proptest! {
    #![proptest_config(common::proptest_config(2000))]

    #[test]
    fn any_cell_has_a_text_or_says_why_not(cell in any_cell()) {
        let text = cell_text(&cell);
        match (&cell, &text) {
            (Data::Empty, _) => prop_assert_eq!(text, Ok(None)),
            (Data::String(value), _) if value.is_empty() => prop_assert_eq!(text, Ok(None)),
            (Data::Error(error), _) => prop_assert_eq!(text, Err(CellProblem::Error(error.to_string()))),
            (_, Ok(None)) => prop_assert!(false, "only an empty cell is empty: {:?}", cell),
            (Data::Float(number), Ok(Some(text))) if number.fract() == 0.0 && number.abs() < 1e15 => {
                prop_assert_eq!(text.parse::<i64>().ok(), Some(*number as i64), "a whole number is its digits");
            }
            (Data::Float(number), Ok(Some(text))) if number.is_finite() => {
                prop_assert_eq!(text.parse::<f64>().ok(), Some(*number), "a number reads back as itself");
            }
            (Data::String(value), Ok(Some(text))) => prop_assert_eq!(value, text),
            (Data::String(value), Err(_)) => prop_assert!(value.contains('\0')),
            (Data::DateTime(moment), result) if moment.is_datetime() => {
                let serial = moment.as_f64();
                match result {
                    Ok(Some(text)) if serial < 1.0 => prop_assert!(is_time(text), "{} → {}", serial, text),
                    Ok(Some(text)) => prop_assert!(is_date_or_moment(text), "{} → {}", serial, text),
                    Err(CellProblem::NotText(_)) => prop_assert!(
                        !(0.0..2_958_466.0).contains(&serial) || (!moment_is_1904(moment) && serial.floor() == 60.0),
                        "only dates Excel cannot show, or its 1900-02-29, have no text: {}", serial
                    ),
                    other => prop_assert!(false, "{:?} → {:?}", cell, other),
                }
            }
            (Data::DateTime(_), result) => {
                let text = result.clone().expect("a duration always has a text").expect("not empty");
                prop_assert!(text.starts_with("P") || text.starts_with("-P"), "{}", text);
            }
            (_, Ok(Some(_))) => {}
            (_, Err(problem)) => prop_assert!(false, "{:?} → {:?}", cell, problem),
        }
    }
}

/// Whether a date-time counts from 1904 (no 1900-02-29 there): `Debug` is the only way to see it.
fn moment_is_1904(moment: &ExcelDateTime) -> bool {
    format!("{moment:?}").contains("is_1904: true")
}

// ---------------------------------------------------------------------------------------------
// Whole sheets.

/// A cell as the generated sheet holds it.
#[derive(Debug, Clone)]
enum Cell {
    Empty,
    Number(f64),
    Text(String),
    /// A text of only whitespace, written as openpyxl writes it: without `xml:space="preserve"`.
    Whitespace(String),
    Bool(bool),
    Error(&'static str),
    /// A date-time serial with a style: 1 date, 2 date and time, 3 duration.
    Styled(f64, u8),
    Formula {
        saved: Option<f64>,
    },
}

impl Cell {
    fn xml(&self, reference: &str) -> String {
        match self {
            Cell::Empty => String::new(),
            Cell::Number(n) => format!("<c r=\"{reference}\"><v>{n}</v></c>"),
            Cell::Text(text) => {
                let escaped = text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
                format!("<c r=\"{reference}\" t=\"inlineStr\"><is><t xml:space=\"preserve\">{escaped}</t></is></c>")
            }
            Cell::Whitespace(text) => format!("<c r=\"{reference}\" t=\"inlineStr\"><is><t>{text}</t></is></c>"),
            Cell::Bool(b) => format!("<c r=\"{reference}\" t=\"b\"><v>{}</v></c>", u8::from(*b)),
            Cell::Error(code) => format!("<c r=\"{reference}\" t=\"e\"><v>{code}</v></c>"),
            Cell::Styled(serial, style) => format!("<c r=\"{reference}\" s=\"{style}\"><v>{serial}</v></c>"),
            Cell::Formula { saved: Some(n) } => format!("<c r=\"{reference}\"><f>1+1</f><v>{n}</v></c>"),
            Cell::Formula { saved: None } => format!("<c r=\"{reference}\"><f>1+1</f></c>"),
        }
    }

    /// Whether the cell shows anything in Excel; a formula without a saved value might.
    fn shows_something(&self) -> bool {
        match self {
            Cell::Empty => false,
            Cell::Text(text) => !text.is_empty(),
            _ => true,
        }
    }

    /// Whether this cell, in a mapped column (`phone`: the phone column), makes its row unreadable.
    fn spoils(&self, phone: bool) -> bool {
        match self {
            Cell::Error(_) | Cell::Formula { saved: None } => true,
            Cell::Number(n) => phone && n.fract() != 0.0,
            Cell::Formula { saved: Some(n) } => phone && n.fract() != 0.0,
            // 1900-02-29 does not exist.
            Cell::Styled(serial, 1 | 2) => serial.floor() == 60.0,
            _ => false,
        }
    }
}

fn sheet_cell() -> impl Strategy<Value = Cell> {
    prop_oneof![
        4 => Just(Cell::Empty),
        2 => (1_000_000_000u64..1_099_999_999).prop_map(|n| Cell::Number(n as f64)),
        1 => (-1e6..1e6f64).prop_map(Cell::Number),
        3 => "[a-z0-9가-힣 &<>-]{0,8}".prop_map(Cell::Text),
        1 => "[ \t\n]{1,3}".prop_map(Cell::Whitespace),
        1 => any::<bool>().prop_map(Cell::Bool),
        1 => prop::sample::select(vec!["#N/A", "#DIV/0!", "#REF!", "#VALUE!"]).prop_map(Cell::Error),
        1 => (0.0..80_000.0f64, 1u8..=3).prop_map(|(serial, style)| Cell::Styled(serial, style)),
        1 => prop::option::of(0.0..10.0f64).prop_map(|saved| Cell::Formula { saved }),
    ]
}

/// Data rows of 2 to 4 cells (the 4th column is not mapped); about one row in five blank.
fn sheet_rows() -> impl Strategy<Value = Vec<Vec<Cell>>> {
    let row = prop_oneof![
        1 => Just(Vec::new()),
        4 => prop::collection::vec(sheet_cell(), 2..=4),
    ];
    prop::collection::vec(row, 0..40)
}

/// A merged area: its first data row (0-based among the generated rows) and column, its height
/// and width.
#[derive(Debug, Clone, Copy)]
struct Merge {
    row: usize,
    column: usize,
    height: usize,
    width: usize,
}

impl Merge {
    /// Whether the merge hides the cell: inside the area, and not its first cell.
    fn hides(&self, row: usize, column: usize) -> bool {
        let inside = (self.row..self.row + self.height).contains(&row)
            && (self.column..self.column + self.width).contains(&column);
        inside && (row, column) != (self.row, self.column)
    }

    fn overlaps(&self, other: &Merge) -> bool {
        self.row < other.row + other.height
            && other.row < self.row + self.height
            && self.column < other.column + other.width
            && other.column < self.column + self.width
    }

    fn reference(&self) -> String {
        let corner = |row: usize, column: usize| format!("{}{}", column_letter(column), row + 2);
        format!(
            "{}:{}",
            corner(self.row, self.column),
            corner(self.row + self.height - 1, self.column + self.width - 1)
        )
    }
}

/// Up to three merged areas among 40 rows and 4 columns, none overlapping another (Excel
/// refuses that); the cells they hide keep their values, as LibreOffice writes them.
fn merges() -> impl Strategy<Value = Vec<Merge>> {
    let merge = (0usize..40, 0usize..4, 1usize..=3, 1usize..=2).prop_map(|(row, column, height, width)| Merge {
        row,
        column,
        height,
        width: width.min(4 - column),
    });
    prop::collection::vec(merge, 0..=3).prop_map(|merges| {
        let mut kept: Vec<Merge> = Vec::new();
        for merge in merges {
            if merge.height * merge.width > 1 && !kept.iter().any(|other| other.overlaps(&merge)) {
                kept.push(merge);
            }
        }
        kept
    })
}

/// The rows as the sheet shows them: a cell a merge hides is empty.
fn shown(rows: &[Vec<Cell>], merges: &[Merge]) -> Vec<Vec<Cell>> {
    rows.iter()
        .enumerate()
        .map(|(row, cells)| {
            cells
                .iter()
                .enumerate()
                .map(
                    |(column, cell)| match merges.iter().any(|merge| merge.hides(row, column)) {
                        true => Cell::Empty,
                        false => cell.clone(),
                    },
                )
                .collect()
        })
        .collect()
}

fn column_letter(index: usize) -> char {
    (b'A' + index as u8) as char
}

fn sheet_xml(rows: &[Vec<Cell>], merges: &[Merge]) -> String {
    let header = ["phone", "name", "coupon", "memo"];
    let mut xml = String::from("<row r=\"1\">");
    for (index, title) in header.iter().enumerate() {
        xml.push_str(&Cell::Text(title.to_string()).xml(&format!("{}1", column_letter(index))));
    }
    xml.push_str("</row>");
    for (index, cells) in rows.iter().enumerate() {
        let row = index + 2;
        let body: String = cells
            .iter()
            .enumerate()
            .map(|(column, cell)| cell.xml(&format!("{}{row}", column_letter(column))))
            .collect();
        if !body.is_empty() {
            xml.push_str(&format!("<row r=\"{row}\">{body}</row>"));
        }
    }
    let merged: String = merges
        .iter()
        .map(|merge| format!("<mergeCell ref=\"{}\"/>", merge.reference()))
        .collect();
    let merged = match merges.len() {
        0 => String::new(),
        count => format!("<mergeCells count=\"{count}\">{merged}</mergeCells>"),
    };
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><worksheet xmlns=\"{MAIN}\"><sheetData>{xml}</sheetData>{merged}</worksheet>"
    )
}

const MAIN: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";

/// An `.xlsx` of one sheet `s`, with the styles the cells use: 1 date, 2 date and time, 3 duration.
fn xlsx(sheet: &str) -> Vec<u8> {
    let relationships = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
    let package = "http://schemas.openxmlformats.org/package/2006/relationships";
    let files = [
        (
            "[Content_Types].xml",
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/><Default Extension=\"xml\" ContentType=\"application/xml\"/><Override PartName=\"/xl/workbook.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml\"/><Override PartName=\"/xl/worksheets/sheet1.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml\"/><Override PartName=\"/xl/styles.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml\"/></Types>".to_string(),
        ),
        (
            "_rels/.rels",
            format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Relationships xmlns=\"{package}\"><Relationship Id=\"rId1\" Type=\"{relationships}/officeDocument\" Target=\"xl/workbook.xml\"/></Relationships>"),
        ),
        (
            "xl/workbook.xml",
            format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><workbook xmlns=\"{MAIN}\" xmlns:r=\"{relationships}\"><sheets><sheet name=\"s\" sheetId=\"1\" r:id=\"rId1\"/></sheets></workbook>"),
        ),
        (
            "xl/_rels/workbook.xml.rels",
            format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Relationships xmlns=\"{package}\"><Relationship Id=\"rId1\" Type=\"{relationships}/worksheet\" Target=\"worksheets/sheet1.xml\"/><Relationship Id=\"rId2\" Type=\"{relationships}/styles\" Target=\"styles.xml\"/></Relationships>"),
        ),
        (
            "xl/styles.xml",
            format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><styleSheet xmlns=\"{MAIN}\"><numFmts count=\"1\"><numFmt numFmtId=\"164\" formatCode=\"[h]:mm:ss\"/></numFmts><cellXfs count=\"4\"><xf numFmtId=\"0\"/><xf numFmtId=\"14\" applyNumberFormat=\"1\"/><xf numFmtId=\"22\" applyNumberFormat=\"1\"/><xf numFmtId=\"164\" applyNumberFormat=\"1\"/></cellXfs></styleSheet>"),
        ),
        ("xl/worksheets/sheet1.xml", sheet.to_string()),
    ];
    stored_zip(&files)
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A zip archive of `files`, stored without compression.
fn stored_zip(files: &[(&str, String)]) -> Vec<u8> {
    const DOS_DATE_1980_01_01: u16 = 0x0021;
    let mut out = Vec::new();
    let mut directory = Vec::new();
    for (name, content) in files {
        let (name, content) = (name.as_bytes(), content.as_bytes());
        let offset = out.len() as u32;
        let crc = crc32(content);
        let size = content.len() as u32;
        // version 20, no flags, stored, time 0, date; crc, sizes, name length, no extra field
        let fields = |out: &mut Vec<u8>| {
            for half in [20u16, 0, 0, 0, DOS_DATE_1980_01_01] {
                out.extend_from_slice(&half.to_le_bytes());
            }
            for word in [crc, size, size] {
                out.extend_from_slice(&word.to_le_bytes());
            }
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(&0u16.to_le_bytes());
        };
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        fields(&mut out);
        out.extend_from_slice(name);
        out.extend_from_slice(content);
        directory.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        directory.extend_from_slice(&20u16.to_le_bytes());
        fields(&mut directory);
        // comment length, disk, internal and external attributes, offset of the local header
        for half in [0u16, 0, 0] {
            directory.extend_from_slice(&half.to_le_bytes());
        }
        directory.extend_from_slice(&0u32.to_le_bytes());
        directory.extend_from_slice(&offset.to_le_bytes());
        directory.extend_from_slice(name);
    }
    let directory_offset = out.len() as u32;
    out.extend_from_slice(&directory);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    for half in [0u16, 0, files.len() as u16, files.len() as u16] {
        out.extend_from_slice(&half.to_le_bytes());
    }
    out.extend_from_slice(&(directory.len() as u32).to_le_bytes());
    out.extend_from_slice(&directory_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

fn read_sheet(path: &Path, batch: usize) -> Vec<RawRow> {
    let spec = ColumnSpec {
        phone: "phone".into(),
        name: Some("name".into()),
        vars: vec!["coupon".into()],
    };
    let mut source = input::open_sheet(path, InputFormat::Xlsx, Encoding::Auto, None, &spec).expect("the sheet opens");
    let mut rows = Vec::new();
    while let Some(more) = source.next_batch(batch).expect("every batch reads") {
        assert!(
            !more.is_empty() && more.len() <= batch,
            "batches hold 1 to {batch} rows"
        );
        rows.extend(more);
    }
    rows
}

proptest! {
    #![proptest_config(common::proptest_config(150))]

    #[test]
    fn a_sheet_gives_one_row_per_non_blank_sheet_row_at_its_number(rows in sheet_rows(), merges in merges(), batch in 1usize..7) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("generated.xlsx");
        std::fs::write(&path, xlsx(&sheet_xml(&rows, &merges))).unwrap();
        let read = read_sheet(&path, batch);
        // What a merge hides is neither a row nor a value.
        let shown = shown(&rows, &merges);
        let expected: Vec<(u64, &Vec<Cell>)> = shown
            .iter()
            .enumerate()
            .filter(|(_, cells)| cells.iter().any(Cell::shows_something))
            .map(|(index, cells)| (index as u64 + 2, cells))
            .collect();
        prop_assert_eq!(
            read.iter().map(|row| row.row).collect::<Vec<_>>(),
            expected.iter().map(|(number, _)| *number).collect::<Vec<_>>()
        );
        for (row, (_, cells)) in read.iter().zip(&expected) {
            let mapped = &cells[..cells.len().min(3)];
            let spoiled = mapped.iter().enumerate().any(|(column, cell)| cell.spoils(column == 0));
            prop_assert_eq!(row.unreadable.is_some(), spoiled, "row {}: {:?} → {:?}", row.row, cells, row);
            if let Some(unreadable) = row.unreadable.as_deref() {
                prop_assert!(["phone", "name", "coupon"].contains(&unreadable.column()));
                if let Unreadable::PhoneFraction { column, .. } = unreadable {
                    prop_assert_eq!(column, "phone");
                }
                continue;
            }
            let values = [&row.phone, &row.name, &row.vars[0]];
            for (cell, value) in mapped.iter().zip(values) {
                match cell {
                    Cell::Text(text) if text.is_empty() => prop_assert_eq!(value, &None),
                    Cell::Text(text) | Cell::Whitespace(text) => prop_assert_eq!(value.as_deref(), Some(text.as_str())),
                    Cell::Empty => prop_assert_eq!(value, &None),
                    Cell::Number(n) if n.fract() == 0.0 => prop_assert_eq!(value.as_deref().map(String::from), Some(format!("{}", *n as i64))),
                    _ => prop_assert!(value.is_some(), "{:?} has a value", cell),
                }
            }
        }
    }
}
