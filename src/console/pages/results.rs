//! After sending: resuming an interrupted run, the results with their downloads, and "retry failed" (the live page and its controls are in live.rs).

use super::filters;
use super::flow::{attachment, typed_amount, Empty};
use super::{render, to, Me};
use crate::console::auth::{Approver, Editor, Posted, Signed};
use crate::console::campaigns::{self, CampaignRecord, Found, State, StoredFile};
use crate::console::error::ConsoleError;
use crate::console::runner::{self, Launch};
use crate::console::store::Role;
use crate::console::words::Words;
use crate::console::workflow::{self, Applied, Step};
use crate::console::Shared;
use crate::retry::{Listed, Only};
use askama::Template;
use axum::extract::{Path, State as Console};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

#[derive(Deserialize)]
pub struct ResumeForm {
    #[serde(default)]
    pub(crate) resend_uncertain: String,
}

/// Resumes a run that ended with recipients left (interrupted, stopped, incomplete): only by an
/// approver, and sending the uncertain again only with their number typed.
pub async fn resume(
    Console(console): Console<Shared>,
    Found(record): Found,
    posted: Posted<ResumeForm, Approver>,
) -> Result<Response, ConsoleError> {
    let id = record.id.clone();
    let Approver(signed) = posted.signed;
    let by = &signed.user.name;
    let (resend_uncertain, record) = workflow::take(&console, &id, Step::Resume, by, async |record| {
        if crate::console::collecting::active(&console, &id).is_some() {
            return Err(ConsoleError::conflict(crate::word!(refuse_collecting_resume), vec![]));
        }
        let status = runner::status_when_free(&console.workspace.run_dir(&id)).await?;
        let resend_uncertain = match posted.form.resend_uncertain.trim() {
            "" => false,
            typed if typed_amount(typed) == Some(status.uncertain as i64) => true,
            typed => {
                return Err(ConsoleError::invalid(
                    crate::word!(refuse_uncertain_typed),
                    vec![
                        ("n", crate::text::count(status.uncertain).into()),
                        ("typed", format!("{typed:?}").into()),
                    ],
                ))
            }
        };
        if let Some(run) = &mut record.run {
            run.end = None;
            // The live board has the figures while it sends; the run's end records them again.
            run.figures = None;
        }
        let detail = if resend_uncertain {
            "sending the uncertain again"
        } else {
            "uncertain left as they are"
        };
        Ok(Applied::Changed {
            detail: detail.into(),
            then: resend_uncertain,
        })
    })
    .await?;
    runner::launch(&console, &record, Launch::Resume { resend_uncertain })?;
    Ok(to(format!("/campaigns/{id}/live")))
}

#[derive(Template)]
#[template(path = "console/results.html")]
struct ResultsPage {
    w: &'static Words,
    me: Me,
    c: CampaignRecord,
    summary: Option<SummaryFile>,
    /// The status codes the service answered, each with what it means in the page's language.
    statuses: Vec<(String, String, u64)>,
    /// rows = rejected + duplicates + suppressed + sent + uncertain + pending, in the page's words.
    equation: String,
    /// Each billing class in words, its count and its net charge.
    classes: Vec<(String, u64, i64)>,
    /// A gateway run's final results, each code with what it means.
    final_results: Vec<(String, String, u64)>,
    /// Recipients a gateway took and then did not deliver (`FAILED`, `GIVEUP`).
    undelivered: u64,
    files: Vec<&'static str>,
    can_retry: bool,
    charged: String,
    /// A gateway run: its results come later and are collected.
    gateway: bool,
    collecting: Option<crate::console::collecting::Progress>,
    can_collect: bool,
}

/// What the results page reads of summary.json (written by `report`).
#[derive(Deserialize)]
struct SummaryFile {
    status: crate::engine::Status,
    classes: std::collections::BTreeMap<String, ClassFile>,
    #[serde(default)]
    workbook_left_out: Option<String>,
    /// A gateway run's final results (`OK`, `FAILED`, `GIVEUP`; `GW_PENDING` not yet settled).
    #[serde(default)]
    final_results: std::collections::BTreeMap<String, u64>,
}

#[derive(Deserialize)]
struct ClassFile {
    charged: i64,
    refunded: i64,
    charged_count: u64,
}

