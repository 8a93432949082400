//! Refusals every endpoint of the sandbox shares, over HTTP: every answer is JSON in its endpoint's error shape, those axum makes before a handler runs included (a path segment that is not UTF-8, a body over the limit, a method the path does not take), and a body `groupId` that is not a string is refused, never ignored.

mod common;
use common::*;

use reqwest::Method;
use serde_json::{json, Value};

/// README, "Sandbox codes": the largest request body the sandbox reads (2 MiB).
const BODY_LIMIT_BYTES: usize = 2 * 1024 * 1024;

/// The `status` of an error body: brand says `error`, every other endpoint `fail`.
const FAIL: &str = "fail";
const ERROR: &str = "error";

/// A route of the sandbox: its path under the root (with a stand-in id), the methods it takes
/// and the `status` its error bodies carry.
struct Route {
    path: &'static str,
    methods: &'static [&'static str],
    style: &'static str,
}

const fn route(path: &'static str, methods: &'static [&'static str], style: &'static str) -> Route {
    Route { path, methods, style }
}

const ROUTES: [Route; 16] = [
    route("/standard/alimTalk", &["POST"], FAIL),
    route("/standard/friendTalk/brand", &["POST"], ERROR),
    route("/standard/sms", &["POST"], FAIL),
    route("/standard/sms/lms", &["POST"], FAIL),
    route("/gateway/alimTalk", &["POST"], FAIL),
    route("/gateway/result/x", &["GET"], FAIL),
    route("/gateway/result/sendGroup/x", &["GET"], FAIL),
    route("/gateway/channel/sender/token", &["GET"], FAIL),
    route("/gateway/channel/sender", &["POST", "GET"], FAIL),
    route("/gateway/category", &["GET"], FAIL),
    route("/gateway/channel", &["POST", "GET"], FAIL),
    route("/gateway/channel/x", &["GET", "PUT", "DELETE"], FAIL),
    route("/_sandbox/ledger", &["GET"], FAIL),
    route("/_sandbox/sent", &["GET"], FAIL),
    route("/_sandbox/tokens", &["GET"], FAIL),
    route("/_sandbox/faults", &["GET", "PUT"], FAIL),
];

/// The routes and methods that read a body.
fn body_calls() -> impl Iterator<Item = (Method, &'static Route)> {
    ROUTES.iter().flat_map(|route| {
        route
            .methods
            .iter()
            .filter(|m| matches!(**m, "POST" | "PUT"))
            .map(move |m| (Method::from_bytes(m.as_bytes()).expect("a method"), route))
    })
}

/// A request to `path` under the sandbox's root with the demo group's key and `groupid` header.
fn request(sandbox: &TestSandbox, method: Method, path: &str) -> reqwest::RequestBuilder {
    sandbox
        .raw()
        .request(method, format!("{}{path}", sandbox.handle.root_url()))
        .header("apikey", DEMO_KEY)
        .header("groupid", DEMO_GROUP)
}

/// The HTTP status and the JSON body of an answer; fails unless the body is JSON and says so.
async fn json_answer(what: &str, response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap_or("(not text)").to_string());
    let text = response.text().await.expect("body reads");
    assert!(
        content_type
            .as_deref()
            .is_some_and(|t| t.starts_with("application/json")),
        "{what}: HTTP {status} with content type {content_type:?}, body {text:?}"
    );
    let body = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what}: body {text:?} is not JSON: {e}"));
    (status, body)
}

/// The answer is the endpoint's error body: `status` in its style, `code`, a `message`.
fn assert_error_body(what: &str, body: &Value, style: &str, code: &str) {
    assert_eq!(body["status"], style, "{what}: {body}");
    assert_eq!(body["code"], code, "{what}: {body}");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{what}: {body}"
    );
}

// ---------------------------------------------------------------- every answer is JSON

#[tokio::test]
async fn a_method_a_path_does_not_take_is_405_in_json_naming_the_methods_it_takes() {
    let sandbox = TestSandbox::demo().await;
    for route in &ROUTES {
        let what = format!("PATCH {}", route.path);
        let response = request(&sandbox, Method::PATCH, route.path)
            .send()
            .await
            .expect("answered");
        let allow = response
            .headers()
            .get("allow")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        let (status, body) = json_answer(&what, response).await;
        assert_eq!(status, 405, "{what}: {body}");
        assert_error_body(&what, &body, route.style, "SBX_METHOD_NOT_ALLOWED");
        for method in route.methods {
            assert!(allow.contains(method), "{what}: Allow {allow:?} lacks {method}");
            assert!(body["message"].as_str().unwrap().contains(method), "{what}: {body}");
        }
    }
}

