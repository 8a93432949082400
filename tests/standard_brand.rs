//! Integration tests of the brand message endpoint `POST {base_url}/friendTalk/brand` against the sandbox: send types, rules 1 to 4, targeting and billing.

mod common;
use common::*;

use msgbatch::api::ledger::{BillingClass, Ledger, LedgerEntry, LedgerKind};
use msgbatch::api::standard::{BrandButton, BrandRequest, ChatBubbleType, SendResponse, SendType, Targeting};
use msgbatch::api::{now_millis, NumberEntry};
use msgbatch::client::{ClientError, ErrorKind};
use msgbatch::sandbox::accounts::{BrandTemplateConfig, GroupConfig, Prices};
use msgbatch::sandbox::Accounts;
use msgbatch::text::{euc_kr_len, SMS_MAX_BYTES};
use serde_json::json;

const WINTER_SALE: &str = "WINTER_SALE";
const LARGE_CHANNEL: &str = "ch-demo-large";
const SMALL_CHANNEL: &str = "ch-demo-small";

const FREE_TYPES: [ChatBubbleType; 5] = [
    ChatBubbleType::Text,
    ChatBubbleType::Image,
    ChatBubbleType::Wide,
    ChatBubbleType::WideItemList,
    ChatBubbleType::CarouselFeed,
];
const BASIC_ONLY_TYPES: [ChatBubbleType; 3] = [
    ChatBubbleType::PremiumVideo,
    ChatBubbleType::Commerce,
    ChatBubbleType::CarouselCommerce,
];

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

fn recipient(key: u64, hp: &str, name: Option<&str>, vars: &[(&str, &str)]) -> NumberEntry {
    NumberEntry {
        key,
        hp: hp.to_string(),
        name: name.map(str::to_string),
        vars: vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
    }
}

/// A free-form TEXT message to `numbers`.
fn free_text(numbers: Vec<NumberEntry>, message: &str) -> BrandRequest {
    BrandRequest {
        numbers: Some(numbers),
        message: Some(message.to_string()),
        ..BrandRequest::new(BRAND_SERVICE, ChatBubbleType::Text, DEMO_GROUP)
    }
}

/// A BASIC message with the demo's WINTER_SALE template (a PREMIUM_VIDEO template).
fn winter_sale(numbers: Vec<NumberEntry>) -> BrandRequest {
    BrandRequest {
        numbers: Some(numbers),
        send_type: Some(SendType::Basic),
        template: Some(WINTER_SALE.to_string()),
        ..BrandRequest::new(BRAND_SERVICE, ChatBubbleType::PremiumVideo, DEMO_GROUP)
    }
}

fn sale_recipient(key: u64, hp: &str) -> NumberEntry {
    recipient(key, hp, Some("김민수"), &[("VAR1", "30")])
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

fn charges_of_uid(ledger: &Ledger, uid: u64) -> Vec<&LedgerEntry> {
    ledger
        .entries
        .iter()
        .filter(|entry| entry.reference == uid.to_string())
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

/// Posts `body` to the brand endpoint by hand and answers the HTTP status and JSON body.
async fn raw_brand(sandbox: &TestSandbox, api_key: Option<&str>, body: &serde_json::Value) -> (u16, serde_json::Value) {
    let mut request = sandbox
        .raw()
        .post(format!("{}/friendTalk/brand", sandbox.handle.base_url()))
        .json(body);
    if let Some(key) = api_key {
        request = request.header("apikey", key);
    }
    let response = request.send().await.expect("answered");
    let status = response.status().as_u16();
    (status, response.json().await.expect("json body"))
}

fn assert_error_body(body: &serde_json::Value, code: &str) {
    assert_eq!(body["status"], "error", "brand error body: {body}");
    assert_eq!(body["code"], code, "brand error body: {body}");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "brand error body has a message: {body}"
    );
}

#[tokio::test]
async fn brand_free_accepts_the_five_free_bubble_types() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let prices = demo_prices();
    for (serial, bubble) in (1..).zip(FREE_TYPES) {
        let request = BrandRequest {
            chat_bubble_type: bubble,
            ..free_text(
                vec![recipient(1, &number_ending(serial, "10"), None, &[])],
                "(광고) 안내",
            )
        };
        let response = client.send_brand(&request).await.expect("FREE supports the type");
        assert_eq!(response.status, "success", "{bubble:?}");
        assert_eq!(response.value.len(), 1);
        assert_eq!(response.value[0].status, "OK", "{bubble:?}");
    }
    let ledger = demo_ledger(&sandbox).await;
    let friend = charges(&ledger, BillingClass::BmFriend);
    assert_eq!(friend.len(), FREE_TYPES.len());
    assert!(friend.iter().all(|c| c.amount == prices.bm_friend));
}

