//! A validated campaign: what is sent (kind and message), to whom (recipients), where (endpoint) and how (send settings).
//!
//! The file as written is `file`, its validation into a [`Campaign`] is `validate`, and the
//! message spec of each kind is `message`.

mod file;
pub mod message;
pub mod quiet;
#[cfg(test)]
mod tests;
mod validate;

use crate::api::ledger::BillingClass;
use crate::template::Template;
pub use message::Message;
use message::{Brand, BrandContent};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A campaign setting that is missing, unknown or wrong; the message names the key.
#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    #[error("cannot read campaign file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("campaign file {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("campaign file {path}: `{key}`: {message}")]
    Setting {
        path: PathBuf,
        key: String,
        message: String,
    },
}

/// What is sent.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Alimtalk,
    Brand,
    Sms,
    Lms,
    /// SMS or LMS per recipient, by the EUC-KR length of the filled text.
    Text,
    GatewayAlimtalk,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Alimtalk => "alimtalk",
            Kind::Brand => "brand",
            Kind::Sms => "sms",
            Kind::Lms => "lms",
            Kind::Text => "text",
            Kind::GatewayAlimtalk => "gateway-alimtalk",
        }
    }
}

/// The endpoint a chunk goes to; `text` campaigns use two.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Lane {
    Alimtalk,
    Brand,
    Sms,
    Lms,
    Gateway,
}

impl Lane {
    pub const ALL: [Lane; 5] = [Lane::Alimtalk, Lane::Brand, Lane::Sms, Lane::Lms, Lane::Gateway];

    pub fn as_str(self) -> &'static str {
        match self {
            Lane::Alimtalk => "alimtalk",
            Lane::Brand => "brand",
            Lane::Sms => "sms",
            Lane::Lms => "lms",
            Lane::Gateway => "gateway",
        }
    }

    pub fn index(self) -> u8 {
        self as u8
    }

    pub fn from_index(index: u8) -> Option<Lane> {
        Lane::ALL.get(index as usize).copied()
    }

    /// The lane [`Lane::as_str`] names.
    pub fn parse(text: &str) -> Option<Lane> {
        Lane::ALL.into_iter().find(|lane| lane.as_str() == text)
    }
}

/// `quiet_hours` setting.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum QuietHoursMode {
    #[default]
    Enforce,
    Warn,
    Off,
}

/// `encoding` of a CSV recipients file.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Encoding {
    /// UTF-8 (with or without BOM) when the start of the file is valid UTF-8, else CP949.
    #[default]
    Auto,
    #[serde(rename = "utf-8", alias = "utf8")]
    Utf8,
    #[serde(alias = "euc-kr")]
    Cp949,
}

/// `format` of a recipients file.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum InputFormat {
    Csv,
    Parquet,
    /// Excel 2007 and later (`.xlsx`, `.xlsm`).
    Xlsx,
    /// Excel 97–2003.
    Xls,
    /// OpenDocument spreadsheet (LibreOffice).
    Ods,
}

impl InputFormat {
    /// The format a file name says, if it says one.
    pub fn from_path(path: &Path) -> Option<InputFormat> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match extension.as_str() {
            "csv" | "txt" | "tsv" => InputFormat::Csv,
            "parquet" | "pq" => InputFormat::Parquet,
            "xlsx" | "xlsm" => InputFormat::Xlsx,
            "xls" => InputFormat::Xls,
            "ods" => InputFormat::Ods,
            _ => return None,
        })
    }

    /// Whether the file is a workbook of sheets (`recipients.sheet` applies).
    pub fn is_spreadsheet(self) -> bool {
        matches!(self, InputFormat::Xlsx | InputFormat::Xls | InputFormat::Ods)
    }
}

// ---------------------------------------------------------------------------------------------
// The validated campaign.

/// Where the service is.
#[derive(Debug, Clone, PartialEq)]
pub enum Endpoint {
    /// Start the sandbox in-process on a free loopback port, with these accounts (None: demo).
    Sandbox { accounts: Option<PathBuf> },
    Urls {
        base_url: String,
        gateway_url: String,
        /// `insecure_http = true`: the campaign allows plain `http://` to a host that is not
        /// loopback (the client refuses it otherwise).
        insecure_http: bool,
    },
}

