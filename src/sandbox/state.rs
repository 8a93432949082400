//! The sandbox's in-memory service: every rule of the spec applied to a request, with the ledger and send log.

use super::accounts::{Accounts, GroupConfig, Outcome, OutcomeRule, TemplateConfig};
use crate::api::channel::{
    channel_status, sender_status, CategoryList, Channel, ChannelCreate, ChannelPage, ChannelUpdate, SenderIssue,
    SenderProfile, TokenSent, CHANNEL_PAGE_DEFAULT, CHANNEL_PAGE_MAX,
};
use crate::api::gateway::{
    acceptance, final_result, GatewayAcceptance, GatewayAlimTalkRequest, GatewaySendResponse, ResultPage, SendRecord,
    RESULT_PAGE_DEFAULT, RESULT_PAGE_MAX,
};
use crate::api::ledger::{BillingClass, Ledger, LedgerEntry, LedgerKind, SentCounts, SentToken, TokenOutbox};
use crate::api::standard::{
    text_status, AlimTalkRequest, BrandRequest, RecipientResult, SendResponse, SendType, Targeting, TextMessageRequest,
};
use crate::api::{now_millis, Code, ErrorBody, MappingEntry, NumberEntry, VariableSource};
use crate::phone;
use crate::template::Template;
use crate::text::{euc_kr_len, TextLane, ALIMTALK_MAX_CHARS, LMS_SUBJECT_MAX_BYTES};
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

struct GatewayRecord {
    record: SendRecord,
    outcome: Option<OutcomeRule>,
    charged: i64,
    fallback: Option<(String, String)>,
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
    ledger: Vec<LedgerEntry>,
    sent: HashMap<String, u32>,
    sent_total: u64,
    next_uid: u64,
    senders: HashMap<String, SenderState>,
    tokens: HashMap<(String, String), PendingToken>,
    outbox: Vec<SentToken>,
    token_requests: VecDeque<Instant>,
    channels: HashMap<String, ChannelState>,
    channel_order: Vec<String>,
    channel_position: HashMap<String, usize>,
    records: HashMap<String, GatewayRecord>,
    send_groups: HashMap<String, Vec<String>>,
    record_position: HashMap<String, usize>,
    pending: VecDeque<(Instant, String)>,
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
            ledger: Vec::new(),
            sent: HashMap::new(),
            sent_total: 0,
            next_uid: 1_000_000_001,
            senders,
            tokens: HashMap::new(),
            outbox: Vec::new(),
            token_requests: VecDeque::new(),
            channels: HashMap::new(),
            channel_order: Vec::new(),
            channel_position: HashMap::new(),
            records: HashMap::new(),
            send_groups: HashMap::new(),
            record_position: HashMap::new(),
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

    fn callback_registered(&self, number: &str) -> bool {
        let digits = digits_of(number);
        !digits.is_empty() && self.callback_numbers.contains(&digits)
    }

    /// Checks `callbackNo` where `alter` asks for a fallback.
    fn check_fallback_callback(
        &self,
        alter: bool,
        callback_no: Option<&str>,
        reject: fn(&str, String) -> Rejection,
    ) -> Result<(), Rejection> {
        if !alter {
            return Ok(());
        }
        match callback_no {
            None | Some("") => Err(reject(
                "SBX_CALLBACK_REQUIRED",
                "callbackNo is required when alter is true".into(),
            )),
            Some(number) if !self.callback_registered(number) => Err(reject(
                "SBX_CALLBACK_NOT_REGISTERED",
                format!("callbackNo {number} is not a pre-registered sender number"),
            )),
            Some(_) => Ok(()),
        }
    }

    fn outcome(&self, digits: &str) -> Option<&OutcomeRule> {
        self.config
            .outcomes
            .iter()
            .find(|rule| digits.ends_with(&rule.ends_with))
    }

    fn count_sent(&mut self, hp: &str) {
        let key = phone::normalize(hp).unwrap_or_else(|_| hp.to_string());
        *self.sent.entry(key).or_insert(0) += 1;
        self.sent_total += 1;
    }

    fn next_uid(&mut self) -> u64 {
        let uid = self.next_uid;
        self.next_uid += 1;
        uid
    }

    /// Charges one message, or answers `None` when the balance does not cover it.
    fn charge(
        &mut self,
        class: BillingClass,
        recipient: &str,
        reference: String,
        send_group_id: Option<&str>,
    ) -> Option<i64> {
        let amount = self.config.prices.of(class);
        if amount > self.balance {
            return None;
        }
        self.balance -= amount;
        self.push_ledger(LedgerKind::Charge, class, recipient, amount, reference, send_group_id);
        Some(amount)
    }

    fn refund(
        &mut self,
        class: BillingClass,
        recipient: &str,
        amount: i64,
        reference: String,
        send_group_id: Option<&str>,
    ) {
        self.balance += amount;
        self.push_ledger(LedgerKind::Refund, class, recipient, amount, reference, send_group_id);
    }

