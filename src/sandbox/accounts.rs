//! The sandbox's accounts file (TOML): groups, keys, services, templates, channels, prices, outcome rules and faults.

pub use crate::api::faults::{FaultConfig, FaultScope};

use crate::api::channel::{sender_status, Category};
use crate::api::gateway::GatewayButton;
use crate::api::ledger::BillingClass;
use crate::api::standard::ChatBubbleType;
use crate::engine::rules::parse_duration;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

/// The accounts file the sandbox starts with when none is given.
pub const DEMO_ACCOUNTS: &str = include_str!("demo_accounts.toml");

#[derive(Debug, thiserror::Error)]
pub enum AccountsError {
    #[error("cannot read accounts file {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("accounts file {path}: {source}")]
    Parse { path: String, source: Box<toml::de::Error> },
    #[error("accounts file {path}: {message}")]
    Invalid { path: String, message: String },
}

/// The whole accounts file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Accounts {
    /// How long a gateway send stays `GW_PENDING`, like `300s`, `2s` or `500ms`.
    #[serde(default = "default_settle_after")]
    pub settle_after: String,
    #[serde(default)]
    pub faults: FaultConfig,
    #[serde(default = "default_categories")]
    pub categories: Vec<Category>,
    #[serde(default)]
    pub groups: Vec<GroupConfig>,
}

fn default_settle_after() -> String {
    "300s".to_string()
}

fn default_categories() -> Vec<Category> {
    [
        ("00100010001", "건강/병원"),
        ("00200020001", "쇼핑/온라인몰"),
        ("00300030001", "금융/카드"),
        ("00400040001", "교육/학원"),
        ("00500050001", "여행/숙박"),
    ]
    .into_iter()
    .map(|(code, name)| Category {
        code: code.to_string(),
        name: name.to_string(),
    })
    .collect()
}

/// One customer group.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupConfig {
    pub id: String,
    pub api_key: String,
    /// Granted gateway eligibility.
    #[serde(default = "yes")]
    pub gateway: bool,
    #[serde(default)]
    pub balance: i64,
    #[serde(default)]
    pub alimtalk_services: Vec<u64>,
    #[serde(default)]
    pub brand_services: Vec<u64>,
    /// Service numbers for both SMS and LMS.
    #[serde(default)]
    pub sms_services: Vec<u64>,
    /// Pre-registered sender numbers (`callbackNo`).
    #[serde(default)]
    pub callback_numbers: Vec<String>,
    /// Status given to sender profiles issued through `POST /channel/sender`.
    #[serde(default = "default_new_sender_status")]
    pub new_sender_status: String,
    #[serde(default)]
    pub prices: Prices,
    #[serde(default)]
    pub templates: Vec<TemplateConfig>,
    #[serde(default)]
    pub brand_templates: Vec<BrandTemplateConfig>,
    #[serde(default)]
    pub sender_keys: Vec<SenderKeyConfig>,
    #[serde(default)]
    pub channels: Vec<ChannelConfig>,
    #[serde(default)]
    pub outcomes: Vec<OutcomeRule>,
}

fn yes() -> bool {
    true
}

fn default_new_sender_status() -> String {
    sender_status::ACTIVE.to_string()
}

/// Price per message of each billing class, in the account's currency unit.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct Prices {
    pub alimtalk: i64,
    pub bm_friend: i64,
    pub bm_nonfriend: i64,
    pub sms: i64,
    pub lms: i64,
    pub fallback_sms: i64,
    pub fallback_lms: i64,
}

impl Prices {
    /// The price of one message of `class`.
    pub fn of(&self, class: BillingClass) -> i64 {
        match class {
            BillingClass::Alimtalk => self.alimtalk,
            BillingClass::BmFriend => self.bm_friend,
            BillingClass::BmNonfriend => self.bm_nonfriend,
            BillingClass::Sms => self.sms,
            BillingClass::Lms => self.lms,
            BillingClass::FallbackSms => self.fallback_sms,
            BillingClass::FallbackLms => self.fallback_lms,
        }
    }
}

/// A notification template: `service` ties it to the standard deployment, `sender_key` to the gateway.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TemplateConfig {
    pub code: String,
    #[serde(default)]
    pub service: Option<u64>,
    #[serde(default)]
    pub sender_key: Option<String>,
    pub text: String,
    /// Set for title (emphasis) templates; requests must then carry the same `title`.
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub buttons: Vec<GatewayButton>,
}

