//! The sandbox's in-memory service: group state, authentication and refusals; each group of endpoints applies its rules in a module of its own.

mod billing;
mod brand;
mod channels;
mod compact;
mod gateway_send;
mod ledger;
mod notification;
mod results;
mod senders;
mod text;

#[cfg(test)]
mod tests;

use super::accounts::{Accounts, GroupConfig, OutcomeRule, TemplateConfig};
use crate::api::channel::{channel_status, CategoryList, Channel};
use crate::api::ledger::SentToken;
use crate::api::standard::{RecipientResult, SendResponse};
use crate::api::{now_millis, Code, ErrorBody, NumberEntry, VariableSource};
use crate::phone;
use crate::template::Template;
use compact::{Interner, NumberBook, PackedNumber, Segmented};
use ledger::LedgerBook;
use results::{GatewayRecord, SendGroup};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// Friends a channel needs before it may target non-friends (`N`, `M`).
pub const NON_FRIEND_MIN_FRIENDS: u64 = 50_000;
/// Verification token requests allowed per minute.
pub const TOKEN_REQUESTS_PER_MINUTE: usize = 10;
const API_VERSION: &str = "sbx-1.0";

/// A refused request: the HTTP status and the body the service answers with.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    pub http: u16,
    pub body: ErrorBody,
    pub retry_after: Option<u64>,
}

impl Rejection {
    fn new(http: u16, status: &str, code: impl Into<String>, message: impl Into<String>) -> Rejection {
        Rejection {
            http,
            body: ErrorBody {
                status: Some(status.to_string()),
                code: Some(Code::text(code)),
                message: Some(message.into()),
                error: None,
            },
            retry_after: None,
        }
    }
    /// A 400 of the standard notification and SMS endpoints and of the gateway (`status` `fail`).
    pub fn fail(code: &str, message: impl Into<String>) -> Rejection {
        Rejection::new(400, "fail", code, message)
    }
    /// A 400 of the brand endpoint (`status` `error`).
    pub fn error(code: &str, message: impl Into<String>) -> Rejection {
        Rejection::new(400, "error", code, message)
    }
    pub fn missing_credentials(message: impl Into<String>) -> Rejection {
        Rejection::new(401, "fail", "ERR_100", message)
    }
    pub fn credentials_mismatch(message: impl Into<String>) -> Rejection {
        Rejection::new(401, "fail", "ERR_102", message)
    }
    /// A 404 with the `error` body of the gateway lookups.
    pub fn not_found(what: impl Into<String>) -> Rejection {
        Rejection {
            http: 404,
            body: ErrorBody {
                error: Some(what.into()),
                ..ErrorBody::default()
            },
            retry_after: None,
        }
    }
    pub fn with_http(mut self, http: u16) -> Rejection {
        self.http = http;
        self
    }
}

/// Which credentials a request carried.
pub struct Credentials<'a> {
    pub api_key: Option<&'a str>,
    /// The `groupid` (or `groupId`) header.
    pub group_header: Option<&'a str>,
    /// The body's `groupId`, where the endpoint has one.
    pub group_body: Option<&'a str>,
}

/// Index of an authenticated group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupRef(usize);

struct CompiledTemplate {
    config: TemplateConfig,
    template: Template,
}

struct SenderState {
    status: String,
}

struct ChannelState {
    record: Channel,
    friends: u64,
    nm_approved: bool,
}

/// The fallback SMS/LMS a gateway send asked for (`alter`), sent if its record settles `FAILED`;
/// kept only for records whose outcome rule makes them settle so.
struct Fallback {
    /// `None` when the request gave no `callbackNo` and neither the channel nor the group has one.
    callback_no: Option<String>,
    text: String,
}

struct PendingToken {
    token: String,
}

struct GroupState {
    config: GroupConfig,
    callback_numbers: Vec<String>,
    templates: HashMap<String, CompiledTemplate>,
    brand_templates: HashMap<String, Option<Template>>,
    balance: i64,
    ledger: LedgerBook,
    /// Every number of every processed send request, in order (`/_sandbox/sent` counts them when asked).
    sent: Segmented<PackedNumber>,
    numbers: NumberBook,
    texts: Interner,
    next_uid: u64,
    senders: HashMap<String, SenderState>,
    tokens: HashMap<(String, String), PendingToken>,
    outbox: Vec<SentToken>,
    token_requests: VecDeque<Instant>,
    channels: HashMap<String, ChannelState>,
    channel_order: Vec<String>,
    channel_position: HashMap<String, usize>,
    records: Segmented<GatewayRecord>,
    record_index: HashMap<uuid::Uuid, u32>,
    send_groups: Vec<SendGroup>,
    send_group_index: HashMap<uuid::Uuid, u32>,
    fallbacks: HashMap<u32, Fallback>,
    /// Send groups with records still `GW_PENDING`, by when they settle.
    pending: VecDeque<(Instant, u32)>,
}

