//! Wire types of the standard deployment: notification (`/alimTalk`), brand (`/friendTalk/brand`), SMS and LMS.

use super::{Code, MappingEntry, NumberEntry};
use serde::{Deserialize, Serialize};

/// `POST {base_url}/alimTalk`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct AlimTalkRequest {
    pub service: u64,
    pub template: String,
    pub group_id: String,
    pub message: String,
    pub numbers: Vec<NumberEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alter: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_no: Option<String>,
}

/// The eight bubble types of a brand message.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ChatBubbleType {
    Text,
    Image,
    Wide,
    WideItemList,
    CarouselFeed,
    PremiumVideo,
    Commerce,
    CarouselCommerce,
}

impl ChatBubbleType {
    /// Rule 2 of the spec: `FREE` supports only these five.
    pub fn allowed_for_free(self) -> bool {
        !matches!(
            self,
            ChatBubbleType::PremiumVideo | ChatBubbleType::Commerce | ChatBubbleType::CarouselCommerce
        )
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, Default)]
#[serde(rename_all = "UPPERCASE")]
pub enum SendType {
    #[default]
    Free,
    Basic,
}

/// Brand audience: `I` requested friends, `F` all friends, `N` non-friends, `M` both.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, Default)]
pub enum Targeting {
    #[default]
    I,
    F,
    N,
    M,
}

impl Targeting {
    /// `N` and `M` reach non-friends, need `channelId` and an approved channel, and bill `bm_nonfriend`.
    pub fn reaches_non_friends(self) -> bool {
        matches!(self, Targeting::N | Targeting::M)
    }
}

/// A brand message button: `name`, `link1` (PC URL), `link2` (mobile URL).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct BrandButton {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link1: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link2: Option<String>,
}

/// `POST {base_url}/friendTalk/brand`. The inner structure of `carousel`, `item`, `coupon` and
/// `commerce` is not shown by the spec, so they travel as free JSON.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct BrandRequest {
    pub service: u64,
    pub chat_bubble_type: ChatBubbleType,
    pub group_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numbers: Option<Vec<NumberEntry>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mobile: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_type: Option<SendType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targeting: Option<Targeting>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buttons: Option<Vec<BrandButton>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carousel: Option<Vec<serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commerce: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coupon: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alter: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alter_message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_no: Option<String>,
}

impl BrandRequest {
    /// A request with the required fields and nothing else.
    pub fn new(service: u64, chat_bubble_type: ChatBubbleType, group_id: impl Into<String>) -> Self {
        BrandRequest {
            service,
            chat_bubble_type,
            group_id: group_id.into(),
            numbers: None,
            mobile: None,
            send_type: None,
            template: None,
            targeting: None,
            channel_id: None,
            message: None,
            image: None,
            buttons: None,
            carousel: None,
            item: None,
            commerce: None,
            coupon: None,
            header: None,
            additional_content: None,
            alter: None,
            alter_message: None,
            callback_no: None,
        }
    }

    /// Rule 1 of the spec: the structural fields a `BASIC` request must not carry.
    pub fn structural_fields(&self) -> Vec<&'static str> {
        let mut present = Vec::new();
        if self.image.is_some() {
            present.push("image");
        }
        if self.carousel.is_some() {
            present.push("carousel");
        }
        if self.item.is_some() {
            present.push("item");
        }
        if self.commerce.is_some() {
            present.push("commerce");
        }
        if self.coupon.is_some() {
            present.push("coupon");
        }
        if self.buttons.is_some() {
            present.push("buttons");
        }
        present
    }
}

/// `POST {base_url}/sms` and `POST {base_url}/sms/lms` (the latter may carry `subject`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct TextMessageRequest {
    pub service: u64,
    pub message: String,
    pub numbers: Vec<String>,
    pub group_id: String,
    pub callback_no: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapping: Option<Vec<MappingEntry>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

/// One recipient's entry in `value[]`: `uid`, `date` (epoch ms), `status`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RecipientResult {
    pub uid: u64,
    pub date: i64,
    pub status: String,
}

/// The 200 response of the standard send endpoints. SMS/LMS responses have no `url` or
/// `message`; brand uses `status` `error` where notification uses `fail`. Every answer of the
/// standard deployment carries `version` (spec, "Versioning"), yet it stays optional here: the
/// client reads answers with this type too, and one without a `version` still tells it what
/// was sent.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SendResponse {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub status: String,
    pub code: Code,
    pub datetime: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default)]
    pub value: Vec<RecipientResult>,
    pub count: u64,
    pub total: u64,
}

/// Per-recipient status codes of the SMS/LMS endpoints.
pub mod text_status {
    pub const SMS_IN_PROGRESS: &str = "SMS_00";
    pub const LMS_IN_PROGRESS: &str = "MMS_0000";
    pub const ACCEPTED: &str = "OK";
    pub const ERROR: &str = "ERROR";
}

/// Whether a per-recipient status of any standard endpoint means the message was taken.
pub fn status_accepted(status: &str) -> bool {
    matches!(
        status,
        "OK" | text_status::SMS_IN_PROGRESS | text_status::LMS_IN_PROGRESS
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_send_response_without_version_url_or_message_is_read() {
        // What a deployment that omits `version` might answer: the client still reads what was sent.
        let answer = r#"{"status":"success","code":"200","datetime":"2026-01-05 10:00:00",
            "value":[{"uid":1000000001,"date":1767574800000,"status":"SMS_00"}],"count":1,"total":1}"#;
        let response: SendResponse = serde_json::from_str(answer).expect("an answer without version is read");
        assert_eq!(response.version, None);
        assert_eq!(response.value[0].status, text_status::SMS_IN_PROGRESS);
        assert_eq!((response.count, response.total), (1, 1));
    }
}