#[tokio::test]
async fn a_path_segment_that_is_not_utf8_is_400_in_json() {
    let sandbox = TestSandbox::demo().await;
    // `%FF` and `%FF%FE` decode to bytes that are no UTF-8.
    let calls = [
        (Method::GET, "/gateway/result/%FF"),
        (Method::GET, "/gateway/result/sendGroup/%FF"),
        (Method::GET, "/gateway/channel/%FF%FE"),
        (Method::PUT, "/gateway/channel/%FF%FE"),
        (Method::DELETE, "/gateway/channel/%FF%FE"),
    ];
    for (method, path) in calls {
        let what = format!("{method} {path}");
        let response = request(&sandbox, method, path)
            .json(&json!({"name": "Renamed"}))
            .send()
            .await
            .expect("answered");
        let (status, body) = json_answer(&what, response).await;
        assert_eq!(status, 400, "{what}: {body}");
        assert_error_body(&what, &body, FAIL, "SBX_BAD_REQUEST");
    }
    // The control: a percent-encoded id that is UTF-8 (Hangul) is read, and is no channel.
    let what = "GET /gateway/channel/%EC%B1%84";
    let response = request(&sandbox, Method::GET, "/gateway/channel/%EC%B1%84")
        .send()
        .await
        .expect("answered");
    let (status, body) = json_answer(what, response).await;
    assert_eq!(status, 404, "{what}: {body}");
    assert_eq!(body["error"], "no channel 채", "{what}: {body}");
}

#[tokio::test]
async fn a_body_over_the_limit_is_413_in_json_and_a_body_at_the_limit_is_read() {
    let sandbox = TestSandbox::demo().await;
    for (method, route) in body_calls() {
        let what = format!("{method} {} with {} bytes", route.path, BODY_LIMIT_BYTES + 1);
        let response = request(&sandbox, method, route.path)
            .header("content-type", "application/json")
            .body(vec![b' '; BODY_LIMIT_BYTES + 1])
            .send()
            .await
            .expect("answered");
        let (status, body) = json_answer(&what, response).await;
        assert_eq!(status, 413, "{what}: {body}");
        assert_error_body(&what, &body, route.style, "SBX_BODY_TOO_LARGE");
    }
    // The control: an SMS request padded with blanks to the limit itself is sent.
    let mut padded = sms_body(json!(DEMO_GROUP)).to_string().into_bytes();
    padded.resize(BODY_LIMIT_BYTES, b' ');
    let response = request(&sandbox, Method::POST, "/standard/sms")
        .header("content-type", "application/json")
        .body(padded)
        .send()
        .await
        .expect("answered");
    let (status, body) = json_answer("SMS of exactly the limit", response).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["value"][0]["status"], "SMS_00", "{body}");
}

#[tokio::test]
async fn unknown_paths_bad_json_and_a_missing_content_type_are_answered_in_json() {
    let sandbox = TestSandbox::demo().await;
    for path in [
        "/",
        "/nowhere",
        "/standard/nowhere",
        "/gateway/channel/x/y",
        "/_sandbox",
    ] {
        let (status, body) = json_answer(
            path,
            request(&sandbox, Method::GET, path).send().await.expect("answered"),
        )
        .await;
        assert_eq!(status, 404, "{path}: {body}");
        assert!(body["error"].is_string(), "{path}: {body}");
    }
    for (method, route) in body_calls() {
        let what = format!("{method} {} with a body that is not JSON", route.path);
        let response = request(&sandbox, method, route.path)
            .header("content-type", "application/json")
            .body("{not json")
            .send()
            .await
            .expect("answered");
        let (status, body) = json_answer(&what, response).await;
        assert_eq!(status, 400, "{what}: {body}");
        assert_error_body(&what, &body, route.style, "SBX_BAD_REQUEST");
    }
    // The spec asks callers for `Content-Type: application/json`; the sandbox reads the body
    // either way (what the service does without it is not shown), and answers JSON.
    let response = request(&sandbox, Method::POST, "/standard/sms")
        .body(sms_body(json!(DEMO_GROUP)).to_string())
        .send()
        .await
        .expect("answered");
    let (status, body) = json_answer("SMS without a content type", response).await;
    assert_eq!(status, 200, "{body}");
}

/// A valid SMS request of the demo group, with `group_id` as its body `groupId`.
fn sms_body(group_id: Value) -> Value {
    json!({
        "service": SMS_SERVICE,
        "message": "배송 안내입니다.",
        "numbers": [number_ending(1, "10")],
        "groupId": group_id,
        "callbackNo": DEMO_CALLBACK,
    })
}

// ---------------------------------------------------------------- a body groupId that is not a string

/// A body `groupId` of each JSON type that is not a string (`null` counts as absent).
fn not_strings() -> [Value; 4] {
    [json!(5), json!(true), json!([DEMO_GROUP]), json!({"id": DEMO_GROUP})]
}

/// An endpoint whose body may carry `groupId`, and a body it takes when that is `demo`.
struct GroupWrite {
    method: Method,
    path: String,
    style: &'static str,
    body: Value,
}

