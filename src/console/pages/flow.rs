//! The way to sending: check (what `validate` finds), test send, submit, approve (not one's own), and start with the estimate typed out; each step re-reads the files' fingerprint, so a change since voids it.

use super::filters;
use super::{render, to, Me};
use crate::console::auth::{Approver, Editor, Posted, Signed};
use crate::console::campaigns::{self, Approval, CampaignRecord, CheckRecord, Found, State};
use crate::console::check::{self, RejectLine};
use crate::console::error::ConsoleError;
use crate::console::phone_view::{self, Phone};
use crate::console::runner::{self, Launch};
use crate::console::store::Role;
use crate::console::words::Words;
use crate::console::workflow::{self, Applied, Step};
use crate::console::Shared;
use crate::engine::test_send::{TestMessage, TestSendOptions};
use askama::Template;
use axum::extract::{Query, State as Console};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

#[derive(Deserialize)]
pub struct Empty {}

#[derive(Template)]
#[template(path = "console/check.html")]
struct CheckPage {
    w: &'static Words,
    me: Me,
    c: CampaignRecord,
    check: Option<CheckRecord>,
    current: bool,
    header: Vec<String>,
    rejects: Vec<RejectLine>,
    page: usize,
    more: bool,
    estimate: String,
    worst_case: String,
    budget: String,
    over_budget: bool,
    can_edit: bool,
    /// rows = valid + rejected + duplicates + suppressed, in the page's words.
    accounting: String,
    /// Valid rows per lane, chunks per lane and rejected rows per reason, named in the page's language.
    lanes: Vec<(String, u64)>,
    chunks: Vec<(String, u64)>,
    reasons: Vec<(String, u64)>,
    /// The check's chosen messages as a phone shows them.
    phones: Vec<Phone>,
}

#[derive(Deserialize)]
pub struct PageQuery {
    #[serde(default)]
    pub page: usize,
}

pub async fn check_page(
    Console(console): Console<Shared>,
    signed: Signed,
    Found(record): Found,
    Query(query): Query<PageQuery>,
) -> Result<Response, ConsoleError> {
    let id = record.id.clone();
    let (header, rejects, more) = check::rejects_page(&check::rejects_path(&console.workspace, &id), query.page)?;
    let current = match &record.check {
        Some(check) => {
            crate::console::compose::fingerprint_now(&console.workspace, &record).await? == check.fingerprint
        }
        None => false,
    };
    let check = record.check.clone();
    let estimate = check.as_ref().and_then(|check| check.estimate);
    let budget = check.as_ref().and_then(|check| check.budget);
    let w = signed.words;
    let lang = w.report_lang();
    let (header, rejects) = check::rejects_in_words(header, rejects, w);
    let scan = check.as_ref().and_then(|check| check.scan.as_ref());
    let lanes = scan.map_or_else(Vec::new, |scan| {
        scan.per_lane
            .iter()
            .map(|(lane, count)| (crate::report::lane_label(*lane, lang).to_string(), *count))
            .collect()
    });
    let reasons = scan.map_or_else(Vec::new, |scan| {
        scan.rejected_by_reason
            .iter()
            .map(|(reason, count)| (check::reason_words(reason, lang), *count))
            .collect()
    });
    let chunks = check.as_ref().map_or_else(Vec::new, |check| {
        check
            .chunks
            .iter()
            .map(|(lane, count)| (check::lane_words(lane, lang), *count))
            .collect()
    });
    let accounting = scan.map(|scan| {
        crate::console::words::figures::accounting_line(w, crate::console::words::figures::scan_figures(scan))
    });
    let sender = crate::console::compose::load(&console.workspace, &id)
        .map(|campaign| phone_view::sender(&campaign, w))
        .unwrap_or_default();
    let phones = check.as_ref().map_or_else(Vec::new, |check| {
        check::previews_of(&console.workspace, &id, check)
            .iter()
            .map(|preview| Phone::of(preview, &sender, w))
            .collect()
    });
    render(CheckPage {
        phones,
        accounting: accounting.unwrap_or_default(),
        lanes,
        reasons,
        chunks,
        w: signed.words,
        can_edit: signed.can(Role::Editor),
        me: Me::of(&signed),
        estimate: super::won_opt(estimate),
        worst_case: super::won_opt(check.as_ref().and_then(|check| check.worst_case)),
        budget: super::won_opt(budget),
        over_budget: check.as_ref().is_some_and(|check| check.budget_refusal().is_some()),
        check,
        current,
        c: record,
        header,
        rejects,
        page: query.page,
        more,
    })
}

