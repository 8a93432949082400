//! A console campaign: its record in `console.db` (state, check, approval, run) and its folder `campaigns/ID/` (campaign.toml and the uploaded files under generated names).

use super::error::ConsoleError;
use super::store::Store;
use crate::plan::Scan;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where a campaign is on its way; see DESIGN.md ("The console").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Draft,
    Checked,
    AwaitingApproval,
    Approved,
    /// Sending, paused or waiting for its start: a run this process drives.
    Sending,
    Done,
    Stopped,
    /// Uncertain or pending recipients left.
    Incomplete,
    /// An error stopped the run while it sent (the engine's `RunOutcome::Failed`); what is left resumes.
    Failed,
    /// The console ended while it sent; never resumed by itself.
    Interrupted,
}

impl State {
    pub const ALL: [State; 10] = [
        State::Draft,
        State::Checked,
        State::AwaitingApproval,
        State::Approved,
        State::Sending,
        State::Done,
        State::Stopped,
        State::Incomplete,
        State::Failed,
        State::Interrupted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            State::Draft => "draft",
            State::Checked => "checked",
            State::AwaitingApproval => "awaiting_approval",
            State::Approved => "approved",
            State::Sending => "sending",
            State::Done => "done",
            State::Stopped => "stopped",
            State::Incomplete => "incomplete",
            State::Failed => "failed",
            State::Interrupted => "interrupted",
        }
    }

    pub fn parse(text: &str) -> Option<State> {
        State::ALL.into_iter().find(|state| state.as_str() == text)
    }

    /// Not started yet: its settings and files may still change (a change voids check and approval).
    pub const EDITABLE: [State; 4] = [State::Draft, State::Checked, State::AwaitingApproval, State::Approved];

    /// Its run ended with recipients left that a resume sends.
    pub const RESUMABLE: [State; 4] = [State::Interrupted, State::Stopped, State::Incomplete, State::Failed];

    /// Whether the campaign's settings and files may still change (a change voids check and approval).
    pub fn editable(self) -> bool {
        State::EDITABLE.contains(&self)
    }

    /// Whether a run directory exists for it.
    pub fn has_run(self) -> bool {
        matches!(
            self,
            State::Sending | State::Done | State::Stopped | State::Incomplete | State::Failed | State::Interrupted
        )
    }

    /// Whether its run ended with recipients left that a resume sends.
    pub fn resumable(self) -> bool {
        State::RESUMABLE.contains(&self)
    }
}

/// One message as the check page shows it (from the engine's preview).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PreviewView {
    pub lane: String,
    pub row: u64,
    pub phone: String,
    pub chosen: String,
    pub billing_class: String,
    pub length: String,
    pub text: String,
    /// In the words of a check made before `fallback_message` was kept (English).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// The fallback SMS/LMS the service sends if the message fails: its billing class, EUC-KR
    /// bytes and text.
    #[serde(default)]
    pub fallback_message: Option<(String, usize, String)>,
    /// The variables the service fills its registered template with, when it fills the text.
    #[serde(default)]
    pub variables: Vec<(String, String)>,
    /// The filled text's characters and EUC-KR bytes, as the service counts them (`None` when the
    /// service fills it, or in a check made before they were kept).
    #[serde(default)]
    pub chars: Option<usize>,
    #[serde(default)]
    pub bytes: Option<usize>,
}

/// What a check found, bound to the fingerprint of the files it read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckRecord {
    pub fingerprint: String,
    pub at: String,
    pub by: String,
    pub seconds: f64,
    /// The file was refused as a whole (named); nothing else below is then known.
    pub refusal: Option<String>,
    pub scan: Option<Scan>,
    pub chunks: std::collections::BTreeMap<String, u64>,
    /// Filled messages hold names and variables: they are kept in the campaign's folder
    /// (`check::previews_of`), where a purge destroys them, never in the store (whose log keeps
    /// old values).
    #[serde(default, skip_serializing)]
    pub previews: Vec<PreviewView>,
    /// Won: the estimate without fallbacks, and at most with every fallback.
    pub estimate: Option<i64>,
    pub worst_case: Option<i64>,
    pub budget: Option<i64>,
    pub quiet_hours_now: Option<String>,
    /// Whether the campaign advertises, so the workspace's opt-out list applied to it.
    #[serde(default)]
    pub advertising: bool,
    /// An advertising campaign whose quiet hours are `warn` or `off` (the mode): the approver
    /// must acknowledge it.
    #[serde(default)]
    pub quiet_hours_relaxed: Option<String>,
}

impl CheckRecord {
    /// Whether the campaign may go on to approval: read, balanced, within its budget.
    pub fn passed(&self) -> bool {
        let Some(scan) = &self.scan else { return false };
        scan.balanced() && scan.valid > 0 && self.budget_refusal().is_none()
    }

