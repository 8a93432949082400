//! `msgbatch statement` with the real binary: runs of several kinds (SMS, LMS, notification, gateway) and a partial run summed by class, campaign and day, compared with the sandbox's ledger entry by entry (a campaign the statement does not know shows up, exit 1), the month filter, `--csv-bom` and refusals.

mod common;
#[path = "common/xlsx.rs"]
mod xlsx;

use common::process::{exec, msgbatch_at, path_str, Outcome, SandboxProcess};
use msgbatch::statement::{day_of, Month};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const DAYTIME: &str = "2026-11-23T11:00:00+09:00";
const EXIT_FAILED: i32 = 1;
const EXIT_REFUSED: i32 = 2;
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
/// The totals a report's summary.json and the statement share, per billing class.
const TOTALS: [&str; 8] = msgbatch::report::CLASS_TOTALS;

/// A folder of sample campaigns, all sending to one sandbox process so that one ledger holds them.
struct Runs {
    dir: tempfile::TempDir,
    sandbox: SandboxProcess,
}

impl Runs {
    fn new() -> Runs {
        let dir = tempfile::tempdir().unwrap();
        let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
        for file in [
            "recipients.csv",
            "recipients.parquet",
            "suppression.csv",
            "winter-sale.txt",
        ] {
            std::fs::copy(samples.join(file), dir.path().join(file)).unwrap();
        }
        Runs {
            dir,
            sandbox: SandboxProcess::start_with(&["--settle-after", "0s"]),
        }
    }

    fn msgbatch(&self) -> Command {
        let mut command = msgbatch_at(self.dir.path(), DAYTIME);
        command.env("MSGBATCH_GROUP_ID", "demo");
        command
    }

    /// The sample `sample` pointed at the sandbox process, with `extra` settings at its end.
    fn campaign(&self, sample: &str, extra: &str) -> PathBuf {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("samples").join(sample)).unwrap();
        let kept: Vec<&str> = text
            .lines()
            .filter(|line| !line.starts_with("endpoint") && !line.starts_with("sandbox_accounts"))
            .collect();
        let path = self.dir.path().join(sample);
        std::fs::write(
            &path,
            format!("{}{}\n{extra}", self.sandbox.endpoint_toml(), kept.join("\n")),
        )
        .unwrap();
        path
    }

    fn run(&self, sample: &str, name: &str, extra_args: &[&str]) -> PathBuf {
        let campaign = self.campaign(sample, "");
        let run_dir = self.dir.path().join(name);
        let mut args = vec!["run", path_str(&campaign), "--out", path_str(&run_dir)];
        args.extend_from_slice(extra_args);
        exec(self.msgbatch(), &args).expect_code(0, name);
        run_dir
    }

    /// The text sample in chunks of 3, aborted after its third chunk is marked in flight: two
    /// chunks answered, one uncertain (never sent), the rest pending.
    fn partial_run(&self) -> PathBuf {
        let campaign = self.campaign("text.toml", "[send]\nchunk_size = 3\nconcurrency = 1\n");
        let run_dir = self.dir.path().join("partial");
        let mut command = self.msgbatch();
        command.env("MSGBATCH_FAILPOINT", "after-in-flight:3");
        let crashed = exec(command, &["run", path_str(&campaign), "--out", path_str(&run_dir)]);
        assert!(
            crashed.stderr.contains("failpoint after-in-flight:3 reached"),
            "{}",
            crashed.show()
        );
        run_dir
    }

    /// The run's report summary (summary.json as `report --json` prints it).
    fn report(&self, run_dir: &Path) -> Value {
        exec(self.msgbatch(), &["report", path_str(run_dir), "--json"])
            .expect_code(0, "report")
            .json()
    }

    fn export_ledger(&self) -> (PathBuf, msgbatch::api::ledger::Ledger) {
        let ledger = self.sandbox.ledger();
        let path = self.dir.path().join("ledger.json");
        std::fs::write(&path, serde_json::to_vec(&ledger).unwrap()).unwrap();
        (path, ledger)
    }

    fn statement(&self, runs: &[&Path], args: &[&str]) -> Outcome {
        let mut all = vec!["statement"];
        all.extend(runs.iter().map(|run| path_str(run)));
        all.extend_from_slice(args);
        exec(self.msgbatch(), &all)
    }
}

