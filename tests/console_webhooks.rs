//! Webhooks over HTTP on loopback: three receivers registered on the webhooks page (one that answers at once, one that answers 500 twice to each message, one that hangs past the console's limit once), a campaign of 1,200 sent by API; each receiver checks every signature with its secret (Standard Webhooks), drops repeats by `webhook-id`, and ends with the same events: the state changes, progress every 25 %, and the run's results in three pages that hold each row once and equal the API's pages; the log's redelivery sends the same id again.

mod common;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use base64::Engine;
use common::api::{token_of, Api};
use common::console::{between, connect_to, html_unescape, team_with, SMS};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a receiver does with each message the first times it comes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mood {
    Answers,
    FailsTwice,
    HangsOnce,
}

#[derive(Default)]
struct Heard {
    /// Requests by `webhook-id`, repeats included.
    requests: BTreeMap<String, usize>,
    /// The first body of each id.
    messages: BTreeMap<String, Value>,
    bad_signatures: usize,
}

struct Receiver {
    mood: Mood,
    secret: Mutex<String>,
    heard: Mutex<Heard>,
}

/// HMAC-SHA256 over `id.timestamp.body` with the secret after `whsec_`, as the specification says.
fn signature_ok(secret: &str, headers: &HeaderMap, body: &str) -> bool {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok()).unwrap_or("");
    let Ok(key) = base64::engine::general_purpose::STANDARD.decode(secret.trim_start_matches("whsec_")) else {
        return false;
    };
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key);
    let signed = format!("{}.{}.{body}", header("webhook-id"), header("webhook-timestamp"));
    header("webhook-signature").split(' ').any(|candidate| {
        candidate
            .strip_prefix("v1,")
            .and_then(|tag| base64::engine::general_purpose::STANDARD.decode(tag).ok())
            .is_some_and(|tag| ring::hmac::verify(&key, signed.as_bytes(), &tag).is_ok())
    })
}

async fn receive(State(receiver): State<Arc<Receiver>>, headers: HeaderMap, body: String) -> StatusCode {
    let id = headers
        .get("webhook-id")
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .to_string();
    let secret = receiver.secret.lock().unwrap().clone();
    let seen = {
        let mut heard = receiver.heard.lock().unwrap();
        if !signature_ok(&secret, &headers, &body) {
            heard.bad_signatures += 1;
            return StatusCode::UNAUTHORIZED;
        }
        let seen = {
            let count = heard.requests.entry(id.clone()).or_insert(0);
            *count += 1;
            *count
        };
        heard
            .messages
            .entry(id)
            .or_insert_with(|| serde_json::from_str(&body).unwrap());
        seen
    };
    match receiver.mood {
        Mood::FailsTwice if seen <= 2 => StatusCode::INTERNAL_SERVER_ERROR,
        Mood::HangsOnce if seen == 1 => {
            tokio::time::sleep(Duration::from_secs(5)).await;
            StatusCode::OK
        }
        _ => StatusCode::OK,
    }
}

async fn start_receiver(mood: Mood) -> (Arc<Receiver>, String) {
    let receiver = Arc::new(Receiver {
        mood,
        secret: Mutex::new(String::new()),
        heard: Mutex::new(Heard::default()),
    });
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(receive))
        .with_state(receiver.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://127.0.0.1:{}/hook", listener.local_addr().unwrap().port());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (receiver, url)
}

/// The events a receiver holds once repeats are dropped: type → bodies.
fn events(receiver: &Receiver) -> BTreeMap<String, Vec<Value>> {
    let heard = receiver.heard.lock().unwrap();
    let mut events: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for body in heard.messages.values() {
        events
            .entry(body["type"].as_str().unwrap().to_string())
            .or_default()
            .push(body["data"].clone());
    }
    events
}

