//! Fault injection seen from the client over HTTP: 503/429 not processed, dropped connections processed, shares, scope, latency and connect failures.

mod common;

use common::*;
use msgbatch::api::gateway::{acceptance, GatewayAlimTalkRequest};
use msgbatch::api::ledger::{Ledger, LedgerKind, SentCounts};
use msgbatch::api::standard::TextMessageRequest;
use msgbatch::api::GatewayNumberEntry;
use msgbatch::client::{ApiKey, Client, ClientConfig, ClientError, ErrorKind};
use msgbatch::sandbox::accounts::{FaultConfig, FaultScope};
use std::time::Duration;

const RETRY_AFTER_SECS: u64 = 7;
const SMS_PRICE: i64 = 9;
const ALIMTALK_PRICE: i64 = 8;

/// Accounts TOML with one gateway-eligible SMS group `demo` and the given `[faults]` lines.
fn accounts_with_faults(faults: &str) -> String {
    format!(
        r##"settle_after = "300s"

[faults]
{faults}

[[groups]]
id = "{DEMO_GROUP}"
api_key = "{DEMO_KEY}"
gateway = true
balance = 1000000
sms_services = [{SMS_SERVICE}]
callback_numbers = ["{DEMO_CALLBACK}"]

[groups.prices]
sms = {SMS_PRICE}
alimtalk = {ALIMTALK_PRICE}

[[groups.sender_keys]]
key = "{DEMO_SENDER_KEY}"
status = "ACTIVE"

[[groups.templates]]
code = "ORDER_SHIPPED"
sender_key = "{DEMO_SENDER_KEY}"
text = "{ORDER_SHIPPED_TEXT}"
"##
    )
}

/// A sandbox whose faults come from the accounts TOML.
async fn sandbox_from_toml(faults: &str) -> TestSandbox {
    TestSandbox::from_toml(&accounts_with_faults(faults)).await
}

/// The demo sandbox with `faults` set through the admin call.
async fn sandbox_with_admin_faults(faults: FaultConfig) -> TestSandbox {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let set = sandbox
        .admin(&client)
        .set_faults(&faults)
        .await
        .expect("set_faults answers");
    assert_eq!(set, faults, "the sandbox echoes the faults it put in force");
    assert_eq!(sandbox.admin(&client).faults().await.expect("faults answers"), faults);
    sandbox
}

fn sms_to(numbers: &[String]) -> TextMessageRequest {
    TextMessageRequest {
        service: SMS_SERVICE,
        message: "test message".into(),
        numbers: numbers.to_vec(),
        group_id: DEMO_GROUP.into(),
        callback_no: DEMO_CALLBACK.into(),
        mapping: None,
        subject: None,
    }
}

fn gateway_to(numbers: &[String]) -> GatewayAlimTalkRequest {
    GatewayAlimTalkRequest {
        group_id: DEMO_GROUP.into(),
        service: DEMO_SENDER_KEY.into(),
        template: "ORDER_SHIPPED".into(),
        message: ORDER_SHIPPED_TEXT.into(),
        numbers: numbers
            .iter()
            .map(|hp| GatewayNumberEntry {
                hp: hp.clone(),
                name: Some("홍길동".into()),
                vars: [("VAR1".to_string(), "123456".to_string())].into_iter().collect(),
            })
            .collect(),
        ..GatewayAlimTalkRequest::default()
    }
}

async fn snapshot(sandbox: &TestSandbox, client: &Client) -> (SentCounts, Ledger) {
    let admin = sandbox.admin(client);
    (
        admin.sent().await.expect("sent answers"),
        admin.ledger().await.expect("ledger answers"),
    )
}

