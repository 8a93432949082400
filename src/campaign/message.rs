//! What every recipient of a campaign gets, one spec per kind, and the request each spec makes for a chunk of recipients.

use super::Lane;
use crate::api::gateway::{GatewayAlimTalkRequest, GatewayButton};
use crate::api::standard::{
    AlimTalkRequest, BrandButton, BrandRequest, ChatBubbleType, SendType, Targeting, TextMessageRequest,
};
use crate::api::{GatewayNumberEntry, MappingEntry, NumberEntry, Variables};
use crate::plan::Recipient;
use crate::template::Template;

/// The message of a validated campaign: each kind carries exactly what it sends.
#[derive(Debug, Clone)]
pub enum Message {
    /// `alimtalk`: a registered notification template on the standard deployment.
    Notification(Notification),
    /// `brand`: free-form, or a registered brand template (`BASIC`).
    Brand(Brand),
    /// `sms`, `lms` and `text`.
    Text(TextMessage),
    /// `gateway-alimtalk`: a notification template on the gateway deployment.
    GatewayNotification(GatewayNotification),
}

#[derive(Debug, Clone)]
pub struct Notification {
    pub service: u64,
    /// The registered template's code.
    pub template: String,
    /// The registered template's text, as the campaign wrote it.
    pub text: Template,
    /// For title templates.
    pub title: Option<String>,
    pub fallback: Option<StandardFallback>,
}

/// `alter = true` on the standard deployment: a fallback SMS/LMS after a `CH_*` failure.
#[derive(Debug, Clone)]
pub struct StandardFallback {
    /// A registered sender number; the service refuses a fallback without one.
    pub callback_no: String,
    /// `alter_message`; without it the fallback carries the message text.
    pub text: Option<Template>,
}

#[derive(Debug, Clone)]
pub struct Brand {
    pub service: u64,
    pub chat_bubble_type: ChatBubbleType,
    pub content: BrandContent,
    pub targeting: Targeting,
    /// Required for targeting `N` and `M`.
    pub channel_id: Option<String>,
    pub header: Option<String>,
    pub additional_content: Option<String>,
    pub fallback: Option<StandardFallback>,
}

#[derive(Debug, Clone)]
pub enum BrandContent {
    /// `FREE`: sent as written (no placeholders); text, image or both.
    Free {
        text: Option<Template>,
        image: Option<String>,
        buttons: Option<Vec<BrandButton>>,
    },
    /// `BASIC`: the structure comes from the registered template; only its variables travel.
    Basic { template: String, text: Option<Template> },
}

impl Brand {
    /// The body text, if the campaign gives one.
    pub fn text(&self) -> Option<&Template> {
        match &self.content {
            BrandContent::Free { text, .. } | BrandContent::Basic { text, .. } => text.as_ref(),
        }
    }
}

/// SMS, LMS, or either per recipient (`text`).
#[derive(Debug, Clone)]
pub struct TextMessage {
    pub service: u64,
    pub text: Template,
    /// A registered sender number.
    pub callback_no: String,
    /// The LMS title; never sent on the SMS lane.
    pub subject: Option<String>,
    pub advertising: bool,
}

#[derive(Debug, Clone)]
pub struct GatewayNotification {
    pub sender_key: String,
    pub template: String,
    pub text: Template,
    pub title: Option<String>,
    /// Sent as given; without them the gateway looks up the registered buttons.
    pub buttons: Option<Vec<GatewayButton>>,
    pub channel_id: Option<String>,
    pub fallback: Option<GatewayFallback>,
}

/// `alter = true` on the gateway: a fallback after a `FAILED` result.
#[derive(Debug, Clone)]
pub struct GatewayFallback {
    pub text: Option<Template>,
    /// The gateway falls back to the channel's number when absent.
    pub callback_no: Option<String>,
}

/// One chunk's recipients and what their entries need: the group and the template variables.
pub struct Chunk<'a> {
    pub group_id: &'a str,
    /// Template variable (`VAR1`, ...) to column, in the order of each recipient's `vars`.
    pub variables: &'a [(String, String)],
    pub recipients: &'a [Recipient],
}

impl Chunk<'_> {
    fn variables_of(&self, recipient: &Recipient) -> Variables {
        self.variables
            .iter()
            .zip(recipient.values())
            .map(|((key, _), value)| (key.as_str(), value))
            .collect()
    }

    fn number_entries(&self) -> Vec<NumberEntry> {
        self.recipients
            .iter()
            .map(|r| NumberEntry {
                key: r.row,
                hp: r.phone.to_string(),
                name: r.name.as_deref().map(String::from),
                vars: self.variables_of(r),
            })
            .collect()
    }
}

/// The request of one chunk, by endpoint.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Alimtalk(AlimTalkRequest),
    Brand(BrandRequest),
    Sms(TextMessageRequest),
    Lms(TextMessageRequest),
    Gateway(GatewayAlimTalkRequest),
}

