//! Gateway notification sends over HTTP: acceptance, charging, settling, result lookups, send-group pagination and group isolation.

mod common;
use common::*;

use futures::TryStreamExt;
use msgbatch::api::gateway::{GatewayAlimTalkRequest, GatewaySendResponse, ResultPage, SendRecord};
use msgbatch::api::ledger::{Ledger, LedgerKind};
use msgbatch::api::{now_millis, GatewayNumberEntry, Variables};
use msgbatch::client::{Client, ErrorKind};
use msgbatch::sandbox::accounts::{GroupConfig, DEMO_ACCOUNTS};
use msgbatch::sandbox::Accounts;
use std::collections::HashSet;

/// Spec, Limits: "`uid` length | at most 20 characters".
const SPEC_UID_MAX_CHARS: usize = 20;
/// Spec, GET /result/sendGroup: "`limit` (number, default 100, range 1 to 500)".
const SPEC_RESULT_PAGE_DEFAULT: usize = 100;
const SPEC_RESULT_PAGE_MAX: u32 = 500;
/// A send group whose size is a multiple of none of the page sizes walked (1 aside).
const BIG_SEND_GROUP: u32 = 1_234;

const PARTNER_GROUP: &str = "partner";
const PARTNER_KEY: &str = "sbx-partner-key";
const PARTNER_SENDER_KEY: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f9001234567";
const PARTNER_TEMPLATE: &str = "PARTNER_NOTICE";
const PARTNER_TEXT: &str = "#{이름}님, 파트너 안내입니다.";

/// The demo accounts plus a second gateway-eligible group, `partner`, with its own sender key and template.
fn accounts_with_partner() -> String {
    format!(
        r#"{DEMO_ACCOUNTS}

[[groups]]
id = "{PARTNER_GROUP}"
api_key = "{PARTNER_KEY}"
gateway = true
balance = 100000
callback_numbers = ["0311112222"]

[groups.prices]
alimtalk = 8

[[groups.templates]]
code = "{PARTNER_TEMPLATE}"
sender_key = "{PARTNER_SENDER_KEY}"
text = "{PARTNER_TEXT}"

[[groups.sender_keys]]
key = "{PARTNER_SENDER_KEY}"
status = "ACTIVE"
"#
    )
}

fn demo_config() -> GroupConfig {
    Accounts::demo()
        .groups
        .into_iter()
        .find(|g| g.id == DEMO_GROUP)
        .expect("demo group in the demo accounts")
}

