//! Gateway sender profiles and channels over HTTP: token flow, profile status, categories, channel CRUD, listing pagination and group isolation.

mod common;
use common::*;

use futures::TryStreamExt;
use msgbatch::api::channel::{Channel, ChannelCreate, ChannelPage, ChannelUpdate, SenderIssue};
use msgbatch::api::now_millis;
use msgbatch::client::{Client, ErrorKind};
use msgbatch::sandbox::accounts::{GroupConfig, DEMO_ACCOUNTS};
use msgbatch::sandbox::Accounts;
use std::collections::HashSet;

/// Spec, Limits: "Verification token requests | 10 per minute".
const SPEC_TOKEN_REQUESTS_PER_MINUTE: usize = 10;
/// Spec, GET /channel: "`limit` (number, default 50, max 200)".
const SPEC_CHANNEL_PAGE_DEFAULT: usize = 50;
const SPEC_CHANNEL_PAGE_MAX: u32 = 200;
/// Channels created for the listing tests; with the demo's own channels the total is a multiple
/// of none of the page sizes walked (1 aside).
const CREATED_CHANNELS: usize = 230;

const ADMIN_PHONE: &str = "01012345678";
const OTHER_PHONE: &str = "01087654321";

const PARTNER_GROUP: &str = "partner";
const PARTNER_KEY: &str = "sbx-partner-key";
const PARTNER_SENDER_KEY: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f9001234567";
const PARTNER_CHANNEL: &str = "ch-partner";

/// The demo accounts plus a second gateway-eligible group, `partner`, whose new profiles start ACTIVE.
fn accounts_with_partner() -> String {
    format!(
        r#"{DEMO_ACCOUNTS}

[[groups]]
id = "{PARTNER_GROUP}"
api_key = "{PARTNER_KEY}"
gateway = true
balance = 100000
callback_numbers = ["0311112222"]
new_sender_status = "ACTIVE"

[[groups.sender_keys]]
key = "{PARTNER_SENDER_KEY}"
yellow_id = "_partner"
status = "ACTIVE"

[[groups.channels]]
id = "{PARTNER_CHANNEL}"
name = "Partner Shop"
sender_key = "{PARTNER_SENDER_KEY}"
callback_no = "0311112222"
"#
    )
}

fn group_config(accounts: &Accounts, id: &str) -> GroupConfig {
    accounts
        .groups
        .iter()
        .find(|g| g.id == id)
        .cloned()
        .unwrap_or_else(|| panic!("group {id} in the accounts"))
}

fn demo_config() -> GroupConfig {
    group_config(&Accounts::demo(), DEMO_GROUP)
}

fn create(name: &str) -> ChannelCreate {
    ChannelCreate {
        name: name.to_string(),
        sender_key: DEMO_SENDER_KEY.to_string(),
        kakao_search_id: None,
        callback_no: Some(DEMO_CALLBACK.to_string()),
    }
}

/// The token the sandbox "sent by SMS" to `phone` for `yellow_id` (the latest one).
async fn sent_token(sandbox: &TestSandbox, client: &Client, phone: &str, yellow_id: &str) -> String {
    let outbox = sandbox.admin(client).tokens().await.expect("outbox reads");
    outbox
        .tokens
        .iter()
        .rev()
        .find(|t| t.phone_number == phone && t.yellow_id == yellow_id)
        .map(|t| t.token.clone())
        .unwrap_or_else(|| panic!("a token was sent to {phone} for {yellow_id}: {outbox:?}"))
}

/// A token of the same length and alphabet that is certainly not `token`.
fn wrong_token(token: &str) -> String {
    let mut chars: Vec<char> = token.chars().collect();
    let last = chars.last_mut().expect("token is not empty");
    *last = if *last == '0' { '1' } else { '0' };
    chars.into_iter().collect()
}

fn issue(token: &str, phone: &str, yellow_id: &str) -> SenderIssue {
    SenderIssue {
        token: token.to_string(),
        phone_number: phone.to_string(),
        yellow_id: yellow_id.to_string(),
        category_code: None,
    }
}

