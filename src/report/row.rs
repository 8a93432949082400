//! One report row, typed: a planned row joined with its chunk's results and final record, and what it was charged.

use crate::api::gateway::final_result;
use crate::api::ledger::BillingClass;
use crate::campaign::{Campaign, Kind, Lane};
use crate::engine::checkpoint::{ChunkRecord, ChunkState, RecipientResult};
use crate::input::FieldText;
use crate::plan::{billing, Fate, PlannedRow, Recipient, RejectReason};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// What became of a row, from the plan and the checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Rejected(RejectReason),
    Duplicate,
    Suppressed,
    /// Held back by the workspace's frequency cap.
    Capped,
    /// Valid, in a chunk not sent yet.
    Pending,
    /// In a chunk whose request may or may not have reached the service.
    Uncertain,
    /// The service's per-recipient status, and whether it means the service took the message.
    Answered {
        status: FieldText,
        accepted: bool,
    },
}

impl Outcome {
    /// The report's `acceptance` text: `REJECTED:<reason>`, `DUPLICATE`, `SUPPRESSED`, `CAPPED`, `PENDING`,
    /// `UNCERTAIN`, or the service's status (lent, not copied: this is every row of a report).
    pub fn acceptance(&self) -> Cow<'_, str> {
        match self {
            Outcome::Rejected(reason) => Cow::Owned(format!("REJECTED:{}", reason.as_str())),
            Outcome::Duplicate => Cow::Borrowed("DUPLICATE"),
            Outcome::Suppressed => Cow::Borrowed("SUPPRESSED"),
            Outcome::Capped => Cow::Borrowed("CAPPED"),
            Outcome::Pending => Cow::Borrowed("PENDING"),
            Outcome::Uncertain => Cow::Borrowed("UNCERTAIN"),
            Outcome::Answered { status, .. } => Cow::Borrowed(status),
        }
    }

    /// The summary's bucket: the acceptance text without a reject's reason.
    pub fn bucket(&self) -> Cow<'_, str> {
        match self {
            Outcome::Rejected(_) => Cow::Borrowed("REJECTED"),
            other => other.acceptance(),
        }
    }
}

/// Where a row stands with the bill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChargeState {
    Charged,
    Refunded,
    NotCharged,
    /// Gateway record still `GW_PENDING`.
    Provisional,
    /// Gateway record `GIVEUP`: charged, never delivered.
    Disputed,
    /// The request may or may not have reached the service.
    Uncertain,
}

impl ChargeState {
    pub fn as_str(self) -> &'static str {
        match self {
            ChargeState::Charged => "charged",
            ChargeState::Refunded => "refunded",
            ChargeState::NotCharged => "not_charged",
            ChargeState::Provisional => "provisional",
            ChargeState::Disputed => "disputed",
            ChargeState::Uncertain => "uncertain",
        }
    }

    /// Whether the ledger holds a charge for the row.
    pub fn billed(self) -> bool {
        matches!(
            self,
            ChargeState::Charged | ChargeState::Refunded | ChargeState::Provisional | ChargeState::Disputed
        )
    }
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportRow {
    pub row: u64,
    pub phone: FieldText,
    pub name: FieldText,
    pub kind: Kind,
    pub lane: Option<Lane>,
    pub chunk: Option<u32>,
    pub uid: FieldText,
    pub id: FieldText,
    pub send_group_id: FieldText,
    pub outcome: Outcome,
    pub final_result: FieldText,
    pub error: FieldText,
    /// The class of the primary message of a valid row.
    pub billing_class: Option<BillingClass>,
    pub charge_state: ChargeState,
    /// The primary charge (0 when not charged; the refunded amount when refunded). `None` without `[prices]`.
    pub amount: Option<i64>,
    /// The class of the fallback SMS/LMS the service sent, if it sent one.
    pub fallback: Option<BillingClass>,
    pub fallback_amount: Option<i64>,
}

impl ReportRow {
    /// Whether the service took the message or its fallback: such a row is never sent again.
    pub fn taken(&self) -> bool {
        self.fallback.is_some()
            || matches!(self.outcome, Outcome::Answered { accepted: true, .. })
            || self.charge_state.billed()
    }
}

/// Prices per billing class, when the campaign gives them.
pub(super) struct Pricing {
    prices: Option<BTreeMap<BillingClass, i64>>,
}

impl Pricing {
    pub fn new(campaign: &Campaign) -> Pricing {
        Pricing {
            prices: campaign.prices.clone(),
        }
    }

    fn of(&self, class: BillingClass) -> Option<i64> {
        self.prices.as_ref().map(|p| p.get(&class).copied().unwrap_or(0))
    }
}

