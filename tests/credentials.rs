//! Credentials stay home, through the `msgbatch` binary: plain `http://` only to loopback.

mod common;

use common::process::{copy_samples, exec, msgbatch_at, path_str, SandboxProcess};
use std::net::{SocketAddr, TcpListener};
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
