//! Classification of one input row: rejected (and why), suppressed, duplicate, or valid in a lane.

use super::{PlanError, BATCH_ROWS};
use crate::campaign::{Campaign, InputFormat, Kind, Lane};
use crate::input::phone_set::PhoneSet;
use crate::input::{self, ColumnSpec, RawRow, Unreadable};
use crate::phone::{self, PhoneError};
use crate::text::{euc_kr_len, TextLane, ALIMTALK_MAX_CHARS, LMS_MAX_BYTES};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Why a row was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectReason {
    PhoneMissing,
    PhoneInvalid,
    VariableMissing,
    Unencodable,
    TooLong,
    NotText,
    Ragged,
    FieldTooLarge,
    CellError,
}

impl RejectReason {
    pub fn as_str(self) -> &'static str {
        match self {
            RejectReason::PhoneMissing => "phone_missing",
            RejectReason::PhoneInvalid => "phone_invalid",
            RejectReason::VariableMissing => "variable_missing",
            RejectReason::Unencodable => "unencodable",
            RejectReason::TooLong => "too_long",
            RejectReason::NotText => "not_text",
            RejectReason::Ragged => "ragged",
            RejectReason::FieldTooLarge => "field_too_large",
            RejectReason::CellError => "cell_error",
        }
    }
}

/// A rejected row: which column and why, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    pub reason: RejectReason,
    pub column: String,
    pub detail: String,
}

/// A row that will be sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipient {
    pub row: u64,
    pub phone: String,
    pub name: Option<String>,
    pub vars: Vec<String>,
    pub lane: Lane,
}

impl Recipient {
    /// The recipient's name and variables by template key, to fill a template with.
    pub fn mapping(&self, campaign: &Campaign) -> crate::api::MappingEntry {
        crate::api::MappingEntry {
            name: self.name.clone(),
            vars: campaign
                .recipients
                .variables
                .iter()
                .map(|(key, _)| key.clone())
                .zip(self.vars.iter().cloned())
                .collect(),
        }
    }
}

/// What became of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Fate {
    Rejected(Rejection),
    Suppressed,
    Duplicate,
    Valid(Recipient),
}

/// What classification needs of the campaign, computed once.
pub struct Classifier {
    lanes: LaneRule,
    template: Option<crate::template::Template>,
    variable_keys: Vec<String>,
    variable_columns: Vec<String>,
    phone_column: String,
    name_column: Option<String>,
    suppression: Option<PhoneSet>,
    seen: Option<PhoneSet>,
}

struct Vars<'a> {
    name: Option<&'a str>,
    keys: &'a [String],
    values: &'a [Option<String>],
}

impl crate::api::VariableSource for Vars<'_> {
    fn name(&self) -> Option<&str> {
        self.name
    }
    fn var(&self, key: &str) -> Option<&str> {
        let index = self.keys.iter().position(|k| k == key)?;
        self.values[index].as_deref()
    }
}

/// The result of the order-free part of classification.
enum Draft {
    Rejected(Rejection),
    Valid { phone: String, lane: Lane },
}

impl Classifier {
    pub fn new(campaign: &Campaign) -> Result<Classifier, PlanError> {
        let suppression = match &campaign.recipients.suppression {
            None => None,
            Some(path) => Some(load_suppression(path, &campaign.recipients.suppression_column)?),
        };
        Ok(Classifier {
            lanes: LaneRule::for_kind(campaign.kind),
            template: campaign.lane_text().cloned(),
            variable_keys: campaign.recipients.variables.iter().map(|(k, _)| k.clone()).collect(),
            variable_columns: campaign.recipients.variables.iter().map(|(_, c)| c.clone()).collect(),
            phone_column: campaign.recipients.phone_column.clone(),
            name_column: campaign.recipients.name_column.clone(),
            suppression,
            seen: campaign.recipients.drop_duplicates.then(PhoneSet::new),
        })
    }

    pub fn suppression_entries(&self) -> u64 {
        self.suppression.as_ref().map_or(0, PhoneSet::len)
    }

    pub fn column_spec(campaign: &Campaign) -> ColumnSpec {
        ColumnSpec {
            phone: campaign.recipients.phone_column.clone(),
            name: campaign.recipients.name_column.clone(),
            vars: campaign.recipients.variables.iter().map(|(_, c)| c.clone()).collect(),
        }
    }

