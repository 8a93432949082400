//! Collecting gateway results with the real binary against a sandbox process: every page size, a run collected later, the horizon,
//! reads through 503/429, records the listing hides, and a listing that repeats its `lastKey`.

mod common;

use common::process::SandboxProcess;
use msgbatch::api::faults::{FaultConfig, FaultScope};
use msgbatch::sandbox::accounts::DEMO_ACCOUNTS;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_msgbatch");
const DAYTIME: &str = "2026-11-23T11:00:00+09:00";
const SENDER_KEY: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f001234567";
const ORDER_SHIPPED: &str = "#{이름}님, 주문하신 상품이 발송되었습니다. 송장번호: #{VAR1}";

/// A gateway campaign of `count` recipients; every 50th number ends in 93 (settles FAILED),
/// every 50th + 1 in 94 (GIVEUP), every 50th + 2 in 95 (refused at acceptance), the rest OK.
struct Gateway {
    dir: tempfile::TempDir,
    campaign: PathBuf,
    expected: BTreeMap<&'static str, u64>,
    accepted: u64,
}

fn number(serial: usize, suffix: &str) -> String {
    format!("010{:06}{suffix}", serial)
}

impl Gateway {
    fn new(sandbox: &SandboxProcess, count: usize, chunk_size: usize) -> Gateway {
        let dir = tempfile::tempdir().unwrap();
        let mut csv = String::from("phone,name,order\n");
        let mut expected: BTreeMap<&'static str, u64> = BTreeMap::new();
        let mut accepted = 0;
        for i in 0..count {
            let (suffix, outcome) = match i % 50 {
                0 => ("93", Some("FAILED")),
                1 => ("94", Some("GIVEUP")),
                2 => ("95", None),
                _ => ("10", Some("OK")),
            };
            csv.push_str(&format!("{},고객{i},A-{i}\n", number(i, suffix)));
            if let Some(outcome) = outcome {
                *expected.entry(outcome).or_default() += 1;
                accepted += 1;
            }
        }
        std::fs::write(dir.path().join("people.csv"), csv).unwrap();
        let campaign = dir.path().join("campaign.toml");
        std::fs::write(
            &campaign,
            format!(
                "kind = \"gateway-alimtalk\"\n{}[credentials]\ngroup_id = \"demo\"\n[message]\nsender_key = \"{SENDER_KEY}\"\ntemplate = \"ORDER_SHIPPED\"\ntext = \"{ORDER_SHIPPED}\"\n\
                 [recipients]\npath = \"people.csv\"\nname = \"name\"\nvariables = {{ VAR1 = \"order\" }}\n[send]\nchunk_size = {chunk_size}\n",
                sandbox.endpoint_toml()
            ),
        )
        .unwrap();
        Gateway {
            dir,
            campaign,
            expected,
            accepted,
        }
    }

    fn run_dir(&self) -> PathBuf {
        self.dir.path().join("run")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(BIN);
        command
            .env_clear()
            .env("MSGBATCH_API_KEY", "sbx-demo-key")
            .env("MSGBATCH_CLOCK", DAYTIME)
            .args(args)
            .stdin(Stdio::null());
        command
    }

    fn run(&self) -> Output {
        let out = self.run_dir();
        self.command(&[
            "run",
            self.campaign.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--json",
        ])
        .output()
        .unwrap()
    }

    fn collect(&self, extra: &[&str]) -> (Option<i32>, Value, String) {
        let out = self.run_dir();
        let mut args = vec![
            "collect",
            out.to_str().unwrap(),
            "--json",
            "--min-age",
            "0s",
            "--poll-every",
            "10ms",
        ];
        args.extend_from_slice(extra);
        let output = self.command(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let json = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
        (output.status.code(), json, stderr)
    }
}

fn results_of(report: &Value) -> BTreeMap<String, u64> {
    report["results"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap())).collect())
        .unwrap_or_default()
}

