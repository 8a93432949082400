//! Why a row is not sent although it was read: a rejection's reason (a code the report and the pages put in words) and its column and detail.

use serde::{Deserialize, Serialize};

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
    /// Held back by the workspace's frequency cap (a row of its own bucket, `capped`, listed in
    /// rejects.csv with the last send's date).
    FrequencyCap,
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
            RejectReason::FrequencyCap => "frequency_cap",
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
