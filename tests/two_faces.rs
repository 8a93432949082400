//! One rule, two faces: each rule the CLI and the console once wrote each in its own way, given the same input through both (the binary, and the console over HTTP), answering alike: a start time in Korean wall time, a run directory in use, how a run ended, typed amounts, the estimate against the budget.

mod common;

use common::console::{approved, between, campaign_id, location, run_status, team, Browser, Team};
use common::process::{exec, Outcome};
use reqwest::multipart::{Form, Part};
use reqwest::StatusCode;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_msgbatch");

/// The console names the workspace's connection; a CLI campaign file holds the same settings itself.
const CONNECTION: &str = "connection = \"sandbox\"";

/// A notification to six people through the workspace's embedded sandbox, `send` its `[send]` table.
fn notification(send: &str) -> String {
    format!(
        r##"name = "order-shipped"
kind = "alimtalk"
{CONNECTION}

[message]
service = 1001
template = "ORDER_SHIPPED"
text = "#{{이름}}님, 주문하신 상품이 발송되었습니다. 송장번호: #{{VAR1}}"
callback_no = "0212345678"

[recipients]
path = "r.csv"
name = "name"
variables = {{ VAR1 = "order" }}
{send}"##
    )
}

/// An SMS to the six from a sender number the sandbox's group never registered: the service
/// refuses the chunk, and the run fails while it sends.
fn unregistered_sender() -> String {
    format!(
        r##"name = "monthly-news"
kind = "sms"
{CONNECTION}

[message]
service = 3001
text = "#{{이름}}님, 이번 달 소식입니다."
callback_no = "0299999999"

[recipients]
path = "r.csv"
name = "name"
"##
    )
}

/// The console campaign as a CLI campaign file: the embedded sandbox and `prices` written in it.
fn for_cli(campaign: &str, prices: &str) -> String {
    format!(
        "{}\n[prices]\n{prices}",
        campaign.replace(CONNECTION, "endpoint = \"sandbox\"")
    )
}

/// The workspace's connection `sandbox` with these prices, set up before the console starts.
fn priced_workspace(prices: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::console::write_connections(
        &dir.path().join("workspace"),
        &format!("[sandbox]\nendpoint = \"sandbox\"\n\n[sandbox.prices]\n{prices}"),
    );
    dir
}

const DEMO_PRICES: &str = "alimtalk = 8\nsms = 9\n";
const DEAR_PRICES: &str = "alimtalk = 300\n";

/// Six people, 010-4000-0001 to 0006, with an order number each.
fn people_csv() -> String {
    let mut csv = String::from("phone,name,order\n");
    for i in 1..=6 {
        csv.push_str(&format!("0104000000{i},고객{i},A-{i}\n"));
    }
    csv
}

/// A start time in Korean wall time, as a person writes it, safely in the future:
/// `2026-12-01 10:00` while that is a day ahead, else 10:00 tomorrow in Korea.
fn wall_time_ahead() -> String {
    let kst = chrono::FixedOffset::east_opt(9 * 3600).unwrap();
    let now = chrono::Utc::now().with_timezone(&kst);
    let written = "2026-12-01 10:00";
    let that = chrono::NaiveDateTime::parse_from_str(written, "%Y-%m-%d %H:%M").unwrap();
    if that > now.naive_local() + chrono::Duration::days(1) {
        return written.to_string();
    }
    let tomorrow = now.date_naive() + chrono::Duration::days(1);
    format!("{} 10:00", tomorrow.format("%Y-%m-%d"))
}

/// A folder with the campaign and its six people, for the binary.
fn cli_folder(campaign: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("campaign.toml"), campaign).unwrap();
    std::fs::write(dir.path().join("r.csv"), people_csv()).unwrap();
    dir
}

/// The binary in `dir` with an empty environment and the real clock.
fn msgbatch(dir: &Path) -> Command {
    let mut command = Command::new(BIN);
    command.env_clear().current_dir(dir).stdin(Stdio::null());
    for key in ["PATH", "HOME"] {
        if let Some(value) = std::env::var_os(key) {
            command.env(key, value);
        }
    }
    command
}

