//! HTTP routes of the sandbox: both deployments, the admin paths, credentials and fault injection around each call.

use super::faults::{FaultAction, Faults};
use super::state::{Credentials, GroupRef, Rejection, SandboxState};
use crate::api::channel::{ChannelCreate, ChannelUpdate, SenderIssue};
use crate::api::faults::FaultConfig;
use crate::api::gateway::GatewayAlimTalkRequest;
use crate::api::standard::{AlimTalkRequest, BrandRequest, TextMessageRequest};
use crate::api::{Code, ErrorBody, HEADER_API_KEY, HEADER_GROUP_ID};
use crate::phone::Masked;
use crate::text::TextLane;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequestParts, Path, Query};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::Notify;

mod refusals;

/// State every handler shares.
#[derive(Clone)]
pub(crate) struct Shared {
    pub state: Arc<Mutex<SandboxState>>,
    pub faults: Arc<Faults>,
}

/// Lets a handler close its own connection without answering (the "processed, then dropped" fault).
#[derive(Clone)]
pub(crate) struct ConnectionKill(pub Arc<Notify>);

type Query_ = Query<HashMap<String, String>>;

/// Where the standard deployment is served, and its brand endpoint under it: the one endpoint
/// whose errors say `status: "error"` (every other says `fail`).
const STANDARD_PREFIX: &str = "/standard";
const BRAND_PATH: &str = "/friendTalk/brand";

/// The largest request body the sandbox reads (the spec shows no limit): axum's own default,
/// named so that the README can say it and a refusal can quote it.
const BODY_LIMIT_BYTES: usize = 2 * 1024 * 1024;

pub(crate) fn router(shared: Shared) -> Router {
    let standard = Router::new()
        .route("/alimTalk", post(standard_alimtalk))
        .route(BRAND_PATH, post(brand))
        .route("/sms", post(sms))
        .route("/sms/lms", post(lms));
    let gateway = Router::new()
        .route("/alimTalk", post(gateway_alimtalk))
        .route("/result/{id}", get(result))
        .route("/result/sendGroup/{send_group_id}", get(result_group))
        .route("/channel/sender/token", get(sender_token))
        .route("/channel/sender", post(sender_issue).get(sender_status))
        .route("/category", get(categories))
        .route("/channel", post(channel_create).get(channel_list))
        .route(
            "/channel/{id}",
            get(channel_get).put(channel_update).delete(channel_delete),
        );
    let admin = Router::new()
        .route("/ledger", get(admin_ledger))
        .route("/sent", get(admin_sent))
        .route("/tokens", get(admin_tokens))
        .route("/faults", get(admin_faults_get).put(admin_faults_put));
    let routes = Router::new()
        .nest(STANDARD_PREFIX, standard)
        .nest("/gateway", gateway)
        .nest("/_sandbox", admin)
        .fallback(|| async { reply_rejection(Rejection::not_found("no such path")) })
        .layer(DefaultBodyLimit::max(BODY_LIMIT_BYTES))
        .with_state(shared);
    // Around the whole router, not route by route (`Router::layer`): a route adds the `Allow`
    // header of its 405 outside its own layers, and the refusal's message names those methods.
    Router::new()
        .fallback_service(routes)
        .layer(middleware::from_fn(refusals::json_refusals))
}

fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

fn json_reply<T: Serialize>(status: StatusCode, body: &T) -> Response {
    match serde_json::to_vec(body) {
        Ok(bytes) => json_bytes_reply(status, bytes),
        Err(error) => {
            tracing::error!("sandbox answer could not be written as JSON: {error}");
            // A fixed body: building another one could fail the same way.
            let body =
                br#"{"status":"fail","code":"SBX_INTERNAL","message":"the answer could not be written as JSON"}"#;
            json_bytes_reply(StatusCode::INTERNAL_SERVER_ERROR, body.to_vec())
        }
    }
}

fn json_bytes_reply(status: StatusCode, bytes: Vec<u8>) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        bytes,
    )
        .into_response()
}