/// What the checkpoint holds for a sent row.
pub(super) struct Sent<'a> {
    pub record: &'a ChunkRecord,
    /// `None` while the chunk is in flight (uncertain).
    pub result: Option<&'a RecipientResult>,
    /// The gateway final record (`result`, `errorMessage`), once collected.
    pub final_record: Option<(String, Option<String>)>,
}

/// A report row for a planned row; `sent` is what the checkpoint holds for a valid row's chunk.
pub(super) fn build(campaign: &Campaign, planned: &PlannedRow, sent: Option<Sent<'_>>, pricing: &Pricing) -> ReportRow {
    let mut row = ReportRow {
        row: planned.row.row,
        phone: planned.row.phone.clone().unwrap_or_default(),
        name: planned.row.name.clone().unwrap_or_default(),
        kind: campaign.kind,
        lane: None,
        chunk: None,
        uid: FieldText::default(),
        id: FieldText::default(),
        send_group_id: FieldText::default(),
        outcome: Outcome::Pending,
        final_result: FieldText::default(),
        error: FieldText::default(),
        billing_class: None,
        charge_state: ChargeState::NotCharged,
        amount: None,
        fallback: None,
        fallback_amount: None,
    };
    let recipient = match &planned.fate {
        Fate::Rejected(rejection) => {
            row.outcome = Outcome::Rejected(rejection.reason);
            row.error = compact_str::format_compact!("{}: {}", rejection.column, rejection.detail);
            return row;
        }
        Fate::Suppressed => {
            row.outcome = Outcome::Suppressed;
            return row;
        }
        Fate::Capped(mark) => {
            row.outcome = Outcome::Capped;
            row.error = compact_str::format_compact!(
                "frequency_cap: last sent {}",
                crate::plan::capped::day_text(mark.last_sent)
            );
            return row;
        }
        Fate::Duplicate => {
            row.outcome = Outcome::Duplicate;
            return row;
        }
        Fate::Valid(recipient) => recipient,
    };
    row.phone = recipient.phone.clone();
    row.name = recipient.name.clone().unwrap_or_default();
    row.lane = Some(recipient.lane);
    row.chunk = planned.chunk.map(|slot| slot.key.index);
    row.billing_class = Some(billing::primary_class(campaign, recipient.lane));
    let Some(sent) = sent else {
        return row;
    };
    let Some(result) = sent.result.filter(|_| sent.record.state == ChunkState::Done) else {
        row.outcome = Outcome::Uncertain;
        row.charge_state = ChargeState::Uncertain;
        row.error = sent.record.note.as_deref().unwrap_or_default().into();
        return row;
    };
    row.uid = result.uid.as_str().into();
    row.id = result.id.as_deref().unwrap_or_default().into();
    row.send_group_id = sent.record.send_group_id.as_deref().unwrap_or_default().into();
    row.outcome = Outcome::Answered {
        status: result.status.as_str().into(),
        accepted: result.accepted,
    };
    row.error = result.error.as_deref().unwrap_or_default().into();
    if campaign.kind == Kind::GatewayAlimtalk {
        if result.accepted {
            match sent.final_record {
                Some((result, error_message)) => {
                    row.final_result = result.into();
                    if let Some(message) = error_message {
                        row.error = message.into();
                    }
                }
                None => row.final_result = final_result::PENDING.into(),
            }
        }
    } else {
        // The standard deployment's send response is the final record.
        row.final_result = result.status.as_str().into();
    }
    charge(&mut row, campaign, recipient, result, pricing);
    row
}

/// Fills the charge columns of an answered row from its acceptance and final result.
fn charge(
    row: &mut ReportRow,
    campaign: &Campaign,
    recipient: &Recipient,
    result: &RecipientResult,
    pricing: &Pricing,
) {
    let price = row.billing_class.and_then(|class| pricing.of(class));
    let zero = price.map(|_| 0);
    let mut fallback = false;
    (row.charge_state, row.amount) = if campaign.kind == Kind::GatewayAlimtalk {
        match (result.accepted, row.final_result.as_str()) {
            (false, _) => (ChargeState::NotCharged, zero),
            (true, final_result::OK) => (ChargeState::Charged, price),
            (true, final_result::FAILED) => {
                fallback = true;
                (ChargeState::Refunded, price)
            }
            (true, final_result::GIVEUP) => (ChargeState::Disputed, price),
            (true, _) => (ChargeState::Provisional, price),
        }
    } else if result.accepted {
        (ChargeState::Charged, price)
    } else {
        // Rule 4: a CH_* failure with `alter` sends a fallback SMS.
        fallback = billing::fallback_follows(recipient.lane, &result.status);
        (ChargeState::NotCharged, zero)
    };
    if fallback {
        row.fallback = billing::fallback_class(campaign, recipient);
        row.fallback_amount = row.fallback.and_then(|class| pricing.of(class));
    }
}
