//! Safeguards before money leaves, through the `msgbatch` binary against a sandbox process: the spend cap under faults at concurrency 8, pause, stop and adjust from another process, kill -9 while paused and right after a budget stop, then resume: no number twice, every row in one bucket.

mod common;

use common::child::{Finished, Running, Sandbox, GROUP};
use msgbatch::api::ledger::LedgerKind;
use msgbatch::sandbox::accounts::FaultConfig;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const CLOCK: &str = "2026-11-23T11:00:00+09:00";
const EXIT_REFUSED: i32 = 2;
const EXIT_INCOMPLETE: i32 = 3;
const ALIMTALK_PRICE: i64 = 8;
const FALLBACK_PRICE: i64 = 9;

/// The `i`-th recipient: distinct valid numbers; every tenth ends in 91, which the demo accounts
/// answer with a channel failure (`CH_SBX_BLOCKED`), so that a fallback SMS is billed.
fn number(i: usize) -> String {
    let end = if i % 10 == 9 { 91 } else { i % 90 };
    format!("010{:06}{end:02}", 300_000 + i)
}

struct Fixture {
    dir: tempfile::TempDir,
    sandbox: Sandbox,
    campaign: PathBuf,
    run_dir: PathBuf,
    numbers: Vec<String>,
}

impl Fixture {
    /// A notification campaign with a fallback SMS (`alter`) of `recipients` rows against a demo
    /// sandbox process; `send` holds extra `[send]` lines.
    fn new(recipients: usize, send: &str) -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let sandbox = Sandbox::start(None);
        let numbers: Vec<String> = (0..recipients).map(number).collect();
        let mut csv = String::from("phone,name,order_no\n");
        for (i, number) in numbers.iter().enumerate() {
            csv.push_str(&format!("{number},고객{i},{}\n", 100_000 + i));
        }
        std::fs::write(dir.path().join("recipients.csv"), csv).expect("recipients written");
        let campaign = dir.path().join("campaign.toml");
        let root = sandbox.root_url();
        let toml = format!(
            r##"name = "safeguards"
kind = "alimtalk"
endpoint = {{ base_url = "{root}/standard", gateway_url = "{root}/gateway" }}

[credentials]
group_id = "{GROUP}"

[message]
service = 1001
template = "ORDER_SHIPPED"
text = "#{{이름}}님, 주문하신 상품이 발송되었습니다. 송장번호: #{{VAR1}}"
alter = true
callback_no = "0212345678"

[recipients]
path = "recipients.csv"
name = "name"
variables = {{ VAR1 = "order_no" }}

[send]
chunk_size = 5
{send}

[prices]
alimtalk = {ALIMTALK_PRICE}
fallback_sms = {FALLBACK_PRICE}
"##
        );
        std::fs::write(&campaign, toml).expect("campaign written");
        Fixture {
            run_dir: dir.path().join("run"),
            campaign,
            dir,
            sandbox,
            numbers,
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        common::child::msgbatch(self.dir.path(), CLOCK, args)
    }

    fn path(&self, path: &Path) -> String {
        path.to_str().expect("UTF-8 temporary paths").to_string()
    }

    fn start_run(&self, extra: &[&str]) -> Running {
        let mut command = self.command(&["run", &self.path(&self.campaign), "--out", &self.path(&self.run_dir)]);
        command.args(extra);
        Running::spawn(command, "msgbatch run")
    }

    /// A run whose every request takes 20 ms at the sandbox, once it has started sending.
    fn start_slow_run(&self) -> Running {
        self.sandbox.set_faults(FaultConfig {
            latency_ms: 20,
            ..FaultConfig::default()
        });
        let mut run = self.start_run(&[]);
        run.stderr
            .wait_for("the start", |line| line.starts_with("run directory"));
        run
    }

    fn resume(&self, extra: &[&str]) -> Finished {
        let mut command = self.command(&["resume", &self.path(&self.run_dir)]);
        command.args(extra);
        Running::spawn(command, "msgbatch resume").finish()
    }

