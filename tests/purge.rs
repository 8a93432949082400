//! `msgbatch purge` with the real binary against a sandbox process: a finished run's names, variables and full numbers destroyed in every file of its directory while its report, status, reconciliation and statement keep their totals; a run that can still send, or one younger than `--older-than`, kept as it was; a purge killed at each of its steps leaves the run purged or not, readable, and finished by the next purge.

mod common;

use common::process::{exec, msgbatch_at, path_str, SandboxProcess};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const DAYTIME: &str = "2026-11-23T11:00:00+09:00";

struct Runs {
    dir: tempfile::TempDir,
    sandbox: SandboxProcess,
}

impl Runs {
    fn new() -> Runs {
        let dir = tempfile::tempdir().unwrap();
        common::process::copy_samples(dir.path(), &["recipients.csv", "recipients.parquet"]);
        Runs {
            dir,
            sandbox: SandboxProcess::start_with(&["--settle-after", "0s"]),
        }
    }

    fn msgbatch_at(&self, clock: &str) -> Command {
        let mut command = msgbatch_at(self.dir.path(), clock);
        command.env("MSGBATCH_GROUP_ID", "demo");
        command
    }

    fn msgbatch(&self) -> Command {
        self.msgbatch_at(DAYTIME)
    }

    /// The `text` sample (names and amounts from Parquet, SMS or LMS by length) run to its end.
    fn run(&self, name: &str, extra: &str) -> PathBuf {
        let sample = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/text.toml")).unwrap();
        let campaign = self.dir.path().join(format!("{name}.toml"));
        std::fs::write(&campaign, format!("{}{sample}\n{extra}", self.sandbox.endpoint_toml())).unwrap();
        let run_dir = self.dir.path().join(name);
        let mut command = self.msgbatch();
        if extra.contains("chunk_size = 3") {
            command.env("MSGBATCH_FAILPOINT", "after-in-flight:3");
            exec(command, &["run", path_str(&campaign), "--out", path_str(&run_dir)]);
        } else {
            exec(command, &["run", path_str(&campaign), "--out", path_str(&run_dir)]).expect_code(0, name);
        }
        run_dir
    }

    fn report(&self, run_dir: &Path) -> Value {
        exec(self.msgbatch(), &["report", path_str(run_dir), "--json"])
            .expect_code(0, "report")
            .json()
    }
}

/// What a report's summary says of the money and the rows, without the files it wrote.
fn totals(summary: &Value) -> Value {
    serde_json::json!({
        "status": summary["status"],
        "acceptance": summary["acceptance"],
        "charge_states": summary["charge_states"],
        "classes": summary["classes"],
        "funnel": summary["funnel"],
    })
}

/// The recipients' numbers (as the plan normalises them, and their last eight digits as people
/// write them) and names.
fn personal_texts(dir: &Path) -> Vec<String> {
    let mut texts = Vec::new();
    let mut reader = csv::Reader::from_path(dir.join("recipients.csv")).unwrap();
    for record in reader.records() {
        let record = record.unwrap();
        if let Ok(number) = msgbatch::phone::normalize(&record[0]) {
            texts.push(number.to_string());
            texts.push(format!("{}-{}", &number[3..7], &number[7..]));
        }
        if record[1].chars().count() >= 2 {
            texts.push(record[1].to_string());
        }
    }
    texts
}