/// The 8-4-4-4-12 hex shape of a UUID.
fn is_uuid(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    parts.len() == 5
        && parts
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(part, len)| part.len() == len && part.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn recipient(hp: String, name: &str, invoice: Option<&str>) -> GatewayNumberEntry {
    let mut vars = Variables::new();
    if let Some(invoice) = invoice {
        vars.insert("VAR1".to_string(), invoice.to_string());
    }
    GatewayNumberEntry {
        hp,
        name: Some(name.to_string()),
        vars,
    }
}

/// An ORDER_SHIPPED request of the demo group with the registered template text.
fn shipped(numbers: Vec<GatewayNumberEntry>) -> GatewayAlimTalkRequest {
    GatewayAlimTalkRequest {
        group_id: DEMO_GROUP.to_string(),
        service: DEMO_SENDER_KEY.to_string(),
        template: "ORDER_SHIPPED".to_string(),
        message: ORDER_SHIPPED_TEXT.to_string(),
        numbers,
        ..GatewayAlimTalkRequest::default()
    }
}

/// `count` fully filled recipients whose numbers match no outcome rule (they end in 0).
fn plain_recipients(count: u32) -> Vec<GatewayNumberEntry> {
    (0..count)
        .map(|serial| recipient(number_ending(serial, "0"), "김민수", Some(&format!("INV{serial}"))))
        .collect()
}

async fn ledger(sandbox: &TestSandbox, client: &Client) -> Ledger {
    sandbox.admin(client).ledger().await.expect("ledger reads")
}

/// Sum of the ledger amounts of `kind` that belong to the gateway id `reference`, and how many there are.
fn ledger_for(ledger: &Ledger, kind: LedgerKind, reference: &str) -> (i64, usize) {
    ledger
        .entries
        .iter()
        .filter(|e| e.kind == kind && e.reference == reference)
        .fold((0, 0), |(sum, n), e| (sum + e.amount, n + 1))
}

async fn send(client: &Client, request: &GatewayAlimTalkRequest) -> GatewaySendResponse {
    client
        .send_gateway_alimtalk(request)
        .await
        .expect("gateway send accepted")
}

fn assert_refused(result: Result<GatewaySendResponse, msgbatch::client::ClientError>, http: u16) {
    let error = result.expect_err("request must be refused");
    assert_eq!(error.kind(), ErrorKind::Service, "{error}");
    assert_eq!(error.http_status(), Some(http), "{error}");
}

// ---------------------------------------------------------------- acceptance

#[tokio::test]
async fn send_answers_at_once_with_a_pending_uuid_result_per_recipient() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let numbers = plain_recipients(3);
    let response = send(&client, &shipped(numbers.clone())).await;

    assert!(response.success);
    assert!(
        is_uuid(&response.send_group_id),
        "sendGroupId {:?}",
        response.send_group_id
    );
    assert_eq!(response.total, numbers.len() as u64);
    assert_eq!(response.accepted, numbers.len() as u64);
    assert_eq!(response.results.len(), numbers.len());
    let mut ids = HashSet::new();
    let mut uids = HashSet::new();
    for (row, entry) in response.results.iter().zip(&numbers) {
        assert!(is_uuid(&row.id), "id {:?}", row.id);
        assert!(
            !row.uid.is_empty() && row.uid.chars().count() <= SPEC_UID_MAX_CHARS,
            "uid {:?}",
            row.uid
        );
        assert_eq!(row.mobile, entry.hp);
        assert_eq!(row.status, "GW_PENDING");
        assert!(
            row.raw_status.as_deref().is_some_and(|s| !s.is_empty()),
            "rawStatus {row:?}"
        );
        assert!(row.error.is_none(), "{row:?}");
        ids.insert(row.id.clone());
        uids.insert(row.uid.clone());
    }
    assert_eq!(ids.len(), numbers.len(), "ids are per recipient");
    assert_eq!(uids.len(), numbers.len(), "uids are per recipient");
}

#[tokio::test]
async fn acceptance_failures_are_failed_with_an_error_and_not_counted_as_accepted() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let numbers = vec![
        recipient(number_ending(1, "0"), "김민수", Some("A1")),
        recipient(number_ending(2, "95"), "이영희", Some("A2")),
        recipient(number_ending(3, "0"), "박지훈", None),
    ];
    let response = send(&client, &shipped(numbers.clone())).await;

    assert_eq!(response.total, 3);
    assert_eq!(response.accepted, 1);
    assert_eq!(response.results[0].status, "GW_PENDING");
    for failed in &response.results[1..] {
        assert_eq!(failed.status, "FAILED", "{failed:?}");
        assert!(
            failed.error.as_deref().is_some_and(|e| !e.is_empty()),
            "error reason {failed:?}"
        );
    }
    assert_eq!(
        response.results.iter().filter(|r| r.status == "GW_PENDING").count() as u64,
        response.accepted
    );
}

