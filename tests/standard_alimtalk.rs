//! Integration tests of the standard notification endpoint `POST {base_url}/alimTalk` against the sandbox: filling, results, billing, every refusal.

mod common;
use common::*;

use msgbatch::api::ledger::{BillingClass, Ledger, LedgerEntry, LedgerKind};
use msgbatch::api::standard::{AlimTalkRequest, SendResponse};
use msgbatch::api::{now_millis, Code, NumberEntry};
use msgbatch::client::{ClientError, ErrorKind};
use msgbatch::sandbox::accounts::{GroupConfig, Prices, TemplateConfig};
use msgbatch::sandbox::Accounts;
use msgbatch::text::{euc_kr_len, SMS_MAX_BYTES};

const ORDER_SHIPPED: &str = "ORDER_SHIPPED";
const PAYMENT_DONE: &str = "PAYMENT_DONE";

fn demo_group() -> GroupConfig {
    Accounts::demo()
        .groups
        .into_iter()
        .find(|group| group.id == DEMO_GROUP)
        .expect("demo group exists")
}

/// Prices of the demo group, as the built-in accounts define them.
fn demo_prices() -> Prices {
    demo_group().prices
}

/// A template of the demo group, as the built-in accounts define it.
fn demo_template(code: &str) -> TemplateConfig {
    demo_group()
        .templates
        .into_iter()
        .find(|template| template.code == code)
        .expect("demo template exists")
}

fn recipient(key: u64, hp: &str, name: Option<&str>, vars: &[(&str, &str)]) -> NumberEntry {
    NumberEntry {
        key,
        hp: hp.to_string(),
        name: name.map(str::to_string),
        vars: vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
    }
}

fn order_shipped(numbers: Vec<NumberEntry>) -> AlimTalkRequest {
    AlimTalkRequest {
        service: ALIMTALK_SERVICE,
        template: ORDER_SHIPPED.to_string(),
        group_id: DEMO_GROUP.to_string(),
        message: ORDER_SHIPPED_TEXT.to_string(),
        numbers,
        ..AlimTalkRequest::default()
    }
}