fn reply_rejection(rejection: Rejection) -> Response {
    let status = StatusCode::from_u16(rejection.http).unwrap_or(StatusCode::BAD_REQUEST);
    let mut response = json_reply(status, &rejection.body);
    if let Some(seconds) = rejection.retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

fn reply<T: Serialize>(result: Result<T, Rejection>, success: StatusCode) -> Response {
    match result {
        Ok(body) => json_reply(success, &body),
        Err(rejection) => reply_rejection(rejection),
    }
}

fn parse_json<T: DeserializeOwned>(body: &[u8], reject: fn(&str, String) -> Rejection) -> Result<T, Rejection> {
    serde_json::from_slice(body).map_err(|error| reject("SBX_BAD_REQUEST", format!("request body: {error}")))
}

/// A body's `groupId`, whatever its JSON type, read without committing to the endpoint's type.
#[derive(serde::Deserialize)]
struct BodyGroup {
    #[serde(rename = "groupId", default)]
    group_id: Option<serde_json::Value>,
}

impl BodyGroup {
    /// The group the body names: none when `groupId` is absent or `null` (as for every optional
    /// field). A `groupId` that is not a string is refused with 400 `SBX_BAD_REQUEST` on every
    /// endpoint, never ignored: ignoring it would let a `groupid` header vouch for a body whose
    /// group no one checked.
    fn named(self) -> Result<Option<String>, Rejection> {
        let kind = match self.group_id {
            None | Some(serde_json::Value::Null) => return Ok(None),
            Some(serde_json::Value::String(group)) => return Ok(Some(group)),
            Some(serde_json::Value::Bool(_)) => "a boolean",
            Some(serde_json::Value::Number(_)) => "a number",
            Some(serde_json::Value::Array(_)) => "an array",
            Some(serde_json::Value::Object(_)) => "an object",
        };
        Err(Rejection::fail(
            "SBX_BAD_REQUEST",
            format!("request body: groupId must be a string, not {kind}"),
        ))
    }
}

/// The body's `groupId` on a gateway write, which may name the group there instead of in the
/// `groupid` header. A body that is not a JSON object is refused here, before the group is
/// checked, as a send refuses it.
fn body_group_id(body: &[u8]) -> Result<Option<String>, Rejection> {
    parse_json::<BodyGroup>(body, Rejection::fail)?.named()
}

/// `ERR_100` when the `apikey` header is missing or empty: checked before the body is read, on
/// every endpoint, so a caller without a key learns that first.
fn require_api_key(headers: &HeaderMap) -> Result<(), Rejection> {
    if header_text(headers, HEADER_API_KEY).is_none_or(str::is_empty) {
        return Err(Rejection::missing_credentials(
            "authentication data (apikey) is missing",
        ));
    }
    Ok(())
}

fn fault_reply(action: FaultAction) -> Option<Response> {
    let (status, code, retry_after) = match action {
        FaultAction::Unavailable { retry_after_secs } => {
            (StatusCode::SERVICE_UNAVAILABLE, "SBX_UNAVAILABLE", retry_after_secs)
        }
        FaultAction::RateLimited { retry_after_secs } => {
            (StatusCode::TOO_MANY_REQUESTS, "SBX_RATE_LIMITED", retry_after_secs)
        }
        FaultAction::None | FaultAction::Drop => return None,
    };
    let body = ErrorBody {
        status: Some("fail".into()),
        code: Some(Code::text(code)),
        message: Some("injected fault: request not processed".into()),
        error: None,
    };
    let mut response = json_reply(status, &body);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
    Some(response)
}

/// Runs `work` under the faults in force: latency first, then 503/429 instead of it, or the
/// connection dropped after it.
async fn guarded(
    shared: &Shared,
    kill: &ConnectionKill,
    is_send: bool,
    work: impl FnOnce(&mut SandboxState) -> Response,
) -> Response {
    let (latency, action) = shared.faults.decide(is_send);
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    if let Some(response) = fault_reply(action) {
        return response;
    }
    let response = work(&mut shared.state.lock());
    if action == FaultAction::Drop {
        kill.0.notify_one();
        std::future::pending::<()>().await;
    }
    response
}

/// Which deployment (or the admin paths) an endpoint belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Deployment {
    Standard,
    Gateway,
    Admin,
}

/// The caller's group; on the gateway, only a group granted gateway eligibility.
fn authenticate(
    state: &SandboxState,
    headers: &HeaderMap,
    body_group: Option<&str>,
    header_required: bool,
    deployment: Deployment,
) -> Result<GroupRef, Rejection> {
    let credentials = Credentials {
        api_key: header_text(headers, HEADER_API_KEY),
        group_header: header_text(headers, HEADER_GROUP_ID),
        group_body: body_group,
    };
    let group = state.authenticate(&credentials, header_required)?;
    if deployment == Deployment::Gateway {
        state.check_gateway_eligible(group)?;
    }
    Ok(group)
}

/// What every handler takes from its request: the shared state, a way to drop its connection,
/// and its headers. One extractor, so each handler names only what is its own (path, query, body).
pub(crate) struct Call {
    shared: Shared,
    kill: ConnectionKill,
    headers: HeaderMap,
}

impl FromRequestParts<Shared> for Call {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, shared: &Shared) -> Result<Call, Response> {
        let kill = parts.extensions.get::<ConnectionKill>().cloned().ok_or_else(|| {
            reply_rejection(Rejection::fail("SBX_INTERNAL", "the connection handle is missing").with_http(500))
        })?;
        Ok(Call {
            shared: shared.clone(),
            kill,
            headers: parts.headers.clone(),
        })
    }
}

