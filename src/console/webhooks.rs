//! Webhooks for other systems: the endpoints an administrator registers with the events each wants (campaign state changes, progress every N %, each run's final results page by page), signed as the Standard Webhooks specification says, kept in an outbox on disk and retried with backoff for a day; a run only queues its events, so a slow or failing receiver never slows it.

mod deliver;
pub mod results;

use super::error::ConsoleError;
use super::{Console, Shared};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

pub use deliver::redeliver;

/// The store's names: the endpoints, the outbox, the messages the log keeps, the log.
const ENDPOINTS: &str = "webhook_endpoints";
pub(crate) const OUTBOX: &str = "webhook_outbox";
pub(crate) const MESSAGES: &str = "webhook_messages";
const LOG: &str = "webhook_log";
/// Deliveries kept in the log (their messages with them, for redelivery).
pub const LOG_KEPT: usize = 200;

/// The Standard Webhooks schedule after the first attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
/// 10 h (a day and more), then the delivery is given up and marked failed in the log.
pub const RETRY_WAITS: [Duration; 7] = [
    Duration::from_secs(5),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 60 * 60),
    Duration::from_secs(5 * 60 * 60),
    Duration::from_secs(10 * 60 * 60),
    Duration::from_secs(10 * 60 * 60),
];
/// How long a receiver may take to answer one attempt.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(15);
/// Rows in one results message.
pub const RESULTS_PAGE: usize = 500;

/// What an endpoint may want.
pub const EVENTS: [&str; 9] = [
    "campaign.submitted",
    "campaign.approved",
    "campaign.started",
    "campaign.paused",
    "campaign.stopped",
    "campaign.finished",
    "campaign.interrupted",
    "campaign.progress",
    "campaign.results",
];

/// An endpoint: where, with which secret, for which events.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Endpoint {
    pub id: String,
    pub url: String,
    /// `whsec_` and the base64 of 32 random bytes, as Standard Webhooks writes it.
    pub secret: String,
    pub events: Vec<String>,
    /// `campaign.progress` every this many percent.
    pub progress_every: u8,
    pub created_at: String,
}

/// One message to one endpoint, waiting in the outbox.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pending {
    pub endpoint: String,
    /// `msg_…`: the same for every attempt and a redelivery, so that a receiver drops repeats.
    pub message: String,
    pub kind: String,
    pub campaign: Option<String>,
    pub attempts: u32,
    /// Unix milliseconds of the next attempt.
    pub due: i64,
    pub last_error: Option<String>,
    /// A results message: the page after it goes once it is delivered.
    pub next_cursor: Option<String>,
}

/// One delivery as the log keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Delivery {
    pub at: String,
    pub endpoint: String,
    pub url: String,
    pub message: String,
    pub kind: String,
    pub campaign: Option<String>,
    pub attempts: u32,
    /// `None`: delivered (2xx).
    pub error: Option<String>,
}

/// An event, before it is made a message for each endpoint that wants it.
#[derive(Debug, Clone)]
pub struct Event {
    pub kind: &'static str,
    pub campaign: Option<String>,
    pub data: serde_json::Value,
}

/// How the console delivers: the schedule (shortened in tests) and the per-attempt limit.
#[derive(Debug, Clone)]
pub struct Schedule {
    pub waits: Vec<Duration>,
    pub answer_within: Duration,
}

impl Default for Schedule {
    fn default() -> Schedule {
        Schedule {
            waits: RETRY_WAITS.to_vec(),
            answer_within: ANSWER_WITHIN,
        }
    }
}

/// The queue of events (told without waiting) and what wakes the delivery task.
pub struct Webhooks {
    sender: mpsc::UnboundedSender<Event>,
    receiver: parking_lot::Mutex<Option<mpsc::UnboundedReceiver<Event>>>,
    pub(crate) wake: tokio::sync::Notify,
    pub(crate) schedule: Schedule,
    /// Outbox entries being attempted now.
    pub(crate) in_flight: parking_lot::Mutex<std::collections::HashSet<String>>,
}

impl Webhooks {
    pub fn new(schedule: Schedule) -> Webhooks {
        let (sender, receiver) = mpsc::unbounded_channel();
        Webhooks {
            sender,
            receiver: parking_lot::Mutex::new(Some(receiver)),
            wake: tokio::sync::Notify::new(),
            schedule,
            in_flight: parking_lot::Mutex::new(Default::default()),
        }
    }