/// Runs the check (the engine's `validate`, with previews) and keeps what it found.
pub async fn run_check(
    Console(console): Console<Shared>,
    Found(record): Found,
    posted: Posted<Empty, Editor>,
) -> Result<Response, ConsoleError> {
    let id = record.id.clone();
    let Editor(signed) = posted.signed;
    Step::Check.allowed(&record)?;
    let workspace = console.workspace.clone();
    let by = signed.user.name.clone();
    let opt_outs = console.store.opt_outs()?;
    let cap = crate::console::frequency::rule(&console.store)?;
    let found = tokio::task::spawn_blocking(move || check::check(&workspace, &record, &by, &opt_outs, cap))
        .await
        .map_err(ConsoleError::internal)??;
    // Taken again under the lock: the campaign may have been started while it was checked.
    workflow::take(&console, &id, Step::Check, &signed.user.name, async |record| {
        let summary = match (&found.refusal, &found.scan) {
            (Some(refusal), _) => format!("refused: {refusal}"),
            (None, Some(scan)) => crate::console::words::figures::accounting_line(
                &crate::console::words::EN,
                crate::console::words::figures::scan_figures(scan),
            ),
            _ => String::new(),
        };
        record.state = if found.passed() { State::Checked } else { State::Draft };
        record.approval = None;
        record.submitted_by = None;
        record.check = Some(found);
        Ok(Applied::Changed {
            detail: summary,
            then: (),
        })
    })
    .await?;
    Ok(to(format!("/campaigns/{id}/check")))
}

pub async fn rejects_download(
    Console(console): Console<Shared>,
    signed: Signed,
    Found(record): Found,
) -> Result<Response, ConsoleError> {
    let id = record.id;
    let bytes = tokio::fs::read(check::rejects_path(&console.workspace, &id))
        .await
        .map_err(|_| ConsoleError::NotFound)?;
    console
        .store
        .audit(&signed.user.name, "downloaded", Some(&id), "rejects.csv (check)")?;
    // For people, in Korean Excel: UTF-8 with its byte-order mark, as the results' downloads.
    let mut body = crate::report::UTF8_BOM.to_vec();
    body.extend_from_slice(&bytes);
    Ok(attachment("rejects.csv", "text/csv; charset=utf-8", body))
}

pub fn attachment(name: &str, content_type: &'static str, body: impl axum::response::IntoResponse) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type.to_string()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")),
        ],
        body,
    )
        .into_response()
}

#[derive(Deserialize)]
pub struct TestForm {
    #[serde(default)]
    numbers: String,
}

#[derive(Template)]
#[template(path = "console/test_send.html")]
struct TestPage {
    w: &'static Words,
    me: Me,
    c: CampaignRecord,
    sent: Vec<TestView>,
}

/// One message of a test send: as a phone shows it, and what the service answered each number.
struct TestView {
    phone: Phone,
    answers: Vec<TestAnswerView>,
}

struct TestAnswerView {
    to: String,
    /// Answered, uncertain or not sent, in the page's words.
    outcome: &'static str,
    /// The service's code and its label in the page's language.
    status: Option<(String, String)>,
    accepted: bool,
    error: Option<String>,
}