/// The whole emulated service.
pub struct SandboxState {
    groups: Vec<GroupState>,
    by_key: HashMap<String, usize>,
    settle_after: Duration,
    categories: CategoryList,
}

/// Digits of a sender number, so `02-1234-5678` and `0212345678` compare equal.
fn digits_of(number: &str) -> String {
    number.chars().filter(char::is_ascii_digit).collect()
}

fn korean_datetime() -> String {
    let offset = chrono::FixedOffset::east_opt(9 * 3600).expect("valid offset");
    chrono::Utc::now()
        .with_timezone(&offset)
        .format("%Y-%m-%d %H:%M:%S")
        .to_string()
}

fn random_hex(chars: usize) -> String {
    let mut out = String::with_capacity(chars + 32);
    while out.len() < chars {
        out.push_str(&uuid::Uuid::new_v4().simple().to_string());
    }
    out.truncate(chars);
    out
}

impl GroupState {
    fn new(config: GroupConfig, now: i64) -> GroupState {
        let templates = config
            .templates
            .iter()
            .map(|t| {
                (
                    t.code.clone(),
                    CompiledTemplate {
                        config: t.clone(),
                        template: Template::compile(&t.text),
                    },
                )
            })
            .collect();
        let brand_templates = config
            .brand_templates
            .iter()
            .map(|t| (t.code.clone(), t.text.as_deref().map(Template::compile)))
            .collect();
        let senders = config
            .sender_keys
            .iter()
            .map(|s| {
                (
                    s.key.clone(),
                    SenderState {
                        status: s.status.clone(),
                    },
                )
            })
            .collect();
        let mut state = GroupState {
            callback_numbers: config.callback_numbers.iter().map(|n| digits_of(n)).collect(),
            balance: config.balance,
            templates,
            brand_templates,
            ledger: LedgerBook::default(),
            sent: Segmented::default(),
            numbers: NumberBook::default(),
            texts: Interner::default(),
            next_uid: 1_000_000_001,
            senders,
            tokens: HashMap::new(),
            outbox: Vec::new(),
            token_requests: VecDeque::new(),
            channels: HashMap::new(),
            channel_order: Vec::new(),
            channel_position: HashMap::new(),
            records: Segmented::default(),
            record_index: HashMap::new(),
            send_groups: Vec::new(),
            send_group_index: HashMap::new(),
            fallbacks: HashMap::new(),
            pending: VecDeque::new(),
            config,
        };
        for channel in state.config.channels.clone() {
            let record = Channel {
                id: channel.id.clone(),
                group_id: state.config.id.clone(),
                name: channel.name.clone(),
                sender_key: channel.sender_key.clone(),
                callback_no: channel.callback_no.clone(),
                status: channel_status::ENABLE.to_string(),
                channel_status: "ACTIVE".to_string(),
                created_at: now,
                updated_at: now,
            };
            state.insert_channel(ChannelState {
                record,
                friends: channel.friends,
                nm_approved: channel.nm_approved,
            });
        }
        state
    }

    fn insert_channel(&mut self, channel: ChannelState) {
        let id = channel.record.id.clone();
        self.channel_position.insert(id.clone(), self.channel_order.len());
        self.channel_order.push(id.clone());
        self.channels.insert(id, channel);
    }

    /// Refuses a sender number the group did not register (SMS, LMS and every fallback send
    /// only go from pre-registered numbers).
    fn check_callback_registered(&self, number: &str, reject: fn(&str, String) -> Rejection) -> Result<(), Rejection> {
        let digits = digits_of(number);
        if !digits.is_empty() && self.callback_numbers.contains(&digits) {
            return Ok(());
        }
        Err(reject(
            "SBX_CALLBACK_NOT_REGISTERED",
            format!("callbackNo {number} is not a pre-registered sender number"),
        ))
    }

    fn outcome(&self, digits: &str) -> Option<&OutcomeRule> {
        self.outcome_index(digits).map(|index| &self.config.outcomes[index])
    }

    fn outcome_index(&self, digits: &str) -> Option<usize> {
        self.config
            .outcomes
            .iter()
            .position(|rule| digits.ends_with(&rule.ends_with))
    }

    fn count_sent(&mut self, hp: &str) {
        let number = match phone::normalize(hp) {
            Ok(digits) => self.numbers.pack(&digits),
            Err(_) => self.numbers.pack(hp),
        };
        self.sent.push(number);
    }