/// Sends an SMS under a fault that must refuse it without processing, and checks what the
/// client sees and that the sandbox's send counts and ledger did not move.
async fn assert_refused_unprocessed(sandbox: &TestSandbox, kind: ErrorKind, http: u16) {
    let client = sandbox.client();
    let numbers = vec![number_ending(1, "11"), number_ending(2, "12")];
    let (sent_before, ledger_before) = snapshot(sandbox, &client).await;

    let error = client
        .send_sms(&sms_to(&numbers))
        .await
        .expect_err("the fault answers instead of the service");
    assert_eq!(error.kind(), kind, "{error}");
    assert_eq!(
        error.retry_after(),
        Some(Duration::from_secs(RETRY_AFTER_SECS)),
        "{error}"
    );
    assert_eq!(error.http_status(), Some(http));
    assert!(error.provably_not_applied(), "{error}");

    let (sent_after, ledger_after) = snapshot(sandbox, &client).await;
    assert_eq!(
        sent_after.total, sent_before.total,
        "a refused request was not processed"
    );
    assert_eq!(sent_after, sent_before);
    for number in &numbers {
        assert!(!sent_after.numbers.contains_key(number), "{number} was not sent");
    }
    assert_eq!(ledger_after, ledger_before, "nothing charged for a refused request");
}

/// Sends under a drop fault: the client sees a dropped connection that may have been applied,
/// and the sandbox did process it (each recipient counted and charged once).
async fn assert_dropped_but_processed(sandbox: &TestSandbox) {
    let client = sandbox.client();
    let numbers = vec![number_ending(3, "21"), number_ending(4, "22"), number_ending(5, "23")];
    let (sent_before, ledger_before) = snapshot(sandbox, &client).await;

    let error = client
        .send_sms(&sms_to(&numbers))
        .await
        .expect_err("the connection is dropped instead of answered");
    assert_dropped(&error);

    let (sent_after, ledger_after) = snapshot(sandbox, &client).await;
    assert_eq!(
        sent_after.total,
        sent_before.total + numbers.len() as u64,
        "processed once"
    );
    for number in &numbers {
        assert_eq!(sent_after.numbers.get(number), Some(&1), "{number} sent exactly once");
        let charges: Vec<_> = ledger_after
            .entries
            .iter()
            .filter(|e| &e.recipient == number && e.kind == LedgerKind::Charge)
            .collect();
        assert_eq!(charges.len(), 1, "{number} charged exactly once: {charges:?}");
        assert_eq!(charges[0].amount, SMS_PRICE);
    }
    assert_eq!(ledger_after.entries.len(), ledger_before.entries.len() + numbers.len());
    assert_eq!(
        ledger_after.balance,
        ledger_before.balance - SMS_PRICE * numbers.len() as i64
    );
}

fn assert_dropped(error: &ClientError) {
    assert_eq!(error.kind(), ErrorKind::ConnectionDropped, "{error}");
    assert_ne!(error.kind(), ErrorKind::Transport);
    assert_ne!(error.kind(), ErrorKind::Service);
    assert!(
        !error.provably_not_applied(),
        "a dropped connection may have been applied: {error}"
    );
    assert_eq!(error.retry_after(), None);
    assert_eq!(error.http_status(), None, "no answer came");
}

/// With the faults lifted, the same kind of send goes through and is counted: the checks above
/// can tell processed from not processed.
async fn assert_send_counts_when_faults_lifted(sandbox: &TestSandbox) {
    let client = sandbox.client();
    sandbox
        .admin(&client)
        .set_faults(&FaultConfig::default())
        .await
        .expect("faults lifted");
    let before = sandbox.admin(&client).sent().await.unwrap().total;
    let number = number_ending(9, "19");
    let response = client
        .send_sms(&sms_to(std::slice::from_ref(&number)))
        .await
        .expect("send goes through");
    assert_eq!(response.value.len(), 1);
    let after = sandbox.admin(&client).sent().await.unwrap();
    assert_eq!(after.total, before + 1);
    assert_eq!(after.numbers.get(&number), Some(&1));
}

// --- 503 ---

#[tokio::test]
async fn unavailable_from_toml_is_not_processed_and_carries_retry_after() {
    let sandbox = sandbox_from_toml(&format!(
        "unavailable_share = 1.0\nretry_after_secs = {RETRY_AFTER_SECS}"
    ))
    .await;
    assert_refused_unprocessed(&sandbox, ErrorKind::Unavailable, 503).await;
    assert_send_counts_when_faults_lifted(&sandbox).await;
}

