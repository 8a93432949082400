//! Campaign input through the `msgbatch` binary: `validate` accounting and rejects.csv per reason, CSV encodings (BOM, CP949) and quoting, Parquet integer phones and missing columns, phone spellings for duplicates and suppression, quiet hours, advertising warnings and campaign-file errors.

mod common;

use common::process::{exec, msgbatch_at, path_str, Outcome, SandboxProcess};
use msgbatch::api::ledger::BillingClass;
use msgbatch::text::euc_kr_len;
use polars::prelude::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A Monday morning in Seoul: outside every quiet-hours window.
const DAYTIME: &str = "2026-11-23T11:00:00+09:00";
const SMS_MAX: usize = 90;
const NOTIFICATION_MAX_CHARS: usize = 1_000;
const ORDER_SHIPPED: &str = "#{이름}님, 주문하신 상품이 발송되었습니다. 송장번호: #{VAR1}";
/// A proper advertising SMS: starts with (광고) and has a free opt-out line.
const AD_SMS: &str = "(광고) #{name}님 겨울 세일 쿠폰 #{VAR1}\\n무료거부 080-000-0000";

// ---------------------------------------------------------------------------------------------
// Running the binary.

fn msgbatch(dir: &Path) -> Command {
    msgbatch_at(dir, DAYTIME)
}

fn validate_json(dir: &Path, campaign: &Path) -> Value {
    exec(msgbatch(dir), &["validate", path_str(campaign), "--json"])
        .expect_code(0, "validate --json")
        .json()
}

fn status_json(dir: &Path, run_dir: &Path) -> Value {
    exec(msgbatch(dir), &["status", path_str(run_dir), "--json"])
        .expect_code(0, "status --json")
        .json()
}

fn u(value: &Value, key: &str) -> u64 {
    value[key]
        .as_u64()
        .unwrap_or_else(|| panic!("`{key}` is not a number in {value:#}"))
}

fn counts(value: &Value) -> BTreeMap<String, u64> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().expect("a count")))
        .collect()
}

fn write(dir: &Path, file: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(file);
    std::fs::write(&path, bytes).expect("write fixture");
    path
}

/// CSV text from rows, quoted by the csv crate where a field needs it.
fn csv_text(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(header).unwrap();
    for row in rows {
        writer.write_record(row).unwrap();
    }
    String::from_utf8(writer.into_inner().unwrap()).unwrap()
}

// ---------------------------------------------------------------------------------------------
// An external sandbox: `msgbatch sandbox --listen 127.0.0.1:0` as a child process.

/// `msgbatch run CAMPAIGN --out DIR --json` that must complete.
fn run_complete(dir: &Path, campaign: &Path, out: &Path) -> Value {
    let outcome = exec(
        msgbatch(dir),
        &["run", path_str(campaign), "--out", path_str(out), "--json"],
    )
    .expect_code(0, "run --json");
    let report = outcome.json();
    let status = &report["status"];
    let sum: u64 = ["rejected", "duplicates", "suppressed", "sent", "uncertain", "pending"]
        .iter()
        .map(|k| u(status, k))
        .sum();
    assert_eq!(u(status, "rows"), sum, "the accounting balances: {status:#}");
    report
}

// ---------------------------------------------------------------------------------------------
// `validate`: accounting and rejects.csv.

/// One rejected row of the fixture: 1-based data row, column and reason.
type Reject = (u64, &'static str, &'static str);

const SMS_TEMPLATE: &str = "[데모몰] #{name}님, 쿠폰 #{VAR1} 도착";

/// An SMS campaign over a file declared UTF-8 with one valid row and one row per reject reason
/// an SMS can have (too long, unencodable emoji, invalid UTF-8 bytes, ...).
struct SmsRejectFixture {
    dir: tempfile::TempDir,
    campaign: PathBuf,
    rows: u64,
    valid: u64,
    rejects: Vec<Reject>,
}

fn sms_reject_fixture() -> SmsRejectFixture {
    let dir = tempfile::tempdir().unwrap();
    let long_coupon = "X".repeat(SMS_MAX);
    let filled = SMS_TEMPLATE
        .replace("#{name}", "강도윤")
        .replace("#{VAR1}", &long_coupon);
    assert!(euc_kr_len(&filled).unwrap() > SMS_MAX, "the long row is over 90 bytes");
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"phone,name,coupon\n");
    bytes.extend_from_slice("010-6000-0001,김민수,WINTER10\n".as_bytes()); // row 2 valid
    bytes.extend_from_slice(",이서연,WINTER10\n".as_bytes()); // row 3 phone_missing
    bytes.extend_from_slice("02-123-4567,박지훈,WINTER10\n".as_bytes()); // row 4 phone_invalid (landline)
    bytes.extend_from_slice("010-6000-0004,최유진,\n".as_bytes()); // row 5 variable_missing
    bytes.extend_from_slice("010-6000-0005,정하늘😀,WINTER10\n".as_bytes()); // row 6 unencodable
    bytes.extend_from_slice(format!("010-6000-0006,강도윤,{long_coupon}\n").as_bytes()); // row 7 too_long
    bytes.extend_from_slice(b"010-6000-0007,\xB1\xE8\xB9\xCE,WINTER10\n"); // row 8 not_text (CP949 bytes)
    bytes.extend_from_slice("010-1234-abcd,오세훈,WINTER10\n".as_bytes()); // row 9 phone_invalid (letters)
    write(dir.path(), "people.csv", &bytes);
    let campaign = write(
        dir.path(),
        "sms.toml",
        format!(
            "kind = \"sms\"\nendpoint = \"sandbox\"\n[message]\nservice = 3001\ntext = \"{SMS_TEMPLATE}\"\ncallback_no = \"0212345678\"\n[recipients]\npath = \"people.csv\"\nencoding = \"utf-8\"\nname = \"name\"\nvariables = {{ VAR1 = \"coupon\" }}\n"
        ),
    );
    SmsRejectFixture {
        dir,
        campaign,
        rows: 8,
        valid: 1,
        rejects: vec![
            (3, "phone", "phone_missing"),
            (4, "phone", "phone_invalid"),
            (5, "coupon", "variable_missing"),
            (6, "message", "unencodable"),
            (7, "message", "too_long"),
            (8, "name", "not_text"),
            (9, "phone", "phone_invalid"),
        ],
    }
}