#[test]
fn a_purged_run_holds_no_name_or_number_and_still_reports_reconciles_and_sums() {
    let runs = Runs::new();
    let run_dir = runs.run("sent", "");
    let before = runs.report(&run_dir);
    let texts = personal_texts(runs.dir.path());
    assert!(
        !common::console::files_holding(&run_dir, &texts).is_empty(),
        "the report names the recipients before"
    );
    let ledger = runs.dir.path().join("ledger.json");
    std::fs::write(&ledger, serde_json::to_vec(&runs.sandbox.ledger()).unwrap()).unwrap();
    let statement_before = exec(
        runs.msgbatch(),
        &["statement", path_str(&run_dir), "--out", "s1", "--json"],
    )
    .expect_code(0, "statement")
    .json();

    let purged = exec(runs.msgbatch(), &["purge", path_str(&run_dir)]).expect_code(0, "purge");
    assert!(purged.stdout.contains("purged ("), "{}", purged.show());
    assert!(
        purged.stdout.contains("recipients.parquet"),
        "names the input left to its owner: {}",
        purged.show()
    );
    assert_eq!(
        common::console::files_holding(&run_dir, &texts),
        Vec::new(),
        "no name or number left"
    );

    let after = runs.report(&run_dir);
    assert_eq!(totals(&after), totals(&before));
    let report = std::fs::read_to_string(run_dir.join("report.csv")).unwrap();
    assert!(report.contains("010-****-0001"), "numbers stay, masked: {report}");
    let reconciled = exec(
        runs.msgbatch(),
        &["reconcile", path_str(&run_dir), "--ledger", path_str(&ledger), "--json"],
    )
    .expect_code(0, "reconcile")
    .json();
    assert_eq!(reconciled["mismatches"], 0, "{reconciled}");
    let statement_after = exec(
        runs.msgbatch(),
        &["statement", path_str(&run_dir), "--out", "s2", "--json"],
    )
    .expect_code(0, "statement")
    .json();
    assert!(
        statement_before["total"]["charged"].as_i64().unwrap() > 0,
        "{statement_before}"
    );
    for part in ["classes", "days", "total"] {
        assert_eq!(statement_after[part], statement_before[part], "{part}");
    }
    let status = exec(runs.msgbatch(), &["status", path_str(&run_dir), "--json"])
        .expect_code(0, "status")
        .json();
    assert_eq!(status, before["status"]);

    // Nothing of it can send again, and a purge again is told so.
    for args in [
        vec!["resume", path_str(&run_dir)],
        vec!["retry", path_str(&run_dir), "--only", "failed"],
    ] {
        let refused = exec(runs.msgbatch(), &args).expect_code(2, args[0]);
        assert!(refused.stderr.contains("was purged"), "{}", refused.show());
    }
    let again = exec(runs.msgbatch(), &["purge", path_str(&run_dir)]).expect_code(0, "again");
    assert!(again.stdout.contains("purged before"), "{}", again.show());
}

#[test]
fn a_run_that_can_still_send_or_ended_lately_is_kept_as_it_was() {
    let runs = Runs::new();
    let partial = runs.run("partial", "[send]\nchunk_size = 3\nconcurrency = 1\n");
    let refused = exec(runs.msgbatch(), &["purge", path_str(&partial)]).expect_code(2, "resumable");
    assert!(refused.stderr.contains("can still send"), "{}", refused.show());
    assert!(!partial.join("purged").exists() && !partial.join("purged.partial").exists());
    exec(runs.msgbatch(), &["resume", path_str(&partial), "--resend-uncertain"]).expect_code(0, "it still resumes");

    let recent = runs.run("recent", "");
    let report = std::fs::read(recent.join("report.csv")).ok();
    let kept = exec(
        runs.msgbatch_at("2026-11-27T11:00:00+09:00"),
        &["purge", path_str(&recent), "--older-than", "30"],
    )
    .expect_code(0, "kept");
    assert!(kept.stdout.contains("kept (last answer"), "{}", kept.show());
    assert!(!recent.join("purged").exists());
    assert_eq!(std::fs::read(recent.join("report.csv")).ok(), report);
    let later = exec(
        runs.msgbatch_at("2027-01-30T11:00:00+09:00"),
        &["purge", path_str(&recent), "--older-than", "30"],
    )
    .expect_code(0, "purged");
    assert!(later.stdout.contains("purged ("), "{}", later.show());
}

#[test]
fn a_purge_killed_at_each_step_leaves_the_run_purged_or_not_readable_and_finished_by_the_next() {
    let runs = Runs::new();
    let texts = personal_texts(runs.dir.path());
    for (index, point) in ["purge-staged", "purge-committed", "purge-cleaning"].iter().enumerate() {
        let run_dir = runs.run(&format!("run{index}"), "");
        let before = runs.report(&run_dir);
        let mut command = runs.msgbatch();
        command.env("MSGBATCH_FAILPOINT", format!("{point}:1"));
        let crashed = exec(command, &["purge", path_str(&run_dir)]);
        assert!(
            crashed.stderr.contains(&format!("failpoint {point}:1 reached")),
            "{}",
            crashed.show()
        );
        // Purged or not, it reads: its status and its totals are the same.
        let status = exec(runs.msgbatch(), &["status", path_str(&run_dir), "--json"])
            .expect_code(0, point)
            .json();
        assert_eq!(status, before["status"], "{point}");
        assert_eq!(totals(&runs.report(&run_dir)), totals(&before), "{point}");
        let purged_now = run_dir.join("purged").exists();
        assert_eq!(
            purged_now,
            *point != "purge-staged",
            "{point}: the rename is the commit"
        );
        // The next purge finishes it.
        exec(runs.msgbatch(), &["purge", path_str(&run_dir)]).expect_code(0, point);
        assert_eq!(common::console::files_holding(&run_dir, &texts), Vec::new(), "{point}");
        assert_eq!(totals(&runs.report(&run_dir)), totals(&before), "{point}");
    }
}
