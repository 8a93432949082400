//! Credentials stay home, through the `msgbatch` binary: key files private like ssh keys, which key is used when two are given, plain `http://` only to loopback.

mod common;

use common::process::{copy_samples, exec, msgbatch_at, path_str, Outcome, SandboxProcess};
use std::net::{SocketAddr, TcpListener};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A Monday morning in Seoul: outside every quiet-hours window.
const DAYTIME: &str = "2026-11-23T11:00:00+09:00";
const DEMO_KEY: &str = "sbx-demo-key";
const DEMO_GROUP: &str = "demo";
/// A documentation address (TEST-NET-1): every test here is refused before it could connect.
const REMOTE: &str = "192.0.2.1:7070";

/// A loopback port nothing listens on: a command that got as far as connecting fails there.
fn closed_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

/// A management command with the endpoints given, the group set, and no key yet.
fn management(base_url: &str, gateway_url: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_msgbatch"));
    command
        .env_clear()
        .stdin(Stdio::null())
        .env("MSGBATCH_GROUP_ID", DEMO_GROUP)
        .env("MSGBATCH_BASE_URL", base_url)
        .env("MSGBATCH_GATEWAY_URL", gateway_url);
    command
}

fn against(sandbox: &SandboxProcess) -> Command {
    management(&sandbox.base_url(), &sandbox.gateway_url())
}

fn nowhere() -> Command {
    let closed = closed_port();
    management(
        &format!("http://{closed}/standard"),
        &format!("http://{closed}/gateway"),
    )
}