fn assert_http(error: msgbatch::client::ClientError, http: u16) {
    assert_eq!(error.http_status(), Some(http), "{error}");
}

async fn all_channels(client: &Client, status: Option<&str>) -> Vec<Channel> {
    client
        .channels(status, Some(SPEC_CHANNEL_PAGE_MAX))
        .try_collect()
        .await
        .expect("listing reads")
}

// ---------------------------------------------------------------- sender profiles

#[tokio::test]
async fn token_request_without_yellow_id_is_code_508_and_sends_no_sms() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let error = client
        .sender_token(ADMIN_PHONE, None)
        .await
        .expect_err("yellowId is required");
    assert_eq!(error.kind(), ErrorKind::Service, "{error}");
    assert_eq!(error.code(), Some("508"), "{error}");
    let outbox = sandbox.admin(&client).tokens().await.expect("outbox reads");
    assert!(outbox.tokens.is_empty(), "no SMS sent: {outbox:?}");
}

#[tokio::test]
async fn eleventh_token_request_within_a_minute_is_429() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    for n in 0..SPEC_TOKEN_REQUESTS_PER_MINUTE {
        client
            .sender_token(ADMIN_PHONE, Some(&format!("_shop{n}")))
            .await
            .unwrap_or_else(|error| panic!("request {} of the minute is allowed: {error}", n + 1));
    }
    let error = client
        .sender_token(ADMIN_PHONE, Some("_shopOneTooMany"))
        .await
        .expect_err("the 11th request is refused");
    assert_eq!(error.kind(), ErrorKind::RateLimited, "{error}");
    assert_eq!(error.http_status(), Some(429));
    let outbox = sandbox.admin(&client).tokens().await.expect("outbox reads");
    assert_eq!(
        outbox.tokens.len(),
        SPEC_TOKEN_REQUESTS_PER_MINUTE,
        "no SMS for the refused one"
    );
}

#[tokio::test]
async fn sender_key_is_issued_for_the_token_sent_to_that_phone_and_yellow_id() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    client
        .sender_token(ADMIN_PHONE, Some("_newShop"))
        .await
        .expect("token sent");
    let token = sent_token(&sandbox, &client, ADMIN_PHONE, "_newShop").await;

    let profile = client
        .sender_issue(&issue(&token, ADMIN_PHONE, "_newShop"))
        .await
        .expect("senderKey issued");
    assert!(!profile.sender_key.is_empty());
    assert_ne!(profile.sender_key, DEMO_SENDER_KEY);
    assert_eq!(profile.status, demo_config().new_sender_status);
}

#[tokio::test]
async fn token_does_not_issue_for_another_phone_or_yellow_id() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    client
        .sender_token(ADMIN_PHONE, Some("_shopA"))
        .await
        .expect("token sent");
    let token = sent_token(&sandbox, &client, ADMIN_PHONE, "_shopA").await;

    let error = client
        .sender_issue(&issue(&token, OTHER_PHONE, "_shopA"))
        .await
        .expect_err("token of another phone");
    assert_http(error, 400);
    let error = client
        .sender_issue(&issue(&token, ADMIN_PHONE, "_shopB"))
        .await
        .expect_err("token of another yellowId");
    assert_http(error, 400);
}

#[tokio::test]
async fn wrong_token_is_400() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    client
        .sender_token(ADMIN_PHONE, Some("_shopA"))
        .await
        .expect("token sent");
    let token = sent_token(&sandbox, &client, ADMIN_PHONE, "_shopA").await;
    for wrong in [wrong_token(&token), String::new()] {
        let error = client
            .sender_issue(&issue(&wrong, ADMIN_PHONE, "_shopA"))
            .await
            .expect_err("wrong token refused");
        assert_http(error, 400);
    }
}

