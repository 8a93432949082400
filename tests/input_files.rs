//! Recipients files as real tools write them, through the reader and the `msgbatch` binary: Parquet types from pyarrow, pandas and a spreadsheet, legacy annotations (parquet-mr's timestamps, Spark's INT96), columns of types polars cannot read, refused types and broken files; CSV with runaway quotes, binary content, ragged rows, NULs, duplicate headers, Latin-1 bytes, oversized fields and missing files.

mod common;

use common::process::{exec, msgbatch_at, path_str, Outcome};
use msgbatch::campaign::{Encoding, InputFormat};
use msgbatch::input::{self, ColumnSpec, InputError, RawRow, Unreadable};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const DAYTIME: &str = "2026-11-23T11:00:00+09:00";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// Every row of `path` with `column` as the phone column, or the error that refused it.
fn read_column(path: &Path, format: InputFormat, column: &str) -> Result<Vec<RawRow>, InputError> {
    let spec = ColumnSpec {
        phone: column.into(),
        name: None,
        vars: Vec::new(),
    };
    let mut source = input::open(path, format, Encoding::Auto, &spec)?;
    let mut rows = Vec::new();
    while let Some(batch) = source.next_batch(2)? {
        rows.extend(batch);
    }
    Ok(rows)
}

/// The values of `column` of a Parquet fixture, as text.
fn parquet_values(file: &str, column: &str) -> Vec<Option<String>> {
    let rows = read_column(&fixture(file), InputFormat::Parquet, column).unwrap_or_else(|e| panic!("{column}: {e}"));
    assert_eq!(
        rows.iter().map(|r| r.row).collect::<Vec<_>>(),
        [2, 3, 4],
        "{column}: every row, in order, numbered as a spreadsheet shows them"
    );
    for row in &rows {
        assert_eq!(row.unreadable, None, "{column}: row {}", row.row);
    }
    rows.into_iter().map(|r| r.phone.map(String::from)).collect()
}

fn some(values: &[&str]) -> Vec<Option<String>> {
    values.iter().map(|v| Some(v.to_string())).collect()
}

fn with_null(values: &[&str]) -> Vec<Option<String>> {
    let mut out = some(values);
    out.push(None);
    out
}

// ---------------------------------------------------------------------------------------------
// Parquet values, type by type.

#[test]
fn pyarrow_phone_columns_of_every_type_read_as_the_same_numbers() {
    let file = "pyarrow_types.parquet";
    for column in [
        "phone_decimal",
        "phone_int64",
        "phone_uint64",
        "phone_int32",
        "phone_float64",
    ] {
        assert_eq!(
            parquet_values(file, column),
            some(&["1020001001", "1020001002", "1020001003"]),
            "{column}"
        );
    }
    for column in ["phone_large_string", "phone_dictionary", "phone_binary"] {
        assert_eq!(
            parquet_values(file, column),
            some(&["010-2000-1001", "010-2000-1002", "010-2000-1003"]),
            "{column}"
        );
    }
}