impl TestView {
    fn of(message: TestMessage, sender: &str, w: &'static Words) -> TestView {
        let lang = w.report_lang();
        TestView {
            phone: Phone::of(&crate::console::check::preview_view(message.preview), sender, w),
            answers: message
                .answers
                .into_iter()
                .map(|answer| TestAnswerView {
                    to: answer.to,
                    outcome: match answer.outcome {
                        "answered" => w.test_answered,
                        "uncertain" => w.uncertain,
                        _ => w.test_not_sent,
                    },
                    status: answer.status.map(|code| {
                        let label = crate::report::status_label(&code, lang).unwrap_or_default().to_string();
                        (code, label)
                    }),
                    accepted: answer.accepted,
                    error: answer.error,
                })
                .collect(),
        }
    }
}

/// Sends the check's chosen messages to a few numbers, through the engine's test send.
pub async fn test_send(
    Console(console): Console<Shared>,
    Found(record): Found,
    posted: Posted<TestForm, Editor>,
) -> Result<Response, ConsoleError> {
    let Editor(signed) = posted.signed;
    let numbers: Vec<String> = posted
        .form
        .numbers
        .split([',', '\n', ';'])
        .map(str::trim)
        .filter(|number| !number.is_empty())
        .map(str::to_string)
        .collect();
    let (sent, campaign) = send_test(&console, &record.id, &signed, numbers).await?;
    let sender = phone_view::sender(&campaign, signed.words);
    render(TestPage {
        w: signed.words,
        me: Me::of(&signed),
        c: record,
        sent: sent
            .messages
            .into_iter()
            .map(|message| TestView::of(message, &sender, signed.words))
            .collect(),
    })
}

/// Sends the check's chosen messages to a few numbers (the page's form or the API's), audited.
pub(crate) async fn send_test(
    console: &Shared,
    id: &str,
    signed: &Signed,
    numbers: Vec<String>,
) -> Result<(crate::engine::test_send::TestSend, crate::campaign::Campaign), ConsoleError> {
    let campaign = crate::console::compose::load(&console.workspace, id)?;
    let options = TestSendOptions {
        to: numbers,
        rows: None,
        out: Some(
            console
                .workspace
                .tests_dir()
                .join(format!("{id}-{}", chrono::Utc::now().format("%Y%m%d-%H%M%S%3f"))),
        ),
    };
    let sent = crate::engine::test_send::send_test(
        &campaign,
        &options,
        &crate::engine::Control::new(),
        std::sync::Arc::new(crate::engine::events::Ignore),
    )
    .await?;
    let answers: Vec<String> = sent
        .messages
        .iter()
        .flat_map(|message| message.answers.iter())
        .map(|answer| format!("{} {}", answer.to, answer.status.as_deref().unwrap_or(answer.outcome)))
        .collect();
    console
        .store
        .audit(&signed.user.name, "test send", Some(id), &answers.join(", "))?;
    Ok((sent, campaign))
}

/// The check must be of the files as they are now; otherwise the campaign goes back to draft.
async fn still_current(console: &Shared, record: &mut CampaignRecord, by: &str) -> Result<String, ConsoleError> {
    let now = crate::console::compose::fingerprint_now(&console.workspace, record).await?;
    current_as(console, record, by, now)
}

/// [`still_current`] with the fingerprint of the files now already taken.
fn current_as(console: &Shared, record: &mut CampaignRecord, by: &str, now: String) -> Result<String, ConsoleError> {
    let checked = record.check.as_ref().map(|check| check.fingerprint.clone());
    if checked.as_deref() != Some(now.as_str()) {
        record.void_check(by);
        console.store.put_campaign(&record.id, record)?;
        console
            .store
            .audit(by, "voided", Some(&record.id), "the files changed since the check")?;
        return Err(ConsoleError::conflict(crate::word!(refuse_files_changed), vec![]));
    }
    Ok(now)
}