#[tokio::test]
async fn brand_free_refuses_premium_video_commerce_and_carousel_commerce() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    for bubble in BASIC_ONLY_TYPES {
        assert!(!bubble.allowed_for_free());
        for send_type in [None, Some(SendType::Free)] {
            let request = BrandRequest {
                chat_bubble_type: bubble,
                send_type,
                ..free_text(vec![recipient(1, &number_ending(1, "10"), None, &[])], "(광고) 안내")
            };
            let (http, code) = refusal(client.send_brand(&request).await);
            assert_eq!(http, 400, "{bubble:?} {send_type:?}");
            assert_eq!(code, "SBX_BUBBLE_NEEDS_BASIC", "{bubble:?} {send_type:?}");
        }
    }
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn brand_basic_accepts_all_eight_bubble_types_with_a_template() {
    let all: Vec<ChatBubbleType> = FREE_TYPES.iter().chain(&BASIC_ONLY_TYPES).copied().collect();
    let mut accounts = Accounts::demo();
    let demo = accounts
        .groups
        .iter_mut()
        .find(|g| g.id == DEMO_GROUP)
        .expect("demo group");
    for bubble in &all {
        demo.brand_templates.push(BrandTemplateConfig {
            code: format!("BASIC_{bubble:?}"),
            service: BRAND_SERVICE,
            chat_bubble_type: Some(*bubble),
            text: Some("#{이름}님, 안내 #{VAR1}".to_string()),
        });
    }
    let sandbox = TestSandbox::with(accounts).await;
    let client = sandbox.client();
    for (serial, bubble) in (1..).zip(&all) {
        let request = BrandRequest {
            chat_bubble_type: *bubble,
            template: Some(format!("BASIC_{bubble:?}")),
            ..winter_sale(vec![sale_recipient(1, &number_ending(serial, "10"))])
        };
        let response = client.send_brand(&request).await.expect("BASIC supports every type");
        assert_eq!(response.value[0].status, "OK", "{bubble:?}");
    }
    let ledger = demo_ledger(&sandbox).await;
    assert_eq!(charges(&ledger, BillingClass::BmFriend).len(), all.len());
}

#[tokio::test]
async fn brand_basic_with_the_demo_template_sends_premium_video() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let response = client
        .send_brand(&winter_sale(vec![sale_recipient(1, &number_ending(1, "10"))]))
        .await
        .expect("sent");
    assert_eq!(response.value[0].status, "OK");
}

#[tokio::test]
async fn brand_basic_without_template_is_refused() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    for template in [None, Some(String::new())] {
        let request = BrandRequest {
            template: template.clone(),
            ..winter_sale(vec![sale_recipient(1, &number_ending(1, "10"))])
        };
        let (http, code) = refusal(client.send_brand(&request).await);
        assert_eq!(http, 400);
        assert_eq!(code, "SBX_TEMPLATE_REQUIRED", "template {template:?}");
    }
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn brand_basic_missing_template_variable_fails_only_that_recipient() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let request = winter_sale(vec![
        sale_recipient(1, &number_ending(1, "10")),
        recipient(2, &number_ending(2, "10"), Some("이영희"), &[]),
        sale_recipient(3, &number_ending(3, "10")),
    ]);
    let response = client.send_brand(&request).await.expect("sent");
    assert_eq!(response.value[0].status, "OK");
    assert!(
        response.value[1].status.starts_with("ERR_"),
        "{}",
        response.value[1].status
    );
    assert_eq!(response.value[2].status, "OK");
    assert_eq!(response.total, 3);
    let ledger = demo_ledger(&sandbox).await;
    assert!(charges_of_uid(&ledger, response.value[1].uid).is_empty());
    assert_eq!(charges(&ledger, BillingClass::BmFriend).len(), 2);
}