#[tokio::test]
async fn token_cannot_be_reused() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    client
        .sender_token(ADMIN_PHONE, Some("_shopA"))
        .await
        .expect("token sent");
    let token = sent_token(&sandbox, &client, ADMIN_PHONE, "_shopA").await;
    client
        .sender_issue(&issue(&token, ADMIN_PHONE, "_shopA"))
        .await
        .expect("first use issues");
    let error = client
        .sender_issue(&issue(&token, ADMIN_PHONE, "_shopA"))
        .await
        .expect_err("second use refused");
    assert_http(error, 400);
}

#[tokio::test]
async fn new_profile_status_is_the_groups_new_sender_status() {
    let accounts = Accounts::parse(&accounts_with_partner(), "test accounts").expect("valid");
    let sandbox = TestSandbox::from_toml(&accounts_with_partner()).await;
    for (client, group) in [
        (sandbox.client(), DEMO_GROUP),
        (sandbox.client_as(PARTNER_KEY, PARTNER_GROUP), PARTNER_GROUP),
    ] {
        client
            .sender_token(ADMIN_PHONE, Some("_fresh"))
            .await
            .expect("token sent");
        let token = sent_token(&sandbox, &client, ADMIN_PHONE, "_fresh").await;
        let issued = client
            .sender_issue(&issue(&token, ADMIN_PHONE, "_fresh"))
            .await
            .expect("issued");
        let expected = group_config(&accounts, group).new_sender_status;
        assert_eq!(issued.status, expected, "{group}");
        let status = client.sender_status(&issued.sender_key).await.expect("status reads");
        assert_eq!(status.sender_key, issued.sender_key);
        assert_eq!(status.status, expected, "{group}");
    }
    assert_eq!(
        demo_config().new_sender_status,
        "IN_REVIEW",
        "the demo's new profiles are in review"
    );
}

#[tokio::test]
async fn configured_profile_status_is_reported() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let configured = demo_config()
        .sender_keys
        .into_iter()
        .find(|s| s.key == DEMO_SENDER_KEY)
        .expect("demo sender key configured");
    let status = client.sender_status(DEMO_SENDER_KEY).await.expect("status reads");
    assert_eq!(status.sender_key, DEMO_SENDER_KEY);
    assert_eq!(status.status, configured.status);
}

#[tokio::test]
async fn categories_list_the_configured_codes_and_one_is_accepted_on_issue() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let listed = client.categories().await.expect("categories read");
    assert_eq!(listed.categories, Accounts::demo().categories);
    let code = listed.categories.first().expect("at least one category").code.clone();

    client
        .sender_token(ADMIN_PHONE, Some("_cat"))
        .await
        .expect("token sent");
    let token = sent_token(&sandbox, &client, ADMIN_PHONE, "_cat").await;
    let mut request = issue(&token, ADMIN_PHONE, "_cat");
    request.category_code = Some(code);
    let profile = client
        .sender_issue(&request)
        .await
        .expect("issued with a listed category");
    assert!(!profile.sender_key.is_empty());
}

#[tokio::test]
async fn issued_profile_connects_to_a_new_channel() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    client.sender_token(ADMIN_PHONE, Some("_flow")).await.expect("step 1");
    let token = sent_token(&sandbox, &client, ADMIN_PHONE, "_flow").await;
    let profile = client
        .sender_issue(&issue(&token, ADMIN_PHONE, "_flow"))
        .await
        .expect("step 2");
    client.sender_status(&profile.sender_key).await.expect("step 3");
    let channel = client
        .channel_create(&ChannelCreate {
            name: "Flow Shop".to_string(),
            sender_key: profile.sender_key.clone(),
            kakao_search_id: Some("flowshop".to_string()),
            callback_no: None,
        })
        .await
        .expect("step 4");
    assert_eq!(channel.sender_key, profile.sender_key);
    assert_eq!(client.channel_get(&channel.id).await.expect("reads"), channel);
}

// ---------------------------------------------------------------- channel create, read, update, delete