    fn reject(&self, reason: RejectReason, column: &str, detail: impl Into<String>) -> Draft {
        Draft::Rejected(Rejection {
            reason,
            column: column.to_string(),
            detail: detail.into(),
        })
    }

    /// Everything about a row that does not depend on the rows before it.
    fn draft(&self, row: &RawRow, buffer: &mut String) -> Draft {
        if let Some(unreadable) = &row.unreadable {
            let reason = match unreadable {
                Unreadable::Ragged { .. } => RejectReason::Ragged,
                Unreadable::NotText { .. } => RejectReason::NotText,
                Unreadable::FieldTooLarge { .. } => RejectReason::FieldTooLarge,
                Unreadable::CellError { .. } => RejectReason::CellError,
                Unreadable::PhoneFraction { .. } => RejectReason::PhoneInvalid,
            };
            return self.reject(reason, unreadable.column(), unreadable.to_string());
        }
        let phone = match row.phone.as_deref().map(phone::normalize) {
            None | Some(Err(PhoneError::Empty)) => {
                return self.reject(RejectReason::PhoneMissing, &self.phone_column, "empty")
            }
            Some(Err(error)) => {
                return self.reject(RejectReason::PhoneInvalid, &self.phone_column, error.to_string());
            }
            Some(Ok(phone)) => phone,
        };
        let vars = Vars {
            name: row.name.as_deref(),
            keys: &self.variable_keys,
            values: &row.vars,
        };
        let lane = match &self.template {
            Some(template) => {
                if let Err(missing) = template.render_into(&vars, buffer) {
                    let column = self.column_of(&missing.key);
                    return self.reject(
                        RejectReason::VariableMissing,
                        &column,
                        format!("{} has no value", missing.written),
                    );
                }
                match self.lanes.lane(buffer) {
                    Ok(lane) => lane,
                    Err((reason, detail)) => return self.reject(reason, "message", detail),
                }
            }
            None => {
                // A BASIC brand template lives at the service (and a FREE image message has no
                // text): every mapped variable must have a value.
                for (index, value) in row.vars.iter().enumerate() {
                    if value.as_deref().is_none_or(str::is_empty) {
                        let key = &self.variable_keys[index];
                        return self.reject(
                            RejectReason::VariableMissing,
                            &self.variable_columns[index],
                            format!("#{{{key}}} has no value"),
                        );
                    }
                }
                self.lanes.lane_without_text()
            }
        };
        Draft::Valid { phone, lane }
    }

    fn column_of(&self, key: &str) -> String {
        if key == "name" {
            return self.name_column.clone().unwrap_or_else(|| "name".into());
        }
        self.variable_keys
            .iter()
            .position(|k| k == key)
            .map(|i| self.variable_columns[i].clone())
            .unwrap_or_else(|| key.to_string())
    }

    /// Classifies a batch in input order: the order-free part in parallel, then suppression and
    /// duplicates in sequence so the first occurrence of a number is the one kept. A valid row's
    /// fields move into its `Recipient`; the others keep their phone and name in the `RowRef`.
    pub fn classify(&mut self, batch: Vec<RawRow>) -> Vec<(RowRef, Fate)> {
        let drafts: Vec<Draft> = batch
            .par_iter()
            .map_init(String::new, |buffer, row| self.draft(row, buffer))
            .collect();
        batch
            .into_iter()
            .zip(drafts)
            .map(|(row, draft)| match draft {
                Draft::Rejected(rejection) => (RowRef::unsent(row), Fate::Rejected(rejection)),
                Draft::Valid { phone, lane } => {
                    if self.suppression.as_ref().is_some_and(|s| s.contains(&phone)) {
                        (RowRef::unsent(row), Fate::Suppressed)
                    } else if self.seen.as_mut().is_some_and(|seen| !seen.insert(&phone)) {
                        (RowRef::unsent(row), Fate::Duplicate)
                    } else {
                        let reference = RowRef {
                            row: row.row,
                            phone: None,
                            name: None,
                        };
                        let recipient = Recipient {
                            row: row.row,
                            phone,
                            name: row.name,
                            vars: row.vars.into_iter().map(Option::unwrap_or_default).collect(),
                            lane,
                        };
                        (reference, Fate::Valid(recipient))
                    }
                }
            })
            .collect()
    }
}

