//! Delivery reports with the real binary: pinned columns, every input row once, owner-only files, and totals equal to the sandbox ledger for every kind.

mod common;

use common::process::SandboxProcess;
use msgbatch::api::ledger::{BillingClass, ClassTotals};
use msgbatch::sandbox::Accounts;
use polars::prelude::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_msgbatch");
const DAYTIME: &str = "2026-11-23T11:00:00+09:00";
const SENDER_KEY: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f001234567";

/// The report's columns as documented in docs/reports.md. Changing them breaks users' scripts.
const PINNED_COLUMNS: [&str; 18] = [
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

/// Recipients covering every outcome: valid numbers (some ending in the demo's rule suffixes
/// 91 channel failure, 92 not a friend, 93 gateway FAILED, 94 GIVEUP, 95 refused, 96 SMS
/// ERROR), a duplicate, an invalid and a missing phone.
fn people() -> String {
    let mut csv = String::from("phone,name,order\n");
    for (i, suffix) in ["10", "11", "91", "92", "93", "94", "95", "96", "12", "13"]
        .iter()
        .enumerate()
    {
        csv.push_str(&format!("0102000{i:02}{suffix},고객{i},A-{i}\n"));
    }
    // Row 2's number again: a duplicate.
    csv.push_str("01020000111,중복,A-dup\n");
    csv.push_str("02-123-4567,유선,A-x\n,없음,A-y\n");
    csv
}

fn prices_toml() -> String {
    let prices = Accounts::demo().groups[0].prices.clone();
    format!(
        "[prices]\nalimtalk = {}\nbm_friend = {}\nbm_nonfriend = {}\nsms = {}\nlms = {}\nfallback_sms = {}\nfallback_lms = {}\n",
        prices.alimtalk,
        prices.bm_friend,
        prices.bm_nonfriend,
        prices.sms,
        prices.lms,
        prices.fallback_sms,
        prices.fallback_lms
    )
}

fn message(kind: &str) -> String {
    match kind {
        "alimtalk" => "[message]\nservice = 1001\ntemplate = \"ORDER_SHIPPED\"\ntext = \"#{이름}님, 주문하신 상품이 발송되었습니다. 송장번호: #{VAR1}\"\nalter = true\ncallback_no = \"0212345678\"\n".into(),
        "brand-i" => "[message]\nservice = 2001\nchat_bubble_type = \"TEXT\"\ntext = \"(광고) 세일 무료거부 080-000-0000\"\nalter = true\ncallback_no = \"0212345678\"\n".into(),
        "brand-n" => "[message]\nservice = 2001\nchat_bubble_type = \"TEXT\"\ntargeting = \"N\"\nchannel_id = \"ch-demo-large\"\ntext = \"(광고) 세일 무료거부 080-000-0000\"\n".into(),
        "brand-m" => "[message]\nservice = 2001\nchat_bubble_type = \"TEXT\"\ntargeting = \"M\"\nchannel_id = \"ch-demo-large\"\ntext = \"(광고) 세일 무료거부 080-000-0000\"\nalter = true\ncallback_no = \"0212345678\"\n".into(),
        "sms" => "[message]\nservice = 3001\ntext = \"#{name}님 주문 #{VAR1}\"\ncallback_no = \"0212345678\"\n".into(),
        "lms" => "[message]\nservice = 3001\nsubject = \"안내\"\ntext = \"#{name}님 주문 #{VAR1} 안내드립니다\"\ncallback_no = \"0212345678\"\n".into(),
        "gateway" => format!("[message]\nsender_key = \"{SENDER_KEY}\"\ntemplate = \"ORDER_SHIPPED\"\ntext = \"#{{이름}}님, 주문하신 상품이 발송되었습니다. 송장번호: #{{VAR1}}\"\nalter = true\ncallback_no = \"0212345678\"\n"),
        other => panic!("no message for {other}"),
    }
}

fn kind_of(name: &str) -> &str {
    match name {
        "brand-i" | "brand-n" | "brand-m" => "brand",
        "gateway" => "gateway-alimtalk",
        other => other,
    }
}

struct Run {
    dir: tempfile::TempDir,
}

impl Run {
    fn new(name: &str, endpoint: &str) -> Run {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("people.csv"), people()).unwrap();
        let campaign = format!(
            "kind = \"{}\"\n{endpoint}[credentials]\ngroup_id = \"demo\"\n{}[recipients]\npath = \"people.csv\"\nname = \"name\"\nvariables = {{ VAR1 = \"order\" }}\n{}",
            kind_of(name),
            message(name),
            prices_toml()
        );
        std::fs::write(dir.path().join("campaign.toml"), campaign).unwrap();
        Run { dir }
    }

    fn run_dir(&self) -> PathBuf {
        self.dir.path().join("run")
    }

    fn msgbatch(&self, args: &[&str]) -> std::process::Output {
        Command::new(BIN)
            .env_clear()
            .env("MSGBATCH_API_KEY", "sbx-demo-key")
            .env("MSGBATCH_CLOCK", DAYTIME)
            .args(args)
            .output()
            .unwrap()
    }

    fn send(&self, wait: bool) {
        let campaign = self.dir.path().join("campaign.toml");
        let out = self.run_dir();
        let mut args = vec!["run", campaign.to_str().unwrap(), "--out", out.to_str().unwrap()];
        if wait {
            args.extend(["--wait", "--min-age", "0s", "--poll-every", "10ms"]);
        }
        let output = self.msgbatch(&args);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    fn report(&self) -> Value {
        let out = self.run_dir();
        let output = self.msgbatch(&["report", out.to_str().unwrap(), "--json"]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap()
    }
}

/// A run of `name` against the embedded sandbox, sent and reported: its summary, and report.csv's
/// header and rows.
fn sent_and_reported(name: &str) -> (Run, Value, Vec<String>, Vec<csv::StringRecord>) {
    let run = Run::new(name, "");
    run.send(false);
    let summary = run.report();
    let (header, rows) = csv_rows(&run.run_dir().join("report.csv"));
    (run, summary, header, rows)
}

/// report.parquet of the run, read back whole.
fn parquet_frame(run: &Run) -> DataFrame {
    let file = std::fs::File::open(run.run_dir().join("report.parquet")).unwrap();
    ParquetReader::new(file).finish().unwrap()
}

fn csv_rows(path: &Path) -> (Vec<String>, Vec<csv::StringRecord>) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader.headers().unwrap().iter().map(str::to_string).collect();
    (header, reader.records().map(Result::unwrap).collect())
}

#[test]
fn report_columns_are_pinned_in_csv_and_parquet() {
    let (run, _, header, _) = sent_and_reported("sms");
    assert_eq!(header, PINNED_COLUMNS);
    let names: Vec<String> = parquet_frame(&run)
        .get_column_names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    assert_eq!(names, PINNED_COLUMNS);
}

/// A Parquet cell as report.csv writes it: an absent value empty.
fn csv_text(value: AnyValue<'_>) -> String {
    match value {
        AnyValue::Null => String::new(),
        AnyValue::String(text) => text.to_string(),
        AnyValue::StringOwned(text) => text.to_string(),
        AnyValue::Boolean(flag) => flag.to_string(),
        AnyValue::UInt32(number) => number.to_string(),
        AnyValue::UInt64(number) => number.to_string(),
        AnyValue::Int64(number) => number.to_string(),
        other => panic!("a report cell of an unexpected type: {other:?}"),
    }
}

#[test]
fn report_parquet_holds_the_csv_rows_cell_for_cell() {
    // Rejected, duplicate, suppressed and answered rows, priced, some with a fallback: every kind
    // of cell.
    let (run, _, _, rows) = sent_and_reported("alimtalk");
    let frame = parquet_frame(&run);
    assert_eq!(frame.height(), rows.len());
    for (index, row) in rows.iter().enumerate() {
        let cells: Vec<String> = frame
            .columns()
            .iter()
            .map(|column| csv_text(column.get(index).unwrap()))
            .collect();
        assert_eq!(cells, row.iter().collect::<Vec<_>>(), "row {}", index + 1);
    }
}

#[test]
fn every_input_row_is_in_the_report_once_and_the_files_are_owner_only() {
    let (run, summary, _, rows) = sent_and_reported("sms");
    let input_rows = people().lines().count() - 1;
    let numbers: Vec<u64> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    assert_eq!(
        numbers,
        (2..=input_rows as u64 + 1).collect::<Vec<_>>(),
        "rows 2..=N+1 (the header is row 1), each once, in order"
    );
    let status = &summary["status"];
    let bucket = |name: &str| status[name].as_u64().unwrap();
    assert_eq!(
        bucket("rows"),
        bucket("rejected")
            + bucket("duplicates")
            + bucket("suppressed")
            + bucket("sent")
            + bucket("uncertain")
            + bucket("pending")
    );
    let acceptance = |prefix: &str| rows.iter().filter(|r| r[9].starts_with(prefix)).count() as u64;
    assert_eq!(acceptance("REJECTED"), bucket("rejected"));
    assert_eq!(acceptance("DUPLICATE"), bucket("duplicates"));
    // Phones are in full in the report, which is why it is owner-only.
    assert!(rows.iter().any(|r| &r[1] == "01020000010"), "full phone numbers");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for name in [
            "report.csv",
            "report.parquet",
            "summary.json",
            "summary.md",
            "summary.html",
            "rejects.csv",
        ] {
            let mode = std::fs::metadata(run.run_dir().join(name))
                .unwrap()
                .permissions()
                .mode()
                & 0o777;
            assert_eq!(mode, 0o600, "{name}");
        }
    }
}