/// rejects.csv as (row, column, reason), checking its header and that every row has a detail.
fn read_rejects(path: &Path) -> Vec<(u64, String, String)> {
    let mut reader = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(header, ["row", "column", "reason", "detail"], "rejects.csv header");
    reader
        .records()
        .map(|record| {
            let record = record.unwrap();
            assert!(!record[3].trim().is_empty(), "a reject says why in words: {record:?}");
            (
                record[0].parse().expect("row number"),
                record[1].to_string(),
                record[2].to_string(),
            )
        })
        .collect()
}

fn by_reason(rejects: &[Reject]) -> BTreeMap<String, u64> {
    let mut map = BTreeMap::new();
    for (_, _, reason) in rejects {
        *map.entry(reason.to_string()).or_default() += 1;
    }
    map
}

/// The number printed after `label` on the line that starts with it.
fn printed(stdout: &str, label: &str) -> u64 {
    let line = stdout
        .lines()
        .find(|line| line.split_whitespace().next() == Some(label))
        .unwrap_or_else(|| panic!("no `{label}` line in:\n{stdout}"));
    line.split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number on {line:?}"))
}

#[test]
fn validate_prints_the_accounting_and_writes_each_sms_reject_reason_with_row_and_column() {
    let f = sms_reject_fixture();
    let rejects_path = f.dir.path().join("out").join("rejects.csv");
    std::fs::create_dir_all(rejects_path.parent().unwrap()).unwrap();
    let outcome = exec(
        msgbatch(f.dir.path()),
        &["validate", path_str(&f.campaign), "--rejects", path_str(&rejects_path)],
    )
    .expect_code(0, "validate without --strict");
    let expected: Vec<(u64, String, String)> = f
        .rejects
        .iter()
        .map(|(row, column, reason)| (*row, column.to_string(), reason.to_string()))
        .collect();
    assert_eq!(read_rejects(&rejects_path), expected, "rejects.csv");
    let stdout = &outcome.stdout;
    assert_eq!(printed(stdout, "rows"), f.rows, "{stdout}");
    assert_eq!(printed(stdout, "valid"), f.valid, "{stdout}");
    assert_eq!(printed(stdout, "rejected"), f.rejects.len() as u64, "{stdout}");
    for (reason, count) in by_reason(&f.rejects) {
        assert_eq!(printed(stdout, &reason), count, "{reason} in:\n{stdout}");
    }
    assert_eq!(printed(stdout, "duplicates"), 0, "{stdout}");
    assert_eq!(printed(stdout, "suppressed"), 0, "{stdout}");
}

#[test]
fn validate_without_rejects_option_writes_next_to_the_campaign() {
    let f = sms_reject_fixture();
    exec(msgbatch(f.dir.path()), &["validate", path_str(&f.campaign)]).expect_code(0, "validate");
    let rejects = read_rejects(&f.dir.path().join("sms.rejects.csv"));
    assert_eq!(rejects.len(), f.rejects.len(), "{rejects:?}");
}

#[test]
fn validate_json_parses_and_its_counts_match_the_fixture_and_rejects_file() {
    let f = sms_reject_fixture();
    let rejects_path = f.dir.path().join("rejects.csv");
    let json = exec(
        msgbatch(f.dir.path()),
        &[
            "validate",
            path_str(&f.campaign),
            "--rejects",
            path_str(&rejects_path),
            "--json",
        ],
    )
    .expect_code(0, "validate --json")
    .json();
    assert_eq!(u(&json, "rows"), f.rows, "{json:#}");
    assert_eq!(u(&json, "valid"), f.valid, "{json:#}");
    assert_eq!(u(&json, "rejected"), f.rejects.len() as u64, "{json:#}");
    assert_eq!(counts(&json["rejected_by_reason"]), by_reason(&f.rejects), "{json:#}");
    assert_eq!(u(&json, "duplicates"), 0);
    assert_eq!(u(&json, "suppressed"), 0);
    assert_eq!(
        u(&json, "rows"),
        u(&json, "valid") + u(&json, "rejected") + u(&json, "duplicates") + u(&json, "suppressed")
    );
    assert_eq!(
        counts(&json["per_lane"]),
        BTreeMap::from([("sms".to_string(), f.valid)])
    );
    assert_eq!(json["encoding"], "utf-8", "{json:#}");
    assert_eq!(read_rejects(&rejects_path).len() as u64, u(&json, "rejected"));
}

