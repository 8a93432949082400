//! The check page's findings: `msgbatch validate` with previews, through the engine's own function, kept with the fingerprint of what it read; and the rejected rows, a page at a time.

use super::campaigns::{CampaignRecord, CheckRecord, PreviewView, Workspace};
use super::error::ConsoleError;
use crate::campaign::quiet::QuietWindow;
use crate::engine::{self, events::Ignore};
use crate::preview::{MessagePreview, Previews};
use std::path::{Path, PathBuf};

/// Messages shown per lane, besides the longest.
const PREVIEWS_PER_LANE: usize = 2;
pub const REJECTS_PER_PAGE: usize = 50;

pub fn rejects_path(workspace: &Workspace, id: &str) -> PathBuf {
    workspace.campaign_dir(id).join("rejects.csv")
}

/// Checks a campaign's files as `validate --preview` does. A file refused as a whole is a
/// finding, not an error: the page names it.
pub fn check(
    workspace: &Workspace,
    record: &CampaignRecord,
    by: &str,
    opt_outs: &[String],
    cap: Option<crate::plan::capped::CapRule>,
) -> Result<CheckRecord, ConsoleError> {
    let started = std::time::Instant::now();
    let record_id = record.id.clone();
    let loaded = super::compose::load(workspace, &record.id)?;
    super::opt_outs::place(workspace, &record.id, &loaded, opt_outs)?;
    super::frequency::place(workspace, &record.id, &loaded, cap)?;
    // Loaded again: placing the opt-out list and the cap's list may have changed the settings.
    let campaign = super::compose::load(workspace, &record.id)?;
    let fingerprint = super::compose::fingerprint_of(&campaign)?;
    let rejects = rejects_path(workspace, &record.id);
    let mut previews = Previews::new(&campaign, PREVIEWS_PER_LANE);
    let found = if record.recipients.is_none() {
        Err("no recipients file yet: upload one on the edit page".to_string())
    } else {
        engine::validate_with(&campaign, &rejects, &Ignore, Some(&mut |row| previews.see(row))).map_err(|error| {
            let text: Vec<String> = error.chain().map(|cause| cause.to_string()).collect();
            super::error::without_server_paths(&crate::phone::mask_phones(&text.join(": ")))
        })
    };
    let mut record = CheckRecord {
        fingerprint,
        at: super::campaigns::now_text(),
        by: by.to_string(),
        seconds: 0.0,
        refusal: None,
        scan: None,
        chunks: Default::default(),
        previews: Vec::new(),
        estimate: None,
        worst_case: None,
        budget: campaign.send.budget,
        quiet_hours_now: QuietWindow::in_force_now(&campaign),
        advertising: campaign.is_advertising(),
        quiet_hours_relaxed: relaxed_quiet_hours(&campaign),
    };
    match found {
        Err(refusal) => record.refusal = Some(refusal),
        Ok(scan) => {
            record.chunks = scan.chunks_by_lane(&campaign);
            record.estimate = scan.estimated_charge.as_ref().map(|charge| charge.values().sum());
            record.worst_case = scan.worst_case_charge;
            record.previews = previews.finish().into_values().flatten().map(preview_view).collect();
            keep_previews(workspace, &record_id, &record.previews)?;
            record.scan = Some(scan);
        }
    }
    record.seconds = started.elapsed().as_secs_f64();
    Ok(record)
}

/// The file of the check's previews in the campaign's folder.
const PREVIEWS_FILE: &str = "previews.json";

fn keep_previews(workspace: &Workspace, id: &str, previews: &[PreviewView]) -> Result<(), ConsoleError> {
    let path = workspace.campaign_dir(id).join(PREVIEWS_FILE);
    let mut file = crate::files::create_private(&path).map_err(ConsoleError::from_io)?;
    let bytes = serde_json::to_vec(previews).map_err(ConsoleError::internal)?;
    std::io::Write::write_all(&mut file, &bytes).map_err(ConsoleError::from_io)
}

/// The previews of the campaign's last check (none once its personal data was destroyed; a
/// check recorded before they moved to the folder keeps its own).
pub fn previews_of(workspace: &Workspace, id: &str, check: &CheckRecord) -> Vec<PreviewView> {
    std::fs::read(workspace.campaign_dir(id).join(PREVIEWS_FILE))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_else(|| check.previews.clone())
}