fn payment_done(numbers: Vec<NumberEntry>, title: Option<&str>) -> AlimTalkRequest {
    AlimTalkRequest {
        service: ALIMTALK_SERVICE,
        template: PAYMENT_DONE.to_string(),
        group_id: DEMO_GROUP.to_string(),
        message: demo_template(PAYMENT_DONE).text,
        numbers,
        title: title.map(str::to_string),
        ..AlimTalkRequest::default()
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

fn charges(ledger: &Ledger, class: BillingClass) -> Vec<&LedgerEntry> {
    ledger
        .entries
        .iter()
        .filter(|entry| entry.kind == LedgerKind::Charge && entry.billing_class == class)
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
    assert_eq!(ledger.balance, demo_group().balance);
}

#[tokio::test]
async fn alimtalk_success_answers_one_result_per_recipient_with_uid_date_and_ok() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let numbers = vec![
        recipient(1, &number_ending(1, "11"), Some("김민수"), &[("VAR1", "A-100")]),
        recipient(2, &number_ending(2, "12"), Some("이영희"), &[("VAR1", "A-200")]),
        recipient(3, &number_ending(3, "13"), Some("박철수"), &[("VAR1", "A-300")]),
    ];
    let before = now_millis();
    let response = client
        .send_alimtalk(&order_shipped(numbers.clone()))
        .await
        .expect("sent");
    let after = now_millis();

    assert_eq!(response.status, "success");
    assert!(
        response.version.as_deref().is_some_and(|v| !v.is_empty()),
        "version is a string"
    );
    assert!(
        chrono::NaiveDateTime::parse_from_str(&response.datetime, "%Y-%m-%d %H:%M:%S").is_ok(),
        "datetime {:?} is YYYY-MM-DD HH:mm:ss",
        response.datetime
    );
    assert!(
        matches!(response.code, Code::Number(_)),
        "code is a number: {:?}",
        response.code
    );
    assert_eq!(response.value.len(), numbers.len());
    assert_eq!(response.total, numbers.len() as u64);
    assert_eq!(response.count, numbers.len() as u64);
    for result in &response.value {
        assert_eq!(result.status, "OK");
        assert!(
            (before..=after).contains(&result.date),
            "date {} is epoch ms of the send",
            result.date
        );
    }
    let mut uids: Vec<u64> = response.value.iter().map(|r| r.uid).collect();
    uids.sort_unstable();
    uids.dedup();
    assert_eq!(uids.len(), numbers.len(), "every recipient has its own uid");
}

#[tokio::test]
async fn alimtalk_charges_each_delivered_recipient_the_demo_alimtalk_price() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let prices = demo_prices();
    let numbers: Vec<NumberEntry> = (1..=4)
        .map(|serial| {
            recipient(
                serial.into(),
                &number_ending(serial, "20"),
                Some("고객"),
                &[("VAR1", "X")],
            )
        })
        .collect();
    let before = demo_ledger(&sandbox).await;
    let response = client
        .send_alimtalk(&order_shipped(numbers.clone()))
        .await
        .expect("sent");
    let ledger = demo_ledger(&sandbox).await;

    let alimtalk = charges(&ledger, BillingClass::Alimtalk);
    assert_eq!(alimtalk.len(), numbers.len());
    assert_eq!(ledger.entries.len(), numbers.len(), "nothing but alimtalk charges");
    for (result, entry) in response.value.iter().zip(&numbers) {
        let charge = alimtalk
            .iter()
            .find(|c| c.reference == result.uid.to_string())
            .expect("a charge per uid");
        assert_eq!(charge.amount, prices.alimtalk);
        assert_eq!(charge.recipient, entry.hp);
        assert_eq!(charge.group_id, DEMO_GROUP);
    }
    assert_eq!(before.balance - ledger.balance, prices.alimtalk * numbers.len() as i64);
}

#[tokio::test]
async fn alimtalk_fills_name_and_var1_into_the_text_its_fallback_sms_carries() {
    // The filled text is observable through the fallback: it goes as SMS or LMS by its EUC-KR length.
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let prices = demo_prices();
    let long_var = "0".repeat(50);
    let long_name = "가".repeat(25);
    let cases = [
        (number_ending(1, "91"), "김", "1"),
        (number_ending(2, "91"), "김", long_var.as_str()),
        (number_ending(3, "91"), long_name.as_str(), "1"),
    ];
    let template_bytes = euc_kr_len(ORDER_SHIPPED_TEXT).unwrap();
    assert!(
        template_bytes <= SMS_MAX_BYTES,
        "the unfilled template alone fits an SMS"
    );
    let filled: Vec<usize> = cases
        .iter()
        .map(|(_, name, var1)| {
            euc_kr_len(&ORDER_SHIPPED_TEXT.replace("#{이름}", name).replace("#{VAR1}", var1)).unwrap()
        })
        .collect();
    assert!(filled[0] <= SMS_MAX_BYTES && filled[1] > SMS_MAX_BYTES && filled[2] > SMS_MAX_BYTES);

    let numbers = cases
        .iter()
        .enumerate()
        .map(|(index, (hp, name, var1))| recipient(index as u64 + 1, hp, Some(name), &[("VAR1", var1)]))
        .collect();
    let request = AlimTalkRequest {
        alter: Some(true),
        callback_no: Some(DEMO_CALLBACK.to_string()),
        ..order_shipped(numbers)
    };
    let response = client.send_alimtalk(&request).await.expect("sent");
    let ledger = demo_ledger(&sandbox).await;
    for ((result, bytes), (hp, _, _)) in response.value.iter().zip(&filled).zip(&cases) {
        assert!(result.status.starts_with("CH_"), "{}", result.status);
        let (class, price) = if *bytes <= SMS_MAX_BYTES {
            (BillingClass::FallbackSms, prices.fallback_sms)
        } else {
            (BillingClass::FallbackLms, prices.fallback_lms)
        };
        let charge = ledger
            .entries
            .iter()
            .find(|e| e.reference == result.uid.to_string())
            .expect("fallback charged");
        assert_eq!(charge.billing_class, class, "fallback of {bytes} filled bytes for {hp}");
        assert_eq!(charge.amount, price);
    }
}