/// How one send endpoint reads its request: the error shape, whether the group header is
/// required, and where the body names the group.
struct SendEndpoint<T> {
    reject: fn(&str, String) -> Rejection,
    group_header_required: bool,
    body_group: fn(&T) -> &str,
    deployment: Deployment,
}

impl Call {
    /// A send endpoint: key presence, body, group, then the rule.
    async fn send<T: DeserializeOwned, R: Serialize>(
        &self,
        body: &[u8],
        endpoint: SendEndpoint<T>,
        handle: impl FnOnce(&mut SandboxState, GroupRef, &T) -> Result<R, Rejection>,
    ) -> Response {
        let headers = &self.headers;
        guarded(&self.shared, &self.kill, true, |state| {
            // Errors not made by `endpoint.reject` (credentials, `groupId`) take the endpoint's
            // error shape (brand answers `status: "error"`).
            let error_status = (endpoint.reject)("", String::new()).body.status;
            let restyled = |mut rejection: Rejection| {
                rejection.body.status = error_status.clone();
                reply_rejection(rejection)
            };
            if let Err(rejection) = require_api_key(headers) {
                return restyled(rejection);
            }
            let request: T = match parse_json(body, endpoint.reject) {
                Ok(request) => request,
                Err(rejection) => {
                    // serde places a wrong type by line and column only: a `groupId` that is
                    // not a string is named, in the words of the gateway writes.
                    let group_refused = serde_json::from_slice::<BodyGroup>(body)
                        .ok()
                        .and_then(|group| group.named().err());
                    return restyled(group_refused.unwrap_or(rejection));
                }
            };
            let group_body = Some((endpoint.body_group)(&request));
            let group = match authenticate(
                state,
                headers,
                group_body,
                endpoint.group_header_required,
                endpoint.deployment,
            ) {
                Ok(group) => group,
                Err(rejection) => return restyled(rejection),
            };
            reply(handle(state, group, &request), StatusCode::OK)
        })
        .await
    }

    /// A gateway call other than send: credentials from headers (and the body's `groupId` for
    /// writes, in the order a send checks them: key present, body's group readable, group).
    async fn gateway(
        &self,
        body: Option<&[u8]>,
        work: impl FnOnce(&mut SandboxState, GroupRef) -> Response,
    ) -> Response {
        let headers = &self.headers;
        guarded(&self.shared, &self.kill, false, |state| {
            if let Err(rejection) = require_api_key(headers) {
                return reply_rejection(rejection);
            }
            let body_group = match body.map(body_group_id).transpose() {
                Ok(group) => group.flatten(),
                Err(rejection) => return reply_rejection(rejection),
            };
            match authenticate(
                state,
                headers,
                body_group.as_deref(),
                body.is_none(),
                Deployment::Gateway,
            ) {
                Ok(group) => work(state, group),
                Err(rejection) => reply_rejection(rejection),
            }
        })
        .await
    }

    /// Admin paths need the group's key and `groupid` header, and are never faulted.
    fn admin(&self, work: impl FnOnce(&mut SandboxState, GroupRef) -> Response) -> Response {
        let mut state = self.shared.state.lock();
        match authenticate(&state, &self.headers, None, true, Deployment::Admin) {
            Ok(group) => work(&mut state, group),
            Err(rejection) => reply_rejection(rejection),
        }
    }
}

async fn standard_alimtalk(call: Call, body: Bytes) -> Response {
    let endpoint = SendEndpoint {
        reject: Rejection::fail,
        group_header_required: false,
        body_group: |r: &AlimTalkRequest| &r.group_id,
        deployment: Deployment::Standard,
    };
    call.send(&body, endpoint, |s, g, r| s.alimtalk(g, r)).await
}

async fn brand(call: Call, body: Bytes) -> Response {
    let endpoint = SendEndpoint {
        reject: Rejection::error,
        group_header_required: false,
        body_group: |r: &BrandRequest| &r.group_id,
        deployment: Deployment::Standard,
    };
    call.send(&body, endpoint, |s, g, r| s.brand(g, r)).await
}

const TEXT_ENDPOINT: SendEndpoint<TextMessageRequest> = SendEndpoint {
    reject: Rejection::fail,
    group_header_required: true,
    body_group: |r| &r.group_id,
    deployment: Deployment::Standard,
};

async fn sms(call: Call, body: Bytes) -> Response {
    call.send(&body, TEXT_ENDPOINT, |s, g, r| s.text_message(g, TextLane::Sms, r))
        .await
}

async fn lms(call: Call, body: Bytes) -> Response {
    call.send(&body, TEXT_ENDPOINT, |s, g, r| s.text_message(g, TextLane::Lms, r))
        .await
}