#[tokio::test]
async fn only_accepted_items_are_charged_at_acceptance() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let config = demo_config();
    let price = config.prices.alimtalk;
    let numbers = vec![
        recipient(number_ending(1, "0"), "김민수", Some("A1")),
        recipient(number_ending(2, "95"), "이영희", Some("A2")),
        recipient(number_ending(3, "0"), "박지훈", None),
        recipient(number_ending(4, "0"), "최수진", Some("A4")),
    ];
    let response = send(&client, &shipped(numbers)).await;
    let ledger = ledger(&sandbox, &client).await;

    let accepted: Vec<_> = response.results.iter().filter(|r| r.status == "GW_PENDING").collect();
    assert_eq!(accepted.len(), 2);
    for row in &response.results {
        let (charged, charges) = ledger_for(&ledger, LedgerKind::Charge, &row.id);
        if row.status == "GW_PENDING" {
            assert_eq!((charged, charges), (price, 1), "accepted {row:?} is charged once");
        } else {
            assert_eq!(charges, 0, "refused {row:?} is not charged");
        }
    }
    assert!(ledger.entries.iter().all(|e| e.kind == LedgerKind::Charge));
    assert_eq!(ledger.balance, config.balance - price * accepted.len() as i64);
}

#[tokio::test]
async fn caller_substituted_message_matching_the_template_is_accepted() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let mut request = shipped(vec![GatewayNumberEntry {
        hp: number_ending(1, "0"),
        ..GatewayNumberEntry::default()
    }]);
    request.message = ORDER_SHIPPED_TEXT
        .replace("#{이름}", "김민수")
        .replace("#{VAR1}", "123-456-789");
    let response = send(&client, &request).await;

    assert_eq!(response.accepted, 1);
    assert_eq!(response.results[0].status, "GW_PENDING");
    let record = client.result(&response.results[0].id).await.expect("record stored");
    assert_eq!(record.result.as_deref(), Some("GW_PENDING"));
}

#[tokio::test]
async fn message_differing_from_the_template_is_refused_with_400_and_not_charged() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let mut request = shipped(plain_recipients(2));
    request.message = "#{이름}님, 주문이 취소되었습니다. 송장번호: #{VAR1}".to_string();
    assert_refused(client.send_gateway_alimtalk(&request).await, 400);

    let ledger = ledger(&sandbox, &client).await;
    assert!(ledger.entries.is_empty(), "{:?}", ledger.entries);
    assert_eq!(ledger.balance, demo_config().balance);
}

#[tokio::test]
async fn title_template_needs_a_title() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let config = demo_config();
    let payment = config
        .templates
        .iter()
        .find(|t| t.code == "PAYMENT_DONE")
        .expect("PAYMENT_DONE in the demo accounts");
    let title = payment.title.clone().expect("PAYMENT_DONE is a title template");
    let mut request = GatewayAlimTalkRequest {
        group_id: DEMO_GROUP.to_string(),
        service: DEMO_SENDER_KEY.to_string(),
        template: payment.code.clone(),
        message: payment.text.clone(),
        numbers: vec![recipient(number_ending(1, "0"), "김민수", Some("15000"))],
        ..GatewayAlimTalkRequest::default()
    };
    assert_refused(client.send_gateway_alimtalk(&request).await, 400);
    request.title = Some(String::new());
    assert_refused(client.send_gateway_alimtalk(&request).await, 400);
    assert!(ledger(&sandbox, &client).await.entries.is_empty());

    request.title = Some(title);
    let response = send(&client, &request).await;
    assert_eq!(response.accepted, 1);
    assert_eq!(response.results[0].status, "GW_PENDING");
}

#[tokio::test]
async fn unknown_sender_key_is_refused_and_not_charged() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let mut request = shipped(plain_recipients(1));
    request.service = "ffffffffffffffffffffffffffffffffffffffff".to_string();
    assert_refused(client.send_gateway_alimtalk(&request).await, 400);
    assert!(ledger(&sandbox, &client).await.entries.is_empty());
}

#[tokio::test]
async fn group_without_gateway_eligibility_is_refused_with_403() {
    let sandbox = TestSandbox::demo().await;
    let other = sandbox.other();
    let mut request = shipped(plain_recipients(1));
    request.group_id = OTHER_GROUP.to_string();
    assert_refused(other.send_gateway_alimtalk(&request).await, 403);

    let other_config = Accounts::demo()
        .groups
        .into_iter()
        .find(|g| g.id == OTHER_GROUP)
        .expect("other group");
    let ledger = sandbox.admin(&other).ledger().await.expect("ledger reads");
    assert!(ledger.entries.is_empty());
    assert_eq!(ledger.balance, other_config.balance);
}