#[test]
fn validate_rejects_a_notification_over_1000_characters_as_too_long() {
    let dir = tempfile::tempdir().unwrap();
    let base = ORDER_SHIPPED.replace("#{이름}", "김민수").replace("#{VAR1}", "");
    let fits = "A".repeat(NOTIFICATION_MAX_CHARS - base.chars().count());
    let over = format!("{fits}A");
    let rows = vec![
        vec!["010-6100-0001".to_string(), "김민수".into(), fits.clone()],
        vec!["010-6100-0002".to_string(), "김민수".into(), over],
    ];
    write(
        dir.path(),
        "people.csv",
        csv_text(&["phone", "name", "order_no"], &rows),
    );
    let campaign = write(
        dir.path(),
        "alimtalk.toml",
        format!(
            "kind = \"alimtalk\"\n[message]\nservice = 1001\ntemplate = \"ORDER_SHIPPED\"\ntext = \"{ORDER_SHIPPED}\"\n[recipients]\npath = \"people.csv\"\nname = \"name\"\nvariables = {{ VAR1 = \"order_no\" }}\n"
        ),
    );
    let rejects_path = dir.path().join("rejects.csv");
    let json = exec(
        msgbatch(dir.path()),
        &[
            "validate",
            path_str(&campaign),
            "--rejects",
            path_str(&rejects_path),
            "--json",
        ],
    )
    .expect_code(0, "validate")
    .json();
    assert_eq!(u(&json, "valid"), 1, "exactly 1,000 characters is allowed: {json:#}");
    assert_eq!(
        counts(&json["rejected_by_reason"]),
        BTreeMap::from([("too_long".to_string(), 1)])
    );
    assert_eq!(
        read_rejects(&rejects_path),
        vec![(3, "message".to_string(), "too_long".to_string())]
    );
}

#[test]
fn strict_validate_exits_non_zero_when_rows_are_rejected_and_zero_when_none_are() {
    let f = sms_reject_fixture();
    let rejected = exec(msgbatch(f.dir.path()), &["validate", path_str(&f.campaign), "--strict"]);
    assert!(
        rejected.code.is_some_and(|code| code != 0),
        "rejected rows with --strict: {}",
        rejected.show()
    );
    // Only the valid row left: --strict passes.
    let clean = "phone,name,coupon\n010-6000-0001,김민수,WINTER10\n010-6000-0002,이서연,WINTER15\n";
    write(f.dir.path(), "people.csv", clean);
    let passed = exec(msgbatch(f.dir.path()), &["validate", path_str(&f.campaign), "--strict"])
        .expect_code(0, "no rejected rows with --strict");
    assert_eq!(printed(&passed.stdout, "rejected"), 0, "{}", passed.show());
    assert_eq!(printed(&passed.stdout, "valid"), 2, "{}", passed.show());
}

// ---------------------------------------------------------------------------------------------
// Encodings and quoting: names must arrive byte for byte. Each name fills an SMS-or-LMS text
// twice, padded to exactly 90 and to 91 EUC-KR bytes: a name read any longer or shorter moves a
// row to the other lane, which the sandbox's ledger shows per number.

const LANE_TEMPLATE: &str = "[데모몰] #{name}님 #{VAR1}";

/// Names with a comma, a line break, quotes and a space.
const NAMES: [&str; 5] = ["김민수", "조, 은비", "신\n예린", "O'Brien \"Bob\"", "남궁 민수"];

/// Padding that brings `prefix` to exactly `target` EUC-KR bytes (Hangul 2 bytes, ASCII 1).
fn pad_to(prefix: &str, target: usize) -> String {
    let base = euc_kr_len(prefix).unwrap();
    assert!(base < target, "{prefix:?} is already {base} bytes");
    let left = target - base;
    let padding = format!("{}{}", "가".repeat(left / 2), "x".repeat(left % 2));
    assert_eq!(euc_kr_len(&format!("{prefix}{padding}")).unwrap(), target);
    padding
}

fn lane_pad(name: &str, target: usize) -> String {
    pad_to(&LANE_TEMPLATE.replace("#{name}", name).replace("#{VAR1}", ""), target)
}

/// Rows (phone, name, pad) for every name at 90 and 91 bytes, and the class each number should be billed.
fn lane_rows(first: u32) -> (Vec<Vec<String>>, BTreeMap<String, BillingClass>) {
    let mut rows = Vec::new();
    let mut classes = BTreeMap::new();
    let mut serial = first;
    for name in NAMES {
        for (target, class) in [(90, BillingClass::Sms), (91, BillingClass::Lms)] {
            let number = format!("0107000{serial:04}");
            serial += 1;
            rows.push(vec![number.clone(), name.to_string(), lane_pad(name, target)]);
            classes.insert(number, class);
        }
    }
    (rows, classes)
}

fn lane_campaign(dir: &Path, endpoint: &str, file: &str, encoding: Option<&str>) -> PathBuf {
    let encoding = encoding.map(|e| format!("encoding = \"{e}\"\n")).unwrap_or_default();
    write(
        dir,
        "text.toml",
        format!(
            "kind = \"text\"\n{endpoint}[credentials]\ngroup_id = \"demo\"\n[message]\nservice = 3001\ntext = \"{LANE_TEMPLATE}\"\ncallback_no = \"0212345678\"\n[recipients]\npath = \"{file}\"\n{encoding}name = \"name\"\nvariables = {{ VAR1 = \"pad\" }}\n"
        ),
    )
}