async fn gateway_alimtalk(call: Call, body: Bytes) -> Response {
    let endpoint = SendEndpoint {
        reject: Rejection::fail,
        group_header_required: false,
        body_group: |r: &GatewayAlimTalkRequest| &r.group_id,
        deployment: Deployment::Gateway,
    };
    call.send(&body, endpoint, |s, g, r| s.gateway_send(g, r)).await
}

async fn result(call: Call, Path(id): Path<String>) -> Response {
    call.gateway(None, |s, g| reply(s.result(g, &id), StatusCode::OK)).await
}

async fn result_group(call: Call, Path(send_group_id): Path<String>, Query(query): Query_) -> Response {
    let listing = call.shared.faults.listing();
    call.gateway(None, |s, g| {
        let page = s.result_page(
            g,
            &send_group_id,
            query.get("limit").map(String::as_str),
            query.get("lastKey").map(String::as_str),
            listing,
        );
        reply(page, StatusCode::OK)
    })
    .await
}

async fn sender_token(call: Call, Query(query): Query_) -> Response {
    call.gateway(None, |s, g| {
        let sent = s.sender_token(
            g,
            query.get("phoneNumber").map(String::as_str),
            query.get("yellowId").map(String::as_str),
        );
        reply(
            sent.map(|(answer, token)| {
                tracing::info!(
                    "verification token {} sent by SMS to {} for {}",
                    token.token,
                    Masked(&token.phone_number),
                    token.yellow_id
                );
                answer
            }),
            StatusCode::OK,
        )
    })
    .await
}

async fn sender_issue(call: Call, body: Bytes) -> Response {
    call.gateway(Some(&body), |s, g| {
        let issued = parse_json::<SenderIssue>(&body, Rejection::fail).and_then(|request| s.sender_issue(g, &request));
        reply(issued, StatusCode::OK)
    })
    .await
}

async fn sender_status(call: Call, Query(query): Query_) -> Response {
    call.gateway(None, |s, g| {
        reply(
            s.sender_status(g, query.get("senderKey").map(String::as_str)),
            StatusCode::OK,
        )
    })
    .await
}

async fn categories(call: Call) -> Response {
    call.gateway(None, |s, _| json_reply(StatusCode::OK, &s.categories()))
        .await
}

async fn channel_create(call: Call, body: Bytes) -> Response {
    call.gateway(Some(&body), |s, g| {
        let created =
            parse_json::<ChannelCreate>(&body, Rejection::fail).and_then(|request| s.channel_create(g, &request));
        reply(created, StatusCode::CREATED)
    })
    .await
}

async fn channel_list(call: Call, Query(query): Query_) -> Response {
    call.gateway(None, |s, g| {
        let get = |name: &str| query.get(name).map(String::as_str);
        reply(
            s.channel_page(g, get("status"), get("limit"), get("lastKey")),
            StatusCode::OK,
        )
    })
    .await
}

async fn channel_get(call: Call, Path(id): Path<String>) -> Response {
    call.gateway(None, |s, g| reply(s.channel_get(g, &id), StatusCode::OK))
        .await
}

async fn channel_update(call: Call, Path(id): Path<String>, body: Bytes) -> Response {
    let body_or_empty: &[u8] = if body.is_empty() { b"{}" } else { &body };
    call.gateway(Some(body_or_empty), |s, g| {
        let updated = parse_json::<ChannelUpdate>(body_or_empty, Rejection::fail)
            .and_then(|update| s.channel_update(g, &id, &update));
        reply(updated, StatusCode::OK)
    })
    .await
}

async fn channel_delete(call: Call, Path(id): Path<String>) -> Response {
    call.gateway(None, |s, g| reply(s.channel_delete(g, &id), StatusCode::OK))
        .await
}

async fn admin_ledger(call: Call) -> Response {
    call.admin(|s, g| json_bytes_reply(StatusCode::OK, s.ledger_json(g)))
}

async fn admin_sent(call: Call) -> Response {
    call.admin(|s, g| json_bytes_reply(StatusCode::OK, s.sent_json(g)))
}

async fn admin_tokens(call: Call) -> Response {
    call.admin(|s, g| json_reply(StatusCode::OK, &s.outbox(g)))
}

async fn admin_faults_get(call: Call) -> Response {
    call.admin(|_, _| json_reply(StatusCode::OK, &call.shared.faults.config()))
}

async fn admin_faults_put(call: Call, body: Bytes) -> Response {
    call.admin(|_, _| {
        let config = parse_json::<FaultConfig>(&body, Rejection::fail).and_then(|config| {
            config
                .validate()
                .map(|()| config)
                .map_err(|e| Rejection::fail("SBX_BAD_REQUEST", e))
        });
        match config {
            Ok(config) => {
                call.shared.faults.set(config.clone());
                json_reply(StatusCode::OK, &config)
            }
            Err(rejection) => reply_rejection(rejection),
        }
    })
}
