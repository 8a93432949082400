//! `/api/v1`: the console as a JSON API for a team's other systems, on personal tokens (`Authorization: Bearer`, no cookies, no CSRF), each route taking the step its page takes; refusals are problem documents; `/api/v1/openapi.json` is generated from the handlers' types; `/healthz` and `/readyz` for the server's monitoring.

mod campaigns;
mod extract;
pub mod idempotency;
pub mod problem;
pub mod views;
mod workspace;

use super::error::ConsoleError;
use super::Shared;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::header;
use axum::middleware::{from_fn_with_state, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, MethodRouter};
use axum::Router;
pub use problem::Problem;
use utoipa::OpenApi;

/// The API's routes, under `/api/v1`.
pub fn routes(console: &Shared) -> Router<Shared> {
    let keyed = |route: MethodRouter<Shared>| route.layer(from_fn_with_state(console.clone(), idempotency::keep));
    let upload_limit = usize::try_from(console.max_upload).unwrap_or(usize::MAX);
    let uploads = Router::new()
        .route("/campaigns", get(campaigns::list).merge(keyed(post(campaigns::create))))
        .route("/campaigns/{id}/edit", keyed(post(campaigns::edit)))
        .layer(DefaultBodyLimit::max(upload_limit.saturating_add(1 << 20)));
    let on_token = Router::new()
        .route("/campaigns/{id}", get(campaigns::get))
        .route(
            "/campaigns/{id}/check",
            get(campaigns::check).post(campaigns::run_check),
        )
        .route("/campaigns/{id}/test-send", post(campaigns::test_send))
        .route("/campaigns/{id}/submit", keyed(post(campaigns::submit)))
        .route("/campaigns/{id}/approve", keyed(post(campaigns::approve)))
        .route("/campaigns/{id}/start", keyed(post(campaigns::start)))
        .route("/campaigns/{id}/control", post(campaigns::control))
        .route("/campaigns/{id}/resume", keyed(post(campaigns::resume)))
        .route("/campaigns/{id}/status", get(campaigns::status))
        .route("/campaigns/{id}/results", get(campaigns::results_page))
        .route("/campaigns/{id}/files/{name}", get(super::pages::results::download))
        .route("/opt-outs", get(workspace::opt_outs).post(workspace::add_opt_outs))
        .route("/opt-outs/remove", post(workspace::remove_opt_outs))
        .route("/audit", get(workspace::audit))
        .route("/statement/{month}/{name}", get(workspace::statement_file))
        .merge(uploads)
        .layer(from_fn_with_state(console.clone(), on_token));
    Router::new()
        .route("/openapi.json", get(openapi))
        .merge(on_token)
        .fallback(not_found)
}

/// `/healthz` (the process answers) and `/readyz` (the store reads, the workspace takes a file).
pub fn probes() -> Router<Shared> {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
}

async fn ready(State(console): State<Shared>) -> Response {
    let store = console
        .store
        .users()
        .map(drop)
        .map_err(|error| format!("store: {error}"));
    let workspace = store.and_then(|()| {
        let probe = console
            .workspace
            .uploads_dir()
            .join(format!(".ready-{}", super::auth::random_token()));
        crate::files::create_private(&probe)
            .and_then(|_| std::fs::remove_file(&probe))
            .map_err(|error| format!("workspace {}: {error}", console.workspace.root.display()))
    });
    match workspace {
        Ok(()) => "ready\n".into_response(),
        Err(why) => {
            tracing::warn!("not ready: {why}");
            (axum::http::StatusCode::SERVICE_UNAVAILABLE, "not ready\n").into_response()
        }
    }
}

/// Every API request acts for the user of its token, with the user's role now; cookies are
/// taken away first, so that a browser's session never acts here. Errors are answered as
/// problem documents in the request's language.
async fn on_token(State(console): State<Shared>, mut request: Request, next: Next) -> Response {
    let w = console.words_for(request.headers());
    request.headers_mut().remove(header::COOKIE);
    match super::tokens::authenticate(&console, request.headers()) {
        Ok((signed, token)) => {
            request.extensions_mut().insert(signed);
            request.extensions_mut().insert(token);
            problem::in_problems(next.run(request).await, w)
        }
        Err(error) => problem::answer(&error, None, w),
    }
}

async fn not_found(State(console): State<Shared>, request: Request) -> Response {
    problem::answer(&ConsoleError::NotFound, None, console.words_for(request.headers()))
}

#[derive(OpenApi)]
#[openapi(
    info(title = "msgbatch console API", description = "The console's steps for other systems: a campaign from its files to its report, under the same roles and rules as the pages (docs/api.md)."),
    paths(
        campaigns::list,
        campaigns::create,
        campaigns::get,
        campaigns::edit,
        campaigns::run_check,
        campaigns::check,
        campaigns::test_send,
        campaigns::submit,
        campaigns::approve,
        campaigns::start,
        campaigns::control,
        campaigns::resume,
        campaigns::status,
        campaigns::results_page,
        campaigns::download_document,
        workspace::opt_outs,
        workspace::add_opt_outs,
        workspace::remove_opt_outs,
        workspace::audit,
        workspace::statement_file,
    ),
    components(schemas(Problem)),
    modifiers(&BearerToken)
)]
pub struct ApiDocument;

/// The token scheme every route but this document's names.
struct BearerToken;

impl utoipa::Modify for BearerToken {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "token",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("A personal API token, made on the console's account page"))
                    .build(),
            ),
        );
    }
}

async fn openapi() -> Response {
    axum::Json(ApiDocument::openapi()).into_response()
}
