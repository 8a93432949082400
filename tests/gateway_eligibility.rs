//! "The gateway deployment is only for groups that were granted gateway eligibility": every gateway endpoint refuses the others with 403.

mod common;
use common::*;

use msgbatch::api::channel::{ChannelCreate, ChannelUpdate, SenderIssue};
use msgbatch::client::{Client, ClientError, ErrorKind};
use std::fmt::Debug;

/// The demo group's channel: it exists, but not for the other group, which must not learn even that.
const DEMO_CHANNEL: &str = "ch-demo-large";
const NOT_ELIGIBLE: &str = "SBX_GATEWAY_NOT_ELIGIBLE";

fn assert_not_eligible<T: Debug>(endpoint: &str, result: Result<T, ClientError>) {
    let error = result.expect_err(endpoint);
    assert_eq!(error.kind(), ErrorKind::Service, "{endpoint}: {error}");
    assert_eq!(error.http_status(), Some(403), "{endpoint}: {error}");
    assert_eq!(error.code(), Some(NOT_ELIGIBLE), "{endpoint}: {error}");
}

/// Calls every gateway endpoint as `client` and checks each answers 403 `SBX_GATEWAY_NOT_ELIGIBLE`.
async fn assert_every_gateway_endpoint_refuses(client: &Client) {
    let any_id = "00000000-0000-4000-8000-000000000000";
    assert_not_eligible("GET /result/:id", client.result(any_id).await);
    assert_not_eligible(
        "GET /result/sendGroup/:sendGroupId",
        client.result_page(any_id, None, None).await,
    );
    assert_not_eligible(
        "GET /channel/sender/token",
        client.sender_token("010-2000-1234", Some("_otherShop")).await,
    );
    let issue = SenderIssue {
        token: "123456".into(),
        phone_number: "01020001234".into(),
        yellow_id: "_otherShop".into(),
        category_code: None,
    };
    assert_not_eligible("POST /channel/sender", client.sender_issue(&issue).await);
    assert_not_eligible("GET /channel/sender", client.sender_status(DEMO_SENDER_KEY).await);
    assert_not_eligible("GET /category", client.categories().await);
    let create = ChannelCreate {
        name: "not eligible".into(),
        sender_key: DEMO_SENDER_KEY.into(),
        ..ChannelCreate::default()
    };
    assert_not_eligible("POST /channel", client.channel_create(&create).await);
    assert_not_eligible("GET /channel", client.channel_page(None, None, None).await);
    assert_not_eligible("GET /channel/:id", client.channel_get(DEMO_CHANNEL).await);
    let update = ChannelUpdate {
        name: Some("renamed".into()),
        ..ChannelUpdate::default()
    };
    assert_not_eligible("PUT /channel/:id", client.channel_update(DEMO_CHANNEL, &update).await);
    assert_not_eligible("DELETE /channel/:id", client.channel_delete(DEMO_CHANNEL).await);
}

#[tokio::test]
async fn a_group_without_gateway_eligibility_is_refused_on_every_gateway_endpoint() {
    let sandbox = TestSandbox::demo().await;
    let other = sandbox.other();
    assert_every_gateway_endpoint_refuses(&other).await;

    // Refused means not processed: no token was "sent by SMS", no demo channel touched.
    let tokens = sandbox.admin(&other).tokens().await.expect("tokens read");
    assert!(tokens.tokens.is_empty(), "{tokens:?}");
    let demo = sandbox.client();
    let channel = demo.channel_get(DEMO_CHANNEL).await.expect("demo channel reads");
    assert_eq!(channel.name, "Demo Shop");
    assert_eq!(channel.status, "ENABLE");
}

#[tokio::test]
async fn eligibility_is_checked_after_the_credentials() {
    let sandbox = TestSandbox::demo().await;
    // The other group's key naming the demo group: a credentials mismatch, not an eligibility question.
    let misnamed = sandbox.client_as(OTHER_KEY, DEMO_GROUP);
    let error = misnamed.categories().await.expect_err("mismatch refused");
    assert_eq!(error.http_status(), Some(401), "{error}");
    assert_eq!(error.code(), Some("ERR_102"), "{error}");
}

#[tokio::test]
async fn an_eligible_group_reaches_the_same_endpoints() {
    let sandbox = TestSandbox::demo().await;
    let demo = sandbox.client();
    demo.categories().await.expect("categories answer");
    demo.channel_page(None, None, None).await.expect("channels answer");
    demo.sender_status(DEMO_SENDER_KEY)
        .await
        .expect("sender status answers");
}