#[test]
fn pyarrow_variable_types_become_text() {
    let file = "pyarrow_types.parquet";
    let expected: &[(&str, Vec<Option<String>>)] = &[
        ("name_large_binary", with_null(&["김민준", "이서연"])),
        ("name_fixed_binary", with_null(&["AB", "CD"])),
        ("date", with_null(&["2026-11-23", "1999-01-02"])),
        (
            "timestamp_naive_ms",
            with_null(&["2026-11-23T09:30:00+09:00", "2026-01-02T03:04:05.678+09:00"]),
        ),
        (
            "timestamp_seoul_us",
            with_null(&["2026-11-23T09:30:00+09:00", "2026-01-01T00:00:00.000005+09:00"]),
        ),
        (
            "timestamp_utc_ns",
            with_null(&["2026-11-23T09:30:00+09:00", "2027-01-01T05:00:00+09:00"]),
        ),
        (
            "timestamp_new_york_s",
            with_null(&["2026-11-23T09:30:00+09:00", "2026-07-02T00:00:00+09:00"]),
        ),
        ("time_ms", with_null(&["09:30:00", "23:59:59.250"])),
        ("time_us", with_null(&["00:00:01", "12:00:00.000005"])),
        ("duration_s", with_null(&["PT1M30S", "P1DT1H1M1S"])),
        ("duration_ms", with_null(&["PT1.5S", "-PT2S"])),
        (
            "uint64_big",
            with_null(&["9223372036854775813", "18446744073709551615"]),
        ),
        ("int8", with_null(&["-8", "127"])),
        ("int16", with_null(&["-16", "32767"])),
        ("uint8", with_null(&["8", "255"])),
        ("uint16", with_null(&["16", "65535"])),
        ("uint32", with_null(&["32", "4294967295"])),
        ("float32", with_null(&["1.5", "2"])),
        ("bool", with_null(&["true", "false"])),
        ("decimal_price", with_null(&["15000.00", "-0.05"])),
        (
            "decimal_wide",
            with_null(&["12345678901234567890123456789.123456789", "1.000000000"]),
        ),
        ("all_null", vec![None, None, None]),
    ];
    for (column, values) in expected {
        assert_eq!(&parquet_values(file, column), values, "{column}");
    }
}

#[test]
fn pandas_types_become_text() {
    let file = "pandas_types.parquet";
    assert_eq!(
        parquet_values(file, "phone"),
        some(&["1020001001", "1020001002", "1020001003"])
    );
    assert_eq!(parquet_values(file, "name"), some(&["김민준", "이서연", "박지호"]));
    assert_eq!(
        parquet_values(file, "sent_at"),
        with_null(&["2026-11-23T09:30:00+09:00", "2026-11-23T21:00:00.500+09:00"])
    );
    assert_eq!(
        parquet_values(file, "member_no"),
        some(&["9223372036854775809", "18446744073709551615", "7"])
    );
    assert_eq!(parquet_values(file, "wait"), with_null(&["PT1H30M", "P2DT1S"]));
    assert_eq!(
        parquet_values(file, "birthday"),
        vec![Some("1990-05-17".into()), None, Some("2000-02-29".into())]
    );
    assert_eq!(
        parquet_values(file, "phone_int"),
        vec![Some("1020001001".into()), None, Some("1020001003".into())]
    );
}

#[test]
fn a_spreadsheet_saved_through_pandas_reads_as_written() {
    let file = "spreadsheet.parquet";
    assert_eq!(
        parquet_values(file, "휴대폰"),
        vec![Some("1020001001".into()), None, Some("1020001003".into())]
    );
    assert_eq!(
        parquet_values(file, "가입일"),
        with_null(&["2026-11-23T00:00:00+09:00", "2026-01-02T13:45:00+09:00"])
    );
    assert_eq!(parquet_values(file, "금액"), with_null(&["15000", "2500.5"]));
}

#[test]
fn a_timestamp_annotated_the_legacy_way_is_a_utc_instant_shown_in_seoul() {
    // parquet-mr before 1.11 (Spark 2, Hive, AWS exports): TIMESTAMP_MILLIS or TIMESTAMP_MICROS
    // as converted type, no logical type, no ARROW:schema; read as the instants written.
    let file = "legacy_annotations.parquet";
    let expected = with_null(&["2026-11-23T09:30:00+09:00", "2026-01-02T12:04:05.678+09:00"]);
    assert_eq!(parquet_values(file, "ts_millis"), expected);
    // The same instants annotated the current way (isAdjustedToUTC=true) read alike.
    assert_eq!(parquet_values(file, "ts_utc_logical"), expected);
    assert_eq!(
        parquet_values(file, "ts_micros"),
        with_null(&["2026-11-23T09:30:00+09:00", "2000-01-01T00:00:00.000005+09:00"])
    );
}

