//! Integration tests of the SMS and LMS endpoints `POST {base_url}/sms` and `/sms/lms` against the sandbox: credentials, mapping, EUC-KR byte limits and billing.

mod common;
use common::*;

use msgbatch::api::ledger::{BillingClass, Ledger, LedgerEntry, LedgerKind};
use msgbatch::api::standard::{text_status, SendResponse, TextMessageRequest};
use msgbatch::api::{now_millis, Code, MappingEntry};
use msgbatch::client::{Client, ClientError, ErrorKind};
use msgbatch::sandbox::accounts::{GroupConfig, Prices};
use msgbatch::sandbox::Accounts;
use msgbatch::text::{euc_kr_len, LMS_MAX_BYTES, LMS_SUBJECT_MAX_BYTES, SMS_MAX_BYTES};

/// Which of the two endpoints a request goes to.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Lane {
    Sms,
    Lms,
}

impl Lane {
    fn path(self) -> &'static str {
        match self {
            Lane::Sms => "/sms",
            Lane::Lms => "/sms/lms",
        }
    }
    fn accepted(self) -> &'static str {
        match self {
            Lane::Sms => text_status::SMS_IN_PROGRESS,
            Lane::Lms => text_status::LMS_IN_PROGRESS,
        }
    }
    fn class(self) -> BillingClass {
        match self {
            Lane::Sms => BillingClass::Sms,
            Lane::Lms => BillingClass::Lms,
        }
    }
    fn price(self, prices: &Prices) -> i64 {
        match self {
            Lane::Sms => prices.sms,
            Lane::Lms => prices.lms,
        }
    }
}

async fn send(client: &Client, lane: Lane, request: &TextMessageRequest) -> Result<SendResponse, ClientError> {
    match lane {
        Lane::Sms => client.send_sms(request).await,
        Lane::Lms => client.send_lms(request).await,
    }
}

fn group(id: &str) -> GroupConfig {
    Accounts::demo()
        .groups
        .into_iter()
        .find(|group| group.id == id)
        .expect("group exists in the demo accounts")
}

/// Prices of the demo group, as the built-in accounts define them.
fn demo_prices() -> Prices {
    group(DEMO_GROUP).prices
}

fn text(message: &str, numbers: &[String]) -> TextMessageRequest {
    TextMessageRequest {
        service: SMS_SERVICE,
        message: message.to_string(),
        numbers: numbers.to_vec(),
        group_id: DEMO_GROUP.to_string(),
        callback_no: DEMO_CALLBACK.to_string(),
        ..TextMessageRequest::default()
    }
}

fn mapping(name: &str, var1: &str) -> MappingEntry {
    MappingEntry {
        name: Some(name.to_string()),
        vars: [("VAR1".to_string(), var1.to_string())].into_iter().collect(),
    }
}

/// The HTTP status and service code of a refused call; panics when the call succeeded.
fn refusal(result: Result<SendResponse, ClientError>) -> (u16, String) {
    let error = result.expect_err("the request must be refused");
    assert_eq!(error.kind(), ErrorKind::Service, "{error}");
    (
        error.http_status().expect("an answer came"),
        error.code().expect("the answer carries a code").to_string(),
    )
}

fn charges(ledger: &Ledger) -> Vec<&LedgerEntry> {
    ledger
        .entries
        .iter()
        .filter(|entry| entry.kind == LedgerKind::Charge)
        .collect()
}

async fn demo_ledger(sandbox: &TestSandbox) -> Ledger {
    let client = sandbox.client();
    sandbox.admin(&client).ledger().await.expect("demo ledger")
}

async fn assert_nothing_charged(sandbox: &TestSandbox) {
    let ledger = demo_ledger(sandbox).await;
    assert!(
        ledger.entries.is_empty(),
        "unexpected ledger entries: {:?}",
        ledger.entries
    );
    assert_eq!(ledger.balance, group(DEMO_GROUP).balance);
}

/// Sends `message` to one number and answers its status; asserts the fixture's EUC-KR length first.
async fn status_of(sandbox: &TestSandbox, lane: Lane, serial: u32, message: &str, bytes: usize) -> String {
    assert_eq!(euc_kr_len(message), Ok(bytes), "fixture length");
    let response = send(&sandbox.client(), lane, &text(message, &[number_ending(serial, "10")]))
        .await
        .expect("answered 200");
    assert_eq!(response.value.len(), 1);
    response.value[0].status.clone()
}

