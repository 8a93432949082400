//! The Connections page (admins): the workspace's connections as the file holds them, what each sends to and which campaigns use it; a save is checked whole, audited, and voids the approvals it invalidates.

use super::{render, Me};
use crate::console::auth::{Admin, Posted, Signed};
use crate::console::campaigns::CampaignRecord;
use crate::console::connections;
use crate::console::error::ConsoleError;
use crate::console::words::Words;
use crate::console::Shared;
use askama::Template;
use axum::extract::State as Console;
use axum::response::Response;
use serde::Deserialize;

/// One connection as the page lists it (no key: only where it comes from).
pub struct ConnectionView {
    pub name: String,
    pub endpoint: String,
    pub prices: String,
    pub used_by: Vec<(String, String)>,
}

#[derive(Template)]
#[template(path = "console/connections.html")]
struct ConnectionsPage {
    w: &'static Words,
    me: Me,
    text: String,
    connections: Vec<ConnectionView>,
    notice: String,
    error: String,
}

pub async fn page(Console(console): Console<Shared>, Admin(signed): Admin) -> Result<Response, ConsoleError> {
    let text = connections::text(&console.workspace)?;
    show(&console, signed, text, String::new(), String::new())
}

fn show(
    console: &Shared,
    signed: Signed,
    text: String,
    notice: String,
    error: String,
) -> Result<Response, ConsoleError> {
    let found = connections::load(&console.workspace).unwrap_or_default();
    // Each campaign not yet started, with the connection its settings name (read once each).
    let records: Vec<(CampaignRecord, Option<String>)> = console
        .store
        .campaigns::<CampaignRecord>()?
        .into_iter()
        .filter(|record| record.state.editable())
        .map(|record| {
            let named = connections::named_by(&console.workspace, &record.id);
            (record, named)
        })
        .collect();
    let views = found
        .iter()
        .map(|(name, connection)| ConnectionView {
            name: name.clone(),
            endpoint: connection.describe(),
            prices: connection
                .prices
                .iter()
                .flatten()
                .map(|(class, price)| format!("{class} {}", super::won(*price)))
                .collect::<Vec<_>>()
                .join(", "),
            used_by: records
                .iter()
                .filter(|(_, named)| named.as_deref() == Some(name.as_str()))
                .map(|(record, _)| (record.id.clone(), record.name.clone()))
                .collect(),
        })
        .collect();
    render(ConnectionsPage {
        w: signed.words,
        me: Me::of(&signed),
        text,
        connections: views,
        notice,
        error,
    })
}

#[derive(Deserialize)]
pub struct ConnectionsForm {
    #[serde(default)]
    text: String,
}

/// An admin's save: refused whole (the page shows the text as typed, with why) or written,
/// audited, and every campaign whose connection changed sent back to draft.
pub async fn save(
    Console(console): Console<Shared>,
    posted: Posted<ConnectionsForm, Admin>,
) -> Result<Response, ConsoleError> {
    let Posted {
        signed: Admin(signed),
        form,
    } = posted;
    let _transition = console.transitions.lock().await;
    match connections::save(&console.workspace, &console.store, &form.text, &signed.user.name) {
        Ok(voided) => {
            let notice = format!("saved; back to draft: {}", voided.len());
            show(&console, signed, form.text, notice, String::new())
        }
        Err(ConsoleError::Invalid(why)) => show(&console, signed, form.text, String::new(), why),
        Err(error) => Err(error),
    }
}
