//! Sending a chunk of recipients to its lane's endpoint, and the service's answer into per-recipient results.

use super::checkpoint::RecipientResult;
use crate::api::gateway::{acceptance, GatewaySendResponse};
use crate::api::standard::{status_accepted, SendResponse};
use crate::campaign::message::{Chunk, Request};
use crate::campaign::{Campaign, Lane};
use crate::client::{Client, ClientError};
use crate::plan::Recipient;

/// The answer to one chunk's request, whatever the lane.
pub enum Answer {
    Standard(SendResponse),
    Gateway(GatewaySendResponse),
}

/// Sends one chunk on its lane: the campaign's message builds the request, this picks the endpoint.
pub async fn send(
    client: &Client,
    campaign: &Campaign,
    lane: Lane,
    recipients: &[Recipient],
) -> Result<Answer, ClientError> {
    let chunk = Chunk {
        group_id: client.group_id(),
        variables: &campaign.recipients.variables,
        recipients,
    };
    match campaign.message.request(lane, &chunk) {
        Request::Alimtalk(request) => client.send_alimtalk(&request).await.map(Answer::Standard),
        Request::Brand(request) => client.send_brand(&request).await.map(Answer::Standard),
        Request::Sms(request) => client.send_sms(&request).await.map(Answer::Standard),
        Request::Lms(request) => client.send_lms(&request).await.map(Answer::Standard),
        Request::Gateway(request) => client.send_gateway_alimtalk(&request).await.map(Answer::Gateway),
    }
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
