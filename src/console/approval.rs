//! The approver's decision: the messages as recipients will get them (a phone's view of each lane's first and longest message), the cost against the budget, the quiet-hours decision, and what changed since the last approval — the snapshot an approval keeps (composed settings, files, estimate) compared with what is asked now.
//!
//! A change voids the approval on the campaign's record (`CampaignRecord::void_check`); the
//! snapshot of the last approval is kept apart in console.db (`Store::approved_snapshot`), so the
//! next approver sees what was approved before.

mod diff;

pub use diff::{changed_lines, Changed};

use super::campaigns::{CampaignRecord, CheckRecord, StoredFile, Workspace};
use super::error::ConsoleError;
use super::phone_view::{phones, sender, Phone};
use super::words::Words;
use crate::campaign::quiet::QuietWindow;
use crate::campaign::{Campaign, QuietHoursMode};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What an approver approved: kept at each approval, compared at the next.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    pub by: String,
    pub at: String,
    /// The fingerprint the approval bound (settings, text and every file).
    pub fingerprint: String,
    /// The composed settings as the engine read them, without the connection's credentials.
    pub settings: String,
    /// The message text (it may come from a file the settings name).
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub files: Vec<FileSnapshot>,
    #[serde(default)]
    pub estimate: Option<i64>,
}

/// One file the campaign reads, as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSnapshot {
    pub role: FileRole,
    /// The name the person gave it (an upload's own name), never a server path.
    pub name: String,
    pub bytes: u64,
    /// The engine's digest of it; `missing` when it is not there.
    pub fingerprint: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileRole {
    Recipients,
    Suppression,
    OptOuts,
    TextFile,
}

impl FileRole {
    const ALL: [FileRole; 4] = [
        FileRole::Recipients,
        FileRole::Suppression,
        FileRole::OptOuts,
        FileRole::TextFile,
    ];

    fn label(self, w: &Words) -> &'static str {
        match self {
            FileRole::Recipients => w.recipients_file,
            FileRole::Suppression => w.suppression_file,
            FileRole::OptOuts => w.opt_outs,
            FileRole::TextFile => w.message_text_file,
        }
    }
}

/// The connection's settings a page never shows: where the key comes from, a server path.
const UNSHOWN: [&str; 2] = ["credentials", "sandbox_accounts"];

