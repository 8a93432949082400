//! `POST {gateway_url}/alimTalk`: gateway acceptance, the charge at acceptance and the stored send records.

use super::{fill, Fallback, GatewayRecord, GroupRef, Rejection, SandboxState};
use crate::api::channel::{channel_status, sender_status};
use crate::api::gateway::{
    acceptance, final_result, GatewayAcceptance, GatewayAlimTalkRequest, GatewaySendResponse, SendRecord,
};
use crate::api::ledger::BillingClass;
use crate::api::now_millis;
use crate::phone;
use crate::sandbox::accounts::Outcome;
use crate::template::Template;
use std::time::Instant;

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
        let send_group_id = uuid::Uuid::new_v4().to_string();
        let now = Instant::now();
        let date = now_millis();
        let mut results = Vec::with_capacity(request.numbers.len());
        let mut ids = Vec::with_capacity(request.numbers.len());
        let mut accepted = 0;
        for entry in &request.numbers {
            g.count_sent(&entry.hp);
            let id = uuid::Uuid::new_v4().to_string();
            let uid = format!("gw{:018}", g.next_uid());
            let mut acceptance_row = GatewayAcceptance {
                id: id.clone(),
                uid: uid.clone(),
                mobile: entry.hp.clone(),
                status: acceptance::FAILED.into(),
                raw_status: None,
                error: None,
            };
            let digits = phone::normalize(&entry.hp);
            let rule = digits.as_ref().ok().and_then(|d| g.outcome(d)).cloned();
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
            let mut record = SendRecord {
                id: id.clone(),
                uid: Some(uid),
                mobile: Some(entry.hp.clone()),
                message_type: Some(message_type.into()),
                result: Some(final_result::FAILED.into()),
                status: Some("FAILED".into()),
                send_group_id: Some(send_group_id.clone()),
                date: Some(date),
                service: Some(request.service.clone()),
                template: Some(request.template.clone()),
                error_message: None,
                raw_status: None,
            };
            let mut charged = 0;
            if let Some(reason) = refusal {
                acceptance_row.error = Some(reason.clone());
                record.error_message = Some(reason);
            } else if rule.as_ref().is_some_and(|r| r.outcome == Outcome::GatewayError) {
                acceptance_row.status = acceptance::ERROR.into();
                acceptance_row.error = Some("SBX_STORE_FAILED: the send record could not be stored".into());
                results.push(acceptance_row);
                continue;
            } else {
                let digits = digits.clone().expect("checked above");
                match g.charge(BillingClass::Alimtalk, &digits, id.clone(), Some(&send_group_id)) {
                    None => {
                        let reason = "SBX_INSUFFICIENT_BALANCE: balance does not cover the charge".to_string();
                        acceptance_row.error = Some(reason.clone());
                        record.error_message = Some(reason);
                    }
                    Some(amount) => {
                        charged = amount;
                        accepted += 1;
                        acceptance_row.status = acceptance::PENDING.into();
                        acceptance_row.raw_status = Some("SBX_QUEUED".into());
                        record.result = Some(final_result::PENDING.into());
                        record.status = Some("ENABLE".into());
                        record.raw_status = Some("SBX_QUEUED".into());
                        g.pending.push_back((now + settle_after, id.clone()));
                    }
                }
            }
            let fallback = fallback_template.as_ref().map(|t| {
                let text = fill(t, entry).unwrap_or_else(|_| t.source().to_string());
                Fallback {
                    callback_no: fallback_sender.clone(),
                    text,
                }
            });
            g.record_position.insert(id.clone(), ids.len());
            ids.push(id.clone());
            g.records.insert(
                id,
                GatewayRecord {
                    record,
                    outcome: rule,
                    charged,
                    fallback,
                },
            );
            results.push(acceptance_row);
        }
        let total = request.numbers.len() as u64;
        g.send_groups.insert(send_group_id.clone(), ids);
        if settle_after.is_zero() {
            g.settle_due(Instant::now());
        }
        Ok(GatewaySendResponse {
            success: true,
            send_group_id,
            accepted,
            total,
            results,
        })
    }
}