impl Message {
    /// The message text as the campaign wrote it, if it gives one.
    pub fn text(&self) -> Option<&Template> {
        match self {
            Message::Notification(notification) => Some(&notification.text),
            Message::GatewayNotification(notification) => Some(&notification.text),
            Message::Text(text) => Some(&text.text),
            Message::Brand(brand) => brand.text(),
        }
    }

    /// The text of the fallback when there is one (`alter = true`): its own, else the message text.
    pub fn fallback_text(&self) -> Option<&Template> {
        let own_text = match self {
            Message::Notification(notification) => notification.fallback.as_ref()?.text.as_ref(),
            Message::Brand(brand) => brand.fallback.as_ref()?.text.as_ref(),
            Message::GatewayNotification(notification) => notification.fallback.as_ref()?.text.as_ref(),
            Message::Text(_) => return None,
        };
        own_text.or_else(|| self.text())
    }

    /// The request that sends `chunk` on `lane`; only a text message has two lanes to choose from.
    pub fn request(&self, lane: Lane, chunk: &Chunk) -> Request {
        match self {
            Message::Notification(notification) => Request::Alimtalk(notification.request(chunk)),
            Message::Brand(brand) => Request::Brand(brand.request(chunk)),
            Message::Text(text) if lane == Lane::Lms => Request::Lms(text.request(lane, chunk)),
            Message::Text(text) => Request::Sms(text.request(lane, chunk)),
            Message::GatewayNotification(notification) => Request::Gateway(notification.request(chunk)),
        }
    }
}

impl Notification {
    fn request(&self, chunk: &Chunk) -> AlimTalkRequest {
        AlimTalkRequest {
            service: self.service,
            template: self.template.clone(),
            group_id: chunk.group_id.to_string(),
            message: self.text.service_text(),
            numbers: chunk.number_entries(),
            title: self.title.clone(),
            alter: self.fallback.as_ref().map(|_| true),
            callback_no: self.fallback.as_ref().map(|f| f.callback_no.clone()),
        }
    }
}

impl Brand {
    fn request(&self, chunk: &Chunk) -> BrandRequest {
        let mut request = BrandRequest::new(self.service, self.chat_bubble_type, chunk.group_id);
        request.numbers = Some(chunk.number_entries());
        request.targeting = Some(self.targeting);
        request.channel_id = self.channel_id.clone();
        request.message = self.text().map(Template::service_text);
        request.header = self.header.clone();
        request.additional_content = self.additional_content.clone();
        match &self.content {
            BrandContent::Free { image, buttons, .. } => {
                request.send_type = Some(SendType::Free);
                request.image = image.clone();
                request.buttons = buttons.clone();
            }
            BrandContent::Basic { template, .. } => {
                request.send_type = Some(SendType::Basic);
                request.template = Some(template.clone());
            }
        }
        if let Some(fallback) = &self.fallback {
            request.alter = Some(true);
            request.alter_message = fallback.text.as_ref().map(Template::service_text);
            request.callback_no = Some(fallback.callback_no.clone());
        }
        request
    }
}

impl TextMessage {
    fn request(&self, lane: Lane, chunk: &Chunk) -> TextMessageRequest {
        TextMessageRequest {
            service: self.service,
            message: self.text.service_text(),
            numbers: chunk.recipients.iter().map(|r| r.phone.to_string()).collect(),
            group_id: chunk.group_id.to_string(),
            callback_no: self.callback_no.clone(),
            mapping: self.text.has_placeholders().then(|| {
                chunk
                    .recipients
                    .iter()
                    .map(|r| MappingEntry {
                        name: r.name.as_deref().map(String::from),
                        vars: chunk.variables_of(r),
                    })
                    .collect()
            }),
            subject: if lane == Lane::Lms { self.subject.clone() } else { None },
        }
    }
}

impl GatewayNotification {
    fn request(&self, chunk: &Chunk) -> GatewayAlimTalkRequest {
        GatewayAlimTalkRequest {
            group_id: chunk.group_id.to_string(),
            service: self.sender_key.clone(),
            template: self.template.clone(),
            message: self.text.service_text(),
            numbers: chunk
                .recipients
                .iter()
                .map(|r| GatewayNumberEntry {
                    hp: r.phone.to_string(),
                    name: r.name.as_deref().map(String::from),
                    vars: chunk.variables_of(r),
                })
                .collect(),
            title: self.title.clone(),
            buttons: self.buttons.clone(),
            alter: self.fallback.as_ref().map(|_| true),
            alter_message: self
                .fallback
                .as_ref()
                .and_then(|f| f.text.as_ref())
                .map(Template::service_text),
            callback_no: self.fallback.as_ref().and_then(|f| f.callback_no.clone()),
            channel_id: self.channel_id.clone(),
        }
    }
}