/// The files a results page offers, as the run directory names them. report.csv and rejects.csv
/// are the files for people, their formula-like texts marked for spreadsheets; report.raw.csv
/// (every cell as it is, for programs) is offered by its name.
const DOWNLOADS: [(&str, &str); 7] = [
    ("report.csv", "text/csv; charset=utf-8"),
    (crate::report::RAW_CSV_FILE, "text/csv; charset=utf-8"),
    (
        "report.xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
    ("report.parquet", "application/vnd.apache.parquet"),
    ("rejects.csv", "text/csv; charset=utf-8"),
    ("summary.html", "text/html; charset=utf-8"),
    ("summary.json", "application/json"),
];

pub async fn results_page(
    Console(console): Console<Shared>,
    signed: Signed,
    Found(record): Found,
) -> Result<Response, ConsoleError> {
    let id = record.id.clone();
    let run_dir = console.workspace.run_dir(&id);
    let summary: Option<SummaryFile> = std::fs::read(run_dir.join("summary.json"))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    let files = DOWNLOADS
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| run_dir.join(name).exists())
        .collect();
    let lang = signed.words.report_lang();
    let labelled = |(code, count): (&String, &u64)| {
        let label = crate::report::status_label(code, lang).unwrap_or_default();
        (code.clone(), label.to_string(), *count)
    };
    let statuses = summary
        .iter()
        .flat_map(|summary| summary.status.statuses.iter())
        .map(labelled)
        .collect();
    let final_results = summary
        .iter()
        .flat_map(|summary| summary.final_results.iter())
        .map(|(code, count)| {
            let label = crate::report::final_result_label(code, lang).unwrap_or_default();
            (code.clone(), label.to_string(), *count)
        })
        .collect();
    let classes = summary
        .iter()
        .flat_map(|summary| summary.classes.iter())
        .map(|(class, sum)| {
            let named = crate::api::ledger::BillingClass::parse(class).map_or_else(
                || class.clone(),
                |known| crate::report::class_label(known, lang).to_string(),
            );
            (named, sum.charged_count, sum.charged - sum.refunded)
        })
        .collect();
    let equation = summary
        .as_ref()
        .map(|summary| crate::console::words::figures::status_equation(signed.words, &summary.status))
        .unwrap_or_default();
    let charged = summary
        .as_ref()
        .map(|summary| {
            super::won(
                summary
                    .classes
                    .values()
                    .map(|class| class.charged - class.refunded)
                    .sum(),
            )
        })
        .unwrap_or_else(|| "–".into());
    let undelivered = summary.as_ref().map_or(0, |summary| {
        use crate::api::gateway::final_result::{FAILED, GIVEUP};
        [FAILED, GIVEUP]
            .iter()
            .filter_map(|code| summary.final_results.get(*code))
            .sum()
    });
    render(ResultsPage {
        w: signed.words,
        // Only when the service did not take some: "retry failed" of nothing makes an empty draft.
        can_retry: signed.can(Role::Editor)
            && crate::console::runner::active(&console, &id).is_none()
            && summary.as_ref().is_some_and(|summary| summary.status.not_accepted > 0),
        gateway: record.kind == crate::campaign::Kind::GatewayAlimtalk.as_str(),
        collecting: crate::console::collecting::active(&console, &id).map(|collection| collection.progress()),
        can_collect: signed.can(Role::Approver) && crate::console::runner::active(&console, &id).is_none(),
        me: Me::of(&signed),
        c: record,
        summary,
        statuses,
        equation,
        classes,
        final_results,
        undelivered,
        files,
        charged,
    })
}

#[derive(Deserialize)]
pub struct CollectForm {
    #[serde(default)]
    action: String,
}

/// "Collect now" on a gateway run's results (the engine's `collect`), or stopping it.
pub async fn collect(
    Console(console): Console<Shared>,
    Found(record): Found,
    posted: Posted<CollectForm, Approver>,
) -> Result<Response, ConsoleError> {
    let id = record.id.clone();
    let Approver(signed) = posted.signed;
    if posted.form.action == "stop" {
        let collection = crate::console::collecting::active(&console, &id)
            .ok_or_else(|| ConsoleError::conflict(crate::word!(refuse_no_collection), vec![]))?;
        collection.control.stop();
        console
            .store
            .audit(&signed.user.name, "stopped collecting", Some(&id), "")?;
        return Ok(to(format!("/campaigns/{id}/results")));
    }
    if !record.state.has_run() || record.kind != crate::campaign::Kind::GatewayAlimtalk.as_str() {
        return Err(ConsoleError::Conflict(
            "only a gateway run that has sent has results to collect: on the standard deployment the send's answer is the final result".into(),
        ));
    }
    // Under the lock, so that a resume cannot slip between its check and this start.
    let _transition = console.transitions.lock().await;
    crate::console::collecting::start(&console, &id)?;
    console.store.audit(&signed.user.name, "collect", Some(&id), "")?;
    Ok(to(format!("/campaigns/{id}/results")))
}