/// A brand message template (for `sendType` `BASIC`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrandTemplateConfig {
    pub code: String,
    pub service: u64,
    #[serde(default)]
    pub chat_bubble_type: Option<ChatBubbleType>,
    #[serde(default)]
    pub text: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SenderKeyConfig {
    pub key: String,
    #[serde(default)]
    pub yellow_id: Option<String>,
    #[serde(default = "default_new_sender_status")]
    pub status: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelConfig {
    pub id: String,
    pub name: String,
    pub sender_key: String,
    #[serde(default)]
    pub callback_no: Option<String>,
    #[serde(default)]
    pub friends: u64,
    /// Approved for `N`/`M` targeting (which also needs 50,000 friends or more).
    #[serde(default)]
    pub nm_approved: bool,
}

/// What happens to a recipient whose number ends with `ends_with`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutcomeRule {
    pub ends_with: String,
    pub outcome: Outcome,
    /// The `CH_*` code for `channel_failure` (default `CH_SBX_UNDELIVERABLE`).
    #[serde(default)]
    pub code: Option<String>,
    /// Failure text for `gateway_failed` / `gateway_rejected`.
    #[serde(default)]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Notification or brand delivery fails with a `CH_*` code (fallback SMS when `alter`).
    ChannelFailure,
    /// Not a friend of any channel (brand targeting `I`/`F` does not reach them).
    NotFriend,
    /// Gateway send accepted, then settles `FAILED` with a refund.
    GatewayFailed,
    /// Gateway send accepted, then settles `GIVEUP`.
    GatewayGiveup,
    /// Gateway acceptance refused (`FAILED` in `results[]`, not charged).
    GatewayRejected,
    /// Gateway acceptance `ERROR` (record not stored, not charged).
    GatewayError,
    /// SMS/LMS answered `ERROR` (not charged).
    SmsError,
}

impl Accounts {
    pub fn demo() -> Accounts {
        Accounts::parse(DEMO_ACCOUNTS, "<built-in demo accounts>").expect("built-in demo accounts are valid")
    }

    pub fn load(path: &Path) -> Result<Accounts, AccountsError> {
        let display = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| AccountsError::Read {
            path: display.clone(),
            source,
        })?;
        Accounts::parse(&text, &display)
    }

    pub fn parse(text: &str, origin: &str) -> Result<Accounts, AccountsError> {
        let accounts: Accounts = toml::from_str(text).map_err(|source| AccountsError::Parse {
            path: origin.to_string(),
            source: Box::new(source),
        })?;
        accounts.validate().map_err(|message| AccountsError::Invalid {
            path: origin.to_string(),
            message,
        })?;
        Ok(accounts)
    }

    pub fn settle_after(&self) -> Duration {
        parse_duration(&self.settle_after).expect("validated")
    }

    fn validate(&self) -> Result<(), String> {
        parse_duration(&self.settle_after).map_err(|error| format!("settle_after: {error}"))?;
        self.faults.validate()?;
        let mut ids = HashSet::new();
        let mut keys = HashSet::new();
        for (index, group) in self.groups.iter().enumerate() {
            let at = format!("groups[{index}] ({})", group.id);
            if group.id.is_empty() || group.api_key.is_empty() {
                return Err(format!("{at}: id and api_key must not be empty"));
            }
            if !ids.insert(group.id.as_str()) {
                return Err(format!("{at}: id is used by another group"));
            }
            if !keys.insert(group.api_key.as_str()) {
                return Err(format!("{at}: api_key is used by another group"));
            }
            for status in std::iter::once(&group.new_sender_status).chain(group.sender_keys.iter().map(|s| &s.status)) {
                if status != sender_status::ACTIVE && status != sender_status::IN_REVIEW {
                    return Err(format!("{at}: sender status must be ACTIVE or IN_REVIEW, got {status}"));
                }
            }
            let sender_keys: HashSet<&str> = group.sender_keys.iter().map(|s| s.key.as_str()).collect();
            for channel in &group.channels {
                if !sender_keys.contains(channel.sender_key.as_str()) {
                    return Err(format!(
                        "{at}: channel {} names unknown sender_key {}",
                        channel.id, channel.sender_key
                    ));
                }
            }
            for template in &group.templates {
                if template.service.is_none() && template.sender_key.is_none() {
                    return Err(format!(
                        "{at}: template {} needs a service or a sender_key",
                        template.code
                    ));
                }
            }
            for rule in &group.outcomes {
                if rule.ends_with.is_empty() || !rule.ends_with.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(format!(
                        "{at}: outcome ends_with must be digits, got {:?}",
                        rule.ends_with
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_accounts_parse() {
        let accounts = Accounts::demo();
        assert_eq!(accounts.settle_after(), Duration::from_secs(300));
        assert!(accounts.groups.len() >= 2);
    }

    #[test]
    fn unknown_keys_are_refused_with_their_name() {
        let error = Accounts::parse("[[groups]]\nid='a'\napi_key='k'\nbalanse=3\n", "t.toml").unwrap_err();
        assert!(error.to_string().contains("balanse"), "{error}");
    }

    #[test]
    fn duplicate_keys_are_refused() {
        let text = "[[groups]]\nid='a'\napi_key='k'\n[[groups]]\nid='b'\napi_key='k'\n";
        assert!(Accounts::parse(text, "t").unwrap_err().to_string().contains("api_key"));
    }
}
