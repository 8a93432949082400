//! `Idempotency-Key` on the API's creating and state-changing requests: a retried request gets the first answer and does nothing twice; answers are kept 24 hours, per user.

use super::problem;
use crate::console::auth::Signed;
use crate::console::error::ConsoleError;
use crate::console::store::IDEMPOTENCY;
use crate::console::Shared;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

pub const HEADER: &str = "idempotency-key";
/// How long a first answer is given again.
pub const KEPT_SECONDS: i64 = 24 * 60 * 60;
/// The answers kept are small JSON documents; anything larger is not a first answer of ours.
const ANSWER_LIMIT: usize = 4 << 20;

/// A first answer, as kept.
#[derive(Serialize, Deserialize)]
struct Kept {
    /// `POST /api/v1/campaigns/ID/start`: a key given again with another request is refused.
    request: String,
    at: i64,
    status: u16,
    content_type: String,
    location: Option<String>,
    /// base64.
    body: String,
}

/// The keys being answered now: a retry that arrives while the first is still being answered
/// waits for it, then gets its answer.
#[derive(Default)]
pub struct InFlight {
    keys: parking_lot::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// When answers past a day were last let go (Unix seconds).
    swept: parking_lot::Mutex<i64>,
}

/// Answers past a day are looked for at most this often (not at every kept answer).
const SWEEP_EVERY: i64 = 60 * 60;

/// Gives a retried request its first answer; a first request is answered in a task of its own,
/// so that a connection dropped meanwhile does not cut it short, and its answer is kept.
pub async fn keep(State(console): State<Shared>, request: Request, next: Next) -> Response {
    let Some(key) = request.headers().get(HEADER).cloned() else {
        return next.run(request).await;
    };
    let Some(signed) = request.extensions().get::<Signed>().cloned() else {
        return next.run(request).await;
    };
    let w = signed.words;
    let key = match key.to_str() {
        Ok(key) if !key.is_empty() && key.len() <= 255 => key.to_string(),
        _ => {
            return problem::answer(
                &ConsoleError::invalid(crate::word!(refuse_idempotency_key), vec![]),
                None,
                w,
            )
        }
    };
    let what = format!("{} {}", request.method(), request.uri().path());
    let stored_key = format!("{}\n{key}", signed.user.name);
    let lock = console
        .api_keys
        .keys
        .lock()
        .entry(stored_key.clone())
        .or_default()
        .clone();
    let answering = lock.lock_owned().await;
    let now = crate::console::auth::unix_now();
    let kept = match console.store.get_in::<Kept>(IDEMPOTENCY, &stored_key) {
        Ok(kept) => kept.filter(|kept| now - kept.at < KEPT_SECONDS),
        Err(error) => return problem::answer(&error, None, w),
    };
    if let Some(kept) = kept {
        return if kept.request == what {
            replay(kept)
        } else {
            problem::answer(
                &ConsoleError::invalid(
                    crate::word!(refuse_idempotency_reused),
                    vec![("request", kept.request.into())],
                ),
                None,
                w,
            )
        };
    }
    // Answered and kept in a task of its own: a connection dropped meanwhile cuts neither short,
    // and the retry finds the answer.
    let answered = tokio::spawn(async move {
        let _answering = answering;
        let response = problem::in_problems(next.run(request).await, w);
        // A server error may be tried again for real; anything else is the answer.
        if response.status().is_server_error() {
            return response;
        }
        let (parts, body) = response.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, ANSWER_LIMIT).await else {
            return problem::answer(&ConsoleError::internal("an answer too large to keep"), None, w);
        };
        let header_text = |name: axum::http::header::HeaderName| {
            parts
                .headers
                .get(name)
                .and_then(|value| value.to_str().ok())
                .map(str::to_string)
        };
        let kept = Kept {
            request: what,
            at: now,
            status: parts.status.as_u16(),
            content_type: header_text(axum::http::header::CONTENT_TYPE).unwrap_or_default(),
            location: header_text(axum::http::header::LOCATION),
            body: base64::engine::general_purpose::STANDARD.encode(&bytes),
        };
        if let Err(error) = console.store.put_in(IDEMPOTENCY, &stored_key, &kept) {
            return problem::answer(&error, None, w);
        }
        forget_old(&console, now);
        Response::from_parts(parts, Body::from(bytes))
    })
    .await;
    answered.unwrap_or_else(|error| problem::answer(&ConsoleError::internal(error), None, w))
}

fn replay(kept: Kept) -> Response {
    let body = base64::engine::general_purpose::STANDARD
        .decode(kept.body)
        .unwrap_or_default();
    let status = StatusCode::from_u16(kept.status).unwrap_or(StatusCode::OK);
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&kept.content_type) {
        headers.insert(axum::http::header::CONTENT_TYPE, value);
    }
    if let Some(value) = kept.location.and_then(|location| HeaderValue::from_str(&location).ok()) {
        headers.insert(axum::http::header::LOCATION, value);
    }
    headers.insert(
        HeaderName::from_static("idempotent-replayed"),
        HeaderValue::from_static("true"),
    );
    response
}

/// Answers older than a day are let go (and their keys' locks with them), once an hour.
fn forget_old(console: &Shared, now: i64) {
    {
        let mut swept = console.api_keys.swept.lock();
        if now - *swept < SWEEP_EVERY {
            return;
        }
        *swept = now;
    }
    let Ok(answers) = console.store.entries_in::<Kept>(IDEMPOTENCY) else {
        return;
    };
    for (key, kept) in answers {
        if now - kept.at >= KEPT_SECONDS {
            let _ = console.store.remove_in(IDEMPOTENCY, &key);
            console.api_keys.keys.lock().remove(&key);
        }
    }
}