    fn next_uid(&mut self) -> u64 {
        let uid = self.next_uid;
        self.next_uid += 1;
        uid
    }
}

fn parse_limit(raw: Option<&str>, default: u32, max: u32) -> Result<usize, Rejection> {
    let Some(raw) = raw else { return Ok(default as usize) };
    match raw.trim().parse::<u32>() {
        Ok(limit) if (1..=max).contains(&limit) => Ok(limit as usize),
        _ => Err(Rejection::fail(
            "SBX_BAD_LIMIT",
            format!("limit must be a number from 1 to {max}, got {raw:?}"),
        )),
    }
}

/// Fills a recipient's text, or names the variable it lacks.
fn fill(template: &Template, source: &dyn VariableSource) -> Result<String, String> {
    template.render(source).map_err(|missing| missing.key)
}

impl SandboxState {
    pub fn new(accounts: &Accounts) -> SandboxState {
        let now = now_millis();
        let groups: Vec<GroupState> = accounts
            .groups
            .iter()
            .cloned()
            .map(|g| GroupState::new(g, now))
            .collect();
        let by_key = groups
            .iter()
            .enumerate()
            .map(|(index, g)| (g.config.api_key.clone(), index))
            .collect();
        SandboxState {
            groups,
            by_key,
            settle_after: accounts.settle_after(),
            categories: CategoryList {
                categories: accounts.categories.clone(),
            },
        }
    }

    /// Checks the key and that every group the request names is the key's group.
    pub fn authenticate(
        &self,
        credentials: &Credentials<'_>,
        group_header_required: bool,
    ) -> Result<GroupRef, Rejection> {
        let api_key = match credentials.api_key {
            Some(key) if !key.is_empty() => key,
            _ => {
                return Err(Rejection::missing_credentials(
                    "authentication data (apikey) is missing",
                ))
            }
        };
        if group_header_required && credentials.group_header.is_none_or(str::is_empty) {
            return Err(Rejection::missing_credentials(
                "authentication data (groupid header) is missing",
            ));
        }
        let Some(&index) = self.by_key.get(api_key) else {
            return Err(Rejection::credentials_mismatch("authentication failed"));
        };
        let group_id = &self.groups[index].config.id;
        let named: Vec<&str> = [credentials.group_header, credentials.group_body]
            .into_iter()
            .flatten()
            .collect();
        if named.is_empty() {
            return Err(Rejection::missing_credentials(
                "authentication data (groupId) is missing",
            ));
        }
        if named.iter().any(|name| name != group_id) {
            return Err(Rejection::credentials_mismatch(
                "header data mismatch: groupId does not match the apikey",
            ));
        }
        Ok(GroupRef(index))
    }

    /// "The gateway deployment is only for groups that were granted gateway eligibility":
    /// every gateway endpoint, sends, lookups, sender profiles, categories and channels alike.
    pub fn check_gateway_eligible(&self, group: GroupRef) -> Result<(), Rejection> {
        if self.groups[group.0].config.gateway {
            return Ok(());
        }
        Err(Rejection::fail(
            "SBX_GATEWAY_NOT_ELIGIBLE",
            "this group was not granted gateway eligibility",
        )
        .with_http(403))
    }

    fn group(&mut self, group: GroupRef) -> &mut GroupState {
        let state = &mut self.groups[group.0];
        state.settle_due(Instant::now());
        state
    }
}

/// Refuses an empty recipient list and repeated `key`s.
fn check_entries(entries: &[NumberEntry], reject: fn(&str, String) -> Rejection) -> Result<(), Rejection> {
    if entries.is_empty() {
        return Err(reject("SBX_NO_RECIPIENTS", "numbers must not be empty".into()));
    }
    let mut keys = std::collections::HashSet::with_capacity(entries.len());
    for entry in entries {
        if !keys.insert(entry.key) {
            return Err(reject(
                "SBX_DUPLICATE_KEY",
                format!("key {} appears twice in numbers", entry.key),
            ));
        }
    }
    Ok(())
}

/// The 200 answer of a standard send. Every one carries `version` (spec, "Versioning": responses
/// of the standard deployment carry it); `url` and `message` only where the spec's response lists
/// them, so SMS and LMS pass `None`.
fn send_response(url: Option<&str>, value: Vec<RecipientResult>) -> SendResponse {
    let total = value.len() as u64;
    let count = value
        .iter()
        .filter(|v| crate::api::standard::status_accepted(&v.status))
        .count() as u64;
    SendResponse {
        version: Some(API_VERSION.to_string()),
        status: "success".into(),
        code: Code::Number(200),
        datetime: korean_datetime(),
        url: url.map(str::to_string),
        message: url.map(|_| "success".to_string()),
        value,
        count,
        total,
    }
}