/// A run's file, with a session only; the CSVs for people after a byte-order mark for Excel.
pub async fn download(
    Console(console): Console<Shared>,
    signed: Signed,
    Found(_): Found,
    Path((id, name)): Path<(String, String)>,
) -> Result<Response, ConsoleError> {
    let (name, content_type) = DOWNLOADS
        .iter()
        .find(|(known, _)| *known == name)
        .copied()
        .ok_or(ConsoleError::NotFound)?;
    let path = console.workspace.run_dir(&id).join(name);
    // The CSVs for people open in Korean Excel as they are: UTF-8 with its byte-order mark.
    // report.raw.csv, for programs, has none.
    let bom = matches!(name, "report.csv" | "rejects.csv");
    let response = if name == "summary.json" {
        // It records the campaign file's path, which is the server's: cut to its name, as on pages.
        let text = tokio::fs::read_to_string(&path)
            .await
            .map_err(|_| ConsoleError::NotFound)?;
        attachment(name, content_type, crate::console::error::without_server_paths(&text))
    } else {
        file_response(&path, name, content_type, bom).await?
    };
    console.store.audit(
        &signed.user.name,
        "downloaded",
        Some(&id),
        &format!("{name}{}", if bom { " (BOM)" } else { "" }),
    )?;
    Ok(response)
}

/// A file the console wrote, streamed: an HTML page shown in place (its styles are inline, so it
/// gets a policy of its own that still runs no script), anything else as an attachment.
pub async fn file_response(
    path: &std::path::Path,
    name: &str,
    content_type: &'static str,
    bom: bool,
) -> Result<Response, ConsoleError> {
    let file = tokio::fs::File::open(path).await.map_err(|_| ConsoleError::NotFound)?;
    let body = tokio_util_stream(file, bom);
    if name.ends_with(".html") {
        let mut response = ([(axum::http::header::CONTENT_TYPE, content_type)], body).into_response();
        response.headers_mut().insert(
            axum::http::header::CONTENT_SECURITY_POLICY,
            axum::http::HeaderValue::from_static(
                "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'",
            ),
        );
        response.headers_mut().insert(
            axum::http::header::X_FRAME_OPTIONS,
            axum::http::HeaderValue::from_static("SAMEORIGIN"),
        );
        return Ok(response);
    }
    Ok(attachment(name, content_type, body))
}

/// The recipients the service answered it did not take, as a list to send again elsewhere or to
/// look into (their phone, name and the columns the message used), for Korean Excel.
pub async fn not_accepted(
    Console(console): Console<Shared>,
    signed: Signed,
    Found(record): Found,
) -> Result<Response, ConsoleError> {
    recipient_list(
        &console,
        &signed,
        &record.id,
        Listed::Retry(Only::Failed),
        "not-accepted.csv",
    )
    .await
}

/// The recipients a gateway took and then did not deliver (`FAILED`, `GIVEUP` after a
/// collection), in the same form.
pub async fn not_delivered(
    Console(console): Console<Shared>,
    signed: Signed,
    Found(record): Found,
) -> Result<Response, ConsoleError> {
    recipient_list(&console, &signed, &record.id, Listed::Undelivered, "not-delivered.csv").await
}

/// A list of some of a run's recipients, written to a scratch file and streamed after a
/// byte-order mark (lists run to millions of rows); an empty list is a header, not an error.
async fn recipient_list(
    console: &Shared,
    signed: &Signed,
    id: &str,
    which: Listed,
    name: &'static str,
) -> Result<Response, ConsoleError> {
    if crate::console::runner::active(console, id).is_some()
        || crate::console::collecting::active(console, id).is_some()
    {
        return Err(ConsoleError::conflict(crate::word!(refuse_sending), vec![]));
    }
    let run_dir = console.workspace.run_dir(id);
    let scratch = console
        .workspace
        .uploads_dir()
        .join(format!("{name}-{}", crate::console::auth::random_token()));
    let path = scratch.clone();
    tokio::task::spawn_blocking(move || {
        crate::retry::write_list(&run_dir, which, crate::files::create_private(&path)?)
    })
    .await
    .map_err(ConsoleError::internal)?
    .inspect_err(|_| {
        let _ = std::fs::remove_file(&scratch);
    })?;
    // Open, then unlink: the stream keeps the file, and nothing is left behind.
    let response = file_response(&scratch, name, "text/csv; charset=utf-8", true).await;
    let _ = std::fs::remove_file(&scratch);
    console.store.audit(&signed.user.name, "downloaded", Some(id), name)?;
    response
}