/// Writes `bytes` as the recipients, checks the encoding `validate` reports, runs, and checks every
/// number went to the lane its intact name decides.
fn names_arrive_intact(bytes: Vec<u8>, encoding: Option<&str>, reported: &str) {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = SandboxProcess::start();
    let (_, classes) = lane_rows(1);
    write(dir.path(), "people.csv", bytes);
    let campaign = lane_campaign(dir.path(), &sandbox.endpoint_toml(), "people.csv", encoding);
    let json = validate_json(dir.path(), &campaign);
    assert_eq!(json["encoding"], reported, "{json:#}");
    assert_eq!(u(&json, "rows"), classes.len() as u64, "{json:#}");
    assert_eq!(u(&json, "rejected"), 0, "{json:#}");
    let report = run_complete(dir.path(), &campaign, &dir.path().join("run"));
    let half = (classes.len() / 2) as u64;
    assert_eq!(u(&report["status"]["lanes"]["sms"], "sent"), half, "{report:#}");
    assert_eq!(u(&report["status"]["lanes"]["lms"], "sent"), half, "{report:#}");
    assert_eq!(
        counts(&report["status"]["statuses"]),
        BTreeMap::from([("MMS_0000".to_string(), half), ("SMS_00".to_string(), half)]),
        "the sandbox took every text in its lane: {report:#}"
    );
    assert_eq!(sandbox.classes(), classes, "billing class per number");
}

fn lane_csv() -> String {
    csv_text(&["phone", "name", "pad"], &lane_rows(1).0)
}

#[test]
fn quoted_names_with_commas_and_newlines_arrive_intact_from_plain_utf8() {
    let text = lane_csv();
    assert!(
        text.contains("\"조, 은비\"") && text.contains("\"신\n예린\""),
        "the CSV quotes them: {text}"
    );
    names_arrive_intact(text.into_bytes(), None, "utf-8");
}

#[test]
fn csv_with_utf8_bom_is_auto_detected_and_names_arrive_intact() {
    names_arrive_intact(format!("\u{FEFF}{}", lane_csv()).into_bytes(), None, "utf-8 (BOM)");
}

#[test]
fn csv_with_utf8_bom_declared_utf8_names_arrive_intact() {
    names_arrive_intact(
        format!("\u{FEFF}{}", lane_csv()).into_bytes(),
        Some("utf-8"),
        "utf-8 (BOM)",
    );
}

fn cp949(text: &str) -> Vec<u8> {
    let (bytes, _, unmappable) = encoding_rs::EUC_KR.encode(text);
    assert!(!unmappable, "the fixture is all CP949");
    bytes.into_owned()
}

#[test]
fn csv_in_cp949_is_auto_detected_and_names_arrive_intact() {
    let bytes = cp949(&lane_csv());
    assert!(std::str::from_utf8(&bytes).is_err(), "the CP949 bytes are not UTF-8");
    names_arrive_intact(bytes, None, "cp949");
}

#[test]
fn csv_in_cp949_declared_cp949_names_arrive_intact() {
    names_arrive_intact(cp949(&lane_csv()), Some("cp949"), "cp949");
}

#[test]
fn csv_in_cp949_declared_utf8_rejects_its_rows_as_not_text() {
    // The contrast that shows the detection matters: the same bytes read as UTF-8 are not text.
    let dir = tempfile::tempdir().unwrap();
    let (rows, _) = lane_rows(1);
    write(dir.path(), "people.csv", cp949(&lane_csv()));
    let campaign = lane_campaign(dir.path(), "endpoint = \"sandbox\"\n", "people.csv", Some("utf-8"));
    let json = validate_json(dir.path(), &campaign);
    // Every row has Hangul in its padding; the names "O'Brien" rows still have Hangul padding.
    assert_eq!(u(&json, "rejected"), rows.len() as u64, "{json:#}");
    assert_eq!(
        counts(&json["rejected_by_reason"]),
        BTreeMap::from([("not_text".to_string(), rows.len() as u64)]),
        "{json:#}"
    );
}

// ---------------------------------------------------------------------------------------------
// Parquet.

fn sms_campaign(dir: &Path, target: &str, recipients: &str, extra_recipients: &str) -> PathBuf {
    write(
        dir,
        "sms.toml",
        format!(
            "kind = \"sms\"\n{target}[credentials]\ngroup_id = \"demo\"\n[message]\nservice = 3001\ntext = \"{SMS_TEMPLATE}\"\ncallback_no = \"0212345678\"\n[recipients]\npath = \"{recipients}\"\nname = \"name\"\nvariables = {{ VAR1 = \"coupon\" }}\n{extra_recipients}"
        ),
    )
}

