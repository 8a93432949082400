//! The statement page: a month over the workspace's runs through the engine's `statement::write` (the same files as `msgbatch statement`), optionally compared with an uploaded ledger export; its files to download.

use super::uploads;
use super::{render, won, Me};
use crate::console::auth::{Editor, Signed};
use crate::console::campaigns::CampaignRecord;
use crate::console::error::ConsoleError;
use crate::console::store::Role;
use crate::console::words::Words;
use crate::console::Shared;
use crate::report::ClassSummary;
use crate::statement::{Month, Statement, StatementOptions};
use askama::Template;
use axum::extract::{Multipart, Path, Query, State as Console};
use axum::response::Response;
use serde::Deserialize;
use std::path::PathBuf;

/// The files a statement folder holds, and how they are served. The console writes its CSVs
/// without a byte-order mark and serves them with one for Korean Excel; `statement.raw.csv` is
/// statement.csv as written, for programs.
const FILES: [(&str, &str); 5] = [
    ("statement.csv", "text/csv; charset=utf-8"),
    (RAW_STATEMENT, "text/csv; charset=utf-8"),
    (
        "statement.xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
    ("statement.html", "text/html; charset=utf-8"),
    ("ledger-mismatches.csv", "text/csv; charset=utf-8"),
];

const RAW_STATEMENT: &str = "statement.raw.csv";

/// One line of a totals table.
pub struct TotalsLine {
    pub name: String,
    pub charged: String,
    pub charged_count: u64,
    pub refunded: String,
    pub net: String,
    pub unsettled: String,
}

impl TotalsLine {
    fn of(name: impl Into<String>, totals: &ClassSummary, w: &Words) -> TotalsLine {
        TotalsLine {
            name: name.into(),
            charged: won(totals.charged),
            charged_count: totals.charged_count,
            refunded: won(totals.refunded),
            net: won(totals.net()),
            unsettled: if totals.unsettled() {
                crate::console::words::fill(
                    w.statement_unsettled,
                    &[
                        ("provisional", &won(totals.provisional)),
                        ("disputed", &won(totals.disputed)),
                    ],
                )
            } else {
                String::new()
            },
        }
    }
}

/// One run of the month as the page lists it.
pub struct RunLine {
    pub id: String,
    pub campaign: String,
    pub sends: u64,
    pub incomplete: bool,
}

/// What the page shows of a statement.
pub struct Made {
    pub classes: Vec<TotalsLine>,
    pub campaigns: Vec<TotalsLine>,
    pub days: Vec<TotalsLine>,
    pub runs: Vec<RunLine>,
    /// `(balanced, mismatches, entries)` when a ledger was compared.
    pub ledger: Option<(bool, usize, u64)>,
    pub files: Vec<String>,
}

#[derive(Template)]
#[template(path = "console/statement.html")]
struct StatementPage {
    w: &'static Words,
    me: Me,
    month: String,
    made: Option<Made>,
    sending: Vec<String>,
    can_upload: bool,
}

#[derive(Deserialize)]
pub struct MonthQuery {
    #[serde(default)]
    month: String,
}

fn this_month() -> Month {
    Month::of(
        chrono::Utc::now()
            .with_timezone(&crate::campaign::quiet::kst())
            .date_naive(),
    )
}

fn month_of(text: &str) -> Result<Month, ConsoleError> {
    match text.trim() {
        "" => Ok(this_month()),
        text => Month::parse(text).map_err(ConsoleError::Invalid),
    }
}

/// The form; with `?month=`, that month's statement (its files written again from the runs).
pub async fn page(
    Console(console): Console<Shared>,
    signed: Signed,
    Query(query): Query<MonthQuery>,
) -> Result<Response, ConsoleError> {
    // Without `?month=`, the month now (Korean time): the page opens on its statement.
    let month = month_of(&query.month)?;
    let made = make(&console, month, None, signed.words).await?;
    console
        .store
        .audit(&signed.user.name, "statement", None, &month.to_string())?;
    show(signed, month, (Some(made.0), made.1))
}

/// The statement of a month compared with an uploaded ledger export (an upload: editor).
pub async fn compare(
    Console(console): Console<Shared>,
    Editor(signed): Editor,
    form: Multipart,
) -> Result<Response, ConsoleError> {
    let mut upload = uploads::receive(&console, &signed, form, uploads::Sender::Page).await?;
    let month = month_of(upload.field("month"))?;
    let received = upload
        .files
        .remove("ledger")
        .ok_or_else(|| ConsoleError::invalid(crate::word!(refuse_choose_ledger), vec![]))?;
    let original = received.original.clone();
    // A ledger export is JSON read whole by the engine; the received file is read in place and
    // removed when `received` is dropped. Messages name the file as the person called it.
    let temporary = received.temporary.display().to_string();
    let made = make(&console, month, Some(received.temporary.clone()), signed.words)
        .await
        .map_err(|error| match error {
            ConsoleError::Invalid(text) => ConsoleError::Invalid(text.replace(&temporary, &original)),
            other => other,
        })?;
    drop(received);
    console.store.audit(
        &signed.user.name,
        "statement",
        None,
        &format!("{month} with ledger {original}"),
    )?;
    show(signed, month, (Some(made.0), made.1))
}

fn show(signed: Signed, month: Month, (made, sending): (Option<Made>, Vec<String>)) -> Result<Response, ConsoleError> {
    render(StatementPage {
        w: signed.words,
        can_upload: signed.can(Role::Editor),
        me: Me::of(&signed),
        month: month.to_string(),
        made,
        sending,
    })
}

/// Runs the engine's statement over every run of the workspace that is not sending now; answers
/// what the page shows and the names of the campaigns left out because they still send.
pub(crate) async fn make(
    console: &Shared,
    month: Month,
    ledger: Option<PathBuf>,
    w: &Words,
) -> Result<(Made, Vec<String>), ConsoleError> {
    let records: Vec<CampaignRecord> = console.store.campaigns()?;
    let mut run_dirs = Vec::new();
    let mut ids = Vec::new();
    let mut sending = Vec::new();
    for record in records.iter().filter(|record| record.state.has_run()) {
        let run_dir = console.workspace.run_dir(&record.id);
        if !crate::engine::checkpoint_dir(&run_dir).exists() {
            continue;
        }
        if crate::console::runner::active(console, &record.id).is_some() {
            sending.push(record.name.clone());
            continue;
        }
        run_dirs.push(run_dir);
        ids.push(record.id.clone());
    }
    let out = console.workspace.statement_dir(&month.to_string());
    crate::files::create_private_dir(&out).map_err(ConsoleError::from_io)?;
    let options = StatementOptions {
        month: Some(month),
        out: Some(out),
        ledger,
        // Written for programs; served for people with the byte-order mark (`download`).
        csv_bom: false,
    };
    let statement = tokio::task::spawn_blocking(move || crate::statement::write(&run_dirs, &options))
        .await
        .map_err(ConsoleError::internal)?
        .map_err(ConsoleError::from)?;
    Ok((made(&statement, &ids, w), sending))
}

fn made(statement: &Statement, ids: &[String], w: &Words) -> Made {
    let lang = w.report_lang();
    let mut classes: Vec<TotalsLine> = statement
        .classes
        .iter()
        .map(|(class, totals)| TotalsLine::of(crate::report::class_label(*class, lang), totals, w))
        .collect();
    classes.push(TotalsLine::of(w.statement_total, &statement.total, w));
    Made {
        classes,
        campaigns: statement
            .campaigns
            .iter()
            .map(|(name, totals)| TotalsLine::of(name.clone(), totals, w))
            .collect(),
        days: statement
            .days
            .iter()
            .map(|(day, totals)| TotalsLine::of(day.clone(), totals, w))
            .collect(),
        runs: statement
            .runs
            .iter()
            .zip(ids)
            .filter(|(run, _)| run.sends_in_month > 0)
            .map(|(run, id)| RunLine {
                id: id.clone(),
                campaign: run.campaign.clone(),
                sends: run.sends_in_month,
                incomplete: !run.status.complete,
            })
            .collect(),
        ledger: statement
            .ledger
            .as_ref()
            .map(|ledger| (ledger.balanced, ledger.mismatches.len(), ledger.entries)),
        files: statement
            .files
            .iter()
            .filter_map(|file| file.file_name().map(|name| name.to_string_lossy().into_owned()))
            .flat_map(|name| {
                // The CSV for programs, by name, beside the one for people.
                let raw = (name == "statement.csv").then(|| RAW_STATEMENT.to_string());
                std::iter::once(name).chain(raw)
            })
            .collect(),
    }
}

/// A file of a month's statement, with a session.
pub async fn download(
    Console(console): Console<Shared>,
    signed: Signed,
    Path((month, name)): Path<(String, String)>,
) -> Result<Response, ConsoleError> {
    let month = Month::parse(&month).map_err(|_| ConsoleError::NotFound)?;
    let (name, content_type) = FILES
        .iter()
        .find(|(known, _)| *known == name)
        .copied()
        .ok_or(ConsoleError::NotFound)?;
    let written = if name == RAW_STATEMENT { "statement.csv" } else { name };
    let path = console.workspace.statement_dir(&month.to_string()).join(written);
    let bom = name != RAW_STATEMENT && name.ends_with(".csv");
    let response = super::results::file_response(&path, name, content_type, bom).await?;
    console
        .store
        .audit(&signed.user.name, "downloaded", None, &format!("{month} {name}"))?;
    Ok(response)
}