#[tokio::test]
async fn group_in_body_alone_is_accepted() {
    let sandbox = TestSandbox::demo().await;
    let request = shipped(plain_recipients(1));
    let response = sandbox
        .raw()
        .post(format!("{}/alimTalk", sandbox.handle.gateway_url()))
        .header("apikey", DEMO_KEY)
        .json(&request)
        .send()
        .await
        .expect("answer");
    assert_eq!(response.status(), 200);
    let body: GatewaySendResponse = response.json().await.expect("send response");
    assert_eq!(body.accepted, 1);
    assert_eq!(body.results[0].status, "GW_PENDING");
}

#[tokio::test]
async fn group_in_header_agreeing_with_body_is_accepted() {
    let sandbox = TestSandbox::demo().await;
    let request = shipped(plain_recipients(1));
    let response = sandbox
        .raw()
        .post(format!("{}/alimTalk", sandbox.handle.gateway_url()))
        .header("apikey", DEMO_KEY)
        .header("groupid", DEMO_GROUP)
        .json(&request)
        .send()
        .await
        .expect("answer");
    assert_eq!(response.status(), 200);
    let body: GatewaySendResponse = response.json().await.expect("send response");
    assert_eq!(body.accepted, 1);
}

#[tokio::test]
async fn group_header_and_body_mismatch_is_401_err_102_and_not_charged() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();

    // Header `demo`, body `other`.
    let mut request = shipped(plain_recipients(1));
    request.group_id = OTHER_GROUP.to_string();
    let error = client
        .send_gateway_alimtalk(&request)
        .await
        .expect_err("mismatch refused");
    assert_eq!(error.http_status(), Some(401), "{error}");
    assert_eq!(error.code(), Some("ERR_102"), "{error}");

    // Header `other` with demo's key, body `demo`.
    let misnamed = sandbox.client_as(DEMO_KEY, OTHER_GROUP);
    let error = misnamed
        .send_gateway_alimtalk(&shipped(plain_recipients(1)))
        .await
        .expect_err("mismatch refused");
    assert_eq!(error.http_status(), Some(401), "{error}");
    assert_eq!(error.code(), Some("ERR_102"), "{error}");

    assert!(ledger(&sandbox, &client).await.entries.is_empty());
}

// ---------------------------------------------------------------- records and settling

#[tokio::test]
async fn send_record_carries_the_request_and_acceptance_fields() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let before = now_millis();
    let request = shipped(plain_recipients(2));
    let response = send(&client, &request).await;
    let after = now_millis();

    for row in &response.results {
        let record = client.result(&row.id).await.expect("record reads");
        assert_eq!(record.id, row.id);
        assert_eq!(record.uid.as_deref(), Some(row.uid.as_str()));
        assert_eq!(record.mobile.as_deref(), Some(row.mobile.as_str()));
        assert_eq!(record.send_group_id.as_deref(), Some(response.send_group_id.as_str()));
        assert_eq!(record.service.as_deref(), Some(request.service.as_str()));
        assert_eq!(record.template.as_deref(), Some(request.template.as_str()));
        let date = record.date.expect("date present");
        assert!(
            (before..=after).contains(&date),
            "date {date} not in [{before}, {after}] ms"
        );
        assert!(record.error_message.is_none(), "{record:?}");
    }
}