#[tokio::test]
async fn alimtalk_missing_variable_fails_that_recipient_with_err_while_others_succeed() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let prices = demo_prices();
    let numbers = vec![
        recipient(1, &number_ending(1, "30"), Some("김민수"), &[("VAR1", "A-1")]),
        recipient(2, &number_ending(2, "30"), Some("이영희"), &[]),
        recipient(3, &number_ending(3, "30"), None, &[("VAR1", "A-3")]),
        recipient(4, &number_ending(4, "30"), Some("박철수"), &[("VAR1", "A-4")]),
    ];
    let response = client
        .send_alimtalk(&order_shipped(numbers.clone()))
        .await
        .expect("sent");

    let statuses: Vec<&str> = response.value.iter().map(|r| r.status.as_str()).collect();
    assert_eq!(statuses[0], "OK");
    assert!(statuses[1].starts_with("ERR_"), "missing VAR1: {}", statuses[1]);
    assert!(statuses[2].starts_with("ERR_"), "missing name: {}", statuses[2]);
    assert_eq!(statuses[3], "OK");
    assert_eq!(response.total, numbers.len() as u64);
    assert_eq!(response.count, 2);

    let ledger = demo_ledger(&sandbox).await;
    let charged: Vec<&str> = ledger.entries.iter().map(|e| e.reference.as_str()).collect();
    assert_eq!(
        charged,
        vec![response.value[0].uid.to_string(), response.value[3].uid.to_string()],
        "only the filled recipients are charged"
    );
    assert!(ledger.entries.iter().all(|e| e.amount == prices.alimtalk));
}

#[tokio::test]
async fn alimtalk_channel_failure_with_alter_charges_fallback_sms_and_no_alimtalk() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let prices = demo_prices();
    let delivered = number_ending(1, "40");
    let failing = number_ending(2, "91");
    let request = AlimTalkRequest {
        alter: Some(true),
        callback_no: Some(DEMO_CALLBACK.to_string()),
        ..order_shipped(vec![
            recipient(1, &delivered, Some("김"), &[("VAR1", "1")]),
            recipient(2, &failing, Some("이"), &[("VAR1", "2")]),
        ])
    };
    let response = client.send_alimtalk(&request).await.expect("sent");
    assert_eq!(response.value[0].status, "OK");
    assert!(
        response.value[1].status.starts_with("CH_"),
        "{}",
        response.value[1].status
    );

    let ledger = demo_ledger(&sandbox).await;
    let alimtalk = charges(&ledger, BillingClass::Alimtalk);
    assert_eq!(alimtalk.len(), 1);
    assert_eq!(alimtalk[0].recipient, delivered);
    assert_eq!(alimtalk[0].amount, prices.alimtalk);
    let fallback = charges(&ledger, BillingClass::FallbackSms);
    assert_eq!(fallback.len(), 1);
    assert_eq!(fallback[0].recipient, failing);
    assert_eq!(fallback[0].reference, response.value[1].uid.to_string());
    assert_eq!(fallback[0].amount, prices.fallback_sms);
    assert_eq!(ledger.entries.len(), 2, "{:?}", ledger.entries);
}

