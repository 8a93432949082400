//! The refusals axum makes before a handler runs (a path that is not UTF-8, a body over the limit, a method a path does not take), rewritten into the endpoint's JSON error body.

use super::{reply_rejection, BODY_LIMIT_BYTES, BRAND_PATH, STANDARD_PREFIX};
use crate::sandbox::state::Rejection;
use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

/// How much of a refusal's plain-text body is kept as the JSON `message` (axum's are one line).
const REFUSAL_TEXT_LIMIT: usize = 4 * 1024;

/// The error shape of the endpoint at `path`: brand answers `status: "error"`, the others `fail`.
fn error_style(path: &str) -> fn(&str, String) -> Rejection {
    if path.strip_prefix(STANDARD_PREFIX) == Some(BRAND_PATH) {
        Rejection::error
    } else {
        Rejection::fail
    }
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"))
}

/// Every handler answers JSON, but axum refuses some requests before a handler runs, in plain
/// text or with no body: a path segment that is not UTF-8 (400), a body over
/// [`BODY_LIMIT_BYTES`] (413), a method the path does not take (405). The spec says every body
/// is JSON, so those refusals are rewritten here into the endpoint's error shape, keeping their
/// status and headers (`Allow`). They come before the credentials are read, as a refusal of an
/// unknown path does.
pub(super) async fn json_refusals(request: Request, next: Next) -> Response {
    let reject = error_style(request.uri().path());
    let method = request.method().clone();
    let response = next.run(request).await;
    let status = response.status();
    if is_json(&response) || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, REFUSAL_TEXT_LIMIT)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_string())
        .unwrap_or_default();
    let allow = parts.headers.get(header::ALLOW).cloned();
    let (code, message) = match status {
        StatusCode::METHOD_NOT_ALLOWED => {
            let allowed = allow.as_ref().and_then(|v| v.to_str().ok()).unwrap_or_default();
            (
                "SBX_METHOD_NOT_ALLOWED",
                format!("{method} is not allowed on this path (it takes {allowed})"),
            )
        }
        StatusCode::PAYLOAD_TOO_LARGE => (
            "SBX_BODY_TOO_LARGE",
            format!("request body over {BODY_LIMIT_BYTES} bytes: {text}"),
        ),
        _ if status.is_server_error() => ("SBX_INTERNAL", text),
        _ => ("SBX_BAD_REQUEST", text),
    };
    let mut answer = reply_rejection(reject(code, message).with_http(status.as_u16()));
    if let Some(allow) = allow {
        answer.headers_mut().insert(header::ALLOW, allow);
    }
    answer
}