#[tokio::test]
async fn default_settle_keeps_accepted_records_gw_pending() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let numbers = vec![
        recipient(number_ending(1, "0"), "김민수", Some("A1")),
        recipient(number_ending(2, "93"), "이영희", Some("A2")),
        recipient(number_ending(3, "94"), "박지훈", Some("A3")),
    ];
    let response = send(&client, &shipped(numbers)).await;
    assert_eq!(response.accepted, 3);

    for row in &response.results {
        let record = client.result(&row.id).await.expect("record reads");
        assert_eq!(record.result.as_deref(), Some("GW_PENDING"), "{record:?}");
        assert!(
            record.raw_status.is_some(),
            "rawStatus present while pending: {record:?}"
        );
        assert!(record.error_message.is_none(), "{record:?}");
    }
    let listed: Vec<SendRecord> = client
        .results(&response.send_group_id, None)
        .try_collect()
        .await
        .expect("listing reads");
    assert_eq!(listed.len(), 3);
    assert!(
        listed.iter().all(|r| r.result.as_deref() == Some("GW_PENDING")),
        "{listed:?}"
    );
    let ledger = ledger(&sandbox, &client).await;
    assert!(
        ledger.entries.iter().all(|e| e.kind == LedgerKind::Charge),
        "no refund while pending: {:?}",
        ledger.entries
    );
    assert_eq!(ledger.entries.len(), 3, "one charge per accepted recipient");
}

#[tokio::test]
async fn settled_records_are_ok_failed_with_error_message_or_giveup() {
    let sandbox = TestSandbox::demo_settling("0s").await;
    let client = sandbox.client();
    let numbers = vec![
        recipient(number_ending(1, "0"), "김민수", Some("A1")),
        recipient(number_ending(2, "93"), "이영희", Some("A2")),
        recipient(number_ending(3, "94"), "박지훈", Some("A3")),
    ];
    let response = send(&client, &shipped(numbers)).await;
    assert_eq!(response.accepted, 3, "all three are accepted before they settle");

    let ok = client.result(&response.results[0].id).await.expect("reads");
    let failed = client.result(&response.results[1].id).await.expect("reads");
    let giveup = client.result(&response.results[2].id).await.expect("reads");
    assert_eq!(ok.result.as_deref(), Some("OK"), "{ok:?}");
    assert!(ok.error_message.is_none(), "{ok:?}");
    assert_eq!(failed.result.as_deref(), Some("FAILED"), "{failed:?}");
    assert!(
        failed.error_message.as_deref().is_some_and(|m| !m.is_empty()),
        "{failed:?}"
    );
    assert_eq!(giveup.result.as_deref(), Some("GIVEUP"), "{giveup:?}");
}

#[tokio::test]
async fn failed_delivery_refunds_exactly_its_charge_and_giveup_keeps_it() {
    let sandbox = TestSandbox::demo_settling("0s").await;
    let client = sandbox.client();
    let config = demo_config();
    let price = config.prices.alimtalk;
    let numbers = vec![
        recipient(number_ending(1, "0"), "김민수", Some("A1")),
        recipient(number_ending(2, "93"), "이영희", Some("A2")),
        recipient(number_ending(3, "94"), "박지훈", Some("A3")),
    ];
    let response = send(&client, &shipped(numbers)).await;
    let (ok, failed, giveup) = (
        &response.results[0].id,
        &response.results[1].id,
        &response.results[2].id,
    );
    let ledger = ledger(&sandbox, &client).await;

    let failed_charge = ledger_for(&ledger, LedgerKind::Charge, failed);
    assert_eq!(failed_charge, (price, 1));
    assert_eq!(
        ledger_for(&ledger, LedgerKind::Refund, failed),
        failed_charge,
        "refund equals the charge"
    );
    assert_eq!(ledger_for(&ledger, LedgerKind::Charge, giveup), (price, 1));
    assert_eq!(
        ledger_for(&ledger, LedgerKind::Refund, giveup),
        (0, 0),
        "GIVEUP keeps the charge"
    );
    assert_eq!(ledger_for(&ledger, LedgerKind::Charge, ok), (price, 1));
    assert_eq!(ledger_for(&ledger, LedgerKind::Refund, ok), (0, 0));
    assert_eq!(ledger.balance, config.balance - 2 * price);
}

