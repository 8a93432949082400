//! The billing class of a row: the one rule for the primary class of a lane and the class of a fallback SMS/LMS.

use super::classify::Recipient;
use super::Scan;
use crate::api::ledger::BillingClass;
use crate::campaign::{Campaign, Lane};
use crate::template::Template;
use crate::text::{euc_kr_len, TextLane};
use std::collections::BTreeMap;

/// The class a valid row of `lane` is billed in when the service takes it.
pub fn primary_class(campaign: &Campaign, lane: Lane) -> BillingClass {
    match lane {
        Lane::Alimtalk | Lane::Gateway => BillingClass::Alimtalk,
        Lane::Brand if campaign.reaches_non_friends() => BillingClass::BmNonfriend,
        Lane::Brand => BillingClass::BmFriend,
        Lane::Sms => BillingClass::Sms,
        Lane::Lms => BillingClass::Lms,
    }
}

/// The fallback SMS/LMS a recipient gets when its message fails and `alter` is true.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Fallback {
    pub text: String,
    pub class: BillingClass,
    /// Its length in EUC-KR bytes.
    pub bytes: usize,
}

/// The fallback of a recipient: its text filled, and SMS when that fits 90 EUC-KR bytes, else
/// LMS; `None` without a fallback text (or one that no text message can carry).
pub fn fallback(campaign: &Campaign, recipient: &Recipient) -> Option<Fallback> {
    let source = campaign.fallback_text()?;
    let text = Template::compile(source)
        .render(&recipient.mapping(campaign))
        .unwrap_or_else(|_| source.to_string());
    let bytes = euc_kr_len(&text).ok()?;
    let class = match TextLane::for_bytes(bytes)? {
        TextLane::Sms => BillingClass::FallbackSms,
        TextLane::Lms => BillingClass::FallbackLms,
    };
    Some(Fallback { text, class, bytes })
}

/// The class of a recipient's fallback (see [`fallback`]).
pub fn fallback_class(campaign: &Campaign, recipient: &Recipient) -> Option<BillingClass> {
    fallback(campaign, recipient).map(|fallback| fallback.class)
}

/// The charge the valid rows would make, per billing class, when prices are given (fallbacks not included).
pub fn estimate(campaign: &Campaign, scan: &Scan) -> Option<BTreeMap<BillingClass, i64>> {
    let prices = campaign.prices.as_ref()?;
    let mut charge = BTreeMap::new();
    for (lane, count) in &scan.per_lane {
        let class = primary_class(campaign, *lane);
        let price = prices.get(&class).copied().unwrap_or(0);
        *charge.entry(class).or_insert(0) += price * *count as i64;
    }
    Some(charge)
}
