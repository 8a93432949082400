//! The live page of a campaign's run (its progress, answers and rate drawn by the server; Server-Sent Events, or a refresh each second without JavaScript), and pause/resume/stop/rate; once the run has ended, the same page with its results link, its last errors and its rate kept.

use super::filters;
use super::{render, to, Me};
use crate::console::auth::{Approver, Posted, Signed};
use crate::console::campaigns::{CampaignRecord, Found};
use crate::console::error::ConsoleError;
use crate::console::runner::{self, LiveView, Reading};
use crate::console::store::Role;
use crate::console::words::Words;
use crate::console::Shared;
use askama::Template;
use axum::extract::{Query, State as Console};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use std::time::Duration;

/// How often the live page hears of the figures, at the most.
const LIVE_EVERY: Duration = Duration::from_millis(500);
/// How long the live page waits for the figures, at the most.
const LIVE_AT_LEAST: Duration = Duration::from_secs(1);

#[derive(Template)]
#[template(path = "console/live.html")]
struct LivePage {
    w: &'static Words,
    controls: [(&'static str, &'static str); 3],
    me: Me,
    c: CampaignRecord,
    v: LiveView,
    /// The run goes on: the page follows it (events, or a refresh) and offers its controls.
    live: bool,
    can_control: bool,
    /// A control was posted after the run had ended.
    already_ended: bool,
}

/// The view of a run in the words `w`: the board of a running one, else its checkpoint and what
/// its record kept; whether it still runs.
pub(crate) fn view_of(console: &Shared, record: &CampaignRecord, w: &Words) -> Option<(LiveView, bool)> {
    if let Some(run) = runner::active(console, &record.id) {
        let view = run.board.view_in(w);
        let live = view.finished.is_none();
        return Some((view, live));
    }
    let status = crate::engine::status(&console.workspace.run_dir(&record.id)).ok()?;
    let kept = record.run.as_ref().map(|run| run.live.clone()).unwrap_or_default();
    let reading = Reading {
        phase: "finished",
        status: &status,
        rate: 0.0,
        pace: None,
        time_left: "–".into(),
        errors: &kept.errors,
        waiting: None,
        paused: None,
        finished: record.run.as_ref().and_then(|run| run.end.clone()),
        points: &kept.rate,
    };
    Some((reading.view(w), false))
}

#[derive(Deserialize)]
pub struct LiveQuery {
    #[serde(default)]
    ended: Option<String>,
}

pub async fn live_page(
    Console(console): Console<Shared>,
    signed: Signed,
    Found(record): Found,
    Query(query): Query<LiveQuery>,
) -> Result<Response, ConsoleError> {
    // Nothing was recorded (not started, or a start refused): the campaign's page says why.
    let Some((v, live)) = view_of(&console, &record, signed.words) else {
        return Ok(to(format!("/campaigns/{}", record.id)));
    };
    render(LivePage {
        w: signed.words,
        controls: [
            ("pause", signed.words.pause),
            ("resume", signed.words.resume),
            ("stop", signed.words.stop),
        ],
        can_control: signed.can(Role::Approver),
        already_ended: query.ended.is_some() && !live,
        me: Me::of(&signed),
        c: record,
        v,
        live,
    })
}

/// The live figures as Server-Sent Events: one `view` event (JSON, with the pictures as SVG) in
/// the page's words whenever they change, at most every half second; the stream ends with the run.
pub async fn live_events(
    Console(console): Console<Shared>,
    signed: Signed,
    Found(record): Found,
) -> Result<Response, ConsoleError> {
    let id = record.id;
    let words = signed.words;
    let run = runner::active(&console, &id);
    let stream = futures::stream::unfold((run, true), move |(run, first)| async move {
        let run = run?;
        if !first {
            // Half a second at least after the last event; then the next change, or the second's
            // end: a quiet run still sends its figures once a second (the rate and time left move).
            let mut changed = run.board.changed.subscribe();
            tokio::time::sleep(LIVE_EVERY).await;
            let _ = tokio::time::timeout(LIVE_AT_LEAST - LIVE_EVERY, changed.changed()).await;
        }
        let view = run.board.view_in(words);
        let done = view.finished.is_some();
        let event = SseEvent::default()
            .event("view")
            .json_data(&view)
            .unwrap_or_else(|_| SseEvent::default());
        Some((
            Ok::<_, std::convert::Infallible>(event),
            (if done { None } else { Some(run) }, false),
        ))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()).into_response())
}

#[derive(Deserialize)]
pub struct ControlForm {
    pub(crate) action: String,
    #[serde(default)]
    pub(crate) rate: String,
}

/// Pause, resume, stop, or a new rate, through the run's control handle. Posted after the run
/// ended (a page left open), it changes nothing and leads back to the live page, which then
/// says so and links the results.
pub async fn control(
    Console(console): Console<Shared>,
    Found(record): Found,
    posted: Posted<ControlForm, Approver>,
) -> Result<Response, ConsoleError> {
    let id = record.id;
    let Approver(signed) = posted.signed;
    let Some(run) = runner::active(&console, &id).filter(|run| run.board.phase() != "finished") else {
        return Ok(to(if record.run.is_some() {
            format!("/campaigns/{id}/live?ended=1")
        } else {
            format!("/campaigns/{id}")
        }));
    };
    let detail = match posted.form.action.as_str() {
        "pause" => {
            run.control.pause();
            console.notify(
                crate::console::notify::NoticeKind::Paused,
                Some((&id, &record.name)),
                &signed.user.name,
                "",
            );
            String::new()
        }
        "resume" => {
            run.control.resume();
            String::new()
        }
        "stop" => {
            run.control.stop();
            String::new()
        }
        "rate" => {
            let rate: f64 = posted.form.rate.trim().parse().map_err(|_| {
                ConsoleError::invalid(
                    crate::word!(refuse_rate),
                    vec![("rate", format!("{:?}", posted.form.rate).into())],
                )
            })?;
            let rate = crate::campaign::check_rate(rate).map_err(ConsoleError::Invalid)?;
            run.control.adjust(Some(rate), None);
            format!("{rate} / s")
        }
        other => return Err(ConsoleError::Invalid(format!("unknown action {other:?}"))),
    };
    console
        .store
        .audit(&signed.user.name, &posted.form.action, Some(&id), &detail)?;
    Ok(to(format!("/campaigns/{id}/live")))
}