/// Every charge of the ledger belongs to an accepted recipient of `response`, one each, at the price.
fn assert_charged_exactly_accepted(ledger: &Ledger, response: &SendResponse, lane: Lane) {
    let prices = demo_prices();
    let accepted: Vec<String> = response
        .value
        .iter()
        .filter(|r| r.status == lane.accepted())
        .map(|r| r.uid.to_string())
        .collect();
    let charged: Vec<String> = charges(ledger).iter().map(|c| c.reference.clone()).collect();
    assert_eq!(charged, accepted, "charges are exactly the accepted recipients");
    for charge in charges(ledger) {
        assert_eq!(charge.billing_class, lane.class());
        assert_eq!(charge.amount, lane.price(&prices));
    }
}

#[tokio::test]
async fn sms_accepted_recipients_answer_sms_00_with_uid_date_count_and_total() {
    let sandbox = TestSandbox::demo().await;
    let numbers: Vec<String> = (1..=3).map(|serial| number_ending(serial, "10")).collect();
    let before = now_millis();
    let response = sandbox
        .client()
        .send_sms(&text("배송 안내입니다.", &numbers))
        .await
        .expect("sent");
    let after = now_millis();
    assert_eq!(response.status, "success");
    assert!(
        matches!(response.code, Code::Text(_)),
        "SMS code is a string: {:?}",
        response.code
    );
    assert_eq!(response.total, numbers.len() as u64);
    assert_eq!(response.count, numbers.len() as u64);
    assert_eq!(response.value.len(), numbers.len());
    for result in &response.value {
        assert_eq!(result.status, text_status::SMS_IN_PROGRESS);
        assert!((before..=after).contains(&result.date));
    }
    let mut uids: Vec<u64> = response.value.iter().map(|r| r.uid).collect();
    uids.sort_unstable();
    uids.dedup();
    assert_eq!(uids.len(), numbers.len());
    let ledger = demo_ledger(&sandbox).await;
    assert_charged_exactly_accepted(&ledger, &response, Lane::Sms);
    assert_eq!(
        group(DEMO_GROUP).balance - ledger.balance,
        demo_prices().sms * numbers.len() as i64
    );
    let recipients: Vec<&str> = ledger.entries.iter().map(|e| e.recipient.as_str()).collect();
    assert_eq!(recipients, numbers.iter().map(String::as_str).collect::<Vec<_>>());
}

#[tokio::test]
async fn lms_accepted_recipients_answer_mms_0000_and_bill_lms() {
    let sandbox = TestSandbox::demo().await;
    let numbers: Vec<String> = (1..=2).map(|serial| number_ending(serial, "10")).collect();
    let request = TextMessageRequest {
        subject: Some("안내".to_string()),
        ..text(&"긴 안내문입니다. ".repeat(20), &numbers)
    };
    let response = sandbox.client().send_lms(&request).await.expect("sent");
    assert_eq!(response.status, "success");
    assert!(response.value.iter().all(|r| r.status == text_status::LMS_IN_PROGRESS));
    assert_eq!(response.total, numbers.len() as u64);
    assert_charged_exactly_accepted(&demo_ledger(&sandbox).await, &response, Lane::Lms);
}

#[tokio::test]
async fn sms_and_lms_answers_carry_a_version_string_and_no_url_or_message() {
    // Spec, "Versioning": "Responses of the standard deployment carry a `version` field (string,
    // API version)"; the SMS response lists no `url` or `message`. Read as JSON, not through the
    // client's type, where `version` is optional.
    let sandbox = TestSandbox::demo().await;
    for lane in [Lane::Sms, Lane::Lms] {
        let response = sandbox
            .raw()
            .post(format!("{}{}", sandbox.handle.base_url(), lane.path()))
            .header("apikey", DEMO_KEY)
            .header("groupId", DEMO_GROUP)
            .json(&text("안내", &[number_ending(1, "10")]))
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 200, "{lane:?}");
        let answer: serde_json::Value = response.json().await.expect("json");
        assert!(
            answer["version"].as_str().is_some_and(|v| !v.is_empty()),
            "{lane:?}: version is a string: {answer}"
        );
        assert!(answer.get("url").is_none(), "{lane:?}: {answer}");
        assert!(answer.get("message").is_none(), "{lane:?}: {answer}");
    }
}