#[tokio::test]
async fn brand_basic_with_structural_data_is_err_201() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let base = winter_sale(vec![sale_recipient(1, &number_ending(1, "10"))]);
    let button = BrandButton {
        name: "보기".to_string(),
        link1: Some("https://example.com".to_string()),
        link2: Some("https://m.example.com".to_string()),
    };
    let variants = [
        (
            "image",
            BrandRequest {
                image: Some("https://example.com/a.png".to_string()),
                ..base.clone()
            },
        ),
        (
            "buttons",
            BrandRequest {
                buttons: Some(vec![button]),
                ..base.clone()
            },
        ),
        (
            "coupon",
            BrandRequest {
                coupon: Some(json!({"title": "10% 할인"})),
                ..base.clone()
            },
        ),
        (
            "carousel",
            BrandRequest {
                carousel: Some(vec![json!({"header": "a"})]),
                ..base.clone()
            },
        ),
        (
            "item",
            BrandRequest {
                item: Some(json!({"list": []})),
                ..base.clone()
            },
        ),
        (
            "commerce",
            BrandRequest {
                commerce: Some(json!({"title": "상품"})),
                ..base.clone()
            },
        ),
    ];
    for (field, request) in variants {
        let (http, code) = refusal(client.send_brand(&request).await);
        assert_eq!(code, "ERR_201", "BASIC with {field}");
        assert_eq!(http, 400, "BASIC with {field}");
    }
    assert_nothing_charged(&sandbox).await;
    // The same request without structural data goes.
    assert_eq!(client.send_brand(&base).await.expect("sent").value[0].status, "OK");
}

#[tokio::test]
async fn brand_non_friend_targeting_on_unapproved_channel_is_403_err_mn_not_approved() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    for targeting in [Targeting::N, Targeting::M] {
        let request = BrandRequest {
            targeting: Some(targeting),
            channel_id: Some(SMALL_CHANNEL.to_string()),
            ..free_text(vec![recipient(1, &number_ending(1, "92"), None, &[])], "(광고) 안내")
        };
        assert_eq!(
            refusal(client.send_brand(&request).await),
            (403, "ERR_MN_NOT_APPROVED".to_string()),
            "{targeting:?}"
        );
        let (http, body) = raw_brand(&sandbox, Some(DEMO_KEY), &serde_json::to_value(&request).unwrap()).await;
        assert_eq!(http, 403);
        assert_error_body(&body, "ERR_MN_NOT_APPROVED");
    }
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn brand_non_friend_targeting_without_channel_id_is_refused() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    for targeting in [Targeting::N, Targeting::M] {
        for channel_id in [None, Some(String::new())] {
            let request = BrandRequest {
                targeting: Some(targeting),
                channel_id: channel_id.clone(),
                ..free_text(vec![recipient(1, &number_ending(1, "92"), None, &[])], "(광고) 안내")
            };
            let (http, code) = refusal(client.send_brand(&request).await);
            assert_eq!(http, 400, "{targeting:?} {channel_id:?}");
            assert_eq!(code, "SBX_CHANNEL_REQUIRED", "{targeting:?} {channel_id:?}");
        }
    }
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn brand_targeting_n_on_approved_channel_reaches_non_friends_billed_bm_nonfriend() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let prices = demo_prices();
    let non_friend = number_ending(1, "92");
    let friend = number_ending(2, "10");
    let request = BrandRequest {
        targeting: Some(Targeting::N),
        channel_id: Some(LARGE_CHANNEL.to_string()),
        ..free_text(
            vec![recipient(1, &non_friend, None, &[]), recipient(2, &friend, None, &[])],
            "(광고) 안내",
        )
    };
    let response = client.send_brand(&request).await.expect("sent");
    assert_eq!(response.value[0].status, "OK", "a non-friend is in the N audience");
    assert!(
        response.value[1].status.starts_with("CH_"),
        "a friend is outside the N audience: {}",
        response.value[1].status
    );
    let ledger = demo_ledger(&sandbox).await;
    assert_eq!(ledger.entries.len(), 1, "{:?}", ledger.entries);
    let charge = &ledger.entries[0];
    assert_eq!(charge.billing_class, BillingClass::BmNonfriend);
    assert_eq!(charge.recipient, non_friend);
    assert_eq!(charge.reference, response.value[0].uid.to_string());
    assert_eq!(charge.amount, prices.bm_nonfriend);
}

