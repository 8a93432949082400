//! `POST {base_url}/alimTalk`: notification messages of the standard deployment.

use super::ledger::Reference;
use super::{check_entries, fill, send_response, GroupRef, Rejection, SandboxState};
use crate::api::ledger::BillingClass;
use crate::api::now_millis;
use crate::api::standard::{AlimTalkRequest, RecipientResult, SendResponse};
use crate::phone;
use crate::sandbox::accounts::Outcome;
use crate::text::ALIMTALK_MAX_CHARS;

impl SandboxState {
    /// `POST {base_url}/alimTalk`.
    pub fn alimtalk(&mut self, group: GroupRef, request: &AlimTalkRequest) -> Result<SendResponse, Rejection> {
        let g = self.group(group);
        if !g.config.alimtalk_services.contains(&request.service) {
            return Err(Rejection::fail(
                "SBX_UNKNOWN_SERVICE",
                format!(
                    "service {} is not a notification service of this group",
                    request.service
                ),
            ));
        }
        let Some(compiled) = g
            .templates
            .get(&request.template)
            .filter(|t| t.config.service == Some(request.service))
        else {
            return Err(Rejection::fail(
                "SBX_UNKNOWN_TEMPLATE",
                format!(
                    "template {} is not registered for service {}",
                    request.template, request.service
                ),
            ));
        };
        if request.message != compiled.config.text {
            return Err(Rejection::fail(
                "SBX_TEMPLATE_MISMATCH",
                format!(
                    "message does not equal the registered text of template {}",
                    request.template
                ),
            ));
        }
        if let Some(title) = &compiled.config.title {
            match request.title.as_deref() {
                None | Some("") => {
                    return Err(Rejection::fail(
                        "SBX_TITLE_REQUIRED",
                        format!("template {} is a title template: title is required", request.template),
                    ))
                }
                Some(given) if given != title => {
                    return Err(Rejection::fail(
                        "SBX_TITLE_MISMATCH",
                        "title does not equal the registered title",
                    ))
                }
                Some(_) => {}
            }
        }
        let template = compiled.template.clone();
        let alter = request.alter.unwrap_or(false);
        g.check_fallback_callback(alter, request.callback_no.as_deref(), Rejection::fail)?;
        let fallback_sender = request.callback_no.as_deref().unwrap_or_default();
        check_entries(&request.numbers, Rejection::fail)?;
        let date = now_millis();
        let mut value = Vec::with_capacity(request.numbers.len());
        for entry in &request.numbers {
            g.count_sent(&entry.hp);
            let uid = g.next_uid();
            let status = match (phone::normalize(&entry.hp), fill(&template, entry)) {
                (Err(_), _) => "ERR_SBX_INVALID_NUMBER".to_string(),
                (_, Err(_)) => "ERR_SBX_VARIABLE_MISSING".to_string(),
                (Ok(_), Ok(text)) if text.chars().count() > ALIMTALK_MAX_CHARS => "ERR_SBX_TOO_LONG".to_string(),
                (Ok(digits), Ok(text)) => match g.outcome(&digits).filter(|r| r.outcome == Outcome::ChannelFailure) {
                    Some(rule) => {
                        let code = rule.code.clone().unwrap_or_else(|| "CH_SBX_UNDELIVERABLE".into());
                        if alter {
                            g.send_fallback(&digits, fallback_sender, &text, Reference::Uid(uid), None);
                        }
                        code
                    }
                    None => match g.charge(BillingClass::Alimtalk, &digits, Reference::Uid(uid), None) {
                        Some(_) => "OK".to_string(),
                        None => "ERR_SBX_INSUFFICIENT_BALANCE".to_string(),
                    },
                },
            };
            value.push(RecipientResult { uid, date, status });
        }
        Ok(send_response(Some("/alimTalk"), value))
    }
}
