//! Child processes of a test: the `msgbatch` binary run, read line by line, killed; and the sandbox as a separate process that outlives the runs killed against it.
#![allow(dead_code)]

use msgbatch::api::ledger::{Ledger, SentCounts};
use msgbatch::client::{ApiKey, Client, ClientConfig};
use msgbatch::sandbox::accounts::FaultConfig;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_msgbatch");
pub const API_KEY: &str = "sbx-demo-key";
pub const GROUP: &str = "demo";
const LISTENING: &str = "sandbox listening on http://";
/// Longest wait for a child's line or its end: only a hung child ever reaches it.
pub const LIMIT: Duration = Duration::from_secs(60);

/// `msgbatch status RUN_DIR --json` as it prints it (the command exits 0).
pub fn status_json(status: Command) -> serde_json::Value {
    let finished = Running::spawn(status, "msgbatch status --json").finish();
    finished.expect_code(0);
    serde_json::from_str(&finished.stdout).unwrap_or_else(|e| panic!("status --json ({e}): {}", finished.stdout))
}

/// Polls `status` until `wanted` holds of it (bounded by [`LIMIT`]); that status.
pub fn status_until(
    status: impl Fn() -> serde_json::Value,
    what: &str,
    wanted: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = Instant::now() + LIMIT;
    loop {
        let seen = status();
        if wanted(&seen) {
            return seen;
        }
        assert!(Instant::now() < deadline, "status never showed {what}: {seen}");
    }
}

/// `msgbatch ARGS` in `dir` as an operator runs it: nothing from the test's environment but the
/// demo key and the clock (Seoul time `clock`, so that quiet hours do not depend on when tests run).
pub fn msgbatch(dir: &Path, clock: &str, args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command
        .env_clear()
        .env("MSGBATCH_API_KEY", API_KEY)
        .env("MSGBATCH_CLOCK", clock)
        .current_dir(dir)
        .args(args);
    command
}

// ---------------------------------------------------------------------------------------------
// Child processes.

/// The lines of a child's pipe, read by a thread so the child never blocks on a full pipe.
pub struct Lines {
    pub rx: mpsc::Receiver<String>,
    pub seen: Vec<String>,
}

impl Lines {
    pub fn read(pipe: impl Read + Send + 'static) -> Lines {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(pipe);
            let mut buffer = Vec::new();
            loop {
                buffer.clear();
                match reader.read_until(b'\n', &mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let _ = tx.send(String::from_utf8_lossy(&buffer).trim_end().to_string());
                    }
                }
            }
        });
        Lines { rx, seen: Vec::new() }
    }

    /// Waits, at most `LIMIT`, for the first line `wanted` accepts.
    pub fn wait_for(&mut self, what: &str, wanted: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + LIMIT;
        loop {
            match self.rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if wanted(&line) {
                        return line;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("no {what} line within {LIMIT:?}; so far: {:?}", self.seen)
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    panic!("the pipe closed before a {what} line; it said: {:?}", self.seen)
                }
            }
        }
    }

    /// Everything until the pipe closes (the child ended), waiting at most `LIMIT`.
    pub fn read_to_end(&mut self, what: &str) -> String {
        let deadline = Instant::now() + LIMIT;
        loop {
            match self.rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) => self.seen.push(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => return self.seen.join("\n"),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("{what} did not end within {LIMIT:?}; it said: {:?}", self.seen)
                }
            }
        }
    }
}

/// A running child, killed and reaped when dropped (also when a test fails).
pub struct Running {
    pub child: Child,
    pub stdout: Lines,
    pub stderr: Lines,
    pub what: String,
}

/// How a child ended and what it printed.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub what: String,
}

impl Running {
    pub fn spawn(mut command: Command, what: &str) -> Running {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap_or_else(|e| panic!("{what} starts: {e}"));
        let stdout = Lines::read(child.stdout.take().expect("stdout is piped"));
        let stderr = Lines::read(child.stderr.take().expect("stderr is piped"));
        Running {
            child,
            stdout,
            stderr,
            what: what.to_string(),
        }
    }

