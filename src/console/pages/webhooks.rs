//! The webhooks page (administrators): the endpoints other systems registered with their events and progress step, a form to add one (its secret shown once), and the delivery log with a redelivery of any message.

use super::filters;
use super::{render, to, Me};
use crate::console::auth::{Admin, Posted};
use crate::console::error::ConsoleError;
use crate::console::webhooks::{self, Delivery, Endpoint, EVENTS};
use crate::console::words::Words;
use crate::console::Shared;
use askama::Template;
use axum::extract::{Path, State as Console};
use axum::response::Response;
use serde::Deserialize;

#[derive(Template)]
#[template(path = "console/webhooks.html")]
struct WebhooksPage {
    w: &'static Words,
    me: Me,
    endpoints: Vec<Endpoint>,
    events: [&'static str; 9],
    log: Vec<Delivery>,
    /// A new endpoint's secret, shown this once.
    made: Option<(String, String)>,
}

fn page_of(
    console: &Shared,
    signed: &crate::console::auth::Signed,
    made: Option<(String, String)>,
) -> Result<Response, ConsoleError> {
    render(WebhooksPage {
        w: signed.words,
        me: Me::of(signed),
        endpoints: console.endpoints()?,
        events: EVENTS,
        log: console.webhook_log()?,
        made,
    })
}

pub async fn page(Console(console): Console<Shared>, Admin(signed): Admin) -> Result<Response, ConsoleError> {
    page_of(&console, &signed, None)
}

/// Adds an endpoint: HTTPS (plain HTTP only to this machine), at least one event, a progress
/// step of 1 to 100 %.
pub async fn add(
    Console(console): Console<Shared>,
    posted: Posted<Vec<(String, String)>, Admin>,
) -> Result<Response, ConsoleError> {
    let Admin(signed) = posted.signed;
    let field = |name: &str| {
        posted
            .form
            .iter()
            .find(|(key, _)| key == name)
            .map_or("", |(_, value)| value.trim())
    };
    let url = field("url").to_string();
    if !super::notifications::reachable_safely(&url) {
        return Err(ConsoleError::invalid(crate::word!(refuse_webhook_url), vec![]));
    }
    let events: Vec<String> = posted
        .form
        .iter()
        .filter(|(key, value)| key == "event" && EVENTS.contains(&value.as_str()))
        .map(|(_, value)| value.clone())
        .collect();
    if events.is_empty() {
        return Err(ConsoleError::invalid(crate::word!(refuse_webhook_events), vec![]));
    }
    let progress_every = match field("progress_every") {
        "" => 10,
        text => text
            .parse::<u8>()
            .ok()
            .filter(|every| (1..=100).contains(every))
            .ok_or_else(|| ConsoleError::invalid(crate::word!(refuse_webhook_progress), vec![]))?,
    };
    let endpoint = Endpoint {
        id: crate::console::auth::random_token()[..12].to_string(),
        url,
        secret: webhooks::new_secret(),
        events,
        progress_every,
        created_at: crate::console::campaigns::now_text(),
    };
    let mut endpoints = console.endpoints()?;
    endpoints.push(endpoint.clone());
    console.put_endpoints(&endpoints)?;
    console.store.audit(
        &signed.user.name,
        "webhook added",
        None,
        &format!("{} ({})", endpoint.url, endpoint.events.join(", ")),
    )?;
    page_of(&console, &signed, Some((endpoint.url, endpoint.secret)))
}

#[derive(Deserialize)]
pub struct Empty {}

pub async fn remove(
    Console(console): Console<Shared>,
    Path(id): Path<String>,
    posted: Posted<Empty, Admin>,
) -> Result<Response, ConsoleError> {
    let mut endpoints = console.endpoints()?;
    let removed: Vec<Endpoint> = endpoints.extract_if(.., |endpoint| endpoint.id == id).collect();
    let Some(endpoint) = removed.first() else {
        return Err(ConsoleError::NotFound);
    };
    console.put_endpoints(&endpoints)?;
    console
        .store
        .audit(&posted.signed.user.name, "webhook removed", None, &endpoint.url)?;
    Ok(to("/webhooks".into()))
}

/// Sends a logged message again, with its id (a receiver that had it drops it).
pub async fn redeliver(
    Console(console): Console<Shared>,
    Path((endpoint, message)): Path<(String, String)>,
    posted: Posted<Empty, Admin>,
) -> Result<Response, ConsoleError> {
    webhooks::redeliver(&console, &endpoint, &message)?;
    console
        .store
        .audit(&posted.signed.user.name, "webhook redelivered", None, &message)?;
    Ok(to("/webhooks".into()))
}
