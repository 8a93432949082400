//! report.xlsx with the real binary: frozen and filtered header, phones as text, won amounts as numbers, a Summary sheet equal to summary.json; and report.csv with and without `--csv-bom`.

mod common;
#[path = "common/xlsx.rs"]
mod xlsx;

use common::process::{copy_samples, exec, msgbatch_at, path_str};
use serde_json::Value;
use std::path::{Path, PathBuf};
use xlsx::Workbook;

const DAYTIME: &str = "2026-11-23T11:00:00+09:00";
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The SMS sample (prices, rejected, duplicate and refused rows) sent to the in-process sandbox.
struct SentSample {
    dir: tempfile::TempDir,
}

impl SentSample {
    fn send() -> SentSample {
        let dir = tempfile::tempdir().unwrap();
        copy_samples(dir.path(), &["sms.toml", "recipients.csv"]);
        let sample = SentSample { dir };
        let run = sample.run_dir();
        exec(
            msgbatch_at(sample.dir.path(), DAYTIME),
            &["run", "sms.toml", "--out", path_str(&run)],
        )
        .expect_code(0, "run the SMS sample");
        sample
    }

    fn run_dir(&self) -> PathBuf {
        self.dir.path().join("run")
    }

    /// `msgbatch report RUN_DIR --json` with `extra` arguments: the summary it prints.
    fn report(&self, extra: &[&str]) -> Value {
        let run = self.run_dir();
        let mut args = vec!["report", path_str(&run), "--json"];
        args.extend_from_slice(extra);
        exec(msgbatch_at(self.dir.path(), DAYTIME), &args)
            .expect_code(0, "report")
            .json()
    }
}