    /// Waits (bounded) for the child to end on its own.
    pub fn finish(mut self) -> Finished {
        let stderr = self.stderr.read_to_end(&self.what);
        let stdout = self.stdout.read_to_end(&self.what);
        let status = self.child.wait().expect("the child is reaped");
        Finished {
            status,
            stdout,
            stderr,
            what: self.what.clone(),
        }
    }

    /// SIGKILL, then what it printed until then.
    pub fn kill(mut self) -> Finished {
        self.child.kill().expect("SIGKILL is delivered");
        self.finish()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Finished {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    pub fn expect_code(&self, code: i32) -> &Finished {
        assert_eq!(
            self.code(),
            Some(code),
            "{} should exit {code}, got {:?}\nstdout:\n{}\nstderr:\n{}",
            self.what,
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }

    /// The process died at the armed failpoint (aborted, so no exit code of its own).
    pub fn expect_crash_at(&self, failpoint: &str) -> &Finished {
        assert!(
            !self.status.success() && self.code() != Some(0),
            "{} should have crashed at {failpoint}, got {:?}\nstderr:\n{}",
            self.what,
            self.status,
            self.stderr
        );
        assert!(
            self.stderr.contains(&format!("failpoint {failpoint} reached")),
            "{} crashed, but not at {failpoint}:\n{}",
            self.what,
            self.stderr
        );
        self
    }

    pub fn expect_stderr(&self, text: &str) -> &Finished {
        assert!(
            self.stderr.contains(text),
            "{} should say {text:?}; stderr:\n{}",
            self.what,
            self.stderr
        );
        self
    }
}

// ---------------------------------------------------------------------------------------------
// The sandbox, as a separate process that outlives the runs killed against it.

pub struct Sandbox {
    _process: Running,
    pub addr: String,
}

impl Sandbox {
    /// `msgbatch sandbox --listen 127.0.0.1:0 [--accounts FILE]`; the address comes from its stderr.
    pub fn start(accounts: Option<&Path>) -> Sandbox {
        let mut command = Command::new(BIN);
        command.env_clear().args(["sandbox", "--listen", "127.0.0.1:0"]);
        if let Some(path) = accounts {
            command.arg("--accounts").arg(path);
        }
        let mut process = Running::spawn(command, "msgbatch sandbox");
        let line = process
            .stderr
            .wait_for("`sandbox listening`", |line| line.starts_with(LISTENING));
        let addr = line[LISTENING.len()..].trim().to_string();
        assert!(!addr.ends_with(":0"), "the sandbox names its real port: {addr}");
        Sandbox {
            _process: process,
            addr,
        }
    }

    pub fn root_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Runs one admin call with a fresh client on a fresh runtime (the tests themselves are synchronous).
    pub fn admin<T>(&self, call: impl AsyncFnOnce(&Client, String) -> T) -> T {
        let root = self.root_url();
        let config = ClientConfig::new(
            format!("{root}/standard"),
            format!("{root}/gateway"),
            ApiKey::new(API_KEY),
            GROUP,
        );
        let client = Client::new(config).expect("client builds");
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime builds")
            .block_on(call(&client, root))
    }

    /// Per-number counts of processed send requests (`GET /_sandbox/sent`).
    pub fn sent(&self) -> SentCounts {
        self.admin(async |client, root| client.sandbox_admin(root).sent().await)
            .expect("GET /_sandbox/sent answers")
    }

    /// `PUT /_sandbox/faults` (also restarts the sandbox's fault counter).
    pub fn set_faults(&self, faults: FaultConfig) {
        let echoed = self
            .admin(async |client, root| client.sandbox_admin(root).set_faults(&faults).await)
            .expect("PUT /_sandbox/faults answers");
        assert_eq!(echoed, faults, "the sandbox put the faults in force");
    }
}

impl Sandbox {
    /// The sandbox's ledger of charges and refunds (`GET /_sandbox/ledger`).
    pub fn ledger(&self) -> Ledger {
        self.admin(async |client, root| client.sandbox_admin(root).ledger().await)
            .expect("GET /_sandbox/ledger answers")
    }
}