#[tokio::test]
async fn unavailable_set_by_admin_is_not_processed_and_carries_retry_after() {
    let sandbox = sandbox_with_admin_faults(FaultConfig {
        unavailable_share: 1.0,
        retry_after_secs: RETRY_AFTER_SECS,
        ..FaultConfig::default()
    })
    .await;
    assert_refused_unprocessed(&sandbox, ErrorKind::Unavailable, 503).await;
    assert_send_counts_when_faults_lifted(&sandbox).await;
}

// --- 429 ---

#[tokio::test]
async fn rate_limited_from_toml_is_not_processed_and_carries_retry_after() {
    let sandbox = sandbox_from_toml(&format!(
        "rate_limited_share = 1.0\nretry_after_secs = {RETRY_AFTER_SECS}"
    ))
    .await;
    assert_refused_unprocessed(&sandbox, ErrorKind::RateLimited, 429).await;
    assert_send_counts_when_faults_lifted(&sandbox).await;
}

#[tokio::test]
async fn rate_limited_set_by_admin_is_not_processed_and_carries_retry_after() {
    let sandbox = sandbox_with_admin_faults(FaultConfig {
        rate_limited_share: 1.0,
        retry_after_secs: RETRY_AFTER_SECS,
        ..FaultConfig::default()
    })
    .await;
    assert_refused_unprocessed(&sandbox, ErrorKind::RateLimited, 429).await;
    assert_send_counts_when_faults_lifted(&sandbox).await;
}

// --- processed, then dropped ---

#[tokio::test]
async fn drop_from_toml_is_connection_dropped_and_processed_once() {
    let sandbox = sandbox_from_toml("drop_share = 1.0").await;
    assert_dropped_but_processed(&sandbox).await;
}

#[tokio::test]
async fn drop_set_by_admin_is_connection_dropped_and_processed_once() {
    let sandbox = sandbox_with_admin_faults(FaultConfig {
        drop_share: 1.0,
        ..FaultConfig::default()
    })
    .await;
    assert_dropped_but_processed(&sandbox).await;
}

#[tokio::test]
async fn dropped_gateway_send_is_recorded_and_charged_once() {
    let sandbox = sandbox_from_toml("drop_share = 1.0").await;
    let client = sandbox.client();
    let number = number_ending(6, "31");
    let error = client
        .send_gateway_alimtalk(&gateway_to(std::slice::from_ref(&number)))
        .await
        .expect_err("the connection is dropped instead of answered");
    assert_dropped(&error);

    let (sent, ledger) = snapshot(&sandbox, &client).await;
    assert_eq!(sent.total, 1);
    assert_eq!(sent.numbers.get(&number), Some(&1));
    let charges: Vec<_> = ledger.entries.iter().filter(|e| e.recipient == number).collect();
    assert_eq!(charges.len(), 1, "{charges:?}");
    assert_eq!(charges[0].kind, LedgerKind::Charge);
    assert_eq!(charges[0].amount, ALIMTALK_PRICE);
    assert!(
        charges[0].send_group_id.is_some(),
        "the gateway charge names its send group"
    );
}

// --- shares are exact and deterministic ---

/// Sends 10 single-recipient SMS and returns, per send, the error kind or `None` for success.
async fn ten_sends(sandbox: &TestSandbox, serial_base: u32) -> Vec<Option<ErrorKind>> {
    let client = sandbox.client();
    let mut outcomes = Vec::new();
    for i in 0..10 {
        let number = number_ending(serial_base + i, "40");
        outcomes.push(client.send_sms(&sms_to(&[number])).await.err().map(|e| e.kind()));
    }
    outcomes
}

fn assert_half_faulted(outcomes: &[Option<ErrorKind>], kind: ErrorKind) {
    let faulted = outcomes.iter().filter(|o| **o == Some(kind)).count();
    let ok = outcomes.iter().filter(|o| o.is_none()).count();
    assert_eq!((faulted, ok), (5, 5), "{outcomes:?}");
    // Spread evenly: with a share of one half, no two neighbours are both faulted or both spared.
    for pair in outcomes.windows(2) {
        assert_ne!(pair[0], pair[1], "faults spread evenly: {outcomes:?}");
    }
}

