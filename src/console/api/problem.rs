//! The API's refusals as problem documents (RFC 9457): every error the console's rules raise, in the words the pages use, with a stable `type` per refusal.

use crate::console::error::{ConsoleError, KeptError};
use crate::console::words::Words;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// What every problem's `type` starts with; the rest is the refusal's stable name.
pub const TYPE_PREFIX: &str = "urn:msgbatch:problem:";

/// A problem document.
#[derive(Debug, Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Problem {
    /// `urn:msgbatch:problem:NAME`: the same refusal always has the same type
    /// (`refuse_own_approval`, `refuse_amount`, `unauthorized`, `not_found`…).
    #[serde(rename = "type")]
    pub kind: String,
    /// The kind of refusal, in the request's language (`Accept-Language`).
    pub title: String,
    pub status: u16,
    /// What stood in the way, in the words the console's page says it.
    pub detail: String,
    /// The form field a refusal names (`settings`, `recipients`…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// An internal error's number: the server's log holds its detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// The problem document of `error` in the words `w`.
pub fn answer(error: &ConsoleError, id: Option<String>, w: &Words) -> Response {
    let parts = error.problem(w, id);
    let problem = Problem {
        kind: format!("{TYPE_PREFIX}{}", parts.kind),
        title: parts.title.to_string(),
        status: parts.status.as_u16(),
        detail: parts.detail,
        field: parts.field,
        id: parts.id,
    };
    let mut response = (parts.status, axum::Json(problem)).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    if matches!(error, ConsoleError::SignIn) {
        headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// An answer made from an error (a page's, with its HTML) answered instead as a problem document
/// in the words `w`; any other answer as it is.
pub fn in_problems(response: Response, w: &Words) -> Response {
    match response.extensions().get::<KeptError>().and_then(KeptError::take) {
        Some((error, id)) => answer(&error, id, w),
        None => response,
    }
}
