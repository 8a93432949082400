//! Campaign pages: the list with its state filter, the overview with what can be done next, and a copy of a campaign (the new and edit forms are in composer.rs).

use super::filters;
use super::{render, to, Me};
use crate::console::auth::{Editor, Posted, Signed};
use crate::console::campaigns::{CampaignRecord, Found, State};
use crate::console::error::ConsoleError;
use crate::console::store::{AuditEntry, Role};
use crate::console::words::Words;
use crate::console::Shared;
use askama::Template;
use axum::extract::{Query, State as Console};
use axum::response::Response;
use serde::Deserialize;

/// The state shown: a campaign this process sends is `paused` or `scheduled` while it is.
pub fn shown_state(console: &Shared, record: &CampaignRecord) -> &'static str {
    if record.state == State::Sending {
        match crate::console::runner::active(console, &record.id) {
            Some(run) => match run.board.phase() {
                "paused" => "paused",
                "scheduled" => "scheduled",
                _ => "sending",
            },
            None => "interrupted",
        }
    } else {
        record.state.as_str()
    }
}

pub struct Row {
    pub id: String,
    pub name: String,
    pub kind: String,
    pub state: &'static str,
    pub rows: String,
    pub sent: String,
    pub spend: String,
    pub author: String,
    pub updated: String,
}

#[derive(Template)]
#[template(path = "console/campaigns.html")]
struct ListPage {
    w: &'static Words,
    me: Me,
    rows: Vec<Row>,
    filter: String,
    states: Vec<&'static str>,
    can_edit: bool,
    /// This month against the workspace's limit.
    m: super::month::MonthView,
}

#[derive(Deserialize)]
pub struct ListQuery {
    #[serde(default)]
    state: String,
}

pub async fn list(
    Console(console): Console<Shared>,
    signed: Signed,
    Query(query): Query<ListQuery>,
) -> Result<Response, ConsoleError> {
    let mut records: Vec<CampaignRecord> = console.store.campaigns()?;
    records.sort_by(|a, b| b.updated_at.cmp(&a.updated_at));
    let mut rows = Vec::new();
    for record in records {
        let state = shown_state(&console, &record);
        if !query.state.is_empty() && query.state != state {
            continue;
        }
        let (sent, spend) = progress(&console, &record);
        rows.push(Row {
            rows: record
                .check
                .as_ref()
                .and_then(|check| check.scan.as_ref())
                .map(|scan| crate::text::count(scan.rows))
                .unwrap_or_else(|| "–".into()),
            sent,
            spend,
            id: record.id,
            name: record.name,
            kind: crate::report::kind_label(&record.kind, signed.words.report_lang()),
            state,
            author: record.author,
            updated: record.updated_at,
        });
    }
    let mut states: Vec<&'static str> = State::ALL.iter().map(|state| state.as_str()).collect();
    states.insert(5, "paused");
    states.insert(5, "scheduled");
    render(ListPage {
        w: signed.words,
        can_edit: signed.can(Role::Editor),
        me: Me::of(&signed),
        rows,
        filter: query.state,
        states,
        m: super::month::MonthView::of(&console),
    })
}

/// Sent so far, and charged against the budget, from the live board or the run's checkpoint.
fn progress(console: &Shared, record: &CampaignRecord) -> (String, String) {
    if let Some(run) = crate::console::runner::active(console, &record.id) {
        let view = run.board.view();
        return (
            crate::text::count(view.sent),
            crate::console::runner::spend_text(view.charged, view.budget),
        );
    }
    if let Some(figures) = record.run.as_ref().and_then(|run| run.figures) {
        return (
            crate::text::count(figures.sent),
            crate::console::runner::spend_text(figures.charged, figures.budget),
        );
    }
    // A run recorded before its figures were kept in the record.
    if record.state.has_run() {
        if let Ok(status) = crate::engine::status(&console.workspace.run_dir(&record.id)) {
            let budget = status.budget.unwrap_or_default();
            return (
                crate::text::count(status.sent),
                crate::console::runner::spend_text(status.budget.map(|b| b.charged), budget.limit),
            );
        }
    }
    let budget = record.check.as_ref().and_then(|check| check.budget);
    ("0".into(), crate::console::runner::spend_text(None, budget))
}