#[derive(Debug, Clone)]
pub struct Credentials {
    pub api_key_env: String,
    pub api_key_file: Option<PathBuf>,
    pub group_id_env: String,
    pub group_id: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Recipients {
    pub path: PathBuf,
    pub format: InputFormat,
    pub encoding: Encoding,
    /// The sheet of a spreadsheet to read (`None`: the first).
    pub sheet: Option<String>,
    pub phone_column: String,
    pub name_column: Option<String>,
    /// Template variable (`VAR1`, ...) to column, in key order.
    pub variables: Vec<(String, String)>,
    pub suppression: Option<PathBuf>,
    pub suppression_column: String,
    /// Numbers that refused advertising: the plan applies them only when the campaign
    /// advertises ([`Campaign::opt_outs_applied`]); a matched row is suppressed.
    pub opt_outs: Option<PathBuf>,
    /// The numbers the workspace's frequency cap holds back, with their last send: applied when
    /// the campaign advertises ([`Campaign::frequency_capped_applied`]).
    pub frequency_capped: Option<PathBuf>,
    pub drop_duplicates: bool,
}

#[derive(Debug, Clone)]
pub struct SendSettings {
    pub chunk_size: usize,
    pub concurrency: usize,
    pub messages_per_second: Option<f64>,
    pub quiet_hours: QuietHoursMode,
    pub timeout_secs: u64,
    pub max_attempts: u32,
    /// Spend cap in won (`[send] budget`); needs `[prices]`.
    pub budget: Option<i64>,
    /// `[send] pause_when_failing`: the run pauses itself when too many of the last answered
    /// recipients were not accepted.
    pub pause_when_failing: Option<FailingRule>,
}

/// When a run pauses itself: more than `percent` % of the last `window` answered recipients not
/// accepted (a fallback the service sends counts as taken).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailingRule {
    pub percent: u32,
    pub window: u32,
}

impl FailingRule {
    /// What the console sets when a campaign says nothing (the CLI sets nothing).
    pub const CONSOLE_DEFAULT: FailingRule = FailingRule {
        percent: 20,
        window: 500,
    };
    pub const MAX_WINDOW: u32 = 1_000_000;

    /// The one rule for its figures.
    pub fn new(percent: i64, window: i64) -> Result<FailingRule, String> {
        if !(1..=100).contains(&percent) {
            return Err(format!("percent must be 1 to 100, got {percent}"));
        }
        if !(1..=i64::from(FailingRule::MAX_WINDOW)).contains(&window) {
            return Err(format!(
                "window must be 1 to {} answered recipients, got {window}",
                FailingRule::MAX_WINDOW
            ));
        }
        Ok(FailingRule {
            percent: percent as u32,
            window: window as u32,
        })
    }

    /// `pause_when_failing` as a campaign file writes it: `{ percent = 20, window = 500 }`, or
    /// `false` for none.
    pub fn parse(value: &toml::Value) -> Result<Option<FailingRule>, String> {
        const SHAPE: &str = "give { percent = 20, window = 500 } (pause when more than 20 % of the last 500 answered were not accepted), or false";
        match value {
            toml::Value::Boolean(false) => Ok(None),
            toml::Value::Table(table) => {
                if let Some(unknown) = table.keys().find(|key| !["percent", "window"].contains(&key.as_str())) {
                    return Err(format!("unknown key {unknown:?}: {SHAPE}"));
                }
                let figure = |key: &str| {
                    table
                        .get(key)
                        .and_then(toml::Value::as_integer)
                        .ok_or_else(|| format!("{key} is missing or not a whole number: {SHAPE}"))
                };
                FailingRule::new(figure("percent")?, figure("window")?).map(Some)
            }
            _ => Err(SHAPE.to_string()),
        }
    }

    /// Whether `failed` of `answered` passes the rule.
    pub fn passed_by(self, failed: u64, answered: u64) -> bool {
        failed * 100 > u64::from(self.percent) * answered
    }
}

/// Settings a run may change without touching the campaign file (flags, `msgbatch adjust`) or
/// that only say when it pauses: they are not part of the campaign's fingerprint, so changing
/// them never stops a resume.
pub const PACE_SETTINGS: [&str; 4] = ["concurrency", "messages_per_second", "budget", "pause_when_failing"];

/// The one rule for a concurrency, in the campaign file or on the command line.
pub fn check_concurrency(concurrency: usize) -> Result<usize, String> {
    if concurrency == 0 || concurrency > 256 {
        return Err(format!("must be 1 to 256, got {concurrency}"));
    }
    Ok(concurrency)
}

/// The one rule for a rate in messages per second.
pub fn check_rate(rate: f64) -> Result<f64, String> {
    if !(rate > 0.0 && rate.is_finite()) {
        return Err("must be a positive number".into());
    }
    Ok(rate)
}

