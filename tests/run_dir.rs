//! A run directory is never left dead and never taken from something else: refusals to start leave nothing, foreign folders are refused, and unreadable input never ends in exit 0.

mod common;

use common::process::{exec, msgbatch_at, path_str};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

const DAYTIME: &str = "2026-11-23T11:00:00+09:00";

fn write_campaign(dir: &Path, recipients: &str, endpoint: &str) -> PathBuf {
    let campaign = dir.join("campaign.toml");
    std::fs::write(
        &campaign,
        format!(
            r#"kind = "sms"
{endpoint}
[credentials]
group_id = "demo"

[message]
service = 3001
text = "[데모몰] 주문하신 상품이 오늘 출발합니다."
callback_no = "0212345678"

[recipients]
path = "{recipients}"
phone = "phone"
"#
        ),
    )
    .unwrap();
    campaign
}

fn write_recipients(dir: &Path) {
    std::fs::write(dir.join("people.csv"), "phone\n01020001001\n01020001002\n").unwrap();
}

fn run(dir: &Path, campaign: &Path, out: &Path) -> common::process::Outcome {
    exec(
        msgbatch_at(dir, DAYTIME),
        &["run", path_str(campaign), "--out", path_str(out)],
    )
}

#[test]
fn a_run_refused_for_a_missing_column_leaves_no_run_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("people.csv"), "mobile\n01020001001\n").unwrap();
    let campaign = write_campaign(dir.path(), "people.csv", "");
    let out = dir.path().join("run");

    let refused = run(dir.path(), &campaign, &out).expect_code(2, "missing column");
    assert!(refused.stderr.contains("\"phone\""), "{}", refused.show());
    assert!(!out.exists(), "no dead run directory is left behind");

    std::fs::write(dir.path().join("people.csv"), "phone\n01020001001\n").unwrap();
    run(dir.path(), &campaign, &out).expect_code(0, "the same --out after fixing the file");
}

#[test]
fn a_run_refused_for_a_missing_api_key_leaves_no_run_directory() {
    let dir = tempfile::tempdir().unwrap();
    write_recipients(dir.path());
    let endpoint =
        r#"endpoint = { base_url = "http://127.0.0.1:9/standard", gateway_url = "http://127.0.0.1:9/gateway" }"#;
    let campaign = write_campaign(dir.path(), "people.csv", endpoint);
    let out = dir.path().join("run");
    let mut command = msgbatch_at(dir.path(), DAYTIME);
    command.env_remove("MSGBATCH_API_KEY");
    let refused = exec(command, &["run", path_str(&campaign), "--out", path_str(&out)]);
    let refused = refused.expect_code(2, "no API key");
    assert!(refused.stderr.contains("no API key"), "{}", refused.show());
    assert!(!out.exists(), "no dead run directory is left behind");
}

#[test]
fn out_on_a_folder_holding_other_files_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    write_recipients(dir.path());
    let campaign = write_campaign(dir.path(), "people.csv", "");
    let out = dir.path().join("documents");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("budget.xlsx"), "not a run").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o755)).unwrap();

    let refused = run(dir.path(), &campaign, &out).expect_code(2, "a foreign folder");
    assert!(refused.stderr.contains("is not a run directory"), "{}", refused.show());
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755, "the folder's mode is not changed");
    let names: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["budget.xlsx"], "nothing is written into it");

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    std::fs::set_permissions(&empty, std::fs::Permissions::from_mode(0o750)).unwrap();
    run(dir.path(), &campaign, &empty).expect_code(0, "an empty folder is a fine run directory");
    let mode = std::fs::metadata(&empty).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750, "an existing folder keeps its mode");
}

#[test]
fn a_run_killed_before_it_recorded_anything_is_started_again_by_run_and_explained_by_resume() {
    let dir = tempfile::tempdir().unwrap();
    write_recipients(dir.path());
    let campaign = write_campaign(dir.path(), "people.csv", "");
    let out = dir.path().join("run");
    std::fs::create_dir(&out).unwrap();
    // What a run killed while reading its input leaves: a checkpoint with nothing recorded.
    drop(msgbatch::engine::checkpoint::Checkpoint::open(&out.join("checkpoint"), true).unwrap());
    std::fs::write(out.join("rejects.csv"), "row,column,reason,detail\n").unwrap();

    let resumed = exec(msgbatch_at(dir.path(), DAYTIME), &["resume", path_str(&out)]);
    let resumed = resumed.expect_code(2, "nothing to resume");
    assert!(
        resumed.stderr.contains("stopped before it sent anything") && resumed.stderr.contains("msgbatch run"),
        "{}",
        resumed.show()
    );
    let ran = run(dir.path(), &campaign, &out).expect_code(0, "run takes the directory over");
    assert!(ran.stdout.contains("sent 2"), "{}", ran.show());
}