#[tokio::test]
async fn half_unavailable_share_from_toml_faults_exactly_five_of_ten() {
    let sandbox = sandbox_from_toml("unavailable_share = 0.5\nretry_after_secs = 1").await;
    let outcomes = ten_sends(&sandbox, 100).await;
    assert_half_faulted(&outcomes, ErrorKind::Unavailable);
    let client = sandbox.client();
    let sent = sandbox.admin(&client).sent().await.unwrap();
    assert_eq!(sent.total, 5, "only the spared half was processed");
}

#[tokio::test]
async fn half_rate_limited_share_set_by_admin_faults_exactly_five_of_ten_and_repeats() {
    let faults = FaultConfig {
        rate_limited_share: 0.5,
        retry_after_secs: 1,
        ..FaultConfig::default()
    };
    let sandbox = sandbox_with_admin_faults(faults.clone()).await;
    let first = ten_sends(&sandbox, 200).await;
    assert_half_faulted(&first, ErrorKind::RateLimited);
    // Setting the faults again restarts the spread: the same pattern comes back.
    let client = sandbox.client();
    sandbox.admin(&client).set_faults(&faults).await.unwrap();
    let second = ten_sends(&sandbox, 300).await;
    assert_eq!(first, second, "the spread is deterministic");
    assert_eq!(sandbox.admin(&client).sent().await.unwrap().total, 10);
}

#[tokio::test]
async fn half_drop_share_drops_exactly_five_of_ten_and_processes_all() {
    let sandbox = sandbox_with_admin_faults(FaultConfig {
        drop_share: 0.5,
        ..FaultConfig::default()
    })
    .await;
    let outcomes = ten_sends(&sandbox, 400).await;
    assert_half_faulted(&outcomes, ErrorKind::ConnectionDropped);
    let client = sandbox.client();
    let sent = sandbox.admin(&client).sent().await.unwrap();
    assert_eq!(sent.total, 10, "dropped requests were processed too");
    assert!(sent.repeated().is_empty(), "each number once: {:?}", sent.repeated());
}

// --- scope ---

#[tokio::test]
async fn sends_scope_from_toml_spares_reads() {
    let sandbox = sandbox_from_toml("unavailable_share = 1.0\nretry_after_secs = 1\napplies_to = \"sends\"").await;
    let client = sandbox.client();
    let categories = client.categories().await.expect("GET /category is not a send: spared");
    assert!(!categories.categories.is_empty());
    client
        .channel_page(None, None, None)
        .await
        .expect("GET /channel is spared");
    let error = client.send_sms(&sms_to(&[number_ending(1, "50")])).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    let error = client
        .send_gateway_alimtalk(&gateway_to(&[number_ending(2, "50")]))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
}

#[tokio::test]
async fn sends_scope_set_by_admin_spares_reads() {
    let sandbox = sandbox_with_admin_faults(FaultConfig {
        rate_limited_share: 1.0,
        retry_after_secs: 1,
        applies_to: FaultScope::Sends,
        ..FaultConfig::default()
    })
    .await;
    let client = sandbox.client();
    client.categories().await.expect("GET /category is spared");
    let error = client.send_sms(&sms_to(&[number_ending(1, "51")])).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::RateLimited, "{error}");
}

#[tokio::test]
async fn all_scope_from_toml_faults_reads_too() {
    let sandbox = sandbox_from_toml(&format!(
        "unavailable_share = 1.0\nretry_after_secs = {RETRY_AFTER_SECS}\napplies_to = \"all\""
    ))
    .await;
    let client = sandbox.client();
    let error = client
        .categories()
        .await
        .expect_err("GET /category is faulted under \"all\"");
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    assert_eq!(error.retry_after(), Some(Duration::from_secs(RETRY_AFTER_SECS)));
    let error = client.channel_page(None, None, None).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    // The admin paths are never faulted.
    assert_eq!(sandbox.admin(&client).sent().await.expect("admin spared").total, 0);
}