#[test]
fn parquet_integer_phone_column_normalises_to_010() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = SandboxProcess::start();
    // 010-6200-0001 etc. stored as numbers: the leading zero is lost.
    let mut frame = df!(
        "phone" => &[1062000001i64, 1062000002, 1062000001, 1062000003],
        "name" => &["김민수", "이서연", "김민수", "박지훈"],
        "coupon" => &["WINTER10", "WINTER15", "WINTER10", "WINTER20"],
    )
    .unwrap();
    assert_eq!(frame.column("phone").unwrap().dtype(), &DataType::Int64);
    ParquetWriter::new(std::fs::File::create(dir.path().join("people.parquet")).unwrap())
        .finish(&mut frame)
        .unwrap();
    // The suppression list spells the third number the usual way.
    write(dir.path(), "suppression.csv", "phone\n010-6200-0003\n");
    let campaign = sms_campaign(
        dir.path(),
        &sandbox.endpoint_toml(),
        "people.parquet",
        "suppression = \"suppression.csv\"\n",
    );
    let json = validate_json(dir.path(), &campaign);
    assert_eq!(json["encoding"], "parquet");
    assert_eq!(u(&json, "rows"), 4, "{json:#}");
    assert_eq!(u(&json, "rejected"), 0, "no integer phone is invalid: {json:#}");
    assert_eq!(u(&json, "duplicates"), 1, "1062000001 twice: {json:#}");
    assert_eq!(u(&json, "suppressed"), 1, "1062000003 is 010-6200-0003: {json:#}");
    assert_eq!(u(&json, "valid"), 2, "{json:#}");
    let report = run_complete(dir.path(), &campaign, &dir.path().join("run"));
    assert_eq!(u(&report["status"], "sent"), 2, "{report:#}");
    assert_eq!(u(&report["status"], "accepted"), 2, "{report:#}");
    let sent = sandbox.sent();
    assert_eq!(
        sent.numbers,
        BTreeMap::from([("01062000001".to_string(), 1), ("01062000002".to_string(), 1)])
    );
}

#[test]
fn parquet_without_a_mapped_column_is_refused_naming_the_column() {
    let dir = tempfile::tempdir().unwrap();
    let mut frame = df!(
        "phone" => &["010-6300-0001", "010-6300-0002"],
        "name" => &["김민수", "이서연"],
        "voucher" => &["WINTER10", "WINTER15"],
    )
    .unwrap();
    ParquetWriter::new(std::fs::File::create(dir.path().join("people.parquet")).unwrap())
        .finish(&mut frame)
        .unwrap();
    let campaign = sms_campaign(dir.path(), "endpoint = \"sandbox\"\n", "people.parquet", "");
    let validate =
        exec(msgbatch(dir.path()), &["validate", path_str(&campaign)]).expect_code(2, "validate with a missing column");
    assert!(validate.stderr.contains("\"coupon\""), "{}", validate.show());
    let out = dir.path().join("run");
    let run = exec(
        msgbatch(dir.path()),
        &["run", path_str(&campaign), "--out", path_str(&out), "--json"],
    )
    .expect_code(2, "run with a missing column");
    assert!(run.stderr.contains("\"coupon\""), "{}", run.show());
}

// ---------------------------------------------------------------------------------------------
// Phone spellings: duplicates and suppression.

fn text_campaign(dir: &Path, sandbox: &SandboxProcess, extra_recipients: &str) -> PathBuf {
    write(
        dir,
        "text.toml",
        format!(
            "kind = \"text\"\n{}[credentials]\ngroup_id = \"demo\"\n[message]\nservice = 3001\ntext = \"{LANE_TEMPLATE}\"\ncallback_no = \"0212345678\"\n[recipients]\npath = \"people.csv\"\nname = \"name\"\nvariables = {{ VAR1 = \"pad\" }}\n{extra_recipients}",
            sandbox.endpoint_toml()
        ),
    )
}

#[test]
fn phone_spellings_count_as_one_number_for_duplicates_and_the_first_occurrence_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = SandboxProcess::start();
    // The first spelling of 010-7100-0001 pads to 91 bytes (LMS), the later ones to 90 (SMS):
    // the lane the number is billed in tells which occurrence was kept.
    let spellings = [
        "+82 10-7100-0001",
        "82-10-7100-0001",
        "010.7100.0001",
        "1071000001",
        "010-7100-0001",
    ];
    let mut rows = Vec::new();
    for (index, spelling) in spellings.iter().enumerate() {
        let target = if index == 0 { 91 } else { 90 };
        rows.push(vec![spelling.to_string(), "김민수".into(), lane_pad("김민수", target)]);
    }
    rows.push(vec!["010-7100-0002".into(), "이서연".into(), lane_pad("이서연", 90)]);
    write(dir.path(), "people.csv", csv_text(&["phone", "name", "pad"], &rows));
    let campaign = text_campaign(dir.path(), &sandbox, "");
    let json = validate_json(dir.path(), &campaign);
    assert_eq!(u(&json, "duplicates"), spellings.len() as u64 - 1, "{json:#}");
    assert_eq!(u(&json, "valid"), 2, "{json:#}");
    assert_eq!(
        counts(&json["per_lane"]),
        BTreeMap::from([("lms".to_string(), 1), ("sms".to_string(), 1)])
    );
    let report = run_complete(dir.path(), &campaign, &dir.path().join("run"));
    assert_eq!(u(&report["status"], "duplicates"), spellings.len() as u64 - 1);
    assert_eq!(u(&report["status"], "sent"), 2);
    let sent = sandbox.sent();
    assert_eq!(
        sent.numbers,
        BTreeMap::from([("01071000001".to_string(), 1), ("01071000002".to_string(), 1)]),
        "each number once"
    );
    assert_eq!(
        sandbox.classes(),
        BTreeMap::from([
            ("01071000001".to_string(), BillingClass::Lms),
            ("01071000002".to_string(), BillingClass::Sms)
        ]),
        "the first occurrence (the LMS one) was kept"
    );
}

