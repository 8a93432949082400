//! Delivering webhooks: a message signed as Standard Webhooks says (`webhook-id`, `webhook-timestamp`, `webhook-signature`: HMAC-SHA256 over `id.timestamp.body` with the endpoint's secret), written to the outbox before its first attempt, attempted on the schedule until a 2xx answer or a day has passed, each end logged with the message kept for redelivery.

use super::{Delivery, Endpoint, Event, Pending, LOG, LOG_KEPT, MESSAGES, OUTBOX};
use crate::console::error::ConsoleError;
use crate::console::Console;
use base64::Engine;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Weak};

/// A message's bytes and time, kept for every attempt and a redelivery.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Kept {
    pub timestamp: i64,
    pub body: String,
}

/// What one attempt came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    Delivered,
    Failed(String),
}

/// The `webhook-signature` header's value for a message: `v1,` and the base64 of
/// HMAC-SHA256(key, `{id}.{timestamp}.{body}`), the key being the secret after `whsec_`, decoded.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &str) -> Option<String> {
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.strip_prefix("whsec_")?)
        .ok()?;
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key);
    let tag = ring::hmac::sign(&key, format!("{id}.{timestamp}.{body}").as_bytes());
    Some(format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(tag.as_ref())
    ))
}

fn now_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn outbox_key(pending: &Pending) -> String {
    format!("{}:{}", pending.endpoint, pending.message)
}

/// Makes each event a message for each endpoint that wants it, on disk (one flush for them all:
/// a run's progress may tell many at once) before any attempt.
pub fn enqueue(console: &Console, events: &[Event]) -> Result<(), ConsoleError> {
    let endpoints = console.endpoints()?;
    for event in events {
        for endpoint in endpoints.iter().filter(|endpoint| wants(endpoint, event)) {
            if event.kind == "campaign.results" {
                // Each endpoint is sent the pages one after the other, from the first.
                let campaign = event.campaign.as_deref().unwrap_or_default();
                super::results::enqueue_page(console, endpoint, campaign, None)?;
                continue;
            }
            put_message(console, endpoint, event.kind, event.campaign.clone(), &event.data, None)?;
        }
    }
    console.store.flush()?;
    console.webhooks.wake.notify_one();
    Ok(())
}

fn wants(endpoint: &Endpoint, event: &Event) -> bool {
    if !endpoint.events.iter().any(|kind| kind == event.kind) {
        return false;
    }
    if event.kind != "campaign.progress" {
        return true;
    }
    let percent = event.data["percent"].as_u64().unwrap_or(0);
    let every = u64::from(endpoint.progress_every.max(1));
    percent == 100 || percent.is_multiple_of(every)
}

/// Writes a message (its body as it will be sent, every time) and its outbox entry; the caller
/// flushes them.
pub(super) fn put_message(
    console: &Console,
    endpoint: &Endpoint,
    kind: &str,
    campaign: Option<String>,
    data: &serde_json::Value,
    next_cursor: Option<String>,
) -> Result<(), ConsoleError> {
    let message = format!("msg_{}", uuid::Uuid::new_v4().simple());
    let timestamp = chrono::Utc::now();
    let body = serde_json::json!({
        "type": kind,
        "timestamp": timestamp.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "data": data,
    })
    .to_string();
    console.store.put_unflushed_in(
        MESSAGES,
        &message,
        &Kept {
            timestamp: timestamp.timestamp(),
            body,
        },
    )?;
    let pending = Pending {
        endpoint: endpoint.id.clone(),
        message,
        kind: kind.to_string(),
        campaign,
        attempts: 0,
        due: now_millis(),
        last_error: None,
        next_cursor,
    };
    console.store.put_unflushed_in(OUTBOX, &outbox_key(&pending), &pending)
}

/// Starts an attempt of every outbox entry that is due and not already being attempted.
pub fn attempt_due(console: &Arc<Console>) {
    let Ok(entries) = console.store.entries_in::<Pending>(OUTBOX) else {
        return;
    };
    let now = now_millis();
    for (key, pending) in entries {
        if pending.due > now || !console.webhooks.in_flight.lock().insert(key.clone()) {
            continue;
        }
        tokio::spawn(attempt(Arc::downgrade(console), key, pending));
    }
}

