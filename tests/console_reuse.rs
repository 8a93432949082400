//! A campaign used again from the console: its results offer the recipients the service did not take as a list; "Retry failed" makes a new draft of the recipients the service did not take, from the campaign's own settings (its connection, not the run's composed endpoint and prices); "Copy" makes a new draft with its settings, text and mappings, without its files, check or approval.

mod common;

use common::console::{approved, between, campaign_id, location, team, until_ended, uploaded, SMS};
use reqwest::StatusCode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_failed_makes_a_draft_of_the_recipients_not_taken_that_checks() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    // The sandbox answers ERROR to a number ending in 96.
    let people = "phone,name\n01060000001,고객1\n01060000096,고객2\n01060000003,고객3\n";
    let id = uploaded(&mut team.editor, SMS, people).await;
    approved(&mut team, &id).await;
    common::console::started(&mut team, &id, "27", "three SMS at ₩9").await;
    until_ended(&mut team.approver, &id).await;
    common::console::run_status(&team.console.workspace.join("runs").join(&id)).await;

    // The results offer the list of the recipients not taken, for Korean Excel.
    let (_, results) = team.editor.page(&format!("/campaigns/{id}/results")).await;
    assert!(
        results.contains(&format!("/campaigns/{id}/not-accepted.csv")),
        "{results}"
    );
    let list = team
        .viewer
        .csv_for_excel(&format!("/campaigns/{id}/not-accepted.csv"))
        .await;
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 2, "a header and the one not taken: {list}");
    assert!(lines[1].starts_with("01060000096"), "{list}");

    team.editor.page(&format!("/campaigns/{id}/results")).await;
    let response = team.editor.post(&format!("/campaigns/{id}/retry"), &[]).await;
    assert_eq!(
        response.status(),
        StatusCode::SEE_OTHER,
        "{}",
        response.text().await.unwrap()
    );
    let draft = campaign_id(&location(&response));
    assert_ne!(draft, id);
    let settings = std::fs::read_to_string(
        team.console
            .workspace
            .join("campaigns")
            .join(&draft)
            .join("campaign.toml"),
    )
    .unwrap();
    assert!(
        settings.contains("connection = \"sandbox\"")
            && !settings.contains("endpoint")
            && !settings.contains("[prices]"),
        "{settings}"
    );
    team.editor.page(&format!("/campaigns/{draft}")).await;
    team.editor.post(&format!("/campaigns/{draft}/check"), &[]).await;
    let (_, check) = team.editor.page(&format!("/campaigns/{draft}/check")).await;
    assert!(check.contains("rows 1 = valid 1"), "only the one not taken: {check}");
    assert_eq!(
        between(&check, "<strong id=\"check-estimate\">", "</strong>").as_deref(),
        Some("₩9"),
        "{check}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_keeps_settings_text_and_mappings_without_files_check_or_approval() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let people = "phone,name\n01060000001,고객1\n";
    let id = uploaded(&mut team.editor, SMS, people).await;
    approved(&mut team, &id).await;

    // A viewer may not copy; an editor may.
    team.viewer.page(&format!("/campaigns/{id}")).await;
    let response = team.viewer.post(&format!("/campaigns/{id}/copy"), &[]).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let (_, page) = team.editor.page(&format!("/campaigns/{id}")).await;
    assert!(page.contains(&format!("action=\"/campaigns/{id}/copy\"")), "{page}");
    let response = team.editor.post(&format!("/campaigns/{id}/copy"), &[]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let copy = campaign_id(&location(&response));
    assert_ne!(copy, id);

    let (_, page) = team.editor.page(&format!("/campaigns/{copy}")).await;
    assert_eq!(between(&page, "<span class=\"state ", "\"").as_deref(), Some("draft"));
    assert!(
        page.contains("monthly-news (copy)") || page.contains("monthly-news (사본)"),
        "{page}"
    );
    let folder = team.console.workspace.join("campaigns").join(&copy);
    let settings = std::fs::read_to_string(folder.join("campaign.toml")).unwrap();
    assert!(
        settings.contains("이번 달 소식입니다") && settings.contains("name = \"name\""),
        "{settings}"
    );
    assert!(!folder.join("recipients.csv").exists(), "no file comes along");
    let record: msgbatch::console::campaigns::CampaignRecord = {
        team.console.stop().await;
        let store = msgbatch::console::store::Store::open(&dir.path().join("workspace").join("console.db")).unwrap();
        store.campaign(&copy).unwrap().unwrap()
    };
    assert!(record.recipients.is_none() && record.check.is_none() && record.approval.is_none());
}