    fn push_ledger(
        &mut self,
        kind: LedgerKind,
        class: BillingClass,
        recipient: &str,
        amount: i64,
        reference: String,
        send_group_id: Option<&str>,
    ) {
        self.ledger.push(LedgerEntry {
            seq: self.ledger.len() as u64 + 1,
            date: now_millis(),
            group_id: self.config.id.clone(),
            kind,
            billing_class: class,
            recipient: recipient.to_string(),
            amount,
            reference,
            send_group_id: send_group_id.map(str::to_string),
        });
    }

    /// The automatic fallback text message: SMS or LMS by its EUC-KR length. Answers whether it went.
    fn send_fallback(&mut self, recipient: &str, text: &str, reference: String, send_group_id: Option<&str>) -> bool {
        let class = match euc_kr_len(text).ok().and_then(TextLane::for_bytes) {
            Some(TextLane::Sms) => BillingClass::FallbackSms,
            Some(TextLane::Lms) => BillingClass::FallbackLms,
            None => return false,
        };
        self.charge(class, recipient, reference, send_group_id).is_some()
    }

    fn settle_due(&mut self, now: Instant) {
        while let Some((due, _)) = self.pending.front() {
            if *due > now {
                break;
            }
            let (_, id) = self.pending.pop_front().expect("front exists");
            self.settle(&id);
        }
    }

