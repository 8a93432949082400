//! Billing classes and the sandbox's admin views: the ledger of charges and refunds, and per-number send counts.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// What a message is billed as.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum BillingClass {
    Alimtalk,
    BmFriend,
    BmNonfriend,
    Sms,
    Lms,
    FallbackSms,
    FallbackLms,
}

impl BillingClass {
    pub const ALL: [BillingClass; 7] = [
        BillingClass::Alimtalk,
        BillingClass::BmFriend,
        BillingClass::BmNonfriend,
        BillingClass::Sms,
        BillingClass::Lms,
        BillingClass::FallbackSms,
        BillingClass::FallbackLms,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            BillingClass::Alimtalk => "alimtalk",
            BillingClass::BmFriend => "bm_friend",
            BillingClass::BmNonfriend => "bm_nonfriend",
            BillingClass::Sms => "sms",
            BillingClass::Lms => "lms",
            BillingClass::FallbackSms => "fallback_sms",
            BillingClass::FallbackLms => "fallback_lms",
        }
    }

    /// The class [`BillingClass::as_str`] names.
    pub fn parse(text: &str) -> Option<BillingClass> {
        BillingClass::ALL.into_iter().find(|class| class.as_str() == text)
    }
}

impl fmt::Display for BillingClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum LedgerKind {
    Charge,
    Refund,
}

impl LedgerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LedgerKind::Charge => "charge",
            LedgerKind::Refund => "refund",
        }
    }
}

/// One charge or refund. `reference` is the standard `uid` or the gateway `id` it belongs to.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LedgerEntry {
    pub seq: u64,
    pub date: i64,
    pub group_id: String,
    pub kind: LedgerKind,
    pub billing_class: BillingClass,
    pub recipient: String,
    pub amount: i64,
    pub reference: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_group_id: Option<String>,
    /// The sender number a fallback SMS/LMS went from (fallback classes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_no: Option<String>,
}

/// `GET /_sandbox/ledger`: a group's entries in order and its balance now.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Ledger {
    pub group_id: String,
    pub balance: i64,
    pub entries: Vec<LedgerEntry>,
}

/// Charged and refunded totals of one billing class.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct ClassTotals {
    pub charged: i64,
    pub refunded: i64,
    pub charges: u64,
    pub refunds: u64,
}

impl Ledger {
    /// Totals per billing class.
    pub fn totals(&self) -> BTreeMap<BillingClass, ClassTotals> {
        let mut totals: BTreeMap<BillingClass, ClassTotals> = BTreeMap::new();
        for entry in &self.entries {
            let class = totals.entry(entry.billing_class).or_default();
            match entry.kind {
                LedgerKind::Charge => {
                    class.charged += entry.amount;
                    class.charges += 1;
                }
                LedgerKind::Refund => {
                    class.refunded += entry.amount;
                    class.refunds += 1;
                }
            }
        }
        totals
    }
}

/// `GET /_sandbox/sent`: how many times each recipient number appeared in a processed send
/// request of the group (any kind, any outcome), and the total.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct SentCounts {
    pub group_id: String,
    pub total: u64,
    pub numbers: BTreeMap<String, u32>,
}

impl SentCounts {
    /// Numbers that were sent more than once.
    pub fn repeated(&self) -> Vec<(&str, u32)> {
        self.numbers
            .iter()
            .filter(|(_, &count)| count > 1)
            .map(|(n, &c)| (n.as_str(), c))
            .collect()
    }
}

/// `GET /_sandbox/tokens`: verification tokens the sandbox "sent by SMS".
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct TokenOutbox {
    pub tokens: Vec<SentToken>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SentToken {
    pub phone_number: String,
    pub yellow_id: String,
    pub token: String,
}