#[test]
fn int96_timestamps_outside_the_nanosecond_range_keep_their_dates() {
    // 9999-12-31 and 1676 lie beyond 64-bit nanoseconds. Spark writes INT96 without ARROW:schema;
    // pyarrow writes one, declaring the Arrow types it wrote (timestamp[us], timestamp[ns]).
    for file in ["spark_int96.parquet", "pyarrow_int96.parquet"] {
        assert_eq!(
            parquet_values(file, "int96_us"),
            some(&[
                "2026-11-23T09:30:00+09:00",
                "9999-12-31T23:59:59.999999+09:00",
                "1676-05-17T00:00:00+09:00"
            ]),
            "{file}"
        );
        assert_eq!(
            parquet_values(file, "int96_ns"),
            with_null(&["2026-11-23T09:30:00.123456789+09:00", "1970-01-01T00:00:00+09:00"]),
            "{file}"
        );
    }
}

#[test]
fn a_float32_is_written_as_the_shortest_text_that_reads_back_as_that_float32() {
    let file = "legacy_annotations.parquet";
    assert_eq!(parquet_values(file, "price_float"), with_null(&["19.99", "0.1"]));
    // 1020001001 is not a float32: the nearest, 1020001024, is written as its shortest text.
    assert_eq!(
        parquet_values(file, "whole_float"),
        with_null(&["1020001000", "16777216"])
    );
}

#[test]
fn columns_nobody_mapped_do_not_refuse_the_file_whatever_their_type() {
    // Beside the text and integer columns: GEOMETRY, VARIANT, a logical type from a later
    // format version and an empty group, none of which polars reads.
    let spec = ColumnSpec {
        phone: "phone".into(),
        name: None,
        vars: vec!["points".into()],
    };
    let mut source = input::open(
        &fixture("unmapped_types.parquet"),
        InputFormat::Parquet,
        Encoding::Auto,
        &spec,
    )
    .unwrap();
    let mut rows = Vec::new();
    while let Some(batch) = source.next_batch(2).unwrap() {
        rows.extend(batch);
    }
    let read: Vec<_> = rows
        .iter()
        .map(|r| (r.row, r.phone.as_deref(), r.vars[0].as_deref(), r.unreadable.is_some()))
        .collect();
    assert_eq!(
        read,
        [
            (2, Some("010-2000-1001"), Some("100"), false),
            (3, Some("010-2000-1002"), None, false),
            (4, Some("010-2000-1003"), Some("300"), false),
        ]
    );
}

#[test]
fn a_mapped_column_of_a_type_without_text_is_refused_naming_the_column_and_its_type() {
    for (file, column, type_name) in [
        ("unmapped_types.parquet", "profile", "variant"),
        ("unmapped_types.parquet", "location", "geometry"),
        (
            "unmapped_types.parquet",
            "future",
            "logical type 40, unknown to this reader",
        ),
        ("unmapped_types.parquet", "nothing", "struct<>"),
        ("legacy_annotations.parquet", "half_float", "float16"),
    ] {
        match read_column(&fixture(file), InputFormat::Parquet, column) {
            Err(InputError::UnsupportedType {
                column: named,
                type_name: said,
                ..
            }) => assert_eq!((named.as_str(), said.as_str()), (column, type_name)),
            other => panic!("{column}: {other:?}"),
        }
    }
}

#[test]
fn parquet_values_that_are_not_text_reject_their_row_only() {
    for (column, detail) in [
        ("not_utf8_binary", "binary that is not UTF-8 text"),
        ("string_with_nul", "contains a NUL byte"),
    ] {
        let rows = read_column(&fixture("pyarrow_types.parquet"), InputFormat::Parquet, column).unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].phone.as_deref(), Some("ok"));
        assert_eq!(
            rows[1].unreadable,
            Some(Box::new(Unreadable::NotText {
                column: column.into(),
                detail: detail.into()
            }))
        );
        assert_eq!(rows[2].unreadable, None);
    }
}