    /// `resume`, which sends every pending row (exit 0, or 3 when chunks stay uncertain),
    /// then the at-most-once audit; answers the final status.
    fn resume_to_the_end(&self, extra: &[&str]) -> Value {
        let resumed = self.resume(extra);
        assert!(
            matches!(resumed.code(), Some(0) | Some(EXIT_INCOMPLETE)),
            "{}",
            resumed.stderr
        );
        let status = self.status();
        assert_eq!(status["pending"].as_u64(), Some(0), "{status}");
        self.assert_at_most_once(&status);
        status
    }

    /// `msgbatch pause|stop|adjust RUN_DIR ...` from another process.
    fn control(&self, verb: &str, extra: &[&str]) -> Finished {
        let mut command = self.command(&[verb, &self.path(&self.run_dir)]);
        command.args(extra);
        Running::spawn(command, &format!("msgbatch {verb}")).finish()
    }

    fn status(&self) -> Value {
        common::child::status_json(self.command(&["status", &self.path(&self.run_dir), "--json"]))
    }

    /// Polls `status --json` until `wanted` holds (bounded by `LIMIT`).
    fn status_until(&self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        common::child::status_until(|| self.status(), what, wanted)
    }

    /// What the sandbox's ledger holds for the demo group: charges less refunds.
    fn billed(&self) -> i64 {
        self.sandbox
            .ledger()
            .entries
            .iter()
            .map(|entry| match entry.kind {
                LedgerKind::Charge => entry.amount,
                LedgerKind::Refund => -entry.amount,
            })
            .sum()
    }

    /// No number sent twice; every sent number is a recipient; every row in exactly one bucket.
    fn assert_at_most_once(&self, status: &Value) {
        let sent = self.sandbox.sent();
        assert!(sent.repeated().is_empty(), "numbers sent twice: {:?}", sent.repeated());
        for number in sent.numbers.keys() {
            assert!(self.numbers.contains(number), "{number} is not a recipient");
        }
        let n = |key: &str| status[key].as_u64().unwrap_or(0);
        assert_eq!(n("rows"), self.numbers.len() as u64, "{status}");
        assert_eq!(
            n("rows"),
            n("rejected") + n("duplicates") + n("suppressed") + n("sent") + n("uncertain") + n("pending"),
            "every row is in one bucket: {status}"
        );
        let total: u64 = sent.numbers.values().map(|&count| count as u64).sum();
        assert!(
            n("sent") <= total && total <= n("sent") + n("uncertain"),
            "the sandbox took {total}: between sent and sent + uncertain: {status}"
        );
    }
}

/// The suggested `--budget N` of a budget stop's last lines.
fn suggested_budget(stderr: &str) -> String {
    let line = stderr
        .lines()
        .find(|line| line.contains("msgbatch resume") && line.contains("--budget"))
        .unwrap_or_else(|| panic!("a budget stop names the resume command with --budget: {stderr}"));
    let after = line.split("--budget ").nth(1).expect("--budget N");
    after.split_whitespace().next().expect("an amount").to_string()
}

#[test]
fn run_refuses_an_estimate_over_the_budget_naming_both_amounts_and_sends_nothing() {
    let fx = Fixture::new(100, "budget = 500");
    let refused = fx.start_run(&[]).finish();
    refused.expect_code(EXIT_REFUSED);
    // 100 notifications at ₩8: ₩800, over ₩500.
    refused.expect_stderr("₩800").expect_stderr("₩500");
    assert_eq!(fx.sandbox.sent().total, 0, "nothing was sent");
    assert!(!fx.run_dir.join("checkpoint").exists(), "no run was recorded");

    // The flag wins over the file: the same campaign goes with a budget that covers it.
    let within = fx.start_run(&["--budget", "100000"]).finish();
    within.expect_code(0);
    assert_eq!(fx.sandbox.sent().total, 100);
}