#[test]
fn duplicates_are_kept_when_drop_duplicates_is_false() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = SandboxProcess::start();
    let rows = vec![
        vec!["+82 10-7150-0001".to_string(), "김민수".into(), "x".into()],
        vec!["010.7150.0001".to_string(), "김민수".into(), "y".into()],
    ];
    write(dir.path(), "people.csv", csv_text(&["phone", "name", "pad"], &rows));
    let campaign = text_campaign(dir.path(), &sandbox, "drop_duplicates = false\n");
    let json = validate_json(dir.path(), &campaign);
    assert_eq!(u(&json, "duplicates"), 0, "{json:#}");
    assert_eq!(u(&json, "valid"), 2, "{json:#}");
}

#[test]
fn suppression_list_removes_its_numbers_whatever_their_spelling() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = SandboxProcess::start();
    // (as written in the recipients, suppressed?)
    let recipients = [
        ("010-7200-0001", false),
        ("+82 10-7200-0002", true),
        ("010.7200.0003", true),
        ("1072000004", true),
        ("82-10-7200-0005", false),
    ];
    let rows: Vec<Vec<String>> = recipients
        .iter()
        .map(|(phone, _)| vec![phone.to_string(), "김민수".into(), "WINTER10".into()])
        .collect();
    write(dir.path(), "people.csv", csv_text(&["phone", "name", "coupon"], &rows));
    // The same numbers spelled otherwise, one number not among the recipients, and a landline.
    write(
        dir.path(),
        "suppression.csv",
        "phone\n01072000002\n82-10-7200-0003\n+82 10 7200 0004\n010-7200-0099\n02-123-4567\n",
    );
    let campaign = sms_campaign(
        dir.path(),
        &sandbox.endpoint_toml(),
        "people.csv",
        "suppression = \"suppression.csv\"\n",
    );
    let suppressed = recipients.iter().filter(|(_, s)| *s).count() as u64;
    let json = validate_json(dir.path(), &campaign);
    assert_eq!(u(&json, "suppressed"), suppressed, "{json:#}");
    assert_eq!(
        u(&json, "suppression_entries"),
        4,
        "four mobile numbers in the list: {json:#}"
    );
    assert_eq!(u(&json, "valid"), recipients.len() as u64 - suppressed, "{json:#}");
    let report = run_complete(dir.path(), &campaign, &dir.path().join("run"));
    assert_eq!(u(&report["status"], "suppressed"), suppressed);
    assert_eq!(
        sandbox.sent().numbers,
        BTreeMap::from([("01072000001".to_string(), 1), ("01072000005".to_string(), 1)]),
        "only the numbers not on the list were sent"
    );
}

#[test]
fn opt_out_list_removes_its_numbers_from_an_advertising_campaign_and_not_from_a_notification() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = SandboxProcess::start();
    let rows: Vec<Vec<String>> = ["010-7210-0001", "010-7210-0002", "010-7210-0003", "010-7210-0004"]
        .iter()
        .map(|phone| vec![phone.to_string(), "김민수".into(), "WINTER10".into()])
        .collect();
    write(dir.path(), "people.csv", csv_text(&["phone", "name", "coupon"], &rows));
    // 0001 is in both lists (counted as suppressed, not as opted out); 0002 is spelled otherwise.
    write(dir.path(), "suppression.csv", "phone\n010-7210-0001\n");
    write(
        dir.path(),
        "refused.csv",
        "phone\n01072100001\n+82 10 7210 0002\n010-7210-0099\n",
    );
    let endpoint = sandbox.endpoint_toml();
    let campaign = |advertising: bool| {
        let text = if advertising {
            "(광고) #{name}님 쿠폰 #{VAR1} 무료거부 0801234567"
        } else {
            SMS_TEMPLATE
        };
        write(
            dir.path(),
            &format!("ad-{advertising}.toml"),
            format!(
                "kind = \"sms\"\n{endpoint}[credentials]\ngroup_id = \"demo\"\n[message]\nservice = 3001\ntext = \"{text}\"\ncallback_no = \"0212345678\"\nadvertising = {advertising}\n[recipients]\npath = \"people.csv\"\nname = \"name\"\nvariables = {{ VAR1 = \"coupon\" }}\nsuppression = \"suppression.csv\"\nopt_outs = \"refused.csv\"\n[send]\nquiet_hours = \"off\"\n"
            ),
        )
    };
    let advertising = campaign(true);
    let json = validate_json(dir.path(), &advertising);
    assert_eq!(
        (
            u(&json, "suppressed"),
            u(&json, "opted_out"),
            u(&json, "opt_out_entries"),
            u(&json, "valid")
        ),
        (2, 1, 3, 2),
        "{json:#}"
    );
    let printed = exec(msgbatch(dir.path()), &["validate", path_str(&advertising)]).expect_code(0, "validate");
    assert!(
        printed.stdout.contains("opted out 1 (opt-out list of 3)"),
        "{}",
        printed.show()
    );
    run_complete(dir.path(), &advertising, &dir.path().join("run"));
    assert_eq!(
        sandbox.sent().numbers,
        BTreeMap::from([("01072100003".to_string(), 1), ("01072100004".to_string(), 1)]),
        "neither the suppressed nor the opted-out number was sent"
    );

    let notification = campaign(false);
    let json = validate_json(dir.path(), &notification);
    assert_eq!((u(&json, "suppressed"), u(&json, "valid")), (1, 3), "{json:#}");
    assert!(json.get("opted_out").is_none(), "{json:#}");
    let printed = exec(msgbatch(dir.path()), &["validate", path_str(&notification)]).expect_code(0, "validate");
    assert!(
        printed.stdout.contains("opt-out list not applied"),
        "{}",
        printed.show()
    );
}