#[tokio::test]
async fn alimtalk_channel_failure_without_alter_charges_nothing() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let request = order_shipped(vec![recipient(
        1,
        &number_ending(1, "91"),
        Some("김"),
        &[("VAR1", "1")],
    )]);
    let response = client.send_alimtalk(&request).await.expect("sent");
    assert!(
        response.value[0].status.starts_with("CH_"),
        "{}",
        response.value[0].status
    );
    assert_eq!(response.count, 0);
    assert_eq!(response.total, 1);
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn alimtalk_title_template_is_sent_with_its_registered_title() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let title = demo_template(PAYMENT_DONE)
        .title
        .expect("PAYMENT_DONE is a title template");
    let request = payment_done(
        vec![recipient(1, &number_ending(1, "50"), Some("김"), &[("VAR1", "12,000")])],
        Some(&title),
    );
    let response = client.send_alimtalk(&request).await.expect("sent");
    assert_eq!(response.value[0].status, "OK");
    let ledger = demo_ledger(&sandbox).await;
    assert_eq!(charges(&ledger, BillingClass::Alimtalk).len(), 1);
}

#[tokio::test]
async fn alimtalk_title_template_without_title_is_refused() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let numbers = vec![recipient(1, &number_ending(1, "50"), Some("김"), &[("VAR1", "12,000")])];
    for title in [None, Some("")] {
        let (http, code) = refusal(client.send_alimtalk(&payment_done(numbers.clone(), title)).await);
        assert_eq!(http, 400);
        assert_eq!(code, "SBX_TITLE_REQUIRED", "title {title:?}");
    }
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn alimtalk_title_template_with_another_title_is_refused() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let title = demo_template(PAYMENT_DONE).title.expect("title template");
    let numbers = vec![recipient(1, &number_ending(1, "50"), Some("김"), &[("VAR1", "12,000")])];
    let wrong = format!("{title}!");
    let (http, code) = refusal(client.send_alimtalk(&payment_done(numbers, Some(&wrong))).await);
    assert_eq!(http, 400);
    assert_eq!(code, "SBX_TITLE_MISMATCH");
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn alimtalk_message_not_equal_to_the_registered_text_is_refused() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let numbers = vec![recipient(1, &number_ending(1, "60"), Some("김"), &[("VAR1", "1")])];
    let variants = [
        format!("{ORDER_SHIPPED_TEXT} "),
        ORDER_SHIPPED_TEXT.replace("발송", "배송"),
        demo_template(PAYMENT_DONE).text,
        String::new(),
    ];
    for message in variants {
        let request = AlimTalkRequest {
            message: message.clone(),
            ..order_shipped(numbers.clone())
        };
        let (http, code) = refusal(client.send_alimtalk(&request).await);
        assert_eq!(http, 400, "{message:?}");
        assert_eq!(code, "SBX_TEMPLATE_MISMATCH", "{message:?}");
    }
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn alimtalk_template_not_of_the_service_is_refused() {
    // A second notification service of the demo group with a template of its own.
    let mut accounts = Accounts::demo();
    let demo = accounts
        .groups
        .iter_mut()
        .find(|g| g.id == DEMO_GROUP)
        .expect("demo group");
    let second_service = ALIMTALK_SERVICE + 1;
    demo.alimtalk_services.push(second_service);
    demo.templates.push(TemplateConfig {
        code: "SECOND_SERVICE_NOTICE".to_string(),
        service: Some(second_service),
        sender_key: None,
        text: "#{이름}님, 안내드립니다.".to_string(),
        title: None,
        buttons: Vec::new(),
    });
    let sandbox = TestSandbox::with(accounts).await;
    let client = sandbox.client();
    let numbers = vec![recipient(1, &number_ending(1, "70"), Some("김"), &[("VAR1", "1")])];
    let of_second = AlimTalkRequest {
        template: "SECOND_SERVICE_NOTICE".to_string(),
        message: "#{이름}님, 안내드립니다.".to_string(),
        ..order_shipped(numbers.clone())
    };

    let (http, code) = refusal(client.send_alimtalk(&of_second).await);
    assert_eq!(http, 400);
    assert_eq!(code, "SBX_UNKNOWN_TEMPLATE");
    let order_on_second = AlimTalkRequest {
        service: second_service,
        ..order_shipped(numbers.clone())
    };
    let (http, code) = refusal(client.send_alimtalk(&order_on_second).await);
    assert_eq!(http, 400);
    assert_eq!(code, "SBX_UNKNOWN_TEMPLATE");
    let unknown = AlimTalkRequest {
        template: "NO_SUCH_TEMPLATE".to_string(),
        ..order_shipped(numbers.clone())
    };
    assert_eq!(refusal(client.send_alimtalk(&unknown).await).1, "SBX_UNKNOWN_TEMPLATE");
    assert_nothing_charged(&sandbox).await;

    // The same template under its own service goes.
    let on_its_service = AlimTalkRequest {
        service: second_service,
        ..of_second
    };
    let response = client.send_alimtalk(&on_its_service).await.expect("sent");
    assert_eq!(response.value[0].status, "OK");
}

