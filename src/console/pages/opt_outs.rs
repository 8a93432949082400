//! The opt-out page: the workspace's list of numbers that refused advertising, shown masked, added to by typing or uploading (editor), taken from (approver), downloaded whole (editor), its cells safe for spreadsheets.

use super::flow::PageQuery;
use super::uploads;
use super::{render, to, Me};
use crate::console::auth::{Approver, Editor, Posted, Signed};
use crate::console::campaigns::CampaignRecord;
use crate::console::error::ConsoleError;
use crate::console::opt_outs;
use crate::console::store::Role;
use crate::console::words::Words;
use crate::console::Shared;
use askama::Template;
use axum::extract::{Multipart, Query, State as Console};
use axum::response::Response;
use serde::Deserialize;
use std::collections::BTreeSet;

const PER_PAGE: usize = 100;

#[derive(Template)]
#[template(path = "console/opt_outs.html")]
struct OptOutsPage {
    w: &'static Words,
    me: Me,
    count: usize,
    numbers: Vec<String>,
    page: usize,
    more: bool,
    can_add: bool,
    can_remove: bool,
}

pub async fn page(
    Console(console): Console<Shared>,
    signed: Signed,
    Query(query): Query<PageQuery>,
) -> Result<Response, ConsoleError> {
    let list = console.store.opt_outs()?;
    let numbers = list
        .iter()
        .skip(query.page.saturating_mul(PER_PAGE))
        .take(PER_PAGE)
        .map(|number| crate::phone::mask_phones(number).into_owned())
        .collect();
    render(OptOutsPage {
        w: signed.words,
        can_add: signed.can(Role::Editor),
        can_remove: signed.can(Role::Approver),
        me: Me::of(&signed),
        count: list.len(),
        more: list.len() > (query.page + 1).saturating_mul(PER_PAGE),
        numbers,
        page: query.page,
    })
}

#[derive(Deserialize)]
pub struct NumbersForm {
    #[serde(default)]
    pub(crate) numbers: String,
}

/// Reads typed numbers; a line that is not a mobile number refuses the whole form, named.
fn typed(text: &str) -> Result<BTreeSet<String>, ConsoleError> {
    let typed = opt_outs::read_typed(text);
    if !typed.refused.is_empty() {
        let shown: Vec<&str> = typed.refused.iter().take(10).map(String::as_str).collect();
        let more = if typed.refused.len() > shown.len() { ", …" } else { "" };
        return Err(ConsoleError::invalid(
            crate::word!(refuse_not_mobile),
            vec![
                ("n", typed.refused.len().to_string().into()),
                ("items", format!("{}{more}", shown.join(", ")).into()),
            ],
        ));
    }
    if typed.numbers.is_empty() {
        return Err(ConsoleError::invalid(crate::word!(refuse_no_number), vec![]));
    }
    Ok(typed.numbers)
}

pub async fn add(
    Console(console): Console<Shared>,
    posted: Posted<NumbersForm, Editor>,
) -> Result<Response, ConsoleError> {
    let numbers = typed(&posted.form.numbers)?;
    change(&console, &posted.signed.user.name, Change::Add(numbers), "typed").await
}

pub async fn remove(
    Console(console): Console<Shared>,
    posted: Posted<NumbersForm, Approver>,
) -> Result<Response, ConsoleError> {
    // Taking a number off lets advertising reach it again: an approver's decision.
    let numbers = typed(&posted.form.numbers)?;
    change(&console, &posted.signed.user.name, Change::Remove(numbers), "typed").await
}

pub async fn upload(
    Console(console): Console<Shared>,
    Editor(signed): Editor,
    form: Multipart,
) -> Result<Response, ConsoleError> {
    let mut upload = uploads::receive(&console, &signed, form, uploads::Sender::Page).await?;
    let received = upload
        .files
        .remove("list")
        .ok_or_else(|| ConsoleError::invalid(crate::word!(refuse_choose_file), vec![]))?;
    let original = received.original.clone();
    let dir = console.workspace.uploads_dir();
    let placed = uploads::place(
        &console,
        received,
        &dir,
        &format!("opt-outs-{}", crate::console::auth::random_token()),
    )?;
    let path = dir.join(&placed.stored);
    let read = {
        let (path, original) = (path.clone(), original.clone());
        tokio::task::spawn_blocking(move || opt_outs::read_file(&path, &original))
            .await
            .map_err(ConsoleError::internal)
    };
    let _ = std::fs::remove_file(&path);
    let numbers = read??;
    if numbers.is_empty() {
        return Err(ConsoleError::invalid(
            crate::word!(refuse_no_mobile_in_file),
            vec![("file", original.as_str().into())],
        ));
    }
    change(&console, &signed.user.name, Change::Add(numbers), &original).await
}

enum Change {
    Add(BTreeSet<String>),
    Remove(BTreeSet<String>),
}

/// Changes the list, gives every advertising campaign not yet started the new list, and logs it.
async fn change(console: &Shared, by: &str, change: Change, source: &str) -> Result<Response, ConsoleError> {
    let _transition = console.transitions.lock().await;
    let mut list: BTreeSet<String> = console.store.opt_outs()?.into_iter().collect();
    let before = list.len();
    let (action, given) = match change {
        Change::Add(numbers) => {
            let given = numbers.len();
            list.extend(numbers);
            ("opt-outs added", given)
        }
        Change::Remove(numbers) => {
            let given = numbers.len();
            list.retain(|number| !numbers.contains(number));
            ("opt-outs removed", given)
        }
    };
    let list: Vec<String> = list.into_iter().collect();
    console.store.put_opt_outs(&list)?;
    let mut records: Vec<CampaignRecord> = console.store.campaigns()?;
    let voided = opt_outs::spread(&console.workspace, &mut records, &list, by)?;
    for record in records.iter().filter(|record| voided.contains(&record.id)) {
        console.store.put_campaign(&record.id, record)?;
        console.store.audit(
            by,
            "voided",
            Some(&record.id),
            "the opt-out list changed since the check",
        )?;
    }
    console.store.audit(
        by,
        action,
        None,
        &format!(
            "{given} given ({source}); the list went from {before} to {}",
            list.len()
        ),
    )?;
    Ok(to("/opt-outs".into()))
}

pub async fn download(Console(console): Console<Shared>, Editor(signed): Editor) -> Result<Response, ConsoleError> {
    let list = console.store.opt_outs()?;
    console
        .store
        .audit(&signed.user.name, "downloaded", None, "opt-outs.csv")?;
    // The list holds normalised mobile numbers, which never look like formulas; marked all the
    // same, by the one rule of every CSV file people open in a spreadsheet.
    let marked: Vec<String> = list
        .iter()
        .map(|number| crate::files::spreadsheet_safe(number).into_owned())
        .collect();
    Ok(super::flow::attachment(
        "opt-outs.csv",
        "text/csv; charset=utf-8",
        opt_outs::snapshot_text(&marked),
    ))
}
