//! The live page in a real browser (Debian's chromium over WebDriver, Korean, 1366×900): read twice during a slow run, its progress bar and its rate chart move without a reload (the run's Server-Sent Events), and at the end its controls give way to the results link; a screenshot of it lands in `MSGBATCH_SCREENSHOTS` when that is set.

mod common;

#[path = "common/webdriver.rs"]
mod webdriver;

use common::console::{approved, slow, team, uploaded, PASSWORD, SMS};
use fantoccini::Locator;
use std::time::Instant;
use webdriver::{driver, screenshots, Look, Session, DEADLINE, POLL};

/// What the page shows at one look: the percentage, the bar's value, the chart's points.
#[derive(Debug, PartialEq)]
struct Seen {
    percent: u64,
    value: f64,
    points: String,
}

async fn look(session: &Session) -> Option<Seen> {
    let percent = session
        .client
        .find(Locator::Css("[data-live=percent]"))
        .await
        .ok()?
        .text()
        .await
        .ok()?;
    // The bar's value as the browser holds it (the script sets the property, not the attribute).
    let value = session
        .client
        .execute(
            "var bar = document.getElementById('live-progress'); return bar ? bar.value : null;",
            vec![],
        )
        .await
        .ok()?
        .as_f64()?;
    let points = session
        .client
        .find(Locator::Css("svg.rate-chart polyline.rate-line"))
        .await
        .ok()?
        .attr("points")
        .await
        .ok()??;
    Some(Seen {
        percent: percent.trim_end_matches('%').parse().ok()?,
        value,
        points,
    })
}

/// Looks at the page until `ready` passes, within the deadline.
async fn look_until(session: &Session, what: &str, ready: impl Fn(&Seen) -> bool) -> Seen {
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(seen) = look(session).await {
            if ready(&seen) {
                return seen;
            }
        }
        if Instant::now() >= deadline {
            let page = session.client.source().await.unwrap_or_default();
            panic!("{what} within a minute: {page}");
        }
        tokio::time::sleep(POLL).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_pages_bar_and_chart_move_during_a_run() {
    let Some(driver) = driver().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (shots, _temporary) = screenshots();
    let mut team = team(dir.path()).await;
    let mut people = String::from("phone,name\n");
    for i in 1..=24 {
        people.push_str(&format!("010700000{i:02},고객{i}\n"));
    }
    let id = uploaded(
        &mut team.editor,
        &slow(&SMS.replace("monthly-news", "월간 소식")),
        &people,
    )
    .await;
    approved(&mut team, &id).await;

    // joon signs in in a Korean browser.
    let korean = Look {
        width: 1366,
        height: 900,
        lang: Some("ko-KR"),
    };
    let joon = Session::open_as(&driver, &team.console.base, korean).await;
    joon.goto("/signin").await;
    joon.fill("input[name=name]", "joon").await;
    joon.fill("input[name=password]", PASSWORD).await;
    joon.wait("form[action='/signin'] button[type=submit]")
        .await
        .click()
        .await
        .unwrap();
    joon.wait_path("signing in", |path| path != "/signin").await;

    common::console::started(&mut team, &id, "216", "24 SMS at ₩9").await;
    joon.goto(&format!("/campaigns/{id}/live")).await;
    // A mark on this page: a reload would lose it.
    joon.client
        .execute("window.liveMark = 'same page';", vec![])
        .await
        .unwrap();

    let first = look_until(&joon, "a run part way with a rate line", |seen| {
        (1..60).contains(&seen.percent) && seen.value > 0.0
    })
    .await;
    println!("first look: {first:?}");
    let second = look_until(&joon, "the bar and the chart move", |seen| {
        seen.percent > first.percent && seen.value > first.value && seen.points != first.points
    })
    .await;
    println!("second look: {second:?}");
    let mark = joon
        .client
        .execute("return window.liveMark || null;", vec![])
        .await
        .unwrap();
    assert_eq!(mark, serde_json::json!("same page"), "the page moved without a reload");
    assert!(joon.has("#live-controls button#pause").await, "controls while it runs");
    let text = joon.text().await;
    assert!(text.contains("진행률") && text.contains("시간별 초당 메시지"), "{text}");
    joon.screenshot(&shots, "live-ko.png").await;

    // The end: the controls give way to the results link, still without a reload.
    let deadline = Instant::now() + DEADLINE;
    loop {
        let shown = match joon.client.find(Locator::Css("#live-end")).await {
            Ok(end) => end.is_displayed().await.unwrap_or(false),
            Err(_) => false,
        };
        if shown && !joon.has("#live-controls").await {
            break;
        }
        assert!(Instant::now() < deadline, "the run ends within a minute");
        tokio::time::sleep(POLL).await;
    }
    let link = joon.wait("#live-end a.button").await;
    assert_eq!(link.text().await.unwrap(), "결과 보기");
    assert_eq!(
        link.attr("href").await.unwrap().as_deref(),
        Some(format!("/campaigns/{id}/results").as_str())
    );
    let last = look_until(&joon, "the bar full", |seen| seen.percent == 100).await;
    assert_eq!(last.value, 24.0);
    joon.screenshot(&shots, "live-ko-ended.png").await;
    joon.close().await;
}
