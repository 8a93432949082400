//! `/metrics` in the Prometheus text format: campaigns by state, each run's recipients and won, the month's, the requests to the messaging service, and the console's own HTTP requests by route and status; served to a token with the `metrics` scope, or on `--metrics-listen` alone.

use super::campaigns::CampaignRecord;
use super::error::ConsoleError;
use super::Shared;
use axum::extract::{MatchedPath, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::collections::HashMap;

type Labels = crate::metrics::Labels;

/// What the console counts between scrapes, and the figures of runs that have ended (they do not
/// change, and reading a run's checkpoint at every scrape would cost more than the scrape).
#[derive(Default)]
pub struct ConsoleMetrics {
    requests: Family<Labels, Counter>,
    ended: parking_lot::Mutex<HashMap<String, (String, RunFigures)>>,
}

#[derive(Debug, Clone, Copy, Default)]
struct RunFigures {
    sent: u64,
    accepted: u64,
    not_accepted: u64,
    uncertain: u64,
    charged: i64,
    reserved: i64,
}

/// Counts each request by its route's pattern (never its path: ids would make a series each) and
/// its status.
pub async fn count(State(console): State<Shared>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |path| path.as_str().to_string());
    let method = request.method().as_str().to_string();
    let response = next.run(request).await;
    console
        .metrics
        .requests
        .get_or_create(&vec![
            ("route", route),
            ("method", method),
            ("status", response.status().as_u16().to_string()),
        ])
        .inc();
    response
}

/// `GET /metrics` on the console's address: for a token with the `metrics` scope.
pub async fn on_token(State(console): State<Shared>, request: Request) -> Response {
    let w = console.words_for(request.headers());
    let scoped = super::tokens::authenticate(&console, request.headers()).and_then(|(_, token)| {
        if token.scopes.iter().any(|scope| scope == super::tokens::SCOPE_METRICS) {
            Ok(())
        } else {
            Err(ConsoleError::forbidden(crate::word!(refuse_metrics_scope), vec![]))
        }
    });
    match scoped {
        Ok(()) => scrape(&console),
        Err(error) => super::api::problem::answer(&error, None, w),
    }
}

/// `GET /metrics` on `--metrics-listen`, an address only the monitoring reaches.
pub async fn open(State(console): State<Shared>) -> Response {
    scrape(&console)
}

fn scrape(console: &Shared) -> Response {
    match encode(console) {
        Ok(text) => (
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        Err(error) => error.into_response(),
    }
}

fn gauge(registry: &mut Registry, name: &str, help: &str) -> Family<Labels, Gauge> {
    let family = Family::<Labels, Gauge>::default();
    registry.register(name, help, family.clone());
    family
}

fn encode(console: &Shared) -> Result<String, ConsoleError> {
    let mut registry = Registry::default();
    crate::metrics::register_service(&mut registry);
    registry.register(
        "msgbatch_console_requests",
        "HTTP requests to the console, by route, method and status",
        console.metrics.requests.clone(),
    );
    let states = gauge(&mut registry, "msgbatch_campaigns", "Campaigns by state");
    let recipients = gauge(
        &mut registry,
        "msgbatch_run_recipients",
        "A campaign's run: recipients sent, accepted, not accepted and uncertain",
    );
    let won = gauge(
        &mut registry,
        "msgbatch_run_won",
        "A campaign's run: won charged and reserved",
    );
    let month = gauge(
        &mut registry,
        "msgbatch_month_won",
        "The workspace's month (Korean time): won charged, reserved and the limit",
    );
    let records: Vec<CampaignRecord> = console.store.campaigns()?;
    let mut by_state: HashMap<&'static str, i64> = HashMap::new();
    for record in &records {
        *by_state.entry(record.state.as_str()).or_default() += 1;
        let Some(figures) = figures_of(console, record) else {
            continue;
        };
        let labels = |kind: &'static str, value: &'static str| -> Labels {
            vec![("campaign", record.id.clone()), (kind, value.to_string())]
        };
        for (outcome, count) in [
            ("sent", figures.sent),
            ("accepted", figures.accepted),
            ("not_accepted", figures.not_accepted),
            ("uncertain", figures.uncertain),
        ] {
            recipients
                .get_or_create(&labels("outcome", outcome))
                .set(i64::try_from(count).unwrap_or(i64::MAX));
        }
        won.get_or_create(&labels("kind", "charged")).set(figures.charged);
        won.get_or_create(&labels("kind", "reserved")).set(figures.reserved);
    }
    for state in super::campaigns::State::ALL {
        states
            .get_or_create(&vec![("state", state.as_str().to_string())])
            .set(by_state.get(state.as_str()).copied().unwrap_or(0));
    }
    let this_month = super::month::this_month();
    let figures = console.months.figures(&this_month);
    let month_labels =
        |kind: &'static str| -> Labels { vec![("month", this_month.clone()), ("kind", kind.to_string())] };
    month.get_or_create(&month_labels("charged")).set(figures.charged);
    month.get_or_create(&month_labels("reserved")).set(figures.reserved);
    if let Some(limit) = figures.limit {
        month.get_or_create(&month_labels("limit")).set(limit);
    }
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).map_err(ConsoleError::internal)?;
    Ok(text)
}

impl RunFigures {
    fn of(status: &crate::engine::Status) -> RunFigures {
        RunFigures {
            sent: status.sent,
            accepted: status.accepted,
            not_accepted: status.not_accepted,
            uncertain: status.uncertain,
            charged: status.budget.as_ref().map_or(0, |budget| budget.charged),
            reserved: status.budget.as_ref().map_or(0, |budget| budget.reserved),
        }
    }
}

/// A campaign's run figures: from its board while it sends, else from its checkpoint once (kept
/// until the run changes: a resume, a purge).
fn figures_of(console: &Shared, record: &CampaignRecord) -> Option<RunFigures> {
    let run = record.run.as_ref()?;
    if let Some(active) = super::runner::active(console, &record.id) {
        return Some(RunFigures::of(&active.board.status()));
    }
    let key = format!("{}|{:?}|{:?}|{:?}", run.started_at, run.end, run.collected, run.purged);
    if let Some((kept, figures)) = console.metrics.ended.lock().get(&record.id) {
        if *kept == key {
            return Some(*figures);
        }
    }
    let figures = RunFigures::of(&crate::engine::status(&console.workspace.run_dir(&record.id)).ok()?);
    console.metrics.ended.lock().insert(record.id.clone(), (key, figures));
    Some(figures)
}