/// A new draft with the settings, text and mappings of a campaign (a team sends the same kind of
/// campaign every week), without its files, check or approval.
pub async fn copy(
    Console(console): Console<Shared>,
    Found(source): Found,
    posted: Posted<super::flow::Empty, Editor>,
) -> Result<Response, ConsoleError> {
    let Editor(signed) = posted.signed;
    let text = std::fs::read_to_string(console.workspace.campaign_file(&source.id)).map_err(ConsoleError::from_io)?;
    let mut settings = crate::console::settings::parse_settings(&text)?;
    // The copy reads the files uploaded to it, not the source's.
    if let Some(recipients) = settings.get_mut("recipients").and_then(toml::Value::as_table_mut) {
        for key in ["suppression", "opt_outs"] {
            recipients.remove(key);
        }
    }
    settings.insert(
        "name".into(),
        toml::Value::String(format!("{} ({})", source.name, signed.words.copy_suffix)),
    );
    let record = super::composer::new_draft(&console, &signed.user.name, &settings, |_, _| Ok(()))?;
    console.store.audit(
        &signed.user.name,
        "copied",
        Some(&record.id),
        &format!("from {} ({})", source.name, source.id),
    )?;
    Ok(to(format!("/campaigns/{}/edit", record.id)))
}

#[derive(Template)]
#[template(path = "console/campaign.html")]
struct OverviewPage {
    w: &'static Words,
    me: Me,
    c: CampaignRecord,
    state: &'static str,
    settings: String,
    history: Vec<AuditEntry>,
    can_edit: bool,
    can_approve: bool,
    own: bool,
    two_person: bool,
    estimate: String,
    uncertain: u64,
    /// Inside enforced quiet hours: when the campaign may start (KST), offered as its start time.
    quiet_until: String,
    /// The same time as the start form's date-time field takes it (`2026-11-27T08:00`).
    quiet_until_input: String,
    /// A start was just refused for quiet hours.
    refused_quiet: bool,
    /// Awaiting approval or approved: what the approver decides on (previews, cost, quiet hours,
    /// what changed since the last approval).
    decision: Option<crate::console::approval::Decision>,
}

#[derive(Deserialize)]
pub struct OverviewQuery {
    #[serde(default)]
    refused: String,
}

pub async fn overview(
    Console(console): Console<Shared>,
    signed: Signed,
    Found(record): Found,
    Query(query): Query<OverviewQuery>,
) -> Result<Response, ConsoleError> {
    let id = record.id.clone();
    let quiet_end = if record.state == State::Approved {
        crate::console::compose::load(&console.workspace, &id)
            .ok()
            .and_then(|campaign| crate::console::check::enforced_quiet_hours_end(&campaign))
    } else {
        None
    };
    let quiet_until = quiet_end
        .map(|end| end.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default();
    let quiet_until_input = quiet_end
        .map(|end| end.format("%Y-%m-%dT%H:%M").to_string())
        .unwrap_or_default();

    let settings = std::fs::read_to_string(console.workspace.campaign_file(&id)).unwrap_or_default();
    let uncertain = if record.state.resumable() {
        crate::engine::status(&console.workspace.run_dir(&id))
            .map(|status| status.uncertain)
            .unwrap_or(0)
    } else {
        0
    };
    let estimate = super::won_opt(record.check.as_ref().and_then(|check| check.estimate));
    let decision = decision(&console, &record, signed.words).await?;
    render(OverviewPage {
        w: signed.words,
        state: shown_state(&console, &record),
        settings,
        history: console
            .store
            .audit_log(&crate::console::store::AuditFilter::campaign(&id), 50)?,
        can_edit: signed.can(Role::Editor),
        can_approve: signed.can(Role::Approver),
        own: record.is_own(&signed.user.name),
        two_person: console.two_person,
        estimate,
        uncertain,
        refused_quiet: query.refused == "quiet_hours" && !quiet_until.is_empty(),
        quiet_until,
        quiet_until_input,
        decision,
        me: Me::of(&signed),
        c: record,
    })
}

/// The approver's decision for a campaign awaiting approval or approved, compared with the
/// snapshot of its last approval; `None` in other states, or when its settings no longer load
/// (the page then shows the estimate alone, and the approval itself refuses).
async fn decision(
    console: &Shared,
    record: &CampaignRecord,
    words: &'static Words,
) -> Result<Option<crate::console::approval::Decision>, ConsoleError> {
    if !matches!(record.state, State::AwaitingApproval | State::Approved) {
        return Ok(None);
    }
    let before = console.store.approved_snapshot(&record.id)?;
    let (workspace, record) = (console.workspace.clone(), record.clone());
    let id = record.id.clone();
    let made =
        tokio::task::spawn_blocking(move || crate::console::approval::decision(&workspace, &record, before, words))
            .await
            .map_err(ConsoleError::internal)?;
    Ok(made
        .inspect_err(|error| tracing::warn!("campaign {id}: no decision page: {error}"))
        .ok())
}
