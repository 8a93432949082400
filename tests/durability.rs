//! Power-loss durability, shown by a syscall trace: every request leaves only after its chunk's mark was synced to stable storage (`fdatasync`/`fsync` of the checkpoint's log).
//!
//! Runs the real binary under `strace` against a sandbox in its own process. Without `strace`
//! (or where ptrace is not allowed) the test says so and passes without checking: `.ci/run`
//! installs it.

mod common;

use common::process::{path_str, SandboxProcess};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_msgbatch");

/// One traced call of interest, in the order the trace lists them.
#[derive(Debug, Clone, PartialEq)]
enum Call {
    /// A write to the checkpoint's log (`checkpoint/db`).
    LogWrite,
    /// `fdatasync` or `fsync` of the checkpoint's log.
    LogSync,
    /// The start of an HTTP request to the sandbox.
    Request,
}

fn strace_works() -> bool {
    Command::new("strace")
        .args(["-f", "-qq", "-o", "/dev/null", "true"])
        .status()
        .is_ok_and(|status| status.success())
}

fn calls(trace: &str) -> Vec<Call> {
    let mut calls = Vec::new();
    for line in trace.lines() {
        // `-y` prints each file descriptor with its path: `fdatasync(7</tmp/.../checkpoint/db>)`.
        let on_log = line.contains("/checkpoint/db>");
        if on_log && (line.contains("fdatasync(") || line.contains("fsync(")) {
            calls.push(Call::LogSync);
        } else if on_log && line.contains("pwrite64(") {
            calls.push(Call::LogWrite);
        } else if (line.contains("write") || line.contains("send")) && line.contains("\"POST /standard/sms") {
            calls.push(Call::Request);
        }
    }
    calls
}

#[test]
fn every_request_leaves_after_its_chunks_mark_is_synced() {
    if !strace_works() {
        eprintln!("SKIPPED: strace is not available here (install Debian's strace package)");
        return;
    }
    let sandbox = SandboxProcess::start();
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("phone\n");
    for i in 0..200 {
        csv.push_str(&format!("010{:08}\n", 20_000_000 + i));
    }
    std::fs::write(dir.path().join("people.csv"), csv).unwrap();
    let campaign = dir.path().join("campaign.toml");
    std::fs::write(
        &campaign,
        format!(
            "kind = \"sms\"\n{}[credentials]\ngroup_id = \"demo\"\n[message]\nservice = 3001\ntext = \"[데모몰] 출발합니다.\"\ncallback_no = \"0212345678\"\n[recipients]\npath = \"people.csv\"\n[send]\nchunk_size = 10\nconcurrency = 1\n",
            sandbox.endpoint_toml()
        ),
    )
    .unwrap();
    let trace = dir.path().join("trace.txt");
    let run_dir = dir.path().join("run");
    let status = Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-y",
            "-s",
            "24",
            "-e",
            "trace=pwrite64,fdatasync,fsync,write,writev,sendto,sendmsg",
        ])
        .arg("-o")
        .arg(&trace)
        .arg(BIN)
        .args(["run", path_str(&campaign), "--out", path_str(&run_dir)])
        .env_clear()
        .env("MSGBATCH_API_KEY", "sbx-demo-key")
        .env("MSGBATCH_CLOCK", "2026-11-23T11:00:00+09:00")
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(status.success(), "the traced run succeeds");

    let calls = calls(&std::fs::read_to_string(&trace).unwrap());
    let requests = calls.iter().filter(|c| **c == Call::Request).count();
    assert_eq!(requests, 20, "one request per chunk of 10: {calls:?}");
    // With one request in flight at a time, each chunk's mark is written and synced after the
    // previous request's answer: between two requests there must be a log write and then a sync.
    let mut since_last_request = Vec::new();
    for call in &calls {
        if *call == Call::Request {
            let synced_after_write = since_last_request
                .iter()
                .rposition(|c| *c == Call::LogSync)
                .is_some_and(|sync| since_last_request[..sync].contains(&Call::LogWrite));
            assert!(
                synced_after_write,
                "a request left without its mark on stable storage; calls since the previous request: {since_last_request:?}"
            );
            since_last_request.clear();
        } else {
            since_last_request.push(call.clone());
        }
    }
}