#[test]
fn a_budget_without_prices_is_refused_naming_both_settings() {
    let fx = Fixture::new(10, "budget = 500");
    let text = std::fs::read_to_string(&fx.campaign).unwrap();
    let without_prices = text[..text.find("[prices]").unwrap()].to_string();
    std::fs::write(&fx.campaign, &without_prices).unwrap();
    let refused = fx.start_run(&[]).finish();
    refused
        .expect_code(EXIT_REFUSED)
        .expect_stderr("send.budget")
        .expect_stderr("[prices]");

    std::fs::write(&fx.campaign, without_prices.replace("budget = 500", "")).unwrap();
    let flag = fx.start_run(&["--budget", "500"]).finish();
    flag.expect_code(EXIT_REFUSED)
        .expect_stderr("--budget")
        .expect_stderr("[prices]");
    assert_eq!(fx.sandbox.sent().total, 0);
}

#[test]
fn under_faults_at_concurrency_8_the_ledger_never_passes_the_budget_and_resume_with_more_finishes() {
    // The estimate counts notifications only (300 x ₩8 = ₩2,400); each chunk is reserved at its
    // worst case, fallbacks included (₩17 a recipient), so the run stops before the budget could
    // be passed, whatever the answers.
    let fx = Fixture::new(300, "concurrency = 8\nbudget = 2400\nmax_attempts = 8");
    fx.sandbox.set_faults(FaultConfig {
        drop_share: 0.1,
        rate_limited_share: 0.1,
        unavailable_share: 0.1,
        retry_after_secs: 0,
        ..FaultConfig::default()
    });
    let stopped = fx.start_run(&[]).finish();
    stopped.expect_code(EXIT_INCOMPLETE).expect_stderr("budget reached");
    let billed = fx.billed();
    assert!(
        billed <= 2400,
        "the sandbox billed ₩{billed}, over the budget of ₩2,400"
    );
    let status = fx.status();
    let budget = &status["budget"];
    let (charged, reserved) = (
        budget["charged"].as_i64().unwrap(),
        budget["reserved"].as_i64().unwrap(),
    );
    assert_eq!(budget["limit"].as_i64(), Some(2400), "{status}");
    assert!(charged + reserved <= 2400, "{status}");
    assert!(
        billed <= charged + reserved,
        "every won billed is counted: {billed} against {status}"
    );
    assert!(
        status["pending"].as_u64().unwrap() > 0,
        "the stop left rows pending: {status}"
    );
    fx.assert_at_most_once(&status);

    let budget = suggested_budget(&stopped.stderr);
    let resumed = fx.resume(&["--budget", &budget]);
    assert!(
        matches!(resumed.code(), Some(0) | Some(EXIT_INCOMPLETE)),
        "{}",
        resumed.stderr
    );
    assert!(!resumed.stderr.contains("budget reached"), "{}", resumed.stderr);
    let status = fx.status();
    assert_eq!(status["pending"].as_u64(), Some(0), "{status}");
    let limit: i64 = budget.parse().unwrap();
    assert!(fx.billed() <= limit, "billed ₩{} over ₩{limit}", fx.billed());
    fx.assert_at_most_once(&status);
}

#[test]
fn kill_9_right_after_a_budget_stop_then_resume_sends_no_number_twice() {
    let fx = Fixture::new(200, "concurrency = 8\nbudget = 1600");
    fx.sandbox.set_faults(FaultConfig {
        latency_ms: 30,
        ..FaultConfig::default()
    });
    let mut run = fx.start_run(&[]);
    run.stderr
        .wait_for("the budget stop", |line| line.starts_with("budget reached"));
    run.kill();
    let status = fx.status();
    fx.assert_at_most_once(&status);
    assert!(fx.billed() <= 1600, "billed ₩{}", fx.billed());

    fx.sandbox.set_faults(FaultConfig::default());
    fx.resume_to_the_end(&["--budget", "100000"]);
}

