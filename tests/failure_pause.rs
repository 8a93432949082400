//! A run that pauses itself when failing (`[send] pause_when_failing`), through the `msgbatch` binary against a sandbox process: an SMS whose numbers turn to failing ones pauses within the window with nothing lost, says why on `status`, goes on when a person resumes, sending no number twice, and a run killed while held resumes under a changed rule sending each number once; notifications whose fallback SMS the service sends never pause it.

mod common;

use common::child::{Running, Sandbox, GROUP};
use msgbatch::sandbox::accounts::FaultConfig;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const CLOCK: &str = "2026-11-23T11:00:00+09:00";
const EXIT_INCOMPLETE: i32 = 3;

struct Fixture {
    dir: tempfile::TempDir,
    sandbox: Sandbox,
    campaign: PathBuf,
    run_dir: PathBuf,
}

impl Fixture {
    /// A campaign of `kind` with `settings` (its message and `[send]`) for `numbers`, against a
    /// sandbox process.
    fn new(kind: &str, settings: &str, numbers: &[String]) -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let sandbox = Sandbox::start(None);
        let mut csv = String::from("phone,name,order_no\n");
        for (i, number) in numbers.iter().enumerate() {
            csv.push_str(&format!("{number},고객{i},{}\n", 100_000 + i));
        }
        std::fs::write(dir.path().join("recipients.csv"), csv).expect("recipients written");
        let root = sandbox.root_url();
        let campaign = dir.path().join("campaign.toml");
        let text = format!(
            "name = \"failing\"\nkind = \"{kind}\"\nendpoint = {{ base_url = \"{root}/standard\", gateway_url = \"{root}/gateway\" }}\n\n[credentials]\ngroup_id = \"{GROUP}\"\n\n[recipients]\npath = \"recipients.csv\"\nname = \"name\"\nvariables = {{ VAR1 = \"order_no\" }}\n\n{settings}"
        );
        std::fs::write(&campaign, text).expect("campaign written");
        Fixture {
            run_dir: dir.path().join("run"),
            campaign,
            dir,
            sandbox,
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        common::child::msgbatch(self.dir.path(), CLOCK, args)
    }

    fn path(path: &Path) -> String {
        path.to_str().expect("UTF-8 temporary paths").to_string()
    }

    /// `msgbatch run`, once it has made its run directory.
    fn start_run(&self) -> Running {
        let mut run = Running::spawn(
            self.command(&["run", &Self::path(&self.campaign), "--out", &Self::path(&self.run_dir)]),
            "msgbatch run",
        );
        run.stderr
            .wait_for("the start", |line| line.starts_with("run directory"));
        run
    }

    fn control(&self, verb: &str) {
        Running::spawn(
            self.command(&[verb, &Self::path(&self.run_dir)]),
            &format!("msgbatch {verb}"),
        )
        .finish()
        .expect_code(0);
    }

    fn status(&self) -> Value {
        common::child::status_json(self.command(&["status", &Self::path(&self.run_dir), "--json"]))
    }

    /// Polls `status --json` until `wanted` holds (bounded by `LIMIT`).
    fn status_until(&self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        common::child::status_until(|| self.status(), what, wanted)
    }

    fn assert_no_number_twice(&self) {
        let sent = self.sandbox.sent();
        assert!(sent.repeated().is_empty(), "numbers sent twice: {:?}", sent.repeated());
    }
}

/// Held by its own failure pause with nothing in flight.
fn held_by_failures(status: &Value) -> bool {
    status["paused"]["cause"] == "failing" && status["sending"].as_u64().unwrap_or(0) == 0
}

fn n(status: &Value, key: &str) -> u64 {
    status[key].as_u64().unwrap_or(0)
}