fn report_totals(summary: &Value) -> BTreeMap<String, (i64, i64)> {
    summary["classes"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(class, t)| {
            (
                class.clone(),
                (t["charged"].as_i64().unwrap(), t["refunded"].as_i64().unwrap()),
            )
        })
        .filter(|(_, totals)| *totals != (0, 0))
        .collect()
}

fn ledger_totals(totals: BTreeMap<BillingClass, ClassTotals>) -> BTreeMap<String, (i64, i64)> {
    totals
        .into_iter()
        .map(|(class, t)| (class.as_str().to_string(), (t.charged, t.refunded)))
        .collect()
}

#[test]
fn charged_and_refunded_totals_equal_the_sandbox_ledger_for_every_kind() {
    for name in ["alimtalk", "brand-i", "brand-n", "brand-m", "sms", "lms", "gateway"] {
        let sandbox = SandboxProcess::start_with(&["--settle-after", "0s"]);
        let run = Run::new(name, &sandbox.endpoint_toml());
        run.send(name == "gateway");
        let summary = run.report();
        let ledger = ledger_totals(sandbox.ledger().totals());
        assert!(!ledger.is_empty(), "{name}: the sandbox charged something");
        assert_eq!(
            report_totals(&summary),
            ledger,
            "{name}: report totals per billing class equal the ledger's"
        );
    }
}