#[test]
fn a_broken_parquet_file_is_refused_or_read_whole_never_cut_short() {
    let bytes = std::fs::read(fixture("decimal_phone.parquet")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.parquet");
    let mut damaged = Vec::new();
    for cut in [0, 4, bytes.len() / 3, bytes.len() / 2, bytes.len() - 9, bytes.len() - 1] {
        damaged.push(bytes[..cut].to_vec());
    }
    // Overwritten stretches in the pages and the footer, the length and magic kept.
    for at in (4..bytes.len() - 8).step_by(7) {
        let mut copy = bytes.clone();
        for byte in &mut copy[at..(at + 5).min(bytes.len() - 8)] {
            *byte ^= 0x5A;
        }
        damaged.push(copy);
    }
    for (case, content) in damaged.iter().enumerate() {
        std::fs::write(&path, content).unwrap();
        match read_column(&path, InputFormat::Parquet, "phone") {
            Ok(rows) => assert_eq!(rows.len(), 3, "case {case}: read, then every row"),
            Err(InputError::Parquet { path: named, .. }) => assert_eq!(named, path, "case {case}"),
            Err(InputError::MissingColumn { .. } | InputError::UnsupportedType { .. }) => {}
            Err(other) => panic!("case {case}: {other}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The binary.

/// An SMS campaign over `recipients`, its `[recipients]` mapping being `mapping` (which maps
/// `name`, and `VAR1` when the text should use it).
fn campaign(dir: &Path, recipients: &str, mapping: &str) -> PathBuf {
    let path = dir.join("campaign.toml");
    let text = if mapping.contains("VAR1") {
        "[데모몰] #{name}님 #{VAR1}"
    } else {
        "[데모몰] #{name}님 쿠폰 도착"
    };
    std::fs::write(
        &path,
        format!(
            "kind = \"sms\"\n[credentials]\ngroup_id = \"demo\"\n[message]\nservice = 3001\ntext = \"{text}\"\ncallback_no = \"0212345678\"\n[recipients]\npath = \"{recipients}\"\n{mapping}\n"
        ),
    )
    .unwrap();
    path
}

const NAME: &str = "name = \"name\"";
const NAME_AND_COUPON: &str = "name = \"name\"\nvariables = { VAR1 = \"coupon\" }";

fn validate(dir: &Path, campaign: &Path, env: &[(&str, &str)]) -> Outcome {
    let mut command: Command = msgbatch_at(dir, DAYTIME);
    command.envs(env.iter().copied());
    let rejects = dir.join("rejects.csv");
    exec(
        command,
        &[
            "validate",
            path_str(campaign),
            "--rejects",
            path_str(&rejects),
            "--json",
        ],
    )
}

fn u(value: &Value, key: &str) -> u64 {
    value[key].as_u64().unwrap_or_else(|| panic!("`{key}` in {value:#}"))
}

/// `validate --json` that must pass, with the accounting checked to balance.
fn validated(dir: &Path, campaign: &Path, env: &[(&str, &str)]) -> Value {
    let json = validate(dir, campaign, env).expect_code(0, "validate").json();
    assert_eq!(
        u(&json, "rows"),
        u(&json, "valid") + u(&json, "rejected") + u(&json, "duplicates") + u(&json, "suppressed"),
        "the accounting balances: {json:#}"
    );
    json
}

/// rejects.csv as (row, column, reason, detail).
fn rejects(dir: &Path) -> Vec<(u64, String, String, String)> {
    let mut reader = csv::Reader::from_path(dir.join("rejects.csv")).unwrap();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[0].parse().unwrap(), r[1].into(), r[2].into(), r[3].into())
        })
        .collect()
}

fn by_reason(json: &Value) -> BTreeMap<String, u64> {
    json["rejected_by_reason"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect()
}

fn refused(dir: &Path, campaign: &Path, env: &[(&str, &str)], what: &str, says: &[&str]) {
    let outcome = validate(dir, campaign, env).expect_code(2, what);
    for words in says {
        assert!(
            outcome.stderr.contains(words),
            "{what}: stderr names {words:?}: {}",
            outcome.show()
        );
    }
}

#[test]
fn the_decimal_phone_fixture_validates_as_three_numbers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("decimal_phone.parquet"), dir.path().join("people.parquet")).unwrap();
    let json = validated(dir.path(), &campaign(dir.path(), "people.parquet", NAME), &[]);
    assert_eq!((u(&json, "rows"), u(&json, "valid")), (3, 3), "{json:#}");
}

#[test]
fn a_pandas_uint64_variable_above_the_int64_range_is_a_value_not_missing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("pandas_types.parquet"), dir.path().join("people.parquet")).unwrap();
    let mapping = "name = \"name\"\nvariables = { VAR1 = \"member_no\" }";
    let json = validated(dir.path(), &campaign(dir.path(), "people.parquet", mapping), &[]);
    assert_eq!((u(&json, "rows"), u(&json, "valid")), (3, 3), "{json:#}");
}