#[tokio::test]
async fn channel_create_answers_201_with_enable_and_active() {
    let sandbox = TestSandbox::demo().await;
    let request = create("New Shop");
    let before = now_millis();
    let answer = sandbox
        .raw()
        .post(format!("{}/channel", sandbox.handle.gateway_url()))
        .header("apikey", DEMO_KEY)
        .header("groupid", DEMO_GROUP)
        .json(&request)
        .send()
        .await
        .expect("answer");
    let after = now_millis();
    assert_eq!(answer.status(), 201);
    let channel: Channel = answer.json().await.expect("channel record");
    assert!(!channel.id.is_empty());
    assert_eq!(channel.group_id, DEMO_GROUP);
    assert_eq!(channel.name, request.name);
    assert_eq!(channel.sender_key, request.sender_key);
    assert_eq!(channel.callback_no, request.callback_no);
    assert_eq!(channel.status, "ENABLE");
    assert_eq!(channel.channel_status, "ACTIVE");
    assert!(
        (before..=after).contains(&channel.created_at),
        "createdAt {}",
        channel.created_at
    );
    assert!(channel.updated_at >= channel.created_at);
}

#[tokio::test]
async fn channel_create_with_unknown_sender_key_is_refused() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let before = all_channels(&client, None).await;
    let mut request = create("Nobody's Shop");
    request.sender_key = "ffffffffffffffffffffffffffffffffffffffff".to_string();
    let error = client.channel_create(&request).await.expect_err("unknown senderKey");
    assert_eq!(error.kind(), ErrorKind::Service, "{error}");
    assert_http(error, 400);
    assert_eq!(all_channels(&client, None).await, before, "no channel created");
}

#[tokio::test]
async fn channel_create_takes_the_group_from_the_body_without_header() {
    let sandbox = TestSandbox::demo().await;
    let mut body = serde_json::to_value(create("Body Group Shop")).expect("serialises");
    body["groupId"] = DEMO_GROUP.into();
    let answer = sandbox
        .raw()
        .post(format!("{}/channel", sandbox.handle.gateway_url()))
        .header("apikey", DEMO_KEY)
        .json(&body)
        .send()
        .await
        .expect("answer");
    assert_eq!(answer.status(), 201);
    let channel: Channel = answer.json().await.expect("channel record");
    assert_eq!(channel.group_id, DEMO_GROUP);
}

#[tokio::test]
async fn channel_create_with_header_and_body_group_mismatch_is_401_err_102() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let mut body = serde_json::to_value(create("Mismatch Shop")).expect("serialises");
    body["groupId"] = OTHER_GROUP.into();
    let answer = sandbox
        .raw()
        .post(format!("{}/channel", sandbox.handle.gateway_url()))
        .header("apikey", DEMO_KEY)
        .header("groupid", DEMO_GROUP)
        .json(&body)
        .send()
        .await
        .expect("answer");
    assert_eq!(answer.status(), 401);
    let error: serde_json::Value = answer.json().await.expect("error body");
    assert_eq!(error["code"], "ERR_102", "{error}");
    let names: Vec<String> = all_channels(&client, None).await.into_iter().map(|c| c.name).collect();
    assert!(!names.iter().any(|n| n == "Mismatch Shop"), "{names:?}");
}

#[tokio::test]
async fn channel_get_returns_the_created_record() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let created = client.channel_create(&create("Get Shop")).await.expect("created");
    assert_eq!(client.channel_get(&created.id).await.expect("reads"), created);
    let error = client.channel_get("ch-does-not-exist").await.expect_err("absent");
    assert_http(error, 404);
}

#[tokio::test]
async fn put_with_an_empty_body_is_400_and_changes_nothing() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let created = client.channel_create(&create("Put Shop")).await.expect("created");

    let error = client
        .channel_update(&created.id, &ChannelUpdate::default())
        .await
        .expect_err("empty update refused");
    assert_http(error, 400);
    let url = format!("{}/channel/{}", sandbox.handle.gateway_url(), created.id);
    let no_body = sandbox
        .raw()
        .put(&url)
        .header("apikey", DEMO_KEY)
        .header("groupid", DEMO_GROUP)
        .send()
        .await
        .expect("answer");
    assert_eq!(no_body.status(), 400, "no body at all");
    assert_eq!(client.channel_get(&created.id).await.expect("reads"), created);
}

