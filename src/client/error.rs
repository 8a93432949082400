//! Client errors, sorted by whether the request may have taken effect: the line between a safe retry and a double send.

use crate::api::ErrorBody;
use reqwest::header::HeaderMap;
use reqwest::StatusCode;
use std::time::Duration;

/// Broad kind of a failure, for callers that branch on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The service answered with an error status and body.
    Service,
    /// HTTP 429: not processed.
    RateLimited,
    /// HTTP 503: not processed.
    Unavailable,
    /// The connection failed before any byte of the request left: not processed.
    Connect,
    /// The request was sent and the connection closed without an answer: maybe processed.
    ConnectionDropped,
    /// The request was sent and no answer came in time: maybe processed.
    Timeout,
    /// An answer came that could not be read: maybe processed.
    Decode,
    /// Any other transport failure: maybe processed.
    Transport,
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("{path}: HTTP {http}{}{}", code.as_deref().map(|c| format!(" {c}")).unwrap_or_default(), message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Service {
        path: String,
        http: u16,
        code: Option<String>,
        message: Option<String>,
    },
    #[error("{path}: rate limited (HTTP 429){}", after(retry_after))]
    RateLimited {
        path: String,
        retry_after: Option<Duration>,
    },
    #[error("{path}: service unavailable (HTTP 503){}", after(retry_after))]
    Unavailable {
        path: String,
        retry_after: Option<Duration>,
    },
    #[error("{path}: could not connect; nothing was sent")]
    Connect { path: String, source: reqwest::Error },
    #[error("{path}: the connection closed after the request was sent and before an answer; the service may have processed it")]
    ConnectionDropped { path: String, source: reqwest::Error },
    #[error("{path}: no answer in time after the request was sent; the service may have processed it")]
    Timeout { path: String, source: reqwest::Error },
    #[error("{path}: unreadable answer (HTTP {http}): {source}; body starts {body_start:?}")]
    Decode {
        path: String,
        http: u16,
        source: serde_json::Error,
        body_start: String,
    },
    #[error("{path}: {source}")]
    Transport { path: String, source: reqwest::Error },
}

fn after(retry_after: &Option<Duration>) -> String {
    retry_after
        .map(|d| format!(", retry after {}s", d.as_secs()))
        .unwrap_or_default()
}

/// Reads `Retry-After` given in seconds.
pub(super) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    headers
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(|text| text.trim().parse::<u64>().ok())
        .map(Duration::from_secs)
}

/// Whether a transport error shows the connection closing under a request already written.
fn closed_mid_request(error: &reqwest::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(hyper_error) = current.downcast_ref::<hyper::Error>() {
            if hyper_error.is_incomplete_message() || hyper_error.is_closed() || hyper_error.is_canceled() {
                return true;
            }
        }
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            if matches!(
                io.kind(),
                ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof
            ) {
                return true;
            }
        }
        source = current.source();
    }
    false
}

impl ClientError {
    pub(super) fn from_send(path: String, source: reqwest::Error) -> ClientError {
        if source.is_connect() {
            ClientError::Connect { path, source }
        } else if source.is_timeout() {
            ClientError::Timeout { path, source }
        } else if closed_mid_request(&source) {
            ClientError::ConnectionDropped { path, source }
        } else {
            ClientError::Transport { path, source }
        }
    }

    pub(super) fn from_status(
        path: String,
        status: StatusCode,
        retry_after: Option<Duration>,
        body: &[u8],
    ) -> ClientError {
        match status {
            StatusCode::TOO_MANY_REQUESTS => return ClientError::RateLimited { path, retry_after },
            StatusCode::SERVICE_UNAVAILABLE => return ClientError::Unavailable { path, retry_after },
            _ => {}
        }
        let parsed: ErrorBody = serde_json::from_slice(body).unwrap_or_default();
        let message = parsed.message.or(parsed.error).or_else(|| {
            let text = String::from_utf8_lossy(&body[..body.len().min(200)]).trim().to_string();
            (!text.is_empty()).then_some(text)
        });
        ClientError::Service {
            path,
            http: status.as_u16(),
            code: parsed.code.map(|c| c.to_text()),
            message,
        }
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            ClientError::Service { .. } => ErrorKind::Service,
            ClientError::RateLimited { .. } => ErrorKind::RateLimited,
            ClientError::Unavailable { .. } => ErrorKind::Unavailable,
            ClientError::Connect { .. } => ErrorKind::Connect,
            ClientError::ConnectionDropped { .. } => ErrorKind::ConnectionDropped,
            ClientError::Timeout { .. } => ErrorKind::Timeout,
            ClientError::Decode { .. } => ErrorKind::Decode,
            ClientError::Transport { .. } => ErrorKind::Transport,
        }
    }

    /// True only where the request provably did not take effect, so sending it again cannot
    /// send twice: a failed connect, 429 and 503. Everything else may have been processed.
    pub fn provably_not_applied(&self) -> bool {
        matches!(
            self.kind(),
            ErrorKind::Connect | ErrorKind::RateLimited | ErrorKind::Unavailable
        )
    }

    /// The service's `code` (`ERR_102`, `ERR_MN_NOT_APPROVED`, `508`, ...), where it sent one.
    pub fn code(&self) -> Option<&str> {
        match self {
            ClientError::Service { code, .. } => code.as_deref(),
            _ => None,
        }
    }

    /// The HTTP status, where an answer came.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            ClientError::Service { http, .. } | ClientError::Decode { http, .. } => Some(*http),
            ClientError::RateLimited { .. } => Some(429),
            ClientError::Unavailable { .. } => Some(503),
            _ => None,
        }
    }

    /// How long the service asked to wait, where it said.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ClientError::RateLimited { retry_after, .. } | ClientError::Unavailable { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}