#[tokio::test]
async fn single_lookup_and_send_group_listing_agree() {
    let sandbox = TestSandbox::demo_settling("0s").await;
    let client = sandbox.client();
    let mut numbers = Vec::new();
    for serial in 0..4 {
        numbers.push(recipient(number_ending(serial, "0"), "김민수", Some("A")));
        numbers.push(recipient(number_ending(serial, "93"), "이영희", Some("B")));
        numbers.push(recipient(number_ending(serial, "94"), "박지훈", Some("C")));
    }
    let response = send(&client, &shipped(numbers.clone())).await;
    assert_eq!(response.accepted, numbers.len() as u64);

    let listed: Vec<SendRecord> = client
        .results(&response.send_group_id, Some(5))
        .try_collect()
        .await
        .expect("listing reads");
    let listed_ids: HashSet<&str> = listed.iter().map(|r| r.id.as_str()).collect();
    let sent_ids: HashSet<&str> = response.results.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(listed.len(), numbers.len());
    assert_eq!(listed_ids, sent_ids);
    let mut finals = HashSet::new();
    for item in &listed {
        let single = client.result(&item.id).await.expect("single lookup");
        assert_eq!(item.result, single.result, "{item:?} vs {single:?}");
        for (listed, looked_up) in [
            (&item.uid, &single.uid),
            (&item.mobile, &single.mobile),
            (&item.status, &single.status),
            (&item.send_group_id, &single.send_group_id),
            (&item.error_message, &single.error_message),
        ] {
            if listed.is_some() {
                assert_eq!(listed, looked_up, "{item:?} vs {single:?}");
            }
        }
        finals.insert(single.result.clone().expect("result present"));
    }
    let expected: HashSet<String> = ["OK", "FAILED", "GIVEUP"].map(String::from).into();
    assert_eq!(finals, expected);
}

// ---------------------------------------------------------------- send-group pagination

async fn big_send_group(client: &Client) -> GatewaySendResponse {
    let response = send(client, &shipped(plain_recipients(BIG_SEND_GROUP))).await;
    assert_eq!(response.accepted, u64::from(BIG_SEND_GROUP));
    response
}

/// Walks the listing page by page with `result_page`, following `lastKey`.
async fn walk_pages(client: &Client, send_group_id: &str, limit: u32) -> Vec<ResultPage> {
    let mut pages = Vec::new();
    let mut last_key: Option<String> = None;
    loop {
        let page = client
            .result_page(send_group_id, Some(limit), last_key.as_deref())
            .await
            .expect("page reads");
        last_key = page.last_key.clone();
        pages.push(page);
        if last_key.is_none() {
            return pages;
        }
        assert!(pages.len() <= BIG_SEND_GROUP as usize, "the walk does not end");
    }
}

async fn check_walks(limit: u32) {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let response = big_send_group(&client).await;
    let sent_ids: HashSet<String> = response.results.iter().map(|r| r.id.clone()).collect();
    let total = sent_ids.len();
    let limit_items = limit as usize;
    if limit > 1 {
        assert_ne!(total % limit_items, 0, "size {total} must not be a multiple of {limit}");
    }

    let pages = walk_pages(&client, &response.send_group_id, limit).await;
    assert_eq!(pages.len(), total.div_ceil(limit_items), "pages for limit {limit}");
    let (last, full) = pages.split_last().expect("at least one page");
    for page in full {
        assert_eq!(page.count as usize, page.items.len());
        assert_eq!(page.items.len(), limit_items, "a page before the last is full");
        assert!(page.last_key.is_some());
    }
    assert_eq!(last.count as usize, last.items.len());
    assert_eq!(last.items.len(), total - limit_items * full.len());
    assert!(last.last_key.is_none(), "lastKey absent on the last page");
    let paged: Vec<&str> = pages
        .iter()
        .flat_map(|p| p.items.iter().map(|r| r.id.as_str()))
        .collect();
    let paged_set: HashSet<&str> = paged.iter().copied().collect();
    assert_eq!(paged.len(), total, "every record once, page walk, limit {limit}");
    assert_eq!(paged_set.len(), total, "no record twice, page walk, limit {limit}");
    assert_eq!(paged_set, sent_ids.iter().map(String::as_str).collect());

    let streamed: Vec<SendRecord> = client
        .results(&response.send_group_id, Some(limit))
        .try_collect()
        .await
        .expect("stream reads");
    let streamed_set: HashSet<String> = streamed.iter().map(|r| r.id.clone()).collect();
    assert_eq!(streamed.len(), total, "every record once, stream, limit {limit}");
    assert_eq!(streamed_set, sent_ids);
}