#[tokio::test]
async fn put_with_a_name_updates_the_name() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let created = client.channel_create(&create("Old Name")).await.expect("created");
    let update = ChannelUpdate {
        name: Some("New Name".to_string()),
        ..ChannelUpdate::default()
    };
    let updated = client.channel_update(&created.id, &update).await.expect("updated");
    assert_eq!(updated.name, "New Name");
    assert!(updated.updated_at >= created.updated_at);
    let read = client.channel_get(&created.id).await.expect("reads");
    assert_eq!(read.name, "New Name");
    assert_eq!(read.id, created.id);
    assert_eq!(read.sender_key, created.sender_key);
    assert_eq!(read.callback_no, created.callback_no);
    assert_eq!(read.status, "ENABLE");
}

#[tokio::test]
async fn delete_soft_deletes_to_deleted() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let kept = client.channel_create(&create("Kept")).await.expect("created");
    let gone = client.channel_create(&create("Gone")).await.expect("created");
    client.channel_delete(&gone.id).await.expect("deleted");

    let read = client
        .channel_get(&gone.id)
        .await
        .expect("a deleted channel is still readable");
    assert_eq!(read.status, "DELETED");
    assert_eq!(read.name, gone.name);
    let deleted: HashSet<String> = all_channels(&client, Some("DELETED"))
        .await
        .into_iter()
        .map(|c| c.id)
        .collect();
    let enabled: HashSet<String> = all_channels(&client, Some("ENABLE"))
        .await
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert!(deleted.contains(&gone.id));
    assert!(!enabled.contains(&gone.id));
    assert!(enabled.contains(&kept.id));
    assert!(!deleted.contains(&kept.id));
}

// ---------------------------------------------------------------- channel listing

/// Creates `CREATED_CHANNELS` channels and answers the ids of every channel of the demo group.
async fn many_channels(client: &Client) -> HashSet<String> {
    let mut ids: HashSet<String> = demo_config().channels.into_iter().map(|c| c.id).collect();
    for n in 0..CREATED_CHANNELS {
        let channel = client
            .channel_create(&create(&format!("Shop {n}")))
            .await
            .expect("created");
        assert!(ids.insert(channel.id), "channel ids are unique");
    }
    ids
}

async fn walk_channel_pages(client: &Client, status: Option<&str>, limit: u32, most: usize) -> Vec<ChannelPage> {
    let mut pages = Vec::new();
    let mut last_key: Option<String> = None;
    loop {
        let page = client
            .channel_page(status, Some(limit), last_key.as_deref())
            .await
            .expect("page reads");
        last_key = page.last_key.clone();
        pages.push(page);
        if last_key.is_none() {
            return pages;
        }
        assert!(pages.len() <= most, "the walk does not end");
    }
}

async fn check_channel_walks(limit: u32) {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let expected = many_channels(&client).await;
    let total = expected.len();
    let limit_items = limit as usize;
    if limit > 1 {
        assert_ne!(
            total % limit_items,
            0,
            "{total} channels must not be a multiple of {limit}"
        );
    }

    let pages = walk_channel_pages(&client, None, limit, total + 1).await;
    assert_eq!(pages.len(), total.div_ceil(limit_items));
    let (last, full) = pages.split_last().expect("a page");
    for page in full {
        assert_eq!(page.count as usize, page.items.len());
        assert_eq!(page.items.len(), limit_items);
        assert!(page.last_key.is_some());
    }
    assert_eq!(last.count as usize, last.items.len());
    assert_eq!(last.items.len(), total - limit_items * full.len());
    assert!(last.last_key.is_none());
    let paged: Vec<String> = pages
        .iter()
        .flat_map(|p| p.items.iter().map(|c| c.id.clone()))
        .collect();
    assert_eq!(paged.len(), total, "every channel once, page walk, limit {limit}");
    assert_eq!(paged.into_iter().collect::<HashSet<_>>(), expected);

    let streamed: Vec<Channel> = client
        .channels(None, Some(limit))
        .try_collect()
        .await
        .expect("stream reads");
    assert_eq!(streamed.len(), total, "every channel once, stream, limit {limit}");
    assert_eq!(streamed.into_iter().map(|c| c.id).collect::<HashSet<_>>(), expected);
}