/// A row's number and, for a row that is not sent, its phone and name as the file has them.
#[derive(Debug, Clone, PartialEq)]
pub struct RowRef {
    pub row: u64,
    pub phone: Option<String>,
    pub name: Option<String>,
}

impl RowRef {
    fn unsent(row: RawRow) -> RowRef {
        RowRef {
            row: row.row,
            phone: row.phone,
            name: row.name,
        }
    }
}

/// Reads a suppression list: the `column` of a CSV, Parquet or spreadsheet file (its first sheet), or its only column.
fn load_suppression(path: &Path, column: &str) -> Result<PhoneSet, PlanError> {
    let format = InputFormat::from_path(path).unwrap_or(InputFormat::Csv);
    let spec = ColumnSpec {
        phone: column.to_string(),
        name: None,
        vars: Vec::new(),
    };
    let mut source = input::open(path, format, crate::campaign::Encoding::Auto, &spec)?;
    let mut set = PhoneSet::new();
    while let Some(batch) = source.next_batch(BATCH_ROWS)? {
        for row in batch {
            if let Some(Ok(phone)) = row.phone.as_deref().map(phone::normalize) {
                set.insert(&phone);
            }
        }
    }
    Ok(set)
}

/// How a filled text finds its lane, decided once from the kind.
#[derive(Debug, Clone, Copy)]
enum LaneRule {
    /// A notification: at most 1,000 characters, on its one lane.
    Notification(Lane),
    /// The service renders the message (brand): the lane is fixed and the text is not measured here.
    Fixed(Lane),
    /// SMS only or LMS only: at most that lane's EUC-KR bytes.
    Text(TextLane),
    /// SMS up to 90 EUC-KR bytes, else LMS up to 2,000.
    TextBySize,
}

impl LaneRule {
    fn for_kind(kind: Kind) -> LaneRule {
        match kind {
            Kind::Alimtalk => LaneRule::Notification(Lane::Alimtalk),
            Kind::GatewayAlimtalk => LaneRule::Notification(Lane::Gateway),
            Kind::Brand => LaneRule::Fixed(Lane::Brand),
            Kind::Sms => LaneRule::Text(TextLane::Sms),
            Kind::Lms => LaneRule::Text(TextLane::Lms),
            Kind::Text => LaneRule::TextBySize,
        }
    }

    /// The lane of a campaign whose text is not known here (a BASIC brand template, an image message).
    fn lane_without_text(self) -> Lane {
        match self {
            LaneRule::Notification(lane) | LaneRule::Fixed(lane) => lane,
            LaneRule::Text(lane) => text_lane(lane),
            LaneRule::TextBySize => Lane::Sms,
        }
    }

    /// The lane of a filled text, or why it cannot go.
    fn lane(self, text: &str) -> Result<Lane, (RejectReason, String)> {
        let bytes = || euc_kr_len(text).map_err(|error| (RejectReason::Unencodable, error.to_string()));
        match self {
            LaneRule::Notification(lane) => {
                let chars = text.chars().count();
                if chars > ALIMTALK_MAX_CHARS {
                    return Err((
                        RejectReason::TooLong,
                        format!("{chars} characters, at most {ALIMTALK_MAX_CHARS}"),
                    ));
                }
                Ok(lane)
            }
            LaneRule::Fixed(lane) => Ok(lane),
            LaneRule::Text(lane) => {
                let length = bytes()?;
                if length > lane.max_bytes() {
                    return Err((
                        RejectReason::TooLong,
                        format!("{length} bytes in EUC-KR, at most {}", lane.max_bytes()),
                    ));
                }
                Ok(text_lane(lane))
            }
            LaneRule::TextBySize => {
                let length = bytes()?;
                match TextLane::for_bytes(length) {
                    Some(lane) => Ok(text_lane(lane)),
                    None => Err((
                        RejectReason::TooLong,
                        format!("{length} bytes in EUC-KR, over the LMS limit of {LMS_MAX_BYTES}"),
                    )),
                }
            }
        }
    }
}

fn text_lane(lane: TextLane) -> Lane {
    match lane {
        TextLane::Sms => Lane::Sms,
        TextLane::Lms => Lane::Lms,
    }
}