#[tokio::test]
async fn alimtalk_service_of_another_group_is_refused() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let other_service = Accounts::demo()
        .groups
        .iter()
        .find(|g| g.id == OTHER_GROUP)
        .expect("other group")
        .alimtalk_services[0];
    let request = AlimTalkRequest {
        service: other_service,
        ..order_shipped(vec![recipient(
            1,
            &number_ending(1, "70"),
            Some("김"),
            &[("VAR1", "1")],
        )])
    };
    let (http, code) = refusal(client.send_alimtalk(&request).await);
    assert_eq!(http, 400);
    assert_eq!(code, "SBX_UNKNOWN_SERVICE");
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn alimtalk_alter_without_callback_no_is_refused() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let numbers = vec![recipient(1, &number_ending(1, "91"), Some("김"), &[("VAR1", "1")])];
    for callback in [None, Some("")] {
        let request = AlimTalkRequest {
            alter: Some(true),
            callback_no: callback.map(str::to_string),
            ..order_shipped(numbers.clone())
        };
        let (http, code) = refusal(client.send_alimtalk(&request).await);
        assert_eq!(http, 400);
        assert_eq!(code, "SBX_CALLBACK_REQUIRED", "callbackNo {callback:?}");
    }
    assert_nothing_charged(&sandbox).await;
    // Without alter no callbackNo is needed.
    let response = client.send_alimtalk(&order_shipped(numbers)).await.expect("sent");
    assert_eq!(response.total, 1);
}

