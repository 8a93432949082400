//! The live page over HTTP: during a slow run its progress bar, its stacked bar of answers and its server-drawn rate chart; after the end no control but the results link, the last errors kept across a reload and a console restart, and a control posted after the end answered with a way back.

mod common;

use common::console::{approved, between, location, slow, team, until_ended, uploaded, Browser, TestConsole, SMS};
use reqwest::StatusCode;
use std::time::{Duration, Instant};

/// Eight people; the sandbox answers ERROR to the number ending in 96.
fn people() -> String {
    let mut csv = String::from("phone,name\n");
    for i in 1..=8 {
        let last = if i == 5 { 96 } else { i };
        csv.push_str(&format!("010600000{last:02},고객{i}\n"));
    }
    csv
}

/// The slow campaign, approved and started by the approver; its id.
async fn started(team: &mut common::console::Team) -> String {
    let id = uploaded(&mut team.editor, &slow(SMS), &people()).await;
    approved(team, &id).await;
    common::console::started(team, &id, "72", "eight SMS at ₩9").await;
    id
}

/// The percentage the page's progress bar shows.
fn percent(page: &str) -> u64 {
    between(page, "data-live=\"percent\">", "%")
        .and_then(|percent| percent.parse().ok())
        .unwrap_or_else(|| panic!("a percentage: {page}"))
}

