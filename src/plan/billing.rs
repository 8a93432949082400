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
    fallback_with(&Template::compile(campaign.fallback_text()?), campaign, recipient)
}

/// As [`fallback`], with the fallback text already compiled.
fn fallback_with(template: &Template, campaign: &Campaign, recipient: &Recipient) -> Option<Fallback> {
    let text = template
        .render(&recipient.mapping(campaign))
        .unwrap_or_else(|_| template.source().to_string());
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

/// Whether the service follows a standard-deployment answer with the campaign's fallback SMS:
/// a `CH_*` failure of a notification or brand message (rule 4 of the brand message; the same
/// for notifications).
pub fn fallback_follows(lane: Lane, status: &str) -> bool {
    status.starts_with("CH_") && matches!(lane, Lane::Alimtalk | Lane::Brand)
}

/// What an answered recipient costs as far as the run can know: `charged` now, and `kept` still
/// reserved for a charge that may follow (a gateway message's fallback, should its final result
/// be `FAILED`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cost {
    pub charged: i64,
    pub kept: i64,
}

/// The campaign's prices applied to recipients: the worst case of sending one, and what an
/// answer costs. One rule for the spend cap, so that a reservation always covers its charge.
pub struct Pricer {
    primary: BTreeMap<Lane, i64>,
    /// The fallback's text and its prices, when `alter` is on.
    fallback: Option<FallbackPrices>,
}

struct FallbackPrices {
    template: Template,
    sms: i64,
    lms: i64,
}

impl Pricer {
    /// `None` without `[prices]`.
    pub fn new(campaign: &Campaign) -> Option<Pricer> {
        let prices = campaign.prices.as_ref()?;
        let price = |class: BillingClass| prices.get(&class).copied().unwrap_or(0);
        Some(Pricer {
            primary: campaign
                .lanes()
                .into_iter()
                .map(|lane| (lane, price(primary_class(campaign, lane))))
                .collect(),
            fallback: campaign.fallback_text().map(|text| FallbackPrices {
                template: Template::compile(text),
                sms: price(BillingClass::FallbackSms),
                lms: price(BillingClass::FallbackLms),
            }),
        })
    }

    fn primary(&self, lane: Lane) -> i64 {
        self.primary.get(&lane).copied().unwrap_or(0)
    }

    /// The price of a recipient's fallback, were it sent (0 when it has none).
    fn fallback_price(&self, campaign: &Campaign, recipient: &Recipient) -> i64 {
        let Some(fallback) = &self.fallback else { return 0 };
        if !matches!(recipient.lane, Lane::Alimtalk | Lane::Brand | Lane::Gateway) {
            return 0;
        }
        // Filling the text is needed only to tell SMS from LMS when they cost differently.
        if fallback.sms == fallback.lms {
            return fallback.sms;
        }
        match fallback_with(&fallback.template, campaign, recipient).map(|f| f.class) {
            Some(BillingClass::FallbackSms) => fallback.sms,
            Some(_) => fallback.lms,
            None => 0,
        }
    }

    /// The most one recipient can cost: its primary price, plus its fallback's when `alter` is on.
    pub fn worst_case(&self, campaign: &Campaign, recipient: &Recipient) -> i64 {
        self.primary(recipient.lane) + self.fallback_price(campaign, recipient)
    }

    /// The worst case of a chunk's recipients, filling no text when the fallback's class cannot
    /// change its price.
    pub fn worst_case_of(&self, campaign: &Campaign, recipients: &[Recipient]) -> i64 {
        let fixed = self
            .fallback
            .as_ref()
            .is_none_or(|fallback| fallback.sms == fallback.lms);
        match recipients.first() {
            Some(first) if fixed => self.worst_case(campaign, first) * recipients.len() as i64,
            _ => recipients
                .iter()
                .map(|recipient| self.worst_case(campaign, recipient))
                .sum(),
        }
    }

    /// The most a recipient of `lane` can cost, whatever its text: for a pending recipient not
    /// read again (the suggested budget of a stopped run, records that carry no cost).
    pub fn worst_case_of_lane(&self, lane: Lane) -> i64 {
        let fallback = match (&self.fallback, lane) {
            (Some(fallback), Lane::Alimtalk | Lane::Brand | Lane::Gateway) => fallback.sms.max(fallback.lms),
            _ => 0,
        };
        self.primary(lane) + fallback
    }

    /// What the service's answer for one recipient costs: the primary price when it took the
    /// message; the fallback's when a standard `CH_*` failure is followed by one; a gateway
    /// acceptance keeps its fallback reserved until its final result is known.
    pub fn cost(&self, campaign: &Campaign, recipient: &Recipient, status: &str, accepted: bool) -> Cost {
        match (recipient.lane, accepted) {
            (Lane::Gateway, true) => Cost {
                charged: self.primary(Lane::Gateway),
                kept: self.fallback_price(campaign, recipient),
            },
            (_, true) => Cost {
                charged: self.primary(recipient.lane),
                kept: 0,
            },
            (lane, false) if fallback_follows(lane, status) => Cost {
                charged: self.fallback_price(campaign, recipient),
                kept: 0,
            },
            (_, false) => Cost::default(),
        }
    }
}

/// The charge of the valid rows were every fallback sent too: the most the campaign can cost
/// (`None` without prices).
pub fn worst_case(campaign: &Campaign, scan: &Scan) -> Option<i64> {
    let primary: i64 = estimate(campaign, scan)?.values().sum();
    let prices = campaign.prices.as_ref()?;
    let fallbacks: i64 = scan
        .fallbacks
        .iter()
        .map(|(class, count)| prices.get(class).copied().unwrap_or(0) * *count as i64)
        .sum();
    Some(primary + fallbacks)
}

/// Counts the fallback class of each valid row while the plan is walked, when `alter` is on
/// and prices are given (nothing to count otherwise).
pub(super) struct FallbackCounter {
    template: Option<Template>,
}

impl FallbackCounter {
    pub fn new(campaign: &Campaign) -> FallbackCounter {
        FallbackCounter {
            template: campaign
                .prices
                .as_ref()
                .and(campaign.fallback_text())
                .map(Template::compile),
        }
    }

    /// Whether there is anything to count: a fallback text, and prices.
    pub fn counts(&self) -> bool {
        self.template.is_some()
    }

    pub fn count(&self, campaign: &Campaign, recipient: &Recipient, scan: &mut Scan) {
        let Some(template) = &self.template else { return };
        if !matches!(recipient.lane, Lane::Alimtalk | Lane::Brand | Lane::Gateway) {
            return;
        }
        if let Some(fallback) = fallback_with(template, campaign, recipient) {
            *scan.fallbacks.entry(fallback.class).or_default() += 1;
        }
    }
}
