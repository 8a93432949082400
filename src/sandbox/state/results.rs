//! Gateway results: send records as the sandbox stores them, settling to their final state, the single lookup and the send-group listing.

use super::compact::PackedNumber;
use super::ledger::Reference;
use super::{parse_limit, GroupRef, GroupState, Rejection, SandboxState};
use crate::api::gateway::{final_result, ResultPage, SendRecord, RESULT_PAGE_DEFAULT, RESULT_PAGE_MAX};
use crate::api::ledger::BillingClass;
use crate::sandbox::accounts::Outcome;
use crate::sandbox::faults::ListingFaults;
use std::time::Instant;
use uuid::Uuid;

/// Where a gateway send record stands; its `result`, `status` and `rawStatus` follow from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RecordState {
    /// Acceptance failed (`FAILED` in `results[]`), not charged.
    Refused,
    Pending,
    Delivered,
    Failed,
    GaveUp,
}

/// The downstream code a record shows while pending.
pub(super) const QUEUED_RAW_STATUS: &str = "SBX_QUEUED";

impl RecordState {
    fn result(self) -> &'static str {
        match self {
            RecordState::Refused | RecordState::Failed => final_result::FAILED,
            RecordState::Pending => final_result::PENDING,
            RecordState::Delivered => final_result::OK,
            RecordState::GaveUp => final_result::GIVEUP,
        }
    }

    fn status(self) -> &'static str {
        match self {
            RecordState::Refused | RecordState::Failed => "FAILED",
            RecordState::Pending | RecordState::GaveUp => "ENABLE",
            RecordState::Delivered => "OK",
        }
    }

    fn raw_status(self) -> Option<&'static str> {
        (self == RecordState::Pending).then_some(QUEUED_RAW_STATUS)
    }
}

/// One recipient of a gateway send, kept until the sandbox stops: the spec gives lookups no end.
pub(super) struct GatewayRecord {
    pub id: Uuid,
    /// The number in the `uid` (see [`gateway_uid`]).
    pub uid: u64,
    /// `hp` as the request spelled it.
    pub mobile: PackedNumber,
    pub charged: i64,
    pub send_group: u32,
    /// Interned `errorMessage`.
    pub error: Option<u32>,
    /// Index of the outcome rule the number matched.
    pub outcome: Option<u16>,
    pub state: RecordState,
}

/// What the records of one send request share; they are `first..first + len` of the group's records.
pub(super) struct SendGroup {
    pub id: Uuid,
    pub first: u32,
    pub len: u32,
    pub date: i64,
    /// Interned sender profile key and template code.
    pub service: u32,
    pub template: u32,
    pub message_type: &'static str,
}

/// The `uid` of a gateway send: at most 20 characters.
pub(super) fn gateway_uid(number: u64) -> String {
    format!("gw{number:018}")
}

/// An id in the form the sandbox issues them (lowercase, hyphenated); any other spelling of
/// the same UUID was never given out, so it finds nothing.
fn parse_issued_id(text: &str) -> Option<Uuid> {
    let id = Uuid::try_parse(text).ok()?;
    let mut buffer = Uuid::encode_buffer();
    (id.hyphenated().encode_lower(&mut buffer) == text).then_some(id)
}

impl GroupState {
    pub(super) fn settle_due(&mut self, now: Instant) {
        while let Some(&(due, send_group)) = self.pending.front() {
            if due > now {
                break;
            }
            self.pending.pop_front();
            let group = &self.send_groups[send_group as usize];
            for index in group.first..group.first + group.len {
                self.settle(index);
            }
        }
    }

    fn settle(&mut self, index: u32) {
        let record = &self.records[index as usize];
        if record.state != RecordState::Pending {
            return;
        }
        let (mobile, charged, send_group) = (record.mobile, record.charged, record.send_group);
        let rule = record.outcome.map(|rule| &self.config.outcomes[usize::from(rule)]);
        let (state, failure) = match rule.map(|rule| rule.outcome) {
            Some(Outcome::GatewayFailed) => (RecordState::Failed, rule.and_then(|rule| rule.message.clone())),
            Some(Outcome::GatewayGiveup) => (RecordState::GaveUp, None),
            _ => (RecordState::Delivered, None),
        };
        let mut error = None;
        if state == RecordState::Failed {
            let fallback = self.fallbacks.remove(&index);
            let mut reason = failure.unwrap_or_else(|| "delivery failed".into());
            if fallback.as_ref().is_some_and(|f| f.callback_no.is_none()) {
                reason.push_str(
                    "; no fallback SMS/LMS was sent: the request gave no callbackNo and the group has no registered sender number",
                );
            }
            error = Some(self.texts.intern(&reason));
            let mobile = self.numbers.text(mobile);
            let reference = Reference::Record(index);
            self.refund(BillingClass::Alimtalk, &mobile, charged, reference, Some(send_group));
            if let Some(super::Fallback {
                callback_no: Some(sender),
                text,
            }) = fallback
            {
                self.send_fallback(&mobile, &sender, &text, reference, Some(send_group));
            }
        }
        let record = self.records.get_mut(index as usize).expect("settled record exists");
        record.state = state;
        record.error = error;
    }