#[test]
fn pause_from_another_process_holds_new_chunks_and_kill_9_while_paused_then_resume_sends_each_once() {
    let fx = Fixture::new(400, "concurrency = 2");
    let mut run = fx.start_slow_run();
    let paused = fx.control("pause", &[]);
    paused.expect_code(0);
    assert!(paused.stdout.contains("paused"), "{}", paused.stdout);
    run.stderr
        .wait_for("the pause notice", |line| line.starts_with("paused:"));
    // Requests in flight end; then nothing is sending and what the sandbox took is recorded.
    let held = fx.status_until("a paused run with nothing in flight", |status| {
        status["paused"]["cause"] == "asked" && status["sending"].as_u64().unwrap_or(0) == 0
    });
    assert!(held["pending"].as_u64().unwrap() > 0, "{held}");
    assert_eq!(
        fx.sandbox.sent().total,
        held["sent"].as_u64().unwrap() + held["uncertain"].as_u64().unwrap(),
        "while paused, what the sandbox took is exactly what the run recorded: {held}"
    );
    let text = Running::spawn(fx.command(&["status", &fx.path(&fx.run_dir)]), "msgbatch status").finish();
    assert!(text.stdout.contains("paused"), "status says paused: {}", text.stdout);

    run.kill();
    fx.sandbox.set_faults(FaultConfig::default());
    // A chunk answered within the writer's last 50 ms is still marked in flight on disk: it is
    // uncertain after the kill (its request did reach the sandbox) and is not sent again.
    fx.resume_to_the_end(&[]);
    for number in &fx.numbers {
        assert_eq!(
            fx.sandbox.sent().numbers.get(number),
            Some(&1),
            "{number} sent exactly once"
        );
    }
}

#[test]
fn resume_of_a_live_paused_run_goes_on_and_adjust_and_stop_reach_it_from_another_process() {
    let fx = Fixture::new(300, "concurrency = 2");
    let mut run = fx.start_slow_run();
    fx.control("pause", &[]).expect_code(0);
    run.stderr
        .wait_for("the pause notice", |line| line.starts_with("paused:"));
    let resumed = fx.resume(&[]);
    resumed.expect_code(0);
    assert!(resumed.stdout.contains("resumed"), "{}", resumed.stdout);
    run.stderr.wait_for("the resume notice", |line| line == "resumed");

    let adjusted = fx.control("adjust", &["--rate", "40", "--concurrency", "1"]);
    adjusted.expect_code(0);
    assert!(
        adjusted
            .stdout
            .contains("40 message(s) per second, 1 request(s) at once"),
        "{}",
        adjusted.stdout
    );
    let status = fx.status();
    assert_eq!(
        (status["pace"]["rate"].as_f64(), status["pace"]["concurrency"].as_u64()),
        (Some(40.0), Some(1))
    );

    let stopping = fx.control("stop", &[]);
    stopping.expect_code(0);
    assert!(
        stopping.stdout.contains("resume with: msgbatch resume"),
        "{}",
        stopping.stdout
    );
    let ended = run.finish();
    ended
        .expect_code(EXIT_INCOMPLETE)
        .expect_stderr("resume with: msgbatch resume");
    let status = fx.status();
    assert!(status["pending"].as_u64().unwrap() > 0, "{status}");
    assert_eq!(
        status["uncertain"].as_u64(),
        Some(0),
        "requests in flight ended: {status}"
    );
    fx.assert_at_most_once(&status);

    // Rate and concurrency are not part of the fingerprint: changed in the file or on the command
    // line, resume takes them.
    let text = std::fs::read_to_string(&fx.campaign).unwrap();
    std::fs::write(
        &fx.campaign,
        text.replace("concurrency = 2", "concurrency = 3\nmessages_per_second = 5000"),
    )
    .unwrap();
    fx.sandbox.set_faults(FaultConfig::default());
    let finished = fx.resume(&["--rate", "4000", "--concurrency", "4"]);
    finished
        .expect_code(0)
        .expect_stderr("4000 message(s) per second, 4 request(s) at once");
    fx.assert_at_most_once(&fx.status());
}

