//! The API's campaign routes: each takes the step its page takes, through the same function, so that every rule of the console (roles, the two-person rule, the typed amount, quiet hours, the month's limit) holds here as there.

use super::extract::{Body, Form, MaybeBody, Query};
use super::views::{
    ApproveRequest, CampaignView, CheckView, ControlAction, ControlRequest, RejectsPage, ResumeRequest, StartRequest,
    StatusView, TestAnswerView, TestMessageView, TestSendRequest, TestSendView,
};
use super::Problem;
use crate::console::auth::{Approver, Editor, Holder, Posted, Signed};
use crate::console::campaigns::{CampaignRecord, Found};
use crate::console::error::ConsoleError;
use crate::console::pages::{composer, flow, live, results, uploads};
use crate::console::Shared;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;

type Answer<T> = Result<Json<T>, ConsoleError>;

fn reread(console: &Shared, id: &str) -> Answer<CampaignView> {
    let record = crate::console::campaigns::find(&console.store, id)?;
    Ok(Json(CampaignView::of(&record)))
}

/// Every campaign, newest first.
#[utoipa::path(get, path = "/api/v1/campaigns", tag = "campaigns",
    responses((status = 200, body = [CampaignView]), (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn list(State(console): State<Shared>, _signed: Signed) -> Answer<Vec<CampaignView>> {
    let mut records: Vec<CampaignRecord> = console.store.campaigns()?;
    records.sort_by(|a, b| b.created_at.cmp(&a.created_at));
    Ok(Json(records.iter().map(CampaignView::of).collect()))
}

/// A new draft from a campaign file or a kind, with its recipients and suppression files (editor).
#[utoipa::path(post, path = "/api/v1/campaigns", tag = "campaigns",
    request_body(content = super::views::CreateForm, content_type = "multipart/form-data"),
    params(("Idempotency-Key" = Option<String>, Header, description = "A retried request gets the first answer")),
    responses((status = 201, body = CampaignView), (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn create(
    State(console): State<Shared>,
    Editor(signed): Editor,
    Form(form): Form,
) -> Result<Response, ConsoleError> {
    let mut upload = uploads::receive(&console, &signed, form, uploads::Sender::Api).await?;
    let record = composer::create_campaign(&console, &signed, &mut upload).map_err(composer::Failure::into_error)?;
    Ok((StatusCode::CREATED, Json(CampaignView::of(&record))).into_response())
}

#[utoipa::path(get, path = "/api/v1/campaigns/{id}", tag = "campaigns",
    params(("id" = String, Path)),
    responses((status = 200, body = CampaignView), (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn get(Found(record): Found) -> Answer<CampaignView> {
    Ok(Json(CampaignView::of(&record)))
}

/// New settings or files (editor): the campaign goes back to draft, its check and approval void.
#[utoipa::path(post, path = "/api/v1/campaigns/{id}/edit", tag = "campaigns",
    params(("id" = String, Path), ("Idempotency-Key" = Option<String>, Header)),
    request_body(content = super::views::EditForm, content_type = "multipart/form-data"),
    responses((status = 200, body = CampaignView), (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn edit(
    State(console): State<Shared>,
    Editor(signed): Editor,
    Found(record): Found,
    Form(form): Form,
) -> Answer<CampaignView> {
    let mut upload = uploads::receive(&console, &signed, form, uploads::Sender::Api).await?;
    if !upload.fields.contains_key("settings") {
        // What is left out stays: the settings as saved.
        let saved =
            std::fs::read_to_string(console.workspace.campaign_file(&record.id)).map_err(ConsoleError::from_io)?;
        upload.fields.insert("settings".into(), saved);
    }
    match composer::edit_campaign(&console, &signed, &record.id, &mut upload).await? {
        (None, record) => Ok(Json(CampaignView::of(&record))),
        (Some((refused, status)), _) => Err(composer::Failure::Form(refused, status).into_error()),
    }
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct PageQuery {
    /// From 0.
    #[serde(default)]
    pub page: usize,
}

/// Checks the campaign (editor): the engine's `validate`, as the check page runs it.
#[utoipa::path(post, path = "/api/v1/campaigns/{id}/check", tag = "flow",
    params(("id" = String, Path)),
    responses((status = 200, body = CheckView), (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn run_check(State(console): State<Shared>, signed: Signed, found: Found) -> Answer<CheckView> {
    let id = found.0.id.clone();
    let posted = Posted {
        signed: Editor::holding(signed.clone())?,
        form: flow::Empty {},
    };
    flow::run_check(State(console.clone()), found, posted).await?;
    // Just checked: the files are those the check read (no need to read them all again).
    check_view(&console, &id, 0, Some(true)).await
}

/// The last check's result, and a page of its rejected rows.
#[utoipa::path(get, path = "/api/v1/campaigns/{id}/check", tag = "flow",
    params(("id" = String, Path), PageQuery),
    responses((status = 200, body = CheckView), (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn check(
    State(console): State<Shared>,
    Found(record): Found,
    Query(query): Query<PageQuery>,
) -> Answer<CheckView> {
    check_view(&console, &record.id, query.page, None).await
}

/// The check's view; `current` when it is known, else the files are read again to tell.
async fn check_view(console: &Shared, id: &str, page: usize, current: Option<bool>) -> Answer<CheckView> {
    let record = crate::console::campaigns::find(&console.store, id)?;
    let path = crate::console::check::rejects_path(&console.workspace, id);
    let (header, rows, more) = crate::console::check::rejects_page(&path, page)?;
    let current = match (current, &record.check) {
        (Some(known), Some(_)) => known,
        (_, Some(check)) => {
            crate::console::compose::fingerprint_now(&console.workspace, &record).await? == check.fingerprint
        }
        (_, None) => false,
    };
    Ok(Json(CheckView {
        check: CampaignView::of(&record).check,
        current,
        rejects: RejectsPage {
            page,
            header,
            rows: rows.into_iter().map(|line| line.cells).collect(),
            more,
        },
    }))
}

/// Sends the check's chosen messages to a few test numbers (editor).
#[utoipa::path(post, path = "/api/v1/campaigns/{id}/test-send", tag = "flow",
    params(("id" = String, Path)), request_body = TestSendRequest,
    responses((status = 200, body = TestSendView), (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn test_send(
    State(console): State<Shared>,
    Editor(signed): Editor,
    Found(record): Found,
    Body(request): Body<TestSendRequest>,
) -> Answer<TestSendView> {
    let (sent, _) = flow::send_test(&console, &record.id, &signed, request.numbers).await?;
    Ok(Json(TestSendView {
        messages: sent
            .messages
            .into_iter()
            .map(|message| TestMessageView {
                text: message.preview.text.clone().unwrap_or_default(),
                answers: message
                    .answers
                    .into_iter()
                    .map(|answer| TestAnswerView {
                        to: answer.to,
                        outcome: answer.outcome.to_string(),
                        status: answer.status,
                        accepted: answer.accepted,
                        error: answer.error,
                    })
                    .collect(),
            })
            .collect(),
    }))
}

/// Submits a checked campaign for approval (editor).
#[utoipa::path(post, path = "/api/v1/campaigns/{id}/submit", tag = "flow",
    params(("id" = String, Path), ("Idempotency-Key" = Option<String>, Header)),
    responses((status = 200, body = CampaignView), (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn submit(State(console): State<Shared>, signed: Signed, found: Found) -> Answer<CampaignView> {
    let id = found.0.id.clone();
    let posted = Posted {
        signed: Editor::holding(signed)?,
        form: flow::Empty {},
    };
    flow::submit(State(console.clone()), found, posted).await?;
    reread(&console, &id)
}

/// Approves another person's submitted campaign (approver; never one's own).
#[utoipa::path(post, path = "/api/v1/campaigns/{id}/approve", tag = "flow",
    params(("id" = String, Path), ("Idempotency-Key" = Option<String>, Header)),
    request_body(content = ApproveRequest, description = "May be left out"),
    responses((status = 200, body = CampaignView), (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn approve(
    State(console): State<Shared>,
    signed: Signed,
    found: Found,
    MaybeBody(request): MaybeBody<ApproveRequest>,
) -> Answer<CampaignView> {
    let id = found.0.id.clone();
    let posted = Posted {
        signed: Approver::holding(signed)?,
        form: flow::ApproveForm {
            quiet_hours_ack: if request.quiet_hours_ack {
                "on".into()
            } else {
                String::new()
            },
        },
    };
    flow::approve(State(console.clone()), found, posted).await?;
    reread(&console, &id)
}

/// Starts an approved campaign with its estimate typed out (approver), now or at `start_at`.
#[utoipa::path(post, path = "/api/v1/campaigns/{id}/start", tag = "flow",
    params(("id" = String, Path), ("Idempotency-Key" = Option<String>, Header)),
    request_body = StartRequest,
    responses((status = 202, body = CampaignView), (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn start(
    State(console): State<Shared>,
    signed: Signed,
    Found(record): Found,
    Body(request): Body<StartRequest>,
) -> Result<Response, ConsoleError> {
    let posted = Posted {
        signed: Approver::holding(signed)?,
        form: flow::StartForm {
            amount: request.amount,
            start_at: request.start_at.unwrap_or_default(),
        },
    };
    match flow::start_campaign(&console, &record.id, posted).await? {
        flow::Started::Now | flow::Started::Scheduled => {
            Ok((StatusCode::ACCEPTED, reread(&console, &record.id)?).into_response())
        }
        flow::Started::QuietHours => {
            let campaign = crate::console::compose::load(&console.workspace, &record.id)?;
            let until = crate::console::check::enforced_quiet_hours_end(&campaign)
                .map(|end| end.format("%Y-%m-%d %H:%M KST").to_string())
                .unwrap_or_default();
            Err(ConsoleError::conflict(
                crate::word!(refuse_start_quiet_hours),
                vec![("until", until.into())],
            ))
        }
    }
}

/// Pause, resume, stop, or a new rate for a sending campaign (approver).
#[utoipa::path(post, path = "/api/v1/campaigns/{id}/control", tag = "run",
    params(("id" = String, Path)), request_body = ControlRequest,
    responses((status = 200, body = StatusView), (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn control(
    State(console): State<Shared>,
    signed: Signed,
    found: Found,
    Body(request): Body<ControlRequest>,
) -> Answer<StatusView> {
    let id = found.0.id.clone();
    let approver = Approver::holding(signed.clone())?;
    if crate::console::runner::active(&console, &id).is_none_or(|run| run.board.phase() == "finished") {
        return Err(ConsoleError::conflict(crate::word!(refuse_not_running), vec![]));
    }
    let action = match request.action {
        ControlAction::Pause => "pause",
        ControlAction::Resume => "resume",
        ControlAction::Stop => "stop",
        ControlAction::Rate => "rate",
    };
    let posted = Posted {
        signed: approver,
        form: live::ControlForm {
            action: action.into(),
            rate: request.rate.map(|rate| rate.to_string()).unwrap_or_default(),
        },
    };
    live::control(State(console.clone()), found, posted).await?;
    status_view(&console, &id, &signed)
}

/// Resumes a run that ended with recipients left (approver).
#[utoipa::path(post, path = "/api/v1/campaigns/{id}/resume", tag = "run",
    params(("id" = String, Path), ("Idempotency-Key" = Option<String>, Header)),
    request_body(content = ResumeRequest, description = "May be left out"),
    responses((status = 202, body = CampaignView), (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn resume(
    State(console): State<Shared>,
    signed: Signed,
    found: Found,
    MaybeBody(request): MaybeBody<ResumeRequest>,
) -> Result<Response, ConsoleError> {
    let id = found.0.id.clone();
    let posted = Posted {
        signed: Approver::holding(signed)?,
        form: results::ResumeForm {
            resend_uncertain: request.resend_uncertain.unwrap_or_default(),
        },
    };
    results::resume(State(console.clone()), found, posted).await?;
    Ok((StatusCode::ACCEPTED, reread(&console, &id)?).into_response())
}

/// The run's progress and figures: live while it sends, from its checkpoint after.
#[utoipa::path(get, path = "/api/v1/campaigns/{id}/status", tag = "run",
    params(("id" = String, Path)),
    responses((status = 200, body = StatusView), (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn status(State(console): State<Shared>, signed: Signed, Found(record): Found) -> Answer<StatusView> {
    status_view(&console, &record.id, &signed)
}

fn status_view(console: &Shared, id: &str, signed: &Signed) -> Answer<StatusView> {
    let record = crate::console::campaigns::find(&console.store, id)?;
    let (view, _) = live::view_of(console, &record, signed.words)
        .ok_or_else(|| ConsoleError::conflict(crate::word!(refuse_not_started), vec![]))?;
    Ok(Json(StatusView {
        state: record.state.as_str().to_string(),
        phase: view.phase.to_string(),
        total: view.total,
        done: view.done,
        percent: view.percent,
        sent: view.sent,
        accepted: view.accepted,
        not_accepted: view.not_accepted,
        uncertain: view.uncertain,
        in_flight: view.in_flight,
        pending: view.pending,
        charged: view.charged,
        reserved: view.reserved,
        budget: view.budget,
        paused_why: view.paused_why,
        finished: view.finished,
        report_ready: console.workspace.run_dir(id).join("report.csv").exists()
            && crate::console::runner::active(console, id).is_none(),
    }))
}

/// A run's file: `report.csv`, `report.raw.csv`, `report.xlsx`, `report.parquet`, `summary.json`…
#[utoipa::path(get, path = "/api/v1/campaigns/{id}/files/{name}", tag = "run",
    params(("id" = String, Path), ("name" = String, Path)),
    responses(
        (status = 200, description = "The file", content(
            (String = "text/csv"),
            (String = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
            (String = "application/vnd.apache.parquet"),
            (String = "text/html"),
            (Object = "application/json"),
        )),
        (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
#[allow(dead_code)]
fn download_document() {}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct ResultsQuery {
    /// A `next_cursor` from the page before (or a `campaign.results` webhook); none: the first page.
    pub cursor: Option<String>,
    /// Rows a page, 1 to 5000 (500).
    pub limit: Option<usize>,
}

/// A run's final results, a page at a time: the same pages `campaign.results` webhooks carry.
#[utoipa::path(get, path = "/api/v1/campaigns/{id}/results", tag = "run",
    params(("id" = String, Path), ResultsQuery),
    responses((status = 200, body = crate::console::webhooks::results::ResultsPage), (status = "4XX", body = Problem, content_type = "application/problem+json")),
    security(("token" = [])))]
pub async fn results_page(
    State(console): State<Shared>,
    Found(record): Found,
    Query(query): Query<ResultsQuery>,
) -> Answer<crate::console::webhooks::results::ResultsPage> {
    let limit = query
        .limit
        .unwrap_or(crate::console::webhooks::RESULTS_PAGE)
        .clamp(1, 5000);
    let run_dir = console.workspace.run_dir(&record.id);
    let page = tokio::task::spawn_blocking(move || {
        crate::console::webhooks::results::page(&run_dir, query.cursor.as_deref(), limit)
    })
    .await
    .map_err(ConsoleError::internal)??;
    Ok(Json(page))
}
