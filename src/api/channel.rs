//! Wire types of the gateway's sender profile, category and channel endpoints.

use serde::{Deserialize, Serialize};

/// Channel `status` values.
pub mod channel_status {
    pub const ENABLE: &str = "ENABLE";
    pub const DELETED: &str = "DELETED";
}

/// A channel record. `createdAt`/`updatedAt` are epoch milliseconds (the spec leaves the unit open).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Channel {
    pub id: String,
    pub group_id: String,
    pub name: String,
    pub sender_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_no: Option<String>,
    pub status: String,
    pub channel_status: String,
    pub created_at: i64,
    pub updated_at: i64,
}

/// `POST /channel` body.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct ChannelCreate {
    pub name: String,
    pub sender_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kakao_search_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_no: Option<String>,
}

/// `PUT /channel/:id` body: at least one field, or the service answers 400.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct ChannelUpdate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_no: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_key: Option<String>,
}

impl ChannelUpdate {
    pub fn is_empty(&self) -> bool {
        self.name.is_none() && self.callback_no.is_none() && self.sender_key.is_none()
    }
}

/// A page of `GET /channel`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct ChannelPage {
    pub items: Vec<Channel>,
    pub count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_key: Option<String>,
}

pub const CHANNEL_PAGE_DEFAULT: u32 = 50;
pub const CHANNEL_PAGE_MAX: u32 = 200;

/// Answer of `GET /channel/sender/token` (its shape is not shown by the spec: this is ours).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct TokenSent {
    pub status: String,
    pub message: String,
}

/// `POST /channel/sender` body.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct SenderIssue {
    pub token: String,
    pub phone_number: String,
    pub yellow_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category_code: Option<String>,
}

/// `POST /channel/sender` answer and `GET /channel/sender` body: `senderKey` and `status`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct SenderProfile {
    pub sender_key: String,
    pub status: String,
}

/// Sender profile states (the spec names them "active, in review").
pub mod sender_status {
    pub const ACTIVE: &str = "ACTIVE";
    pub const IN_REVIEW: &str = "IN_REVIEW";
}

/// One category code of `GET /category`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Category {
    pub code: String,
    pub name: String,
}

/// `GET /category` answer (shape not shown by the spec: this is ours).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct CategoryList {
    pub categories: Vec<Category>,
}
