//! Billing: charges, refunds and ledger entries, and the automatic fallback SMS/LMS with its class.

use super::ledger::{Reference, Shared};
use super::{GroupState, Rejection};
use crate::api::ledger::{BillingClass, LedgerKind};
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
        reference: Reference,
        send_group: Option<u32>,
    ) -> Option<i64> {
        self.charge_from(class, recipient, reference, send_group, None)
    }

    fn charge_from(
        &mut self,
        class: BillingClass,
        recipient: &str,
        reference: Reference,
        send_group: Option<u32>,
        callback_no: Option<&str>,
    ) -> Option<i64> {
        let amount = self.config.prices.of(class);
        if amount > self.balance {
            return None;
        }
        self.balance -= amount;
        // The ledger is where the sandbox shows which sender number a fallback went from.
        let callback_no = callback_no.map(|number| self.texts.intern(number));
        let shared = Shared {
            date: now_millis(),
            kind: LedgerKind::Charge,
            class,
            amount,
            send_group,
            callback_no,
        };
        self.push_ledger(recipient, reference, shared);
        Some(amount)
    }

    pub(super) fn refund(
        &mut self,
        class: BillingClass,
        recipient: &str,
        amount: i64,
        reference: Reference,
        send_group: Option<u32>,
    ) {
        self.balance += amount;
        let shared = Shared {
            date: now_millis(),
            kind: LedgerKind::Refund,
            class,
            amount,
            send_group,
            callback_no: None,
        };
        self.push_ledger(recipient, reference, shared);
    }

    fn push_ledger(&mut self, recipient: &str, reference: Reference, shared: Shared) {
        let recipient = self.numbers.pack(recipient);
        self.ledger.push(shared, recipient, reference);
    }

    /// The automatic fallback text message from `sender`: SMS or LMS by its EUC-KR length.
    /// Answers whether it went.
    pub(super) fn send_fallback(
        &mut self,
        recipient: &str,
        sender: &str,
        text: &str,
        reference: Reference,
        send_group: Option<u32>,
    ) -> bool {
        let class = match euc_kr_len(text).ok().and_then(TextLane::for_bytes) {
            Some(TextLane::Sms) => BillingClass::FallbackSms,
            Some(TextLane::Lms) => BillingClass::FallbackLms,
            None => return false,
        };
        self.charge_from(class, recipient, reference, send_group, Some(sender))
            .is_some()
    }
}