#[tokio::test]
async fn limit_1_channel_walk_and_stream_yield_every_channel_exactly_once() {
    check_channel_walks(1).await;
}

#[tokio::test]
async fn limit_7_channel_walk_and_stream_yield_every_channel_exactly_once() {
    check_channel_walks(7).await;
}

#[tokio::test]
async fn limit_200_channel_walk_and_stream_yield_every_channel_exactly_once() {
    check_channel_walks(SPEC_CHANNEL_PAGE_MAX).await;
}

#[tokio::test]
async fn channel_list_default_limit_is_50() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let ids = many_channels(&client).await;
    assert!(ids.len() > SPEC_CHANNEL_PAGE_DEFAULT);
    let page = client.channel_page(None, None, None).await.expect("page reads");
    assert_eq!(page.items.len(), SPEC_CHANNEL_PAGE_DEFAULT);
    assert_eq!(page.count as usize, SPEC_CHANNEL_PAGE_DEFAULT);
    assert!(page.last_key.is_some());
}

#[tokio::test]
async fn channel_list_limit_200_is_allowed_and_201_or_0_is_400() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let ids = many_channels(&client).await;
    assert!(ids.len() > SPEC_CHANNEL_PAGE_MAX as usize);
    let page = client
        .channel_page(None, Some(SPEC_CHANNEL_PAGE_MAX), None)
        .await
        .expect("max page reads");
    assert_eq!(page.items.len(), SPEC_CHANNEL_PAGE_MAX as usize);
    for limit in [SPEC_CHANNEL_PAGE_MAX + 1, 0] {
        let error = client
            .channel_page(None, Some(limit), None)
            .await
            .expect_err("limit refused");
        assert_http(error, 400);
    }
}

#[tokio::test]
async fn status_filter_lists_only_matching_channels_across_pages() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    let mut enabled: HashSet<String> = demo_config().channels.into_iter().map(|c| c.id).collect();
    let mut deleted = HashSet::new();
    for n in 0..30 {
        let channel = client
            .channel_create(&create(&format!("Mixed {n}")))
            .await
            .expect("created");
        if n % 3 == 0 {
            client.channel_delete(&channel.id).await.expect("deleted");
            deleted.insert(channel.id);
        } else {
            enabled.insert(channel.id);
        }
    }
    for (status, expected) in [("ENABLE", &enabled), ("DELETED", &deleted)] {
        let pages = walk_channel_pages(&client, Some(status), 7, expected.len() + 1).await;
        let listed: Vec<&Channel> = pages.iter().flat_map(|p| p.items.iter()).collect();
        assert!(listed.iter().all(|c| c.status == status), "{status}: {listed:?}");
        assert_eq!(listed.len(), expected.len(), "{status}: each once");
        let ids: HashSet<String> = listed.iter().map(|c| c.id.clone()).collect();
        assert_eq!(&ids, expected, "{status}");
        let streamed: Vec<Channel> = client
            .channels(Some(status), Some(7))
            .try_collect()
            .await
            .expect("stream reads");
        assert_eq!(streamed.len(), expected.len(), "{status}: stream, each once");
        assert_eq!(&streamed.into_iter().map(|c| c.id).collect::<HashSet<_>>(), expected);
    }
}

// ---------------------------------------------------------------- group isolation

