//! `POST {gateway_url}/alimTalk`: gateway acceptance, the charge at acceptance and the stored send records.

use super::ledger::Reference;
use super::results::{gateway_uid, GatewayRecord, RecordState, SendGroup, QUEUED_RAW_STATUS};
use super::{fill, Fallback, GroupRef, Rejection, SandboxState};
use crate::api::channel::{channel_status, sender_status};
use crate::api::gateway::{acceptance, GatewayAcceptance, GatewayAlimTalkRequest, GatewaySendResponse};
use crate::api::ledger::BillingClass;
use crate::api::now_millis;
use crate::phone;
use crate::sandbox::accounts::Outcome;
use crate::template::Template;
use std::time::Instant;
use uuid::Uuid;

impl SandboxState {
    /// `POST {gateway_url}/alimTalk`.
    pub fn gateway_send(
        &mut self,
        group: GroupRef,
        request: &GatewayAlimTalkRequest,
    ) -> Result<GatewaySendResponse, Rejection> {
        let settle_after = self.settle_after;
        let g = self.group(group);
        match g.senders.get(&request.service) {
            None => {
                return Err(Rejection::fail(
                    "SBX_UNKNOWN_SENDER_KEY",
                    "service is not a sender profile key of this group",
                ))
            }
            Some(sender) if sender.status != sender_status::ACTIVE => {
                return Err(Rejection::fail(
                    "SBX_SENDER_NOT_ACTIVE",
                    format!("sender profile is {}", sender.status),
                ))
            }
            Some(_) => {}
        }
        let Some(compiled) = g
            .templates
            .get(&request.template)
            .filter(|t| t.config.sender_key.as_deref() == Some(request.service.as_str()))
        else {
            return Err(Rejection::fail(
                "SBX_UNKNOWN_TEMPLATE",
                format!(
                    "template {} is not registered for this sender profile",
                    request.template
                ),
            ));
        };
        let template = if request.message == compiled.config.text {
            compiled.template.clone()
        } else if compiled.template.matches_filled(&request.message) {
            Template::compile(&request.message)
        } else {
            return Err(Rejection::fail(
                "SBX_TEMPLATE_MISMATCH",
                format!(
                    "message does not match the registered text of template {}",
                    request.template
                ),
            ));
        };
        if compiled.config.title.is_some() && request.title.as_deref().is_none_or(str::is_empty) {
            return Err(Rejection::fail(
                "SBX_TITLE_REQUIRED",
                format!(
                    "template {} is an emphasis template: title is required",
                    request.template
                ),
            ));
        }
        let message_type = if compiled.config.title.is_some() { "ai" } else { "at" };
        if let Some(buttons) = &request.buttons {
            for (index, button) in buttons.iter().enumerate() {
                let valid = match button.button_type.as_str() {
                    "WL" => button.url_mobile.is_some() || button.url_pc.is_some(),
                    "AL" => button.scheme_android.is_some() || button.scheme_ios.is_some(),
                    "BK" | "MD" => true,
                    _ => false,
                };
                if !valid || button.name.is_empty() {
                    return Err(Rejection::fail(
                        "SBX_BAD_BUTTON",
                        format!(
                            "buttons[{index}]: type {} needs a name and its links",
                            button.button_type
                        ),
                    ));
                }
            }
        }
        let channel_callback = match request.channel_id.as_deref() {
            None => None,
            Some(id) => match g.channels.get(id).filter(|c| c.record.status == channel_status::ENABLE) {
                None => {
                    return Err(Rejection::fail(
                        "SBX_UNKNOWN_CHANNEL",
                        format!("channel {id} is not an active channel of this group"),
                    ))
                }
                Some(channel) => channel.record.callback_no.clone(),
            },
        };
        let alter = request.alter.unwrap_or(false);
        let fallback_sender = if alter {
            g.gateway_fallback_sender(request.callback_no.as_deref(), channel_callback.as_deref())?
        } else {
            None
        };
        if request.numbers.is_empty() {
            return Err(Rejection::fail("SBX_NO_RECIPIENTS", "numbers must not be empty"));
        }
        let fallback_template =
            alter.then(|| Template::compile(request.alter_message.as_deref().unwrap_or(&request.message)));
        let send_group_id = Uuid::new_v4();
        let send_group = u32::try_from(g.send_groups.len()).expect("fewer than 2^32 send groups");
        let first = u32::try_from(g.records.len()).expect("fewer than 2^32 records");
        let now = Instant::now();
        let date = now_millis();
        let mut results = Vec::with_capacity(request.numbers.len());
        let mut accepted = 0;
        for entry in &request.numbers {
            g.count_sent(&entry.hp);
            let id = Uuid::new_v4();
            let uid = g.next_uid();
            let mut acceptance_row = GatewayAcceptance {
                id: id.to_string(),
                uid: gateway_uid(uid),
                mobile: entry.hp.clone(),
                status: acceptance::FAILED.into(),
                raw_status: None,
                error: None,
            };
            let digits = phone::normalize(&entry.hp);
            let outcome = digits.as_ref().ok().and_then(|d| g.outcome_index(d));
            let rule = outcome.map(|index| g.config.outcomes[index].clone());
            let refusal = match (&digits, fill(&template, entry)) {
                (Err(error), _) => Some(format!("invalid hp: {error}")),
                (_, Err(key)) => Some(format!("missing value for variable #{{{key}}}")),
                _ => match rule.as_ref().map(|r| r.outcome) {
                    Some(Outcome::GatewayRejected) => Some(
                        rule.as_ref()
                            .and_then(|r| r.message.clone())
                            .unwrap_or_else(|| "refused".into()),
                    ),
                    _ => None,
                },
            };
            let index = u32::try_from(g.records.len()).expect("fewer than 2^32 records");
            let mut state = RecordState::Refused;
            let mut charged = 0;
            if let Some(reason) = refusal {
                acceptance_row.error = Some(reason);
            } else if rule.as_ref().is_some_and(|r| r.outcome == Outcome::GatewayError) {
                acceptance_row.status = acceptance::ERROR.into();
                acceptance_row.error = Some("SBX_STORE_FAILED: the send record could not be stored".into());
                results.push(acceptance_row);
                continue;
            } else {
                let digits = digits.as_deref().expect("checked above");
                match g.charge(
                    BillingClass::Alimtalk,
                    digits,
                    Reference::Record(index),
                    Some(send_group),
                ) {
                    None => {
                        acceptance_row.error =
                            Some("SBX_INSUFFICIENT_BALANCE: balance does not cover the charge".to_string());
                    }
                    Some(amount) => {
                        charged = amount;
                        accepted += 1;
                        state = RecordState::Pending;
                        acceptance_row.status = acceptance::PENDING.into();
                        acceptance_row.raw_status = Some(QUEUED_RAW_STATUS.into());
                    }
                }
            }
            let settles_failed =
                state == RecordState::Pending && rule.as_ref().is_some_and(|r| r.outcome == Outcome::GatewayFailed);
            if let Some(template) = fallback_template.as_ref().filter(|_| settles_failed) {
                let text = fill(template, entry).unwrap_or_else(|_| template.source().to_string());
                let callback_no = fallback_sender.clone();
                g.fallbacks.insert(index, Fallback { callback_no, text });
            }
            let error = acceptance_row.error.as_deref().map(|reason| g.texts.intern(reason));
            let mobile = g.numbers.pack(&entry.hp);
            g.records.push(GatewayRecord {
                id,
                uid,
                mobile,
                charged,
                send_group,
                error,
                outcome: outcome.map(|index| u16::try_from(index).expect("fewer than 2^16 outcome rules")),
                state,
            });
            g.record_index.insert(id, index);
            results.push(acceptance_row);
        }
        let total = request.numbers.len() as u64;
        g.send_groups.push(SendGroup {
            id: send_group_id,
            first,
            len: u32::try_from(g.records.len()).expect("fewer than 2^32 records") - first,
            date,
            service: g.texts.intern(&request.service),
            template: g.texts.intern(&request.template),
            message_type,
        });
        g.send_group_index.insert(send_group_id, send_group);
        if accepted > 0 {
            g.pending.push_back((now + settle_after, send_group));
        }
        if settle_after.is_zero() {
            g.settle_due(Instant::now());
        }
        Ok(GatewaySendResponse {
            success: true,
            send_group_id: send_group_id.to_string(),
            accepted,
            total,
            results,
        })
    }
}