/// The campaign as it is now (its composed settings, text and files), by `by` at `at`.
pub fn snapshot(
    workspace: &Workspace,
    record: &CampaignRecord,
    campaign: &Campaign,
    by: &str,
    at: &str,
) -> Result<Snapshot, ConsoleError> {
    let composed = std::fs::read_to_string(&campaign.file).map_err(ConsoleError::from_io)?;
    let mut table = super::settings::parse_settings(&composed)?;
    for key in UNSHOWN {
        table.remove(key);
    }
    let settings = toml::to_string(&table).map_err(ConsoleError::internal)?;
    let dir = workspace.campaign_dir(&record.id);
    let uploaded = |file: &Option<StoredFile>, path: &Path| match file {
        Some(file) => file.original.clone(),
        None => file_name(path),
    };
    let text_file = table
        .get("message")
        .and_then(|message| message.get("text_file"))
        .and_then(toml::Value::as_str)
        .map(|name| dir.join(name));
    // Each file is read once: its digest serves its line here and the approval's fingerprint.
    let mut digests = std::collections::HashMap::new();
    let mut files = vec![file_snapshot(
        FileRole::Recipients,
        uploaded(&record.recipients, &campaign.recipients.path),
        &campaign.recipients.path,
        &mut digests,
    )?];
    if let Some(path) = &campaign.recipients.suppression {
        files.push(file_snapshot(
            FileRole::Suppression,
            uploaded(&record.suppression, path),
            path,
            &mut digests,
        )?);
    }
    if let Some(path) = &campaign.recipients.opt_outs {
        files.push(file_snapshot(FileRole::OptOuts, file_name(path), path, &mut digests)?);
    }
    if let Some(path) = &text_file {
        files.push(file_snapshot(FileRole::TextFile, file_name(path), path, &mut digests)?);
    }
    let fingerprint = super::compose::fingerprint_with(campaign, &mut |path| match digests.get(path) {
        Some(digest) => Ok(digest.clone()),
        None => crate::engine::fingerprint_file(path),
    })?;
    Ok(Snapshot {
        by: by.to_string(),
        at: at.to_string(),
        fingerprint,
        settings,
        text: campaign.message_text().unwrap_or("").to_string(),
        files,
        estimate: record.check.as_ref().and_then(|check| check.estimate),
    })
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn file_snapshot(
    role: FileRole,
    name: String,
    path: &Path,
    digests: &mut std::collections::HashMap<std::path::PathBuf, String>,
) -> Result<FileSnapshot, ConsoleError> {
    let (bytes, fingerprint) = match std::fs::metadata(path) {
        Ok(meta) => {
            let digest = crate::engine::fingerprint_file(path)?;
            digests.insert(path.to_path_buf(), digest.clone());
            (meta.len(), digest)
        }
        Err(_) => (0, "missing".to_string()),
    };
    Ok(FileSnapshot {
        role,
        name,
        bytes,
        fingerprint,
    })
}

/// What changed between the approval before and the campaign asked now.
pub struct Changes {
    /// Who approved it before, and when (RFC 3339).
    pub by: String,
    pub at: String,
    /// Settings and files are as they were (the approval was voided by a change undone, or by a
    /// check run again).
    pub nothing: bool,
    pub settings: Vec<Changed>,
    /// The message text's lines, when it comes from a file and changed.
    pub text: Vec<Changed>,
    pub files: Vec<FileChange>,
    pub estimate_before: String,
    pub estimate_now: String,
}

/// A file added, taken away or replaced: as it was and as it is (`name (1,234 B)`, or none).
pub struct FileChange {
    pub label: &'static str,
    pub before: String,
    pub now: String,
}

/// The difference between the snapshot of the approval before and the campaign now.
pub fn compare(before: &Snapshot, now: &Snapshot, w: &Words) -> Changes {
    let settings = changed_lines(&before.settings, &now.settings);
    let from_file = |snapshot: &Snapshot| snapshot.files.iter().any(|file| file.role == FileRole::TextFile);
    let text = if from_file(before) || from_file(now) {
        changed_lines(&before.text, &now.text)
    } else {
        Vec::new()
    };
    let shown = |file: Option<&FileSnapshot>| match file {
        Some(file) => format!("{} ({} B)", file.name, crate::text::count(file.bytes)),
        None => w.no_file.to_string(),
    };
    let files: Vec<FileChange> = FileRole::ALL
        .into_iter()
        .filter_map(|role| {
            let was = before.files.iter().find(|file| file.role == role);
            let is = now.files.iter().find(|file| file.role == role);
            let same = match (was, is) {
                (Some(was), Some(is)) => was.fingerprint == is.fingerprint && was.name == is.name,
                (None, None) => true,
                _ => false,
            };
            (!same).then(|| FileChange {
                label: role.label(w),
                before: shown(was),
                now: shown(is),
            })
        })
        .collect();
    Changes {
        by: before.by.clone(),
        at: before.at.clone(),
        nothing: settings.is_empty() && text.is_empty() && files.is_empty(),
        settings,
        text,
        files,
        estimate_before: crate::text::won_opt(before.estimate),
        estimate_now: crate::text::won_opt(now.estimate),
    }
}

/// The cost against the budget, as the check estimated it.
pub struct Cost {
    pub estimate: String,
    pub worst_case: String,
    pub budget: String,
    /// What the budget leaves after the estimate; empty without a budget or an estimate.
    pub left: String,
    pub over: bool,
    /// No budget caps the spend.
    pub no_budget: bool,
}

impl Cost {
    pub fn of(check: &CheckRecord) -> Cost {
        let left = match (check.budget, check.estimate) {
            (Some(budget), Some(estimate)) => crate::text::won(budget - estimate),
            _ => String::new(),
        };
        Cost {
            estimate: crate::text::won_opt(check.estimate),
            worst_case: crate::text::won_opt(check.worst_case),
            budget: crate::text::won_opt(check.budget),
            left,
            over: check.budget_refusal().is_some(),
            no_budget: check.budget.is_none(),
        }
    }
}

/// The quiet-hours decision in words.
pub struct Quiet {
    /// `enforce`, `warn`, `off`, or empty when quiet hours do not apply (not advertising).
    pub mode: &'static str,
    pub decision: &'static str,
    /// The window, `21:00–08:00` (KST); empty when none applies.
    pub window: String,
}

impl Quiet {
    pub fn of(campaign: &Campaign, w: &Words) -> Quiet {
        match QuietWindow::for_campaign(campaign) {
            None => Quiet {
                mode: "",
                decision: w.quiet_not_advertising,
                window: String::new(),
            },
            Some(window) => {
                let (mode, decision) = match campaign.send.quiet_hours {
                    QuietHoursMode::Enforce => ("enforce", w.quiet_enforced),
                    QuietHoursMode::Warn => ("warn", w.quiet_warn),
                    QuietHoursMode::Off => ("off", w.quiet_off),
                };
                Quiet {
                    mode,
                    decision,
                    window: format!("{}–{}", window.starts.format("%H:%M"), window.ends.format("%H:%M")),
                }
            }
        }
    }
}

/// Everything the approver's page shows before the approve (or start) button.
pub struct Decision {
    pub phones: Vec<Phone>,
    pub cost: Option<Cost>,
    pub quiet: Quiet,
    /// Awaiting approval: `None` for its first approval, else what changed since the one before.
    pub changes: Option<Changes>,
    /// Whether to show the changes' section at all (only while awaiting approval).
    pub asks: bool,
}

/// The decision of a campaign awaiting approval or approved, from its check and its settings now;
/// `before` is the snapshot of the last approval (reads every file: call it off the async threads).
pub fn decision(
    workspace: &Workspace,
    record: &CampaignRecord,
    before: Option<Snapshot>,
    w: &'static Words,
) -> Result<Decision, ConsoleError> {
    let campaign = super::compose::load(workspace, &record.id)?;
    let sender = sender(&campaign, w);
    let asks = record.state == super::campaigns::State::AwaitingApproval;
    let changes = match (&before, asks) {
        (Some(before), true) => {
            let now = snapshot(workspace, record, &campaign, "", "")?;
            Some(compare(before, &now, w))
        }
        _ => None,
    };
    Ok(Decision {
        phones: record
            .check
            .as_ref()
            .map(|check| phones(&super::check::previews_of(workspace, &record.id, check), &sender, w))
            .unwrap_or_default(),
        cost: record.check.as_ref().map(Cost::of),
        quiet: Quiet::of(&campaign, w),
        changes,
        asks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot_of(settings: &str, files: Vec<FileSnapshot>, estimate: Option<i64>) -> Snapshot {
        Snapshot {
            by: "joon".into(),
            at: "2026-11-26T12:00:00Z".into(),
            fingerprint: String::new(),
            settings: settings.into(),
            text: String::new(),
            files,
            estimate,
        }
    }

    fn file(role: FileRole, name: &str, bytes: u64, fingerprint: &str) -> FileSnapshot {
        FileSnapshot {
            role,
            name: name.into(),
            bytes,
            fingerprint: fingerprint.into(),
        }
    }

    #[test]
    fn the_comparison_names_lines_files_and_the_estimate() {
        let w = &crate::console::words::EN;
        let before = snapshot_of(
            "[message]\ntext = \"old\"\n",
            vec![file(FileRole::Recipients, "people.csv", 1200, "a")],
            Some(90),
        );
        let now = snapshot_of(
            "[message]\ntext = \"new\"\n",
            vec![
                file(FileRole::Recipients, "people.csv", 1300, "b"),
                file(FileRole::Suppression, "no.csv", 10, "c"),
            ],
            Some(120),
        );
        let changes = compare(&before, &now, w);
        assert!(!changes.nothing);
        assert_eq!(changes.settings.len(), 2);
        assert_eq!(changes.settings[0].line, "text = \"old\"");
        assert_eq!(changes.settings[1].line, "text = \"new\"");
        assert_eq!(changes.files.len(), 2);
        assert_eq!(changes.files[0].before, "people.csv (1,200 B)");
        assert_eq!(changes.files[0].now, "people.csv (1,300 B)");
        assert_eq!(changes.files[1].before, w.no_file);
        assert_eq!(
            (changes.estimate_before.as_str(), changes.estimate_now.as_str()),
            ("₩90", "₩120")
        );
        assert!(compare(&before, &before, w).nothing);
    }
}