#[test]
fn control_commands_refuse_a_run_no_process_holds() {
    let fx = Fixture::new(10, "");
    fx.start_run(&[]).finish().expect_code(0);
    for verb in ["pause", "stop"] {
        let refused = fx.control(verb, &[]);
        refused
            .expect_code(EXIT_REFUSED)
            .expect_stderr("no msgbatch process is running");
    }
    fx.control("adjust", &["--rate", "5"])
        .expect_code(EXIT_REFUSED)
        .expect_stderr("--rate N --concurrency N");
}

#[test]
fn send_test_sends_each_chosen_message_to_the_test_numbers_only_and_counts_in_nothing() {
    let fx = Fixture::new(30, "");
    let campaign = fx.path(&fx.campaign);
    let sent = Running::spawn(
        fx.command(&["send-test", &campaign, "--to", "010-5555-1212,+82 10 5555 3434"]),
        "msgbatch send-test",
    )
    .finish();
    sent.expect_code(0);
    // The first valid row and the longest message, each to both numbers, masked.
    assert!(sent.stdout.contains("row 2 (first)"), "{}", sent.stdout);
    assert!(
        sent.stdout.contains("to 010-****-1212: OK (accepted)"),
        "{}",
        sent.stdout
    );
    assert!(
        sent.stdout.contains("to 010-****-3434: OK (accepted)"),
        "{}",
        sent.stdout
    );
    assert!(sent.stdout.contains("billed alimtalk"), "{}", sent.stdout);
    assert!(
        !sent.stdout.contains("01055551212"),
        "numbers are masked: {}",
        sent.stdout
    );
    let counts = fx.sandbox.sent();
    let numbers: Vec<&String> = counts.numbers.keys().collect();
    assert_eq!(
        numbers,
        ["01055551212", "01055553434"],
        "only the test numbers got a message"
    );
    let tests = fx.dir.path().join("tests");
    let made: Vec<PathBuf> = std::fs::read_dir(&tests).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(made.len(), 1, "one test directory beside the campaign: {made:?}");
    assert!(made[0].join("test-send.json").exists());
    assert!(!fx.dir.path().join("runs").exists(), "no campaign run was made");

    let before_refusals = fx.sandbox.sent().total;
    let chosen = Running::spawn(
        fx.command(&["send-test", &campaign, "--to", "01055557878", "--rows", "3", "--json"]),
        "msgbatch send-test --rows 3",
    )
    .finish();
    chosen.expect_code(0);
    let json: Value = serde_json::from_str(&chosen.stdout).unwrap();
    assert_eq!(json["messages"][0]["preview"]["row"], 3, "{json}");
    assert_eq!(json["messages"].as_array().unwrap().len(), 1);
    let before_refusals = before_refusals + 1;

    let too_many: Vec<String> = (0..21).map(|i| format!("0105555{i:04}")).collect();
    Running::spawn(
        fx.command(&["send-test", &campaign, "--to", &too_many.join(",")]),
        "msgbatch send-test (21 numbers)",
    )
    .finish()
    .expect_code(EXIT_REFUSED)
    .expect_stderr("at most 20");
    Running::spawn(
        fx.command(&["send-test", &campaign, "--to", "0212345678"]),
        "msgbatch send-test (a landline)",
    )
    .finish()
    .expect_code(EXIT_REFUSED)
    .expect_stderr("test number 1");
    Running::spawn(
        fx.command(&["send-test", &campaign, "--to", "01055557878", "--rows", "999"]),
        "msgbatch send-test --rows 999",
    )
    .finish()
    .expect_code(EXIT_REFUSED)
    .expect_stderr("no row 999");
    assert_eq!(
        fx.sandbox.sent().total,
        before_refusals,
        "the refused test sends sent nothing"
    );
}