fn csv_rows(path: &Path) -> (Vec<String>, Vec<csv::StringRecord>) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader.headers().unwrap().iter().map(str::to_string).collect();
    (header, reader.records().map(Result::unwrap).collect())
}

/// Per billing class and total, the sums of the reports' class totals.
fn summed(summaries: &[&Value]) -> BTreeMap<String, BTreeMap<&'static str, i64>> {
    let mut sums: BTreeMap<String, BTreeMap<&'static str, i64>> = BTreeMap::new();
    for summary in summaries {
        for (class, totals) in summary["classes"].as_object().unwrap() {
            for key in TOTALS {
                *sums.entry(class.clone()).or_default().entry(key).or_default() += totals[key].as_i64().unwrap();
            }
        }
    }
    sums
}

/// The sum of `key` over an object of totals (by class, by day).
fn summed_over(totals: &Value, key: &str) -> i64 {
    totals
        .as_object()
        .unwrap()
        .values()
        .map(|t| t[key].as_i64().unwrap())
        .sum()
}

fn totals_of(value: &Value) -> BTreeMap<&'static str, i64> {
    TOTALS.iter().map(|key| (*key, value[*key].as_i64().unwrap())).collect()
}

#[test]
fn a_month_of_runs_adds_up_to_their_reports_and_the_ledger_and_a_campaign_it_does_not_know_is_listed() {
    let month = Runs::new();
    let sms = month.run("sms.toml", "sms", &[]);
    let lms = month.run("lms.toml", "lms", &[]);
    let alimtalk = month.run("alimtalk.toml", "alimtalk", &[]);
    let gateway = month.run(
        "gateway-alimtalk.toml",
        "gateway",
        &["--wait", "--min-age", "0s", "--poll-every", "10ms"],
    );
    let partial = month.partial_run();
    let runs = [
        sms.as_path(),
        lms.as_path(),
        alimtalk.as_path(),
        gateway.as_path(),
        partial.as_path(),
    ];
    let summaries: Vec<Value> = runs.iter().map(|run| month.report(run)).collect();
    let partial_status = &summaries[4]["status"];
    assert!(partial_status["uncertain"].as_u64().unwrap() > 0 && partial_status["pending"].as_u64().unwrap() > 0);
    let (ledger_path, ledger) = month.export_ledger();
    let sent_month = Month::of(day_of(ledger.entries[0].date)).to_string();

    let out = month.dir.path().join("statement");
    let balanced = month
        .statement(
            &runs,
            &["--ledger", path_str(&ledger_path), "--out", path_str(&out), "--json"],
        )
        .expect_code(0, "statement of the month with its ledger");
    let statement = balanced.json();
    assert_eq!(statement["month"], sent_month.as_str(), "the month the runs sent in");

    // By billing class: the reports' charges added up, the partial run's answered rows only.
    let expected = summed(&summaries.iter().collect::<Vec<_>>());
    let classes: BTreeMap<String, BTreeMap<&str, i64>> = statement["classes"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(class, totals)| (class.clone(), totals_of(totals)))
        .collect();
    assert_eq!(classes, expected);
    for class in ["sms", "lms", "alimtalk", "fallback_sms"] {
        assert!(
            classes.get(class).is_some_and(|t| t["charged"] > 0),
            "{class} charged: {classes:?}"
        );
    }
    assert!(
        classes["alimtalk"]["refunded"] > 0,
        "the gateway's FAILED result refunded"
    );
    assert!(classes["alimtalk"]["disputed"] > 0, "the gateway's GIVEUP disputed");

    // By campaign: each run's net; by day and in total: the same money.
    let campaigns = statement["campaigns"].as_object().unwrap();
    assert_eq!(campaigns.len(), 5);
    for (run, summary) in runs.iter().zip(&summaries) {
        let name = statement["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|info| Path::new(info["run_dir"].as_str().unwrap()) == *run)
            .unwrap()["campaign"]
            .as_str()
            .unwrap()
            .to_string();
        let net = summed_over(&summary["classes"], "charged") - summed_over(&summary["classes"], "refunded");
        let campaign = &campaigns[&name];
        assert_eq!(
            campaign["charged"].as_i64().unwrap() - campaign["refunded"].as_i64().unwrap(),
            net,
            "{name}"
        );
    }
    let total = totals_of(&statement["total"]);
    assert_eq!(summed_over(&statement["days"], "charged"), total["charged"]);
    assert_eq!(total["charged"], expected.values().map(|t| t["charged"]).sum::<i64>());

    // The partial run: not complete, and it counts only the rows the service answered for.
    let partial_info = &statement["runs"][4];
    assert_eq!(partial_info["status"]["complete"], false);
    assert_eq!(partial_info["sends_in_month"], partial_status["sent"]);

    // The ledger: every entry of the month matched.
    let comparison = &statement["ledger"];
    assert_eq!(comparison["balanced"], true, "{comparison}");
    assert_eq!(comparison["entries"].as_u64(), Some(ledger.entries.len() as u64));
    assert_eq!(comparison["mismatches"].as_array().unwrap().len(), 0);

    // The files: statement.csv adds up to the same classes; all owner-only.
    let (header, lines) = csv_rows(&out.join("statement.csv"));
    assert_eq!(
        header,
        [
            "day",
            "campaign",
            "run",
            "kind",
            "billing_class",
            "charged",
            "charged_count",
            "refunded",
            "refunded_count",
            "provisional",
            "provisional_count",
            "disputed",
            "disputed_count",
            "net"
        ],
        "pinned"
    );
    let mut csv_charged: BTreeMap<String, i64> = BTreeMap::new();
    for line in &lines {
        *csv_charged.entry(line[4].to_string()).or_default() += line[5].parse::<i64>().unwrap();
    }
    assert_eq!(
        csv_charged,
        expected
            .iter()
            .map(|(class, t)| (class.clone(), t["charged"]))
            .collect()
    );
    assert!(!std::fs::read(out.join("statement.csv")).unwrap().starts_with(UTF8_BOM));
    #[cfg(unix)]
    for name in [
        "statement.csv",
        "statement.xlsx",
        "statement.html",
        "ledger-mismatches.csv",
    ] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(out.join(name)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{name}");
    }
    let html = std::fs::read_to_string(out.join("statement.html")).unwrap();
    assert!(html.contains(&format!("Statement {sent_month}")));
    assert!(
        html.contains(&msgbatch::statement::won(total["charged"])),
        "the total in won"
    );

    // The workbook: a sheet per view, frozen and filtered, the total in won.
    let book = xlsx::Workbook::open(&out.join("statement.xlsx"));
    assert_eq!(
        book.names(),
        [
            "By class",
            "By campaign",
            "By day",
            "Lines",
            "Runs",
            "Ledger",
            "Mismatches"
        ]
    );
    let by_class = book.sheet("By class");
    assert!(by_class.header_frozen());
    assert!(by_class.autofilter().is_some());
    let total_row = by_class.row_of("total");
    assert_eq!(total_row[1].number(), total["charged"] as f64);
    assert_eq!(total_row[1].number_format.as_deref(), Some("₩#,##0"));
    assert_eq!(book.sheet("Lines").rows(), lines.len() + 1);

    // A campaign sent by another tool: in the ledger, in no run given. Listed, exit 1.
    let other = month.run("brand.toml", "other-tool", &[]);
    let other_summary = month.report(&other);
    let (other_csv_header, other_rows) = csv_rows(&other.join("report.csv"));
    let at = |name: &str| other_csv_header.iter().position(|h| h == name).unwrap();
    let unknown: BTreeSet<String> = other_rows
        .iter()
        .filter(|row| &row[at("charge_state")] == "charged" || &row[at("fallback_sent")] == "true")
        .map(|row| row[at("uid")].to_string())
        .collect();
    assert!(!unknown.is_empty());
    let (ledger_path, _) = month.export_ledger();
    let mismatched = month.statement(&runs, &["--ledger", path_str(&ledger_path), "--out", path_str(&out)]);
    let mismatched = mismatched.expect_code(EXIT_FAILED, "a ledger entry no run knows");
    assert!(mismatched.stdout.contains("mismatch"), "{}", mismatched.show());
    let (header, listed) = csv_rows(&out.join("ledger-mismatches.csv"));
    assert_eq!(
        header,
        [
            "problem",
            "reference",
            "billing_class",
            "entry",
            "ledger_amount",
            "report_amount",
            "run",
            "row"
        ]
    );
    assert!(
        listed.iter().all(|m| &m[0] == "only_in_ledger" && m[6].is_empty()),
        "{listed:?}"
    );
    let references: BTreeSet<String> = listed.iter().map(|m| m[1].to_string()).collect();
    assert_eq!(references, unknown, "exactly the other tool's charges");
    let other_charged = summed_over(&other_summary["classes"], "charged");
    assert!(other_charged > 0);
    assert_eq!(
        listed.iter().map(|m| m[4].parse::<i64>().unwrap()).sum::<i64>(),
        other_charged,
        "the ledger amounts listed are the other campaign's charges"
    );
}

#[test]
fn the_month_filter_bom_and_refusals() {
    let month = Runs::new();
    let sms = month.run("sms.toml", "sms", &[]);
    let out = month.dir.path().join("statement");

    // Another month: the run contributes nothing to it.
    let empty = month
        .statement(&[&sms], &["--month", "2001-01", "--out", path_str(&out), "--json"])
        .expect_code(0, "a month without sends")
        .json();
    assert_eq!(empty["month"], "2001-01");
    assert_eq!(empty["lines"].as_array().unwrap().len(), 0);
    assert_eq!(empty["total"]["charged"], 0);
    assert_eq!(empty["runs"][0]["sends_in_month"], 0);

    // --csv-bom: the mark, then the same CSV.
    month
        .statement(&[&sms], &["--out", path_str(&out)])
        .expect_code(0, "statement");
    let plain = std::fs::read(out.join("statement.csv")).unwrap();
    month
        .statement(&[&sms], &["--out", path_str(&out), "--csv-bom"])
        .expect_code(0, "statement --csv-bom");
    let marked = std::fs::read(out.join("statement.csv")).unwrap();
    assert!(marked.starts_with(UTF8_BOM));
    assert_eq!(&marked[UTF8_BOM.len()..], &plain[..]);

    // Refused: the same run twice (its charges would count twice), a bad month, a folder that is no run.
    let twice = month
        .statement(&[&sms, &sms], &[])
        .expect_code(EXIT_REFUSED, "a run given twice");
    assert!(twice.stderr.contains("given twice"), "{}", twice.show());
    month
        .statement(&[&sms], &["--month", "2026-13"])
        .expect_code(EXIT_REFUSED, "month 13");
    let not_a_run = month.dir.path().join("nothing");
    std::fs::create_dir(&not_a_run).unwrap();
    let refused = month
        .statement(&[&sms, &not_a_run], &[])
        .expect_code(EXIT_REFUSED, "not a run");
    assert!(refused.stderr.contains("nothing"), "{}", refused.show());
    // A ledger that is not an export, and one that is not there: refused, the file named.
    let not_a_ledger = month.dir.path().join("ledger.csv");
    std::fs::write(&not_a_ledger, "date,amount\n").unwrap();
    for ledger in [not_a_ledger, month.dir.path().join("missing.json")] {
        let refused = month
            .statement(&[&sms], &["--ledger", path_str(&ledger)])
            .expect_code(EXIT_REFUSED, "not a ledger");
        assert!(refused.stderr.contains(path_str(&ledger)), "{}", refused.show());
    }
}