    /// Queues an event; never waits (a run's events call it).
    pub fn tell(&self, event: Event) {
        let _ = self.sender.send(event);
    }
}

/// A campaign's part of every event: its id and name.
pub fn campaign_data(id: &str, name: &str) -> serde_json::Value {
    serde_json::json!({ "id": id, "name": name })
}

impl Console {
    pub fn endpoints(&self) -> Result<Vec<Endpoint>, ConsoleError> {
        Ok(self.store.setting(ENDPOINTS)?.unwrap_or_default())
    }

    pub fn put_endpoints(&self, endpoints: &[Endpoint]) -> Result<(), ConsoleError> {
        self.store.put_setting(ENDPOINTS, &endpoints)
    }

    pub fn webhook_log(&self) -> Result<Vec<Delivery>, ConsoleError> {
        Ok(self.store.setting(LOG)?.unwrap_or_default())
    }

    /// A state change of campaign `id` (named `name`): `kind` is one of [`EVENTS`].
    pub fn tell_state(&self, kind: &'static str, id: &str, name: &str, state: &str, by: &str, detail: &str) {
        self.webhooks.tell(Event {
            kind,
            campaign: Some(id.to_string()),
            data: serde_json::json!({
                "campaign": campaign_data(id, name),
                "state": state,
                "by": by,
                "detail": crate::phone::mask_phones(detail),
            }),
        });
    }
}

/// A new endpoint's secret.
pub fn new_secret() -> String {
    use base64::Engine;
    use rand::Rng;
    let bytes: [u8; 32] = rand::rng().random();
    format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// Starts the delivery task: it makes each told event a message for each endpoint that wants
/// it (written to the outbox before anything is sent), and attempts what is due. It holds the
/// console weakly, so that a console that ends is not kept by its webhooks.
pub fn spawn(console: &Shared) {
    let Some(mut receiver) = console.webhooks.receiver.lock().take() else {
        return;
    };
    let weak = Arc::downgrade(console);
    tokio::spawn(async move {
        loop {
            let Some(console) = weak.upgrade() else { break };
            let wake = async {
                tokio::select! {
                    event = receiver.recv() => event.map(Some),
                    () = console.webhooks.wake.notified() => Some(None),
                    () = tokio::time::sleep(Duration::from_millis(250)) => Some(None),
                }
            };
            match wake.await {
                None => break,
                Some(Some(event)) => {
                    let mut events = vec![event];
                    while let Ok(more) = receiver.try_recv() {
                        events.push(more);
                    }
                    if let Err(error) = deliver::enqueue(&console, &events) {
                        tracing::error!("cannot queue a webhook: {error}");
                    }
                }
                Some(None) => {}
            }
            deliver::attempt_due(&console);
        }
    });
}

/// A run's progress, as its board reads now.
pub struct Progress {
    pub done: u64,
    pub total: u64,
    pub accepted: u64,
    pub not_accepted: u64,
    pub uncertain: u64,
    pub finished: bool,
}

/// Tells `campaign.progress` for each whole percent a run passes (each endpoint hears every Nth),
/// read twice a second until the run ends; nothing when no endpoint wants it.
pub fn watch_progress(console: &Shared, id: &str, name: &str, read: impl Fn() -> Progress + Send + 'static) {
    let wanted = console.endpoints().is_ok_and(|endpoints| {
        endpoints
            .iter()
            .any(|endpoint| endpoint.events.iter().any(|kind| kind == "campaign.progress"))
    });
    if !wanted {
        return;
    }
    let weak = Arc::downgrade(console);
    let (id, name) = (id.to_string(), name.to_string());
    tokio::spawn(async move {
        let mut told = 0u64;
        loop {
            let view = read();
            let Some(console) = weak.upgrade() else { break };
            let percent = (view.done * 100).checked_div(view.total).unwrap_or(0);
            for passed in told + 1..=percent.min(100) {
                console.webhooks.tell(Event {
                    kind: "campaign.progress",
                    campaign: Some(id.clone()),
                    data: serde_json::json!({
                        "campaign": campaign_data(&id, &name),
                        "percent": passed,
                        "done": view.done,
                        "total": view.total,
                        "accepted": view.accepted,
                        "not_accepted": view.not_accepted,
                        "uncertain": view.uncertain,
                    }),
                });
            }
            told = told.max(percent);
            drop(console);
            if view.finished {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    });
}
