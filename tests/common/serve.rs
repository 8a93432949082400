//! `msgbatch serve` as a process for the tests: started on a free port with the key in its environment, its address and first sign-in link read from what it prints; the workspace's connection to a sandbox process.

use super::child::{Running, API_KEY, BIN, GROUP};
use std::path::Path;
use std::process::Command;

/// The console process, its address, its first sign-in link (a new workspace) and what it said.
pub fn serve(workspace: &Path) -> (Running, String, Option<String>, String) {
    serve_with(workspace, &[])
}

/// [`serve`] with more arguments.
pub fn serve_with(workspace: &Path, more: &[&str]) -> (Running, String, Option<String>, String) {
    let mut command = Command::new(BIN);
    command
        .env_clear()
        .env("MSGBATCH_API_KEY", API_KEY)
        .args([
            "serve",
            "--allow-self-approval",
            "--listen",
            "127.0.0.1:0",
            "--workspace",
        ])
        .arg(workspace)
        .args(more);
    let mut process = Running::spawn(command, "msgbatch serve");
    let line = process
        .stdout
        .wait_for("`msgbatch console:`", |line| line.starts_with("msgbatch console: "));
    let base = line["msgbatch console: ".len()..]
        .trim()
        .replace("localhost", "127.0.0.1");
    let said = process
        .stdout
        .wait_for("`Ctrl-C stops it.`", |line| line == "Ctrl-C stops it.");
    let said = format!("{}\n{said}", process_lines(&process));
    let link = said
        .lines()
        .find_map(|line| line.strip_prefix("first sign-in (user admin, works once, for 24 hours): "))
        .map(|link| link.replace("localhost", "127.0.0.1"));
    (process, base, link, said)
}

/// What the process printed so far.
pub fn process_lines(process: &Running) -> String {
    process.stdout.seen.join("\n")
}

/// The workspace's connection to the sandbox process, written beside console.db as an admin with
/// shell access does; the key comes from the server's environment.
pub fn write_connection(workspace: &Path, root: &str) {
    std::fs::create_dir_all(workspace).unwrap();
    std::fs::write(
        workspace.join("connections.toml"),
        format!(
            r##"[process]
endpoint = {{ base_url = "{root}/standard", gateway_url = "{root}/gateway" }}

[process.credentials]
group_id = "{GROUP}"

[process.prices]
alimtalk = 8
"##
        ),
    )
    .unwrap();
}