#[tokio::test]
async fn all_scope_set_by_admin_faults_reads_too() {
    let sandbox = sandbox_with_admin_faults(FaultConfig {
        rate_limited_share: 1.0,
        retry_after_secs: RETRY_AFTER_SECS,
        applies_to: FaultScope::All,
        ..FaultConfig::default()
    })
    .await;
    let client = sandbox.client();
    let error = client
        .categories()
        .await
        .expect_err("GET /category is faulted under \"all\"");
    assert_eq!(error.kind(), ErrorKind::RateLimited, "{error}");
    assert!(error.provably_not_applied());
    let error = client.channel_get("ch-demo-large").await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::RateLimited, "{error}");
}

// --- latency ---

#[tokio::test]
async fn latency_from_toml_still_succeeds() {
    let sandbox = sandbox_from_toml("latency_ms = 50\napplies_to = \"all\"").await;
    let client = sandbox.client();
    let number = number_ending(1, "60");
    let response = client
        .send_sms(&sms_to(std::slice::from_ref(&number)))
        .await
        .expect("delayed, not failed");
    assert_eq!(response.value.len(), 1);
    assert_eq!(response.value[0].status, "SMS_00");
    client.categories().await.expect("a delayed read succeeds");
    assert_eq!(
        sandbox.admin(&client).sent().await.unwrap().numbers.get(&number),
        Some(&1)
    );
}

#[tokio::test]
async fn latency_set_by_admin_still_succeeds() {
    let sandbox = sandbox_with_admin_faults(FaultConfig {
        latency_ms: 50,
        ..FaultConfig::default()
    })
    .await;
    let client = sandbox.client();
    let number = number_ending(2, "60");
    let response = client
        .send_gateway_alimtalk(&gateway_to(std::slice::from_ref(&number)))
        .await
        .expect("delayed, not failed");
    assert_eq!(response.accepted, 1);
    assert_eq!(response.results[0].status, acceptance::PENDING);
    assert_eq!(
        sandbox.admin(&client).sent().await.unwrap().numbers.get(&number),
        Some(&1)
    );
}

// --- connect failure ---

#[tokio::test]
async fn connect_failure_is_connect_and_provably_not_applied() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
        listener.local_addr().unwrap().port()
    };
    let config = ClientConfig::new(
        format!("http://127.0.0.1:{port}/standard"),
        format!("http://127.0.0.1:{port}/gateway"),
        ApiKey::new(DEMO_KEY),
        DEMO_GROUP,
    );
    let client = Client::new(config).expect("client builds");
    let error = client
        .send_sms(&sms_to(&[number_ending(1, "70")]))
        .await
        .expect_err("nothing listens there");
    assert_eq!(error.kind(), ErrorKind::Connect, "{error}");
    assert!(error.provably_not_applied(), "{error}");
    assert_eq!(error.http_status(), None);
    let error = client
        .send_gateway_alimtalk(&gateway_to(&[number_ending(2, "70")]))
        .await
        .expect_err("nothing listens there");
    assert_eq!(error.kind(), ErrorKind::Connect, "{error}");
    assert!(error.provably_not_applied(), "{error}");
}

// --- result listing ---

/// Walks `GET /result/sendGroup/:id` page by page (at most `most` pages) and answers each page's
/// ids and `lastKey`.
async fn listing_pages(
    client: &Client,
    send_group_id: &str,
    limit: u32,
    most: usize,
) -> Vec<(Vec<String>, Option<String>)> {
    let mut pages = Vec::new();
    let mut last_key: Option<String> = None;
    while pages.len() < most {
        let page = client
            .result_page(send_group_id, Some(limit), last_key.as_deref())
            .await
            .expect("page reads");
        let ids = page.items.iter().map(|r| r.id.clone()).collect();
        last_key = page.last_key.clone();
        pages.push((ids, page.last_key));
        if last_key.is_none() {
            break;
        }
    }
    pages
}