fn key_file(dir: &Path, name: &str, key: &str, mode: u32) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("{key}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

fn assert_key_never_shown(outcome: &Outcome, key: &str) {
    assert!(
        !outcome.stdout.contains(key) && !outcome.stderr.contains(key),
        "the key was printed:\n{}",
        outcome.show()
    );
}

fn assert_refused_as_open(outcome: &Outcome, file: &Path) {
    assert_eq!(outcome.code, Some(2), "{}", outcome.show());
    let fix = format!("chmod 600 {}", file.display());
    assert!(outcome.stderr.contains(&fix), "says how to fix it:\n{}", outcome.show());
    assert!(
        outcome.stderr.contains("MSGBATCH_ALLOW_OPEN_KEY_FILE=1"),
        "says how to override:\n{}",
        outcome.show()
    );
    assert_key_never_shown(outcome, DEMO_KEY);
}

#[test]
fn a_key_file_others_can_read_is_refused_with_how_to_fix_it() {
    let dir = tempfile::tempdir().unwrap();
    for mode in [0o644, 0o640, 0o604, 0o660] {
        let file = key_file(dir.path(), &format!("key-{mode:o}"), DEMO_KEY, mode);
        let mut command = nowhere();
        command.env("MSGBATCH_API_KEY_FILE", &file);
        let outcome = exec(command, &["channel", "list"]);
        assert_refused_as_open(&outcome, &file);
    }
}

#[test]
fn a_private_key_file_is_used_and_an_open_one_only_when_allowed() {
    let sandbox = SandboxProcess::start();
    let dir = tempfile::tempdir().unwrap();
    for (mode, allow) in [(0o600, false), (0o400, false), (0o644, true)] {
        let file = key_file(dir.path(), &format!("key-{mode:o}"), DEMO_KEY, mode);
        let mut command = against(&sandbox);
        command.env("MSGBATCH_API_KEY_FILE", &file);
        if allow {
            command.env("MSGBATCH_ALLOW_OPEN_KEY_FILE", "1");
        }
        let outcome = exec(command, &["category", "--json"]).expect_code(0, &format!("key file {mode:o}"));
        assert_key_never_shown(&outcome, DEMO_KEY);
    }
}

#[test]
fn the_variable_wins_over_the_key_file_and_says_so() {
    let sandbox = SandboxProcess::start();
    let dir = tempfile::tempdir().unwrap();
    let unused_key = "sbx-SECRET-in-the-file-3c9d";
    let file = key_file(dir.path(), "key", unused_key, 0o600);
    let mut command = against(&sandbox);
    command
        .env("MSGBATCH_API_KEY", DEMO_KEY)
        .env("MSGBATCH_API_KEY_FILE", &file);

    // The file's key is not a key of the sandbox: success shows the variable's key was sent.
    let outcome = exec(command, &["category"]).expect_code(0, "key from the variable");
    assert!(
        outcome.stderr.contains("using the API key in MSGBATCH_API_KEY"),
        "{}",
        outcome.show()
    );
    assert!(
        outcome
            .stderr
            .contains(&format!("the key file {} is not read", file.display())),
        "{}",
        outcome.show()
    );
    assert_key_never_shown(&outcome, DEMO_KEY);
    assert_key_never_shown(&outcome, unused_key);
}

/// The sample SMS campaign in `dir` with `endpoint` and `[credentials]` given.
fn sms_campaign(dir: &Path, endpoint: &str, credentials: &str) -> PathBuf {
    copy_samples(dir, &["sms.toml", "recipients.csv"]);
    let campaign = dir.join("sms.toml");
    let sample = std::fs::read_to_string(&campaign).unwrap();
    let text = format!("endpoint = {endpoint}\n{sample}\n[credentials]\n{credentials}\n");
    std::fs::write(&campaign, text).unwrap();
    campaign
}

fn urls(base: &str) -> String {
    format!("{{ base_url = \"{base}/standard\", gateway_url = \"{base}/gateway\" }}")
}

/// `msgbatch run CAMPAIGN --out DIR/run` with the group in the environment and no key variable.
fn run(dir: &Path, campaign: &Path) -> Outcome {
    let mut command = msgbatch_at(dir, DAYTIME);
    command
        .env_remove("MSGBATCH_API_KEY")
        .env("MSGBATCH_GROUP_ID", DEMO_GROUP);
    exec(
        command,
        &["run", path_str(campaign), "--out", path_str(&dir.join("run"))],
    )
}

#[test]
fn a_campaign_key_file_follows_the_same_rule() {
    let sandbox = SandboxProcess::start();
    let dir = tempfile::tempdir().unwrap();
    let file = key_file(dir.path(), "key", DEMO_KEY, 0o644);
    let campaign = sms_campaign(dir.path(), &urls(&sandbox.root_url()), "api_key_file = \"key\"");

    let refused = run(dir.path(), &campaign);
    assert_refused_as_open(&refused, &file);
    assert_eq!(sandbox.sent().total, 0, "nothing was sent with an open key file");

    assert!(
        !dir.path().join("run").exists(),
        "a refused start leaves no run directory"
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let sent = run(dir.path(), &campaign).expect_code(0, "a private key file");
    assert_key_never_shown(&sent, DEMO_KEY);
    assert!(sandbox.sent().total > 0);
}

#[test]
fn plain_http_to_a_host_that_is_not_loopback_is_refused_before_connecting() {
    let remote = format!("http://{REMOTE}");
    let mut command = management(&format!("{remote}/standard"), &format!("{remote}/gateway"));
    command.env("MSGBATCH_API_KEY", DEMO_KEY);
    let outcome = exec(command, &["channel", "list"]);
    assert_eq!(outcome.code, Some(2), "{}", outcome.show());
    assert!(
        outcome.stderr.contains(&format!("{remote}/")),
        "names the URL: {}",
        outcome.show()
    );
    assert!(outcome.stderr.contains("plain http://"), "{}", outcome.show());
    assert!(
        outcome.stderr.contains("MSGBATCH_INSECURE_HTTP=1"),
        "{}",
        outcome.show()
    );

    // Only the gateway is remote: both URLs are checked.
    let closed = closed_port();
    let mut command = management(&format!("http://{closed}/standard"), &format!("{remote}/gateway"));
    command.env("MSGBATCH_API_KEY", DEMO_KEY);
    let outcome = exec(command, &["channel", "list"]);
    assert_eq!(outcome.code, Some(2), "{}", outcome.show());

    let dir = tempfile::tempdir().unwrap();
    let campaign = sms_campaign(dir.path(), &urls(&remote), "group_id = \"demo\"");
    let mut command = msgbatch_at(dir.path(), DAYTIME);
    command.env("MSGBATCH_API_KEY", DEMO_KEY);
    let outcome = exec(
        command,
        &["run", path_str(&campaign), "--out", path_str(&dir.path().join("run"))],
    );
    assert_eq!(outcome.code, Some(2), "{}", outcome.show());
    assert!(outcome.stderr.contains("plain http://"), "{}", outcome.show());
    assert!(outcome.stderr.contains("endpoint.insecure_http"), "{}", outcome.show());
}

/// 0.0.0.0 is not loopback to the rule, yet Linux connects it to this machine: the allowed
/// request stays on loopback.
#[cfg(target_os = "linux")]
#[test]
fn the_environment_allows_plain_http_for_the_management_commands() {
    let sandbox = SandboxProcess::start();
    let port = sandbox.addr.rsplit(':').next().unwrap();
    let any = format!("http://0.0.0.0:{port}");
    let command = || {
        let mut command = management(&format!("{any}/standard"), &format!("{any}/gateway"));
        command.env("MSGBATCH_API_KEY", DEMO_KEY);
        command
    };
    exec(command(), &["category"]).expect_code(2, "not allowed");
    let mut allowed = command();
    allowed.env("MSGBATCH_INSECURE_HTTP", "1");
    exec(allowed, &["category"]).expect_code(0, "allowed by MSGBATCH_INSECURE_HTTP=1");
}

#[test]
fn a_campaign_allows_plain_http_with_insecure_http() {
    let sandbox = SandboxProcess::start();
    let port = sandbox.addr.rsplit(':').next().unwrap();
    // 0.0.0.0 is not a loopback address, but Linux connects it to this machine: no traffic leaves.
    let any = format!("http://0.0.0.0:{port}");
    let dir = tempfile::tempdir().unwrap();
    key_file(dir.path(), "key", DEMO_KEY, 0o600);
    let refused = sms_campaign(dir.path(), &urls(&any), "api_key_file = \"key\"");
    let outcome = run(dir.path(), &refused).expect_code(2, "plain http to a host that is not loopback");
    assert!(outcome.stderr.contains("insecure_http"), "{}", outcome.show());
    assert_eq!(sandbox.sent().total, 0);

    let allowed_endpoint =
        format!("{{ base_url = \"{any}/standard\", gateway_url = \"{any}/gateway\", insecure_http = true }}");
    let allowed = sms_campaign(dir.path(), &allowed_endpoint, "api_key_file = \"key\"");
    run(dir.path(), &allowed).expect_code(0, "allowed by endpoint.insecure_http");
    assert!(sandbox.sent().total > 0);
}
