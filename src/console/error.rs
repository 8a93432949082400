//! The console's one error type, and the one place that turns it into a status code and a page that says what to do (an internal error shows only an id; its detail goes to the log).

use super::words::Words;
use crate::engine::rules::ErrorClass;
use askama::Template;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    /// No session, or it ended: the person signs in again.
    #[error("sign in first")]
    SignIn,
    /// Signed in, but the role or the rule forbids it; says which.
    #[error("{0}")]
    Forbidden(String),
    /// The form's CSRF token is missing or not the session's.
    #[error("this form is out of date or did not come from this console: reload the page and try again")]
    Csrf,
    /// The `Host` header is not one the console serves (DNS rebinding, a wrong address).
    #[error("this console does not answer to the host {0:?}: open it at its own address")]
    WrongHost(String),
    #[error("not found")]
    NotFound,
    /// What was sent cannot be used; says what to change.
    #[error("{0}")]
    Invalid(String),
    /// The campaign is not in a state that allows it (already started, changed since).
    #[error("{0}")]
    Conflict(String),
    /// Another process holds the run for a moment (the engine's "in use by another msgbatch process").
    #[error("{0}")]
    Busy(String),
    /// A refusal in the page's words, drawn in the request's language; the kind sets the status.
    #[error("{}", .1.in_words(&super::words::EN))]
    Said(Refusal, Said),
    /// A form's field refused, named (a campaign's settings, a file): the page shows it on the
    /// field; the API names it in its problem.
    #[error("{message}")]
    Field {
        field: String,
        message: String,
        too_large: bool,
    },
    #[error("{0}")]
    TooMany(String),
    #[error("{0}")]
    TooLarge(String),
    /// Anything else: logged with an id; the page shows only the id.
    #[error("internal error")]
    Internal(anyhow::Error),
}

/// An error as the API answers it (see [`ConsoleError::problem`]).
#[derive(Debug, Clone)]
pub struct ProblemParts {
    pub status: StatusCode,
    /// Stable: `refuse_own_approval`, `not_found`, `unauthorized`…
    pub kind: &'static str,
    pub title: &'static str,
    pub detail: String,
    pub field: Option<String>,
    pub id: Option<String>,
}

/// What a refusal said in words answers: as [`ConsoleError::Invalid`], `Conflict` or `Forbidden`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Invalid,
    Conflict,
    Forbidden,
}

/// A word of the pages, with its name: the name is a refusal's stable problem type in the API
/// (`word!(refuse_own_approval)`).
#[derive(Debug, Clone, Copy)]
pub struct Word {
    pub name: &'static str,
    pub get: fn(&Words) -> &'static str,
}

/// The word `$field` of [`Words`], named.
#[macro_export]
macro_rules! word {
    ($field:ident) => {
        $crate::console::error::Word {
            name: stringify!($field),
            get: |w| w.$field,
        }
    };
}

