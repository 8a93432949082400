//! The gateway's fallback SMS/LMS: `callbackNo` is optional (spec), and which sender number the fallback then goes from.

mod common;
use common::*;

use msgbatch::api::channel::ChannelCreate;
use msgbatch::api::gateway::{GatewayAlimTalkRequest, SendRecord};
use msgbatch::api::ledger::{BillingClass, LedgerEntry, LedgerKind};
use msgbatch::api::GatewayNumberEntry;
use msgbatch::client::Client;

/// The demo group's registered sender numbers, in the order the accounts list them.
const DEMO_FIRST_CALLBACK: &str = "0212345678";
const DEMO_SECOND_CALLBACK: &str = "01000001234";

const BARE_GROUP: &str = "bare";
const BARE_KEY: &str = "sbx-bare-key";

/// A gateway group with no registered sender number at all.
fn accounts_with_a_group_without_callback_numbers() -> String {
    format!(
        r#"settle_after = "0s"

[[groups]]
id = "{BARE_GROUP}"
api_key = "{BARE_KEY}"
gateway = true
balance = 100000

[groups.prices]
alimtalk = 8
fallback_sms = 9

[[groups.templates]]
code = "ORDER_SHIPPED"
sender_key = "{DEMO_SENDER_KEY}"
text = "{ORDER_SHIPPED_TEXT}"

[[groups.sender_keys]]
key = "{DEMO_SENDER_KEY}"
status = "ACTIVE"

[[groups.outcomes]]
ends_with = "93"
outcome = "gateway_failed"
message = "recipient phone unreachable"
"#
    )
}

/// An ORDER_SHIPPED request with `alter` true and no `callbackNo`, to one recipient whose number
/// ends in 93: accepted, then settled `FAILED`, which sends the fallback.
fn failing_with_alter(group: &str) -> GatewayAlimTalkRequest {
    GatewayAlimTalkRequest {
        group_id: group.to_string(),
        service: DEMO_SENDER_KEY.to_string(),
        template: "ORDER_SHIPPED".to_string(),
        message: ORDER_SHIPPED_TEXT.to_string(),
        numbers: vec![GatewayNumberEntry {
            hp: number_ending(1, "93"),
            name: Some("김민수".to_string()),
            vars: [("VAR1".to_string(), "INV1".to_string())].into_iter().collect(),
        }],
        alter: Some(true),
        ..GatewayAlimTalkRequest::default()
    }
}

/// Sends `request`, and answers the settled record of its one recipient and the fallback
/// entries of the ledger that belong to it.
async fn send_and_settle(
    sandbox: &TestSandbox,
    client: &Client,
    request: &GatewayAlimTalkRequest,
) -> (SendRecord, Vec<LedgerEntry>) {
    let response = client
        .send_gateway_alimtalk(request)
        .await
        .expect("alter without callbackNo is accepted");
    assert_eq!(response.accepted, 1, "{response:?}");
    let id = &response.results[0].id;
    let record = client.result(id).await.expect("record reads");
    assert_eq!(record.result.as_deref(), Some("FAILED"), "{record:?}");
    let ledger = sandbox.admin(client).ledger().await.expect("ledger reads");
    let fallbacks = ledger
        .entries
        .into_iter()
        .filter(|e| &e.reference == id && e.billing_class == BillingClass::FallbackSms)
        .collect();
    (record, fallbacks)
}

fn sender_of(fallbacks: &[LedgerEntry]) -> Option<&str> {
    assert_eq!(fallbacks.len(), 1, "one fallback charged: {fallbacks:?}");
    assert_eq!(fallbacks[0].kind, LedgerKind::Charge);
    fallbacks[0].callback_no.as_deref()
}

#[tokio::test]
async fn alter_without_callback_no_is_accepted_and_falls_back_from_the_groups_first_number() {
    let sandbox = TestSandbox::demo_settling("0s").await;
    let client = sandbox.client();
    let (_, fallbacks) = send_and_settle(&sandbox, &client, &failing_with_alter(DEMO_GROUP)).await;
    assert_eq!(sender_of(&fallbacks), Some(DEMO_FIRST_CALLBACK));
}

#[tokio::test]
async fn alter_with_callback_no_falls_back_from_that_number() {
    let sandbox = TestSandbox::demo_settling("0s").await;
    let client = sandbox.client();
    let mut request = failing_with_alter(DEMO_GROUP);
    request.callback_no = Some(DEMO_SECOND_CALLBACK.to_string());
    let (_, fallbacks) = send_and_settle(&sandbox, &client, &request).await;
    assert_eq!(sender_of(&fallbacks), Some(DEMO_SECOND_CALLBACK));
}

#[tokio::test]
async fn alter_with_a_channel_and_no_callback_no_falls_back_from_the_channels_number() {
    let sandbox = TestSandbox::demo_settling("0s").await;
    let client = sandbox.client();
    // The group's first number is 0212345678; this channel's is the second one.
    let channel = client
        .channel_create(&ChannelCreate {
            name: "second number".into(),
            sender_key: DEMO_SENDER_KEY.into(),
            callback_no: Some(DEMO_SECOND_CALLBACK.into()),
            ..ChannelCreate::default()
        })
        .await
        .expect("channel created");
    let mut request = failing_with_alter(DEMO_GROUP);
    request.channel_id = Some(channel.id);
    let (_, fallbacks) = send_and_settle(&sandbox, &client, &request).await;
    assert_eq!(sender_of(&fallbacks), Some(DEMO_SECOND_CALLBACK));
}

