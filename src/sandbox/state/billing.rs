//! Billing: charges, refunds and ledger entries, and the automatic fallback SMS/LMS with its class.

use super::{GroupRef, GroupState, Rejection, SandboxState};
use crate::api::ledger::{BillingClass, Ledger, LedgerEntry, LedgerKind};
use crate::api::now_millis;
use crate::text::{euc_kr_len, TextLane};

impl GroupState {
    /// Checks `callbackNo` where `alter` asks for a fallback: the standard deployment's
    /// notification and brand endpoints require it ("yes when `alter` is true").
    pub(super) fn check_fallback_callback(
        &self,
        alter: bool,
        callback_no: Option<&str>,
        reject: fn(&str, String) -> Rejection,
    ) -> Result<(), Rejection> {
        if !alter {
            return Ok(());
        }
        match callback_no.filter(|number| !number.is_empty()) {
            None => Err(reject(
                "SBX_CALLBACK_REQUIRED",
                "callbackNo is required when alter is true".into(),
            )),
            Some(number) => self.check_callback_registered(number, reject),
        }
    }

    /// The sender number of a gateway send's fallback, where the spec makes `callbackNo`
    /// optional even with `alter`: the request's, else the channel's, else the group's first
    /// registered number; `None` when there is none. A number given but not registered is refused.
    pub(super) fn gateway_fallback_sender(
        &self,
        request_callback: Option<&str>,
        channel_callback: Option<&str>,
    ) -> Result<Option<String>, Rejection> {
        let given = [request_callback, channel_callback]
            .into_iter()
            .flatten()
            .find(|number| !number.is_empty());
        match given {
            Some(number) => {
                self.check_callback_registered(number, Rejection::fail)?;
                Ok(Some(number.to_string()))
            }
            None => Ok(self.config.callback_numbers.first().cloned()),
        }
    }

    /// Charges one message, or answers `None` when the balance does not cover it.
    pub(super) fn charge(
        &mut self,
        class: BillingClass,
        recipient: &str,
        reference: String,
        send_group_id: Option<&str>,
    ) -> Option<i64> {
        let amount = self.config.prices.of(class);
        if amount > self.balance {
            return None;
        }
        self.balance -= amount;
        self.push_ledger(LedgerKind::Charge, class, recipient, amount, reference, send_group_id);
        Some(amount)
    }

    pub(super) fn refund(
        &mut self,
        class: BillingClass,
        recipient: &str,
        amount: i64,
        reference: String,
        send_group_id: Option<&str>,
    ) {
        self.balance += amount;
        self.push_ledger(LedgerKind::Refund, class, recipient, amount, reference, send_group_id);
    }

    pub(super) fn push_ledger(
        &mut self,
        kind: LedgerKind,
        class: BillingClass,
        recipient: &str,
        amount: i64,
        reference: String,
        send_group_id: Option<&str>,
    ) {
        self.ledger.push(LedgerEntry {
            seq: self.ledger.len() as u64 + 1,
            date: now_millis(),
            group_id: self.config.id.clone(),
            kind,
            billing_class: class,
            recipient: recipient.to_string(),
            amount,
            reference,
            send_group_id: send_group_id.map(str::to_string),
            callback_no: None,
        });
    }

    /// The automatic fallback text message from `sender`: SMS or LMS by its EUC-KR length.
    /// Answers whether it went.
    pub(super) fn send_fallback(
        &mut self,
        recipient: &str,
        sender: &str,
        text: &str,
        reference: String,
        send_group_id: Option<&str>,
    ) -> bool {
        let class = match euc_kr_len(text).ok().and_then(TextLane::for_bytes) {
            Some(TextLane::Sms) => BillingClass::FallbackSms,
            Some(TextLane::Lms) => BillingClass::FallbackLms,
            None => return false,
        };
        if self.charge(class, recipient, reference, send_group_id).is_none() {
            return false;
        }
        // The ledger is where the sandbox shows which sender number a fallback went from.
        if let Some(entry) = self.ledger.last_mut() {
            entry.callback_no = Some(sender.to_string());
        }
        true
    }
}

impl SandboxState {
    /// `GET /_sandbox/ledger`.
    pub fn ledger(&mut self, group: GroupRef) -> Ledger {
        let g = self.group(group);
        Ledger {
            group_id: g.config.id.clone(),
            balance: g.balance,
            entries: g.ledger.clone(),
        }
    }

    /// The JSON body of `GET /_sandbox/ledger`.
    pub fn ledger_json(&mut self, group: GroupRef) -> Vec<u8> {
        serde_json::to_vec(&self.ledger(group)).expect("a ledger serialises")
    }
}