// ---------------------------------------------------------------------------------------------
// Quiet hours.

fn quiet_dir(kind_toml: &str, quiet_hours: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let rows = vec![
        vec!["010-7300-0001".to_string(), "김민수".into(), "WINTER10".into()],
        vec!["010-7300-0002".to_string(), "이서연".into(), "WINTER15".into()],
    ];
    write(dir.path(), "people.csv", csv_text(&["phone", "name", "coupon"], &rows));
    let campaign = write(
        dir.path(),
        "campaign.toml",
        format!("endpoint = \"sandbox\"\n{kind_toml}[recipients]\npath = \"people.csv\"\nname = \"name\"\nvariables = {{ VAR1 = \"coupon\" }}\n[send]\nquiet_hours = \"{quiet_hours}\"\n"),
    );
    (dir, campaign)
}

fn ad_sms() -> String {
    format!(
        "kind = \"sms\"\n[message]\nservice = 3001\ntext = \"{AD_SMS}\"\ncallback_no = \"0212345678\"\nadvertising = true\n"
    )
}

fn run_at(dir: &Path, campaign: &Path, clock: &str, json: bool) -> Outcome {
    let out = dir.join("run");
    let mut args = vec!["run", path_str(campaign), "--out", path_str(&out)];
    if json {
        args.push("--json");
    }
    exec(msgbatch_at(dir, clock), &args)
}

const TEN_PM: &str = "2026-11-23T22:00:00+09:00";

#[test]
fn advertising_sms_at_22_kst_with_enforce_is_refused_and_says_it_may_start_at_08() {
    let (dir, campaign) = quiet_dir(&ad_sms(), "enforce");
    let refused = run_at(dir.path(), &campaign, TEN_PM, false).expect_code(2, "enforce at 22:00");
    assert!(refused.stderr.contains("08:00"), "{}", refused.show());
    assert!(!dir.path().join("run").join("checkpoint").exists(), "nothing started");
    // The same instant written in UTC (13:00Z is 22:00 in Seoul) is refused too.
    let utc = run_at(dir.path(), &campaign, "2026-11-23T13:00:00Z", false).expect_code(2, "13:00Z");
    assert!(utc.stderr.contains("08:00"), "{}", utc.show());
    // At 08:00 the window is over.
    let json = run_at(dir.path(), &campaign, "2026-11-24T08:00:00+09:00", true)
        .expect_code(0, "enforce at 08:00")
        .json();
    assert_eq!(u(&json["status"], "sent"), 2, "{json:#}");
}

#[test]
fn advertising_sms_at_22_kst_with_warn_sends_with_a_warning_on_stderr() {
    let (dir, campaign) = quiet_dir(&ad_sms(), "warn");
    let outcome = run_at(dir.path(), &campaign, TEN_PM, false).expect_code(0, "warn at 22:00");
    assert!(
        outcome.stderr.contains("warning") && outcome.stderr.contains("quiet hours"),
        "{}",
        outcome.show()
    );
    let status = status_json(dir.path(), &dir.path().join("run"));
    assert_eq!(u(&status, "sent"), 2, "{status:#}");
    assert_eq!(u(&status, "accepted"), 2, "{status:#}");
}

#[test]
fn advertising_sms_at_22_kst_with_warn_and_json_still_warns_on_stderr() {
    // stdout carries the JSON report; the warning belongs on stderr all the same.
    let (dir, campaign) = quiet_dir(&ad_sms(), "warn");
    let outcome = run_at(dir.path(), &campaign, TEN_PM, true).expect_code(0, "warn at 22:00 --json");
    assert_eq!(u(&outcome.json()["status"], "sent"), 2);
    assert!(outcome.stderr.contains("quiet hours"), "{}", outcome.show());
}

#[test]
fn advertising_sms_at_22_kst_with_off_sends_silently() {
    let (dir, campaign) = quiet_dir(&ad_sms(), "off");
    let outcome = run_at(dir.path(), &campaign, TEN_PM, false).expect_code(0, "off at 22:00");
    assert!(!outcome.stderr.contains("quiet"), "{}", outcome.show());
    let status = status_json(dir.path(), &dir.path().join("run"));
    assert_eq!(u(&status, "sent"), 2, "{status:#}");
}

#[test]
fn brand_at_2055_kst_is_refused_while_advertising_sms_at_2055_is_sent() {
    let clock = "2026-11-23T20:55:00+09:00";
    let brand = "kind = \"brand\"\n[message]\nservice = 2001\nchat_bubble_type = \"TEXT\"\nsend_type = \"FREE\"\ntargeting = \"I\"\ntext = \"(광고) 겨울 세일\\n무료거부 080-000-0000\"\n";
    let (dir, campaign) = quiet_dir(brand, "enforce");
    let refused = run_at(dir.path(), &campaign, clock, false).expect_code(2, "brand at 20:55");
    assert!(refused.stderr.contains("08:00"), "{}", refused.show());
    // Five minutes earlier the brand campaign may go.
    run_at(dir.path(), &campaign, "2026-11-23T20:45:00+09:00", true).expect_code(0, "brand at 20:45");

    let (dir, campaign) = quiet_dir(&ad_sms(), "enforce");
    let json = run_at(dir.path(), &campaign, clock, true)
        .expect_code(0, "advertising SMS at 20:55")
        .json();
    assert_eq!(u(&json["status"], "sent"), 2, "{json:#}");
}