fn export_ledger(sandbox: &SandboxProcess, path: &Path) -> msgbatch::api::ledger::Ledger {
    let ledger = sandbox.ledger();
    std::fs::write(path, serde_json::to_vec(&ledger).unwrap()).unwrap();
    ledger
}

#[test]
fn reconcile_finds_an_exported_ledger_balanced_and_names_a_tampered_entry() {
    for name in ["alimtalk", "gateway"] {
        let sandbox = SandboxProcess::start_with(&["--settle-after", "0s"]);
        let run = Run::new(name, &sandbox.endpoint_toml());
        run.send(name == "gateway");
        let ledger_path = run.dir.path().join("ledger.json");
        let mut ledger = export_ledger(&sandbox, &ledger_path);
        let out = run.run_dir();
        let balanced = run.msgbatch(&[
            "reconcile",
            out.to_str().unwrap(),
            "--ledger",
            ledger_path.to_str().unwrap(),
            "--json",
        ]);
        assert_eq!(
            balanced.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&balanced.stderr)
        );
        let result: Value = serde_json::from_slice(&balanced.stdout).unwrap();
        assert_eq!(result["mismatches"].as_u64(), Some(0), "{name}");
        assert_eq!(result["ledger_entries"].as_u64(), Some(ledger.entries.len() as u64));

        // One charge billed one unit more than the report says.
        ledger.entries[0].amount += 1;
        let reference = ledger.entries[0].reference.clone();
        std::fs::write(&ledger_path, serde_json::to_vec(&ledger).unwrap()).unwrap();
        let tampered = run.msgbatch(&[
            "reconcile",
            out.to_str().unwrap(),
            "--ledger",
            ledger_path.to_str().unwrap(),
        ]);
        assert_eq!(tampered.status.code(), Some(1), "{name}");
        let (_, mismatches) = csv_rows(&out.join("reconcile.csv"));
        assert_eq!(mismatches.len(), 1, "{name}: {mismatches:?}");
        assert_eq!(&mismatches[0][0], "amount_differs");
        assert_eq!(&mismatches[0][1], reference.as_str());
    }
}

/// Rows of a run's report whose message or fallback the service took.
fn accepted_phones(run: &Run) -> std::collections::BTreeSet<String> {
    let (header, rows) = csv_rows(&run.run_dir().join("report.csv"));
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    rows.iter()
        .filter(|r| {
            let acceptance = &r[at("acceptance")];
            matches!(acceptance, "OK" | "SMS_00" | "MMS_0000" | "GW_PENDING") || &r[at("fallback_sent")] == "true"
        })
        .map(|r| r[at("phone")].to_string())
        .collect()
}