    fn settle(&mut self, id: &str) {
        let Some(entry) = self.records.get_mut(id) else { return };
        let outcome = entry.outcome.as_ref().map(|rule| (rule.outcome, rule.message.clone()));
        let record = &mut entry.record;
        record.raw_status = None;
        let mobile = record.mobile.clone().unwrap_or_default();
        let send_group_id = record.send_group_id.clone();
        match outcome {
            Some((Outcome::GatewayFailed, message)) => {
                record.result = Some(final_result::FAILED.into());
                record.status = Some("FAILED".into());
                record.error_message = Some(message.unwrap_or_else(|| "delivery failed".into()));
                let charged = entry.charged;
                let fallback = entry.fallback.clone();
                self.refund(
                    BillingClass::Alimtalk,
                    &mobile,
                    charged,
                    id.to_string(),
                    send_group_id.as_deref(),
                );
                if let Some((_, text)) = fallback {
                    self.send_fallback(&mobile, &text, id.to_string(), send_group_id.as_deref());
                }
            }
            Some((Outcome::GatewayGiveup, _)) => {
                record.result = Some(final_result::GIVEUP.into());
                record.status = Some("ENABLE".into());
            }
            _ => {
                record.result = Some(final_result::OK.into());
                record.status = Some("OK".into());
            }
        }
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

    fn group(&mut self, group: GroupRef) -> &mut GroupState {
        let state = &mut self.groups[group.0];
        state.settle_due(Instant::now());
        state
    }

    /// `POST {base_url}/alimTalk`.
    pub fn alimtalk(&mut self, group: GroupRef, request: &AlimTalkRequest) -> Result<SendResponse, Rejection> {
        let g = self.group(group);
        if !g.config.alimtalk_services.contains(&request.service) {
            return Err(Rejection::fail(
                "SBX_UNKNOWN_SERVICE",
                format!(
                    "service {} is not a notification service of this group",
                    request.service
                ),
            ));
        }
        let Some(compiled) = g
            .templates
            .get(&request.template)
            .filter(|t| t.config.service == Some(request.service))
        else {
            return Err(Rejection::fail(
                "SBX_UNKNOWN_TEMPLATE",
                format!(
                    "template {} is not registered for service {}",
                    request.template, request.service
                ),
            ));
        };
        if request.message != compiled.config.text {
            return Err(Rejection::fail(
                "SBX_TEMPLATE_MISMATCH",
                format!(
                    "message does not equal the registered text of template {}",
                    request.template
                ),
            ));
        }
        if let Some(title) = &compiled.config.title {
            match request.title.as_deref() {
                None | Some("") => {
                    return Err(Rejection::fail(
                        "SBX_TITLE_REQUIRED",
                        format!("template {} is a title template: title is required", request.template),
                    ))
                }
                Some(given) if given != title => {
                    return Err(Rejection::fail(
                        "SBX_TITLE_MISMATCH",
                        "title does not equal the registered title",
                    ))
                }
                Some(_) => {}
            }
        }
        let template = compiled.template.clone();
        let alter = request.alter.unwrap_or(false);
        g.check_fallback_callback(alter, request.callback_no.as_deref(), Rejection::fail)?;
        check_entries(&request.numbers, Rejection::fail)?;
        let date = now_millis();
        let mut value = Vec::with_capacity(request.numbers.len());
        for entry in &request.numbers {
            g.count_sent(&entry.hp);
            let uid = g.next_uid();
            let status = match (phone::normalize(&entry.hp), fill(&template, entry)) {
                (Err(_), _) => "ERR_SBX_INVALID_NUMBER".to_string(),
                (_, Err(_)) => "ERR_SBX_VARIABLE_MISSING".to_string(),
                (Ok(_), Ok(text)) if text.chars().count() > ALIMTALK_MAX_CHARS => "ERR_SBX_TOO_LONG".to_string(),
                (Ok(digits), Ok(text)) => match g.outcome(&digits).filter(|r| r.outcome == Outcome::ChannelFailure) {
                    Some(rule) => {
                        let code = rule.code.clone().unwrap_or_else(|| "CH_SBX_UNDELIVERABLE".into());
                        if alter {
                            g.send_fallback(&digits, &text, uid.to_string(), None);
                        }
                        code
                    }
                    None => match g.charge(BillingClass::Alimtalk, &digits, uid.to_string(), None) {
                        Some(_) => "OK".to_string(),
                        None => "ERR_SBX_INSUFFICIENT_BALANCE".to_string(),
                    },
                },
            };
            value.push(RecipientResult { uid, date, status });
        }
        Ok(send_response("/alimTalk", value, true))
    }

    /// `POST {base_url}/friendTalk/brand`.
    pub fn brand(&mut self, group: GroupRef, request: &BrandRequest) -> Result<SendResponse, Rejection> {
        let reject: fn(&str, String) -> Rejection = Rejection::error;
        let g = self.group(group);
        if !g.config.brand_services.contains(&request.service) {
            return Err(reject(
                "SBX_UNKNOWN_SERVICE",
                format!(
                    "service {} is not a brand message service of this group",
                    request.service
                ),
            ));
        }
        let send_type = request.send_type.unwrap_or_default();
        let template = match send_type {
            SendType::Free => {
                if !request.chat_bubble_type.allowed_for_free() {
                    return Err(reject(
                        "SBX_BUBBLE_NEEDS_BASIC",
                        format!(
                            "{:?} is not supported with sendType FREE; use BASIC with a template",
                            request.chat_bubble_type
                        ),
                    ));
                }
                None
            }
            SendType::Basic => {
                let structural = request.structural_fields();
                if !structural.is_empty() {
                    return Err(reject(
                        "ERR_201",
                        format!(
                            "structural data must not be sent with sendType BASIC: {}",
                            structural.join(", ")
                        ),
                    ));
                }
                let Some(code) = request.template.as_deref().filter(|c| !c.is_empty()) else {
                    return Err(reject(
                        "SBX_TEMPLATE_REQUIRED",
                        "template is required when sendType is BASIC".into(),
                    ));
                };
                let Some(registered) = g
                    .config
                    .brand_templates
                    .iter()
                    .find(|t| t.code == code && t.service == request.service)
                else {
                    return Err(reject(
                        "SBX_UNKNOWN_TEMPLATE",
                        format!(
                            "brand template {code} is not registered for service {}",
                            request.service
                        ),
                    ));
                };
                if registered
                    .chat_bubble_type
                    .is_some_and(|bubble| bubble != request.chat_bubble_type)
                {
                    return Err(reject(
                        "SBX_BUBBLE_MISMATCH",
                        format!("template {code} is registered with another chatBubbleType"),
                    ));
                }
                g.brand_templates.get(code).cloned().flatten()
            }
        };
        let targeting = request.targeting.unwrap_or_default();
        if targeting.reaches_non_friends() {
            let Some(channel_id) = request.channel_id.as_deref().filter(|c| !c.is_empty()) else {
                return Err(reject(
                    "SBX_CHANNEL_REQUIRED",
                    format!("channelId is required for targeting {targeting:?}"),
                ));
            };
            let Some(channel) = g
                .channels
                .get(channel_id)
                .filter(|c| c.record.status == channel_status::ENABLE)
            else {
                return Err(reject(
                    "SBX_UNKNOWN_CHANNEL",
                    format!("channel {channel_id} is not an active channel of this group"),
                ));
            };
            if !channel.nm_approved || channel.friends < NON_FRIEND_MIN_FRIENDS {
                return Err(Rejection::error(
                    "ERR_MN_NOT_APPROVED",
                    format!("channel {channel_id} is not approved for non-friend targeting"),
                )
                .with_http(403));
            }
        }
        let alter = request.alter.unwrap_or(false);
        g.check_fallback_callback(alter, request.callback_no.as_deref(), reject)?;
        let single;
        let entries: &[NumberEntry] = match (&request.numbers, &request.mobile) {
            (Some(_), Some(_)) => {
                return Err(reject(
                    "SBX_NUMBERS_AND_MOBILE",
                    "give numbers or mobile, not both".into(),
                ))
            }
            (Some(numbers), None) => numbers,
            (None, Some(mobile)) => {
                single = [NumberEntry {
                    key: 0,
                    hp: mobile.clone(),
                    ..NumberEntry::default()
                }];
                &single
            }
            (None, None) => return Err(reject("SBX_NO_RECIPIENTS", "numbers or mobile is required".into())),
        };
        if request.mobile.is_none() {
            check_entries(entries, reject)?;
        }
        if send_type == SendType::Free
            && request.message.as_deref().is_none_or(str::is_empty)
            && request.image.is_none()
            && request.carousel.is_none()
            && request.item.is_none()
        {
            return Err(reject(
                "SBX_MESSAGE_REQUIRED",
                "a FREE brand message needs message, image, carousel or item".into(),
            ));
        }
        let class = if targeting.reaches_non_friends() {
            BillingClass::BmNonfriend
        } else {
            BillingClass::BmFriend
        };
        // The fallback body: `alterMessage`, else the message, else the BASIC template's text.
        let fallback_template = match request.alter_message.as_deref().or(request.message.as_deref()) {
            Some(text) => Some(Template::compile(text)),
            None => template.clone(),
        };
        let date = now_millis();
        let mut value = Vec::with_capacity(entries.len());
        for entry in entries {
            g.count_sent(&entry.hp);
            let uid = g.next_uid();
            let digits = match phone::normalize(&entry.hp) {
                Ok(digits) => digits,
                Err(_) => {
                    value.push(RecipientResult {
                        uid,
                        date,
                        status: "ERR_SBX_INVALID_NUMBER".into(),
                    });
                    continue;
                }
            };
            if let Some(template) = &template {
                if fill(template, entry).is_err() {
                    value.push(RecipientResult {
                        uid,
                        date,
                        status: "ERR_SBX_VARIABLE_MISSING".into(),
                    });
                    continue;
                }
            }
            let rule = g.outcome(&digits).cloned();
            let is_friend = !matches!(rule.as_ref().map(|r| r.outcome), Some(Outcome::NotFriend));
            let failure = match (&rule, targeting) {
                (Some(rule), _) if rule.outcome == Outcome::ChannelFailure => {
                    Some(rule.code.clone().unwrap_or_else(|| "CH_SBX_UNDELIVERABLE".into()))
                }
                (_, Targeting::I | Targeting::F) if !is_friend => Some("CH_SBX_NOT_FRIEND".to_string()),
                (_, Targeting::N) if is_friend => Some("CH_SBX_NOT_IN_AUDIENCE".to_string()),
                _ => None,
            };
            let status = match failure {
                Some(code) => {
                    if alter {
                        if let Some(fallback) = &fallback_template {
                            let text = fill(fallback, entry).unwrap_or_else(|_| fallback.source().to_string());
                            g.send_fallback(&digits, &text, uid.to_string(), None);
                        }
                    }
                    code
                }
                None => match g.charge(class, &digits, uid.to_string(), None) {
                    Some(_) => "OK".into(),
                    None => "ERR_SBX_INSUFFICIENT_BALANCE".into(),
                },
            };
            value.push(RecipientResult { uid, date, status });
        }
        Ok(send_response("/friendTalk/brand", value, true))
    }

    /// `POST {base_url}/sms` and `POST {base_url}/sms/lms`.
    pub fn text_message(
        &mut self,
        group: GroupRef,
        lane: TextLane,
        request: &TextMessageRequest,
    ) -> Result<SendResponse, Rejection> {
        let g = self.group(group);
        if !g.config.sms_services.contains(&request.service) {
            return Err(Rejection::fail(
                "SBX_UNKNOWN_SERVICE",
                format!("service {} is not an SMS service of this group", request.service),
            ));
        }
        if !g.callback_registered(&request.callback_no) {
            return Err(Rejection::fail(
                "SBX_CALLBACK_NOT_REGISTERED",
                format!(
                    "callbackNo {} is not a pre-registered sender number",
                    request.callback_no
                ),
            ));
        }
        if request.numbers.is_empty() {
            return Err(Rejection::fail("SBX_NO_RECIPIENTS", "numbers must not be empty"));
        }
        if let Some(mapping) = &request.mapping {
            if mapping.len() != request.numbers.len() {
                return Err(Rejection::fail(
                    "SBX_MAPPING_LENGTH",
                    format!(
                        "mapping has {} entries for {} numbers",
                        mapping.len(),
                        request.numbers.len()
                    ),
                ));
            }
        }
        if let Some(subject) = &request.subject {
            if lane == TextLane::Sms {
                return Err(Rejection::fail("SBX_SUBJECT_NOT_ALLOWED", "subject is an LMS field"));
            }
            match euc_kr_len(subject) {
                Ok(bytes) if bytes <= LMS_SUBJECT_MAX_BYTES => {}
                Ok(bytes) => {
                    return Err(Rejection::fail(
                        "SBX_SUBJECT_TOO_LONG",
                        format!("subject is {bytes} bytes in EUC-KR, at most {LMS_SUBJECT_MAX_BYTES}"),
                    ))
                }
                Err(error) => return Err(Rejection::fail("SBX_UNENCODABLE", format!("subject: {error}"))),
            }
        }
        let template = Template::compile(&request.message);
        let no_mapping = MappingEntry::default();
        let (class, accepted) = match lane {
            TextLane::Sms => (BillingClass::Sms, text_status::SMS_IN_PROGRESS),
            TextLane::Lms => (BillingClass::Lms, text_status::LMS_IN_PROGRESS),
        };
        let date = now_millis();
        let mut value = Vec::with_capacity(request.numbers.len());
        let mut rendered = String::new();
        for (index, number) in request.numbers.iter().enumerate() {
            g.count_sent(number);
            let uid = g.next_uid();
            let mapping = request.mapping.as_ref().map_or(&no_mapping, |m| &m[index]);
            let ok = match phone::normalize(number) {
                Err(_) => None,
                Ok(digits) => {
                    let fits = template.render_into(mapping, &mut rendered).is_ok()
                        && euc_kr_len(&rendered).is_ok_and(|bytes| bytes <= lane.max_bytes());
                    let refused = g.outcome(&digits).is_some_and(|r| r.outcome == Outcome::SmsError);
                    (fits && !refused).then_some(digits)
                }
            };
            let status = match ok.and_then(|digits| g.charge(class, &digits, uid.to_string(), None)) {
                Some(_) => accepted,
                None => text_status::ERROR,
            };
            value.push(RecipientResult {
                uid,
                date,
                status: status.to_string(),
            });
        }
        let mut response = send_response("", value, false);
        response.code = Code::text("200");
        Ok(response)
    }

    /// `POST {gateway_url}/alimTalk`.
    pub fn gateway_send(
        &mut self,
        group: GroupRef,
        request: &GatewayAlimTalkRequest,
    ) -> Result<GatewaySendResponse, Rejection> {
        let settle_after = self.settle_after;
        let g = self.group(group);
        if !g.config.gateway {
            return Err(Rejection::fail(
                "SBX_GATEWAY_NOT_ELIGIBLE",
                "this group was not granted gateway eligibility",
            )
            .with_http(403));
        }
        match g.senders.get(&request.service) {
            None => {
                return Err(Rejection::fail(
                    "SBX_UNKNOWN_SENDER_KEY",
                    "service is not a sender profile key of this group",
                ))
            }
            Some(sender) if sender.status != sender_status::ACTIVE => {
                return Err(Rejection::fail(
                    "SBX_SENDER_NOT_ACTIVE",
                    format!("sender profile is {}", sender.status),
                ))
            }
            Some(_) => {}
        }
        let Some(compiled) = g
            .templates
            .get(&request.template)
            .filter(|t| t.config.sender_key.as_deref() == Some(request.service.as_str()))
        else {
            return Err(Rejection::fail(
                "SBX_UNKNOWN_TEMPLATE",
                format!(
                    "template {} is not registered for this sender profile",
                    request.template
                ),
            ));
        };
        let template = if request.message == compiled.config.text {
            compiled.template.clone()
        } else if compiled.template.matches_filled(&request.message) {
            Template::compile(&request.message)
        } else {
            return Err(Rejection::fail(
                "SBX_TEMPLATE_MISMATCH",
                format!(
                    "message does not match the registered text of template {}",
                    request.template
                ),
            ));
        };
        if compiled.config.title.is_some() && request.title.as_deref().is_none_or(str::is_empty) {
            return Err(Rejection::fail(
                "SBX_TITLE_REQUIRED",
                format!(
                    "template {} is an emphasis template: title is required",
                    request.template
                ),
            ));
        }
        let message_type = if compiled.config.title.is_some() { "ai" } else { "at" };
        if let Some(buttons) = &request.buttons {
            for (index, button) in buttons.iter().enumerate() {
                let valid = match button.button_type.as_str() {
                    "WL" => button.url_mobile.is_some() || button.url_pc.is_some(),
                    "AL" => button.scheme_android.is_some() || button.scheme_ios.is_some(),
                    "BK" | "MD" => true,
                    _ => false,
                };
                if !valid || button.name.is_empty() {
                    return Err(Rejection::fail(
                        "SBX_BAD_BUTTON",
                        format!(
                            "buttons[{index}]: type {} needs a name and its links",
                            button.button_type
                        ),
                    ));
                }
            }
        }
        let channel_callback = match request.channel_id.as_deref() {
            None => None,
            Some(id) => match g.channels.get(id).filter(|c| c.record.status == channel_status::ENABLE) {
                None => {
                    return Err(Rejection::fail(
                        "SBX_UNKNOWN_CHANNEL",
                        format!("channel {id} is not an active channel of this group"),
                    ))
                }
                Some(channel) => channel.record.callback_no.clone(),
            },
        };
        let alter = request.alter.unwrap_or(false);
        let callback = request.callback_no.clone().or(channel_callback);
        g.check_fallback_callback(alter, callback.as_deref(), Rejection::fail)?;
        if request.numbers.is_empty() {
            return Err(Rejection::fail("SBX_NO_RECIPIENTS", "numbers must not be empty"));
        }
        let fallback_template =
            alter.then(|| Template::compile(request.alter_message.as_deref().unwrap_or(&request.message)));
        let send_group_id = uuid::Uuid::new_v4().to_string();
        let now = Instant::now();
        let date = now_millis();
        let mut results = Vec::with_capacity(request.numbers.len());
        let mut ids = Vec::with_capacity(request.numbers.len());
        let mut accepted = 0;
        for entry in &request.numbers {
            g.count_sent(&entry.hp);
            let id = uuid::Uuid::new_v4().to_string();
            let uid = format!("gw{:018}", g.next_uid());
            let mut acceptance_row = GatewayAcceptance {
                id: id.clone(),
                uid: uid.clone(),
                mobile: entry.hp.clone(),
                status: acceptance::FAILED.into(),
                raw_status: None,
                error: None,
            };
            let digits = phone::normalize(&entry.hp);
            let rule = digits.as_ref().ok().and_then(|d| g.outcome(d)).cloned();
            let refusal = match (&digits, fill(&template, entry)) {
                (Err(error), _) => Some(format!("invalid hp: {error}")),
                (_, Err(key)) => Some(format!("missing value for variable #{{{key}}}")),
                _ => match rule.as_ref().map(|r| r.outcome) {
                    Some(Outcome::GatewayRejected) => Some(
                        rule.as_ref()
                            .and_then(|r| r.message.clone())
                            .unwrap_or_else(|| "refused".into()),
                    ),
                    _ => None,
                },
            };
            let mut record = SendRecord {
                id: id.clone(),
                uid: Some(uid),
                mobile: Some(entry.hp.clone()),
                message_type: Some(message_type.into()),
                result: Some(final_result::FAILED.into()),
                status: Some("FAILED".into()),
                send_group_id: Some(send_group_id.clone()),
                date: Some(date),
                service: Some(request.service.clone()),
                template: Some(request.template.clone()),
                error_message: None,
                raw_status: None,
            };
            let mut charged = 0;
            if let Some(reason) = refusal {
                acceptance_row.error = Some(reason.clone());
                record.error_message = Some(reason);
            } else if rule.as_ref().is_some_and(|r| r.outcome == Outcome::GatewayError) {
                acceptance_row.status = acceptance::ERROR.into();
                acceptance_row.error = Some("SBX_STORE_FAILED: the send record could not be stored".into());
                results.push(acceptance_row);
                continue;
            } else {
                let digits = digits.clone().expect("checked above");
                match g.charge(BillingClass::Alimtalk, &digits, id.clone(), Some(&send_group_id)) {
                    None => {
                        let reason = "SBX_INSUFFICIENT_BALANCE: balance does not cover the charge".to_string();
                        acceptance_row.error = Some(reason.clone());
                        record.error_message = Some(reason);
                    }
                    Some(amount) => {
                        charged = amount;
                        accepted += 1;
                        acceptance_row.status = acceptance::PENDING.into();
                        acceptance_row.raw_status = Some("SBX_QUEUED".into());
                        record.result = Some(final_result::PENDING.into());
                        record.status = Some("ENABLE".into());
                        record.raw_status = Some("SBX_QUEUED".into());
                        g.pending.push_back((now + settle_after, id.clone()));
                    }
                }
            }
            let fallback = fallback_template.as_ref().map(|t| {
                let text = fill(t, entry).unwrap_or_else(|_| t.source().to_string());
                (callback.clone().unwrap_or_default(), text)
            });
            g.record_position.insert(id.clone(), ids.len());
            ids.push(id.clone());
            g.records.insert(
                id,
                GatewayRecord {
                    record,
                    outcome: rule,
                    charged,
                    fallback,
                },
            );
            results.push(acceptance_row);
        }
        let total = request.numbers.len() as u64;
        g.send_groups.insert(send_group_id.clone(), ids);
        if settle_after.is_zero() {
            g.settle_due(Instant::now());
        }
        Ok(GatewaySendResponse {
            success: true,
            send_group_id,
            accepted,
            total,
            results,
        })
    }

    /// `GET {gateway_url}/result/:id`.
    pub fn result(&mut self, group: GroupRef, id: &str) -> Result<SendRecord, Rejection> {
        let g = self.group(group);
        g.records
            .get(id)
            .map(|r| r.record.clone())
            .ok_or_else(|| Rejection::not_found(format!("no send record {id}")))
    }

    /// `GET {gateway_url}/result/sendGroup/:sendGroupId`.
    pub fn result_page(
        &mut self,
        group: GroupRef,
        send_group_id: &str,
        limit: Option<&str>,
        last_key: Option<&str>,
    ) -> Result<ResultPage, Rejection> {
        let limit = parse_limit(limit, RESULT_PAGE_DEFAULT, RESULT_PAGE_MAX)?;
        let g = self.group(group);
        let Some(ids) = g.send_groups.get(send_group_id) else {
            return Err(Rejection::not_found(format!("no send group {send_group_id}")));
        };
        let start = match last_key {
            None => 0,
            Some(key) => match g.record_position.get(key) {
                Some(&position) if ids.get(position).map(String::as_str) == Some(key) => position + 1,
                _ => {
                    return Err(Rejection::fail(
                        "SBX_BAD_LAST_KEY",
                        "lastKey is not a key this listing gave",
                    ))
                }
            },
        };
        let end = (start + limit).min(ids.len());
        let items: Vec<SendRecord> = ids[start..end].iter().map(|id| g.records[id].record.clone()).collect();
        let last_key = (end < ids.len()).then(|| ids[end - 1].clone());
        Ok(ResultPage {
            count: items.len() as u64,
            items,
            last_key,
        })
    }

    /// `GET {gateway_url}/channel/sender/token`.
    pub fn sender_token(
        &mut self,
        group: GroupRef,
        phone_number: Option<&str>,
        yellow_id: Option<&str>,
    ) -> Result<(TokenSent, SentToken), Rejection> {
        let g = self.group(group);
        let Some(phone_number) = phone_number.filter(|p| !p.is_empty()) else {
            return Err(Rejection::fail("SBX_PHONE_REQUIRED", "phoneNumber is required"));
        };
        let Some(yellow_id) = yellow_id.filter(|y| !y.is_empty()) else {
            return Err(Rejection {
                http: 400,
                ..Rejection::new(400, "fail", "508", "yellowId is missing: no SMS was sent")
            }
            .with_numeric_code(508));
        };
        if !yellow_id.starts_with('_') {
            return Err(Rejection::fail(
                "SBX_BAD_YELLOW_ID",
                "yellowId is the part of the channel URL that starts with _, not the @ name",
            ));
        }
        let Ok(phone_digits) = phone::normalize(phone_number) else {
            return Err(Rejection::fail("SBX_BAD_PHONE", "phoneNumber is not a mobile number"));
        };
        let now = Instant::now();
        while g
            .token_requests
            .front()
            .is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(60))
        {
            g.token_requests.pop_front();
        }
        if g.token_requests.len() >= TOKEN_REQUESTS_PER_MINUTE {
            let oldest = *g.token_requests.front().expect("full window");
            let wait = Duration::from_secs(60)
                .saturating_sub(now.duration_since(oldest))
                .as_secs()
                .max(1);
            let mut rejection = Rejection::fail(
                "SBX_TOKEN_RATE_LIMITED",
                "at most 10 verification token requests per minute",
            )
            .with_http(429);
            rejection.retry_after = Some(wait);
            return Err(rejection);
        }
        g.token_requests.push_back(now);
        let token = format!("{:06}", rand::random::<u32>() % 1_000_000);
        g.tokens.insert(
            (phone_digits.clone(), yellow_id.to_string()),
            PendingToken { token: token.clone() },
        );
        let sent = SentToken {
            phone_number: phone_digits,
            yellow_id: yellow_id.to_string(),
            token,
        };
        g.outbox.push(sent.clone());
        Ok((
            TokenSent {
                status: "success".into(),
                message: "verification token sent by SMS".into(),
            },
            sent,
        ))
    }