#[tokio::test]
async fn brand_targeting_m_on_approved_channel_reaches_friends_and_non_friends_billed_bm_nonfriend() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let prices = demo_prices();
    let request = BrandRequest {
        targeting: Some(Targeting::M),
        channel_id: Some(LARGE_CHANNEL.to_string()),
        ..free_text(
            vec![
                recipient(1, &number_ending(1, "92"), None, &[]),
                recipient(2, &number_ending(2, "10"), None, &[]),
            ],
            "(광고) 안내",
        )
    };
    let before = demo_ledger(&sandbox).await.balance;
    let response = client.send_brand(&request).await.expect("sent");
    assert!(response.value.iter().all(|r| r.status == "OK"), "{:?}", response.value);
    let ledger = demo_ledger(&sandbox).await;
    let nonfriend = charges(&ledger, BillingClass::BmNonfriend);
    assert_eq!(nonfriend.len(), 2);
    assert!(nonfriend.iter().all(|c| c.amount == prices.bm_nonfriend));
    assert!(charges(&ledger, BillingClass::BmFriend).is_empty());
    assert_eq!(before - ledger.balance, 2 * prices.bm_nonfriend);
}

#[tokio::test]
async fn brand_targeting_i_reaches_only_friends_and_bills_bm_friend() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let prices = demo_prices();
    for (serial, targeting) in [(1, None), (3, Some(Targeting::I))] {
        let friend = number_ending(serial, "10");
        let non_friend = number_ending(serial + 1, "92");
        let request = BrandRequest {
            targeting,
            ..free_text(
                vec![recipient(1, &friend, None, &[]), recipient(2, &non_friend, None, &[])],
                "(광고) 안내",
            )
        };
        let before = demo_ledger(&sandbox).await;
        let response = client.send_brand(&request).await.expect("sent");
        assert_eq!(response.value[0].status, "OK", "{targeting:?}");
        assert!(
            response.value[1].status.starts_with("CH_"),
            "non-friend under {targeting:?}: {}",
            response.value[1].status
        );
        let ledger = demo_ledger(&sandbox).await;
        let new: Vec<&LedgerEntry> = ledger.entries[before.entries.len()..].iter().collect();
        assert_eq!(new.len(), 1, "{targeting:?}: {new:?}");
        assert_eq!(new[0].billing_class, BillingClass::BmFriend);
        assert_eq!(new[0].recipient, friend);
        assert_eq!(new[0].amount, prices.bm_friend);
    }
}

#[tokio::test]
async fn brand_targeting_f_bills_bm_friend() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let request = BrandRequest {
        targeting: Some(Targeting::F),
        ..free_text(vec![recipient(1, &number_ending(1, "10"), None, &[])], "(광고) 안내")
    };
    let response = client.send_brand(&request).await.expect("sent");
    assert_eq!(response.value[0].status, "OK");
    let ledger = demo_ledger(&sandbox).await;
    assert_eq!(ledger.entries.len(), 1);
    assert_eq!(ledger.entries[0].billing_class, BillingClass::BmFriend);
    assert_eq!(ledger.entries[0].amount, demo_prices().bm_friend);
}

