//! A scheduled start entered as a person enters it, in a real Korean browser (Debian's chromium over WebDriver): the approver types the amount and a date and time into the start form's date-time field (Seoul wall time, no offset to type), presses Start, and the campaign's live page says it waits until that time in KST; nothing is sent before it.

mod common;

#[path = "common/webdriver.rs"]
mod webdriver;

use common::console::{approved, team, uploaded, NOTIFICATION, PASSWORD};
use webdriver::{driver, screenshots, Look, Session};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_types_a_start_time_in_seoul_time_and_the_run_waits_for_it() {
    let Some(driver) = driver().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (shots, _temporary) = screenshots();
    let mut team = team(dir.path()).await;
    let id = uploaded(
        &mut team.editor,
        NOTIFICATION,
        "phone,name,order\n010-2000-0001,김민수,A-1\n",
    )
    .await;
    approved(&mut team, &id).await;

    let session = Session::open_as(
        &driver,
        &team.console.base,
        Look {
            width: 1366,
            height: 900,
            lang: Some("ko"),
        },
    )
    .await;
    session.goto("/signin").await;
    session.fill("input[name=name]", "joon").await;
    session.fill("input[name=password]", PASSWORD).await;
    session
        .wait("form[action='/signin'] button[type=submit]")
        .await
        .click()
        .await
        .unwrap();
    session.wait("form.who").await;

    session.goto(&format!("/campaigns/{id}")).await;
    session.fill("input[name=amount]", "₩8").await;
    let field = session.wait("input[name=start_at]").await;
    session
        .script("document.querySelector('input[name=start_at]').focus();")
        .await;
    field.send_keys("11272030\u{E014}0930A").await.unwrap();
    // The field holds Seoul wall time as the browser sends it back; no offset was typed.
    let value = session
        .script("return document.querySelector('input[name=start_at]').value;")
        .await;
    assert_eq!(
        value.as_str(),
        Some("2030-11-27T09:30"),
        "typed as month, day, year, hour, minute, AM (this chromium's date-time field)"
    );
    session.screenshot(&shots, "ko-desktop-schedule.png").await;
    session
        .click("form[action$='/start'] button[type=submit]", "시작")
        .await;
    session
        .wait_path("a start goes to the live page", |path| path.ends_with("/live"))
        .await;
    let waiting = session
        .wait_text(
            "[data-live=waiting]",
            "the live page says until when it waits",
            |text| text.starts_with("20"),
        )
        .await;
    assert!(
        waiting.starts_with("2030-11-27 09:30:00 KST"),
        "Seoul time, as typed: {waiting}"
    );
    session.screenshot(&shots, "ko-desktop-scheduled-live.png").await;

    // Stopped while it waits: nothing reached the service before the time typed.
    common::console::stop_from_live(&mut team.approver, &id).await;
    let state = common::console::until_ended(&mut team.approver, &id).await;
    assert_ne!(state, "done", "nothing was sent before 2030");
    let status = common::console::run_status(&team.console.workspace.join("runs").join(&id)).await;
    assert_eq!(status.sent, 0, "nothing sent before the scheduled time");
    session.close().await;
}
