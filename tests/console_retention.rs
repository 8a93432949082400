//! The console's retention over HTTP on loopback: an administrator sets how many days personal data is kept; a run past it is purged — its uploads, rejected rows, test sends, previews and every report row's name and full number destroyed — while its figures, report (numbers masked), statement and audit stay; a run that may still send is kept whole.

mod common;

use common::console::{approved, between, slow, stop_from_live, team, until_ended, uploaded, Browser, SMS};
use reqwest::StatusCode;
use std::time::Duration;

/// Five people with names of their own, one of them twice, and one row that is not a number.
fn people() -> String {
    let mut csv = String::from("phone,name\n");
    for i in 1..=5 {
        csv.push_str(&format!("010-7400-00{i:02},보관고객{i}\n"));
    }
    csv.push_str("010-7400-0001,보관고객1\n02-123-4567,유선고객\n");
    csv
}

/// Other people, for the run that is kept.
fn others() -> String {
    let mut csv = String::from("phone,name\n");
    for i in 1..=5 {
        csv.push_str(&format!("010-7500-00{i:02},대기고객{i}\n"));
    }
    csv
}

/// The texts no file may hold once purged: each number as the plan reads it and as people
/// write it, and each name.
fn personal_texts() -> Vec<String> {
    let mut texts = vec!["유선고객".to_string()];
    for i in 1..=5 {
        texts.push(format!("0107400{i:04}"));
        texts.push(format!("7400-00{i:02}"));
        texts.push(format!("보관고객{i}"));
    }
    texts
}

async fn set_retention(admin: &mut Browser, days: &str) {
    admin.page("/month").await;
    let response = admin.post("/month/retention", &[("days", days)]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "the retention is set");
}

/// The campaign page once the sweep purged it.
async fn until_purged(browser: &mut Browser, id: &str) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (_, page) = browser.page(&format!("/campaigns/{id}")).await;
        if page.contains("id=\"purged\"") {
            return page;
        }
        assert!(std::time::Instant::now() < deadline, "purged within 30 s: {page}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_past_the_retention_keeps_its_totals_and_nothing_personal() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let workspace = team.console.workspace.clone();

    // Only an administrator sets it.
    team.editor.page("/month").await;
    let response = team.editor.post("/month/retention", &[("days", "0")]).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);

    // A campaign with a test send, sent to its end.
    let id = uploaded(&mut team.editor, SMS, &people()).await;
    team.editor.page(&format!("/campaigns/{id}")).await;
    team.editor.post(&format!("/campaigns/{id}/check"), &[]).await;
    let response = team
        .editor
        .post(&format!("/campaigns/{id}/test-send"), &[("numbers", "010-7400-0003")])
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    approved(&mut team, &id).await;
    let (_, page) = team.approver.page(&format!("/campaigns/{id}")).await;
    let amount = between(&page, "id=\"start-estimate\">", "<").unwrap();
    team.approver
        .post(&format!("/campaigns/{id}/start"), &[("amount", &amount)])
        .await;
    assert_eq!(until_ended(&mut team.approver, &id).await, "done");

    // A second one stopped with rows left to send: it may still send, so it is never purged.
    let waiting = uploaded(&mut team.editor, &slow(SMS), &others()).await;
    approved(&mut team, &waiting).await;
    let (_, page) = team.approver.page(&format!("/campaigns/{waiting}")).await;
    let amount = between(&page, "id=\"start-estimate\">", "<").unwrap();
    team.approver
        .post(&format!("/campaigns/{waiting}/start"), &[("amount", &amount)])
        .await;
    stop_from_live(&mut team.approver, &waiting).await;
    assert_eq!(until_ended(&mut team.approver, &waiting).await, "stopped");

    let texts = personal_texts();
    assert!(
        !common::console::files_holding(&workspace, &texts).is_empty(),
        "names and numbers are kept until the retention is set"
    );
    let (_, results) = team.viewer.page(&format!("/campaigns/{id}/results")).await;
    let (_, statement_before) = team.viewer.page("/statement").await;

    set_retention(&mut team.admin, "0").await;
    let page = until_purged(&mut team.viewer, &id).await;
    assert!(page.contains("Personal data destroyed on"), "{page}");

    // Nothing personal is left of it anywhere in the workspace.
    assert_eq!(common::console::files_holding(&workspace, &texts), Vec::new());
    let folder: Vec<String> = std::fs::read_dir(workspace.join("campaigns").join(&id))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        folder
            .iter()
            .all(|name| name == "campaign.toml" || name == "composed.toml"),
        "{folder:?}"
    );

    // Its figures, report (numbers masked), statement and audit stay.
    let (_, results_after) = team.viewer.page(&format!("/campaigns/{id}/results")).await;
    let figures = |page: &str| between(page, "id=\"equation\">", "<");
    assert!(figures(&results).is_some(), "{results}");
    assert_eq!(figures(&results_after), figures(&results));
    let report = team
        .viewer
        .csv_for_excel(&format!("/campaigns/{id}/files/report.csv"))
        .await;
    assert!(
        report.contains("010-****-0002") && !report.contains("보관고객"),
        "{report}"
    );
    let (_, statement_after) = team.viewer.page("/statement").await;
    let total = |page: &str| between(page, "<table id=\"classes\">", "</table>");
    assert!(total(&statement_before).is_some(), "{statement_before}");
    assert_eq!(total(&statement_after), total(&statement_before));
    let (_, audit) = team.admin.page("/audit").await;
    assert!(
        audit.contains("personal data destroyed") || audit.contains("purged"),
        "{audit}"
    );

    // The run that may still send is whole and still resumes.
    let waiting_run = workspace.join("runs").join(&waiting);
    assert!(!waiting_run.join("purged").exists());
    let (_, page) = team.viewer.page(&format!("/campaigns/{waiting}")).await;
    assert!(!page.contains("id=\"purged\""), "{page}");
    team.console.stop().await;
}
