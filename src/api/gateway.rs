//! Wire types of the gateway notification send and its result lookups.

use super::GatewayNumberEntry;
use serde::{Deserialize, Serialize};

/// A gateway notification button: `type` (`WL`, `AL`, `BK`, `MD`), `name`, and links per type.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct GatewayButton {
    #[serde(rename = "type")]
    pub button_type: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_pc: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_mobile: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme_android: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme_ios: Option<String>,
}

/// `POST {gateway_url}/alimTalk`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct GatewayAlimTalkRequest {
    pub group_id: String,
    pub service: String,
    pub template: String,
    pub message: String,
    pub numbers: Vec<GatewayNumberEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buttons: Option<Vec<GatewayButton>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alter: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alter_message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_no: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_id: Option<String>,
}

/// Acceptance states of `results[].status`.
pub mod acceptance {
    pub const PENDING: &str = "GW_PENDING";
    pub const FAILED: &str = "FAILED";
    pub const ERROR: &str = "ERROR";
}

/// Final states of a send record's `result`.
pub mod final_result {
    pub const PENDING: &str = "GW_PENDING";
    pub const OK: &str = "OK";
    pub const FAILED: &str = "FAILED";
    pub const GIVEUP: &str = "GIVEUP";
}

/// One recipient's acceptance in the gateway send response.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct GatewayAcceptance {
    pub id: String,
    pub uid: String,
    pub mobile: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The 200 response of `POST {gateway_url}/alimTalk`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct GatewaySendResponse {
    pub success: bool,
    pub send_group_id: String,
    pub accepted: u64,
    pub total: u64,
    pub results: Vec<GatewayAcceptance>,
}

/// A send record, as `GET /result/:id` returns it and as items of the send-group listing
/// ("some fields may be omitted in items", so all but `id` are optional when reading).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct SendRecord {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mobile: Option<String>,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub message_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_group_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_status: Option<String>,
}

/// A page of `GET /result/sendGroup/:sendGroupId`; `lastKey` is absent on the last page.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct ResultPage {
    pub items: Vec<SendRecord>,
    pub count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_key: Option<String>,
}

/// Page size bounds of the send-group listing.
pub const RESULT_PAGE_DEFAULT: u32 = 100;
pub const RESULT_PAGE_MAX: u32 = 500;
/// The most characters a gateway `uid` may have.
pub const UID_MAX_CHARS: usize = 20;
