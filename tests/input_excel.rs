//! Spreadsheet recipients as openpyxl, pandas, odfpy and xlwt write them, through the reader and the `msgbatch` binary: every cell type's text, formulas with and without their saved value, error cells, sheets by name, blank rows, sheet row numbers in rejects and reports, and the Excel sample sent through the sandbox.

mod common;

use common::process::{copy_samples, exec, msgbatch_at, path_str, Outcome};
use msgbatch::campaign::{Encoding, InputFormat};
use msgbatch::input::{self, ColumnSpec, InputError, RawRow, Unreadable};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const DAYTIME: &str = "2026-11-23T11:00:00+09:00";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// Every row of `path` (its `sheet`, else the first) with `spec`, or the error that refused it.
fn read(path: &Path, format: InputFormat, sheet: Option<&str>, spec: &ColumnSpec) -> Result<Vec<RawRow>, InputError> {
    let mut source = input::open_sheet(path, format, Encoding::Auto, sheet, spec)?;
    let mut rows = Vec::new();
    while let Some(batch) = source.next_batch(2)? {
        rows.extend(batch);
    }
    Ok(rows)
}

fn phone_only(column: &str) -> ColumnSpec {
    ColumnSpec {
        phone: column.into(),
        name: None,
        vars: Vec::new(),
    }
}

/// `column` of a fixture read as a variable (the phone column being `phone`), row by row.
fn variable(file: &str, format: InputFormat, phone: &str, column: &str) -> Vec<(u64, Option<String>)> {
    let spec = ColumnSpec {
        phone: phone.into(),
        name: None,
        vars: vec![column.into()],
    };
    let rows = read(&fixture(file), format, None, &spec).unwrap_or_else(|e| panic!("{column}: {e}"));
    for row in &rows {
        assert_eq!(row.unreadable, None, "{column}: row {}", row.row);
    }
    rows.into_iter()
        .map(|row| (row.row, row.vars[0].as_deref().map(String::from)))
        .collect()
}

/// Rows 2, 3 and 4 holding `values` (`None`: an empty cell).
fn rows_2_to_4(values: [Option<&str>; 3]) -> Vec<(u64, Option<String>)> {
    (2..).zip(values.map(|v| v.map(str::to_string))).collect()
}

fn cell_error(column: &str, detail: &str) -> Option<Box<Unreadable>> {
    Some(Box::new(Unreadable::CellError {
        column: column.into(),
        detail: detail.into(),
    }))
}

// ---------------------------------------------------------------------------------------------
// The text of every kind of cell.

#[test]
fn every_kind_of_cell_becomes_its_text_at_the_sheets_row_numbers() {
    let file = "excel_types.xlsx";
    let xlsx = InputFormat::Xlsx;
    let expected: &[(&str, [Option<&str>; 3])] = &[
        // A phone typed as a number lost its leading zero; normalisation gives it back.
        (
            "phone_number",
            [Some("1020001001"), Some("1020001002"), Some("1020001003")],
        ),
        (
            "phone_text",
            [Some("010-2000-1001"), Some("010-2000-1002"), Some("010-2000-1003")],
        ),
        ("date", [Some("2026-11-23"), Some("1999-01-02"), None]),
        (
            "datetime",
            [
                Some("2026-11-23T09:30:00+09:00"),
                Some("2026-01-02T03:04:05.678+09:00"),
                None,
            ],
        ),
        ("time", [Some("09:30:00"), Some("23:59:59"), None]),
        ("duration", [Some("PT1H30M"), Some("P2DT1S"), None]),
        ("bool", [Some("true"), Some("false"), None]),
        ("number", [Some("15000"), Some("2500.5"), None]),
        ("big_number", [Some("12345678901234"), Some("-7"), None]),
        ("text", [Some("김민준"), Some(" 띄어 쓴 값 "), None]),
        // As a variable, a number with a fraction is only a number.
        (
            "phone_fraction",
            [Some("1020001001"), Some("1012.345678"), Some("1020001003")],
        ),
    ];
    for (column, values) in expected {
        assert_eq!(
            variable(file, xlsx, "phone_text", column),
            rows_2_to_4(*values),
            "{column}"
        );
    }
}