#[tokio::test]
async fn sms_error_recipients_answer_error_and_only_accepted_ones_are_charged() {
    let sandbox = TestSandbox::demo().await;
    for (lane, serial) in [(Lane::Sms, 1), (Lane::Lms, 5)] {
        let numbers = vec![
            number_ending(serial, "10"),
            number_ending(serial + 1, "96"),
            "12345".to_string(),
            number_ending(serial + 2, "10"),
        ];
        let before = demo_ledger(&sandbox).await;
        let response = send(&sandbox.client(), lane, &text("안내", &numbers))
            .await
            .expect("sent");
        let statuses: Vec<&str> = response.value.iter().map(|r| r.status.as_str()).collect();
        assert_eq!(
            statuses,
            vec![lane.accepted(), text_status::ERROR, text_status::ERROR, lane.accepted()],
            "{lane:?}"
        );
        assert_eq!(response.count, 2);
        assert_eq!(response.total, 4);
        let mut ledger = demo_ledger(&sandbox).await;
        ledger.entries.drain(..before.entries.len());
        assert_charged_exactly_accepted(&ledger, &response, lane);
        assert_eq!(before.balance - ledger.balance, 2 * lane.price(&demo_prices()));
    }
}

#[tokio::test]
async fn sms_without_group_id_header_is_401_err_100() {
    let sandbox = TestSandbox::demo().await;
    let body = text("안내", &[number_ending(1, "10")]);
    for lane in [Lane::Sms, Lane::Lms] {
        let response = sandbox
            .raw()
            .post(format!("{}{}", sandbox.handle.base_url(), lane.path()))
            .header("apikey", DEMO_KEY)
            .json(&body)
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 401, "{lane:?}");
        let answer: serde_json::Value = response.json().await.expect("json");
        assert_eq!(answer["code"], "ERR_100", "{lane:?}: {answer}");
    }
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn sms_without_apikey_header_is_401_err_100() {
    let sandbox = TestSandbox::demo().await;
    let body = text("안내", &[number_ending(1, "10")]);
    for lane in [Lane::Sms, Lane::Lms] {
        let response = sandbox
            .raw()
            .post(format!("{}{}", sandbox.handle.base_url(), lane.path()))
            .header("groupId", DEMO_GROUP)
            .json(&body)
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 401, "{lane:?}");
        let answer: serde_json::Value = response.json().await.expect("json");
        assert_eq!(answer["code"], "ERR_100", "{lane:?}: {answer}");
    }
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn sms_with_both_headers_is_accepted_by_raw_request() {
    // The control for the two tests above: the same hand-made request with both headers goes.
    let sandbox = TestSandbox::demo().await;
    let response = sandbox
        .raw()
        .post(format!("{}/sms", sandbox.handle.base_url()))
        .header("apikey", DEMO_KEY)
        .header("groupId", DEMO_GROUP)
        .json(&text("안내", &[number_ending(1, "10")]))
        .send()
        .await
        .expect("answered");
    assert_eq!(response.status(), 200);
    let answer: SendResponse = response.json().await.expect("send response");
    assert_eq!(answer.value[0].status, text_status::SMS_IN_PROGRESS);
}

#[tokio::test]
async fn sms_with_wrong_key_or_group_of_another_group_is_401_err_102() {
    let sandbox = TestSandbox::demo().await;
    let request = text("안내", &[number_ending(1, "10")]);
    let naming_other = TextMessageRequest {
        group_id: OTHER_GROUP.to_string(),
        ..request.clone()
    };
    let cases = [
        ("wrong key", sandbox.client_as("not-a-key", DEMO_GROUP), request.clone()),
        (
            "demo key, other group header and body",
            sandbox.client_as(DEMO_KEY, OTHER_GROUP),
            naming_other.clone(),
        ),
        ("demo key and header, other body", sandbox.client(), naming_other),
        (
            "demo key and body, other header",
            sandbox.client_as(DEMO_KEY, OTHER_GROUP),
            request.clone(),
        ),
        (
            "other key, demo header and body",
            sandbox.client_as(OTHER_KEY, DEMO_GROUP),
            request,
        ),
    ];
    for (case, client, request) in cases {
        for lane in [Lane::Sms, Lane::Lms] {
            assert_eq!(
                refusal(send(&client, lane, &request).await),
                (401, "ERR_102".to_string()),
                "{case} {lane:?}"
            );
        }
    }
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn sms_callback_no_must_be_registered() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let other_groups_callback = group(OTHER_GROUP).callback_numbers[0].clone();
    for callback in ["0299990000".to_string(), other_groups_callback, String::new()] {
        for lane in [Lane::Sms, Lane::Lms] {
            let request = TextMessageRequest {
                callback_no: callback.clone(),
                ..text("안내", &[number_ending(1, "10")])
            };
            let (http, code) = refusal(send(&client, lane, &request).await);
            assert_eq!(http, 400, "{callback:?} {lane:?}");
            assert_eq!(code, "SBX_CALLBACK_NOT_REGISTERED", "{callback:?} {lane:?}");
        }
    }
    assert_nothing_charged(&sandbox).await;
    // Every registered number of the group goes.
    for callback in group(DEMO_GROUP).callback_numbers {
        let request = TextMessageRequest {
            callback_no: callback.clone(),
            ..text("안내", &[number_ending(1, "10")])
        };
        let response = client.send_sms(&request).await.expect("registered callback");
        assert_eq!(response.value[0].status, text_status::SMS_IN_PROGRESS, "{callback}");
    }
}

