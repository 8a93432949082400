//! Gateway results: records settling to their final state, the single lookup and the send-group listing.

use super::{parse_limit, Fallback, GroupRef, GroupState, Rejection, SandboxState};
use crate::api::gateway::{final_result, ResultPage, SendRecord, RESULT_PAGE_DEFAULT, RESULT_PAGE_MAX};
use crate::api::ledger::BillingClass;
use crate::sandbox::accounts::Outcome;
use crate::sandbox::faults::ListingFaults;
use std::time::Instant;

impl GroupState {
    pub(super) fn settle_due(&mut self, now: Instant) {
        while let Some((due, _)) = self.pending.front() {
            if *due > now {
                break;
            }
            let (_, id) = self.pending.pop_front().expect("front exists");
            self.settle(&id);
        }
    }

    pub(super) fn settle(&mut self, id: &str) {
        let Some(entry) = self.records.get_mut(id) else { return };
        let outcome = entry.outcome.as_ref().map(|rule| (rule.outcome, rule.message.clone()));
        let record = &mut entry.record;
        record.raw_status = None;
        let mobile = record.mobile.clone().unwrap_or_default();
        let send_group_id = record.send_group_id.clone();
        match outcome {
            Some((Outcome::GatewayFailed, message)) => {
                record.result = Some(final_result::FAILED.into());
                record.status = Some("FAILED".into());
                let fallback = entry.fallback.clone();
                let mut reason = message.unwrap_or_else(|| "delivery failed".into());
                if fallback.as_ref().is_some_and(|f| f.callback_no.is_none()) {
                    reason.push_str(
                        "; no fallback SMS/LMS was sent: the request gave no callbackNo and the group has no registered sender number",
                    );
                }
                record.error_message = Some(reason);
                let charged = entry.charged;
                self.refund(
                    BillingClass::Alimtalk,
                    &mobile,
                    charged,
                    id.to_string(),
                    send_group_id.as_deref(),
                );
                if let Some(Fallback {
                    callback_no: Some(sender),
                    text,
                }) = fallback
                {
                    self.send_fallback(&mobile, &sender, &text, id.to_string(), send_group_id.as_deref());
                }
            }
            Some((Outcome::GatewayGiveup, _)) => {
                record.result = Some(final_result::GIVEUP.into());
                record.status = Some("ENABLE".into());
            }
            _ => {
                record.result = Some(final_result::OK.into());
                record.status = Some("OK".into());
            }
        }
    }
}

impl SandboxState {
    /// `GET {gateway_url}/result/:id`.
    pub fn result(&mut self, group: GroupRef, id: &str) -> Result<SendRecord, Rejection> {
        let g = self.group(group);
        g.records
            .get(id)
            .map(|r| r.record.clone())
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
        let Some(ids) = g.send_groups.get(send_group_id) else {
            return Err(Rejection::not_found(format!("no send group {send_group_id}")));
        };
        let start = match last_key {
            None => 0,
            Some(key) => match g.record_position.get(key) {
                Some(&position) if ids.get(position).map(String::as_str) == Some(key) => position + 1,
                _ => {
                    return Err(Rejection::fail(
                        "SBX_BAD_LAST_KEY",
                        "lastKey is not a key this listing gave",
                    ))
                }
            },
        };
        let mut listed = (start..ids.len()).filter(|&position| !listing.hides(position));
        let shown: Vec<usize> = listed.by_ref().take(limit).collect();
        let more = listed.next().is_some();
        let items: Vec<SendRecord> = shown.iter().map(|&p| g.records[&ids[p]].record.clone()).collect();
        let mut next_key = shown.last().filter(|_| more).map(|&p| ids[p].clone());
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