#[tokio::test]
async fn alter_with_an_unregistered_callback_no_is_still_refused_and_not_charged() {
    let sandbox = TestSandbox::demo_settling("0s").await;
    let client = sandbox.client();
    let mut request = failing_with_alter(DEMO_GROUP);
    request.callback_no = Some("0299990000".to_string());
    let error = client
        .send_gateway_alimtalk(&request)
        .await
        .expect_err("an unregistered callbackNo is refused");
    assert_eq!(error.http_status(), Some(400), "{error}");
    assert_eq!(error.code(), Some("SBX_CALLBACK_NOT_REGISTERED"), "{error}");
    let ledger = sandbox.admin(&client).ledger().await.expect("ledger reads");
    assert!(ledger.entries.is_empty(), "{:?}", ledger.entries);
}

#[tokio::test]
async fn a_group_without_sender_numbers_sends_no_fallback_and_the_record_says_so() {
    let sandbox = TestSandbox::from_toml(&accounts_with_a_group_without_callback_numbers()).await;
    let client = sandbox.client_as(BARE_KEY, BARE_GROUP);
    let (record, fallbacks) = send_and_settle(&sandbox, &client, &failing_with_alter(BARE_GROUP)).await;
    assert!(
        fallbacks.is_empty(),
        "no fallback without a sender number: {fallbacks:?}"
    );
    let message = record.error_message.expect("a FAILED record has its reason");
    assert!(message.contains("recipient phone unreachable"), "{message}");
    assert!(message.contains("no fallback"), "{message}");
    let ledger = sandbox.admin(&client).ledger().await.expect("ledger reads");
    let refunded: i64 = ledger
        .entries
        .iter()
        .filter(|e| e.kind == LedgerKind::Refund)
        .map(|e| e.amount)
        .sum();
    assert_eq!(refunded, 8, "the notification charge is still refunded");
    assert_eq!(ledger.balance, 100_000, "nothing else charged");
}

/// A gateway campaign with `alter` of the group that has no registered sender number, against a
/// sandbox process: what the report charges for fallbacks is what the ledger holds.
#[test]
fn a_campaign_of_a_group_without_sender_numbers_is_charged_no_fallback_the_report_does_not_show() {
    let dir = tempfile::tempdir().unwrap();
    let accounts = dir.path().join("accounts.toml");
    std::fs::write(&accounts, accounts_with_a_group_without_callback_numbers()).unwrap();
    let sandbox = common::process::SandboxProcess::start_with(&["--accounts", accounts.to_str().unwrap()]);
    std::fs::write(
        dir.path().join("people.csv"),
        format!("phone,name,order\n{},고객,A-1\n", number_ending(1, "93")),
    )
    .unwrap();
    let campaign = |callback: &str| {
        format!(
            "kind = \"gateway-alimtalk\"\n{}[credentials]\ngroup_id = \"{BARE_GROUP}\"\n[message]\nsender_key = \"{DEMO_SENDER_KEY}\"\ntemplate = \"ORDER_SHIPPED\"\ntext = \"{ORDER_SHIPPED_TEXT}\"\nalter = true\n{callback}[recipients]\npath = \"people.csv\"\nname = \"name\"\nvariables = {{ VAR1 = \"order\" }}\n[prices]\nalimtalk = 8\nfallback_sms = 9\n",
            sandbox.endpoint_toml()
        )
    };
    let command = || {
        let mut command = common::process::msgbatch_at(dir.path(), "2026-11-23T11:00:00+09:00");
        command.env("MSGBATCH_API_KEY", BARE_KEY);
        command
    };
    // Without a number of its own the fallback's sender, and so its charge, would be unknown.
    std::fs::write(dir.path().join("campaign.toml"), campaign("")).unwrap();
    let refused = common::process::exec(command(), &["run", "campaign.toml", "--out", "run"]);
    assert_eq!(refused.code, Some(2), "{}", refused.show());
    assert!(refused.stderr.contains("message.callback_no"), "{}", refused.show());

    // With one the group has not registered, the service refuses the send: nothing is charged,
    // and the report charges nothing either.
    std::fs::write(
        dir.path().join("campaign.toml"),
        campaign(&format!("callback_no = \"{DEMO_FIRST_CALLBACK}\"\n")),
    )
    .unwrap();
    let run = common::process::exec(command(), &["run", "campaign.toml", "--out", "run"]);
    assert_eq!(run.code, Some(1), "the service refused the chunk: {}", run.show());
    let report = common::process::exec(command(), &["report", "run", "--json"]).json();
    let bare = msgbatch::client::Client::new(msgbatch::client::ClientConfig::new(
        sandbox.base_url(),
        sandbox.gateway_url(),
        msgbatch::client::ApiKey::new(BARE_KEY),
        BARE_GROUP,
    ))
    .unwrap();
    let ledger = common::process::SandboxProcess::runtime()
        .block_on(bare.sandbox_admin(sandbox.root_url()).ledger())
        .expect("the bare group's ledger");
    let billed: i64 = ledger.entries.iter().map(|entry| entry.amount).sum();
    let reported: i64 = report["classes"]
        .as_object()
        .map(|classes| {
            classes
                .values()
                .map(|class| class["charged"].as_i64().unwrap_or(0))
                .sum()
        })
        .unwrap_or(0);
    assert_eq!((billed, reported), (0, 0), "ledger {ledger:?}, report {report:#}");
}