#[test]
fn an_sms_run_turning_to_failures_pauses_itself_within_the_window_and_waits_for_a_person() {
    // 40 numbers the sandbox takes, then 260 it answers ERROR (those ending in 96).
    let numbers: Vec<String> = (0..300)
        .map(|i| format!("010{:06}{}", 400_000 + i, if i < 40 { "10" } else { "96" }))
        .collect();
    let fx = Fixture::new(
        "sms",
        "[message]\nservice = 3001\ntext = \"#{이름}님, 주문 #{VAR1} 안내\"\ncallback_no = \"0212345678\"\n\n[send]\nchunk_size = 5\nconcurrency = 2\npause_when_failing = { percent = 20, window = 50 }\n",
        &numbers,
    );
    fx.sandbox.set_faults(FaultConfig {
        latency_ms: 20,
        ..FaultConfig::default()
    });
    let run = fx.start_run();

    // More than 20 % of the last 50 answered fail from the 51st answer on (39 taken, 11 not):
    // the run holds with what was in flight answered, the rest pending.
    let held = fx.status_until("a run paused by its failures", held_by_failures);
    let answered = n(&held, "sent");
    assert!(
        (51..=40 + 50).contains(&answered),
        "paused within the window after 51 answers (plus what was in flight): {held}"
    );
    assert!(n(&held, "pending") > 0, "{held}");
    assert_eq!(held["paused"]["percent"], 20);
    assert_eq!(held["paused"]["window"], 50);
    assert!(n(&held["paused"], "failed") > 10, "{held}");
    assert_eq!(
        fx.sandbox.sent().total,
        answered + n(&held, "uncertain"),
        "while held, nothing more reaches the service: {held}"
    );
    let text = Running::spawn(fx.command(&["status", &Fixture::path(&fx.run_dir)]), "msgbatch status").finish();
    assert!(
        text.stdout.contains("were not accepted (more than 20 %)") && text.stdout.contains("msgbatch resume"),
        "status says why and what to do: {}",
        text.stdout
    );

    // A person resumes: the window starts again, and the failures pause it again 50 answers on.
    fx.control("resume");
    let again = fx.status_until("a second pause, 50 answers later", |status| {
        held_by_failures(status) && n(status, "sent") >= answered + 50
    });
    assert!(n(&again, "sent") <= answered + 50 + 15, "{again}");

    // Killed while held; the rule changed in the file (not part of the run's identity, so the
    // resume is the same run) to none: the resume sends the rest, each number once.
    let killed = run.kill();
    assert!(
        killed.stderr.contains("were not accepted (more than 20 %)"),
        "the run said why it paused: {}",
        killed.stderr
    );
    let text = std::fs::read_to_string(&fx.campaign).unwrap();
    std::fs::write(
        &fx.campaign,
        text.replace(
            "pause_when_failing = { percent = 20, window = 50 }",
            "pause_when_failing = false",
        ),
    )
    .unwrap();
    let resumed = Running::spawn(fx.command(&["resume", &Fixture::path(&fx.run_dir)]), "msgbatch resume").finish();
    assert!(
        matches!(resumed.code(), Some(0) | Some(EXIT_INCOMPLETE)),
        "{}",
        resumed.stderr
    );
    assert!(
        !resumed.stderr.contains("paused"),
        "no pause without the rule: {}",
        resumed.stderr
    );
    let status = fx.status();
    assert_eq!(n(&status, "pending"), 0, "{status}");
    assert_eq!(n(&status, "sent") + n(&status, "uncertain"), 300, "{status}");
    fx.assert_no_number_twice();
    let reached = fx.sandbox.sent().numbers.len() as u64;
    assert!(
        n(&status, "sent") <= reached && reached <= n(&status, "sent") + n(&status, "uncertain"),
        "every sent number reached the service once, an uncertain one at most once: {reached}, {status}"
    );
}

#[test]
fn notifications_whose_fallback_sms_is_sent_never_pause_the_run() {
    // Every number ends in 91: the channel fails (CH_SBX_BLOCKED) and the service sends the
    // fallback SMS, which is a message taken, not a failure.
    let numbers: Vec<String> = (0..60).map(|i| format!("010{:06}91", 500_000 + i)).collect();
    let fx = Fixture::new(
        "alimtalk",
        "[message]\nservice = 1001\ntemplate = \"ORDER_SHIPPED\"\ntext = \"#{이름}님, 주문하신 상품이 발송되었습니다. 송장번호: #{VAR1}\"\nalter = true\ncallback_no = \"0212345678\"\n\n[send]\nchunk_size = 5\npause_when_failing = { percent = 20, window = 10 }\n",
        &numbers,
    );
    let ended = fx.start_run().finish();
    assert_eq!(ended.code(), Some(0), "{}", ended.stderr);
    assert!(!ended.stderr.contains("paused"), "{}", ended.stderr);
    let status = fx.status();
    assert_eq!(n(&status, "sent"), 60, "{status}");
    assert_eq!(
        n(&status, "accepted"),
        0,
        "every notification failed on its channel: {status}"
    );
    fx.assert_no_number_twice();
}
