//! "Retry failed" in the console: a run with recipients the service did not take makes a new draft of just those, from the campaign's own settings (its connection, not the run's composed endpoint and prices), which checks and sends.

mod common;

use common::console::{approved, between, campaign_id, location, team, until_ended};
use reqwest::multipart::{Form, Part};
use reqwest::StatusCode;

const SMS: &str = r##"name = "monthly-news"
kind = "sms"
[message]
service = 3001
text = "#{이름}님, 이번 달 소식입니다."
callback_no = "0212345678"

[recipients]
path = "r.csv"
name = "name"
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_failed_makes_a_draft_of_the_recipients_not_taken_that_checks() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    // The sandbox answers ERROR to a number ending in 96.
    let people = "phone,name\n01060000001,고객1\n01060000096,고객2\n01060000003,고객3\n";
    team.editor.page("/campaigns/new").await;
    let form = Form::new()
        .text("csrf", team.editor.csrf.clone())
        .text("name", "monthly-news")
        .part("campaign_file", Part::text(SMS).file_name("campaign.toml"))
        .part("recipients", Part::text(people).file_name("people.csv"));
    let id = campaign_id(&location(&team.editor.post_multipart("/campaigns", form).await));
    approved(&mut team, &id).await;
    team.approver.page(&format!("/campaigns/{id}")).await;
    let response = team
        .approver
        .post(&format!("/campaigns/{id}/start"), &[("amount", "27")])
        .await;
    assert_eq!(location(&response), format!("/campaigns/{id}/live"), "three SMS at ₩9");
    until_ended(&mut team.approver, &id).await;
    common::console::run_status(&team.console.workspace.join("runs").join(&id)).await;

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
        between(&check, "<strong>", "</strong>").as_deref(),
        Some("₩9"),
        "{check}"
    );
}
