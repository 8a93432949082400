//! The API's workspace routes: the opt-out list (added to by an editor, taken from by an approver), the audit log, and a month's statement files, each through its page's function.

use super::extract::{Body, Query};
use super::views::{AuditEntryView, NumbersRequest, OptOutsView};
use super::Problem;
use crate::console::auth::{Approver, Editor, Posted, Signed};
use crate::console::error::ConsoleError;
use crate::console::pages::{opt_outs, statement};
use crate::console::store::AuditFilter;
use crate::console::Shared;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::Json;

fn list(console: &Shared) -> Result<Json<OptOutsView>, ConsoleError> {
    let numbers = console.store.opt_outs()?;
    Ok(Json(OptOutsView {
        count: numbers.len(),
        numbers,
    }))
}

/// The workspace's opt-out list (editor): numbers advertising never reaches.
#[utoipa::path(get, path = "/api/v1/opt-outs", tag = "workspace",
    responses((status = 200, body = OptOutsView), (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn opt_outs(
    State(console): State<Shared>,
    Editor(signed): Editor,
) -> Result<Json<OptOutsView>, ConsoleError> {
    console
        .store
        .audit(&signed.user.name, "downloaded", None, "opt-outs (API)")?;
    list(&console)
}

/// Adds numbers to the opt-out list (editor); advertising campaigns checked before are voided.
#[utoipa::path(post, path = "/api/v1/opt-outs", tag = "workspace", request_body = NumbersRequest,
    responses((status = 200, body = OptOutsView), (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn add_opt_outs(
    State(console): State<Shared>,
    editor: Editor,
    Body(request): Body<NumbersRequest>,
) -> Result<Json<OptOutsView>, ConsoleError> {
    let posted = Posted {
        signed: editor,
        form: opt_outs::NumbersForm {
            numbers: request.numbers.join("\n"),
        },
    };
    opt_outs::add(State(console.clone()), posted).await?;
    list(&console)
}

/// Takes numbers off the opt-out list (approver: advertising may reach them again).
#[utoipa::path(post, path = "/api/v1/opt-outs/remove", tag = "workspace", request_body = NumbersRequest,
    responses((status = 200, body = OptOutsView), (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn remove_opt_outs(
    State(console): State<Shared>,
    approver: Approver,
    Body(request): Body<NumbersRequest>,
) -> Result<Json<OptOutsView>, ConsoleError> {
    let posted = Posted {
        signed: approver,
        form: opt_outs::NumbersForm {
            numbers: request.numbers.join("\n"),
        },
    };
    opt_outs::remove(State(console.clone()), posted).await?;
    list(&console)
}

/// The audit log, newest first (at most 500 entries), of a campaign, a person or a month.
#[utoipa::path(get, path = "/api/v1/audit", tag = "workspace",
    params(("campaign" = Option<String>, Query), ("user" = Option<String>, Query), ("month" = Option<String>, Query, description = "2026-11, Korean time")),
    responses((status = 200, body = [AuditEntryView]), (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn audit(
    State(console): State<Shared>,
    _signed: Signed,
    Query(filter): Query<AuditFilter>,
) -> Result<Json<Vec<AuditEntryView>>, ConsoleError> {
    Ok(Json(
        console
            .store
            .audit_log(&filter, 500)?
            .into_iter()
            .map(|entry| AuditEntryView {
                at: entry.at,
                user: entry.user,
                action: entry.action,
                campaign: entry.campaign,
                detail: entry.detail,
            })
            .collect(),
    ))
}

/// A month's statement file (`statement.csv`, `statement.xlsx`, `statement.html`…), made from
/// every run's checkpoint as the statement page makes it.
#[utoipa::path(get, path = "/api/v1/statement/{month}/{name}", tag = "workspace",
    params(("month" = String, Path, description = "2026-11"), ("name" = String, Path)),
    responses(
        (status = 200, description = "The file", content(
            (String = "text/csv"),
            (String = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
            (String = "text/html"),
        )),
        (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn statement_file(
    State(console): State<Shared>,
    signed: Signed,
    Path((month, name)): Path<(String, String)>,
) -> Result<Response, ConsoleError> {
    let parsed = crate::statement::Month::parse(&month).map_err(|_| ConsoleError::NotFound)?;
    statement::make(&console, parsed, None, signed.words).await?;
    statement::download(State(console), signed, Path((month, name))).await
}
