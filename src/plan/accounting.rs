//! The accounting of a whole input (`rows = rejected + suppressed + capped + duplicates + valid`), the validator's warnings, and `rejects.csv` (its texts marked for spreadsheets).

use super::classify::{Counted, Rejection};
use super::PlanError;
use crate::api::ledger::BillingClass;
use crate::campaign::{Campaign, Kind, Lane};
use crate::files::spreadsheet_safe;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The accounting of a whole input: `rows = rejected + suppressed + capped + duplicates + valid`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Scan {
    pub rows: u64,
    pub valid: u64,
    pub rejected: u64,
    pub rejected_by_reason: BTreeMap<String, u64>,
    pub duplicates: u64,
    pub suppressed: u64,
    pub per_lane: BTreeMap<Lane, u64>,
    pub encoding: String,
    pub suppression_entries: u64,
    /// Of `suppressed`, the rows only the opt-out list removed (an advertising campaign's).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub opted_out: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub opt_out_entries: u64,
    /// Rows the workspace's frequency cap held back (an advertising campaign's, in the console).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub capped: u64,
    /// Numbers the frequency cap's list held when the plan read it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub capped_entries: u64,
    pub warnings: Vec<String>,
    /// Estimated charge per billing class when prices are given (fallbacks not included).
    pub estimated_charge: Option<BTreeMap<BillingClass, i64>>,
    /// Valid rows by the class of the fallback they would get (`alter` on, prices given).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fallbacks: BTreeMap<BillingClass, u64>,
    /// The charge were every fallback sent too (`None` without prices).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_case_charge: Option<i64>,
}

impl Scan {
    /// Chunks the valid rows of a lane make.
    pub fn chunks_in(&self, lane: Lane, chunk_size: usize) -> u64 {
        self.per_lane
            .get(&lane)
            .copied()
            .unwrap_or(0)
            .div_ceil(chunk_size as u64)
    }

    /// Chunks per lane of the campaign, by lane name (`validate` and the console's check).
    pub fn chunks_by_lane(&self, campaign: &crate::campaign::Campaign) -> BTreeMap<String, u64> {
        campaign
            .lanes()
            .into_iter()
            .map(|lane| {
                (
                    lane.as_str().to_string(),
                    self.chunks_in(lane, campaign.send.chunk_size),
                )
            })
            .collect()
    }

    /// Counts one row's fate.
    pub fn count(&mut self, fate: Counted) {
        self.rows += 1;
        match fate {
            Counted::Rejected(reason) => {
                self.rejected += 1;
                match self.rejected_by_reason.get_mut(reason.as_str()) {
                    Some(count) => *count += 1,
                    None => {
                        self.rejected_by_reason.insert(reason.as_str().to_string(), 1);
                    }
                }
            }
            Counted::Suppressed => self.suppressed += 1,
            Counted::Capped => self.capped += 1,
            Counted::Duplicate => self.duplicates += 1,
            Counted::Valid(lane) => {
                self.valid += 1;
                *self.per_lane.entry(lane).or_default() += 1;
            }
        }
    }

    pub fn balanced(&self) -> bool {
        self.rows == self.valid + self.rejected + self.suppressed + self.capped + self.duplicates
    }
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// What the validator points out about an advertising message without refusing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdvertisingWarning {
    /// A brand template the service fills: its text is not known here.
    TemplateUnknown,
    /// The text does not start with `(광고)`.
    NoAdvertisingMark,
    /// No free opt-out line in the text.
    NoOptOutLine,
}

impl AdvertisingWarning {
    pub const ALL: [AdvertisingWarning; 3] = [
        AdvertisingWarning::TemplateUnknown,
        AdvertisingWarning::NoAdvertisingMark,
        AdvertisingWarning::NoOptOutLine,
    ];

    /// The warning a recorded text is (a check keeps the texts `validate` gave).
    pub fn of_text(text: &str) -> Option<AdvertisingWarning> {
        AdvertisingWarning::ALL
            .into_iter()
            .find(|warning| warning.text() == text)
    }

    /// As the CLI and `validate --json` say it.
    pub fn text(self) -> &'static str {
        match self {
            AdvertisingWarning::TemplateUnknown => {
                "advertising: the template's text is not known here; check it starts with (광고) and carries a free opt-out line"
            }
            AdvertisingWarning::NoAdvertisingMark => "advertising: the text does not start with (광고)",
            AdvertisingWarning::NoOptOutLine => {
                "advertising: no free opt-out line (무료거부/수신거부 with an 080 number) found in the text"
            }
        }
    }
}

/// Advertising hygiene the validator points out without refusing.
pub fn warnings(campaign: &Campaign) -> Vec<String> {
    advertising_warnings(campaign)
        .into_iter()
        .map(|warning| warning.text().to_string())
        .collect()
}

/// The advertising warnings of a campaign, as codes (a page puts them in its own words).
pub fn advertising_warnings(campaign: &Campaign) -> Vec<AdvertisingWarning> {
    let mut warnings = Vec::new();
    if !campaign.is_advertising() {
        return warnings;
    }
    let Some(text) = campaign.message_text() else {
        if campaign.kind == Kind::Brand {
            warnings.push(AdvertisingWarning::TemplateUnknown);
        }
        return warnings;
    };
    if !text.trim_start().starts_with("(광고)") {
        warnings.push(AdvertisingWarning::NoAdvertisingMark);
    }
    let opt_out = ["무료거부", "무료 거부", "수신거부", "수신 거부", "080"];
    if !opt_out.iter().any(|marker| text.contains(marker)) {
        warnings.push(AdvertisingWarning::NoOptOutLine);
    }
    warnings
}

/// Writes `rejects.csv`: row number, column, reason, detail (no phone number: the row number finds
/// it). People open it in spreadsheets, so a column or detail a spreadsheet would read as a
/// formula (a header named `=…`) starts with `'` (`crate::files::spreadsheet_safe`).
pub struct RejectsWriter {
    path: PathBuf,
    writer: csv::Writer<std::fs::File>,
}

impl RejectsWriter {
    pub fn create(path: &Path) -> Result<RejectsWriter, PlanError> {
        let write_error = |source| PlanError::Write {
            path: path.to_path_buf(),
            source,
        };
        let file = crate::files::create_private(path).map_err(write_error)?;
        let mut writer = csv::Writer::from_writer(file);
        writer
            .write_record(["row", "column", "reason", "detail"])
            .map_err(|e| write_error(e.into()))?;
        Ok(RejectsWriter {
            path: path.to_path_buf(),
            writer,
        })
    }

    pub fn write(&mut self, row: u64, rejection: &Rejection) -> Result<(), PlanError> {
        // Every rejected row (and every row the frequency cap holds back) passes here.
        let mut number = itoa::Buffer::new();
        self.writer
            .write_record([
                number.format(row),
                &spreadsheet_safe(&rejection.column),
                rejection.reason.as_str(),
                &spreadsheet_safe(&rejection.detail),
            ])
            .map_err(|e| PlanError::Write {
                path: self.path.clone(),
                source: e.into(),
            })
    }

    pub fn finish(mut self) -> Result<(), PlanError> {
        self.writer.flush().map_err(|source| PlanError::Write {
            path: self.path.clone(),
            source,
        })?;
        self.writer.get_ref().sync_all().map_err(|source| PlanError::Write {
            path: self.path.clone(),
            source,
        })
    }
}