/// A gateway send of 12 plain recipients: the ids of its records, in order.
async fn twelve_records(client: &Client) -> (String, Vec<String>) {
    let numbers: Vec<String> = (0..12).map(|serial| number_ending(serial, "70")).collect();
    let response = client
        .send_gateway_alimtalk(&gateway_to(&numbers))
        .await
        .expect("gateway send accepted");
    assert_eq!(response.accepted, 12);
    let ids = response.results.iter().map(|r| r.id.clone()).collect();
    (response.send_group_id, ids)
}

async fn assert_listing_hides_a_quarter(sandbox: &TestSandbox) {
    let client = sandbox.client();
    let (send_group_id, ids) = twelve_records(&client).await;
    let listed: Vec<String> = listing_pages(&client, &send_group_id, 5, 10)
        .await
        .into_iter()
        .flat_map(|(ids, _)| ids)
        .collect();
    // A share of 0.25 hides exactly the 4th, 8th and 12th record, on every read.
    let hidden = [&ids[3], &ids[7], &ids[11]];
    let expected: Vec<String> = ids.iter().filter(|id| !hidden.contains(id)).cloned().collect();
    assert_eq!(
        listed, expected,
        "the listing leaves out exactly the hidden records, once each"
    );
    for id in hidden {
        let record = client
            .result(id)
            .await
            .expect("a hidden record is found by single lookup");
        assert_eq!(&record.id, id);
        assert_eq!(record.send_group_id.as_deref(), Some(send_group_id.as_str()));
    }
}

#[tokio::test]
async fn listing_hidden_share_from_toml_leaves_records_out_that_single_lookup_finds() {
    let sandbox = sandbox_from_toml("listing_hidden_share = 0.25").await;
    assert_listing_hides_a_quarter(&sandbox).await;
}

#[tokio::test]
async fn listing_hidden_share_set_by_admin_leaves_records_out_that_single_lookup_finds() {
    let sandbox = sandbox_with_admin_faults(FaultConfig {
        listing_hidden_share: 0.25,
        ..FaultConfig::default()
    })
    .await;
    assert_listing_hides_a_quarter(&sandbox).await;
}

#[tokio::test]
async fn listing_hidden_share_over_one_is_refused() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let error = sandbox
        .admin(&client)
        .set_faults(&FaultConfig {
            listing_hidden_share: 1.5,
            ..FaultConfig::default()
        })
        .await
        .expect_err("a share over 1 is refused");
    assert_eq!(error.http_status(), Some(400), "{error}");
    assert!(error.to_string().contains("listing_hidden_share"), "{error}");
}

#[tokio::test]
async fn listing_repeats_last_key_answers_the_given_key_again() {
    let sandbox = sandbox_from_toml("listing_repeats_last_key = true").await;
    let client = sandbox.client();
    let (send_group_id, _) = twelve_records(&client).await;
    let pages = listing_pages(&client, &send_group_id, 5, 3).await;
    assert_eq!(pages.len(), 3, "the walk never ends by itself: {pages:?}");
    let first_key = pages[0].1.clone().expect("a first page of 5 out of 12 has a lastKey");
    assert_eq!(pages[1].1.as_deref(), Some(first_key.as_str()), "the same token again");
    assert_eq!(pages[2].1.as_deref(), Some(first_key.as_str()));
    assert_eq!(pages[1].0, pages[2].0, "so the same page again");
}

#[tokio::test]
async fn all_scope_faults_the_result_lookups_too() {
    let sandbox = sandbox_from_toml("applies_to = \"all\"").await;
    let client = sandbox.client();
    let (send_group_id, ids) = twelve_records(&client).await;
    sandbox
        .admin(&client)
        .set_faults(&FaultConfig {
            unavailable_share: 1.0,
            applies_to: FaultScope::All,
            ..FaultConfig::default()
        })
        .await
        .expect("faults set");
    let error = client.result(&ids[0]).await.expect_err("GET /result/:id is faulted");
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    let error = client
        .result_page(&send_group_id, None, None)
        .await
        .expect_err("GET /result/sendGroup/:id is faulted");
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
}
