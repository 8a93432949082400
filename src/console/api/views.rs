//! What the API answers and takes, as JSON: the types its OpenAPI document is generated from.

use crate::console::campaigns::{CampaignRecord, CheckRecord};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// A campaign as the console keeps it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CampaignView {
    pub id: String,
    pub name: String,
    /// `alimtalk`, `brand`, `sms`, `lms`…
    pub kind: String,
    /// `draft`, `checked`, `awaiting_approval`, `approved`, `sending`, `finished`, `stopped`…
    pub state: String,
    pub author: String,
    pub created_at: String,
    pub updated_at: String,
    pub updated_by: String,
    /// The recipients file's name as it was uploaded.
    pub recipients: Option<String>,
    pub suppression: Option<String>,
    pub submitted_by: Option<String>,
    pub approval: Option<ApprovalView>,
    pub check: Option<CheckSummary>,
    pub run: Option<RunView>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ApprovalView {
    pub by: String,
    pub at: String,
    /// Won; `null` without prices.
    pub estimate: Option<i64>,
}

/// What the last check found.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CheckSummary {
    pub at: String,
    pub by: String,
    /// Read, balanced, within its budget: the campaign may be submitted.
    pub passed: bool,
    /// The file was refused as a whole, and why.
    pub refusal: Option<String>,
    /// rows = valid + rejected + duplicates + suppressed + capped.
    pub rows: u64,
    pub valid: u64,
    pub rejected: u64,
    pub duplicates: u64,
    pub suppressed: u64,
    pub capped: u64,
    pub rejected_by_reason: BTreeMap<String, u64>,
    pub valid_by_lane: BTreeMap<String, u64>,
    /// Won: without fallbacks, and with every fallback sent.
    pub estimate: Option<i64>,
    pub worst_case: Option<i64>,
    pub budget: Option<i64>,
    /// An advertising campaign whose quiet hours are relaxed (`warn`, `off`): its approval needs
    /// `quiet_hours_ack`.
    pub quiet_hours_relaxed: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RunView {
    pub started_by: String,
    pub started_at: String,
    /// A scheduled start's time.
    pub start_at: Option<String>,
    /// How the last send ended, in words.
    pub end: Option<String>,
    pub purged: Option<String>,
}

impl CampaignView {
    pub fn of(record: &CampaignRecord) -> CampaignView {
        CampaignView {
            id: record.id.clone(),
            name: record.name.clone(),
            kind: record.kind.clone(),
            state: record.state.as_str().to_string(),
            author: record.author.clone(),
            created_at: record.created_at.clone(),
            updated_at: record.updated_at.clone(),
            updated_by: record.updated_by.clone(),
            recipients: record.recipients.as_ref().map(|file| file.original.clone()),
            suppression: record.suppression.as_ref().map(|file| file.original.clone()),
            submitted_by: record.submitted_by.clone(),
            approval: record.approval.as_ref().map(|approval| ApprovalView {
                by: approval.by.clone(),
                at: approval.at.clone(),
                estimate: approval.estimate,
            }),
            check: record.check.as_ref().map(CheckSummary::of),
            run: record.run.as_ref().map(|run| RunView {
                started_by: run.started_by.clone(),
                started_at: run.started_at.clone(),
                start_at: run.start_at.clone(),
                end: run.end.clone(),
                purged: run.purged.clone(),
            }),
        }
    }
}

impl CheckSummary {
    fn of(check: &CheckRecord) -> CheckSummary {
        let scan = check.scan.as_ref();
        let figure = |pick: fn(&crate::plan::Scan) -> u64| scan.map_or(0, pick);
        CheckSummary {
            at: check.at.clone(),
            by: check.by.clone(),
            passed: check.passed(),
            refusal: check.refusal.clone(),
            rows: figure(|scan| scan.rows),
            valid: figure(|scan| scan.valid),
            rejected: figure(|scan| scan.rejected),
            duplicates: figure(|scan| scan.duplicates),
            suppressed: figure(|scan| scan.suppressed),
            capped: figure(|scan| scan.capped),
            rejected_by_reason: scan.map(|scan| scan.rejected_by_reason.clone()).unwrap_or_default(),
            valid_by_lane: scan
                .map(|scan| {
                    scan.per_lane
                        .iter()
                        .map(|(lane, count)| (lane.as_str().to_string(), *count))
                        .collect()
                })
                .unwrap_or_default(),
            estimate: check.estimate,
            worst_case: check.worst_case,
            budget: check.budget,
            quiet_hours_relaxed: check.quiet_hours_relaxed.clone(),
        }
    }
}