    /// Why the estimate does not fit the budget, in the engine's words (as `run` refuses it).
    pub fn budget_refusal(&self) -> Option<String> {
        let estimate = match self.estimate {
            Some(won) => crate::engine::rules::Estimate::Won(won),
            None => crate::engine::rules::Estimate::NoPrices,
        };
        crate::engine::rules::check_estimate(estimate, self.budget)
            .err()
            .map(|refusal| refusal.0)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Approval {
    pub by: String,
    pub at: String,
    /// The files and settings the approver saw.
    pub fingerprint: String,
    pub estimate: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    pub started_by: String,
    pub started_at: String,
    pub start_at: Option<String>,
    /// How the last send of it ended, in words.
    pub end: Option<String>,
    /// What the last collection of a gateway run's results found (or why it ended), in words.
    #[serde(default)]
    pub collected: Option<String>,
    /// The run's figures when it (or its collection) last ended, so that pages need not open a
    /// run that no process drives: sent, charged in won, and the spend cap.
    #[serde(default)]
    pub figures: Option<RunFigures>,
    /// What the live page showed when the run ended: its last errors (masked) and rate over time.
    #[serde(default)]
    pub live: super::live_view::KeptLive,
    /// When the retention destroyed the run's personal data (its totals stay).
    #[serde(default)]
    pub purged: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct RunFigures {
    pub sent: u64,
    pub charged: Option<i64>,
    pub budget: Option<i64>,
}

impl RunFigures {
    pub fn of(status: &crate::engine::Status) -> RunFigures {
        RunFigures {
            sent: status.sent,
            charged: status.budget.map(|budget| budget.charged),
            budget: status.budget.and_then(|budget| budget.limit),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CampaignRecord {
    pub id: String,
    pub name: String,
    pub kind: String,
    pub state: State,
    pub author: String,
    pub created_at: String,
    pub updated_at: String,
    pub updated_by: String,
    /// Stored names inside the campaign folder, and the names the files had on the uploader's disk.
    pub recipients: Option<StoredFile>,
    pub suppression: Option<StoredFile>,
    pub check: Option<CheckRecord>,
    pub submitted_by: Option<String>,
    pub approval: Option<Approval>,
    pub run: Option<RunRecord>,
}

impl CampaignRecord {
    /// Any change sends the campaign back to draft: the check and the approval bound the old files.
    pub fn void_check(&mut self, by: &str) {
        self.state = State::Draft;
        self.check = None;
        self.approval = None;
        self.submitted_by = None;
        self.touch(by);
    }

    /// Records who changed it, and when.
    pub fn touch(&mut self, by: &str) {
        self.updated_at = now_text();
        self.updated_by = by.to_string();
    }

    /// Whether `user` made or submitted it (the two-person rule's question).
    pub fn is_own(&self, user: &str) -> bool {
        self.author == user || self.submitted_by.as_deref() == Some(user)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredFile {
    pub stored: String,
    pub original: String,
    pub bytes: u64,
}

pub const CAMPAIGN_FILE: &str = "campaign.toml";

/// The workspace's folders.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub root: PathBuf,
}

impl Workspace {
    pub fn campaign_dir(&self, id: &str) -> PathBuf {
        self.root.join("campaigns").join(id)
    }

    pub fn campaign_file(&self, id: &str) -> PathBuf {
        self.campaign_dir(id).join(CAMPAIGN_FILE)
    }

    pub fn run_dir(&self, id: &str) -> PathBuf {
        self.root.join("runs").join(id)
    }

    pub fn tests_dir(&self) -> PathBuf {
        self.root.join("tests")
    }

    pub fn uploads_dir(&self) -> PathBuf {
        self.root.join("uploads")
    }

    /// Where a month's statement files go (`statements/2026-11`).
    pub fn statement_dir(&self, month: &str) -> PathBuf {
        self.root.join("statements").join(month)
    }

    pub fn create(&self) -> std::io::Result<()> {
        for dir in ["campaigns", "runs", "tests", "uploads", "statements"] {
            crate::files::create_private_dir(&self.root.join(dir))?;
        }
        Ok(())
    }
}

/// A campaign's id: its time and a random part, safe as a folder name.
pub fn new_id() -> String {
    let now = chrono::Utc::now().format("%Y%m%d-%H%M%S");
    let random = uuid::Uuid::new_v4().simple().to_string();
    format!("{now}-{}", &random[..8])
}

/// Whether an id is one the console made (so it can name a folder).
pub fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 40 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// The campaign a route names (`/campaigns/{id}/…`): only for a signed-in person, its id checked
/// and its record loaded, 404 otherwise; a handler that changes it reads it again under the
/// transitions lock.
pub struct Found(pub CampaignRecord);

impl axum::extract::FromRequestParts<super::Shared> for Found {
    type Rejection = ConsoleError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        console: &super::Shared,
    ) -> Result<Found, ConsoleError> {
        // Who asks first: without a session the answer is "sign in", never whether an id exists.
        super::auth::Signed::from_request_parts(parts, console).await?;
        let axum::extract::Path(params) =
            axum::extract::Path::<std::collections::HashMap<String, String>>::from_request_parts(parts, console)
                .await
                .map_err(|_| ConsoleError::NotFound)?;
        let id = params.get("id").ok_or(ConsoleError::NotFound)?;
        find(&console.store, id).map(Found)
    }
}

/// Loads a campaign record, or 404.
pub fn find(store: &Store, id: &str) -> Result<CampaignRecord, ConsoleError> {
    if !valid_id(id) {
        return Err(ConsoleError::NotFound);
    }
    store.campaign(id)?.ok_or(ConsoleError::NotFound)
}

pub fn now_text() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The relative path a stored file has in the campaign folder.
pub fn stored_path(dir: &Path, file: &StoredFile) -> PathBuf {
    dir.join(&file.stored)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_state_and_role_has_its_words_in_both_languages() {
        let states = State::ALL.map(|state| state.as_str());
        for words in [&crate::console::words::EN, &crate::console::words::KO] {
            for code in states.iter().chain(&["paused", "scheduled"]) {
                assert_ne!(words.state(code), words.unknown, "{code} in {}", words.lang);
            }
            for role in ["viewer", "editor", "approver", "admin"] {
                assert_ne!(words.role(role), words.unknown, "{role} in {}", words.lang);
            }
        }
        assert_eq!(crate::console::words::KO.state("awaiting_approval"), "승인 대기");
    }

    use super::*;

    #[test]
    fn ids_are_folder_names() {
        assert!(valid_id(&new_id()));
        assert!(!valid_id("../x"));
        assert!(!valid_id(""));
    }
}
