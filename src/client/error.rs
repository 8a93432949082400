//! Client errors, sorted by whether the request may have taken effect (the line between a safe retry and a double send), with no phone number in their text.

use crate::api::ErrorBody;
use crate::phone::mask_phones;
use reqwest::header::HeaderMap;
use reqwest::StatusCode;
use std::fmt;
use std::time::Duration;

/// Broad kind of a failure, for callers that branch on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The service answered with an error status and body.
    Service,
    /// A 3xx answer, not followed: maybe processed (nothing proves otherwise).
    Redirect,
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
    /// An endpoint URL the client refuses to talk to; no request was made.
    Endpoint,
}

#[derive(Debug)]
pub enum ClientError {
    /// An error status and body.
    Service {
        path: String,
        http: u16,
        code: Option<String>,
        message: Option<String>,
    },
    /// A 3xx answer. It is never followed: the credentials and the request go to the configured
    /// endpoint only. The engine counts it as "may have taken effect", like any other answer it
    /// cannot read as a result.
    Redirect {
        path: String,
        http: u16,
        location: Option<String>,
    },
    RateLimited {
        path: String,
        retry_after: Option<Duration>,
    },
    Unavailable {
        path: String,
        retry_after: Option<Duration>,
    },
    Connect {
        path: String,
        source: Cause,
    },
    ConnectionDropped {
        path: String,
        source: Cause,
    },
    Timeout {
        path: String,
        source: Cause,
    },
    Decode {
        path: String,
        http: u16,
        source: Cause,
        body_start: String,
    },
    Transport {
        path: String,
        source: Cause,
    },
    /// `Client::new` refused an endpoint URL; nothing was sent.
    Endpoint {
        url: String,
        reason: String,
    },
}

/// The text of every line of an error, before masking.
struct Unmasked<'a>(&'a ClientError);

impl fmt::Display for Unmasked<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            ClientError::Service {
                path,
                http,
                code,
                message,
            } => {
                write!(f, "{path}: HTTP {http}")?;
                if let Some(code) = code {
                    write!(f, " {code}")?;
                }
                if let Some(message) = message {
                    write!(f, ": {message}")?;
                }
                Ok(())
            }
            ClientError::Redirect { path, http, location } => write!(
                f,
                "{path}: HTTP {http} redirect to {}, not followed: requests and credentials go to the configured endpoint only",
                location.as_deref().unwrap_or("(no Location)")
            ),
            ClientError::RateLimited { path, retry_after } => {
                write!(f, "{path}: rate limited (HTTP 429){}", after(retry_after))
            }
            ClientError::Unavailable { path, retry_after } => {
                write!(f, "{path}: service unavailable (HTTP 503){}", after(retry_after))
            }
            ClientError::Connect { path, .. } => write!(f, "{path}: could not connect; nothing was sent"),
            ClientError::ConnectionDropped { path, .. } => write!(
                f,
                "{path}: the connection closed after the request was sent and before an answer; the service may have processed it"
            ),
            ClientError::Timeout { path, .. } => write!(
                f,
                "{path}: no answer in time after the request was sent; the service may have processed it"
            ),
            ClientError::Decode {
                path,
                http,
                source,
                body_start,
            } => write!(
                f,
                "{path}: unreadable answer (HTTP {http}): {source}; body starts {body_start:?}"
            ),
            ClientError::Transport { path, source } => write!(f, "{path}: {source}"),
            ClientError::Endpoint { url, reason } => write!(f, "{url}: {reason}"),
        }
    }
}