#[tokio::test]
async fn channel_of_another_group_is_404_for_get_put_and_delete() {
    let sandbox = TestSandbox::from_toml(&accounts_with_partner()).await;
    let demo = sandbox.client();
    let partner = sandbox.client_as(PARTNER_KEY, PARTNER_GROUP);
    let target = demo.channel_create(&create("Demo Only")).await.expect("created");

    let error = partner.channel_get(&target.id).await.expect_err("GET unreachable");
    assert_http(error, 404);
    let update = ChannelUpdate {
        name: Some("Hijacked".to_string()),
        ..ChannelUpdate::default()
    };
    let error = partner
        .channel_update(&target.id, &update)
        .await
        .expect_err("PUT unreachable");
    assert_http(error, 404);
    let error = partner
        .channel_delete(&target.id)
        .await
        .expect_err("DELETE unreachable");
    assert_http(error, 404);

    let answer = sandbox
        .raw()
        .get(format!("{}/channel/{}", sandbox.handle.gateway_url(), target.id))
        .header("apikey", PARTNER_KEY)
        .header("groupid", PARTNER_GROUP)
        .send()
        .await
        .expect("answer");
    assert_eq!(answer.status(), 404);
    let text = answer.text().await.expect("body");
    assert!(
        !text.contains(&target.name) && !text.contains(DEMO_SENDER_KEY),
        "data leaked: {text}"
    );

    assert_eq!(
        demo.channel_get(&target.id).await.expect("owner reads"),
        target,
        "unchanged"
    );
    // And the other way round.
    let error = demo.channel_get(PARTNER_CHANNEL).await.expect_err("GET unreachable");
    assert_http(error, 404);
    assert_eq!(
        partner.channel_get(PARTNER_CHANNEL).await.expect("owner reads").status,
        "ENABLE"
    );
}

#[tokio::test]
async fn channel_list_shows_only_the_callers_group() {
    let sandbox = TestSandbox::from_toml(&accounts_with_partner()).await;
    let demo = sandbox.client();
    let partner = sandbox.client_as(PARTNER_KEY, PARTNER_GROUP);
    demo.channel_create(&create("Demo Listed")).await.expect("created");
    for (client, group) in [(&demo, DEMO_GROUP), (&partner, PARTNER_GROUP)] {
        let listed = all_channels(client, None).await;
        assert!(!listed.is_empty());
        assert!(listed.iter().all(|c| c.group_id == group), "{group}: {listed:?}");
    }
    let partner_ids: HashSet<String> = all_channels(&partner, None).await.into_iter().map(|c| c.id).collect();
    assert_eq!(partner_ids, HashSet::from([PARTNER_CHANNEL.to_string()]));
}

#[tokio::test]
async fn sender_status_of_another_groups_key_is_404() {
    let sandbox = TestSandbox::from_toml(&accounts_with_partner()).await;
    let demo = sandbox.client();
    let partner = sandbox.client_as(PARTNER_KEY, PARTNER_GROUP);
    let error = partner.sender_status(DEMO_SENDER_KEY).await.expect_err("unreachable");
    assert_http(error, 404);
    let error = demo.sender_status(PARTNER_SENDER_KEY).await.expect_err("unreachable");
    assert_http(error, 404);
    demo.sender_status(DEMO_SENDER_KEY).await.expect("owner reads");
}

#[tokio::test]
async fn channel_create_with_another_groups_sender_key_is_refused() {
    let sandbox = TestSandbox::from_toml(&accounts_with_partner()).await;
    let partner = sandbox.client_as(PARTNER_KEY, PARTNER_GROUP);
    let request = ChannelCreate {
        name: "Borrowed Key".to_string(),
        sender_key: DEMO_SENDER_KEY.to_string(),
        kakao_search_id: None,
        callback_no: None,
    };
    let error = partner
        .channel_create(&request)
        .await
        .expect_err("another group's senderKey");
    assert_eq!(error.kind(), ErrorKind::Service, "{error}");
    let listed = all_channels(&partner, None).await;
    assert!(!listed.iter().any(|c| c.name == request.name), "{listed:?}");
}