impl GroupWrite {
    fn new(method: Method, path: impl Into<String>, style: &'static str, body: Value) -> GroupWrite {
        GroupWrite {
            method,
            path: path.into(),
            style,
            body,
        }
    }

    async fn send(&self, sandbox: &TestSandbox, group_id: &Value, with_header: bool) -> (u16, Value) {
        let mut body = self.body.clone();
        body["groupId"] = group_id.clone();
        let mut call = sandbox
            .raw()
            .request(
                self.method.clone(),
                format!("{}{}", sandbox.handle.root_url(), self.path),
            )
            .header("apikey", DEMO_KEY)
            .json(&body);
        if with_header {
            call = call.header("groupid", DEMO_GROUP);
        }
        let what = format!("{} {} with groupId {group_id}", self.method, self.path);
        json_answer(&what, call.send().await.expect("answered")).await
    }
}

/// What a refused write must leave as it was: charges, sent numbers, channels.
async fn demo_state(sandbox: &TestSandbox) -> (usize, u64, Value) {
    let client = sandbox.client();
    let admin = sandbox.admin(&client);
    let ledger = admin.ledger().await.expect("ledger reads");
    let sent = admin.sent().await.expect("sent reads");
    let channels = request(sandbox, Method::GET, "/gateway/channel?limit=200")
        .send()
        .await
        .expect("answered");
    let (_, channels) = json_answer("channel list", channels).await;
    (ledger.entries.len(), sent.total, channels)
}

#[tokio::test]
async fn a_body_group_id_that_is_not_a_string_is_400_on_every_endpoint_that_reads_one() {
    let sandbox = TestSandbox::demo().await;
    let client = sandbox.client();
    client
        .sender_token("01012345678", Some("_typedShop"))
        .await
        .expect("token sent");
    let outbox = sandbox.admin(&client).tokens().await.expect("outbox reads");
    let token = outbox.tokens.last().expect("a token was sent").token.clone();
    let number = number_ending(1, "10");
    // The gateway writes first: they are the ones that ignored such a `groupId`.
    let writes = [
        GroupWrite::new(
            Method::POST,
            "/gateway/channel/sender",
            FAIL,
            json!({"token": token, "phoneNumber": "01012345678", "yellowId": "_typedShop"}),
        ),
        GroupWrite::new(
            Method::POST,
            "/gateway/channel",
            FAIL,
            json!({"name": "Typed Shop", "senderKey": DEMO_SENDER_KEY, "callbackNo": DEMO_CALLBACK}),
        ),
        GroupWrite::new(
            Method::PUT,
            "/gateway/channel/ch-demo-small",
            FAIL,
            json!({"name": "Renamed Shop"}),
        ),
        GroupWrite::new(
            Method::POST,
            "/gateway/alimTalk",
            FAIL,
            json!({
                "service": DEMO_SENDER_KEY, "template": "ORDER_SHIPPED", "message": ORDER_SHIPPED_TEXT,
                "numbers": [{"hp": number, "name": "김민수", "VAR1": "A-100"}],
            }),
        ),
        GroupWrite::new(
            Method::POST,
            "/standard/alimTalk",
            FAIL,
            json!({
                "service": ALIMTALK_SERVICE, "template": "ORDER_SHIPPED", "message": ORDER_SHIPPED_TEXT,
                "numbers": [{"key": 1, "hp": number, "name": "김민수", "VAR1": "A-100"}],
            }),
        ),
        GroupWrite::new(
            Method::POST,
            "/standard/friendTalk/brand",
            ERROR,
            json!({
                "service": BRAND_SERVICE, "chatBubbleType": "TEXT", "message": "(광고) 겨울 세일",
                "numbers": [{"key": 1, "hp": number}],
            }),
        ),
        GroupWrite::new(Method::POST, "/standard/sms", FAIL, sms_body(Value::Null)),
        GroupWrite::new(Method::POST, "/standard/sms/lms", FAIL, sms_body(Value::Null)),
    ];
    let before = demo_state(&sandbox).await;
    for write in &writes {
        for group_id in not_strings() {
            // With the `groupid` header naming the right group, and without any header.
            for with_header in [true, false] {
                let what = format!(
                    "{} {} groupId {group_id}, header {with_header}",
                    write.method, write.path
                );
                let (status, body) = write.send(&sandbox, &group_id, with_header).await;
                assert_eq!(status, 400, "{what}: {body}");
                assert_error_body(&what, &body, write.style, "SBX_BAD_REQUEST");
                assert!(
                    body["message"].as_str().unwrap().contains("groupId must be a string"),
                    "{what}: {body}"
                );
            }
        }
    }
    assert_eq!(demo_state(&sandbox).await, before, "a refused write changed nothing");
    // The control: each body with the group as a string is taken (so the token was not spent).
    for write in &writes {
        let (status, body) = write.send(&sandbox, &json!(DEMO_GROUP), true).await;
        assert!(
            (200..300).contains(&status),
            "{} {}: {status} {body}",
            write.method,
            write.path
        );
    }
}