/// The one rule for a budget in won.
pub fn check_budget(budget: i64) -> Result<i64, String> {
    if budget <= 0 {
        return Err(format!("must be a positive amount in won, got {budget}"));
    }
    Ok(budget)
}

/// A campaign ready to validate or run; every path is absolute.
#[derive(Debug, Clone)]
pub struct Campaign {
    pub file: PathBuf,
    pub name: String,
    pub kind: Kind,
    pub endpoint: Endpoint,
    pub credentials: Credentials,
    pub message: Message,
    pub recipients: Recipients,
    pub send: SendSettings,
    pub output_dir: Option<PathBuf>,
    pub prices: Option<BTreeMap<BillingClass, i64>>,
}

pub const MAX_CHUNK_SIZE: usize = 1_000;
pub const DEFAULT_CHUNK_SIZE: usize = 100;

impl Campaign {
    /// Reads and validates a campaign file.
    pub fn load(path: &Path) -> Result<Campaign, CampaignError> {
        let text = std::fs::read_to_string(path).map_err(|source| CampaignError::Read {
            path: path.into(),
            source,
        })?;
        Campaign::parse(&text, path)
    }

    /// Validates campaign text that was read from `path` (relative paths resolve against its folder).
    pub fn parse(text: &str, path: &Path) -> Result<Campaign, CampaignError> {
        let file: file::CampaignFile = toml::from_str(text).map_err(|error| CampaignError::Parse {
            path: path.into(),
            message: error.to_string(),
        })?;
        validate::Validator::new(path).campaign(file)
    }

    /// The opt-out list the plan applies: the campaign's, when it advertises (the law's opt-out
    /// covers advertising; a notification goes to everyone it concerns).
    pub fn opt_outs_applied(&self) -> Option<&Path> {
        self.recipients.opt_outs.as_deref().filter(|_| self.is_advertising())
    }

    /// The frequency cap's list the plan applies: the campaign's, when it advertises
    /// (notifications are neither counted nor capped).
    pub fn frequency_capped_applied(&self) -> Option<&Path> {
        self.recipients
            .frequency_capped
            .as_deref()
            .filter(|_| self.is_advertising())
    }

    /// Whether quiet hours apply: advertising SMS/LMS and every brand message.
    pub fn is_advertising(&self) -> bool {
        match &self.message {
            Message::Brand(_) => true,
            Message::Text(text) => text.advertising,
            Message::Notification(_) | Message::GatewayNotification(_) => false,
        }
    }

    /// The compiled text whose filled length decides a recipient's lane; `None` when the text
    /// lives at the service (a BASIC brand template) or the kind has none (a FREE image message).
    pub fn lane_text(&self) -> Option<&Template> {
        match &self.message {
            Message::Brand(Brand {
                content: BrandContent::Basic { .. },
                ..
            }) => None,
            message => message.text(),
        }
    }

    /// The message text as written in the campaign (`text` or the contents of `text_file`).
    pub fn message_text(&self) -> Option<&str> {
        self.message.text().map(Template::source)
    }

    /// The text of the fallback SMS/LMS sent when `alter` is true: `alter_message`, else the message text.
    pub fn fallback_text(&self) -> Option<&str> {
        self.message.fallback_text().map(Template::source)
    }

    /// Whether brand targeting reaches non-friends (`N`, `M`): billed as `bm_nonfriend`.
    pub fn reaches_non_friends(&self) -> bool {
        match &self.message {
            Message::Brand(brand) => brand.targeting.reaches_non_friends(),
            _ => false,
        }
    }

    /// The lanes this campaign may use.
    pub fn lanes(&self) -> Vec<Lane> {
        match self.kind {
            Kind::Alimtalk => vec![Lane::Alimtalk],
            Kind::Brand => vec![Lane::Brand],
            Kind::Sms => vec![Lane::Sms],
            Kind::Lms => vec![Lane::Lms],
            Kind::Text => vec![Lane::Sms, Lane::Lms],
            Kind::GatewayAlimtalk => vec![Lane::Gateway],
        }
    }

    /// Columns the recipients file must have.
    pub fn required_columns(&self) -> Vec<&str> {
        let recipients = &self.recipients;
        let mut columns = vec![recipients.phone_column.as_str()];
        columns.extend(recipients.name_column.as_deref());
        columns.extend(recipients.variables.iter().map(|(_, column)| column.as_str()));
        columns
    }
}
