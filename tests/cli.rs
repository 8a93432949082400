//! The `msgbatch` binary end to end: the sandbox command, management commands against it, key secrecy, errors and masked output.

mod common;

use common::process::SandboxProcess;
use common::*;
use msgbatch::api::channel::{Channel, SenderProfile};
use msgbatch::api::gateway::{GatewayAlimTalkRequest, GatewaySendResponse, SendRecord};
use msgbatch::api::GatewayNumberEntry;
use msgbatch::sandbox::accounts::DEMO_ACCOUNTS;
use msgbatch::sandbox::Accounts;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_msgbatch");

/// Starts `msgbatch sandbox --listen 127.0.0.1:0 --settle-after 0s` plus `extra`.
fn start_sandbox(extra: &[&str]) -> SandboxProcess {
    let mut args = vec!["--settle-after", "0s"];
    args.extend_from_slice(extra);
    let process = SandboxProcess::start_with(&args);
    assert!(
        !process.addr.ends_with(":0"),
        "port 0 was replaced by the real port: {}",
        process.addr
    );
    process
}

/// A management command against a sandbox, endpoints and credentials from the environment.
fn management(sandbox: &SandboxProcess, api_key: &str) -> Command {
    let mut command = bare_command();
    command
        .env("MSGBATCH_API_KEY", api_key)
        .env("MSGBATCH_GROUP_ID", DEMO_GROUP)
        .env("MSGBATCH_BASE_URL", sandbox.base_url())
        .env("MSGBATCH_GATEWAY_URL", sandbox.gateway_url());
    command
}

/// The binary with an empty environment, so nothing from the test's environment leaks in.
fn bare_command() -> Command {
    let mut command = Command::new(BIN);
    command.env_clear().stdin(Stdio::null());
    command
}

