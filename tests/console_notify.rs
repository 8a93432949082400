//! Notifications from the console over loopback: an administrator adds an incoming webhook and an email channel (a local HTTP receiver and a local SMTP server started by the test); a campaign's approval request, approval, start and end reach each with the campaign, who, the figures and a link, never a full phone number; the delivery log says how each went; a receiver that never answers and one that answers 500 do not hold a run back.

mod common;

#[path = "common/receivers.rs"]
mod receivers;

use common::console::{approved, team, until_ended, uploaded, Browser, SMS};
use receivers::{Answer, Smtp, Webhook};
use reqwest::StatusCode;
use std::time::{Duration, Instant};

const PEOPLE: &str = "phone,name\n01063000001,고객1\n01063000002,고객2\n01063000003,고객3\n";

async fn add_webhook(admin: &mut Browser, url: &str, events: &[&str]) {
    admin.page("/notifications").await;
    let mut form = vec![("kind", "webhook"), ("url", url)];
    form.extend(events.iter().map(|event| ("event", *event)));
    let response = admin.post("/notifications", &form).await;
    assert_eq!(
        response.status(),
        StatusCode::SEE_OTHER,
        "{}",
        response.text().await.unwrap()
    );
}

/// Waits until `ready` holds of what arrived (a minute at most).
async fn arrived<T>(what: &str, look: impl Fn() -> T, ready: impl Fn(&T) -> bool) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let seen = look();
        if ready(&seen) {
            return seen;
        }
        assert!(Instant::now() < deadline, "{what} within a minute");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn has_full_number(text: &str) -> bool {
    text.as_bytes()
        .windows(11)
        .any(|window| window.starts_with(b"010") && window.iter().all(u8::is_ascii_digit))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_event_reaches_the_webhook_and_the_mail_with_a_link_and_no_number() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let hook = Webhook::start(Answer::Ok).await;
    let smtp = Smtp::start().await;

    // Only an administrator sets channels.
    team.editor.page("/campaigns").await;
    let response = team
        .editor
        .post(
            "/notifications",
            &[("kind", "webhook"), ("url", &hook.url), ("event", "approved")],
        )
        .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    add_webhook(
        &mut team.admin,
        &hook.url,
        &["approval_requested", "approved", "started", "finished"],
    )
    .await;
    team.admin.page("/notifications").await;
    let port = smtp.port.to_string();
    let response = team
        .admin
        .post(
            "/notifications",
            &[
                ("kind", "email"),
                ("host", "127.0.0.1"),
                ("port", &port),
                ("security", "plain"),
                ("from", "msgbatch@example.com"),
                ("to", "marketing@example.com, lead@example.com"),
                ("event", "approval_requested"),
                ("event", "finished"),
            ],
        )
        .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);

    let id = uploaded(&mut team.editor, SMS, PEOPLE).await;
    approved(&mut team, &id).await;
    common::console::started(&mut team, &id, "27", "three SMS at ₩9").await;
    assert_eq!(until_ended(&mut team.approver, &id).await, "done");

    let link = format!("/campaigns/{id}");
    let texts = arrived("four notices at the webhook", || hook.texts(), |texts| texts.len() >= 4).await;
    for (text, event) in texts
        .iter()
        .zip(["approval requested", "approved", "started", "run ended"])
    {
        assert!(text.contains("monthly-news") && text.contains(event), "{event}: {text}");
        assert!(
            text.contains("http://") && text.ends_with(&link),
            "a link to the campaign: {text}"
        );
        assert!(!has_full_number(text), "no full number: {text}");
    }
    assert!(
        texts[0].contains("(mina)") && texts[1].contains("(joon)"),
        "who: {texts:?}"
    );
    assert!(texts[3].contains("3 sent, ₩27 charged"), "the figures: {}", texts[3]);

    let mails = arrived(
        "two mails",
        || smtp.mails.lock().unwrap().clone(),
        |mails| mails.len() >= 2,
    )
    .await;
    assert_eq!(mails[0].from, "msgbatch@example.com");
    assert_eq!(mails[0].to, ["marketing@example.com", "lead@example.com"]);
    assert!(mails.iter().any(|mail| mail
        .data
        .contains("Subject: [msgbatch] monthly-news: approval requested")));
    assert!(mails
        .iter()
        .any(|mail| mail.data.contains("Subject: [msgbatch] monthly-news: finished")));
    assert!(mails.iter().all(|mail| !has_full_number(&mail.data)));

    // The log lists each delivery.
    let (_, page) = team.admin.page("/notifications").await;
    let log = common::console::between(&page, "<table id=\"deliveries\">", "</table>").unwrap();
    assert!(log.matches("delivered").count() >= 6, "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receivers_that_hang_or_fail_do_not_hold_a_run_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let hanging = Webhook::start(Answer::Hang).await;
    let failing = Webhook::start(Answer::ServerError).await;
    let every = ["approval_requested", "approved", "started", "paused", "finished"];
    add_webhook(&mut team.admin, &hanging.url, &every).await;
    add_webhook(&mut team.admin, &failing.url, &every).await;

    let id = uploaded(&mut team.editor, SMS, PEOPLE).await;
    approved(&mut team, &id).await;
    common::console::started(&mut team, &id, "27", "three SMS at ₩9").await;
    assert_eq!(until_ended(&mut team.approver, &id).await, "done", "the run ends");
    // Meanwhile the hanging receiver holds its requests open and the failing one is tried again.
    assert!(
        !hanging.received.lock().unwrap().is_empty(),
        "the hanging receiver was reached"
    );
    arrived(
        "a second attempt at the failing receiver",
        || failing.texts(),
        |texts| texts.iter().enumerate().any(|(at, text)| texts[..at].contains(text)),
    )
    .await;
}