#[test]
fn parquet_columns_that_are_not_one_value_per_row_are_refused_by_name_and_type() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("pyarrow_types.parquet"), dir.path().join("people.parquet")).unwrap();
    let struct_phone = campaign(
        dir.path(),
        "people.parquet",
        "phone = \"struct\"\nname = \"name_large_binary\"",
    );
    refused(
        dir.path(),
        &struct_phone,
        &[],
        "a struct phone",
        &["people.parquet", "\"struct\"", "struct<a: int64>"],
    );
    let list_variable = campaign(
        dir.path(),
        "people.parquet",
        "phone = \"phone_int64\"\nname = \"name_large_binary\"\nvariables = { VAR1 = \"list\" }",
    );
    refused(
        dir.path(),
        &list_variable,
        &[],
        "a list variable",
        &["\"list\"", "list<string>"],
    );
}

#[test]
fn a_mapped_float16_column_is_refused_naming_it_not_read_as_two_bytes_of_text() {
    // Without ARROW:schema polars reads a half float as two bytes: 21.234375 would become "OM".
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("legacy_annotations.parquet"), dir.path().join("people.parquet")).unwrap();
    let half_name = campaign(dir.path(), "people.parquet", "name = \"half_float\"");
    refused(
        dir.path(),
        &half_name,
        &[],
        "a float16 name",
        &["people.parquet", "\"half_float\"", "float16"],
    );
}

#[test]
fn a_truncated_parquet_file_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(fixture("decimal_phone.parquet")).unwrap();
    std::fs::write(dir.path().join("people.parquet"), &bytes[..bytes.len() / 2]).unwrap();
    let campaign = campaign(dir.path(), "people.parquet", NAME);
    refused(dir.path(), &campaign, &[], "a truncated file", &["people.parquet"]);
}

/// A CSV of `rows` recipients `phone,name,coupon` with recipient `row` (1-based, so on spreadsheet
/// row `row + 1`) replaced by `line`.
fn csv_with(rows: usize, row: usize, line: &str) -> String {
    let mut text = String::from("phone,name,coupon\n");
    for i in 1..=rows {
        if i == row {
            text.push_str(line);
        } else {
            text.push_str(&format!("0107000{i:04},고객{i},C{i}"));
        }
        text.push('\n');
    }
    text
}

#[test]
fn an_unbalanced_quote_at_row_10_of_1000_refuses_naming_the_row_and_column() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("people.csv"),
        csv_with(1000, 10, "01070000010,\"고객10,C10"),
    )
    .unwrap();
    let campaign = campaign(dir.path(), "people.csv", NAME_AND_COUPON);
    for block_bytes in [None, Some("256")] {
        // Also with the file read in parallel blocks of 256 bytes, as a large file is.
        let env: Vec<(&str, &str)> = block_bytes
            .map(|b| ("MSGBATCH_CSV_BLOCK_BYTES", b))
            .into_iter()
            .collect();
        refused(
            dir.path(),
            &campaign,
            &env,
            "a runaway quote",
            &["people.csv", "row 11 (line 11)", "column \"name\"", "never closed"],
        );
    }
}