fn results_done(receiver: &Receiver) -> bool {
    events(receiver)
        .get("campaign.results")
        .is_some_and(|pages| pages.iter().any(|page| page["next_cursor"].is_null()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receivers_hear_each_event_once_signed_through_failures_and_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team_with(dir.path(), |options| {
        options.webhook_schedule = msgbatch::console::webhooks::Schedule {
            waits: vec![
                Duration::from_millis(100),
                Duration::from_millis(200),
                Duration::from_millis(400),
            ],
            answer_within: Duration::from_millis(700),
        };
    })
    .await;
    let sandbox = common::TestSandbox::demo().await;
    connect_to(&team.console.workspace, &sandbox, dir.path());
    let base = team.console.base.clone();

    let mut receivers = Vec::new();
    for mood in [Mood::Answers, Mood::FailsTwice, Mood::HangsOnce] {
        let (receiver, url) = start_receiver(mood).await;
        team.admin.page("/webhooks").await;
        let mut fields = vec![("url", url.as_str()), ("progress_every", "25")];
        for event in msgbatch::console::webhooks::EVENTS {
            fields.push(("event", event));
        }
        let response = team.admin.post("/webhooks", &fields).await;
        assert_eq!(response.status(), StatusCode::OK);
        let page = html_unescape(&response.text().await.unwrap());
        let secret = between(&page, "<code>whsec_", "</code>").expect("the secret is shown once");
        *receiver.secret.lock().unwrap() = format!("whsec_{secret}");
        receivers.push(receiver);
    }
    // Only an administrator registers one.
    team.editor.page("/campaigns").await;
    let refused = team
        .editor
        .post(
            "/webhooks",
            &[("url", "https://x.example/h"), ("event", "campaign.results")],
        )
        .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);

    let editor = Api::new(&base, Some(token_of(&mut team.editor, "crm").await)).await;
    let approver = Api::new(&base, Some(token_of(&mut team.approver, "ops").await)).await;
    let mut csv = String::from("phone,name\n");
    for i in 0..1200 {
        csv.push_str(&format!("0107600{i:04},고객{i}\n"));
    }
    let id = common::api::started(&editor, &approver, SMS, &csv).await;

    // Until every receiver has the last results page, and each message its last attempt (a
    // message whose first attempt still hangs has been heard once so far).
    let expected = |mood: Mood| match mood {
        Mood::Answers => 1,
        Mood::FailsTwice => 3,
        Mood::HangsOnce => 2,
    };
    let settled = |receiver: &Receiver| {
        results_done(receiver)
            && receiver
                .heard
                .lock()
                .unwrap()
                .requests
                .values()
                .all(|count| *count >= expected(receiver.mood))
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    while !receivers.iter().all(|receiver| settled(receiver)) {
        assert!(
            std::time::Instant::now() < deadline,
            "every receiver hears every message to its end"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // The API's pages, from the first cursor to the last.
    let mut api_rows = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(cursor) => format!("/api/v1/campaigns/{id}/results?cursor={cursor}"),
            None => format!("/api/v1/campaigns/{id}/results"),
        };
        let page = approver.get(&path).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.json);
        api_rows.extend(page.json["results"].as_array().unwrap().iter().cloned());
        match page.json["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(api_rows.len(), 1200);
    let refused = approver.get(&format!("/api/v1/campaigns/{id}/results?cursor=7")).await;
    assert_eq!(
        refused.problem(),
        "refuse_cursor",
        "a cursor not at a row's start is refused"
    );

    for receiver in &receivers {
        let mood = receiver.mood;
        let heard_events = events(receiver);
        assert_eq!(receiver.heard.lock().unwrap().bad_signatures, 0, "{mood:?}");
        for kind in [
            "campaign.submitted",
            "campaign.approved",
            "campaign.started",
            "campaign.finished",
        ] {
            assert_eq!(
                heard_events.get(kind).map(Vec::len),
                Some(1),
                "{mood:?} {kind}: {heard_events:?}"
            );
        }
        assert_eq!(heard_events["campaign.finished"][0]["state"], "done");
        let percents: BTreeSet<u64> = heard_events["campaign.progress"]
            .iter()
            .map(|event| event["percent"].as_u64().unwrap())
            .collect();
        assert_eq!(percents, BTreeSet::from([25, 50, 75, 100]), "{mood:?}");
        let mut pages = heard_events["campaign.results"].clone();
        assert_eq!(pages.len(), 3, "{mood:?}: 1,200 rows in pages of 500");
        pages.sort_by_key(|page| {
            page["cursor"]
                .as_str()
                .map_or(0, |cursor| cursor.parse::<u64>().unwrap())
        });
        let rows: Vec<Value> = pages
            .iter()
            .flat_map(|page| page["results"].as_array().unwrap().clone())
            .collect();
        assert_eq!(rows, api_rows, "{mood:?}: the webhook's pages are the API's");
        let phones: BTreeSet<&str> = rows.iter().map(|row| row["phone"].as_str().unwrap()).collect();
        assert_eq!(phones.len(), 1200, "each row once");
        assert!(rows.iter().all(|row| row.get("name").is_none()), "names stay home");
        // Answered at once: once each; two 500s then 200: three times; a hang then 200: twice.
        let requests = receiver.heard.lock().unwrap().requests.clone();
        assert!(
            requests.values().all(|count| *count == expected(mood)),
            "{mood:?}: {requests:?}"
        );
    }

    // The log shows each delivery; a redelivery sends the same id again, which the receiver drops.
    let (_, page) = team.admin.page("/webhooks").await;
    let message = between(&page, "<code>msg_", "</code>").unwrap();
    let message = format!("msg_{message}");
    let form_action = between(&page, "action=\"/webhooks/", &format!("/{message}/redeliver")).unwrap();
    let endpoint = form_action
        .rsplit('"')
        .next()
        .unwrap()
        .rsplit("/webhooks/")
        .next()
        .unwrap()
        .to_string();
    let receiver = receivers
        .iter()
        .find(|receiver| receiver.heard.lock().unwrap().requests.contains_key(&message))
        .unwrap();
    let before = receiver.heard.lock().unwrap().requests[&message];
    let response = team
        .admin
        .post(&format!("/webhooks/{endpoint}/{message}/redeliver"), &[])
        .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while receiver.heard.lock().unwrap().requests[&message] == before {
        assert!(std::time::Instant::now() < deadline, "the redelivery arrives");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
