//! The billing class of a row: the one rule for the primary class of a lane and the class of a fallback SMS/LMS.

use super::classify::Recipient;
use super::Scan;
use crate::api::ledger::BillingClass;
use crate::api::MappingEntry;
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

/// The class of the fallback a recipient gets when its message fails and `alter` is true: SMS
/// when the filled fallback text fits 90 EUC-KR bytes, else LMS; `None` without a fallback text.
pub fn fallback_class(campaign: &Campaign, recipient: &Recipient) -> Option<BillingClass> {
    let source = campaign.fallback_text()?;
    let vars = MappingEntry {
        name: recipient.name.clone(),
        vars: campaign
            .recipients
            .variables
            .iter()
            .map(|(key, _)| key.clone())
            .zip(recipient.vars.iter().cloned())
            .collect(),
    };
    let text = Template::compile(source)
        .render(&vars)
        .unwrap_or_else(|_| source.to_string());
    match euc_kr_len(&text).ok().and_then(TextLane::for_bytes)? {
        TextLane::Sms => Some(BillingClass::FallbackSms),
        TextLane::Lms => Some(BillingClass::FallbackLms),
    }
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
