//! Turning a chunk of recipients into the lane's request, and the service's answer into per-recipient results.

use super::checkpoint::RecipientResult;
use crate::api::gateway::{acceptance, GatewayAlimTalkRequest, GatewaySendResponse};
use crate::api::standard::{status_accepted, AlimTalkRequest, BrandRequest, SendResponse, TextMessageRequest};
use crate::api::{GatewayNumberEntry, MappingEntry, NumberEntry, Variables};
use crate::campaign::{Campaign, Lane};
use crate::client::{Client, ClientError};
use crate::plan::Recipient;

/// The answer to one chunk's request, whatever the lane.
pub enum Answer {
    Standard(SendResponse),
    Gateway(GatewaySendResponse),
}

fn variables(campaign: &Campaign, recipient: &Recipient) -> Variables {
    campaign
        .recipients
        .variables
        .iter()
        .zip(&recipient.vars)
        .map(|((key, _), value)| (key.clone(), value.clone()))
        .collect()
}

/// Sends one chunk on its lane.
pub async fn send(
    client: &Client,
    campaign: &Campaign,
    lane: Lane,
    recipients: &[Recipient],
) -> Result<Answer, ClientError> {
    let message = &campaign.message;
    let group_id = client.group_id().to_string();
    let text = message.text.clone().unwrap_or_default();
    match lane {
        Lane::Alimtalk => {
            let request = AlimTalkRequest {
                service: message.service.unwrap_or_default(),
                template: message.template_code.clone().unwrap_or_default(),
                group_id,
                message: text,
                numbers: number_entries(campaign, recipients),
                title: message.title.clone(),
                alter: message.alter.then_some(true),
                callback_no: message.callback_no.clone(),
            };
            client.send_alimtalk(&request).await.map(Answer::Standard)
        }
        Lane::Brand => {
            let bubble = message.chat_bubble_type.expect("validated for brand");
            let mut request = BrandRequest::new(message.service.unwrap_or_default(), bubble, group_id);
            request.numbers = Some(number_entries(campaign, recipients));
            request.send_type = Some(message.send_type);
            request.template = message.template_code.clone();
            request.targeting = Some(message.targeting);
            request.channel_id = message.channel_id.clone();
            request.message = message.text.clone();
            request.image = message.image.clone();
            request.buttons = message.brand_buttons.clone();
            request.header = message.header.clone();
            request.additional_content = message.additional_content.clone();
            request.alter = message.alter.then_some(true);
            request.alter_message = message.alter_message.clone();
            request.callback_no = message.callback_no.clone();
            client.send_brand(&request).await.map(Answer::Standard)
        }
        Lane::Sms | Lane::Lms => {
            let uses_variables = message.compiled.as_ref().is_some_and(|t| t.has_placeholders());
            let request = TextMessageRequest {
                service: message.service.unwrap_or_default(),
                message: text,
                numbers: recipients.iter().map(|r| r.phone.clone()).collect(),
                group_id,
                callback_no: message.callback_no.clone().unwrap_or_default(),
                mapping: uses_variables.then(|| {
                    recipients
                        .iter()
                        .map(|r| MappingEntry {
                            name: r.name.clone(),
                            vars: variables(campaign, r),
                        })
                        .collect()
                }),
                subject: if lane == Lane::Lms {
                    message.subject.clone()
                } else {
                    None
                },
            };
            let answer = if lane == Lane::Sms {
                client.send_sms(&request).await
            } else {
                client.send_lms(&request).await
            };
            answer.map(Answer::Standard)
        }
        Lane::Gateway => {
            let request = GatewayAlimTalkRequest {
                group_id,
                service: message.sender_key.clone().unwrap_or_default(),
                template: message.template_code.clone().unwrap_or_default(),
                message: text,
                numbers: recipients
                    .iter()
                    .map(|r| GatewayNumberEntry {
                        hp: r.phone.clone(),
                        name: r.name.clone(),
                        vars: variables(campaign, r),
                    })
                    .collect(),
                title: message.title.clone(),
                buttons: message.gateway_buttons.clone(),
                alter: message.alter.then_some(true),
                alter_message: message.alter_message.clone(),
                callback_no: message.callback_no.clone(),
                channel_id: message.channel_id.clone(),
            };
            client.send_gateway_alimtalk(&request).await.map(Answer::Gateway)
        }
    }
}

fn number_entries(campaign: &Campaign, recipients: &[Recipient]) -> Vec<NumberEntry> {
    recipients
        .iter()
        .map(|r| NumberEntry {
            key: r.row,
            hp: r.phone.clone(),
            name: r.name.clone(),
            vars: variables(campaign, r),
        })
        .collect()
}

/// Per-recipient results in request order, or why the answer cannot be matched to the request
/// (which leaves the chunk uncertain).
pub fn results(answer: &Answer, recipients: &[Recipient]) -> Result<(Vec<RecipientResult>, Option<String>), String> {
    match answer {
        Answer::Standard(response) => {
            if response.value.len() != recipients.len() {
                return Err(format!(
                    "answer has {} results for {} recipients",
                    response.value.len(),
                    recipients.len()
                ));
            }
            let results = recipients
                .iter()
                .zip(&response.value)
                .map(|(recipient, value)| RecipientResult {
                    row: recipient.row,
                    status: value.status.clone(),
                    uid: value.uid.to_string(),
                    id: None,
                    date: value.date,
                    error: None,
                    accepted: status_accepted(&value.status),
                })
                .collect();
            Ok((results, None))
        }
        Answer::Gateway(response) => {
            if response.results.len() != recipients.len() {
                return Err(format!(
                    "answer has {} results for {} recipients",
                    response.results.len(),
                    recipients.len()
                ));
            }
            let date = crate::api::now_millis();
            let mut results = Vec::with_capacity(recipients.len());
            for (recipient, result) in recipients.iter().zip(&response.results) {
                if crate::phone::normalize(&result.mobile).ok().as_deref() != Some(recipient.phone.as_str()) {
                    return Err(format!("answer lists another number at row {}", recipient.row));
                }
                results.push(RecipientResult {
                    row: recipient.row,
                    status: result.status.clone(),
                    uid: result.uid.clone(),
                    id: Some(result.id.clone()),
                    date,
                    error: result.error.clone(),
                    accepted: result.status == acceptance::PENDING,
                });
            }
            Ok((results, Some(response.send_group_id.clone())))
        }
    }
}