fn expected_strings(expected: &BTreeMap<&'static str, u64>) -> BTreeMap<String, u64> {
    expected.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn results_of_1234_recipients_are_collected_whole_with_page_sizes_1_100_and_500() {
    let sandbox = SandboxProcess::start_with(&["--settle-after", "0s"]);
    for page_size in [1u64, 100, 500] {
        // Two send groups: 1,000 and 234 recipients.
        let gateway = Gateway::new(&sandbox, 1_234, 1_000);
        let run = gateway.run();
        assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
        let (code, report, stderr) = gateway.collect(&["--page-size", &page_size.to_string()]);
        assert_eq!(code, Some(0), "page size {page_size}: {stderr}");
        assert_eq!(
            report["accepted"].as_u64(),
            Some(gateway.accepted),
            "page size {page_size}"
        );
        assert_eq!(
            results_of(&report),
            expected_strings(&gateway.expected),
            "page size {page_size}: nothing lost"
        );
        assert_eq!(
            report["repeated"].as_u64(),
            Some(0),
            "page size {page_size}: nothing repeated"
        );
        assert_eq!(report["missing"].as_u64(), Some(0));
        assert_eq!(report["provisional"].as_u64(), Some(0));
        // Every record of both groups (acceptance refusals included) is listed once.
        let pages = 1_000u64.div_ceil(page_size) + 234u64.div_ceil(page_size);
        assert_eq!(report["pages_read"].as_u64(), Some(pages), "page size {page_size}");
    }
}

/// `run --wait --min-age 60s`: the run sends, then says it waits for results; answered then.
fn run_until_it_waits_for_results(gateway: &Gateway, out: &Path, stdout: Stdio) -> std::process::Child {
    let mut child = gateway
        .command(&[
            "run",
            gateway.campaign.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--wait",
            "--min-age",
            "60s",
        ])
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (lines_tx, lines_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match lines_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) if line.starts_with("collect: next read in") => return child,
            Ok(_) => {}
            Err(error) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the run never said it waits for results: {error}");
            }
        }
    }
}