    pub(super) fn record_id(&self, index: u32) -> String {
        self.records[index as usize].id.to_string()
    }

    pub(super) fn send_group_id(&self, index: u32) -> String {
        self.send_groups[index as usize].id.to_string()
    }

    /// The record as the lookups answer it.
    fn send_record(&self, index: u32) -> SendRecord {
        let record = &self.records[index as usize];
        let group = &self.send_groups[record.send_group as usize];
        SendRecord {
            id: record.id.to_string(),
            uid: Some(gateway_uid(record.uid)),
            mobile: Some(self.numbers.text(record.mobile)),
            message_type: Some(group.message_type.into()),
            result: Some(record.state.result().into()),
            status: Some(record.state.status().into()),
            send_group_id: Some(group.id.to_string()),
            date: Some(group.date),
            service: Some(self.texts.get(group.service).into()),
            template: Some(self.texts.get(group.template).into()),
            error_message: record.error.map(|text| self.texts.get(text).into()),
            raw_status: record.state.raw_status().map(Into::into),
        }
    }

    fn record_index(&self, id: &str) -> Option<u32> {
        parse_issued_id(id).and_then(|id| self.record_index.get(&id).copied())
    }
}

impl SandboxState {
    /// `GET {gateway_url}/result/:id`.
    pub fn result(&mut self, group: GroupRef, id: &str) -> Result<SendRecord, Rejection> {
        let g = self.group(group);
        g.record_index(id)
            .map(|index| g.send_record(index))
            .ok_or_else(|| Rejection::not_found(format!("no send record {id}")))
    }

    /// `GET {gateway_url}/result/sendGroup/:sendGroupId`, under the listing faults in force.
    pub fn result_page(
        &mut self,
        group: GroupRef,
        send_group_id: &str,
        limit: Option<&str>,
        last_key: Option<&str>,
        listing: ListingFaults,
    ) -> Result<ResultPage, Rejection> {
        let limit = parse_limit(limit, RESULT_PAGE_DEFAULT, RESULT_PAGE_MAX)?;
        let g = self.group(group);
        let Some(send_group) = parse_issued_id(send_group_id)
            .and_then(|id| g.send_group_index.get(&id))
            .map(|&index| &g.send_groups[index as usize])
        else {
            return Err(Rejection::not_found(format!("no send group {send_group_id}")));
        };
        let records = send_group.first..send_group.first + send_group.len;
        let start = match last_key {
            None => 0,
            Some(key) => match g.record_index(key) {
                Some(index) if records.contains(&index) => (index - records.start) as usize + 1,
                _ => {
                    return Err(Rejection::fail(
                        "SBX_BAD_LAST_KEY",
                        "lastKey is not a key this listing gave",
                    ))
                }
            },
        };
        let mut listed = (start..records.len()).filter(|&position| !listing.hides(position));
        let shown: Vec<usize> = listed.by_ref().take(limit).collect();
        let more = listed.next().is_some();
        let index_of = |position: usize| records.start + position as u32;
        let items: Vec<SendRecord> = shown.iter().map(|&p| g.send_record(index_of(p))).collect();
        let mut next_key = shown.last().filter(|_| more).map(|&p| g.record_id(index_of(p)));
        if listing.repeats_last_key && next_key.is_some() {
            if let Some(given) = last_key {
                next_key = Some(given.to_string());
            }
        }
        Ok(ResultPage {
            count: items.len() as u64,
            items,
            last_key: next_key,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_state_answers_the_fields_the_spec_pairs_with_it() {
        let fields = |state: RecordState| (state.result(), state.status(), state.raw_status());
        assert_eq!(fields(RecordState::Refused), ("FAILED", "FAILED", None));
        assert_eq!(
            fields(RecordState::Pending),
            ("GW_PENDING", "ENABLE", Some("SBX_QUEUED"))
        );
        assert_eq!(fields(RecordState::Delivered), ("OK", "OK", None));
        assert_eq!(fields(RecordState::Failed), ("FAILED", "FAILED", None));
        assert_eq!(fields(RecordState::GaveUp), ("GIVEUP", "ENABLE", None));
    }

    #[test]
    fn a_record_stays_within_64_bytes() {
        assert!(std::mem::size_of::<GatewayRecord>() <= 64);
    }

    #[test]
    fn only_the_issued_spelling_of_an_id_is_an_id() {
        let id = Uuid::new_v4();
        assert_eq!(parse_issued_id(&id.to_string()), Some(id));
        assert_eq!(parse_issued_id(&id.to_string().to_uppercase()), None);
        assert_eq!(parse_issued_id(&id.simple().to_string()), None);
        assert_eq!(parse_issued_id(&format!("{{{id}}}")), None);
        assert_eq!(parse_issued_id("not an id"), None);
    }
}