/// An editor's new campaign, uploaded with the six people; its id.
async fn upload(editor: &mut Browser, campaign: &str) -> String {
    editor.page("/campaigns/new").await;
    let form = Form::new()
        .text("csrf", editor.csrf.clone())
        .text("name", "two-faces")
        .part(
            "campaign_file",
            Part::text(campaign.to_string()).file_name("campaign.toml"),
        )
        .part("recipients", Part::text(people_csv()).file_name("people.csv"));
    let response = editor.post_multipart("/campaigns", form).await;
    let status = response.status();
    let made = location(&response);
    assert_eq!(
        status,
        StatusCode::SEE_OTHER,
        "the upload makes a campaign: {}",
        response.text().await.unwrap_or_default()
    );
    campaign_id(&made)
}

/// The campaign's state as its page shows it.
async fn state_of(browser: &mut Browser, id: &str) -> String {
    let (_, page) = browser.page(&format!("/campaigns/{id}")).await;
    between(&page, "<span class=\"state ", "\"").unwrap_or_default()
}

/// Waits until the campaign's run has ended; its state.
async fn until_run_ended(browser: &mut Browser, id: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let state = state_of(browser, id).await;
        if ["done", "stopped", "incomplete", "failed", "approved", "interrupted"].contains(&state.as_str()) {
            return state;
        }
        assert!(Instant::now() < deadline, "the run ends within a minute: {state}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The approver presses Start with `amount` typed and, when given, a start time.
async fn press_start(team: &mut Team, id: &str, amount: &str, start_at: &str) -> reqwest::Response {
    team.approver.page(&format!("/campaigns/{id}")).await;
    team.approver
        .post(
            &format!("/campaigns/{id}/start"),
            &[("amount", amount), ("start_at", start_at)],
        )
        .await
}

/// `msgbatch run` in the background, its output into files; the process and the folder's paths.
fn spawn_run(dir: &Path, args: &[&str]) -> std::process::Child {
    let mut command = msgbatch(dir);
    command
        .args(args)
        .stdout(std::fs::File::create(dir.join("run.out")).unwrap())
        .stderr(std::fs::File::create(dir.join("run.err")).unwrap());
    command.spawn().expect("msgbatch run starts")
}

/// `msgbatch stop RUN_DIR` once the run says it waits for its start (its countdown on stderr),
/// tried until the running process takes it.
fn stop_when_running(dir: &Path, run_dir: &str, run: &mut std::process::Child) -> Outcome {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let said = std::fs::read_to_string(dir.join("run.err")).unwrap_or_default();
        if said.contains("waiting to start at") {
            break;
        }
        if let Some(status) = run.try_wait().unwrap() {
            panic!("the run ended before its start ({status}): {said}");
        }
        assert!(Instant::now() < deadline, "the run waits for its start: {said}");
        std::thread::sleep(Duration::from_millis(50));
    }
    loop {
        let stop = exec(msgbatch(dir), &["stop", run_dir]);
        if stop.code == Some(0) {
            return stop;
        }
        assert!(
            Instant::now() < deadline,
            "the run is taken by its process: {}",
            stop.show()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn wait_with_deadline(child: &mut std::process::Child, dir: &Path) -> Option<i32> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "the run did not end after its stop: {}",
                std::fs::read_to_string(dir.join("run.err")).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_korean_wall_time_schedules_a_start_in_both_faces_and_a_stop_leaves_it_stopped() {
    let start_at = wall_time_ahead();

    // The CLI: scheduled, waiting, then stopped from another terminal: exit 3.
    let dir = cli_folder(&for_cli(&notification(""), DEMO_PRICES));
    let mut run = spawn_run(
        dir.path(),
        &["run", "campaign.toml", "--out", "run", "--start-at", &start_at],
    );
    stop_when_running(dir.path(), "run", &mut run);
    let code = tokio::task::block_in_place(|| wait_with_deadline(&mut run, dir.path()));
    let stderr = std::fs::read_to_string(dir.path().join("run.err")).unwrap();
    assert_eq!(code, Some(3), "a stopped run exits 3: {stderr}");

    // The console: the same words in the start form are a scheduled start, and its stop is `stopped`.
    let workspace = priced_workspace(DEMO_PRICES);
    let mut team = team(workspace.path()).await;
    let id = upload(&mut team.editor, &notification("")).await;
    approved(&mut team, &id).await;
    let response = press_start(&mut team, &id, "₩48", &start_at).await;
    let status = response.status();
    assert_eq!(
        location(&response),
        format!("/campaigns/{id}/live"),
        "{start_at:?} starts as `run --start-at` takes it: {status} {}",
        response.text().await.unwrap_or_default()
    );
    let (_, campaign) = team.approver.page(&format!("/campaigns/{id}")).await;
    let expected = chrono::NaiveDateTime::parse_from_str(&start_at, "%Y-%m-%d %H:%M").unwrap();
    assert!(
        campaign.contains(&format!("{} KST", expected.format("%Y-%m-%d %H:%M"))),
        "scheduled in Korean time: {campaign}"
    );
    common::console::stop_from_live(&mut team.approver, &id).await;
    assert_eq!(until_run_ended(&mut team.approver, &id).await, "stopped");

    // A time already past is refused by both, before anything is recorded.
    let past = "2020-01-01 10:00";
    let refused = exec(
        msgbatch(dir.path()),
        &["run", "campaign.toml", "--out", "past", "--start-at", past],
    );
    assert_eq!(refused.code, Some(2), "{}", refused.show());
    assert!(refused.stderr.contains("in the past"), "{}", refused.show());
    let id = upload(&mut team.editor, &notification("")).await;
    approved(&mut team, &id).await;
    let response = press_start(&mut team, &id, "₩48", past).await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(response.text().await.unwrap().contains("in the past"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_directory_held_by_another_process_is_busy_in_both_faces_not_an_internal_error() {
    let workspace = priced_workspace(DEMO_PRICES);
    let mut team = team(workspace.path()).await;
    let id = upload(&mut team.editor, &notification("")).await;
    approved(&mut team, &id).await;
    let response = press_start(&mut team, &id, "48", "").await;
    assert_eq!(location(&response), format!("/campaigns/{id}/live"));
    assert_eq!(until_run_ended(&mut team.approver, &id).await, "done");
    let run_dir = team.console.workspace.join("runs").join(&id);
    // The console writes the report once the run has ended; then the run is free to hold.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !run_dir.join("report.csv").exists() {
        assert!(Instant::now() < deadline, "the report is written");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    run_status(&run_dir).await;
    let held = loop {
        match msgbatch::engine::checkpoint::Checkpoint::open(&run_dir.join("checkpoint"), false) {
            Ok(checkpoint) => break checkpoint,
            Err(error) => {
                assert!(Instant::now() < deadline, "the run is let go: {error}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };

    // The CLI: refused to start (exit 2), saying the run is in use.
    let report = exec(msgbatch(workspace.path()), &["report", run_dir.to_str().unwrap()]);
    assert_eq!(report.code, Some(2), "{}", report.show());
    assert!(report.stderr.contains("in use"), "{}", report.show());

    // The console: a conflict to try again, not an internal error with an id.
    team.editor.page(&format!("/campaigns/{id}/results")).await;
    let response = team.editor.post(&format!("/campaigns/{id}/retry"), &[]).await;
    let status = response.status();
    let page = response.text().await.unwrap();
    assert_eq!(status, StatusCode::CONFLICT, "{page}");
    assert!(page.contains("in use") && page.contains("try again"), "{page}");
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_the_service_refuses_fails_in_both_faces() {
    // The CLI: exit 1, failed while running.
    let dir = cli_folder(&for_cli(&unregistered_sender(), DEMO_PRICES));
    let run = tokio::task::block_in_place(|| exec(msgbatch(dir.path()), &["run", "campaign.toml", "--out", "run"]));
    assert_eq!(run.code, Some(1), "the service refused the chunk: {}", run.show());

    // The console: `failed`, not `incomplete`.
    let workspace = priced_workspace(DEMO_PRICES);
    let mut team = team(workspace.path()).await;
    let id = upload(&mut team.editor, &unregistered_sender()).await;
    approved(&mut team, &id).await;
    let response = press_start(&mut team, &id, "54", "").await;
    assert_eq!(location(&response), format!("/campaigns/{id}/live"));
    assert_eq!(until_run_ended(&mut team.approver, &id).await, "failed");
    // The refused chunk's recipients are still to send: the run is not complete.
    let status = run_status(&team.console.workspace.join("runs").join(&id)).await;
    assert!(!status.complete, "{}", status.equation());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_amounts_read_alike_in_both_faces() {
    let forms = ["₩1,234", "1,234원", "1_234"];
    // One reading, called by both faces.
    for typed in forms {
        assert_eq!(msgbatch::engine::rules::typed_amount(typed), Some(1234), "{typed}");
    }

    // The CLI's `--budget`: ₩1,234 whichever way it is typed, weighed against ₩1,800.
    let dir = cli_folder(&for_cli(&notification(""), DEAR_PRICES));
    for (n, typed) in forms.into_iter().enumerate() {
        let out = format!("run-{n}");
        let run = tokio::task::block_in_place(|| {
            exec(
                msgbatch(dir.path()),
                &["run", "campaign.toml", "--out", &out, "--budget", typed],
            )
        });
        assert_eq!(run.code, Some(2), "{}", run.show());
        assert!(
            run.stderr.contains("the estimate ₩1,800 is over the budget ₩1,234"),
            "{typed}: {}",
            run.show()
        );
    }

    // The console's start form: ₩1,800 typed the same ways is the estimate.
    let workspace = priced_workspace(DEAR_PRICES);
    let mut team = team(workspace.path()).await;
    let id = upload(&mut team.editor, &notification("")).await;
    approved(&mut team, &id).await;
    for wrong in ["₩1,799", "1,801원", "1_8OO"] {
        let response = press_start(&mut team, &id, wrong, "").await;
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY, "{wrong}");
    }
    let response = press_start(&mut team, &id, "1_800원", "").await;
    assert_eq!(location(&response), format!("/campaigns/{id}/live"));
    assert_eq!(until_run_ended(&mut team.approver, &id).await, "done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_estimate_over_the_budget_is_refused_by_both_faces_with_the_same_figures() {
    let campaign = notification("\n[send]\nbudget = 1234\n");

    // The CLI: refused to start, naming both amounts.
    let dir = cli_folder(&for_cli(&campaign, DEAR_PRICES));
    let run = tokio::task::block_in_place(|| exec(msgbatch(dir.path()), &["run", "campaign.toml", "--out", "run"]));
    assert_eq!(run.code, Some(2), "{}", run.show());
    assert!(
        run.stderr.contains("the estimate ₩1,800 is over the budget ₩1,234"),
        "{}",
        run.show()
    );

    // The console: the check does not pass, shows the same two amounts, and it cannot be submitted.
    let workspace = priced_workspace(DEAR_PRICES);
    let mut team = team(workspace.path()).await;
    let id = upload(&mut team.editor, &campaign).await;
    team.editor.page(&format!("/campaigns/{id}")).await;
    let response = team.editor.post(&format!("/campaigns/{id}/check"), &[]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let (_, check) = team.editor.page(&format!("/campaigns/{id}/check")).await;
    assert!(check.contains("₩1,800") && check.contains("₩1,234"), "{check}");
    assert_eq!(state_of(&mut team.editor, &id).await, "draft");
    let response = team.editor.post(&format!("/campaigns/{id}/submit"), &[]).await;
    assert_eq!(response.status(), StatusCode::CONFLICT);
}
