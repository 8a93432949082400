//! `POST {base_url}/friendTalk/brand`: brand messages, their send types, targeting and fallback.

use super::ledger::Reference;
use super::{check_entries, fill, send_response, GroupRef, Rejection, SandboxState, NON_FRIEND_MIN_FRIENDS};
use crate::api::channel::channel_status;
use crate::api::ledger::BillingClass;
use crate::api::standard::{BrandRequest, RecipientResult, SendResponse, SendType, Targeting};
use crate::api::{now_millis, NumberEntry};
use crate::phone;
use crate::sandbox::accounts::Outcome;
use crate::template::Template;

impl SandboxState {
    /// `POST {base_url}/friendTalk/brand`.
    pub fn brand(&mut self, group: GroupRef, request: &BrandRequest) -> Result<SendResponse, Rejection> {
        let reject: fn(&str, String) -> Rejection = Rejection::error;
        let g = self.group(group);
        if !g.config.brand_services.contains(&request.service) {
            return Err(reject(
                "SBX_UNKNOWN_SERVICE",
                format!(
                    "service {} is not a brand message service of this group",
                    request.service
                ),
            ));
        }
        let send_type = request.send_type.unwrap_or_default();
        let template = match send_type {
            SendType::Free => {
                if !request.chat_bubble_type.allowed_for_free() {
                    return Err(reject(
                        "SBX_BUBBLE_NEEDS_BASIC",
                        format!(
                            "{:?} is not supported with sendType FREE; use BASIC with a template",
                            request.chat_bubble_type
                        ),
                    ));
                }
                None
            }
            SendType::Basic => {
                let structural = request.structural_fields();
                if !structural.is_empty() {
                    return Err(reject(
                        "ERR_201",
                        format!(
                            "structural data must not be sent with sendType BASIC: {}",
                            structural.join(", ")
                        ),
                    ));
                }
                let Some(code) = request.template.as_deref().filter(|c| !c.is_empty()) else {
                    return Err(reject(
                        "SBX_TEMPLATE_REQUIRED",
                        "template is required when sendType is BASIC".into(),
                    ));
                };
                let Some(registered) = g
                    .config
                    .brand_templates
                    .iter()
                    .find(|t| t.code == code && t.service == request.service)
                else {
                    return Err(reject(
                        "SBX_UNKNOWN_TEMPLATE",
                        format!(
                            "brand template {code} is not registered for service {}",
                            request.service
                        ),
                    ));
                };
                if registered
                    .chat_bubble_type
                    .is_some_and(|bubble| bubble != request.chat_bubble_type)
                {
                    return Err(reject(
                        "SBX_BUBBLE_MISMATCH",
                        format!("template {code} is registered with another chatBubbleType"),
                    ));
                }
                g.brand_templates.get(code).cloned().flatten()
            }
        };
        let targeting = request.targeting.unwrap_or_default();
        if targeting.reaches_non_friends() {
            let Some(channel_id) = request.channel_id.as_deref().filter(|c| !c.is_empty()) else {
                return Err(reject(
                    "SBX_CHANNEL_REQUIRED",
                    format!("channelId is required for targeting {targeting:?}"),
                ));
            };
            let Some(channel) = g
                .channels
                .get(channel_id)
                .filter(|c| c.record.status == channel_status::ENABLE)
            else {
                return Err(reject(
                    "SBX_UNKNOWN_CHANNEL",
                    format!("channel {channel_id} is not an active channel of this group"),
                ));
            };
            if !channel.nm_approved || channel.friends < NON_FRIEND_MIN_FRIENDS {
                return Err(Rejection::error(
                    "ERR_MN_NOT_APPROVED",
                    format!("channel {channel_id} is not approved for non-friend targeting"),
                )
                .with_http(403));
            }
        }
        let alter = request.alter.unwrap_or(false);
        g.check_fallback_callback(alter, request.callback_no.as_deref(), reject)?;
        let fallback_sender = request.callback_no.as_deref().unwrap_or_default();
        let single;
        let entries: &[NumberEntry] = match (&request.numbers, &request.mobile) {
            (Some(_), Some(_)) => {
                return Err(reject(
                    "SBX_NUMBERS_AND_MOBILE",
                    "give numbers or mobile, not both".into(),
                ))
            }
            (Some(numbers), None) => numbers,
            (None, Some(mobile)) => {
                single = [NumberEntry {
                    key: 0,
                    hp: mobile.clone(),
                    ..NumberEntry::default()
                }];
                &single
            }
            (None, None) => return Err(reject("SBX_NO_RECIPIENTS", "numbers or mobile is required".into())),
        };
        if request.mobile.is_none() {
            check_entries(entries, reject)?;
        }
        if send_type == SendType::Free
            && request.message.as_deref().is_none_or(str::is_empty)
            && request.image.is_none()
            && request.carousel.is_none()
            && request.item.is_none()
        {
            return Err(reject(
                "SBX_MESSAGE_REQUIRED",
                "a FREE brand message needs message, image, carousel or item".into(),
            ));
        }
        let class = if targeting.reaches_non_friends() {
            BillingClass::BmNonfriend
        } else {
            BillingClass::BmFriend
        };
        // The fallback body: `alterMessage`, else the message, else the BASIC template's text.
        let fallback_template = match request.alter_message.as_deref().or(request.message.as_deref()) {
            Some(text) => Some(Template::compile(text)),
            None => template.clone(),
        };
        let date = now_millis();
        let mut value = Vec::with_capacity(entries.len());
        for entry in entries {
            g.count_sent(&entry.hp);
            let uid = g.next_uid();
            let digits = match phone::normalize(&entry.hp) {
                Ok(digits) => digits,
                Err(_) => {
                    value.push(RecipientResult {
                        uid,
                        date,
                        status: "ERR_SBX_INVALID_NUMBER".into(),
                    });
                    continue;
                }
            };
            if let Some(template) = &template {
                if fill(template, entry).is_err() {
                    value.push(RecipientResult {
                        uid,
                        date,
                        status: "ERR_SBX_VARIABLE_MISSING".into(),
                    });
                    continue;
                }
            }
            let rule = g.outcome(&digits).cloned();
            let is_friend = !matches!(rule.as_ref().map(|r| r.outcome), Some(Outcome::NotFriend));
            let failure = match (&rule, targeting) {
                (Some(rule), _) if rule.outcome == Outcome::ChannelFailure => {
                    Some(rule.code.clone().unwrap_or_else(|| "CH_SBX_UNDELIVERABLE".into()))
                }
                (_, Targeting::I | Targeting::F) if !is_friend => Some("CH_SBX_NOT_FRIEND".to_string()),
                (_, Targeting::N) if is_friend => Some("CH_SBX_NOT_IN_AUDIENCE".to_string()),
                _ => None,
            };
            let status = match failure {
                Some(code) => {
                    if alter {
                        if let Some(fallback) = &fallback_template {
                            let text = fill(fallback, entry).unwrap_or_else(|_| fallback.source().to_string());
                            g.send_fallback(&digits, fallback_sender, &text, Reference::Uid(uid), None);
                        }
                    }
                    code
                }
                None => match g.charge(class, &digits, Reference::Uid(uid), None) {
                    Some(_) => "OK".into(),
                    None => "ERR_SBX_INSUFFICIENT_BALANCE".into(),
                },
            };
            value.push(RecipientResult { uid, date, status });
        }
        Ok(send_response(Some("/friendTalk/brand"), value))
    }
}