    /// `POST {gateway_url}/channel/sender`.
    pub fn sender_issue(&mut self, group: GroupRef, request: &SenderIssue) -> Result<SenderProfile, Rejection> {
        let known_category = request
            .category_code
            .as_deref()
            .is_none_or(|code| self.categories.categories.iter().any(|c| c.code == code));
        let g = self.group(group);
        let phone_digits = phone::normalize(&request.phone_number).unwrap_or_default();
        let key = (phone_digits, request.yellow_id.clone());
        match g.tokens.get(&key) {
            Some(pending) if pending.token == request.token && !request.token.is_empty() => {}
            _ => {
                return Err(Rejection::fail(
                    "SBX_BAD_TOKEN",
                    "token does not match the one sent to this phoneNumber and yellowId",
                ))
            }
        }
        if !known_category {
            return Err(Rejection::fail(
                "SBX_UNKNOWN_CATEGORY",
                "categoryCode is not a code of GET /category",
            ));
        }
        g.tokens.remove(&key);
        let sender_key = random_hex(40);
        let status = g.config.new_sender_status.clone();
        g.senders
            .insert(sender_key.clone(), SenderState { status: status.clone() });
        Ok(SenderProfile { sender_key, status })
    }

    /// `GET {gateway_url}/channel/sender`.
    pub fn sender_status(&mut self, group: GroupRef, sender_key: Option<&str>) -> Result<SenderProfile, Rejection> {
        let g = self.group(group);
        let Some(sender_key) = sender_key.filter(|k| !k.is_empty()) else {
            return Err(Rejection::fail("SBX_SENDER_KEY_REQUIRED", "senderKey is required"));
        };
        g.senders
            .get(sender_key)
            .map(|s| SenderProfile {
                sender_key: sender_key.to_string(),
                status: s.status.clone(),
            })
            .ok_or_else(|| Rejection::not_found("no sender profile with this senderKey"))
    }