#[test]
fn a_parquet_file_the_reader_cannot_read_never_ends_in_exit_0_with_rows_missing() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/decimal_phone.parquet");
    std::fs::copy(&fixture, dir.path().join("people.parquet")).unwrap();
    let campaign = write_campaign(dir.path(), "people.parquet", "");
    let validated = exec(
        msgbatch_at(dir.path(), DAYTIME),
        &["validate", path_str(&campaign), "--json"],
    );
    match validated.code {
        Some(0) => assert_eq!(
            validated.json()["rows"],
            3,
            "exit 0 means every row was read: {}",
            validated.show()
        ),
        _ => assert!(
            validated.stderr.contains("people.parquet"),
            "a failure names the file: {}",
            validated.show()
        ),
    }
}

#[test]
fn the_last_lines_of_a_run_say_what_to_do_next() {
    let dir = tempfile::tempdir().unwrap();
    write_recipients(dir.path());
    let campaign = write_campaign(dir.path(), "people.csv", "");
    let out = dir.path().join("run");
    let ran = run(dir.path(), &campaign, &out).expect_code(0, "a complete run");
    let last = ran.stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("report:") && last.contains(&format!("msgbatch report {}", out.display())),
        "{}",
        ran.show()
    );
    assert!(
        !ran.stderr.contains("resume with"),
        "nothing is left to resume: {}",
        ran.show()
    );
}

/// A fresh directory holding two recipients and an advertising campaign for them.
fn advertising_campaign_in_a_new_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    write_recipients(dir.path());
    let campaign = write_advertising_campaign(dir.path());
    (dir, campaign)
}

fn write_advertising_campaign(dir: &Path) -> PathBuf {
    let campaign = dir.join("ad.toml");
    std::fs::write(
        &campaign,
        "kind = \"sms\"\n[credentials]\ngroup_id = \"demo\"\n[message]\nservice = 3001\ntext = \"(광고) 겨울 세일 무료거부 0801234567\"\ncallback_no = \"0212345678\"\nadvertising = true\n[recipients]\npath = \"people.csv\"\n",
    )
    .unwrap();
    campaign
}

#[test]
fn a_start_planned_inside_quiet_hours_or_in_the_past_is_refused_when_it_is_planned() {
    let (dir, campaign) = advertising_campaign_in_a_new_dir();
    let out = dir.path().join("run");
    for (start, why) in [
        ("2026-11-23T22:00", "refusing to start during quiet hours"),
        ("2026-11-22T10:00", "in the past"),
    ] {
        let refused = exec(
            msgbatch_at(dir.path(), DAYTIME),
            &["run", path_str(&campaign), "--out", path_str(&out), "--start-at", start],
        )
        .expect_code(2, start);
        assert!(refused.stderr.contains(why), "{start}: {}", refused.show());
        assert!(!out.exists(), "{start}: nothing is left behind");
    }
}

/// Starts a run scheduled four hours ahead and returns once it prints its wait notice, with the
/// stderr lines seen so far.
fn start_a_scheduled_run(dir: &Path, campaign: &Path, out: &Path) -> (std::process::Child, Vec<String>) {
    use std::io::{BufRead, BufReader};
    let mut command = msgbatch_at(dir, DAYTIME);
    command
        .args([
            "run",
            path_str(campaign),
            "--out",
            path_str(out),
            "--start-at",
            "2026-11-23T15:00",
        ])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        // Read to the end even once nobody listens, so the child never writes into a closed pipe.
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let _ = lines.send(line);
        }
    });
    let mut seen = Vec::new();
    while let Ok(line) = received.recv_timeout(std::time::Duration::from_secs(60)) {
        let waiting = line.starts_with("waiting to start at 2026-11-23 15:00:00 KST (in 4h 0m)");
        seen.push(line);
        if waiting {
            return (child, seen);
        }
    }
    let _ = child.kill();
    let ended = child.wait();
    panic!("no wait notice ({ended:?}); stderr: {seen:?}");
}

/// SIGINT to `child` from this process: no `kill` program started in between, so the signal
/// lands as close to the moment it is sent as it can.
fn interrupt(child: &std::process::Child) {
    extern "C" {
        fn kill(pid: i32, signal: i32) -> i32;
    }
    const SIGINT: i32 = 2;
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: signalling a child this test started and has not yet waited for.
    assert_eq!(unsafe { kill(pid, SIGINT) }, 0);
}

#[test]
fn ctrl_c_at_the_very_moment_of_the_wait_notice_stops_the_run_cleanly() {
    // The notice promises that Ctrl-C leaves the run ready to resume: the handler must already be
    // in place when it is printed, or the signal's default action kills the process.
    let (dir, campaign) = advertising_campaign_in_a_new_dir();
    for attempt in 0..20 {
        let out = dir.path().join(format!("run-{attempt}"));
        let (mut child, seen) = start_a_scheduled_run(dir.path(), &campaign, &out);
        interrupt(&child);
        let status = child.wait().unwrap();
        assert_eq!(
            status.code(),
            Some(3),
            "attempt {attempt}: stopped before sending, not killed by the signal ({status}); stderr: {seen:?}"
        );
    }
}