#[tokio::test]
async fn limit_1_page_walk_and_stream_yield_every_record_exactly_once() {
    check_walks(1).await;
}

#[tokio::test]
async fn limit_7_page_walk_and_stream_yield_every_record_exactly_once() {
    check_walks(7).await;
}

#[tokio::test]
async fn limit_500_page_walk_and_stream_yield_every_record_exactly_once() {
    check_walks(SPEC_RESULT_PAGE_MAX).await;
}

#[tokio::test]
async fn full_last_page_has_no_last_key() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let size = 14;
    let response = send(&client, &shipped(plain_recipients(size))).await;
    let pages = walk_pages(&client, &response.send_group_id, size / 2).await;
    assert_eq!(pages.len(), 2, "no empty trailing page");
    assert!(pages[0].last_key.is_some());
    assert_eq!(pages[1].items.len() as u32, size / 2);
    assert!(pages[1].last_key.is_none());
}

#[tokio::test]
async fn default_page_size_is_100() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let response = big_send_group(&client).await;
    let page = client
        .result_page(&response.send_group_id, None, None)
        .await
        .expect("page reads");
    assert_eq!(page.items.len(), SPEC_RESULT_PAGE_DEFAULT);
    assert_eq!(page.count as usize, SPEC_RESULT_PAGE_DEFAULT);
    assert!(page.last_key.is_some());
}

#[tokio::test]
async fn limit_out_of_range_is_400() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let response = send(&client, &shipped(plain_recipients(3))).await;
    for limit in [0, SPEC_RESULT_PAGE_MAX + 1] {
        let error = client
            .result_page(&response.send_group_id, Some(limit), None)
            .await
            .expect_err("limit refused");
        assert_eq!(error.http_status(), Some(400), "limit {limit}: {error}");
    }
}

#[tokio::test]
async fn non_numeric_limit_is_400() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let response = send(&client, &shipped(plain_recipients(3))).await;
    for limit in ["abc", "ten", "1.5"] {
        let answer = sandbox
            .raw()
            .get(format!(
                "{}/result/sendGroup/{}",
                sandbox.handle.gateway_url(),
                response.send_group_id
            ))
            .query(&[("limit", limit)])
            .header("apikey", DEMO_KEY)
            .header("groupid", DEMO_GROUP)
            .send()
            .await
            .expect("answer");
        assert_eq!(answer.status(), 400, "limit {limit:?}");
    }
}

#[tokio::test]
async fn bogus_last_key_is_400() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let response = send(&client, &shipped(plain_recipients(3))).await;
    for key in ["not-a-key", "00000000-0000-4000-8000-000000000000"] {
        let error = client
            .result_page(&response.send_group_id, Some(1), Some(key))
            .await
            .expect_err("bogus lastKey refused");
        assert_eq!(error.http_status(), Some(400), "lastKey {key:?}: {error}");
    }
}

// ---------------------------------------------------------------- group isolation

async fn raw_get(sandbox: &TestSandbox, key: &str, group: &str, path: &str) -> (u16, serde_json::Value, String) {
    let answer = sandbox
        .raw()
        .get(format!("{}{path}", sandbox.handle.gateway_url()))
        .header("apikey", key)
        .header("groupid", group)
        .send()
        .await
        .expect("answer");
    let status = answer.status().as_u16();
    let text = answer.text().await.expect("body");
    let json = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
    (status, json, text)
}