    /// `GET {gateway_url}/category`.
    pub fn categories(&self) -> CategoryList {
        self.categories.clone()
    }

    /// `POST {gateway_url}/channel`.
    pub fn channel_create(&mut self, group: GroupRef, request: &ChannelCreate) -> Result<Channel, Rejection> {
        let g = self.group(group);
        if request.name.trim().is_empty() {
            return Err(Rejection::fail("SBX_NAME_REQUIRED", "name is required"));
        }
        if !g.senders.contains_key(&request.sender_key) {
            return Err(Rejection::fail(
                "SBX_UNKNOWN_SENDER_KEY",
                "senderKey is not a sender profile of this group",
            ));
        }
        if let Some(callback) = &request.callback_no {
            if !g.callback_registered(callback) {
                return Err(Rejection::fail(
                    "SBX_CALLBACK_NOT_REGISTERED",
                    format!("callbackNo {callback} is not a pre-registered sender number"),
                ));
            }
        }
        let now = now_millis();
        let record = Channel {
            id: format!("ch-{}", random_hex(16)),
            group_id: g.config.id.clone(),
            name: request.name.clone(),
            sender_key: request.sender_key.clone(),
            callback_no: request.callback_no.clone(),
            status: channel_status::ENABLE.into(),
            channel_status: "ACTIVE".into(),
            created_at: now,
            updated_at: now,
        };
        g.insert_channel(ChannelState {
            record: record.clone(),
            friends: 0,
            nm_approved: false,
        });
        Ok(record)
    }