#[test]
fn a_formula_gives_its_saved_value_and_one_saved_without_it_rejects_its_row() {
    let spec = ColumnSpec {
        phone: "phone_number".into(),
        name: None,
        vars: vec!["formula_saved".into(), "formula_unsaved".into()],
    };
    let rows = read(&fixture("excel_types.xlsx"), InputFormat::Xlsx, None, &spec).unwrap();
    assert_eq!(rows[0].vars[0].as_deref(), Some("1020001001"));
    assert_eq!(rows[1].vars[0].as_deref(), Some("WINTER10"));
    // The saved value of a lookup that found nothing is the error.
    assert_eq!(
        rows[2].unreadable,
        cell_error("formula_saved", "the cell holds the error #N/A")
    );
    for row in &rows[..2] {
        match row.unreadable.as_deref() {
            Some(Unreadable::CellError { column, detail }) if column == "formula_unsaved" => {
                let formula = format!("={}", ["A2*1", "A3*1"][row.row as usize - 2]);
                assert!(
                    detail.contains(&formula) && detail.contains("no saved value"),
                    "{detail}"
                );
            }
            other => panic!("row {}: {other:?}", row.row),
        }
        assert_eq!(row.vars[1], None);
    }
}

#[test]
fn an_error_cell_rejects_its_row_naming_the_error() {
    let spec = ColumnSpec {
        phone: "phone_text".into(),
        name: None,
        vars: vec!["error".into()],
    };
    let rows = read(&fixture("excel_types.xlsx"), InputFormat::Xlsx, None, &spec).unwrap();
    assert_eq!(rows[0].unreadable, cell_error("error", "the cell holds the error #N/A"));
    assert_eq!(
        rows[1].unreadable,
        cell_error("error", "the cell holds the error #DIV/0!")
    );
    assert_eq!(
        (rows[2].unreadable.as_ref(), rows[2].vars[0].as_deref()),
        (None, Some("ok"))
    );
}

#[test]
fn a_number_with_a_fraction_in_the_phone_column_is_no_phone() {
    let rows = read(
        &fixture("excel_types.xlsx"),
        InputFormat::Xlsx,
        None,
        &phone_only("phone_fraction"),
    )
    .unwrap();
    assert_eq!(rows[0].phone.as_deref(), Some("1020001001"));
    // 1012.345678 has the digits of 010-1234-5678: read as text it would pass.
    assert_eq!(
        rows[1].unreadable,
        Some(Box::new(Unreadable::PhoneFraction {
            column: "phone_fraction".into(),
            value: "1012.345678".into()
        }))
    );
    assert_eq!(rows[1].phone, None);
    assert_eq!(rows[2].unreadable, None);
}

/// The frame `make_excel_fixtures.py` saves through pandas, read back from `file`.
fn assert_the_pandas_frame(file: &str, format: InputFormat) {
    // Sheet row 4 is pandas' row of NaN: blank, no recipient, its number skipped.
    let rows = |values: [Option<&str>; 3]| -> Vec<(u64, Option<String>)> {
        [2, 3, 5]
            .into_iter()
            .zip(values.map(|v| v.map(str::to_string)))
            .collect()
    };
    assert_eq!(
        variable(file, format, "phone", "phone"),
        rows([Some("1020001001"), Some("1020001002"), Some("1020001003")])
    );
    // A datetime at midnight is written as the date it is.
    assert_eq!(
        variable(file, format, "phone", "joined"),
        rows([
            Some("2026-11-23T09:30:00+09:00"),
            Some("2026-01-02"),
            Some("2026-03-04T13:45:10+09:00")
        ])
    );
    assert_eq!(
        variable(file, format, "phone", "birthday"),
        rows([Some("1990-05-17"), Some("2000-02-29"), Some("1985-12-31")])
    );
    assert_eq!(
        variable(file, format, "phone", "amount"),
        rows([Some("15000"), Some("2500.5"), None])
    );
}