#[tokio::test]
async fn brand_channel_failure_with_alter_sends_fallback_sms() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let prices = demo_prices();
    let message = "(광고) 겨울 세일 안내";
    assert!(euc_kr_len(message).unwrap() <= SMS_MAX_BYTES);
    let blocked = number_ending(1, "91");
    let non_friend = number_ending(2, "92");
    let request = BrandRequest {
        alter: Some(true),
        callback_no: Some(DEMO_CALLBACK.to_string()),
        ..free_text(
            vec![recipient(1, &blocked, None, &[]), recipient(2, &non_friend, None, &[])],
            message,
        )
    };
    let response = client.send_brand(&request).await.expect("sent");
    let ledger = demo_ledger(&sandbox).await;
    for (result, hp) in response.value.iter().zip([&blocked, &non_friend]) {
        assert!(result.status.starts_with("CH_"), "{hp}: {}", result.status);
        let entries = charges_of_uid(&ledger, result.uid);
        assert_eq!(entries.len(), 1, "{hp}: {entries:?}");
        assert_eq!(entries[0].billing_class, BillingClass::FallbackSms, "{hp}");
        assert_eq!(entries[0].amount, prices.fallback_sms);
        assert_eq!(&entries[0].recipient, hp);
    }
    assert!(
        charges(&ledger, BillingClass::BmFriend).is_empty(),
        "failed recipients are not billed bm_friend"
    );
}

#[tokio::test]
async fn brand_channel_failure_with_alter_and_long_alter_message_sends_fallback_lms() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let prices = demo_prices();
    let alter_message = format!("(광고) {}", "겨울 세일 안내 ".repeat(10));
    assert!(euc_kr_len(&alter_message).unwrap() > SMS_MAX_BYTES);
    let request = BrandRequest {
        alter: Some(true),
        callback_no: Some(DEMO_CALLBACK.to_string()),
        alter_message: Some(alter_message),
        ..free_text(
            vec![recipient(1, &number_ending(1, "91"), None, &[])],
            "(광고) 짧은 안내",
        )
    };
    let response = client.send_brand(&request).await.expect("sent");
    assert!(response.value[0].status.starts_with("CH_"));
    let ledger = demo_ledger(&sandbox).await;
    assert_eq!(ledger.entries.len(), 1, "{:?}", ledger.entries);
    assert_eq!(ledger.entries[0].billing_class, BillingClass::FallbackLms);
    assert_eq!(ledger.entries[0].amount, prices.fallback_lms);
}

#[tokio::test]
async fn brand_channel_failure_without_alter_sends_no_fallback() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let request = free_text(
        vec![
            recipient(1, &number_ending(1, "91"), None, &[]),
            recipient(2, &number_ending(2, "92"), None, &[]),
        ],
        "(광고) 안내",
    );
    let response = client.send_brand(&request).await.expect("sent");
    assert!(
        response.value.iter().all(|r| r.status.starts_with("CH_")),
        "{:?}",
        response.value
    );
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn brand_basic_template_channel_failure_with_alter_and_no_alter_message_still_sends_fallback() {
    // Rule 4 has no exception for template messages sent without alterMessage.
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let request = BrandRequest {
        alter: Some(true),
        callback_no: Some(DEMO_CALLBACK.to_string()),
        ..winter_sale(vec![sale_recipient(1, &number_ending(1, "91"))])
    };
    let response = client.send_brand(&request).await.expect("sent");
    assert!(
        response.value[0].status.starts_with("CH_"),
        "{}",
        response.value[0].status
    );
    let ledger = demo_ledger(&sandbox).await;
    let fallback: Vec<&LedgerEntry> = charges_of_uid(&ledger, response.value[0].uid)
        .into_iter()
        .filter(|e| matches!(e.billing_class, BillingClass::FallbackSms | BillingClass::FallbackLms))
        .collect();
    assert_eq!(
        fallback.len(),
        1,
        "a fallback text message is charged: {:?}",
        ledger.entries
    );
}