pub async fn submit(
    Console(console): Console<Shared>,
    Found(record): Found,
    posted: Posted<Empty, Editor>,
) -> Result<Response, ConsoleError> {
    let id = record.id.clone();
    let Editor(signed) = posted.signed;
    let by = &signed.user.name;
    workflow::take(&console, &id, Step::Submit, by, async |record| {
        still_current(&console, record, by).await?;
        record.submitted_by = Some(by.clone());
        Ok(Applied::Changed {
            detail: String::new(),
            then: (),
        })
    })
    .await?;
    Ok(to(format!("/campaigns/{id}")))
}

#[derive(Deserialize)]
pub struct ApproveForm {
    /// The approver's acknowledgement that an advertising campaign does not enforce quiet hours.
    #[serde(default)]
    pub(crate) quiet_hours_ack: String,
}

pub async fn approve(
    Console(console): Console<Shared>,
    Found(record): Found,
    posted: Posted<ApproveForm, Approver>,
) -> Result<Response, ConsoleError> {
    let id = record.id.clone();
    let Approver(signed) = posted.signed;
    let by = &signed.user.name;
    let approved = workflow::take(&console, &id, Step::Approve, by, async |record| {
        if console.two_person && record.is_own(by) {
            return Err(ConsoleError::forbidden(crate::word!(refuse_own_approval), vec![]));
        }
        // The month's limit binds every run: approving what cannot fit in it is refused.
        console
            .months
            .refuse_over_left(record.check.as_ref().and_then(|check| check.estimate))?;
        // What the approver approves, kept apart from the record (a change voids the approval,
        // and the next approver is shown what changed since); its fingerprint of the files is the
        // one the approval binds, each file read once.
        let at = campaigns::now_text();
        let snapshot = {
            let (workspace, record, by, at) = (console.workspace.clone(), record.clone(), by.clone(), at.clone());
            tokio::task::spawn_blocking(move || {
                let campaign = crate::console::compose::load(&workspace, &record.id)?;
                crate::console::approval::snapshot(&workspace, &record, &campaign, &by, &at)
            })
            .await
            .map_err(ConsoleError::internal)??
        };
        let fingerprint = current_as(&console, record, by, snapshot.fingerprint.clone())?;
        let relaxed = record
            .check
            .as_ref()
            .and_then(|check| check.quiet_hours_relaxed.clone());
        if let Some(mode) = &relaxed {
            if posted.form.quiet_hours_ack != "on" {
                return Err(ConsoleError::Invalid(format!(
                    "{} (quiet_hours = \"{mode}\"): {}",
                    signed.words.quiet_hours_relaxed, signed.words.quiet_hours_ack
                )));
            }
        }
        let estimate = record.check.as_ref().and_then(|check| check.estimate);
        record.approval = Some(Approval {
            by: by.clone(),
            at,
            fingerprint,
            estimate,
        });
        let detail = match relaxed {
            Some(mode) => format!(
                "{}; quiet_hours = \"{mode}\" acknowledged on an advertising campaign",
                super::won_opt(estimate)
            ),
            None => super::won_opt(estimate),
        };
        Ok(Applied::Changed { detail, then: snapshot })
    })
    .await?;
    // Written once the approval is: a snapshot never claims an approval that was not saved.
    console.store.put_approved_snapshot(&id, &approved.0)?;
    Ok(to(format!("/campaigns/{id}")))
}

#[derive(Deserialize)]
pub struct StartForm {
    #[serde(default)]
    pub(crate) amount: String,
    #[serde(default)]
    pub(crate) start_at: String,
}

/// The typed amount, read as the CLI reads `--budget`: `1,234`, `₩1,234` and `1234` are the same.
pub use crate::engine::rules::typed_amount;

pub async fn start(
    Console(console): Console<Shared>,
    Found(record): Found,
    posted: Posted<StartForm, Approver>,
) -> Result<Response, ConsoleError> {
    let id = record.id.clone();
    Ok(match start_campaign(&console, &id, posted).await? {
        Started::Now | Started::Scheduled => to(format!("/campaigns/{id}/live")),
        Started::QuietHours => to(format!("/campaigns/{id}?refused=quiet_hours")),
    })
}