#[tokio::test]
async fn alimtalk_alter_with_unregistered_callback_no_is_refused() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let other_groups_callback = Accounts::demo()
        .groups
        .iter()
        .find(|g| g.id == OTHER_GROUP)
        .expect("other group")
        .callback_numbers[0]
        .clone();
    for callback in ["0299990000".to_string(), other_groups_callback] {
        let request = AlimTalkRequest {
            alter: Some(true),
            callback_no: Some(callback.clone()),
            ..order_shipped(vec![recipient(
                1,
                &number_ending(1, "91"),
                Some("김"),
                &[("VAR1", "1")],
            )])
        };
        let (http, code) = refusal(client.send_alimtalk(&request).await);
        assert_eq!(http, 400);
        assert_eq!(code, "SBX_CALLBACK_NOT_REGISTERED", "callbackNo {callback}");
    }
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn alimtalk_without_apikey_header_is_401_err_100() {
    let sandbox = TestSandbox::demo().await;
    let request = order_shipped(vec![recipient(
        1,
        &number_ending(1, "80"),
        Some("김"),
        &[("VAR1", "1")],
    )]);
    let response = sandbox
        .raw()
        .post(format!("{}/alimTalk", sandbox.handle.base_url()))
        .json(&request)
        .send()
        .await
        .expect("answered");
    assert_eq!(response.status(), 401);
    let body: serde_json::Value = response.json().await.expect("json body");
    assert_eq!(body["code"], "ERR_100");
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn alimtalk_with_wrong_apikey_is_401_err_102() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client_as("not-a-key", DEMO_GROUP);
    let request = order_shipped(vec![recipient(
        1,
        &number_ending(1, "80"),
        Some("김"),
        &[("VAR1", "1")],
    )]);
    assert_eq!(
        refusal(client.send_alimtalk(&request).await),
        (401, "ERR_102".to_string())
    );
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn alimtalk_with_body_group_id_of_another_group_is_401_err_102() {
    let sandbox = TestSandbox::demo().await;
    let numbers = vec![recipient(1, &number_ending(1, "80"), Some("김"), &[("VAR1", "1")])];
    // The demo key naming the other group, and the other key naming the demo group.
    let demo_naming_other = AlimTalkRequest {
        group_id: OTHER_GROUP.to_string(),
        ..order_shipped(numbers.clone())
    };
    assert_eq!(
        refusal(sandbox.client().send_alimtalk(&demo_naming_other).await),
        (401, "ERR_102".to_string())
    );
    assert_eq!(
        refusal(sandbox.other().send_alimtalk(&order_shipped(numbers)).await),
        (401, "ERR_102".to_string())
    );
    assert_nothing_charged(&sandbox).await;
    let client = sandbox.client();
    assert_eq!(sandbox.admin(&client).sent().await.expect("sent counts").total, 0);
}

#[tokio::test]
async fn alimtalk_other_group_cannot_use_demo_templates_or_services() {
    let sandbox = TestSandbox::demo().await;
    let other = sandbox.other();
    let other_service = Accounts::demo()
        .groups
        .iter()
        .find(|g| g.id == OTHER_GROUP)
        .expect("other group")
        .alimtalk_services[0];
    let numbers = vec![recipient(1, &number_ending(1, "80"), Some("김"), &[("VAR1", "1")])];
    let demo_service = AlimTalkRequest {
        group_id: OTHER_GROUP.to_string(),
        ..order_shipped(numbers.clone())
    };
    assert_eq!(
        refusal(other.send_alimtalk(&demo_service).await).1,
        "SBX_UNKNOWN_SERVICE"
    );
    let demo_template_on_own_service = AlimTalkRequest {
        service: other_service,
        ..demo_service
    };
    assert_eq!(
        refusal(other.send_alimtalk(&demo_template_on_own_service).await).1,
        "SBX_UNKNOWN_TEMPLATE"
    );
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn alimtalk_sent_by_other_group_never_charges_or_counts_for_demo() {
    // Give the other group a template and prices so its send succeeds and is billed.
    let mut accounts = Accounts::demo();
    let other = accounts
        .groups
        .iter_mut()
        .find(|g| g.id == OTHER_GROUP)
        .expect("other group");
    let other_service = other.alimtalk_services[0];
    other.prices.alimtalk = 11;
    other.templates.push(TemplateConfig {
        code: ORDER_SHIPPED.to_string(),
        service: Some(other_service),
        sender_key: None,
        text: ORDER_SHIPPED_TEXT.to_string(),
        title: None,
        buttons: Vec::new(),
    });
    let other_price = other.prices.alimtalk;
    let sandbox = TestSandbox::with(accounts).await;
    let demo = sandbox.client();
    let before_ledger = sandbox.admin(&demo).ledger().await.expect("ledger");
    let before_sent = sandbox.admin(&demo).sent().await.expect("sent");

    let other = sandbox.other();
    let request = AlimTalkRequest {
        service: other_service,
        group_id: OTHER_GROUP.to_string(),
        ..order_shipped(vec![recipient(
            1,
            &number_ending(1, "80"),
            Some("김"),
            &[("VAR1", "1")],
        )])
    };
    let response = other.send_alimtalk(&request).await.expect("other group sends");
    assert_eq!(response.value[0].status, "OK");

    assert_eq!(sandbox.admin(&demo).ledger().await.expect("ledger"), before_ledger);
    assert_eq!(sandbox.admin(&demo).sent().await.expect("sent"), before_sent);
    let other_ledger = sandbox.admin(&other).ledger().await.expect("other ledger");
    assert_eq!(other_ledger.group_id, OTHER_GROUP);
    assert_eq!(other_ledger.entries.len(), 1);
    assert_eq!(other_ledger.entries[0].group_id, OTHER_GROUP);
    assert_eq!(other_ledger.entries[0].amount, other_price);
}