fn csv_rows(path: &Path) -> Vec<csv::StringRecord> {
    csv::Reader::from_path(path)
        .unwrap()
        .records()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn report_xlsx_has_a_frozen_filtered_header_phones_as_text_and_amounts_in_won() {
    let sample = SentSample::send();
    let summary = sample.report(&[]);
    let run = sample.run_dir();
    let written: Vec<&str> = summary["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(
        written.iter().any(|f| f.ends_with("report.xlsx")),
        "the report names report.xlsx among its files: {written:?}"
    );
    let book = Workbook::open(&run.join("report.xlsx"));
    assert_eq!(book.names(), ["Summary", "Rows"]);
    let rows = book.sheet("Rows");
    let csv = csv_rows(&run.join("report.csv"));
    let input_rows = summary["status"]["rows"].as_u64().unwrap() as usize;
    assert_eq!(csv.len(), input_rows);

    // The header: the pinned columns, frozen, with filter buttons over every row.
    let header: Vec<&str> = rows.column_headers();
    assert_eq!(header, msgbatch::report::COLUMNS);
    assert!(
        rows.header_frozen(),
        "frozen header pane: {}",
        &rows.xml[..rows.xml.len().min(600)]
    );
    assert_eq!(rows.autofilter(), Some(format!("A1:R{}", input_rows + 1)));
    assert_eq!(rows.rows(), input_rows + 1, "a header and every input row");

    // Every row as in report.csv, typed: phones text (leading zero kept), amounts numbers in won.
    let mut charged = 0;
    for (index, record) in csv.iter().enumerate() {
        let line = index as u32 + 2;
        let at = |column: &str| rows.cell(&format!("{column}{line}"));
        assert_eq!(
            at("A").unwrap().number(),
            record[0].parse::<f64>().unwrap(),
            "row number"
        );
        let phone = &record[1];
        if phone.is_empty() {
            assert!(at("B").is_none(), "an empty phone is a blank cell");
        } else {
            assert_eq!(at("B").unwrap().text(), phone, "line {line}: phone as text");
        }
        assert_eq!(
            at("J").unwrap().text(),
            &record[9],
            "acceptance, the outcome to filter on"
        );
        match record[15].parse::<i64>() {
            Ok(amount) => {
                let cell = at("P").unwrap();
                assert_eq!(cell.number(), amount as f64, "line {line}: amount as a number");
                assert_eq!(cell.number_format.as_deref(), Some("₩#,##0"), "line {line}");
                charged += amount;
            }
            Err(_) => assert!(at("P").is_none(), "line {line}: no amount, blank cell"),
        }
    }
    let phones: Vec<&str> = rows.column("B", 2).iter().map(|cell| cell.text()).collect();
    assert!(
        phones.contains(&"01020000001"),
        "full numbers, leading zero kept: {phones:?}"
    );
    assert_eq!(
        charged,
        summary["classes"]["sms"]["charged"].as_i64().unwrap(),
        "the amounts add up to the summary's charge"
    );
}

#[test]
fn the_summary_sheet_holds_the_accounting_and_the_charges_of_summary_json() {
    let sample = SentSample::send();
    sample.report(&[]);
    let run = sample.run_dir();
    let json: Value = serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    let book = Workbook::open(&run.join("report.xlsx"));
    let sheet = book.sheet("Summary");
    let status = &json["status"];
    for bucket in [
        "rows",
        "rejected",
        "duplicates",
        "suppressed",
        "sent",
        "uncertain",
        "pending",
    ] {
        assert_eq!(
            sheet.labelled(bucket).number(),
            status[bucket].as_u64().unwrap() as f64,
            "{bucket}"
        );
    }
    assert_eq!(sheet.labelled("kind").text(), json["kind"].as_str().unwrap());
    for (acceptance, count) in json["acceptance"].as_object().unwrap() {
        assert_eq!(
            sheet.labelled(acceptance).number(),
            count.as_u64().unwrap() as f64,
            "{acceptance}"
        );
    }
    let classes = json["classes"].as_object().unwrap();
    assert!(!classes.is_empty());
    for (class, totals) in classes {
        let row = sheet.row_of(class);
        for (offset, key) in msgbatch::report::CLASS_TOTALS.iter().enumerate() {
            let cell = row[offset + 1];
            assert_eq!(cell.number(), totals[key].as_i64().unwrap() as f64, "{class} {key}");
            let money = !key.ends_with("_count");
            assert_eq!(
                cell.number_format.as_deref() == Some("₩#,##0"),
                money,
                "{class} {key}: won format on amounts only"
            );
        }
    }
}

#[test]
fn csv_bom_starts_report_csv_with_the_byte_order_mark_and_plain_csv_has_none() {
    let sample = SentSample::send();
    let run = sample.run_dir();
    sample.report(&[]);
    let plain = std::fs::read(run.join("report.csv")).unwrap();
    assert!(plain.starts_with(b"row,phone,"), "plain UTF-8 for tools");

    sample.report(&["--csv-bom"]);
    let marked = std::fs::read(run.join("report.csv")).unwrap();
    assert!(marked.starts_with(UTF8_BOM), "{:?}", &marked[..8]);
    assert_eq!(&marked[UTF8_BOM.len()..], &plain[..], "the same CSV after the mark");
}

#[cfg(unix)]
#[test]
fn report_xlsx_is_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let sample = SentSample::send();
    sample.report(&[]);
    let mode = std::fs::metadata(sample.run_dir().join("report.xlsx"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn no_xlsx_writes_the_other_files_and_takes_away_an_earlier_workbook() {
    let sample = SentSample::send();
    let with = sample.report(&[]);
    let workbook = sample.run_dir().join("report.xlsx");
    assert!(workbook.exists());
    let listed = |summary: &Value| -> Vec<String> {
        summary["files"]
            .as_array()
            .expect("files")
            .iter()
            .map(|file| file.as_str().expect("a path").rsplit('/').next().unwrap().to_string())
            .collect()
    };
    assert!(listed(&with).contains(&"report.xlsx".to_string()), "{with:#}");

    let without = sample.report(&["--no-xlsx"]);
    assert!(
        !workbook.exists(),
        "a workbook of an earlier report no longer stands beside the new files"
    );
    let files = listed(&without);
    assert!(!files.contains(&"report.xlsx".to_string()), "{files:?}");
    for name in ["report.csv", "report.parquet", "summary.json", "summary.html"] {
        assert!(files.contains(&name.to_string()), "{name} in {files:?}");
        assert!(sample.run_dir().join(name).exists(), "{name}");
    }
    assert_eq!(without["status"], with["status"]);
    assert!(
        without.get("workbook_left_out").is_none(),
        "asked, not left out by default: {without:#}"
    );

    let forced = sample.report(&["--xlsx"]);
    assert!(workbook.exists(), "--xlsx writes the workbook");
    assert!(listed(&forced).contains(&"report.xlsx".to_string()));
}

/// A run of `rows` recipients of the SMS sample (distinct numbers), sent to the in-process sandbox.
fn sent_run(dir: &Path, rows: usize) -> PathBuf {
    copy_samples(dir, &["sms.toml"]);
    let mut people = String::from("phone,name,coupon\n");
    for i in 0..rows {
        people.push_str(&format!("010{:08},고객{i},C{i:05}\n", 20_000_000 + i));
    }
    std::fs::write(dir.join("recipients.csv"), people).unwrap();
    let run = dir.join("run");
    exec(msgbatch_at(dir, DAYTIME), &["run", "sms.toml", "--out", path_str(&run)]).expect_code(0, "run");
    run
}

/// `report` where a file may grow to `bytes` at most (RLIMIT_FSIZE, with SIGXFSZ ignored so that
/// a write past it fails with "File too large", as a write fails on a full disk).
fn report_with_file_limit(dir: &Path, run: &Path, out: &Path, bytes: u64) -> (Option<i32>, String) {
    use std::os::unix::process::CommandExt;
    extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
    }
    const SIGXFSZ: i32 = 25;
    const SIG_IGN: usize = 1;
    let mut command = msgbatch_at(dir, DAYTIME);
    command.args(["report", path_str(run), "--out", path_str(out), "--json"]);
    // SAFETY: between fork and exec, only async-signal-safe calls: setrlimit and signal.
    unsafe {
        command.pre_exec(move || {
            let limit = rustix::process::Rlimit {
                current: Some(bytes),
                maximum: Some(bytes),
            };
            rustix::process::setrlimit(rustix::process::Resource::Fsize, limit)?;
            signal(SIGXFSZ, SIG_IGN);
            Ok(())
        });
    }
    let output = command.output().expect("msgbatch runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn report_files_in(out: &Path) -> Vec<String> {
    std::fs::read_dir(out)
        .map(|entries| {
            entries
                .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| name.starts_with("report") || name.starts_with("summary"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_report_that_cannot_be_written_fails_naming_the_file_with_no_internal_error_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let run = sent_run(dir.path(), 30_000);
    // 4 MiB: report.csv (about 2.7 MB) fits, the workbook's sheet data does not; then 2 MiB,
    // where report.csv does not fit either (the checkpoint's files need about 1 MiB).
    for (bytes, file) in [(4 << 20, "report.xlsx"), (2 << 20, "report.csv")] {
        let out = dir.path().join(format!("out-{bytes}"));
        let (code, stderr) = report_with_file_limit(dir.path(), &run, &out, bytes);
        assert_eq!(code, Some(1), "{file}: an I/O failure: {stderr}");
        assert!(
            !stderr.contains("internal error"),
            "{file}: no panic reaches the user: {stderr}"
        );
        assert!(
            stderr.contains(&format!("cannot write {file}")),
            "{file} is named: {stderr}"
        );
        assert!(stderr.contains("File too large"), "{file}: the cause: {stderr}");
        assert_eq!(
            report_files_in(&out),
            Vec::<String>::new(),
            "{file}: nothing left behind"
        );
    }
}