#[test]
fn pandas_writes_integer_phones_datetimes_dates_and_a_blank_row() {
    assert_the_pandas_frame("excel_pandas.xlsx", InputFormat::Xlsx);
}

#[test]
fn ods_reads_as_the_same_values() {
    assert_the_pandas_frame("excel_pandas.ods", InputFormat::Ods);
}

#[test]
fn excel_97_files_read_too() {
    let file = "excel_old.xls";
    let xls = InputFormat::Xls;
    let two = |a: &str, b: &str| vec![(2, Some(a.to_string())), (3, Some(b.to_string()))];
    assert_eq!(
        variable(file, xls, "phone", "phone"),
        two("1020001001", "010-2000-1002")
    );
    assert_eq!(variable(file, xls, "phone", "name"), two("김민준", "이서연"));
    assert_eq!(variable(file, xls, "phone", "joined"), two("2026-11-23", "1999-01-02"));
    assert_eq!(variable(file, xls, "phone", "vip"), two("true", "false"));
}

// ---------------------------------------------------------------------------------------------
// Sheets, headers and blank rows.

fn list_spec() -> ColumnSpec {
    ColumnSpec {
        phone: "phone".into(),
        name: Some("name".into()),
        vars: vec!["coupon".into()],
    }
}

#[test]
fn a_named_sheet_is_read_from_its_first_non_blank_row_with_blank_rows_skipped() {
    let rows = read(
        &fixture("excel_sheets.xlsx"),
        InputFormat::Xlsx,
        Some("명단"),
        &list_spec(),
    )
    .unwrap();
    // The header is on sheet row 3, from column B; row 6 is blank; rows 12 to 29 hold only
    // formatting, no recipients.
    assert_eq!(rows.iter().map(|r| r.row).collect::<Vec<_>>(), [4, 5, 7, 8, 9]);
    assert_eq!(rows[0].phone.as_deref(), Some("1020001001"));
    assert_eq!(rows[1].name.as_deref(), Some("이서연"));
    assert_eq!(
        rows[3].unreadable,
        cell_error("coupon", "the cell holds the error #N/A")
    );
    // Row 9 holds only an unmapped memo: a row without a phone, rejected as such by the plan.
    assert_eq!((rows[4].phone.as_ref(), rows[4].unreadable.as_ref()), (None, None));
}

#[test]
fn a_row_holding_only_a_line_break_is_a_row_and_one_of_empty_text_is_not() {
    let spec = ColumnSpec {
        phone: "phone".into(),
        name: Some("name".into()),
        vars: vec!["memo".into()],
    };
    // openpyxl writes a text of only whitespace without xml:space="preserve".
    let rows = read(&fixture("excel_line_break.xlsx"), InputFormat::Xlsx, None, &spec).unwrap();
    let seen: Vec<(u64, Option<&str>, Option<&str>)> = rows
        .iter()
        .map(|row| (row.row, row.phone.as_deref(), row.vars[0].as_deref()))
        .collect();
    // Row 4 holds only empty text: no recipient, as an empty line in a CSV file.
    assert_eq!(
        seen,
        [
            (2, Some("010-2000-1001"), None),
            (3, None, Some("\n")),
            (5, Some("\n"), None),
            (6, Some("010-2000-1006"), None),
        ]
    );
    assert!(rows.iter().all(|row| row.unreadable.is_none()), "{rows:?}");
}