    /// `GET {gateway_url}/channel`.
    pub fn channel_page(
        &mut self,
        group: GroupRef,
        status: Option<&str>,
        limit: Option<&str>,
        last_key: Option<&str>,
    ) -> Result<ChannelPage, Rejection> {
        let limit = parse_limit(limit, CHANNEL_PAGE_DEFAULT, CHANNEL_PAGE_MAX)?;
        if let Some(status) = status {
            if status != channel_status::ENABLE && status != channel_status::DELETED {
                return Err(Rejection::fail("SBX_BAD_STATUS", "status must be ENABLE or DELETED"));
            }
        }
        let g = self.group(group);
        let start = match last_key {
            None => 0,
            Some(key) => match g.channel_position.get(key) {
                Some(&position) => position + 1,
                None => {
                    return Err(Rejection::fail(
                        "SBX_BAD_LAST_KEY",
                        "lastKey is not a key this listing gave",
                    ))
                }
            },
        };
        let mut matching = g.channel_order[start.min(g.channel_order.len())..]
            .iter()
            .map(|id| &g.channels[id].record)
            .filter(|record| status.is_none_or(|s| record.status == s));
        let items: Vec<Channel> = matching.by_ref().take(limit).cloned().collect();
        let more = matching.next().is_some();
        let last_key = if more { items.last().map(|c| c.id.clone()) } else { None };
        Ok(ChannelPage {
            count: items.len() as u64,
            items,
            last_key,
        })
    }

