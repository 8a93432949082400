//! The workspace's month over HTTP on loopback: an administrator sets a monthly limit shared by every run; approving or starting a campaign whose estimate is over what is left is refused with both figures; a run that meets the limit (lowered while it sends) stops resumable saying so; the campaigns page shows the month; a restarted console rebuilds it from the runs' checkpoints.

mod common;

use common::console::{approved, between, team, until_ended, uploaded, Browser, TestConsole, SMS};
use reqwest::StatusCode;

/// `n` people the sandbox takes (SMS at ₩9 with the demo connection's prices).
fn people(n: usize, from: usize) -> String {
    let mut csv = String::from("phone,name\n");
    for i in from..from + n {
        csv.push_str(&format!("010620{i:05},고객{i}\n"));
    }
    csv
}

/// An administrator sets the month's limit (and its thresholds) on the month page.
async fn set_limit(admin: &mut Browser, limit: &str, thresholds: &str) {
    admin.page("/month").await;
    let response = admin
        .post("/month", &[("limit", limit), ("thresholds", thresholds)])
        .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "the limit is set");
}

/// The month's figures as the campaigns page shows them: limit, charged, reserved, left.
async fn month_on_the_list(browser: &mut Browser) -> [String; 4] {
    let (_, page) = browser.page("/campaigns").await;
    ["month-limit", "month-charged", "month-reserved", "month-left"]
        .map(|id| between(&page, &format!("id=\"{id}\">"), "</dd>").unwrap_or_else(|| panic!("{id}: {page}")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_months_limit_binds_every_run_refuses_what_cannot_fit_and_is_rebuilt_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;

    // Roles: only an administrator sets it.
    team.editor.page("/month").await;
    let response = team
        .editor
        .post("/month", &[("limit", "100"), ("thresholds", "")])
        .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    set_limit(&mut team.admin, "₩60", "50, 90").await;

    // Four SMS at ₩9: ₩36 of ₩60.
    let first = uploaded(&mut team.editor, SMS, &people(4, 0)).await;
    approved(&mut team, &first).await;
    common::console::started(&mut team, &first, "36", "four SMS at ₩9").await;
    assert_eq!(until_ended(&mut team.approver, &first).await, "done");
    assert_eq!(
        month_on_the_list(&mut team.viewer).await,
        ["₩60", "₩36", "₩0", "₩24"].map(String::from)
    );
    let (_, list) = team.viewer.page("/campaigns").await;
    assert!(list.contains("id=\"month-reached\""), "50 % reached: {list}");
    let (_, audit) = team.admin.page("/audit").await;
    assert!(audit.contains("50 %"), "the threshold told once in the log: {audit}");

    // Three more (₩27) do not fit in the ₩24 left: the approval is refused with both figures.
    let second = uploaded(&mut team.editor, SMS, &people(3, 100)).await;
    team.editor.page(&format!("/campaigns/{second}")).await;
    team.editor.post(&format!("/campaigns/{second}/check"), &[]).await;
    team.editor.post(&format!("/campaigns/{second}/submit"), &[]).await;
    team.approver.page(&format!("/campaigns/{second}")).await;
    let response = team.approver.post(&format!("/campaigns/{second}/approve"), &[]).await;
    assert_eq!(response.status(), StatusCode::CONFLICT);
    let refusal = response.text().await.unwrap();
    assert!(
        refusal.contains("the estimate, ₩27, is more than what is left of this month&#39;s limit: ₩24 of ₩60")
            || refusal.contains("the estimate, ₩27, is more than what is left of this month's limit: ₩24 of ₩60"),
        "{refusal}"
    );

    // Raised, it is approved; lowered again, the start is refused the same way.
    set_limit(&mut team.admin, "100", "50, 90").await;
    team.approver.page(&format!("/campaigns/{second}")).await;
    let response = team.approver.post(&format!("/campaigns/{second}/approve"), &[]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    set_limit(&mut team.admin, "50", "50, 90").await;
    team.approver.page(&format!("/campaigns/{second}")).await;
    let response = team
        .approver
        .post(&format!("/campaigns/{second}/start"), &[("amount", "27")])
        .await;
    assert_eq!(response.status(), StatusCode::CONFLICT, "₩27 over the ₩14 left");

    // A run that meets the limit while it sends: six SMS (₩54) start under ₩100; the limit is
    // lowered to ₩63 while they go, and the run stops resumable at it, never past it.
    set_limit(&mut team.admin, "100", "").await;
    let third = uploaded(&mut team.editor, &common::console::slow(SMS), &people(6, 200)).await;
    approved(&mut team, &third).await;
    common::console::started(&mut team, &third, "54", "six SMS at ₩9").await;
    set_limit(&mut team.admin, "63", "").await;
    let state = until_ended(&mut team.approver, &third).await;
    assert_eq!(state, "incomplete", "stopped by the month's limit, resumable");
    let (_, page) = team.approver.page(&format!("/campaigns/{third}/live")).await;
    assert!(
        page.contains("the month&#39;s limit reached") || page.contains("the month's limit reached"),
        "{page}"
    );
    let before = month_on_the_list(&mut team.viewer).await;
    assert_eq!(before[0], "₩63");
    let charged: i64 = before[1].trim_start_matches('₩').replace(',', "").parse().unwrap();
    assert!(charged <= 63, "never past the limit: {before:?}");
    assert_eq!(charged % 9, 0, "whole SMS only: {before:?}");

    // Restarted, the console rebuilds the month from the runs' checkpoints: the same figures.
    let cookie = team.viewer.cookie.clone();
    team.console.stop().await;
    let console = TestConsole::start(&dir.path().join("workspace")).await;
    let mut viewer = console.browser();
    viewer.cookie = cookie;
    assert_eq!(month_on_the_list(&mut viewer).await, before, "rebuilt equal");
}