#[test]
fn a_merged_area_reads_as_the_sheet_shows_it_in_every_format() {
    let spec = ColumnSpec {
        phone: "phone".into(),
        name: Some("name".into()),
        vars: vec!["coupon".into(), "memo".into()],
    };
    // LibreOffice keeps the text of the cells a merge hides (B4 under B3:B4, D3 under C3:D3),
    // and writes it to each format.
    for (file, format) in [
        ("excel_merged.ods", InputFormat::Ods),
        ("excel_merged.xlsx", InputFormat::Xlsx),
        ("excel_merged.xls", InputFormat::Xls),
    ] {
        let rows = read(&fixture(file), format, None, &spec).unwrap();
        // Each row's number, and its phone, name, coupon and memo.
        let seen: Vec<(u64, [Option<&str>; 4])> = rows
            .iter()
            .map(|row| {
                let values = [&row.phone, &row.name, &row.vars[0], &row.vars[1]];
                (row.row, values.map(|value| value.as_deref()))
            })
            .collect();
        // Row 4 shows nothing (its name cell is under row 3's): no row; the hidden memo is no
        // value, and the merged value is not copied into the cells it covers.
        assert_eq!(
            seen,
            [
                (2, [Some("010-2000-1001"), Some("김민준"), Some("WINTER10"), None]),
                (3, [Some("010-2000-1002"), Some("이서연"), Some("WINTER15"), None]),
                (5, [Some("010-2000-1005"), Some("박지호"), Some("WINTER10"), None]),
            ],
            "{file}"
        );
    }
}

#[test]
fn the_first_sheet_is_read_when_none_is_named() {
    let error = read(&fixture("excel_sheets.xlsx"), InputFormat::Xlsx, None, &list_spec()).unwrap_err();
    assert!(
        matches!(&error, InputError::MissingColumn { available, .. } if available.starts_with("고객 명단은")),
        "the notes sheet was read: {error}"
    );
    // A hidden first sheet (a lookup table) is not what a person sees first.
    let rows = read(
        &fixture("excel_hidden_first.xlsx"),
        InputFormat::Xlsx,
        None,
        &phone_only("phone"),
    )
    .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].phone.as_deref(), Some("010-2000-1001"));
}

#[test]
fn an_unknown_sheet_is_refused_naming_the_sheets_there_are() {
    let path = fixture("excel_sheets.xlsx");
    let error = read(&path, InputFormat::Xlsx, Some("고객"), &list_spec()).unwrap_err();
    assert!(
        matches!(&error, InputError::UnknownSheet { sheet, .. } if sheet == "고객"),
        "{error}"
    );
    let message = error.to_string();
    assert!(
        message.contains("recipients.sheet")
            && message.contains("\"안내\", \"명단\"")
            && message.contains("excel_sheets.xlsx"),
        "{message}"
    );
    // Excel itself does not tell sheet names apart by case.
    let rows = read(
        &fixture("excel_types.xlsx"),
        InputFormat::Xlsx,
        Some("TYPES"),
        &phone_only("phone_text"),
    )
    .unwrap();
    assert_eq!(rows.len(), 3);
}

#[test]
fn files_that_are_not_spreadsheets_are_refused_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(fixture("excel_types.xlsx")).unwrap();
    let path = dir.path().join("broken.xlsx");
    let mut damaged = vec![b"phone\n01020001001\n".to_vec(), Vec::new()];
    for cut in [4, bytes.len() / 3, bytes.len() / 2, bytes.len() - 30, bytes.len() - 1] {
        damaged.push(bytes[..cut].to_vec());
    }
    for at in (30..bytes.len() - 22).step_by(97) {
        let mut copy = bytes.clone();
        for byte in &mut copy[at..at + 5] {
            *byte ^= 0x5A;
        }
        damaged.push(copy);
    }
    for (case, content) in damaged.iter().enumerate() {
        std::fs::write(&path, content).unwrap();
        match read(&path, InputFormat::Xlsx, None, &phone_only("phone_text")) {
            Ok(rows) => assert_eq!(
                rows.iter().map(|r| r.row).collect::<Vec<_>>(),
                [2, 3, 4],
                "case {case}: read, then every row"
            ),
            Err(InputError::Spreadsheet { path: named, .. }) => assert_eq!(named, path, "case {case}"),
            Err(InputError::MissingColumn { .. }) => {}
            Err(other) => panic!("case {case}: {other}"),
        }
    }
    let missing = read(
        &dir.path().join("gone.xlsx"),
        InputFormat::Xlsx,
        None,
        &phone_only("phone"),
    );
    assert!(matches!(missing, Err(InputError::Open { .. })));
}

// ---------------------------------------------------------------------------------------------
// The binary: campaigns over spreadsheets.

