//! What the API reads from a request (a JSON body, a query, a multipart form), refused as a problem document naming what could not be read, never as axum's plain-text rejection.

use crate::console::error::ConsoleError;
use crate::console::Shared;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

/// JSON bodies are small: numbers, an amount, an action.
const BODY_LIMIT: usize = 1 << 20;

fn unreadable(detail: impl std::fmt::Display) -> ConsoleError {
    ConsoleError::invalid(
        crate::word!(refuse_request),
        vec![("detail", detail.to_string().into())],
    )
}

/// A JSON body.
pub struct Body<T>(pub T);

/// A JSON body that may be left out: an empty one is `T::default()`.
pub struct MaybeBody<T>(pub T);

async fn json<T: DeserializeOwned>(request: Request, empty: Option<fn() -> T>) -> Result<T, ConsoleError> {
    let bytes = axum::body::to_bytes(request.into_body(), BODY_LIMIT)
        .await
        .map_err(|_| ConsoleError::TooLarge("the request body is too large".into()))?;
    match empty {
        Some(default) if bytes.iter().all(u8::is_ascii_whitespace) => Ok(default()),
        _ => serde_json::from_slice(&bytes).map_err(unreadable),
    }
}

impl<T: DeserializeOwned> FromRequest<Shared> for Body<T> {
    type Rejection = ConsoleError;

    async fn from_request(request: Request, _: &Shared) -> Result<Body<T>, ConsoleError> {
        json(request, None).await.map(Body)
    }
}

impl<T: DeserializeOwned + Default> FromRequest<Shared> for MaybeBody<T> {
    type Rejection = ConsoleError;

    async fn from_request(request: Request, _: &Shared) -> Result<MaybeBody<T>, ConsoleError> {
        json(request, Some(T::default)).await.map(MaybeBody)
    }
}

/// A query string.
pub struct Query<T>(pub T);

impl<T: DeserializeOwned> FromRequestParts<Shared> for Query<T> {
    type Rejection = ConsoleError;

    async fn from_request_parts(parts: &mut Parts, _: &Shared) -> Result<Query<T>, ConsoleError> {
        serde_urlencoded::from_str(parts.uri.query().unwrap_or(""))
            .map(Query)
            .map_err(unreadable)
    }
}

/// A multipart form.
pub struct Form(pub axum::extract::Multipart);

impl FromRequest<Shared> for Form {
    type Rejection = ConsoleError;

    async fn from_request(request: Request, console: &Shared) -> Result<Form, ConsoleError> {
        axum::extract::Multipart::from_request(request, console)
            .await
            .map(Form)
            .map_err(|rejection| unreadable(rejection.body_text()))
    }
}