/// One attempt; then the entry is done (delivered, or given up) or due again later.
async fn attempt(console: Weak<Console>, key: String, mut pending: Pending) {
    let Some(strong) = console.upgrade() else { return };
    let endpoint = strong
        .endpoints()
        .ok()
        .and_then(|endpoints| endpoints.into_iter().find(|endpoint| endpoint.id == pending.endpoint));
    let kept: Option<Kept> = strong.store.get_in(MESSAGES, &pending.message).ok().flatten();
    let answer_within = strong.webhooks.schedule.answer_within;
    let waits = strong.webhooks.schedule.waits.clone();
    drop(strong);
    let outcome = match (&endpoint, &kept) {
        (Some(endpoint), Some(kept)) => send(endpoint, &pending.message, kept, answer_within).await,
        (None, _) => Attempt::Failed("the endpoint was removed".into()),
        (_, None) => Attempt::Failed("the message is no longer kept".into()),
    };
    let Some(console) = console.upgrade() else { return };
    pending.attempts += 1;
    let finished = match &outcome {
        Attempt::Delivered => true,
        Attempt::Failed(error) => {
            pending.last_error = Some(error.clone());
            let gone = endpoint.is_none() || kept.is_none();
            match waits.get(pending.attempts as usize - 1) {
                Some(wait) if !gone => {
                    pending.due = now_millis() + i64::try_from(wait.as_millis()).unwrap_or(i64::MAX);
                    if let Err(error) = console.store.put_in(OUTBOX, &key, &pending) {
                        tracing::error!("cannot keep a webhook for its next attempt: {error}");
                    }
                    false
                }
                _ => true,
            }
        }
    };
    if finished {
        let _ = console.store.remove_in(OUTBOX, &key);
        log(&console, endpoint.as_ref(), &pending, &outcome);
        if let (Attempt::Delivered, Some(endpoint), Some(cursor)) = (&outcome, &endpoint, &pending.next_cursor) {
            if let Some(campaign) = &pending.campaign {
                if let Err(error) = super::results::enqueue_page(&console, endpoint, campaign, Some(cursor)) {
                    tracing::error!("cannot queue the next results of {campaign}: {error}");
                }
            }
        }
    }
    console.webhooks.in_flight.lock().remove(&key);
    console.webhooks.wake.notify_one();
}

async fn send(endpoint: &Endpoint, id: &str, kept: &Kept, answer_within: std::time::Duration) -> Attempt {
    let Some(signature) = sign(&endpoint.secret, id, kept.timestamp, &kept.body) else {
        return Attempt::Failed("the endpoint's secret cannot be read".into());
    };
    let client = match reqwest::Client::builder().timeout(answer_within).build() {
        Ok(client) => client,
        Err(error) => return Attempt::Failed(error.to_string()),
    };
    let answer = client
        .post(&endpoint.url)
        .header("content-type", "application/json")
        .header("webhook-id", id)
        .header("webhook-timestamp", kept.timestamp.to_string())
        .header("webhook-signature", signature)
        .body(kept.body.clone())
        .send()
        .await;
    match answer {
        Ok(answer) if answer.status().is_success() => Attempt::Delivered,
        Ok(answer) => Attempt::Failed(format!("the receiver answered {}", answer.status())),
        Err(error) if error.is_timeout() => Attempt::Failed("the receiver did not answer in time".into()),
        Err(error) => Attempt::Failed(error.without_url().to_string()),
    }
}

/// Logs a delivery's end; the messages of entries that fall off the log are let go.
fn log(console: &Console, endpoint: Option<&Endpoint>, pending: &Pending, outcome: &Attempt) {
    let mut log: Vec<Delivery> = console.store.setting(LOG).ok().flatten().unwrap_or_default();
    log.insert(
        0,
        Delivery {
            at: crate::console::campaigns::now_text(),
            endpoint: pending.endpoint.clone(),
            url: endpoint.map(|endpoint| endpoint.url.clone()).unwrap_or_default(),
            message: pending.message.clone(),
            kind: pending.kind.clone(),
            campaign: pending.campaign.clone(),
            attempts: pending.attempts,
            error: match outcome {
                Attempt::Delivered => None,
                Attempt::Failed(error) => Some(error.clone()),
            },
        },
    );
    for dropped in log.split_off(LOG_KEPT.min(log.len())) {
        let still_logged = log.iter().any(|delivery| delivery.message == dropped.message);
        if !still_logged {
            let _ = console.store.remove_in(MESSAGES, &dropped.message);
        }
    }
    if let Err(error) = console.store.put_setting(LOG, &log) {
        tracing::error!("cannot log a webhook: {error}");
    }
}

/// An administrator's redelivery of a logged message: the same id and body, attempted now and on
/// the schedule again.
pub fn redeliver(console: &Console, endpoint: &str, message: &str) -> Result<(), ConsoleError> {
    let log: Vec<Delivery> = console.store.setting(LOG)?.unwrap_or_default();
    let delivery = log
        .iter()
        .find(|delivery| delivery.endpoint == endpoint && delivery.message == message)
        .ok_or(ConsoleError::NotFound)?;
    if console.store.get_in::<Kept>(MESSAGES, message)?.is_none() {
        return Err(ConsoleError::NotFound);
    }
    let pending = Pending {
        endpoint: delivery.endpoint.clone(),
        message: delivery.message.clone(),
        kind: delivery.kind.clone(),
        campaign: delivery.campaign.clone(),
        attempts: 0,
        due: now_millis(),
        last_error: None,
        next_cursor: None,
    };
    console.store.put_in(OUTBOX, &outbox_key(&pending), &pending)?;
    console.webhooks.wake.notify_one();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::sign;

    /// The Standard Webhooks specification's own example (its reference libraries' test vector).
    #[test]
    fn a_signature_is_the_specifications() {
        let signature = sign(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            r#"{"test": 2432232314}"#,
        );
        assert_eq!(
            signature.as_deref(),
            Some("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        );
    }
}