/// An SMS campaign over `recipients` with `settings` added to its `[recipients]`.
fn campaign(dir: &Path, recipients: &str, settings: &str) -> PathBuf {
    let path = dir.join("campaign.toml");
    std::fs::write(
        &path,
        format!(
            "kind = \"sms\"\n[message]\nservice = 3001\ntext = \"[데모몰] #{{name}}님 #{{VAR1}}\"\ncallback_no = \"0212345678\"\n[recipients]\npath = \"{recipients}\"\nname = \"name\"\nvariables = {{ VAR1 = \"coupon\" }}\n{settings}\n"
        ),
    )
    .unwrap();
    path
}

fn msgbatch(dir: &Path, args: &[&str]) -> Outcome {
    exec(msgbatch_at(dir, DAYTIME), args)
}

fn u(value: &Value, key: &str) -> u64 {
    value[key].as_u64().unwrap_or_else(|| panic!("`{key}` in {value:#}"))
}

/// A CSV file's records as (first field as a number, the other fields).
fn csv_records(path: &Path) -> Vec<(u64, Vec<String>)> {
    let mut reader = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    reader
        .records()
        .map(|record| {
            let record = record.unwrap();
            (
                record[0].parse().unwrap(),
                record.iter().skip(1).map(str::to_string).collect(),
            )
        })
        .collect()
}

/// `run` then `report`, both exit 0; the report's summary, checked to balance.
fn run_and_report(dir: &Path, campaign: &Path, run_dir: &Path) -> Value {
    msgbatch(dir, &["run", path_str(campaign), "--out", path_str(run_dir), "--json"]).expect_code(0, "run");
    let summary = msgbatch(dir, &["report", path_str(run_dir), "--json"])
        .expect_code(0, "report")
        .json();
    let status = &summary["status"];
    let parts: u64 = ["rejected", "duplicates", "suppressed", "sent", "uncertain", "pending"]
        .iter()
        .map(|bucket| u(status, bucket))
        .sum();
    assert_eq!(u(status, "rows"), parts, "the accounting balances: {status:#}");
    summary
}

#[test]
fn rejects_and_the_report_name_the_sheets_own_row_numbers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("excel_sheets.xlsx"), dir.path().join("people.xlsx")).unwrap();
    let campaign = campaign(dir.path(), "people.xlsx", "sheet = \"명단\"");
    let summary = run_and_report(dir.path(), &campaign, &dir.path().join("run"));
    assert_eq!(
        (u(&summary["status"], "rows"), u(&summary["status"], "sent")),
        (5, 3),
        "{summary:#}"
    );
    let rejects = csv_records(&dir.path().join("run/rejects.csv"));
    let rejects: Vec<(u64, &str, &str, &str)> = rejects
        .iter()
        .map(|(row, fields)| (*row, fields[0].as_str(), fields[1].as_str(), fields[2].as_str()))
        .collect();
    assert_eq!(
        rejects,
        [
            (8, "coupon", "cell_error", "the cell holds the error #N/A"),
            (9, "phone", "phone_missing", "empty"),
        ]
    );
    let report = csv_records(&dir.path().join("run/report.csv"));
    let acceptance: BTreeMap<u64, &str> = report.iter().map(|(row, fields)| (*row, fields[8].as_str())).collect();
    assert_eq!(acceptance.keys().copied().collect::<Vec<_>>(), [4, 5, 7, 8, 9]);
    assert_eq!(
        (acceptance[&8], acceptance[&9]),
        ("REJECTED:cell_error", "REJECTED:phone_missing")
    );
    for row in [4, 5, 7] {
        assert!(
            !acceptance[&row].starts_with("REJECTED"),
            "row {row} was sent: {acceptance:?}"
        );
    }
}