/// The live page, looked at until `ready` passes (within a minute); that page.
async fn live_until(browser: &mut Browser, id: &str, what: &str, ready: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (code, page) = browser.page(&format!("/campaigns/{id}/live")).await;
        assert_eq!(code, StatusCode::OK, "{page}");
        if ready(&page) {
            return page;
        }
        assert!(Instant::now() < deadline, "{what} within a minute: {page}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_shows_its_bar_answers_and_rate_then_its_results_and_errors_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let id = started(&mut team).await;

    // During the run: part way, with a drawn line of the rate.
    let page = live_until(&mut team.approver, &id, "a run part way with a rate line", |page| {
        let finished = page.contains("data-live=\"finished\">every");
        !finished && page.contains("<polyline class=\"rate-line\"") && (1..100).contains(&percent(page))
    })
    .await;
    assert!(
        page.contains("<progress id=\"live-progress\""),
        "an accessible bar: {page}"
    );
    let bar = between(&page, "<progress id=\"live-progress\"", ">").unwrap();
    let value: u64 = between(&bar, "value=\"", "\"").unwrap().parse().unwrap();
    assert!(bar.contains("max=\"8\"") && value > 0 && value < 8, "{bar}");
    assert!(
        page.contains("<svg class=\"stack\"") && page.contains("class=\"seg accepted\""),
        "{page}"
    );
    assert!(page.contains("class=\"seg pending\""), "recipients left: {page}");
    assert!(page.contains("<svg class=\"rate-chart\""), "{page}");
    assert!(
        page.contains("Messages per second over time: now"),
        "the chart is titled: {page}"
    );
    assert!(page.contains("id=\"live-controls\""), "controls while it runs: {page}");
    assert!(
        page.contains("<noscript><meta http-equiv=\"refresh\""),
        "it refreshes without JavaScript"
    );
    assert!(
        page.contains("id=\"live-end\" hidden"),
        "the results wait for the end: {page}"
    );

    assert_eq!(until_ended(&mut team.approver, &id).await, "done");

    // After the end: the results link, no control, no refresh; the error, with its status's label.
    let (_, page) = team.approver.page(&format!("/campaigns/{id}/live")).await;
    let ended = |page: &str, how: &str| {
        assert!(
            !page.contains(&format!("action=\"/campaigns/{id}/control\"")),
            "{how}: no control: {page}"
        );
        assert!(!page.contains("http-equiv=\"refresh\""), "{how}: no refresh: {page}");
        assert!(!page.contains("id=\"live-end\" hidden"), "{how}: {page}");
        assert!(
            page.contains(&format!("href=\"/campaigns/{id}/results\"")),
            "{how}: {page}"
        );
        assert!(page.contains("data-live=\"percent\">100%"), "{how}: {page}");
        assert!(
            page.contains("1 not accepted: ERROR"),
            "{how}: the error is kept: {page}"
        );
        assert!(
            page.contains("<polyline class=\"rate-line\""),
            "{how}: the rate is kept: {page}"
        );
        assert!(!page.contains("01060000096"), "{how}: no phone number");
    };
    ended(&page, "after the end");

    // A Stop from a page left open: nothing happens, and the person is led back.
    let response = team
        .approver
        .post(&format!("/campaigns/{id}/control"), &[("action", "stop")])
        .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let back = location(&response);
    assert_eq!(back, format!("/campaigns/{id}/live?ended=1"));
    let (code, page) = team.approver.page(&back).await;
    assert_eq!(code, StatusCode::OK);
    assert!(page.contains("The run had already ended"), "{page}");
    ended(&page, "after a late stop");

    // A restarted console still shows the errors and the rate, in Korean too.
    let cookie = team.approver.cookie.clone();
    team.console.stop().await;
    let console = TestConsole::start(&dir.path().join("workspace")).await;
    let mut approver = console.browser();
    approver.cookie = cookie;
    let (code, page) = approver.page(&format!("/campaigns/{id}/live")).await;
    assert_eq!(code, StatusCode::OK, "{page}");
    ended(&page, "after a restart");
    approver.language = Some("ko-KR".into());
    let (_, page) = approver.page(&format!("/campaigns/{id}/live")).await;
    assert!(page.contains("1건 미접수: ERROR"), "{page}");
    assert!(
        page.contains("결과 보기") && page.contains("모든 묶음이 응답을 받았습니다"),
        "{page}"
    );
    console.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_to_watch_and_a_control_before_any_run_lead_to_the_campaign() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let id = uploaded(&mut team.editor, &slow(SMS), &people()).await;
    approved(&mut team, &id).await;
    let response = team.approver.get(&format!("/campaigns/{id}/live")).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(location(&response), format!("/campaigns/{id}"));
    team.approver.page(&format!("/campaigns/{id}")).await;
    let response = team
        .approver
        .post(&format!("/campaigns/{id}/control"), &[("action", "pause")])
        .await;
    assert_eq!(location(&response), format!("/campaigns/{id}"));
    // An editor cannot press it at all.
    team.editor.page(&format!("/campaigns/{id}")).await;
    let response = team
        .editor
        .post(&format!("/campaigns/{id}/control"), &[("action", "stop")])
        .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_console_run_pauses_itself_when_failing_by_default_and_the_live_page_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    // Twelve people whose numbers the sandbox answers ERROR (those ending in 96); the settings
    // say nothing of pausing: the console's rule applies (20 % of the last 500 answered), here
    // with its window narrowed to 5 by the campaign.
    let mut csv = String::from("phone,name\n");
    for i in 0..12 {
        csv.push_str(&format!("0106100{i:02}96,고객{i}\n"));
    }
    let quiet = uploaded(&mut team.editor, SMS, &csv).await;
    let composed = std::fs::read_to_string(
        team.console
            .workspace
            .join("campaigns")
            .join(&quiet)
            .join("composed.toml"),
    )
    .unwrap();
    let composed: toml::Table = toml::from_str(&composed).unwrap();
    assert_eq!(
        composed["send"]["pause_when_failing"]
            .as_table()
            .map(|rule| (rule["percent"].as_integer(), rule["window"].as_integer())),
        Some((Some(20), Some(500))),
        "on by default in the console"
    );

    let settings = format!(
        "{SMS}\n[send]\nchunk_size = 1\nmessages_per_second = 20\npause_when_failing = {{ percent = 20, window = 5 }}\n"
    );
    let id = uploaded(&mut team.editor, &settings, &csv).await;
    approved(&mut team, &id).await;
    common::console::started(&mut team, &id, "108", "twelve SMS at ₩9").await;
    let page = live_until(&mut team.approver, &id, "the run paused by its failures", |page| {
        page.contains("data-live=\"paused_why\">The run paused itself")
    })
    .await;
    assert!(
        page.contains("of the last 5 answered recipients were not accepted (more than 20 %)"),
        "{page}"
    );
    assert!(
        page.contains("id=\"live-controls\""),
        "resume and stop are there: {page}"
    );
    let done = percent(&page);
    assert!(done < 100, "the rest waits: {page}");

    // A person stops it: it ends with the rest unsent.
    team.approver
        .post(&format!("/campaigns/{id}/control"), &[("action", "stop")])
        .await;
    assert_ne!(until_ended(&mut team.approver, &id).await, "done");
}
