//! `msgbatch serve` as a process for the tests: started on a free port with the key in its environment, its address and first sign-in link read from what it prints; the workspace's connection to a sandbox process.

use super::child::{Running, Sandbox, API_KEY, BIN, GROUP};
use super::console::{between, campaign_id, location, Browser};
use reqwest::multipart::{Form, Part};
use reqwest::StatusCode;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// The console process, its address, its first sign-in link (a new workspace) and what it said.
pub fn serve(workspace: &Path) -> (Running, String, Option<String>, String) {
    serve_with(workspace, &["--allow-self-approval"])
}

/// `msgbatch serve` with these arguments (two people approve, unless they allow self-approval).
pub fn serve_with(workspace: &Path, more: &[&str]) -> (Running, String, Option<String>, String) {
    let mut command = Command::new(BIN);
    command
        .env_clear()
        .env("MSGBATCH_API_KEY", API_KEY)
        .args(["serve", "--listen", "127.0.0.1:0", "--workspace"])
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

pub const RECIPIENTS: usize = 120;

/// The order notification through the workspace's connection to the sandbox process, at the
/// service's pace.
pub fn order_campaign() -> String {
    super::console::NOTIFICATION
        .replacen(
            "kind = \"alimtalk\"\n",
            "kind = \"alimtalk\"\nconnection = \"process\"\n",
            1,
        )
        .replace("VAR1 = \"order\"", "VAR1 = \"order_no\"")
}

/// [`order_campaign`] slowed down to be watched: four a request, 20 a second.
pub fn campaign_toml() -> String {
    format!(
        "{}\n[send]\nchunk_size = 4\nconcurrency = 2\nmessages_per_second = 20\n",
        order_campaign().replace("name = \"order-shipped\"", "name = \"slow\"")
    )
}

/// `n` people with an order number each.
pub fn orders(n: usize) -> String {
    let mut csv = String::from("phone,name,order_no\n");
    for i in 0..n {
        csv.push_str(&format!("010{:08},고객{i},A-{i}\n", 40_000_000 + i));
    }
    csv
}

pub fn recipients() -> String {
    orders(RECIPIENTS)
}

/// Signs in through the first link, then makes, checks, approves and starts the slow campaign.
pub fn start_slow_campaign(runtime: &tokio::runtime::Runtime, base: &str, link: Option<String>) -> (Browser, String) {
    let mut admin = Browser::new(base);
    let id = runtime.block_on(async {
        admin
            .welcome(&link.expect("a new workspace prints a sign-in link"))
            .await;
        admin.page("/campaigns/new").await;
        let form = Form::new()
            .text("csrf", admin.csrf.clone())
            .text("name", "slow")
            .part("campaign_file", Part::text(campaign_toml()).file_name("c.toml"))
            .part("recipients", Part::text(recipients()).file_name("list.csv"));
        let response = admin.post_multipart("/campaigns", form).await;
        let id = campaign_id(&location(&response));
        admin.page(&format!("/campaigns/{id}")).await;
        admin.post(&format!("/campaigns/{id}/check"), &[]).await;
        admin.post(&format!("/campaigns/{id}/submit"), &[]).await;
        let response = admin.post(&format!("/campaigns/{id}/approve"), &[]).await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "self-approval was allowed");
        let amount = (RECIPIENTS * 8).to_string();
        let response = admin
            .post(&format!("/campaigns/{id}/start"), &[("amount", &amount)])
            .await;
        assert_eq!(location(&response), format!("/campaigns/{id}/live"));
        id
    });
    (admin, id)
}

/// Waits until the sandbox has taken `count` messages.
pub fn until_sent(sandbox: &Sandbox, count: u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while sandbox.sent().total < count {
        assert!(Instant::now() < deadline, "the run sends");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for the campaign's run to end; its state.
pub async fn until_ended(browser: &mut Browser, id: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, page) = browser.page(&format!("/campaigns/{id}")).await;
        let state = between(&page, "<span class=\"state ", "\"").unwrap_or_default();
        if state == "done" || state == "incomplete" {
            return state;
        }
        assert!(Instant::now() < deadline, "the resumed run ends: {state}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A console process sending the slow campaign to a sandbox process, 20 messages in.
pub struct Sending {
    pub dir: tempfile::TempDir,
    pub workspace: std::path::PathBuf,
    pub sandbox: Sandbox,
    pub runtime: tokio::runtime::Runtime,
    pub process: Running,
    pub base: String,
    pub admin: Browser,
    pub id: String,
}

pub fn sending() -> Sending {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    let sandbox = Sandbox::start(None);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    write_connection(&workspace, &sandbox.root_url());
    let (process, base, link, _) = serve(&workspace);
    let (admin, id) = start_slow_campaign(&runtime, &base, link);
    until_sent(&sandbox, 20);
    Sending {
        dir,
        workspace,
        sandbox,
        runtime,
        process,
        base,
        admin,
        id,
    }
}