#[tokio::test]
async fn brand_alter_without_or_with_unregistered_callback_no_is_refused() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let cases = [
        (None, "SBX_CALLBACK_REQUIRED"),
        (Some("0299990000".to_string()), "SBX_CALLBACK_NOT_REGISTERED"),
        (
            Some(group(OTHER_GROUP).callback_numbers[0].clone()),
            "SBX_CALLBACK_NOT_REGISTERED",
        ),
    ];
    for (callback, expected) in cases {
        let request = BrandRequest {
            alter: Some(true),
            callback_no: callback.clone(),
            ..free_text(vec![recipient(1, &number_ending(1, "91"), None, &[])], "(광고) 안내")
        };
        let (http, code) = refusal(client.send_brand(&request).await);
        assert_eq!(http, 400, "{callback:?}");
        assert_eq!(code, expected, "{callback:?}");
    }
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn brand_mobile_sends_to_a_single_number() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let mobile = number_ending(1, "10");
    let request = BrandRequest {
        mobile: Some(mobile.clone()),
        message: Some("(광고) 안내".to_string()),
        ..BrandRequest::new(BRAND_SERVICE, ChatBubbleType::Text, DEMO_GROUP)
    };
    let before = now_millis();
    let response = client.send_brand(&request).await.expect("sent");
    assert_eq!(response.status, "success");
    assert_eq!(response.total, 1);
    assert_eq!(response.value.len(), 1);
    assert_eq!(response.value[0].status, "OK");
    assert!(response.value[0].date >= before);
    let ledger = demo_ledger(&sandbox).await;
    assert_eq!(ledger.entries.len(), 1);
    assert_eq!(ledger.entries[0].recipient, mobile);
    assert_eq!(ledger.entries[0].billing_class, BillingClass::BmFriend);
    assert_eq!(ledger.entries[0].reference, response.value[0].uid.to_string());
    let sent = sandbox.admin(&client).sent().await.expect("sent counts");
    assert_eq!(sent.numbers.get(&mobile), Some(&1));
    assert_eq!(sent.total, 1);
}

#[tokio::test]
async fn brand_success_answers_uid_date_status_count_and_total() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let numbers: Vec<NumberEntry> = (1..=3)
        .map(|serial| recipient(serial.into(), &number_ending(serial, "10"), None, &[]))
        .collect();
    let before = now_millis();
    let response = client
        .send_brand(&free_text(numbers.clone(), "(광고) 안내"))
        .await
        .expect("sent");
    let after = now_millis();
    assert_eq!(response.status, "success");
    assert_eq!(response.total, numbers.len() as u64);
    assert_eq!(response.count, numbers.len() as u64);
    assert_eq!(response.value.len(), numbers.len());
    let mut uids: Vec<u64> = response.value.iter().map(|r| r.uid).collect();
    uids.sort_unstable();
    uids.dedup();
    assert_eq!(uids.len(), numbers.len());
    assert!(response.value.iter().all(|r| (before..=after).contains(&r.date)));
}