#[test]
fn an_unknown_sheet_or_a_sheet_for_a_csv_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("excel_sheets.xlsx"), dir.path().join("people.xlsx")).unwrap();
    let unknown = campaign(dir.path(), "people.xlsx", "sheet = \"Sheet1\"");
    let outcome = msgbatch(dir.path(), &["validate", path_str(&unknown)]).expect_code(2, "an unknown sheet");
    assert!(
        outcome.stderr.contains("people.xlsx") && outcome.stderr.contains("\"안내\", \"명단\""),
        "{}",
        outcome.show()
    );
    std::fs::write(dir.path().join("people.csv"), "phone,name,coupon\n01020001001,김,C\n").unwrap();
    let on_csv = campaign(dir.path(), "people.csv", "sheet = \"명단\"");
    let outcome = msgbatch(dir.path(), &["validate", path_str(&on_csv)]).expect_code(2, "a sheet for a CSV");
    assert!(outcome.stderr.contains("recipients.sheet"), "{}", outcome.show());
}

/// `samples/excel-campaign.toml` run and reported in `dir`: the campaign, the run directory and the summary.
fn sample_run(dir: &Path) -> (PathBuf, PathBuf, Value) {
    copy_samples(dir, &["excel-campaign.toml", "recipients.xlsx", "suppression.csv"]);
    let campaign = dir.join("excel-campaign.toml");
    let run_dir = dir.join("run");
    let summary = run_and_report(dir, &campaign, &run_dir);
    (campaign, run_dir, summary)
}

#[test]
fn the_excel_sample_sends_through_the_sandbox_and_its_report_balances() {
    let dir = tempfile::tempdir().unwrap();
    let (campaign, run_dir, summary) = sample_run(dir.path());
    let status = &summary["status"];
    // 25 recipients; the blank sheet row after the 12th is none.
    assert_eq!(u(status, "rows"), 25, "{status:#}");
    assert_eq!(
        (u(status, "sent"), u(status, "suppressed"), u(status, "duplicates")),
        (18, 2, 1),
        "{status:#}"
    );
    let rejects: BTreeMap<u64, (String, String)> = csv_records(&run_dir.join("rejects.csv"))
        .into_iter()
        .map(|(row, fields)| (row, (fields[0].clone(), fields[1].clone())))
        .collect();
    // Sheet rows: the header is row 1, the 8th recipient row 9; after the blank row 14 the 13th
    // recipient is row 15 and the 25th row 27.
    let expected: BTreeMap<u64, (String, String)> = [
        (9, ("coupon", "cell_error")),
        (11, ("phone", "phone_invalid")),
        (12, ("phone", "phone_missing")),
        (27, ("message", "unencodable")),
    ]
    .into_iter()
    .map(|(row, (column, reason))| (row, (column.to_string(), reason.to_string())))
    .collect();
    assert_eq!(rejects, expected);
    // Phones typed as numbers went out with their leading zero; the date cell filled #{VAR2}.
    let report = csv_records(&run_dir.join("report.csv"));
    let first = report.iter().find(|(row, _)| *row == 2).expect("row 2");
    assert_eq!(first.1[0], "01020000001", "{first:?}");
    let preview = msgbatch(
        dir.path(),
        &["validate", path_str(&campaign), "--preview", "1", "--json"],
    )
    .expect_code(0, "preview")
    .json();
    assert!(preview.to_string().contains("2026-12-31까지"), "{preview:#}");
}

#[test]
fn a_retry_of_an_excel_campaign_reads_its_csv() {
    let dir = tempfile::tempdir().unwrap();
    let (_, run_dir, _) = sample_run(dir.path());
    let retry = dir.path().join("retry");
    msgbatch(
        dir.path(),
        &[
            "retry",
            path_str(&run_dir),
            "--only",
            "failed",
            "--out",
            path_str(&retry),
        ],
    )
    .expect_code(0, "retry");
    let json = msgbatch(
        dir.path(),
        &["validate", path_str(&retry.join("campaign.toml")), "--json"],
    )
    .expect_code(0, "the retry campaign validates")
    .json();
    // The one number the sandbox answers ERROR (…96); its expiry date cell became text.
    assert_eq!((u(&json, "rows"), u(&json, "valid")), (1, 1), "{json:#}");
    let subset = std::fs::read_to_string(retry.join("recipients.csv")).unwrap();
    assert!(subset.contains("01020000096,유나래,WINTER10,2026-12-31"), "{subset}");
}
