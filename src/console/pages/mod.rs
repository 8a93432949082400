//! The console's routes, and what every page shares: the signed-in person's bar, rendering, the embedded assets.

mod campaign;
pub(crate) mod composer;
mod connections;
pub(crate) mod flow;
pub(crate) mod live;
pub mod month;
mod notifications;
pub(crate) mod opt_outs;
pub(crate) mod people;
pub(crate) mod results;
pub(crate) mod statement;
mod tokens;
pub(crate) mod uploads;
mod webhooks;

/// The pages' own template filters.
pub mod filters {
    /// A time the console recorded (RFC 3339, UTC) as a person in Korea reads it:
    /// `2026-11-26 21:38 KST`; a text that is no such time is shown as it is.
    pub fn kst<T: std::fmt::Display>(stamp: T, _: &dyn askama::Values) -> askama::Result<String> {
        Ok(crate::campaign::quiet::wall_time(&stamp.to_string()))
    }

    /// A count as people read it: `1,234`.
    pub fn figure(count: &u64, _: &dyn askama::Values) -> askama::Result<String> {
        Ok(crate::text::count(*count))
    }

    /// Won as people read it: `₩14,400`.
    pub fn won(amount: &i64, _: &dyn askama::Values) -> askama::Result<String> {
        Ok(crate::text::won(*amount))
    }
}

use super::auth::Signed;
use super::error::{html_headers, ConsoleError};
use super::words::Words;
use super::Shared;
use askama::Template;
use axum::extract::DefaultBodyLimit;
use axum::http::header;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;

/// The person's bar on every page.
pub struct Me {
    pub name: String,
    pub role: &'static str,
    pub csrf: String,
    pub admin: bool,
    /// Seconds after this page's load when the page warns that the idle session ends in five minutes.
    pub session_warning_after: u64,
}

impl Me {
    pub fn of(signed: &Signed) -> Me {
        Me {
            name: signed.user.name.clone(),
            role: signed.user.role.as_str(),
            csrf: signed.session.csrf.clone(),
            admin: signed.can(super::store::Role::Admin),
            session_warning_after: super::auth::IDLE_TIMEOUT.as_secs().saturating_sub(5 * 60),
        }
    }
}

/// A rendered page.
pub fn render(page: impl Template) -> Result<Response, ConsoleError> {
    let body = page.render().map_err(ConsoleError::internal)?;
    Ok((html_headers(), body).into_response())
}

/// After a form: back to a page (303, so a reload does not post again).
pub fn to(path: String) -> Response {
    Redirect::to(&path).into_response()
}

/// The pages' routes (the console's router adds the API, the guard and the state).
pub fn routes(console: &Shared) -> Router<Shared> {
    let upload_limit = usize::try_from(console.max_upload).unwrap_or(usize::MAX);
    let uploads = Router::new()
        .route("/campaigns", post(composer::create))
        .route("/campaigns/{id}/edit", post(composer::edit))
        .route("/opt-outs/upload", post(opt_outs::upload))
        .route("/statement", post(statement::compare))
        .layer(DefaultBodyLimit::max(upload_limit.saturating_add(1 << 20)));
    Router::new()
        .route("/", get(|| async { Redirect::to("/campaigns") }))
        .route("/signin", get(people::sign_in_form).post(people::sign_in))
        .route("/signout", post(people::sign_out))
        .route("/welcome/{token}", get(people::welcome_form).post(people::welcome))
        .route("/account", get(people::account).post(people::change_password))
        .route("/account/tokens", post(tokens::make))
        .route("/account/tokens/{id}/revoke", post(tokens::revoke))
        .route("/users", get(people::users).post(people::add_user))
        .route("/users/{name}", post(people::change_user))
        .route("/audit", get(people::audit))
        .route("/connections", get(connections::page).post(connections::save))
        .route("/statement", get(statement::page))
        .route("/statement/{month}/{name}", get(statement::download))
        .route("/month", get(month::page).post(month::set))
        .route("/month/cap", post(month::set_cap))
        .route("/month/retention", post(month::set_retention))
        .route("/notifications", get(notifications::page).post(notifications::add))
        .route("/notifications/{id}/remove", post(notifications::remove))
        .route("/webhooks", get(webhooks::page).post(webhooks::add))
        .route("/webhooks/{id}/remove", post(webhooks::remove))
        .route("/webhooks/{endpoint}/{message}/redeliver", post(webhooks::redeliver))
        .route("/opt-outs", get(opt_outs::page))
        .route("/opt-outs/add", post(opt_outs::add))
        .route("/opt-outs/remove", post(opt_outs::remove))
        .route("/opt-outs.csv", get(opt_outs::download))
        .route("/campaigns", get(campaign::list))
        .route("/campaigns/new", get(composer::new_form))
        .route("/campaigns/{id}", get(campaign::overview))
        .route("/campaigns/{id}/edit", get(composer::edit_form))
        .route("/campaigns/{id}/check", get(flow::check_page).post(flow::run_check))
        .route("/campaigns/{id}/rejects.csv", get(flow::rejects_download))
        .route("/campaigns/{id}/test-send", post(flow::test_send))
        .route("/campaigns/{id}/submit", post(flow::submit))
        .route("/campaigns/{id}/approve", post(flow::approve))
        .route("/campaigns/{id}/start", post(flow::start))
        .route("/campaigns/{id}/live", get(live::live_page))
        .route("/campaigns/{id}/live/events", get(live::live_events))
        .route("/campaigns/{id}/control", post(live::control))
        .route("/campaigns/{id}/resume", post(results::resume))
        .route("/campaigns/{id}/results", get(results::results_page))
        .route("/campaigns/{id}/summary", get(results::summary))
        .route("/campaigns/{id}/files/{name}", get(results::download))
        .route("/campaigns/{id}/retry", post(results::retry))
        .route("/campaigns/{id}/copy", post(campaign::copy))
        .route("/campaigns/{id}/not-accepted.csv", get(results::not_accepted))
        .route("/campaigns/{id}/not-delivered.csv", get(results::not_delivered))
        .route("/campaigns/{id}/collect", post(results::collect))
        .route("/assets/console.css", get(css))
        .route("/assets/live.js", get(live_js))
        .route("/assets/form.js", get(form_js))
        .route("/assets/keep.js", get(keep_js))
        .merge(uploads)
}

const CSS: &str = include_str!("../assets/console.css");
const LIVE_JS: &str = include_str!("../assets/live.js");
const FORM_JS: &str = include_str!("../assets/form.js");
const KEEP_JS: &str = include_str!("../assets/keep.js");

async fn css() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "max-age=3600"),
        ],
        CSS,
    )
        .into_response()
}

async fn live_js() -> Response {
    script(LIVE_JS)
}

async fn form_js() -> Response {
    script(FORM_JS)
}

async fn keep_js() -> Response {
    script(KEEP_JS)
}

fn script(body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "max-age=3600"),
        ],
        body,
    )
        .into_response()
}

/// Won with thousands separators.
pub use crate::text::{won, won_opt};

/// Words for a page shown before anyone signs in.
pub fn words(console: &Shared, headers: &axum::http::HeaderMap) -> &'static Words {
    console.words_for(headers)
}