/// The quiet-hours mode of a campaign that has quiet hours and does not enforce them.
pub fn relaxed_quiet_hours(campaign: &crate::campaign::Campaign) -> Option<String> {
    use crate::campaign::QuietHoursMode;
    QuietWindow::for_campaign(campaign)?;
    match campaign.send.quiet_hours {
        QuietHoursMode::Enforce => None,
        QuietHoursMode::Warn => Some("warn".into()),
        QuietHoursMode::Off => Some("off".into()),
    }
}

/// When a start now is refused for quiet hours under `enforce`: the next time the campaign may
/// start.
pub fn enforced_quiet_hours_end(campaign: &crate::campaign::Campaign) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    let now = crate::campaign::quiet::now_kst().ok()?;
    QuietWindow::enforced_end(campaign, now)
}

/// A preview as the check keeps it, in no language: the page puts it in words.
pub fn preview_view(message: MessagePreview) -> PreviewView {
    PreviewView {
        length: message.length_text(),
        lane: message.lane.as_str().to_string(),
        row: message.row,
        phone: message.phone,
        chosen: message.chosen.to_string(),
        billing_class: message.billing_class.to_string(),
        chars: message.chars,
        bytes: message.bytes,
        text: message.text.unwrap_or_default(),
        fallback: None,
        fallback_message: message
            .fallback
            .map(|fallback| (fallback.class.to_string(), fallback.bytes, fallback.text)),
        variables: message.variables.into_iter().collect(),
    }
}

/// One rejected row as the page lists it: rejects.csv's own columns, phone masked.
pub struct RejectLine {
    pub cells: Vec<String>,
}

/// A lane's name (`alimtalk`, as the check keeps it) in the page's language; an unknown one as kept.
pub fn lane_words(lane: &str, lang: crate::report::Lang) -> String {
    crate::campaign::Lane::parse(lane).map_or_else(
        || lane.to_string(),
        |known| crate::report::lane_label(known, lang).to_string(),
    )
}

/// A reject reason as people read it, its code kept beside: `휴대전화 번호 아님 (phone_invalid)`.
pub fn reason_words(reason: &str, lang: crate::report::Lang) -> String {
    match crate::report::reject_reason(reason, lang) {
        Some(meaning) => format!("{meaning} ({reason})"),
        None => reason.to_string(),
    }
}

/// rejects.csv's header and lines as the page shows them: the column names and each reason and
/// detail in the page's language (the file itself keeps the engine's words, for programs).
pub fn rejects_in_words(
    header: Vec<String>,
    lines: Vec<RejectLine>,
    w: &crate::console::words::Words,
) -> (Vec<String>, Vec<RejectLine>) {
    let lang = w.report_lang();
    let position = |name: &str| header.iter().position(|column| column == name);
    let (reason, detail) = (position("reason"), position("detail"));
    let lines = lines
        .into_iter()
        .map(|mut line| {
            if let Some(cell) = reason.and_then(|at| line.cells.get_mut(at)) {
                *cell = reason_words(cell, lang);
            }
            if let Some(cell) = detail.and_then(|at| line.cells.get_mut(at)) {
                *cell = crate::report::reject_detail(cell, lang);
            }
            line
        })
        .collect();
    let header = header
        .into_iter()
        .map(|name| {
            match name.as_str() {
                "row" => w.row,
                "column" => w.column,
                "reason" => w.reason,
                "detail" => w.detail,
                _ => return name,
            }
            .to_string()
        })
        .collect();
    (header, lines)
}

/// The header and one page of rejects.csv; whether more follow. Cells are shown as the file holds
/// them, a formula-like one with the `'` marking it for spreadsheets, so that the page and the
/// download say the same.
pub fn rejects_page(path: &Path, page: usize) -> Result<(Vec<String>, Vec<RejectLine>, bool), ConsoleError> {
    let mut reader = match csv::ReaderBuilder::new().flexible(true).from_path(path) {
        Ok(reader) => reader,
        Err(_) => return Ok((Vec::new(), Vec::new(), false)),
    };
    let header: Vec<String> = reader
        .headers()
        .map_err(ConsoleError::internal)?
        .iter()
        .map(str::to_string)
        .collect();
    let mut lines = Vec::new();
    let mut more = false;
    for (index, record) in reader.records().enumerate().skip(page * REJECTS_PER_PAGE) {
        if index >= (page + 1) * REJECTS_PER_PAGE {
            more = true;
            break;
        }
        let record = record.map_err(ConsoleError::internal)?;
        lines.push(RejectLine {
            cells: record
                .iter()
                .map(|cell| crate::phone::mask_phones(cell).into_owned())
                .collect(),
        });
    }
    Ok((header, lines, more))
}