fn assert_error_body_without_data(json: &serde_json::Value, text: &str, leaks: &[&str]) {
    assert!(
        json["error"].as_str().is_some_and(|e| !e.is_empty()),
        "error body: {text}"
    );
    for field in ["id", "uid", "mobile", "result", "items", "sendGroupId"] {
        assert!(json.get(field).is_none(), "field {field} leaked: {text}");
    }
    for leak in leaks {
        assert!(!text.contains(leak), "{leak} leaked: {text}");
    }
}

#[tokio::test]
async fn result_of_another_group_is_404_with_error_body_and_no_data() {
    let sandbox = TestSandbox::from_toml(&accounts_with_partner()).await;
    let demo = sandbox.client();
    let partner = sandbox.client_as(PARTNER_KEY, PARTNER_GROUP);
    let response = send(&demo, &shipped(plain_recipients(2))).await;
    let row = &response.results[0];

    let error = partner
        .result(&row.id)
        .await
        .expect_err("another group's record is unreachable");
    assert_eq!(error.http_status(), Some(404), "{error}");
    let (status, json, text) = raw_get(&sandbox, PARTNER_KEY, PARTNER_GROUP, &format!("/result/{}", row.id)).await;
    assert_eq!(status, 404);
    assert_error_body_without_data(&json, &text, &[&row.mobile, &row.uid]);

    // The owner still reads it, and the partner reads its own records.
    assert_eq!(demo.result(&row.id).await.expect("owner reads").id, row.id);
    let own = send(
        &partner,
        &GatewayAlimTalkRequest {
            group_id: PARTNER_GROUP.to_string(),
            service: PARTNER_SENDER_KEY.to_string(),
            template: PARTNER_TEMPLATE.to_string(),
            message: PARTNER_TEXT.to_string(),
            numbers: vec![recipient(number_ending(9, "0"), "정하늘", None)],
            ..GatewayAlimTalkRequest::default()
        },
    )
    .await;
    assert_eq!(own.accepted, 1);
    assert_eq!(
        partner.result(&own.results[0].id).await.expect("own record").id,
        own.results[0].id
    );
    let error = demo.result(&own.results[0].id).await.expect_err("isolation both ways");
    assert_eq!(error.http_status(), Some(404), "{error}");
}

#[tokio::test]
async fn send_group_of_another_group_is_404_with_error_body_and_no_data() {
    let sandbox = TestSandbox::from_toml(&accounts_with_partner()).await;
    let demo = sandbox.client();
    let partner = sandbox.client_as(PARTNER_KEY, PARTNER_GROUP);
    let response = send(&demo, &shipped(plain_recipients(3))).await;
    let sgid = &response.send_group_id;

    let error = partner.result_page(sgid, None, None).await.expect_err("unreachable");
    assert_eq!(error.http_status(), Some(404), "{error}");
    let streamed: Result<Vec<SendRecord>, _> = partner.results(sgid, Some(1)).try_collect().await;
    let error = streamed.expect_err("stream yields the 404");
    assert_eq!(error.http_status(), Some(404), "{error}");
    let (status, json, text) = raw_get(
        &sandbox,
        PARTNER_KEY,
        PARTNER_GROUP,
        &format!("/result/sendGroup/{sgid}"),
    )
    .await;
    assert_eq!(status, 404);
    let leaks: Vec<&str> = response.results.iter().map(|r| r.mobile.as_str()).collect();
    assert_error_body_without_data(&json, &text, &leaks);

    // A lastKey taken from the owner's listing does not open it either.
    let first = demo.result_page(sgid, Some(1), None).await.expect("owner reads");
    let key = first.last_key.expect("more pages");
    let error = partner
        .result_page(sgid, Some(1), Some(&key))
        .await
        .expect_err("unreachable");
    assert_eq!(error.http_status(), Some(404), "{error}");
}