/// `sh -c script` in `dir` with the environment the tests give the binary.
fn shell(dir: &Path, script: &str) -> Outcome {
    let binary = msgbatch_at(dir, DAYTIME);
    let mut command = Command::new("sh");
    command.env_clear().current_dir(dir);
    for (key, value) in binary.get_envs() {
        if let Some(value) = value {
            command.env(key, value);
        }
    }
    exec(command, &["-c", script])
}

#[test]
fn a_binary_file_of_zeros_is_refused_with_memory_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let campaign = campaign(dir.path(), "/dev/zero", &format!("format = \"csv\"\n{NAME}"));
    // Under this limit the reader must come to its verdict: a record that grows with the input
    // would end in a failed allocation (an abort), not in exit 2.
    let script = format!(
        "ulimit -v 2000000; exec '{}' validate '{}' --json",
        env!("CARGO_BIN_EXE_msgbatch"),
        path_str(&campaign)
    );
    let outcome = shell(dir.path(), &script).expect_code(2, "/dev/zero");
    assert!(
        outcome.stderr.contains("/dev/zero") && outcome.stderr.contains("first line runs past"),
        "{}",
        outcome.show()
    );
}

#[test]
fn ragged_rows_are_rejected_with_their_field_counts_and_the_rest_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = csv_with(5, 2, "01070000002,김,민수,C2");
    text = text.replace("01070000004,고객4,C4", "01070000004,고객4");
    std::fs::write(dir.path().join("people.csv"), text).unwrap();
    let campaign = campaign(dir.path(), "people.csv", NAME_AND_COUPON);
    let json = validated(dir.path(), &campaign, &[]);
    assert_eq!((u(&json, "rows"), u(&json, "valid")), (5, 3), "{json:#}");
    assert_eq!(by_reason(&json), BTreeMap::from([("ragged".into(), 2)]));
    let rejected = rejects(dir.path());
    assert_eq!(rejected[0].0, 3);
    assert_eq!(rejected[0].3, "4 fields, the header has 3");
    assert_eq!((rejected[1].0, rejected[1].1.as_str()), (5, "coupon"));
    assert_eq!(rejected[1].3, "2 fields, the header has 3");
}

#[test]
fn a_nul_in_a_field_rejects_the_row_as_not_text_naming_the_column() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("people.csv"),
        csv_with(3, 2, "01070000002,고객\u{0}2,C2"),
    )
    .unwrap();
    let campaign = campaign(dir.path(), "people.csv", NAME_AND_COUPON);
    let json = validated(dir.path(), &campaign, &[]);
    assert_eq!(by_reason(&json), BTreeMap::from([("not_text".into(), 1)]), "{json:#}");
    let rejected = rejects(dir.path());
    assert_eq!(
        (rejected[0].0, rejected[0].1.as_str(), rejected[0].3.as_str()),
        (3, "name", "contains a NUL byte")
    );
}

#[test]
fn a_mapped_column_twice_in_the_header_is_refused_naming_both_positions() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("people.csv"),
        "phone,name,phone\n01070000001,김민수,01070000002\n",
    )
    .unwrap();
    let campaign = campaign(dir.path(), "people.csv", NAME);
    refused(
        dir.path(),
        &campaign,
        &[],
        "a duplicate header",
        &["people.csv", "\"phone\"", "columns 1 and 3"],
    );
}