/// Phone numbers are masked here, so no caller can print one from a URL's query or from text
/// the service echoed.
impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&mask_phones(&Unmasked(self).to_string()))
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::Connect { source, .. }
            | ClientError::ConnectionDropped { source, .. }
            | ClientError::Timeout { source, .. }
            | ClientError::Decode { source, .. }
            | ClientError::Transport { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What a transport or decoding failure came from, kept as text with phone numbers masked:
/// those errors name the URL with its query (`?phoneNumber=…`) and quote what they read.
#[derive(Debug)]
pub struct Cause {
    text: String,
    next: Option<Box<Cause>>,
}

impl Cause {
    pub fn of(error: &(dyn std::error::Error + 'static)) -> Cause {
        Cause {
            text: mask_phones(&error.to_string()).into_owned(),
            next: error.source().map(|next| Box::new(Cause::of(next))),
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for Cause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.next
            .as_deref()
            .map(|next| next as &(dyn std::error::Error + 'static))
    }
}

/// At most this many bytes of an answer's body are shown.
const BODY_SHOWN: usize = 200;

/// The start of an answer's body for a message: phone numbers masked, then cut on a character
/// boundary (a number cut first would no longer look like one and escape the masking).
pub(super) fn body_start(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(4 * BODY_SHOWN)]);
    let masked = mask_phones(text.trim());
    let mut cut = masked.len().min(BODY_SHOWN);
    while !masked.is_char_boundary(cut) {
        cut -= 1;
    }
    masked[..cut].to_string()
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
    pub(super) fn from_send(path: String, error: reqwest::Error) -> ClientError {
        let source = Cause::of(&error);
        if error.is_connect() {
            ClientError::Connect { path, source }
        } else if error.is_timeout() {
            ClientError::Timeout { path, source }
        } else if closed_mid_request(&error) {
            ClientError::ConnectionDropped { path, source }
        } else {
            ClientError::Transport { path, source }
        }
    }

    pub(super) fn from_decode(path: String, http: StatusCode, error: serde_json::Error, body: &[u8]) -> ClientError {
        ClientError::Decode {
            path,
            http: http.as_u16(),
            source: Cause::of(&error),
            body_start: body_start(body),
        }
    }

    pub(super) fn from_builder(error: reqwest::Error) -> ClientError {
        ClientError::Transport {
            path: String::new(),
            source: Cause::of(&error),
        }
    }

    /// A 3xx answer, with where it pointed.
    pub(super) fn redirect(path: String, status: StatusCode, headers: &HeaderMap) -> ClientError {
        let location = headers
            .get(reqwest::header::LOCATION)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
        ClientError::Redirect {
            path,
            http: status.as_u16(),
            location,
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
            let text = body_start(body);
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
            ClientError::Redirect { .. } => ErrorKind::Redirect,
            ClientError::RateLimited { .. } => ErrorKind::RateLimited,
            ClientError::Unavailable { .. } => ErrorKind::Unavailable,
            ClientError::Connect { .. } => ErrorKind::Connect,
            ClientError::ConnectionDropped { .. } => ErrorKind::ConnectionDropped,
            ClientError::Timeout { .. } => ErrorKind::Timeout,
            ClientError::Decode { .. } => ErrorKind::Decode,
            ClientError::Transport { .. } => ErrorKind::Transport,
            ClientError::Endpoint { .. } => ErrorKind::Endpoint,
        }
    }

    /// True only where the request provably did not take effect, so sending it again cannot
    /// send twice: a failed connect, 429 and 503. Everything else may have been processed,
    /// a redirect included: the engine stays conservative about answers it cannot read.
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
            ClientError::Service { http, .. }
            | ClientError::Redirect { http, .. }
            | ClientError::Decode { http, .. } => Some(*http),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_cut_on_a_character_boundary() {
        // One ASCII byte, then three-byte Hangul: byte 200 falls inside a character.
        let body = format!("x{}", "오류".repeat(60));
        let shown = body_start(body.as_bytes());
        assert!(
            shown.len() <= BODY_SHOWN && shown.len() > BODY_SHOWN - 3,
            "{}",
            shown.len()
        );
        assert!(!shown.contains('\u{FFFD}'), "{shown}");
        assert!(body.starts_with(&shown));
    }

    #[test]
    fn phone_numbers_in_an_error_are_masked_before_the_body_is_cut() {
        let body = format!("{}01020001234 and more", "-".repeat(BODY_SHOWN - 5));
        let shown = body_start(body.as_bytes());
        assert!(!shown.contains("0102000"), "{shown}");
        let error = ClientError::Service {
            path: "http://127.0.0.1:1/sms".into(),
            http: 400,
            code: Some("SBX_BAD_REQUEST".into()),
            message: Some("numbers 010-2000-1234, +82 10-2000-1235 refused".into()),
        };
        assert_eq!(
            error.to_string(),
            "http://127.0.0.1:1/sms: HTTP 400 SBX_BAD_REQUEST: numbers 010-****-1234, 010-****-1235 refused"
        );
    }

    #[test]
    fn a_redirect_names_its_status_and_masked_location_and_may_have_taken_effect() {
        let mut headers = HeaderMap::new();
        headers.insert(
            reqwest::header::LOCATION,
            "http://elsewhere.example/token?phoneNumber=01020001234"
                .parse()
                .unwrap(),
        );
        let error = ClientError::redirect(
            "http://127.0.0.1:1/sms".into(),
            StatusCode::TEMPORARY_REDIRECT,
            &headers,
        );
        let text = error.to_string();
        assert!(text.contains("HTTP 307"), "{text}");
        assert!(
            text.contains("http://elsewhere.example/token?phoneNumber=010-****-1234"),
            "{text}"
        );
        assert_eq!(error.kind(), ErrorKind::Redirect);
        assert_eq!(error.http_status(), Some(307));
        assert!(!error.provably_not_applied());
    }
}