/// What one run printed.
struct Run {
    success: bool,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn expect_success(self, what: &str) -> Run {
        assert!(
            self.success,
            "{what} should succeed; exit {:?}\nstdout: {}\nstderr: {}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    fn expect_failure(self, what: &str) -> Run {
        assert!(
            !self.success,
            "{what} should fail; exit {:?}\nstdout: {}\nstderr: {}",
            self.code, self.stdout, self.stderr
        );
        assert_ne!(self.code, Some(0));
        self
    }

    fn json<T: serde::de::DeserializeOwned>(&self) -> T {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not the JSON expected: {e}\n{}", self.stdout))
    }

    fn assert_never_shows(&self, secret: &str) {
        assert!(
            !self.stdout.contains(secret),
            "the API key leaked to stdout:\n{}",
            self.stdout
        );
        assert!(
            !self.stderr.contains(secret),
            "the API key leaked to stderr:\n{}",
            self.stderr
        );
    }
}

fn run(command: &mut Command, args: &[&str]) -> Run {
    let Output { status, stdout, stderr } = command.args(args).output().expect("msgbatch runs");
    Run {
        success: status.success(),
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// The demo accounts with the demo group's key replaced by `key`, written to `dir`.
fn accounts_file_with_key(dir: &Path, key: &str) -> std::path::PathBuf {
    assert!(DEMO_ACCOUNTS.contains(DEMO_KEY));
    let text = DEMO_ACCOUNTS.replace(DEMO_KEY, key);
    Accounts::parse(&text, "test").expect("accounts with the new key are valid");
    let path = dir.join("accounts.toml");
    std::fs::write(&path, text).expect("write accounts file");
    path
}

fn gateway_request(numbers: &[&str]) -> GatewayAlimTalkRequest {
    GatewayAlimTalkRequest {
        group_id: DEMO_GROUP.into(),
        service: DEMO_SENDER_KEY.into(),
        template: "ORDER_SHIPPED".into(),
        message: ORDER_SHIPPED_TEXT.into(),
        numbers: numbers
            .iter()
            .map(|hp| GatewayNumberEntry {
                hp: hp.to_string(),
                name: Some("홍길동".into()),
                vars: [("VAR1".to_string(), "A-1".to_string())].into_iter().collect(),
            })
            .collect(),
        ..GatewayAlimTalkRequest::default()
    }
}

// --- sandbox command ---

#[test]
fn print_accounts_prints_toml_that_parses() {
    let run = run(&mut bare_command(), &["sandbox", "--print-accounts"]).expect_success("sandbox --print-accounts");
    let accounts = Accounts::parse(&run.stdout, "printed accounts").expect("printed accounts parse");
    let demo = accounts
        .groups
        .iter()
        .find(|g| g.id == DEMO_GROUP)
        .expect("demo group printed");
    assert_eq!(demo.api_key, DEMO_KEY);
    assert!(demo.channels.iter().any(|c| c.id == "ch-demo-large"));
}

#[test]
fn sandbox_on_port_zero_reports_its_address_and_serves() {
    let sandbox = start_sandbox(&[]);
    let port: u16 = sandbox.addr.rsplit(':').next().unwrap().parse().expect("a port number");
    assert_ne!(port, 0);
    run(&mut management(&sandbox, DEMO_KEY), &["category"]).expect_success("category against the reported address");
}

// --- channel ---

#[test]
fn channel_list_text_names_the_demo_channels() {
    let sandbox = start_sandbox(&[]);
    let run = run(&mut management(&sandbox, DEMO_KEY), &["channel", "list"]).expect_success("channel list");
    assert!(run.stdout.contains("ch-demo-large"), "{}", run.stdout);
    assert!(run.stdout.contains("ch-demo-small"), "{}", run.stdout);
    assert!(run.stdout.contains("2 channel(s)"), "{}", run.stdout);
}

#[test]
fn channel_list_json_is_an_array_of_channels() {
    let sandbox = start_sandbox(&[]);
    let run =
        run(&mut management(&sandbox, DEMO_KEY), &["channel", "list", "--json"]).expect_success("channel list --json");
    let value: serde_json::Value = run.json();
    let items = value.as_array().expect("a JSON array");
    assert_eq!(items.len(), 2, "{value}");
    let channels: Vec<Channel> = run.json();
    assert!(channels
        .iter()
        .any(|c| c.id == "ch-demo-large" && c.group_id == DEMO_GROUP));
}

#[test]
fn endpoints_given_as_flags_work_like_the_environment() {
    let sandbox = start_sandbox(&[]);
    let mut command = bare_command();
    command
        .env("MSGBATCH_API_KEY", DEMO_KEY)
        .env("MSGBATCH_GROUP_ID", DEMO_GROUP);
    let gateway = sandbox.gateway_url();
    let base = sandbox.base_url();
    let run = run(
        &mut command,
        &[
            "channel",
            "get",
            "ch-demo-large",
            "--gateway-url",
            &gateway,
            "--base-url",
            &base,
            "--json",
        ],
    )
    .expect_success("channel get with --gateway-url");
    let channel: Channel = run.json();
    assert_eq!(channel.id, "ch-demo-large");
    assert_eq!(channel.name, "Demo Shop");
}

#[test]
fn channel_create_get_update_delete_round_trip() {
    let sandbox = start_sandbox(&[]);
    let cmd = || management(&sandbox, DEMO_KEY);

    let created: Channel = run(
        &mut cmd(),
        &[
            "channel",
            "create",
            "--name",
            "Round Trip Shop",
            "--sender-key",
            DEMO_SENDER_KEY,
            "--callback-no",
            DEMO_CALLBACK,
            "--json",
        ],
    )
    .expect_success("channel create")
    .json();
    assert!(!created.id.is_empty());
    assert_eq!(created.name, "Round Trip Shop");
    assert_eq!(created.sender_key, DEMO_SENDER_KEY);
    assert_eq!(created.callback_no.as_deref(), Some(DEMO_CALLBACK));
    assert_eq!(created.status, "ENABLE");
    assert_eq!(created.channel_status, "ACTIVE");
    assert_eq!(created.group_id, DEMO_GROUP);

    let fetched: Channel = run(&mut cmd(), &["channel", "get", &created.id, "--json"])
        .expect_success("channel get")
        .json();
    assert_eq!(fetched, created);

    let updated: Channel = run(
        &mut cmd(),
        &["channel", "update", &created.id, "--name", "Renamed Shop", "--json"],
    )
    .expect_success("channel update")
    .json();
    assert_eq!(updated.id, created.id);
    assert_eq!(updated.name, "Renamed Shop");
    assert_eq!(updated.callback_no, created.callback_no);

    let text = run(&mut cmd(), &["channel", "get", &created.id]).expect_success("channel get (text)");
    assert!(text.stdout.contains(&created.id), "{}", text.stdout);
    assert!(text.stdout.contains("Renamed Shop"), "{}", text.stdout);

    let deleted: Channel = run(&mut cmd(), &["channel", "delete", &created.id, "--json"])
        .expect_success("channel delete")
        .json();
    assert_eq!(deleted.id, created.id);
    assert_eq!(deleted.status, "DELETED");

    let after: Channel = run(&mut cmd(), &["channel", "get", &created.id, "--json"])
        .expect_success("a soft-deleted channel is still readable")
        .json();
    assert_eq!(after.status, "DELETED");
    let deleted_list: Vec<Channel> = run(&mut cmd(), &["channel", "list", "--status", "DELETED", "--json"])
        .expect_success("channel list --status DELETED")
        .json();
    assert!(deleted_list.iter().any(|c| c.id == created.id), "{deleted_list:?}");
    let enabled_list: Vec<Channel> = run(&mut cmd(), &["channel", "list", "--status", "ENABLE", "--json"])
        .expect_success("channel list --status ENABLE")
        .json();
    assert!(!enabled_list.iter().any(|c| c.id == created.id), "{enabled_list:?}");
}

// --- category and sender ---

#[test]
fn category_json_lists_the_category_codes() {
    let sandbox = start_sandbox(&[]);
    let run = run(&mut management(&sandbox, DEMO_KEY), &["category", "--json"]).expect_success("category --json");
    let value: serde_json::Value = run.json();
    let codes: Vec<&str> = value["categories"]
        .as_array()
        .expect("categories array")
        .iter()
        .filter_map(|c| c["code"].as_str())
        .collect();
    assert!(codes.contains(&"00100010001"), "{value}");
}

#[tokio::test]
async fn sender_token_then_issue_then_status() {
    let sandbox = start_sandbox(&[]);
    let phone = "01012345678";
    let yellow_id = "_cliShop";

    let token_run = run(
        &mut management(&sandbox, DEMO_KEY),
        &["sender", "token", "--phone", phone, "--yellow-id", yellow_id],
    )
    .expect_success("sender token");
    assert!(token_run.stdout.contains("010-****-5678"), "{}", token_run.stdout);
    assert!(
        !token_run.stdout.contains(phone),
        "the phone is masked: {}",
        token_run.stdout
    );

    let client = sandbox.client();
    let outbox = client
        .sandbox_admin(sandbox.root_url())
        .tokens()
        .await
        .expect("GET /_sandbox/tokens answers");
    let token = outbox
        .tokens
        .iter()
        .rev()
        .find(|t| t.phone_number == phone && t.yellow_id == yellow_id)
        .expect("the token was 'sent by SMS'")
        .token
        .clone();

    let profile: SenderProfile = run(
        &mut management(&sandbox, DEMO_KEY),
        &[
            "sender",
            "issue",
            "--token",
            &token,
            "--phone",
            phone,
            "--yellow-id",
            yellow_id,
            "--category",
            "00100010001",
            "--json",
        ],
    )
    .expect_success("sender issue")
    .json();
    assert!(!profile.sender_key.is_empty());
    assert_eq!(profile.status, "IN_REVIEW", "demo accounts issue profiles in review");

    let status = run(
        &mut management(&sandbox, DEMO_KEY),
        &["sender", "status", &profile.sender_key],
    )
    .expect_success("sender status");
    assert!(status.stdout.contains(&profile.sender_key), "{}", status.stdout);
    assert!(status.stdout.contains("IN_REVIEW"), "{}", status.stdout);

    let status_json: SenderProfile = run(
        &mut management(&sandbox, DEMO_KEY),
        &["sender", "status", &profile.sender_key, "--json"],
    )
    .expect_success("sender status --json")
    .json();
    assert_eq!(status_json, profile);

    // A token is used once.
    run(
        &mut management(&sandbox, DEMO_KEY),
        &[
            "sender",
            "issue",
            "--token",
            &token,
            "--phone",
            phone,
            "--yellow-id",
            yellow_id,
        ],
    )
    .expect_failure("reusing a token");
}

// --- results ---

/// Makes a gateway send through the library client against the child sandbox: one number that
/// settles OK and one that settles FAILED (suffix 93 in the demo accounts).
async fn gateway_send(sandbox: &SandboxProcess, numbers: &[&str]) -> GatewaySendResponse {
    let response = sandbox
        .client()
        .send_gateway_alimtalk(&gateway_request(numbers))
        .await
        .expect("gateway send accepted");
    assert_eq!(response.accepted, numbers.len() as u64, "{response:?}");
    response
}

#[tokio::test]
async fn result_group_and_get_show_a_gateway_send() {
    let sandbox = start_sandbox(&[]);
    let ok_number = "01012345678";
    let failed_number = "01055550093";
    let response = gateway_send(&sandbox, &[ok_number, failed_number]).await;

    let records: Vec<SendRecord> = run(
        &mut management(&sandbox, DEMO_KEY),
        &["result", "group", &response.send_group_id, "--json"],
    )
    .expect_success("result group --json")
    .json();
    assert_eq!(records.len(), 2, "{records:?}");
    for acceptance in &response.results {
        let record = records
            .iter()
            .find(|r| r.id == acceptance.id)
            .expect("every sent id listed");
        let expected = if acceptance.mobile == ok_number { "OK" } else { "FAILED" };
        assert_eq!(record.result.as_deref(), Some(expected), "{record:?}");
    }

    let text = run(
        &mut management(&sandbox, DEMO_KEY),
        &["result", "group", &response.send_group_id],
    )
    .expect_success("result group");
    assert!(text.stdout.contains("2 record(s): FAILED 1, OK 1"), "{}", text.stdout);

    let ok_id = &response.results.iter().find(|r| r.mobile == ok_number).unwrap().id;
    let record: SendRecord = run(&mut management(&sandbox, DEMO_KEY), &["result", "get", ok_id, "--json"])
        .expect_success("result get --json")
        .json();
    assert_eq!(&record.id, ok_id);
    assert_eq!(record.result.as_deref(), Some("OK"));
    assert_eq!(record.send_group_id.as_deref(), Some(response.send_group_id.as_str()));

    let text = run(&mut management(&sandbox, DEMO_KEY), &["result", "get", ok_id]).expect_success("result get");
    assert!(text.stdout.contains(ok_id.as_str()), "{}", text.stdout);
    assert!(text.stdout.contains("OK"), "{}", text.stdout);

    let missing = run(
        &mut management(&sandbox, DEMO_KEY),
        &["result", "get", "00000000-0000-0000-0000-000000000000"],
    )
    .expect_failure("result get of an unknown id");
    assert!(missing.stderr.contains("404"), "{}", missing.stderr);
}

#[tokio::test]
async fn result_group_text_masks_phone_numbers() {
    let sandbox = start_sandbox(&[]);
    let numbers = ["01012345678", "01098760093"];
    let response = gateway_send(&sandbox, &numbers).await;
    let text = run(
        &mut management(&sandbox, DEMO_KEY),
        &["result", "group", &response.send_group_id],
    )
    .expect_success("result group");
    assert!(text.stdout.contains("010-****-5678"), "{}", text.stdout);
    assert!(text.stdout.contains("010-****-0093"), "{}", text.stdout);
    for number in numbers {
        assert!(
            !text.stdout.contains(number),
            "{number} shown unmasked:\n{}",
            text.stdout
        );
        assert!(
            !text.stderr.contains(number),
            "{number} shown unmasked:\n{}",
            text.stderr
        );
    }
}

// --- credentials ---

const VALID_SECRET: &str = "sbx-SECRET-valid-7f3a9c51e2";
const INVALID_SECRET: &str = "sbx-SECRET-invalid-0d1e88b4";

#[test]
fn api_key_from_env_is_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let accounts = accounts_file_with_key(dir.path(), VALID_SECRET);
    let sandbox = start_sandbox(&["--accounts", accounts.to_str().unwrap()]);

    for args in [
        &["channel", "list"][..],
        &["channel", "list", "--json"],
        &["category"],
        &["sender", "token", "--phone", "01012345678", "--yellow-id", "_keyShop"],
    ] {
        run(&mut management(&sandbox, VALID_SECRET), args)
            .expect_success(&args.join(" "))
            .assert_never_shows(VALID_SECRET);
    }
    // An answer that is an error, with the most verbose logging.
    let mut verbose = management(&sandbox, VALID_SECRET);
    verbose.env("MSGBATCH_LOG", "trace");
    let missing = run(&mut verbose, &["channel", "get", "no-such-channel"]).expect_failure("unknown channel");
    assert!(missing.stderr.contains("404"), "{}", missing.stderr);
    missing.assert_never_shows(VALID_SECRET);

    for args in [
        &["channel", "list"][..],
        &["result", "get", "x"],
        &["category", "--json"],
    ] {
        let mut verbose = management(&sandbox, INVALID_SECRET);
        verbose.env("MSGBATCH_LOG", "trace");
        let run = run(&mut verbose, args).expect_failure("a wrong key");
        assert!(run.stderr.contains("ERR_102"), "{}", run.stderr);
        run.assert_never_shows(INVALID_SECRET);
    }
}

#[test]
fn api_key_from_file_is_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let accounts = accounts_file_with_key(dir.path(), VALID_SECRET);
    let sandbox = start_sandbox(&["--accounts", accounts.to_str().unwrap()]);
    let valid_file = dir.path().join("valid.key");
    let invalid_file = dir.path().join("invalid.key");
    std::fs::write(&valid_file, format!("{VALID_SECRET}\n")).unwrap();
    std::fs::write(&invalid_file, format!("{INVALID_SECRET}\n")).unwrap();
    // Key files must be private to their owner, like ssh keys (see tests/credentials.rs).
    for file in [&valid_file, &invalid_file] {
        std::fs::set_permissions(file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    }

    let from_file = |file: &Path| {
        let mut command = management(&sandbox, "");
        command
            .env_remove("MSGBATCH_API_KEY")
            .env("MSGBATCH_API_KEY_FILE", file);
        command
    };

    let listed = run(&mut from_file(&valid_file), &["channel", "list"]).expect_success("key read from the file");
    assert!(listed.stdout.contains("ch-demo-large"), "{}", listed.stdout);
    listed.assert_never_shows(VALID_SECRET);
    run(&mut from_file(&valid_file), &["category", "--json"])
        .expect_success("category with the key file")
        .assert_never_shows(VALID_SECRET);

    let refused = run(&mut from_file(&invalid_file), &["channel", "list"]).expect_failure("wrong key in the file");
    assert!(refused.stderr.contains("ERR_102"), "{}", refused.stderr);
    refused.assert_never_shows(INVALID_SECRET);
}

#[test]
fn missing_api_key_fails_naming_the_variable() {
    // No sandbox is needed: the command must stop before any request.
    let mut command = bare_command();
    command
        .env("MSGBATCH_GROUP_ID", DEMO_GROUP)
        .env("MSGBATCH_GATEWAY_URL", "http://127.0.0.1:9/gateway");
    let run = run(&mut command, &["channel", "list"]).expect_failure("no API key");
    assert!(run.stderr.contains("MSGBATCH_API_KEY"), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

#[test]
fn wrong_key_is_a_service_error_with_its_code() {
    let sandbox = start_sandbox(&[]);
    let run = run(
        &mut management(&sandbox, "sbx-not-a-key"),
        &["channel", "list", "--json"],
    )
    .expect_failure("wrong key");
    assert!(run.stderr.contains("ERR_102"), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "no JSON for a failure: {}", run.stdout);
}

#[test]
fn a_zero_poll_interval_or_a_bad_duration_is_refused_before_anything_runs() {
    for (flag, value) in [
        ("--poll-every", "0s"),
        ("--min-age", "soon"),
        ("--horizon", "5 fortnights"),
    ] {
        let output = bare_command()
            .args(["collect", "no-such-run", flag, value])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{flag} {value}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(flag), "{flag} {value}: {stderr}");
    }
}

// --- a closed stdout ---

/// A stdout whose reader is already gone, as in `msgbatch status RUN | true`.
fn closed_stdout() -> Stdio {
    let mut reader = Command::new("true").stdin(Stdio::piped()).spawn().expect("true runs");
    let writer = reader.stdin.take().expect("stdin is piped");
    reader.wait().expect("true ends");
    Stdio::from(writer)
}

/// The command writes into a closed pipe and ends as a Unix filter does: quietly, not with a panic.
fn assert_quiet_end_on_closed_stdout(mut command: Command, args: &[&str]) {
    use std::os::unix::process::ExitStatusExt;
    let output = command
        .args(args)
        .stdout(closed_stdout())
        .stderr(Stdio::piped())
        .output()
        .expect("msgbatch runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let what = args.join(" ");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("internal error"),
        "{what}: {stderr}"
    );
    assert_ne!(output.status.code(), Some(101), "{what} panicked: {stderr}");
    const SIGPIPE: i32 = 13;
    assert!(
        output.status.success() || output.status.signal() == Some(SIGPIPE),
        "{what}: {:?}\n{stderr}",
        output.status
    );
}

/// The binary in `dir`: empty environment, a daytime clock.
fn campaign_command(dir: &Path) -> Command {
    common::process::msgbatch_at(dir, "2026-11-23T11:00:00+09:00")
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    common::process::copy_samples(dir.path(), &["sms.toml", "recipients.csv"]);
    let campaign = dir.path().join("sms.toml");
    let run_dir = dir.path().join("run");
    let (campaign, run_dir) = (campaign.to_str().unwrap(), run_dir.to_str().unwrap());

    // The send itself, with its summary going nowhere: it still completes.
    assert_quiet_end_on_closed_stdout(campaign_command(dir.path()), &["run", campaign, "--out", run_dir]);
    let status = run(&mut campaign_command(dir.path()), &["status", run_dir, "--json"]).expect_success("status");
    let status: serde_json::Value = status.json();
    assert_eq!(status["complete"], true, "{status:#}");
    assert_eq!(status["pending"], 0, "{status:#}");

    for args in [
        &["status", run_dir][..],
        &["status", run_dir, "--json"],
        &["validate", campaign],
        &["report", run_dir],
        &["sandbox", "--print-accounts"],
    ] {
        assert_quiet_end_on_closed_stdout(campaign_command(dir.path()), args);
    }

    let sandbox = start_sandbox(&[]);
    for args in [&["channel", "list"][..], &["category", "--json"]] {
        assert_quiet_end_on_closed_stdout(management(&sandbox, DEMO_KEY), args);
    }
}

#[test]
fn completions_for_each_shell_name_the_commands_and_the_man_pages_are_roff() {
    for shell in ["bash", "zsh", "fish"] {
        let printed = run(&mut bare_command(), &["completions", shell]).expect_success(shell);
        for command in ["send-test", "pause", "adjust", "budget"] {
            assert!(printed.stdout.contains(command), "{shell} completes {command}");
        }
    }
    run(&mut bare_command(), &["completions", "tcsh"]).expect_failure("an unknown shell");

    let page = run(&mut bare_command(), &["man"]).expect_success("man");
    assert!(page.stdout.contains(".TH msgbatch"), "{}", page.stdout);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man1");
    run(&mut bare_command(), &["man", "--out", out.to_str().unwrap()]).expect_success("man --out");
    let send_test = std::fs::read_to_string(out.join("msgbatch-send-test.1")).expect("a page per command");
    assert!(send_test.contains(".TH msgbatch-send-test"), "{send_test}");
    assert!(send_test.contains("test numbers"), "{send_test}");
    assert!(out.join("msgbatch.1").exists());
}