#[tokio::test]
async fn brand_error_bodies_have_status_error() {
    let sandbox = TestSandbox::demo().await;
    let hp = number_ending(1, "10");
    let free_commerce = BrandRequest {
        chat_bubble_type: ChatBubbleType::Commerce,
        ..free_text(vec![recipient(1, &hp, None, &[])], "(광고) 안내")
    };
    let basic_with_image = BrandRequest {
        image: Some("https://example.com/a.png".to_string()),
        ..winter_sale(vec![sale_recipient(1, &hp)])
    };
    let no_channel = BrandRequest {
        targeting: Some(Targeting::N),
        ..free_text(vec![recipient(1, &hp, None, &[])], "(광고) 안내")
    };
    for (request, code) in [
        (free_commerce, "SBX_BUBBLE_NEEDS_BASIC"),
        (basic_with_image, "ERR_201"),
        (no_channel, "SBX_CHANNEL_REQUIRED"),
    ] {
        let (http, body) = raw_brand(&sandbox, Some(DEMO_KEY), &serde_json::to_value(&request).unwrap()).await;
        assert_eq!(http, 400, "{body}");
        assert_error_body(&body, code);
    }
    let (http, body) = raw_brand(&sandbox, Some(DEMO_KEY), &json!({"service": BRAND_SERVICE})).await;
    assert_eq!(http, 400, "{body}");
    assert_eq!(body["status"], "error", "{body}");
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn brand_authentication_failures_are_401_with_status_error() {
    let sandbox = TestSandbox::demo().await;
    let body = serde_json::to_value(free_text(
        vec![recipient(1, &number_ending(1, "10"), None, &[])],
        "(광고) 안내",
    ))
    .unwrap();
    let (http, answer) = raw_brand(&sandbox, None, &body).await;
    assert_eq!(http, 401, "{answer}");
    assert_error_body(&answer, "ERR_100");
    let (http, answer) = raw_brand(&sandbox, Some("not-a-key"), &body).await;
    assert_eq!(http, 401, "{answer}");
    assert_error_body(&answer, "ERR_102");
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn brand_with_wrong_key_or_body_group_of_another_group_is_401_err_102() {
    let sandbox = TestSandbox::demo().await;
    let request = free_text(vec![recipient(1, &number_ending(1, "10"), None, &[])], "(광고) 안내");
    let wrong_key = sandbox.client_as("not-a-key", DEMO_GROUP);
    assert_eq!(
        refusal(wrong_key.send_brand(&request).await),
        (401, "ERR_102".to_string())
    );
    let naming_other = BrandRequest {
        group_id: OTHER_GROUP.to_string(),
        ..request.clone()
    };
    assert_eq!(
        refusal(sandbox.client().send_brand(&naming_other).await),
        (401, "ERR_102".to_string())
    );
    assert_eq!(
        refusal(sandbox.other().send_brand(&request).await),
        (401, "ERR_102".to_string())
    );
    assert_nothing_charged(&sandbox).await;
}

#[tokio::test]
async fn brand_other_group_never_reaches_demo_channels_services_or_ledger() {
    let sandbox = TestSandbox::demo().await;
    let demo = sandbox.client();
    let before_ledger = sandbox.admin(&demo).ledger().await.expect("ledger");
    let before_sent = sandbox.admin(&demo).sent().await.expect("sent");
    let other = sandbox.other();
    let other_service = group(OTHER_GROUP).brand_services[0];
    let hp = number_ending(1, "10");
    let own = BrandRequest {
        service: other_service,
        group_id: OTHER_GROUP.to_string(),
        ..free_text(vec![recipient(1, &hp, None, &[])], "(광고) 안내")
    };

    let demo_channel = BrandRequest {
        targeting: Some(Targeting::M),
        channel_id: Some(LARGE_CHANNEL.to_string()),
        ..own.clone()
    };
    assert_eq!(refusal(other.send_brand(&demo_channel).await).1, "SBX_UNKNOWN_CHANNEL");
    let demo_service = BrandRequest {
        service: BRAND_SERVICE,
        ..own.clone()
    };
    assert_eq!(refusal(other.send_brand(&demo_service).await).1, "SBX_UNKNOWN_SERVICE");
    let demo_template = BrandRequest {
        service: other_service,
        group_id: OTHER_GROUP.to_string(),
        ..winter_sale(vec![sale_recipient(1, &hp)])
    };
    assert_eq!(
        refusal(other.send_brand(&demo_template).await).1,
        "SBX_UNKNOWN_TEMPLATE"
    );

    let response = other
        .send_brand(&own)
        .await
        .expect("other group sends on its own service");
    assert_eq!(response.value[0].status, "OK");
    assert_eq!(sandbox.admin(&demo).ledger().await.expect("ledger"), before_ledger);
    assert_eq!(sandbox.admin(&demo).sent().await.expect("sent"), before_sent);
    let other_ledger = sandbox.admin(&other).ledger().await.expect("other ledger");
    assert_eq!(other_ledger.entries.len(), 1);
    assert_eq!(other_ledger.entries[0].group_id, OTHER_GROUP);
    assert_eq!(other_ledger.entries[0].billing_class, BillingClass::BmFriend);
}
