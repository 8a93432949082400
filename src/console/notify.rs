//! Notifications: the channels an administrator sets (a Slack-compatible incoming webhook, which KakaoWork and Teams gateways also take, and email over SMTP), each with the events it wants; a notice is queued without waiting, so a run never waits for a channel, and delivered by tasks of its own with retries and backoff, each delivery logged for the administrators' page.

mod email;

use super::words::{fill, Words};
use super::{Console, Shared};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::mpsc;

/// The store's names of the channels and of the delivery log.
const CHANNELS: &str = "notification_channels";
const LOG: &str = "notification_log";
/// Deliveries kept in the log, newest first.
pub const LOG_KEPT: usize = 200;
/// Attempts of one delivery, with the waits between them doubling from [`FIRST_WAIT`].
const ATTEMPTS: u32 = 6;
const FIRST_WAIT: Duration = Duration::from_secs(1);
/// How long a receiver may take to answer one attempt.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

/// What a notice is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeKind {
    ApprovalRequested,
    Approved,
    Started,
    Paused,
    MonthThreshold,
    Finished,
    Interrupted,
}

impl NoticeKind {
    pub const ALL: [NoticeKind; 7] = [
        NoticeKind::ApprovalRequested,
        NoticeKind::Approved,
        NoticeKind::Started,
        NoticeKind::Paused,
        NoticeKind::MonthThreshold,
        NoticeKind::Finished,
        NoticeKind::Interrupted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            NoticeKind::ApprovalRequested => "approval_requested",
            NoticeKind::Approved => "approved",
            NoticeKind::Started => "started",
            NoticeKind::Paused => "paused",
            NoticeKind::MonthThreshold => "month_threshold",
            NoticeKind::Finished => "finished",
            NoticeKind::Interrupted => "interrupted",
        }
    }

    pub fn parse(text: &str) -> Option<NoticeKind> {
        NoticeKind::ALL.into_iter().find(|kind| kind.as_str() == text)
    }

    /// The event in words.
    pub fn words(self, w: &Words) -> &'static str {
        match self {
            NoticeKind::ApprovalRequested => w.notice_approval_requested,
            NoticeKind::Approved => w.notice_approved,
            NoticeKind::Started => w.notice_started,
            NoticeKind::Paused => w.notice_paused,
            NoticeKind::MonthThreshold => w.notice_month_threshold,
            NoticeKind::Finished => w.notice_finished,
            NoticeKind::Interrupted => w.notice_interrupted,
        }
    }
}

/// Where notices go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Target {
    /// `POST {"text": "…"}`, as Slack's incoming webhooks take it.
    Webhook { url: String },
    /// Email over SMTP; the password, if any, from the server's environment (never stored).
    Email {
        host: String,
        port: u16,
        security: SmtpSecurity,
        from: String,
        to: Vec<String>,
        user: Option<String>,
        password_env: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SmtpSecurity {
    /// SMTPS (port 465).
    Tls,
    /// STARTTLS, required (port 587).
    StartTls,
    /// Plain SMTP: only to a relay on this machine (loopback).
    Plain,
}

/// A channel: a target and the events it wants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Channel {
    pub id: String,
    pub target: Target,
    pub events: Vec<NoticeKind>,
}

impl Channel {
    /// Where it goes, as the page names it (no password: there is none to show).
    pub fn address(&self) -> String {
        match &self.target {
            Target::Webhook { url } => url.clone(),
            Target::Email { host, port, to, .. } => format!("{} (SMTP {host}:{port})", to.join(", ")),
        }
    }
}

/// One event to tell: its kind, the campaign (id, name), who did it and what it came to.
#[derive(Debug, Clone)]
pub struct Notice {
    pub kind: NoticeKind,
    pub campaign: Option<(String, String)>,
    pub by: String,
    pub detail: String,
}

/// One delivery as the log keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Delivery {
    pub at: String,
    pub channel: String,
    pub event: NoticeKind,
    pub campaign: Option<String>,
    pub attempts: u32,
    /// `None`: delivered.
    pub error: Option<String>,
}

/// The queue of notices: told without waiting, delivered by [`spawn`]'s task.
pub struct Notices {
    sender: mpsc::UnboundedSender<Notice>,
    receiver: parking_lot::Mutex<Option<mpsc::UnboundedReceiver<Notice>>>,
}

impl Default for Notices {
    fn default() -> Notices {
        let (sender, receiver) = mpsc::unbounded_channel();
        Notices {
            sender,
            receiver: parking_lot::Mutex::new(Some(receiver)),
        }
    }
}

impl Notices {
    /// Queues a notice; never waits (a run's events call it).
    pub fn tell(&self, notice: Notice) {
        let _ = self.sender.send(notice);
    }
}

impl Console {
    pub fn channels(&self) -> Result<Vec<Channel>, super::error::ConsoleError> {
        Ok(self.store.setting(CHANNELS)?.unwrap_or_default())
    }