#[test]
fn notification_at_23_kst_is_sent_despite_enforce() {
    let alimtalk = format!(
        "kind = \"alimtalk\"\n[message]\nservice = 1001\ntemplate = \"ORDER_SHIPPED\"\ntext = \"{ORDER_SHIPPED}\"\n"
    );
    let (dir, campaign) = quiet_dir(&alimtalk, "enforce");
    let json = run_at(dir.path(), &campaign, "2026-11-23T23:00:00+09:00", true)
        .expect_code(0, "alimtalk at 23:00")
        .json();
    assert_eq!(u(&json["status"], "sent"), 2, "{json:#}");
    assert_eq!(
        counts(&json["status"]["statuses"]),
        BTreeMap::from([("OK".to_string(), 2)])
    );
}

// ---------------------------------------------------------------------------------------------
// Advertising hygiene warnings.

fn warnings_for(text: &str) -> (Vec<String>, String) {
    let kind = format!(
        "kind = \"sms\"\n[message]\nservice = 3001\ntext = \"{text}\"\ncallback_no = \"0212345678\"\nadvertising = true\n"
    );
    let (dir, campaign) = quiet_dir(&kind, "enforce");
    let json = validate_json(dir.path(), &campaign);
    let warnings = json["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    let text_output = exec(msgbatch(dir.path()), &["validate", path_str(&campaign)]).expect_code(0, "validate");
    (warnings, text_output.stdout)
}

#[test]
fn advertising_validator_warns_when_the_ad_mark_or_the_opt_out_line_is_missing() {
    let (warnings, _) = warnings_for(AD_SMS);
    assert!(warnings.is_empty(), "a proper ad: {warnings:?}");

    let (warnings, stdout) = warnings_for("#{name}님 겨울 세일 쿠폰 #{VAR1}\\n무료거부 080-000-0000");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("(광고)"), "{warnings:?}");
    assert!(stdout.contains("warning") && stdout.contains("(광고)"), "{stdout}");

    let (warnings, stdout) = warnings_for("(광고) #{name}님 겨울 세일 쿠폰 #{VAR1}");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("opt-out"), "{warnings:?}");
    assert!(stdout.contains("warning") && stdout.contains("opt-out"), "{stdout}");

    let (warnings, _) = warnings_for("#{name}님 겨울 세일 쿠폰 #{VAR1}");
    assert_eq!(warnings.len(), 2, "both missing: {warnings:?}");
}

// ---------------------------------------------------------------------------------------------
// Campaign-file errors.

#[test]
fn an_unknown_campaign_key_is_refused_naming_it() {
    for (bad, key) in [
        ("[send]\nchunksize = 5\n", "chunksize"),
        (
            "[send]\nquiet_hours = \"enforce\"\nretry_forever = true\n",
            "retry_forever",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "people.csv",
            "phone,name,coupon\n010-7400-0001,김민수,WINTER10\n",
        );
        let campaign = sms_campaign(dir.path(), "endpoint = \"sandbox\"\n", "people.csv", bad);
        let validate = exec(msgbatch(dir.path()), &["validate", path_str(&campaign)]).expect_code(2, key);
        assert!(validate.stderr.contains(key), "{}", validate.show());
        let out = dir.path().join("run");
        let run = exec(
            msgbatch(dir.path()),
            &["run", path_str(&campaign), "--out", path_str(&out)],
        )
        .expect_code(2, key);
        assert!(run.stderr.contains(key), "{}", run.show());
    }
    // A misspelt key inside [message] too.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "people.csv",
        "phone,name,coupon\n010-7400-0001,김민수,WINTER10\n",
    );
    let campaign = sms_campaign(dir.path(), "endpoint = \"sandbox\"\n", "people.csv", "");
    let text = std::fs::read_to_string(&campaign)
        .unwrap()
        .replace("callback_no", "callback_number");
    std::fs::write(&campaign, text).unwrap();
    let validate = exec(msgbatch(dir.path()), &["validate", path_str(&campaign)]).expect_code(2, "callback_number");
    assert!(validate.stderr.contains("callback_number"), "{}", validate.show());
}

#[test]
fn a_variable_used_in_the_text_but_not_mapped_names_recipients_variables() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "people.csv",
        "phone,name,coupon\n010-7400-0001,김민수,WINTER10\n",
    );
    let campaign = write(
        dir.path(),
        "sms.toml",
        "kind = \"sms\"\n[message]\nservice = 3001\ntext = \"#{name}님 쿠폰 #{VAR1}, 적립 #{VAR2}\"\ncallback_no = \"0212345678\"\n[recipients]\npath = \"people.csv\"\nname = \"name\"\nvariables = { VAR1 = \"coupon\" }\n",
    );
    let validate = exec(msgbatch(dir.path()), &["validate", path_str(&campaign)]).expect_code(2, "VAR2 unmapped");
    assert!(
        validate.stderr.contains("recipients.variables.VAR2"),
        "{}",
        validate.show()
    );
    let out = dir.path().join("run");
    let run = exec(
        msgbatch(dir.path()),
        &["run", path_str(&campaign), "--out", path_str(&out)],
    )
    .expect_code(2, "VAR2 unmapped");
    assert!(run.stderr.contains("recipients.variables.VAR2"), "{}", run.show());
}