    /// `GET {gateway_url}/channel/:id`.
    pub fn channel_get(&mut self, group: GroupRef, id: &str) -> Result<Channel, Rejection> {
        let g = self.group(group);
        g.channels
            .get(id)
            .map(|c| c.record.clone())
            .ok_or_else(|| Rejection::not_found(format!("no channel {id}")))
    }

    /// `PUT {gateway_url}/channel/:id`.
    pub fn channel_update(&mut self, group: GroupRef, id: &str, update: &ChannelUpdate) -> Result<Channel, Rejection> {
        let g = self.group(group);
        if !g.channels.contains_key(id) {
            return Err(Rejection::not_found(format!("no channel {id}")));
        }
        if update.is_empty() {
            return Err(Rejection::fail(
                "SBX_EMPTY_UPDATE",
                "give at least one of name, callbackNo, senderKey",
            ));
        }
        if let Some(sender_key) = &update.sender_key {
            if !g.senders.contains_key(sender_key) {
                return Err(Rejection::fail(
                    "SBX_UNKNOWN_SENDER_KEY",
                    "senderKey is not a sender profile of this group",
                ));
            }
        }
        if let Some(callback) = &update.callback_no {
            if !g.callback_registered(callback) {
                return Err(Rejection::fail(
                    "SBX_CALLBACK_NOT_REGISTERED",
                    format!("callbackNo {callback} is not a pre-registered sender number"),
                ));
            }
        }
        let channel = g.channels.get_mut(id).expect("checked");
        if channel.record.status == channel_status::DELETED {
            return Err(Rejection::fail(
                "SBX_CHANNEL_DELETED",
                format!("channel {id} is deleted"),
            ));
        }
        if let Some(name) = &update.name {
            channel.record.name = name.clone();
        }
        if let Some(callback) = &update.callback_no {
            channel.record.callback_no = Some(callback.clone());
        }
        if let Some(sender_key) = &update.sender_key {
            channel.record.sender_key = sender_key.clone();
        }
        channel.record.updated_at = now_millis();
        Ok(channel.record.clone())
    }