#[test]
fn validate_shows_the_estimate_and_its_worst_case_against_the_budget() {
    let fx = Fixture::new(100, "budget = 500");
    let validated = Running::spawn(fx.command(&["validate", &fx.path(&fx.campaign)]), "msgbatch validate").finish();
    validated.expect_code(0);
    // 100 notifications at ₩8; were every fallback SMS sent too, ₩9 more each.
    assert!(
        validated.stdout.contains("estimate   ₩800 (alimtalk ₩800;"),
        "{}",
        validated.stdout
    );
    assert!(
        validated.stdout.contains("₩1,700 at most, were every fallback sent"),
        "{}",
        validated.stdout
    );
    assert!(
        validated
            .stdout
            .contains("budget     ₩500 ([send] budget): the estimate is OVER"),
        "{}",
        validated.stdout
    );
    let zero = Running::spawn(
        fx.command(&["run", &fx.path(&fx.campaign), "--budget", "0"]),
        "msgbatch run --budget 0",
    )
    .finish();
    zero.expect_code(EXIT_REFUSED)
        .expect_stderr("must be a positive amount");
}

#[test]
fn send_test_keeps_the_campaigns_quiet_hours() {
    let dir = tempfile::tempdir().unwrap();
    common::process::copy_samples(dir.path(), &["brand.toml", "recipients.csv", "suppression.csv"]);
    // Brand messages are advertising: blocked 20:50–08:00, under `quiet_hours = "enforce"`.
    let refused = common::process::exec(
        common::process::msgbatch_at(dir.path(), "2026-11-23T22:00:00+09:00"),
        &["send-test", "brand.toml", "--to", "01055551212"],
    );
    assert_eq!(refused.code, Some(EXIT_REFUSED), "{}", refused.show());
    assert!(refused.stderr.contains("quiet hours"), "{}", refused.show());
    assert!(!dir.path().join("tests").exists(), "nothing was sent or kept");
}

#[test]
fn a_scheduled_run_still_waiting_is_adjusted_and_stopped_from_another_process() {
    let fx = Fixture::new(20, "");
    // The clock says 11:00; the start is an hour later.
    let mut run = fx.start_run(&["--start-at", "2026-11-23T12:00"]);
    run.stderr
        .wait_for("the countdown", |line| line.starts_with("waiting to start at"));
    let adjusted = fx.control("adjust", &["--concurrency", "3"]);
    adjusted.expect_code(0);
    assert!(adjusted.stdout.contains("3 request(s) at once"), "{}", adjusted.stdout);
    fx.control("stop", &[]).expect_code(0);
    run.finish().expect_code(EXIT_INCOMPLETE);
    assert_eq!(fx.sandbox.sent().total, 0, "nothing was sent");
    assert_eq!(fx.status()["pending"].as_u64(), Some(20));
}

#[test]
fn a_pause_asked_during_a_rate_wait_is_shown_as_pausing_and_resume_takes_it_back() {
    // One message a second and chunks of 5: after the first chunk, each waits five seconds.
    let fx = Fixture::new(50, "messages_per_second = 1");
    let mut run = fx.start_run(&[]);
    run.stderr
        .wait_for("the start", |line| line.starts_with("run directory"));
    fx.control("pause", &[]).expect_code(0);
    let text = Running::spawn(fx.command(&["status", &fx.path(&fx.run_dir)]), "msgbatch status").finish();
    assert!(
        text.stdout.contains("paused:") || text.stdout.contains("pausing: asked to pause"),
        "{}",
        text.stdout
    );
    let resumed = fx.resume(&[]);
    resumed.expect_code(0);
    assert!(resumed.stdout.contains("resumed"), "{}", resumed.stdout);
    fx.control("stop", &[]).expect_code(0);
    run.finish().expect_code(EXIT_INCOMPLETE);
    fx.assert_at_most_once(&fx.status());
}