/// What a start came to.
pub(crate) enum Started {
    Now,
    Scheduled,
    /// Advertising under `enforce` inside quiet hours: nothing started; the campaign's page offers
    /// the end of quiet hours as a scheduled start.
    QuietHours,
}

/// Starts an approved campaign (the page's form or the API's): the files unchanged since the
/// approval, the amount typed, the month's limit and quiet hours kept.
pub(crate) async fn start_campaign(
    console: &Shared,
    id: &str,
    posted: Posted<StartForm, Approver>,
) -> Result<Started, ConsoleError> {
    let id = id.to_string();
    let Approver(signed) = posted.signed;
    // Read and checked as `run --start-at` reads and checks it: Asia/Seoul wall time or an offset.
    let start_at = match posted.form.start_at.trim() {
        "" => None,
        text => Some(
            crate::engine::schedule::parse_start_at(text)
                .and_then(crate::engine::schedule::check_start)
                .map_err(ConsoleError::Invalid)?,
        ),
    };
    let by = &signed.user.name;
    let (started, record) = workflow::take(console, &id, Step::Start, by, async |record| {
        let fingerprint = still_current(console, record, by).await?;
        let approval = record
            .approval
            .clone()
            .ok_or_else(|| ConsoleError::conflict(crate::word!(refuse_no_approval), vec![]))?;
        if approval.fingerprint != fingerprint {
            record.void_check(by);
            console.store.put_campaign(&id, record)?;
            return Err(ConsoleError::conflict(
                crate::word!(refuse_changed_since_approval),
                vec![],
            ));
        }
        // Without prices there is no amount: the number of recipients is typed instead.
        let (expected, expected_word) = match approval.estimate {
            Some(estimate) => (estimate, crate::word!(refuse_amount)),
            None => {
                let valid = record
                    .check
                    .as_ref()
                    .and_then(|check| check.scan.as_ref())
                    .map_or(0, |scan| scan.valid);
                (valid as i64, crate::word!(refuse_recipients_typed))
            }
        };
        if typed_amount(&posted.form.amount) != Some(expected) {
            let expected_text = match approval.estimate {
                Some(estimate) => super::won(estimate),
                None => crate::text::count(expected as u64),
            };
            return Err(ConsoleError::invalid(
                expected_word,
                vec![
                    ("expected", expected_text.into()),
                    ("typed", format!("{:?}", posted.form.amount).into()),
                ],
            ));
        }
        console.months.refuse_over_left(approval.estimate)?;
        // Advertising under `enforce` does not start now inside quiet hours: the campaign's page
        // says until when, and offers that time as a scheduled start.
        if start_at.is_none() {
            let campaign = crate::console::compose::load(&console.workspace, &id)?;
            if check::enforced_quiet_hours_end(&campaign).is_some() {
                return Ok(Applied::Unchanged(false));
            }
        }
        record.run = Some(runner::run_record(by, start_at.as_ref()));
        // On disk before the run starts: a console killed from here on shows it `interrupted`.
        let detail = match &start_at {
            Some(at) => format!("scheduled for {}", at.to_rfc3339()),
            None => super::won_opt(approval.estimate),
        };
        Ok(Applied::Changed { detail, then: true })
    })
    .await?;
    if !started {
        return Ok(Started::QuietHours);
    }
    let scheduled = start_at.is_some();
    runner::launch(console, &record, Launch::Start { start_at })?;
    Ok(if scheduled { Started::Scheduled } else { Started::Now })
}

#[cfg(test)]
mod tests {
    use super::typed_amount;

    #[test]
    fn an_amount_is_read_as_people_type_it() {
        assert_eq!(typed_amount("₩1,234"), Some(1234));
        assert_eq!(typed_amount("1234원"), Some(1234));
        assert_eq!(typed_amount("1 234"), Some(1234));
        assert_eq!(typed_amount("12x"), None);
        assert_eq!(typed_amount(""), None);
    }
}