#[test]
fn a_run_stopped_while_waiting_for_results_is_collected_later() {
    let sandbox = SandboxProcess::start_with(&["--settle-after", "0s"]);
    let gateway = Gateway::new(&sandbox, 120, 50);
    let out = gateway.run_dir();
    // --wait with a minimum age of 60 s: the run sends, then says it waits; kill it there.
    let mut child = run_until_it_waits_for_results(&gateway, &out, Stdio::null());
    child.kill().unwrap();
    child.wait().unwrap();

    let (code, report, stderr) = gateway.collect(&[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(results_of(&report), expected_strings(&gateway.expected));
    // A second collect finds everything settled and reads nothing.
    let (code, again, _) = gateway.collect(&[]);
    assert_eq!(code, Some(0));
    assert_eq!(again["pages_read"].as_u64(), Some(0));
    assert_eq!(results_of(&again), expected_strings(&gateway.expected));
}

#[test]
fn ctrl_c_while_collecting_ends_with_the_results_left_to_read_and_exit_3() {
    let sandbox = SandboxProcess::start_with(&["--settle-after", "0s"]);
    let gateway = Gateway::new(&sandbox, 30, 10);
    let out = gateway.run_dir();
    let child = run_until_it_waits_for_results(&gateway, &out, Stdio::piped());
    let interrupt = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(interrupt.success());
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "stopped: {} accepted recipient(s) still to read",
            gateway.accepted
        )),
        "{stdout}"
    );

    // What was left is read by the next collect.
    let (code, report, stderr) = gateway.collect(&[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(results_of(&report), expected_strings(&gateway.expected));
}

#[test]
fn results_still_pending_beyond_the_horizon_are_provisional() {
    // The sandbox's default: results settle only after 300 s.
    let sandbox = SandboxProcess::start();
    let gateway = Gateway::new(&sandbox, 60, 100);
    assert_eq!(gateway.run().status.code(), Some(0));
    let (code, report, stderr) = gateway.collect(&["--horizon", "0s"]);
    assert_eq!(
        code,
        Some(3),
        "provisional results leave the collection incomplete: {stderr}"
    );
    assert_eq!(report["provisional"].as_u64(), Some(gateway.accepted));
    assert_eq!(
        results_of(&report),
        BTreeMap::from([("GW_PENDING".to_string(), gateway.accepted)])
    );
}

#[test]
fn collect_refuses_a_standard_run_and_a_run_of_the_in_process_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("people.csv"), "phone,name\n01012345678,김\n").unwrap();
    let write = |name: &str, body: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        path
    };
    let sms = write(
        "sms.toml",
        "kind = \"sms\"\n[message]\nservice = 3001\ntext = \"hi\"\ncallback_no = \"0212345678\"\n[recipients]\npath = \"people.csv\"\n",
    );
    let gateway = write(
        "gw.toml",
        &format!(
            "kind = \"gateway-alimtalk\"\n[message]\nsender_key = \"{SENDER_KEY}\"\ntemplate = \"ORDER_SHIPPED\"\ntext = \"{ORDER_SHIPPED}\"\n\
             [recipients]\npath = \"people.csv\"\nname = \"name\"\nvariables = {{ VAR1 = \"name\" }}\n"
        ),
    );
    for (campaign, refusal) in [(&sms, "nothing to collect"), (&gateway, "run --wait")] {
        let out = dir
            .path()
            .join(format!("run-{}", campaign.file_stem().unwrap().to_string_lossy()));
        let run = Command::new(BIN)
            .env_clear()
            .env("MSGBATCH_CLOCK", DAYTIME)
            .args(["run", campaign.to_str().unwrap(), "--out", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
        let collect = Command::new(BIN)
            .env_clear()
            .args(["collect", out.to_str().unwrap()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&collect.stderr);
        assert_eq!(collect.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(refusal), "{stderr}");
    }
}

/// A gateway campaign of `count` recipients sent to a sandbox process whose results settle at
/// once, which then puts `faults` in force (its counters restart) for the collect to meet.
fn sent_then_faulted(count: usize, faults: &FaultConfig) -> (SandboxProcess, Gateway) {
    let sandbox = SandboxProcess::start_with(&["--settle-after", "0s"]);
    let gateway = Gateway::new(&sandbox, count, 100);
    let run = gateway.run();
    assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
    let client = sandbox.client();
    SandboxProcess::runtime()
        .block_on(client.sandbox_admin(sandbox.root_url()).set_faults(faults))
        .expect("PUT /_sandbox/faults");
    (sandbox, gateway)
}

#[test]
fn collect_reads_through_503_and_429_on_the_result_endpoints() {
    // Every 4th request answers 503 and every 4th 429 (never more than two in a row), reads included.
    let faults = FaultConfig {
        unavailable_share: 0.25,
        rate_limited_share: 0.25,
        retry_after_secs: 0,
        applies_to: FaultScope::All,
        ..FaultConfig::default()
    };
    let (_sandbox, gateway) = sent_then_faulted(60, &faults);
    let (code, report, stderr) = gateway.collect(&["--page-size", "7"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(results_of(&report), expected_strings(&gateway.expected), "nothing lost");
    assert_eq!(report["pages_read"].as_u64(), Some(60u64.div_ceil(7)));
    let retries = report["read_retries"].as_u64().expect("read_retries reported");
    assert!(retries > 0, "the faults were met and read through: {report}");
}

#[test]
fn collect_gives_up_on_a_read_that_keeps_failing_with_a_clear_error() {
    let faults = FaultConfig {
        unavailable_share: 1.0,
        retry_after_secs: 0,
        applies_to: FaultScope::All,
        ..FaultConfig::default()
    };
    let (_sandbox, gateway) = sent_then_faulted(10, &faults);
    let (code, _, stderr) = gateway.collect(&[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("gave up after 5 tries"), "{stderr}");
    assert!(stderr.contains("503"), "the last failure is named: {stderr}");
}

#[test]
fn collect_finds_every_record_the_listing_hides_by_single_lookup() {
    // The accounts file's [faults]: a quarter of each send group's records left out of its listing.
    let dir = tempfile::tempdir().unwrap();
    let accounts = dir.path().join("accounts.toml");
    let hiding = DEMO_ACCOUNTS.replace("listing_hidden_share = 0.0", "listing_hidden_share = 0.25");
    assert_ne!(hiding, DEMO_ACCOUNTS, "the demo accounts name listing_hidden_share");
    std::fs::write(&accounts, hiding).unwrap();
    let sandbox = SandboxProcess::start_with(&["--settle-after", "0s", "--accounts", accounts.to_str().unwrap()]);
    // Send groups of 100 and 20: 25 and 5 records hidden, every one of them accepted (the
    // refused ones, rows 2 and 52 and 102, sit at positions a share of 0.25 does not pick).
    let gateway = Gateway::new(&sandbox, 120, 100);
    assert_eq!(gateway.run().status.code(), Some(0));
    let (code, report, stderr) = gateway.collect(&["--page-size", "9"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(report["single_lookups"].as_u64(), Some(30), "{report}");
    assert_eq!(report["missing"].as_u64(), Some(0), "{report}");
    assert_eq!(results_of(&report), expected_strings(&gateway.expected), "nothing lost");
}

#[test]
fn collect_stops_with_an_error_when_the_listing_repeats_its_last_key() {
    let faults = FaultConfig {
        listing_repeats_last_key: true,
        ..FaultConfig::default()
    };
    let (_sandbox, gateway) = sent_then_faulted(60, &faults);
    let (code, _, stderr) = gateway.collect(&["--page-size", "10"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("lastKey"), "{stderr}");
    assert!(stderr.contains("a second time"), "{stderr}");
}