    pub fn put_channels(&self, channels: &[Channel]) -> Result<(), super::error::ConsoleError> {
        self.store.put_setting(CHANNELS, &channels)
    }

    pub fn deliveries(&self) -> Result<Vec<Delivery>, super::error::ConsoleError> {
        Ok(self.store.setting(LOG)?.unwrap_or_default())
    }

    /// A notice about campaign `id` (named `name`), by `by`, with `detail` (phone numbers masked).
    pub fn notify(&self, kind: NoticeKind, campaign: Option<(&str, &str)>, by: &str, detail: &str) {
        // The same events for other systems' webhooks (a run's end tells them its own way).
        let hooked = match kind {
            NoticeKind::ApprovalRequested => Some(("campaign.submitted", "awaiting_approval")),
            NoticeKind::Approved => Some(("campaign.approved", "approved")),
            NoticeKind::Started => Some(("campaign.started", "sending")),
            NoticeKind::Paused => Some(("campaign.paused", "sending")),
            NoticeKind::Interrupted => Some(("campaign.interrupted", "interrupted")),
            NoticeKind::Finished | NoticeKind::MonthThreshold => None,
        };
        if let (Some((event, state)), Some((id, name))) = (hooked, campaign) {
            self.tell_state(event, id, name, state, by, detail);
        }
        self.notices.tell(Notice {
            kind,
            campaign: campaign.map(|(id, name)| (id.to_string(), name.to_string())),
            by: by.to_string(),
            detail: crate::phone::mask_phones(detail).into_owned(),
        });
    }
}

/// The line a notice says, in the console's language, with the campaign's page.
pub fn line(console: &Console, notice: &Notice) -> String {
    let w: &Words = console.lang.unwrap_or(&super::words::EN);
    let (campaign, link) = match &notice.campaign {
        Some((id, name)) => (name.clone(), format!("{}/campaigns/{id}", console.base_url)),
        None => (w.notice_workspace.to_string(), format!("{}/month", console.base_url)),
    };
    fill(
        w.notice_line,
        &[
            ("campaign", &campaign),
            ("event", notice.kind.words(w)),
            ("by", &notice.by),
            (
                "detail",
                &if notice.detail.is_empty() {
                    String::new()
                } else {
                    format!(" · {}", notice.detail)
                },
            ),
            ("link", &link),
        ],
    )
}

/// Starts delivering the console's notices. The task holds the console weakly, so that a
/// console that ends is not kept by its notices.
pub fn spawn(console: &Shared) {
    let Some(mut receiver) = console.notices.receiver.lock().take() else {
        return;
    };
    let weak = Arc::downgrade(console);
    tokio::spawn(async move {
        while let Some(notice) = receiver.recv().await {
            let Some(console) = weak.upgrade() else { break };
            let text = line(&console, &notice);
            let channels = console.channels().unwrap_or_default();
            drop(console);
            for channel in channels
                .into_iter()
                .filter(|channel| channel.events.contains(&notice.kind))
            {
                tokio::spawn(deliver(weak.clone(), channel, notice.clone(), text.clone()));
            }
        }
    });
}

/// Delivers one notice to one channel, trying again with doubling waits; logs how it went.
async fn deliver(console: Weak<Console>, channel: Channel, notice: Notice, text: String) {
    let mut wait = FIRST_WAIT;
    let mut attempts = 0;
    let error = loop {
        attempts += 1;
        let error = match send(&channel.target, &notice, &text).await {
            Ok(()) => break None,
            Err(error) => error,
        };
        if attempts == ATTEMPTS {
            break Some(error);
        }
        tokio::time::sleep(wait).await;
        wait *= 2;
    };
    if let Some(console) = console.upgrade() {
        let delivery = Delivery {
            at: super::campaigns::now_text(),
            channel: channel.address(),
            event: notice.kind,
            campaign: notice.campaign.map(|(_, name)| name),
            attempts,
            error,
        };
        let mut log = console.deliveries().unwrap_or_default();
        log.insert(0, delivery);
        log.truncate(LOG_KEPT);
        if let Err(error) = console.store.put_setting(LOG, &log) {
            tracing::error!("cannot log a notification: {error}");
        }
    }
}

async fn send(target: &Target, notice: &Notice, text: &str) -> Result<(), String> {
    match target {
        Target::Webhook { url } => {
            let client = reqwest::Client::builder()
                .timeout(ANSWER_WITHIN)
                .build()
                .map_err(|error| error.to_string())?;
            let answer = client
                .post(url)
                .json(&serde_json::json!({ "text": text }))
                .send()
                .await
                .map_err(|error| error.without_url().to_string())?;
            if answer.status().is_success() {
                Ok(())
            } else {
                Err(format!("the receiver answered {}", answer.status()))
            }
        }
        Target::Email { .. } => email::send(target, notice, text).await,
    }
}