#[tokio::test]
async fn sms_mapping_fills_name_and_var1_by_position() {
    // The filled text decides the outcome: one entry fills to exactly 90 bytes, the other to 91.
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let message = "#{name}:#{VAR1}";
    let fits = mapping(&"a".repeat(40), &"b".repeat(49));
    let too_long = mapping(&"가".repeat(20), &"b".repeat(50));
    let filled =
        |entry: &MappingEntry| format!("{}:{}", entry.name.as_deref().unwrap(), entry.vars.get("VAR1").unwrap());
    assert!(euc_kr_len(message).unwrap() <= SMS_MAX_BYTES);
    assert_eq!(euc_kr_len(&filled(&fits)), Ok(SMS_MAX_BYTES));
    assert_eq!(euc_kr_len(&filled(&too_long)), Ok(SMS_MAX_BYTES + 1));

    let numbers = vec![number_ending(1, "10"), number_ending(2, "10")];
    let in_order = TextMessageRequest {
        mapping: Some(vec![fits.clone(), too_long.clone()]),
        ..text(message, &numbers)
    };
    let response = client.send_sms(&in_order).await.expect("sent");
    assert_eq!(response.value[0].status, text_status::SMS_IN_PROGRESS);
    assert_eq!(response.value[1].status, text_status::ERROR);

    let swapped = TextMessageRequest {
        mapping: Some(vec![too_long, fits]),
        ..text(message, &numbers)
    };
    let response = client.send_sms(&swapped).await.expect("sent");
    assert_eq!(response.value[0].status, text_status::ERROR);
    assert_eq!(response.value[1].status, text_status::SMS_IN_PROGRESS);

    let ledger = demo_ledger(&sandbox).await;
    let recipients: Vec<&str> = ledger.entries.iter().map(|e| e.recipient.as_str()).collect();
    assert_eq!(recipients, vec![numbers[0].as_str(), numbers[1].as_str()]);
}

#[tokio::test]
async fn sms_mapping_entry_without_a_used_variable_is_error_for_that_recipient() {
    let sandbox = TestSandbox::demo().await;
    let numbers = vec![number_ending(1, "10"), number_ending(2, "10")];
    let no_var1 = MappingEntry {
        name: Some("김".to_string()),
        ..MappingEntry::default()
    };
    let request = TextMessageRequest {
        mapping: Some(vec![mapping("이", "A-1"), no_var1]),
        ..text("#{name}님 #{VAR1}", &numbers)
    };
    let response = sandbox.client().send_sms(&request).await.expect("sent");
    assert_eq!(response.value[0].status, text_status::SMS_IN_PROGRESS);
    assert_eq!(response.value[1].status, text_status::ERROR);
    assert_charged_exactly_accepted(&demo_ledger(&sandbox).await, &response, Lane::Sms);
}

#[tokio::test]
async fn sms_mapping_length_not_equal_to_numbers_is_400() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let numbers = vec![number_ending(1, "10"), number_ending(2, "10")];
    for entries in [0, 1, 3] {
        for lane in [Lane::Sms, Lane::Lms] {
            let request = TextMessageRequest {
                mapping: Some(vec![mapping("김", "1"); entries]),
                ..text("#{name} #{VAR1}", &numbers)
            };
            let (http, code) = refusal(send(&client, lane, &request).await);
            assert_eq!(http, 400, "{entries} entries for {} numbers, {lane:?}", numbers.len());
            assert_eq!(code, "SBX_MAPPING_LENGTH");
        }
    }
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn sms_ascii_90_bytes_accepted_and_91_refused() {
    let sandbox = TestSandbox::demo().await;
    let at_limit = "a".repeat(SMS_MAX_BYTES);
    let over = "a".repeat(SMS_MAX_BYTES + 1);
    assert_eq!(
        status_of(&sandbox, Lane::Sms, 1, &at_limit, 90).await,
        text_status::SMS_IN_PROGRESS
    );
    assert_eq!(status_of(&sandbox, Lane::Sms, 2, &over, 91).await, text_status::ERROR);
    assert_eq!(charges(&demo_ledger(&sandbox).await).len(), 1);
}