/// A refusal's words, chosen when its page is drawn (in the request's language), and the figures
/// they name (`{n}`, `{typed}`…).
#[derive(Debug, Clone)]
pub struct Said {
    word: Word,
    figures: Vec<(&'static str, Figure)>,
}

/// What a refusal names: a text as it is (a number, a file's name, what was typed), or words of
/// the page's language (a campaign's state, a reason).
#[derive(Debug, Clone)]
pub enum Figure {
    Text(String),
    Word(fn(&Words) -> &'static str),
    State(&'static str),
    Role(&'static str),
}

impl From<&str> for Figure {
    fn from(text: &str) -> Figure {
        Figure::Text(text.to_string())
    }
}

impl From<String> for Figure {
    fn from(text: String) -> Figure {
        Figure::Text(text)
    }
}

impl Said {
    pub fn in_words(&self, w: &Words) -> String {
        let figures: Vec<(&str, String)> = self
            .figures
            .iter()
            .map(|(name, figure)| {
                let value = match figure {
                    Figure::Text(text) => text.clone(),
                    Figure::Word(word) => word(w).to_string(),
                    Figure::State(code) => w.state(code).to_string(),
                    Figure::Role(code) => w.role(code).to_string(),
                };
                (*name, value)
            })
            .collect();
        let figures: Vec<(&str, &str)> = figures.iter().map(|(name, value)| (*name, value.as_str())).collect();
        super::words::fill((self.word.get)(w), &figures)
    }
}

impl ConsoleError {
    /// What was sent cannot be used, in the page's words.
    pub fn invalid(word: Word, figures: Vec<(&'static str, Figure)>) -> ConsoleError {
        ConsoleError::said(Refusal::Invalid, word, figures)
    }

    /// The campaign's state does not allow it, in the page's words.
    pub fn conflict(word: Word, figures: Vec<(&'static str, Figure)>) -> ConsoleError {
        ConsoleError::said(Refusal::Conflict, word, figures)
    }

    /// The role or a rule forbids it, in the page's words.
    pub fn forbidden(word: Word, figures: Vec<(&'static str, Figure)>) -> ConsoleError {
        ConsoleError::said(Refusal::Forbidden, word, figures)
    }

    fn said(refusal: Refusal, word: Word, figures: Vec<(&'static str, Figure)>) -> ConsoleError {
        ConsoleError::Said(refusal, Said { word, figures })
    }

    pub fn internal(error: impl std::fmt::Display) -> ConsoleError {
        ConsoleError::Internal(anyhow::anyhow!("{error}"))
    }

    pub fn from_io(error: std::io::Error) -> ConsoleError {
        ConsoleError::Internal(error.into())
    }

    pub fn from_sled(error: sled::Error) -> ConsoleError {
        ConsoleError::Internal(error.into())
    }

    /// The API's answer to it (RFC 9457): the status, a stable problem type (a refusal's word's
    /// name, or the kind of error), a title and a detail in the request's language, the field a
    /// form's refusal names, and an internal error's id (its detail goes to the log).
    pub fn problem(&self, w: &Words, id: Option<String>) -> ProblemParts {
        let kind = match self {
            ConsoleError::SignIn => "unauthorized",
            ConsoleError::Said(_, said) => said.word.name,
            ConsoleError::Forbidden(_) => "forbidden",
            ConsoleError::Csrf => "csrf",
            ConsoleError::WrongHost(_) => "wrong_host",
            ConsoleError::NotFound => "not_found",
            ConsoleError::Invalid(_) => "invalid",
            ConsoleError::Conflict(_) => "conflict",
            ConsoleError::Busy(_) => "busy",
            ConsoleError::Field { .. } => "field",
            ConsoleError::TooMany(_) => "too_many",
            ConsoleError::TooLarge(_) => "too_large",
            ConsoleError::Internal(_) => "internal",
        };
        // The page's title, and its words: the refusal's own, its text, or the page's lead.
        let (title, detail) = match self {
            ConsoleError::SignIn => (w.error_unauthorized, w.api_unauthorized.to_string()),
            _ => {
                let (page_kind, message) = self.shown();
                let (title, lead) = page_kind.words(w);
                let detail = match self {
                    ConsoleError::Said(_, said) => said.in_words(w),
                    ConsoleError::WrongHost(_) => lead.to_string(),
                    _ if message.is_empty() => lead.to_string(),
                    _ => message,
                };
                (title, detail)
            }
        };
        ProblemParts {
            status: match self {
                ConsoleError::SignIn => StatusCode::UNAUTHORIZED,
                other => other.status(),
            },
            kind,
            title,
            detail,
            field: match self {
                ConsoleError::Field { field, .. } => Some(field.clone()),
                _ => None,
            },
            id,
        }
    }

    /// How its page shows it: the kind of page, and its own text (empty: the kind's words say
    /// all; a refusal in words is drawn from them).
    fn shown(&self) -> (ErrorKind, String) {
        match self {
            ConsoleError::Internal(_) => (ErrorKind::Internal, String::new()),
            // Never drawn: a sign-in is a redirect to the sign-in page.
            ConsoleError::SignIn => (ErrorKind::Forbidden, String::new()),
            ConsoleError::NotFound => (ErrorKind::NotFound, String::new()),
            ConsoleError::Csrf => (ErrorKind::Csrf, String::new()),
            ConsoleError::WrongHost(host) => (ErrorKind::WrongHost, host.clone()),
            ConsoleError::Forbidden(text) => (ErrorKind::Forbidden, without_server_paths(text)),
            ConsoleError::Busy(text) => (ErrorKind::Busy, without_server_paths(text)),
            ConsoleError::Said(Refusal::Forbidden, _) => (ErrorKind::Forbidden, String::new()),
            ConsoleError::Said(..) => (ErrorKind::Refused, String::new()),
            other => (ErrorKind::Refused, without_server_paths(&other.to_string())),
        }
    }

    fn status(&self) -> StatusCode {
        match self {
            ConsoleError::SignIn => StatusCode::SEE_OTHER,
            ConsoleError::Forbidden(_) | ConsoleError::Csrf | ConsoleError::Said(Refusal::Forbidden, _) => {
                StatusCode::FORBIDDEN
            }
            ConsoleError::Said(Refusal::Invalid, _) => StatusCode::UNPROCESSABLE_ENTITY,
            ConsoleError::Said(Refusal::Conflict, _) => StatusCode::CONFLICT,
            ConsoleError::WrongHost(_) => StatusCode::MISDIRECTED_REQUEST,
            ConsoleError::NotFound => StatusCode::NOT_FOUND,
            ConsoleError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ConsoleError::Conflict(_) | ConsoleError::Busy(_) => StatusCode::CONFLICT,
            ConsoleError::TooMany(_) => StatusCode::TOO_MANY_REQUESTS,
            ConsoleError::TooLarge(_) | ConsoleError::Field { too_large: true, .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ConsoleError::Field { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ConsoleError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// An engine or workspace error, classified by the engine's one rule (as the CLI's exit code is):
/// a refusal is shown as it is, a run another process holds is a conflict to try again, anything
/// else is internal.
impl From<anyhow::Error> for ConsoleError {
    fn from(error: anyhow::Error) -> ConsoleError {
        let text = || {
            let causes: Vec<String> = error.chain().map(|cause| cause.to_string()).collect();
            crate::phone::mask_phones(&causes.join(": ")).into_owned()
        };
        match crate::engine::rules::classify(&error) {
            ErrorClass::Refusal => ConsoleError::Invalid(text()),
            ErrorClass::Busy => ConsoleError::Busy(text()),
            ErrorClass::Internal => ConsoleError::Internal(error),
        }
    }
}

/// The headers of an HTML page, the console's pages and its error pages alike.
pub fn html_headers() -> [(header::HeaderName, header::HeaderValue); 1] {
    [(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/html; charset=utf-8"),
    )]
}

/// A refusal's text with every absolute path cut to its file name: a page never shows where the
/// server keeps things (`/srv/team/campaigns/ID/recipients.xlsx` → `recipients.xlsx`).
pub fn without_server_paths(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('/') {
        let at_word_start = start == 0 || rest[..start].ends_with([' ', '(', '"', '\'', '`', '=']);
        let end = rest[start..]
            .find([' ', ')', '"', '\'', '`', ',', ';', '\n'])
            .map_or(rest.len(), |offset| start + offset);
        let token = rest[start..end].trim_end_matches([':', '.']);
        let token_end = start + token.len();
        out.push_str(&rest[..start]);
        if at_word_start && token[1..].contains('/') {
            out.push_str(token.rsplit('/').next().unwrap_or(""));
        } else {
            out.push_str(token);
        }
        rest = &rest[token_end.max(start + 1)..];
    }
    out.push_str(rest);
    out
}

/// What an error answer carries to the one place that draws its page in the request's language
/// (the guard, which holds the request's `Accept-Language` and `Referer`).
#[derive(Debug, Clone)]
pub struct ErrorPage {
    kind: ErrorKind,
    /// The refusal's own text (the engine's or the rule's, naming the file, row and field).
    message: String,
    /// Or its words, drawn in the page's language.
    said: Option<Said>,
    id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ErrorKind {
    Refused,
    Forbidden,
    Csrf,
    WrongHost,
    NotFound,
    Busy,
    Internal,
}

impl ErrorKind {
    /// Its title and the sentence that says what happened and what to do, for the page and the
    /// API's problem alike.
    fn words(self, w: &Words) -> (&'static str, &'static str) {
        match self {
            ErrorKind::Refused => (w.error_refused, w.error_refused_lead),
            ErrorKind::Forbidden => (w.error_forbidden, w.error_forbidden_lead),
            ErrorKind::Csrf => (w.error_forbidden, w.error_csrf_lead),
            ErrorKind::WrongHost => (w.error_forbidden, w.error_wrong_host_lead),
            ErrorKind::NotFound => (w.error_not_found, w.error_not_found_lead),
            ErrorKind::Busy => (w.error_busy, w.error_busy_lead),
            ErrorKind::Internal => (w.error_internal, w.error_internal_lead),
        }
    }
}

#[derive(Template)]
#[template(path = "console/error.html")]
struct ErrorView<'a> {
    w: &'static Words,
    title: &'a str,
    lead: &'a str,
    message: &'a str,
    id: Option<&'a str>,
    back: &'a str,
}

impl ErrorPage {
    /// The page: a title and a sentence in the page's language saying what happened and what to
    /// do, the refusal's text, and a way back to the page the person came from.
    pub fn render(&self, w: &'static Words, back: &str) -> Response {
        let (title, lead) = self.kind.words(w);
        let said = self.said.as_ref().map(|said| said.in_words(w));
        let view = ErrorView {
            w,
            title,
            lead,
            message: said.as_deref().unwrap_or(&self.message),
            id: self.id.as_deref(),
            back,
        };
        match view.render() {
            Ok(body) => (html_headers(), body).into_response(),
            Err(_) => title.to_string().into_response(),
        }
    }
}

/// Where "back" leads from an error page: the page the person came from (`Referer`) when it is
/// this console's own, at the `Host` the request named (its path and query only), else the
/// campaign list.
pub fn way_back(host: &str, referer: Option<&str>) -> String {
    if let Some(referer) = referer {
        if let Ok(url) = reqwest::Url::parse(referer) {
            let same_host = url.host_str().map(|name| match url.port() {
                Some(port) => format!("{name}:{port}"),
                None => name.to_string(),
            });
            if same_host.is_some_and(|name| name.eq_ignore_ascii_case(host)) && url.path().starts_with('/') {
                return match url.query() {
                    Some(query) => format!("{}?{query}", url.path()),
                    None => url.path().to_string(),
                };
            }
        }
    }
    "/campaigns".to_string()
}

impl IntoResponse for ConsoleError {
    fn into_response(self) -> Response {
        let status = self.status();
        if let ConsoleError::SignIn = self {
            return (status, [(header::LOCATION, "/signin")]).into_response();
        }
        let (kind, message) = self.shown();
        let id = match &self {
            ConsoleError::Internal(error) => {
                let id = uuid::Uuid::new_v4().simple().to_string()[..12].to_string();
                tracing::error!(
                    "console error {id}: {}",
                    crate::phone::mask_phones(&format!("{error:#}"))
                );
                Some(id)
            }
            _ => None,
        };
        let said = match &self {
            ConsoleError::Said(_, said) => Some(said.clone()),
            _ => None,
        };
        let page = ErrorPage {
            kind,
            message,
            said,
            id: id.clone(),
        };
        // The guard draws it in the request's language; this English page is what a response
        // that never passes the guard shows.
        let mut response = page.render(&super::words::EN, "/campaigns");
        *response.status_mut() = status;
        response.extensions_mut().insert(page);
        // The API answers the error itself, as a problem document (`api::problem`).
        response
            .extensions_mut()
            .insert(KeptError(std::sync::Arc::new(parking_lot::Mutex::new(Some((
                self, id,
            ))))));
        response
    }
}

/// The error an answer was made from, and an internal error's id, kept for the API to answer as
/// a problem document instead of a page.
#[derive(Clone)]
pub struct KeptError(std::sync::Arc<parking_lot::Mutex<Option<Numbered>>>);

/// An error, and the number an internal one was logged under.
pub type Numbered = (ConsoleError, Option<String>);

impl KeptError {
    pub fn take(&self) -> Option<Numbered> {
        self.0.lock().take()
    }
}

#[cfg(test)]
mod tests {
    use super::{without_server_paths, ConsoleError, Refusal};
    use proptest::prelude::*;

    /// Every kind of error the console raises has its problem type, a 4xx or 5xx status and a
    /// detail in each language; a refusal in words is typed by its word's name, in both.
    #[test]
    fn every_error_answers_the_api_with_a_typed_problem() {
        let errors = || {
            vec![
                ConsoleError::SignIn,
                ConsoleError::Forbidden("no".into()),
                ConsoleError::Csrf,
                ConsoleError::WrongHost("evil".into()),
                ConsoleError::NotFound,
                ConsoleError::Invalid("row 3, phone: not a number".into()),
                ConsoleError::Conflict("started".into()),
                ConsoleError::Busy("held".into()),
                ConsoleError::forbidden(crate::word!(refuse_own_approval), vec![]),
                ConsoleError::conflict(crate::word!(refuse_files_changed), vec![]),
                ConsoleError::invalid(
                    crate::word!(refuse_amount),
                    vec![("expected", "₩9".into()), ("typed", "1".into())],
                ),
                ConsoleError::Field {
                    field: "settings".into(),
                    message: "bad".into(),
                    too_large: false,
                },
                ConsoleError::TooMany("slow down".into()),
                ConsoleError::TooLarge("big".into()),
                ConsoleError::internal("boom"),
            ]
        };
        let mut kinds = std::collections::BTreeSet::new();
        for w in [&crate::console::words::EN, &crate::console::words::KO] {
            for error in errors() {
                let problem = error.problem(w, None);
                assert!(
                    problem.status.is_client_error() || problem.status.is_server_error(),
                    "{error:?}"
                );
                assert!(!problem.kind.is_empty() && !problem.detail.is_empty(), "{error:?}");
                if let ConsoleError::Said(refusal, said) = &error {
                    assert_eq!(problem.kind, said.word.name);
                    assert_eq!(problem.detail, said.in_words(w));
                    let status = match refusal {
                        Refusal::Invalid => 422,
                        Refusal::Conflict => 409,
                        Refusal::Forbidden => 403,
                    };
                    assert_eq!(problem.status.as_u16(), status);
                }
                kinds.insert(problem.kind);
            }
        }
        assert_eq!(
            kinds.len(),
            errors().len(),
            "each kind of error its own type: {kinds:?}"
        );
    }

    #[test]
    fn absolute_paths_keep_only_their_file_name() {
        assert_eq!(
            without_server_paths("/srv/team/campaigns/20261126-x/recipients.xlsx: not a readable spreadsheet"),
            "recipients.xlsx: not a readable spreadsheet"
        );
        assert_eq!(
            without_server_paths("cannot open \"/a/b/c.csv\" (and /d/e.txt)"),
            "cannot open \"c.csv\" (and e.txt)"
        );
        assert_eq!(without_server_paths("10/12 rows, a/b and /x"), "10/12 rows, a/b and /x");
    }

    proptest! {
        #[test]
        fn any_text_keeps_no_absolute_path(text in "\\PC{0,60}", dir in "[a-z]{1,8}") {
            let with_path = format!("{text} /{dir}/secret/{dir}.csv: refused");
            let shown = without_server_paths(&with_path);
            let secret_path = format!("/{}/secret/", dir);
            prop_assert!(!shown.contains(&secret_path));
        }
    }
}