#[test]
fn a_retry_of_failed_recipients_never_contains_an_accepted_one() {
    for name in ["alimtalk", "sms", "gateway"] {
        let sandbox = SandboxProcess::start_with(&["--settle-after", "0s"]);
        let run = Run::new(name, &sandbox.endpoint_toml());
        run.send(name == "gateway");
        run.report();
        let accepted = accepted_phones(&run);
        assert!(!accepted.is_empty());
        let out = run.run_dir();
        let retry_dir = run.dir.path().join("retry");
        let planned = run.msgbatch(&[
            "retry",
            out.to_str().unwrap(),
            "--only",
            "failed",
            "--out",
            retry_dir.to_str().unwrap(),
            "--json",
        ]);
        if name == "alimtalk" {
            // Its one channel failure got a fallback SMS: nothing failed, and retry says so.
            let stderr = String::from_utf8_lossy(&planned.stderr);
            assert_eq!(planned.status.code(), Some(2), "{stderr}");
            assert!(stderr.contains("no failed recipient"), "{stderr}");
            continue;
        }
        assert_eq!(
            planned.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&planned.stderr)
        );
        let (_, retried) = csv_rows(&retry_dir.join("recipients.csv"));
        let retried: Vec<String> = retried.iter().map(|r| r[0].to_string()).collect();
        // Expected from the fixture: SMS's 96 answered ERROR; gateway's 93 was accepted before
        // it failed (so it is not retried) and 95 was refused at acceptance.
        let expected = if name == "sms" {
            ["01020000796"]
        } else {
            ["01020000695"]
        };
        assert_eq!(retried, expected, "{name}");
        for phone in &retried {
            assert!(
                !accepted.contains(phone),
                "{name}: {phone} was accepted and must not be retried"
            );
        }
        // The retry campaign validates as it stands.
        let validate = run.msgbatch(&["validate", retry_dir.join("campaign.toml").to_str().unwrap(), "--json"]);
        assert_eq!(
            validate.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&validate.stderr)
        );
    }
}

#[test]
fn an_interrupted_run_is_reported_with_its_pending_and_uncertain_rows() {
    let sandbox = SandboxProcess::start();
    let run = Run::new("sms", &sandbox.endpoint_toml());
    // Chunks of 2: the crash after the third in-flight mark leaves done, uncertain and pending chunks.
    let campaign = run.dir.path().join("campaign.toml");
    let text = std::fs::read_to_string(&campaign).unwrap() + "[send]\nchunk_size = 2\nconcurrency = 1\n";
    std::fs::write(&campaign, text).unwrap();
    let out = run.run_dir();
    let crashed = Command::new(BIN)
        .env_clear()
        .env("MSGBATCH_API_KEY", "sbx-demo-key")
        .env("MSGBATCH_CLOCK", DAYTIME)
        .env("MSGBATCH_FAILPOINT", "after-in-flight:3")
        .args(["run", campaign.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_ne!(crashed.status.code(), Some(0));
    let summary = run.report();
    let (header, rows) = csv_rows(&out.join("report.csv"));
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let count = |value: &str| rows.iter().filter(|r| &r[at("acceptance")] == value).count() as u64;
    let status = &summary["status"];
    assert_eq!(
        rows.len() as u64,
        status["rows"].as_u64().unwrap(),
        "every input row is reported"
    );
    assert_eq!(count("UNCERTAIN"), status["uncertain"].as_u64().unwrap());
    assert_eq!(count("PENDING"), status["pending"].as_u64().unwrap());
    assert_eq!(count("UNCERTAIN"), 2, "the chunk marked before the crash");
    assert!(count("PENDING") > 0);
    assert!(rows
        .iter()
        .filter(|r| &r[at("acceptance")] == "UNCERTAIN")
        .all(|r| &r[at("charge_state")] == "uncertain"));
}

#[test]
fn gateway_results_pending_beyond_the_horizon_are_provisional_in_the_report() {
    // The sandbox's default: results settle only after 300 s.
    let sandbox = SandboxProcess::start();
    let run = Run::new("gateway", &sandbox.endpoint_toml());
    run.send(false);
    let out = run.run_dir();
    let collected = run.msgbatch(&["collect", out.to_str().unwrap(), "--min-age", "0s", "--horizon", "0s"]);
    assert_eq!(
        collected.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&collected.stderr)
    );
    let summary = run.report();
    let (header, rows) = csv_rows(&out.join("report.csv"));
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let accepted: Vec<_> = rows.iter().filter(|r| &r[at("acceptance")] == "GW_PENDING").collect();
    assert!(!accepted.is_empty());
    for row in &accepted {
        assert_eq!(&row[at("charge_state")], "provisional");
        assert_eq!(&row[at("final_result")], "GW_PENDING");
    }
    let price = Accounts::demo().groups[0].prices.alimtalk;
    assert_eq!(
        summary["classes"]["alimtalk"]["provisional"].as_i64(),
        Some(price * accepted.len() as i64)
    );
}