    /// `DELETE {gateway_url}/channel/:id`: soft delete.
    pub fn channel_delete(&mut self, group: GroupRef, id: &str) -> Result<Channel, Rejection> {
        let g = self.group(group);
        let Some(channel) = g.channels.get_mut(id) else {
            return Err(Rejection::not_found(format!("no channel {id}")));
        };
        if channel.record.status != channel_status::DELETED {
            channel.record.status = channel_status::DELETED.into();
            channel.record.updated_at = now_millis();
        }
        Ok(channel.record.clone())
    }

    /// `GET /_sandbox/ledger`.
    pub fn ledger(&mut self, group: GroupRef) -> Ledger {
        let g = self.group(group);
        Ledger {
            group_id: g.config.id.clone(),
            balance: g.balance,
            entries: g.ledger.clone(),
        }
    }

    /// `GET /_sandbox/sent`.
    pub fn sent(&mut self, group: GroupRef) -> SentCounts {
        let g = self.group(group);
        SentCounts {
            group_id: g.config.id.clone(),
            total: g.sent_total,
            numbers: g.sent.iter().map(|(number, count)| (number.clone(), *count)).collect(),
        }
    }

    /// `GET /_sandbox/tokens`.
    pub fn outbox(&mut self, group: GroupRef) -> TokenOutbox {
        TokenOutbox {
            tokens: self.group(group).outbox.clone(),
        }
    }
}

impl Rejection {
    fn with_numeric_code(mut self, code: i64) -> Rejection {
        self.body.code = Some(Code::Number(code));
        self
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

fn send_response(url: &str, value: Vec<RecipientResult>, with_version: bool) -> SendResponse {
    let total = value.len() as u64;
    let count = value
        .iter()
        .filter(|v| crate::api::standard::status_accepted(&v.status))
        .count() as u64;
    SendResponse {
        version: with_version.then(|| API_VERSION.to_string()),
        status: "success".into(),
        code: Code::Number(200),
        datetime: korean_datetime(),
        url: with_version.then(|| url.to_string()),
        message: with_version.then(|| "success".to_string()),
        value,
        count,
        total,
    }
}