#[test]
fn ctrl_c_while_waiting_for_the_start_leaves_a_run_that_resume_sends() {
    let (dir, campaign) = advertising_campaign_in_a_new_dir();
    let out = dir.path().join("run");
    let (mut child, seen) = start_a_scheduled_run(dir.path(), &campaign, &out);
    assert!(
        out.join("rejects.csv").exists(),
        "the run directory is written before the wait"
    );
    interrupt(&child);
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(3),
        "stopped before sending: incomplete; stderr: {seen:?}"
    );

    let status = exec(msgbatch_at(dir.path(), DAYTIME), &["status", path_str(&out), "--json"]).json();
    assert_eq!(
        (status["sent"].as_u64(), status["pending"].as_u64()),
        (Some(0), Some(2)),
        "{status}"
    );
    let resumed = exec(msgbatch_at(dir.path(), DAYTIME), &["resume", path_str(&out)]).expect_code(0, "resume");
    assert!(resumed.stdout.contains("sent 2"), "{}", resumed.show());
}

#[test]
fn an_opt_out_list_changed_after_the_start_refuses_the_resume_until_it_is_as_it_was() {
    let (dir, campaign) = advertising_campaign_in_a_new_dir();
    let settings = std::fs::read_to_string(&campaign).unwrap() + "opt_outs = \"refused.csv\"\n";
    std::fs::write(&campaign, settings).unwrap();
    let refused = dir.path().join("refused.csv");
    std::fs::write(&refused, "phone\n010-9999-0000\n").unwrap();
    let out = dir.path().join("run");
    let (mut child, seen) = start_a_scheduled_run(dir.path(), &campaign, &out);
    interrupt(&child);
    assert_eq!(child.wait().unwrap().code(), Some(3), "stderr: {seen:?}");

    // One of the two recipients asks not to get advertising while the run waits.
    std::fs::write(&refused, "phone\n010-9999-0000\n010-2000-1001\n").unwrap();
    let resumed = exec(msgbatch_at(dir.path(), DAYTIME), &["resume", path_str(&out)]).expect_code(2, "refused");
    assert!(
        resumed.stderr.contains("opt-out list") && resumed.stderr.contains("start a new run"),
        "{}",
        resumed.show()
    );
    std::fs::write(&refused, "phone\n010-9999-0000\n").unwrap();
    let resumed = exec(msgbatch_at(dir.path(), DAYTIME), &["resume", path_str(&out)]).expect_code(0, "resume");
    assert!(resumed.stdout.contains("sent 2"), "{}", resumed.show());
}

/// The frequency cap's list as the console writes it: `numbers`, each last sent on day 20,000.
fn write_capped_list(path: &Path, numbers: &[&str]) {
    use msgbatch::plan::capped::{number_key, CapMark, CapRule, CappedNumber, CappedWriter};
    let file = std::fs::File::create(path).unwrap();
    let mut writer = CappedWriter::new(file, CapRule::new(1, 7).unwrap(), 20_000).unwrap();
    let mut keys: Vec<u64> = numbers.iter().map(|number| number_key(number).unwrap()).collect();
    keys.sort_unstable();
    for key in keys {
        writer
            .push(CappedNumber {
                key,
                mark: CapMark {
                    last_sent: 20_000,
                    sends: 1,
                },
            })
            .unwrap();
    }
    writer.finish().unwrap();
}

#[test]
fn a_frequency_cap_list_changed_after_the_start_refuses_the_resume_until_it_is_as_it_was() {
    let (dir, campaign) = advertising_campaign_in_a_new_dir();
    let settings = std::fs::read_to_string(&campaign).unwrap() + "frequency_capped = \"capped.bin\"\n";
    std::fs::write(&campaign, settings).unwrap();
    let capped = dir.path().join("capped.bin");
    write_capped_list(&capped, &["01020001001"]);
    let out = dir.path().join("run");
    let (mut child, seen) = start_a_scheduled_run(dir.path(), &campaign, &out);
    interrupt(&child);
    assert_eq!(child.wait().unwrap().code(), Some(3), "stderr: {seen:?}");

    // The other recipient is sent an advertising message elsewhere while the run waits.
    write_capped_list(&capped, &["01020001001", "01020001002"]);
    let resumed = exec(msgbatch_at(dir.path(), DAYTIME), &["resume", path_str(&out)]).expect_code(2, "refused");
    assert!(
        resumed.stderr.contains("frequency cap's list") && resumed.stderr.contains("start a new run"),
        "{}",
        resumed.show()
    );
    write_capped_list(&capped, &["01020001001"]);
    let resumed = exec(msgbatch_at(dir.path(), DAYTIME), &["resume", path_str(&out)]).expect_code(0, "resume");
    assert!(resumed.stdout.contains("sent 1"), "{}", resumed.show());
    let status = exec(msgbatch_at(dir.path(), DAYTIME), &["status", path_str(&out), "--json"]).expect_code(0, "status");
    let status: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(
        (status["capped"].as_u64(), status["sent"].as_u64()),
        (Some(1), Some(1)),
        "{status}"
    );
}