#[test]
fn latin1_bytes_in_an_auto_detected_file_are_not_text_not_unencodable() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = b"phone,name,coupon\n01070000001,Jos\xE9,C1\n".to_vec();
    bytes.extend_from_slice(&encoding_rs::EUC_KR.encode("01070000002,김민수,C2\n").0);
    std::fs::write(dir.path().join("people.csv"), bytes).unwrap();
    let campaign = campaign(dir.path(), "people.csv", NAME_AND_COUPON);
    let json = validated(dir.path(), &campaign, &[]);
    assert_eq!(json["encoding"], "cp949");
    assert_eq!(u(&json, "valid"), 1, "{json:#}");
    assert_eq!(by_reason(&json), BTreeMap::from([("not_text".into(), 1)]), "{json:#}");
    assert_eq!(rejects(dir.path())[0].1, "name");
}

#[test]
fn a_field_over_the_cap_in_a_row_that_ends_is_rejected_and_the_cap_is_set_by_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let long = "X".repeat(300);
    std::fs::write(
        dir.path().join("people.csv"),
        csv_with(3, 2, &format!("01070000002,고객2,{long}")),
    )
    .unwrap();
    let campaign = campaign(dir.path(), "people.csv", NAME_AND_COUPON);
    let capped = [("MSGBATCH_MAX_FIELD_BYTES", "200")];
    let json = validated(dir.path(), &campaign, &capped);
    assert_eq!((u(&json, "rows"), u(&json, "valid")), (3, 2), "{json:#}");
    assert_eq!(by_reason(&json), BTreeMap::from([("field_too_large".into(), 1)]));
    assert_eq!(rejects(dir.path())[0].1, "coupon");
    refused(
        dir.path(),
        &campaign,
        &[("MSGBATCH_MAX_FIELD_BYTES", "lots")],
        "a bad cap",
        &["MSGBATCH_MAX_FIELD_BYTES"],
    );
}

#[test]
fn a_missing_recipients_or_suppression_file_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let campaign = campaign(dir.path(), "nobody.csv", NAME);
    refused(dir.path(), &campaign, &[], "no recipients file", &["nobody.csv"]);
    std::fs::write(dir.path().join("people.csv"), csv_with(2, 0, "")).unwrap();
    let campaign = self::campaign(
        dir.path(),
        "people.csv",
        &format!("{NAME}\nsuppression = \"optout.csv\""),
    );
    refused(dir.path(), &campaign, &[], "no suppression file", &["optout.csv"]);
}

#[test]
fn run_and_resume_refuse_a_missing_recipients_or_suppression_file_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = |campaign: &Path| {
        exec(
            msgbatch_at(dir.path(), DAYTIME),
            &["run", path_str(campaign), "--out", path_str(&out), "--json"],
        )
    };
    let missing_recipients = campaign(dir.path(), "nobody.csv", NAME);
    let outcome = run(&missing_recipients).expect_code(2, "run without its recipients file");
    assert!(outcome.stderr.contains("nobody.csv"), "{}", outcome.show());
    assert!(!out.exists(), "a refused start leaves no run directory");

    std::fs::write(dir.path().join("people.csv"), csv_with(2, 0, "")).unwrap();
    let with_suppression = campaign(
        dir.path(),
        "people.csv",
        &format!("{NAME}\nsuppression = \"optout.csv\""),
    );
    let outcome = run(&with_suppression).expect_code(2, "run without its suppression file");
    assert!(outcome.stderr.contains("optout.csv"), "{}", outcome.show());
    assert!(!out.exists(), "a refused start leaves no run directory");

    // A run that went, then its files are taken away before `resume`.
    std::fs::write(dir.path().join("optout.csv"), "phone\n").unwrap();
    run(&with_suppression).expect_code(0, "run");
    for (file, what) in [("optout.csv", "suppression"), ("people.csv", "recipients")] {
        std::fs::rename(dir.path().join(file), dir.path().join("away")).unwrap();
        let outcome = exec(msgbatch_at(dir.path(), DAYTIME), &["resume", path_str(&out), "--json"])
            .expect_code(2, &format!("resume without its {what} file"));
        assert!(outcome.stderr.contains(file), "{}", outcome.show());
        std::fs::rename(dir.path().join("away"), dir.path().join(file)).unwrap();
    }
}
