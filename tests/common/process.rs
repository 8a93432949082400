//! The sandbox as a separate process (`msgbatch sandbox --listen 127.0.0.1:0`), for tests that read its ledger and send counts.
#![allow(dead_code)]

use msgbatch::api::ledger::{BillingClass, Ledger, SentCounts};
use msgbatch::client::{ApiKey, Client, ClientConfig};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_msgbatch");
const LISTENING: &str = "sandbox listening on http://";
const DEMO_KEY: &str = "sbx-demo-key";
const DEMO_GROUP: &str = "demo";

/// A sandbox child process with the demo accounts, killed when dropped.
pub struct SandboxProcess {
    child: Child,
    /// `127.0.0.1:PORT`, as the sandbox reported it.
    pub addr: String,
}

impl SandboxProcess {
    pub fn start() -> SandboxProcess {
        SandboxProcess::start_with(&[])
    }

    /// Starts it with extra `msgbatch sandbox` arguments, like `["--settle-after", "0s"]`.
    pub fn start_with(extra: &[&str]) -> SandboxProcess {
        let mut command = Command::new(BIN);
        command
            .env_clear()
            .args(["sandbox", "--listen", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("msgbatch sandbox starts");
        let stderr = child.stderr.take().expect("stderr is piped");
        let mut process = SandboxProcess {
            child,
            addr: String::new(),
        };
        let (lines_tx, lines_rx) = mpsc::channel::<String>();
        std::thread::spawn(move || {
            // Keep draining so the child never blocks on a full pipe.
            let mut reader = BufReader::new(stderr);
            let mut line = Vec::new();
            loop {
                line.clear();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let _ = lines_tx.send(String::from_utf8_lossy(&line).trim_end().to_string());
                    }
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut seen = Vec::new();
        loop {
            match lines_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) => {
                    if let Some(addr) = line.strip_prefix(LISTENING) {
                        process.addr = addr.trim().to_string();
                        break;
                    }
                    seen.push(line);
                }
                Err(error) => panic!("the sandbox did not say where it listens ({error}); stderr: {seen:?}"),
            }
        }
        process
    }

    /// `{base_url}` of the standard deployment.
    pub fn base_url(&self) -> String {
        format!("http://{}/standard", self.addr)
    }

    /// `{gateway_url}` of the gateway deployment.
    pub fn gateway_url(&self) -> String {
        format!("http://{}/gateway", self.addr)
    }

    /// Root URL of the admin paths.
    pub fn root_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn endpoint_toml(&self) -> String {
        format!(
            "endpoint = {{ base_url = \"{}\", gateway_url = \"{}\" }}\n",
            self.base_url(),
            self.gateway_url()
        )
    }

    /// A library client of the demo group against this sandbox.
    pub fn client(&self) -> Client {
        let config = ClientConfig::new(self.base_url(), self.gateway_url(), ApiKey::new(DEMO_KEY), DEMO_GROUP);
        Client::new(config).expect("client builds")
    }

    pub fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    }

    pub fn ledger(&self) -> Ledger {
        let client = self.client();
        Self::runtime()
            .block_on(client.sandbox_admin(self.root_url()).ledger())
            .expect("GET /_sandbox/ledger")
    }

    pub fn sent(&self) -> SentCounts {
        let client = self.client();
        Self::runtime()
            .block_on(client.sandbox_admin(self.root_url()).sent())
            .expect("GET /_sandbox/sent")
    }

    /// The billing class of each number the ledger charged (each number charged once).
    pub fn classes(&self) -> BTreeMap<String, BillingClass> {
        let ledger = self.ledger();
        let classes: BTreeMap<String, BillingClass> = ledger
            .entries
            .iter()
            .map(|entry| (entry.recipient.clone(), entry.billing_class))
            .collect();
        assert_eq!(
            classes.len(),
            ledger.entries.len(),
            "one charge per number: {:?}",
            ledger.entries
        );
        classes
    }
}

impl Drop for SandboxProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a run of the binary printed and how it exited.
pub struct Outcome {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    pub fn show(&self) -> String {
        format!(
            "exit {:?}\nstdout:\n{}\nstderr:\n{}",
            self.code, self.stdout, self.stderr
        )
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.show()))
    }

    pub fn expect_code(self, code: i32, what: &str) -> Outcome {
        assert_eq!(self.code, Some(code), "{what}: {}", self.show());
        self
    }
}

pub fn exec(mut command: Command, args: &[&str]) -> Outcome {
    let output = command.args(args).output().expect("msgbatch runs");
    Outcome {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

pub fn path_str(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

/// The binary with an empty environment plus PATH/HOME, the clock at `clock` and the demo key.
pub fn msgbatch_at(dir: &Path, clock: &str) -> Command {
    let mut command = Command::new(BIN);
    command
        .env_clear()
        .current_dir(dir)
        .stdin(Stdio::null())
        .env("MSGBATCH_CLOCK", clock)
        .env("MSGBATCH_API_KEY", DEMO_KEY);
    for key in ["PATH", "HOME"] {
        if let Some(value) = std::env::var_os(key) {
            command.env(key, value);
        }
    }
    command
}

/// Copies files of `samples/` (a campaign and what it reads) into `dir`.
pub fn copy_samples(dir: &Path, files: &[&str]) {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    for file in files {
        std::fs::copy(samples.join(file), dir.join(file)).unwrap_or_else(|e| panic!("copy samples/{file}: {e}"));
    }
}