#[tokio::test]
async fn sms_hangul_45_syllables_accepted_and_45_plus_one_ascii_refused() {
    let sandbox = TestSandbox::demo().await;
    let at_limit = "가".repeat(45);
    let over = format!("{at_limit}a");
    assert_eq!(
        status_of(&sandbox, Lane::Sms, 1, &at_limit, 90).await,
        text_status::SMS_IN_PROGRESS
    );
    assert_eq!(status_of(&sandbox, Lane::Sms, 2, &over, 91).await, text_status::ERROR);
    // 45 syllables are 45 characters but 90 bytes: the limit is not counted in characters or UTF-8.
    assert_eq!(at_limit.chars().count(), 45);
    assert_eq!(at_limit.len(), 135);
    let mixed = format!("{}{}", "가".repeat(30), "a".repeat(30));
    assert_eq!(
        status_of(&sandbox, Lane::Sms, 3, &mixed, 90).await,
        text_status::SMS_IN_PROGRESS
    );
    let ledger = demo_ledger(&sandbox).await;
    assert_eq!(charges(&ledger).len(), 2);
    assert!(charges(&ledger).iter().all(|c| c.billing_class == BillingClass::Sms));
}

#[tokio::test]
async fn lms_ascii_2000_bytes_accepted_and_2001_refused() {
    let sandbox = TestSandbox::demo().await;
    let at_limit = "a".repeat(LMS_MAX_BYTES);
    let over = "a".repeat(LMS_MAX_BYTES + 1);
    assert_eq!(
        status_of(&sandbox, Lane::Lms, 1, &at_limit, 2_000).await,
        text_status::LMS_IN_PROGRESS
    );
    assert_eq!(
        status_of(&sandbox, Lane::Lms, 2, &over, 2_001).await,
        text_status::ERROR
    );
    assert_eq!(charges(&demo_ledger(&sandbox).await).len(), 1);
}

#[tokio::test]
async fn lms_hangul_1000_syllables_accepted_and_1000_plus_one_ascii_refused() {
    let sandbox = TestSandbox::demo().await;
    let at_limit = "가".repeat(1_000);
    let over = format!("{at_limit}a");
    assert_eq!(
        status_of(&sandbox, Lane::Lms, 1, &at_limit, 2_000).await,
        text_status::LMS_IN_PROGRESS
    );
    assert_eq!(
        status_of(&sandbox, Lane::Lms, 2, &over, 2_001).await,
        text_status::ERROR
    );
    let ledger = demo_ledger(&sandbox).await;
    assert_eq!(charges(&ledger).len(), 1);
    assert_eq!(charges(&ledger)[0].billing_class, BillingClass::Lms);
}

#[tokio::test]
async fn sms_over_90_bytes_goes_as_lms() {
    // The same 91-byte text the SMS endpoint refuses is within the LMS limit.
    let sandbox = TestSandbox::demo().await;
    let text91 = format!("{}a", "가".repeat(45));
    assert_eq!(status_of(&sandbox, Lane::Sms, 1, &text91, 91).await, text_status::ERROR);
    assert_eq!(
        status_of(&sandbox, Lane::Lms, 2, &text91, 91).await,
        text_status::LMS_IN_PROGRESS
    );
    let ledger = demo_ledger(&sandbox).await;
    assert_eq!(charges(&ledger).len(), 1);
    assert_eq!(charges(&ledger)[0].billing_class, BillingClass::Lms);
}

#[tokio::test]
async fn sms_and_lms_refuse_an_emoji() {
    let sandbox = TestSandbox::demo().await;
    let message = "안녕하세요 😀";
    assert!(euc_kr_len(message).is_err(), "the emoji has no EUC-KR form");
    for (serial, lane) in [(1, Lane::Sms), (2, Lane::Lms)] {
        let response = send(&sandbox.client(), lane, &text(message, &[number_ending(serial, "10")]))
            .await
            .expect("answered 200");
        assert_eq!(response.value[0].status, text_status::ERROR, "{lane:?}");
        assert_eq!(response.count, 0);
    }
    assert_nothing_charged(&sandbox).await;
    // The same text without the emoji goes.
    let plain = message.trim_end_matches('😀');
    let response = sandbox
        .client()
        .send_sms(&text(plain, &[number_ending(3, "10")]))
        .await
        .expect("sent");
    assert_eq!(response.value[0].status, text_status::SMS_IN_PROGRESS);
}