/// The run's summary, shown inside the results page (viewing is not a download) in the viewer's
/// language: summary.html is in the report's, and the console writes the other beside it.
pub async fn summary(
    Console(console): Console<Shared>,
    signed: Signed,
    Found(record): Found,
) -> Result<Response, ConsoleError> {
    let run_dir = console.workspace.run_dir(&record.id);
    let in_language = run_dir.join(crate::console::runner::viewer_summary_name(signed.words.report_lang()));
    // None in the viewer's language: summary.html is in it (or the run was reported before the
    // console wrote the other).
    let path = if tokio::fs::try_exists(&in_language).await.unwrap_or(false) {
        in_language
    } else {
        run_dir.join("summary.html")
    };
    file_response(&path, "summary.html", "text/html; charset=utf-8", false).await
}

/// A file as a response body read a piece at a time (reports can be gigabytes).
fn tokio_util_stream(file: tokio::fs::File, bom: bool) -> axum::body::Body {
    use futures::StreamExt;
    let head = futures::stream::iter(bom.then(|| Ok::<_, std::io::Error>(bytes::Bytes::from_static(b"\xEF\xBB\xBF"))));
    let pieces = futures::stream::unfold(file, |mut file| async move {
        let mut buffer = vec![0u8; 256 * 1024];
        match tokio::io::AsyncReadExt::read(&mut file, &mut buffer).await {
            Ok(0) => None,
            Ok(read) => {
                buffer.truncate(read);
                Some((Ok(bytes::Bytes::from(buffer)), file))
            }
            Err(error) => Some((Err(error), file)),
        }
    });
    axum::body::Body::from_stream(head.chain(pieces))
}

/// "Retry failed": a new draft of the recipients the service answered it did not take.
pub async fn retry(
    Console(console): Console<Shared>,
    Found(record): Found,
    posted: Posted<Empty, Editor>,
) -> Result<Response, ConsoleError> {
    let id = record.id.clone();
    let Editor(signed) = posted.signed;
    if !record.state.has_run() || crate::console::runner::active(&console, &id).is_some() {
        return Err(ConsoleError::conflict(crate::word!(refuse_retry_needs_end), vec![]));
    }
    let new_id = campaigns::new_id();
    let new_dir = console.workspace.campaign_dir(&new_id);
    let run_dir = console.workspace.run_dir(&id);
    let out = new_dir.clone();
    let plan =
        tokio::task::spawn_blocking(move || crate::retry::plan(&run_dir, crate::retry::Only::Failed, Some(&out)))
            .await
            .map_err(ConsoleError::internal)??;
    if plan.recipients == 0 {
        let _ = std::fs::remove_dir_all(&new_dir);
        return Err(ConsoleError::conflict(crate::word!(refuse_nothing_to_retry), vec![]));
    }
    let recipients = StoredFile {
        stored: "recipients.csv".into(),
        original: format!("retry of {}", record.name),
        bytes: std::fs::metadata(&plan.recipients_file).map(|m| m.len()).unwrap_or(0),
    };
    let original = std::fs::read_to_string(console.workspace.campaign_file(&id)).map_err(ConsoleError::from_io)?;
    let text = crate::console::settings::for_retry(&original, &recipients)?;
    // The plan's own campaign file is the run's composed copy: replaced by the campaign's settings.
    let _ = std::fs::remove_file(&plan.campaign);
    crate::console::compose::compose_settings(&console.workspace, &new_id, &text)?;
    std::io::Write::write_all(
        &mut crate::files::create_private(&console.workspace.campaign_file(&new_id)).map_err(ConsoleError::from_io)?,
        text.as_bytes(),
    )
    .map_err(ConsoleError::from_io)?;
    let now = campaigns::now_text();
    let draft = CampaignRecord {
        id: new_id.clone(),
        name: format!("{} (retry)", record.name),
        kind: record.kind.clone(),
        state: State::Draft,
        author: signed.user.name.clone(),
        created_at: now.clone(),
        updated_at: now,
        updated_by: signed.user.name.clone(),
        recipients: Some(recipients),
        suppression: None,
        check: None,
        submitted_by: None,
        approval: None,
        run: None,
    };
    console.store.put_campaign(&new_id, &draft)?;
    console.store.audit(
        &signed.user.name,
        "retry failed",
        Some(&new_id),
        &format!("{} recipients of {}", plan.recipients, id),
    )?;
    Ok(to(format!("/campaigns/{new_id}")))
}