/// A check's result with one page of its rejected rows (as rejects.csv has them).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CheckView {
    pub check: Option<CheckSummary>,
    /// The files are as they were checked (a change since voids the check).
    pub current: bool,
    pub rejects: RejectsPage,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RejectsPage {
    /// From 0.
    pub page: usize,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Another page follows.
    pub more: bool,
}

/// A run's progress and figures, as the live page shows them.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StatusView {
    pub state: String,
    /// `waiting`, `sending`, `paused`, `finished`…
    pub phase: String,
    pub total: u64,
    pub done: u64,
    pub percent: u64,
    pub sent: u64,
    pub accepted: u64,
    pub not_accepted: u64,
    pub uncertain: u64,
    pub in_flight: u64,
    pub pending: u64,
    /// Won.
    pub charged: Option<i64>,
    pub reserved: Option<i64>,
    pub budget: Option<i64>,
    /// Why the run is paused, in words.
    pub paused_why: Option<String>,
    /// How it ended, in words.
    pub finished: Option<String>,
    /// The run's report is written (`files/report.csv` and the others answer): it is, a moment
    /// after the run ends.
    pub report_ready: bool,
}

/// The test numbers (at most the engine's limit), as a person types them.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TestSendRequest {
    pub numbers: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TestSendView {
    pub messages: Vec<TestMessageView>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TestMessageView {
    /// The message as filled for its row.
    pub text: String,
    pub answers: Vec<TestAnswerView>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TestAnswerView {
    /// Masked.
    pub to: String,
    /// `answered`, `uncertain` or `not_sent`.
    pub outcome: String,
    /// The service's code.
    pub status: Option<String>,
    pub accepted: bool,
    pub error: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
pub struct ApproveRequest {
    /// Required for an advertising campaign whose quiet hours are relaxed.
    #[serde(default)]
    pub quiet_hours_ack: bool,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StartRequest {
    /// The estimate typed out (`₩1,234`, `1234`), or without prices the number of recipients:
    /// the same confirmation the page asks for.
    pub amount: String,
    /// A scheduled start: Asia/Seoul wall time (`2026-12-01 10:00`) or RFC 3339.
    #[serde(default)]
    pub start_at: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ControlAction {
    Pause,
    Resume,
    Stop,
    Rate,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ControlRequest {
    pub action: ControlAction,
    /// Messages a second, with `rate`.
    #[serde(default)]
    pub rate: Option<f64>,
}

#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
pub struct ResumeRequest {
    /// To send the uncertain rows again, their number typed out (as the page asks).
    #[serde(default)]
    pub resend_uncertain: Option<String>,
}

/// A new campaign: a campaign file (TOML) or a kind's starting settings, with its files.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct CreateForm {
    /// The campaign's settings, as a TOML file (no paths, endpoints, keys or prices outside the
    /// workspace's connections: the console refuses them).
    #[schema(format = Binary, content_media_type = "application/octet-stream")]
    pub campaign_file: Option<String>,
    /// Or a kind to start from: `alimtalk`, `brand`, `sms`, `lms`.
    pub kind: Option<String>,
    pub name: Option<String>,
    /// CSV, TSV, Excel, ODS or Parquet.
    #[schema(format = Binary, content_media_type = "application/octet-stream")]
    pub recipients: Option<String>,
    #[schema(format = Binary, content_media_type = "application/octet-stream")]
    pub suppression: Option<String>,
}

/// A change: new settings, new files, or both; what is left out stays.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct EditForm {
    /// The whole campaign file (TOML).
    pub settings: Option<String>,
    #[schema(format = Binary, content_media_type = "application/octet-stream")]
    pub recipients: Option<String>,
    #[schema(format = Binary, content_media_type = "application/octet-stream")]
    pub suppression: Option<String>,
    /// `on` takes the suppression file away.
    pub remove_suppression: Option<String>,
    /// A workbook's sheet.
    pub sheet: Option<String>,
}

/// Numbers as a person types them (`010-1234-5678`, `+82 10…`).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct NumbersRequest {
    pub numbers: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct OptOutsView {
    pub count: usize,
    /// Normalised mobile numbers.
    pub numbers: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AuditEntryView {
    /// RFC 3339, UTC.
    pub at: String,
    pub user: String,
    pub action: String,
    pub campaign: Option<String>,
    pub detail: String,
}