#[tokio::test]
async fn lms_subject_over_40_bytes_is_400() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let subjects = [
        ("a".repeat(LMS_SUBJECT_MAX_BYTES), LMS_SUBJECT_MAX_BYTES, true),
        ("가".repeat(LMS_SUBJECT_MAX_BYTES / 2), LMS_SUBJECT_MAX_BYTES, true),
        ("a".repeat(LMS_SUBJECT_MAX_BYTES + 1), LMS_SUBJECT_MAX_BYTES + 1, false),
        (
            format!("{}a", "가".repeat(LMS_SUBJECT_MAX_BYTES / 2)),
            LMS_SUBJECT_MAX_BYTES + 1,
            false,
        ),
        ("가".repeat(21), 42, false),
    ];
    let mut accepted = 0;
    for (serial, (subject, bytes, fits)) in (1..).zip(subjects) {
        assert_eq!(euc_kr_len(&subject), Ok(bytes), "fixture length");
        let request = TextMessageRequest {
            subject: Some(subject.clone()),
            ..text("긴 안내문", &[number_ending(serial, "10")])
        };
        let result = client.send_lms(&request).await;
        if fits {
            let response = result.expect("a subject of 40 bytes goes");
            assert_eq!(response.value[0].status, text_status::LMS_IN_PROGRESS);
            accepted += 1;
        } else {
            let (http, code) = refusal(result);
            assert_eq!(http, 400, "subject of {bytes} bytes");
            assert_eq!(code, "SBX_SUBJECT_TOO_LONG");
        }
    }
    assert_eq!(charges(&demo_ledger(&sandbox).await).len(), accepted);
}

#[tokio::test]
async fn text_sent_by_other_group_never_charges_or_counts_for_demo() {
    let sandbox = TestSandbox::demo().await;
    let demo = sandbox.client();
    let before_ledger = sandbox.admin(&demo).ledger().await.expect("ledger");
    let before_sent = sandbox.admin(&demo).sent().await.expect("sent");
    let other = sandbox.other();
    let other_group = group(OTHER_GROUP);
    let numbers = vec![number_ending(1, "10"), number_ending(2, "10")];
    let own = TextMessageRequest {
        service: other_group.sms_services[0],
        group_id: OTHER_GROUP.to_string(),
        callback_no: other_group.callback_numbers[0].clone(),
        ..text("안내", &numbers)
    };
    for lane in [Lane::Sms, Lane::Lms] {
        let response = send(&other, lane, &own).await.expect("other group sends");
        assert!(response.value.iter().all(|r| r.status == lane.accepted()), "{lane:?}");
    }
    // The other group cannot borrow the demo group's service, callback number or group.
    let demo_service = TextMessageRequest {
        service: SMS_SERVICE,
        ..own.clone()
    };
    assert_eq!(refusal(other.send_sms(&demo_service).await).1, "SBX_UNKNOWN_SERVICE");
    let demo_callback = TextMessageRequest {
        callback_no: DEMO_CALLBACK.to_string(),
        ..own.clone()
    };
    assert_eq!(
        refusal(other.send_sms(&demo_callback).await).1,
        "SBX_CALLBACK_NOT_REGISTERED"
    );
    let demo_group = TextMessageRequest {
        group_id: DEMO_GROUP.to_string(),
        ..own
    };
    assert_eq!(refusal(other.send_sms(&demo_group).await), (401, "ERR_102".to_string()));

    assert_eq!(sandbox.admin(&demo).ledger().await.expect("ledger"), before_ledger);
    assert_eq!(sandbox.admin(&demo).sent().await.expect("sent"), before_sent);
    let other_ledger = sandbox.admin(&other).ledger().await.expect("other ledger");
    assert_eq!(other_ledger.group_id, OTHER_GROUP);
    assert_eq!(other_ledger.entries.len(), 2 * numbers.len());
    assert!(other_ledger.entries.iter().all(|e| e.group_id == OTHER_GROUP));
    let other_sent = sandbox.admin(&other).sent().await.expect("other sent");
    assert_eq!(other_sent.total, 2 * numbers.len() as u64);
}
