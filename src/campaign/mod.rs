//! The campaign file (TOML): parsed with unknown keys refused, then validated into a `Campaign` before any I/O.

pub mod quiet;

use crate::api::gateway::GatewayButton;
use crate::api::ledger::BillingClass;
use crate::api::standard::{BrandButton, ChatBubbleType, SendType, Targeting};
use crate::template::{Placeholder, Template};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A campaign setting that is missing, unknown or wrong; the message names the key.
#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    #[error("cannot read campaign file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("campaign file {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("campaign file {path}: `{key}`: {message}")]
    Setting {
        path: PathBuf,
        key: String,
        message: String,
    },
}

/// What is sent.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Alimtalk,
    Brand,
    Sms,
    Lms,
    /// SMS or LMS per recipient, by the EUC-KR length of the filled text.
    Text,
    GatewayAlimtalk,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Alimtalk => "alimtalk",
            Kind::Brand => "brand",
            Kind::Sms => "sms",
            Kind::Lms => "lms",
            Kind::Text => "text",
            Kind::GatewayAlimtalk => "gateway-alimtalk",
        }
    }
}

/// The endpoint a chunk goes to; `text` campaigns use two.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Lane {
    Alimtalk,
    Brand,
    Sms,
    Lms,
    Gateway,
}

impl Lane {
    pub const ALL: [Lane; 5] = [Lane::Alimtalk, Lane::Brand, Lane::Sms, Lane::Lms, Lane::Gateway];

    pub fn as_str(self) -> &'static str {
        match self {
            Lane::Alimtalk => "alimtalk",
            Lane::Brand => "brand",
            Lane::Sms => "sms",
            Lane::Lms => "lms",
            Lane::Gateway => "gateway",
        }
    }

    pub fn index(self) -> u8 {
        self as u8
    }

    pub fn from_index(index: u8) -> Option<Lane> {
        Lane::ALL.get(index as usize).copied()
    }
}

/// `quiet_hours` setting.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum QuietHoursMode {
    #[default]
    Enforce,
    Warn,
    Off,
}

/// `encoding` of a CSV recipients file.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Encoding {
    /// UTF-8 (with or without BOM) when the start of the file is valid UTF-8, else CP949.
    #[default]
    Auto,
    #[serde(rename = "utf-8", alias = "utf8")]
    Utf8,
    #[serde(alias = "euc-kr")]
    Cp949,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum InputFormat {
    Csv,
    Parquet,
}

// ---------------------------------------------------------------------------------------------
// The file as written.

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CampaignFile {
    name: Option<String>,
    kind: Kind,
    /// `"sandbox"` (default) or a table `{ base_url, gateway_url }`.
    endpoint: Option<toml::Value>,
    /// Accounts file for the in-process sandbox (default: the built-in demo accounts).
    sandbox_accounts: Option<PathBuf>,
    #[serde(default)]
    credentials: CredentialsFile,
    #[serde(default)]
    message: MessageFile,
    recipients: RecipientsFile,
    #[serde(default)]
    send: SendFile,
    #[serde(default)]
    output: OutputFile,
    /// Price per billing class, for the estimated charge.
    prices: Option<BTreeMap<String, i64>>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CredentialsFile {
    api_key_env: Option<String>,
    api_key_file: Option<PathBuf>,
    group_id_env: Option<String>,
    group_id: Option<String>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct MessageFile {
    service: Option<u64>,
    sender_key: Option<String>,
    template: Option<String>,
    text: Option<String>,
    text_file: Option<PathBuf>,
    title: Option<String>,
    buttons: Option<Vec<toml::Value>>,
    alter: Option<bool>,
    alter_message: Option<String>,
    callback_no: Option<String>,
    send_type: Option<SendType>,
    chat_bubble_type: Option<ChatBubbleType>,
    targeting: Option<Targeting>,
    channel_id: Option<String>,
    image: Option<String>,
    header: Option<String>,
    additional_content: Option<String>,
    subject: Option<String>,
    #[serde(default)]
    advertising: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RecipientsFile {
    path: PathBuf,
    format: Option<InputFormat>,
    #[serde(default)]
    encoding: Encoding,
    phone: Option<String>,
    name: Option<String>,
    #[serde(default)]
    variables: BTreeMap<String, String>,
    suppression: Option<PathBuf>,
    suppression_column: Option<String>,
    drop_duplicates: Option<bool>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct SendFile {
    chunk_size: Option<usize>,
    concurrency: Option<usize>,
    messages_per_second: Option<f64>,
    quiet_hours: Option<QuietHoursMode>,
    timeout_secs: Option<u64>,
    max_attempts: Option<u32>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct OutputFile {
    dir: Option<PathBuf>,
}

// ---------------------------------------------------------------------------------------------
// The validated campaign.

/// Where the service is.
#[derive(Debug, Clone, PartialEq)]
pub enum Endpoint {
    /// Start the sandbox in-process on a free loopback port, with these accounts (None: demo).
    Sandbox {
        accounts: Option<PathBuf>,
    },
    Urls {
        base_url: String,
        gateway_url: String,
    },
}

#[derive(Debug, Clone)]
pub struct Credentials {
    pub api_key_env: String,
    pub api_key_file: Option<PathBuf>,
    pub group_id_env: String,
    pub group_id: Option<String>,
}

/// What every recipient gets, per kind.
#[derive(Debug, Clone)]
pub struct Message {
    pub service: Option<u64>,
    pub sender_key: Option<String>,
    pub template_code: Option<String>,
    /// The message text as sent (`text` or the contents of `text_file`).
    pub text: Option<String>,
    /// The text compiled, for the filled length of each recipient.
    pub compiled: Option<Template>,
    pub title: Option<String>,
    pub brand_buttons: Option<Vec<BrandButton>>,
    pub gateway_buttons: Option<Vec<GatewayButton>>,
    pub alter: bool,
    pub alter_message: Option<String>,
    pub callback_no: Option<String>,
    pub send_type: SendType,
    pub chat_bubble_type: Option<ChatBubbleType>,
    pub targeting: Targeting,
    pub channel_id: Option<String>,
    pub image: Option<String>,
    pub header: Option<String>,
    pub additional_content: Option<String>,
    pub subject: Option<String>,
    pub advertising: bool,
}

#[derive(Debug, Clone)]
pub struct Recipients {
    pub path: PathBuf,
    pub format: InputFormat,
    pub encoding: Encoding,
    pub phone_column: String,
    pub name_column: Option<String>,
    /// Template variable (`VAR1`, ...) to column, in key order.
    pub variables: Vec<(String, String)>,
    pub suppression: Option<PathBuf>,
    pub suppression_column: String,
    pub drop_duplicates: bool,
}

#[derive(Debug, Clone)]
pub struct SendSettings {
    pub chunk_size: usize,
    pub concurrency: usize,
    pub messages_per_second: Option<f64>,
    pub quiet_hours: QuietHoursMode,
    pub timeout_secs: u64,
    pub max_attempts: u32,
}

/// A campaign ready to validate or run; every path is absolute.
#[derive(Debug, Clone)]
pub struct Campaign {
    pub file: PathBuf,
    pub name: String,
    pub kind: Kind,
    pub endpoint: Endpoint,
    pub credentials: Credentials,
    pub message: Message,
    pub recipients: Recipients,
    pub send: SendSettings,
    pub output_dir: Option<PathBuf>,
    pub prices: Option<BTreeMap<BillingClass, i64>>,
}

pub const MAX_CHUNK_SIZE: usize = 1_000;
pub const DEFAULT_CHUNK_SIZE: usize = 100;

impl Campaign {
    /// Reads and validates a campaign file.
    pub fn load(path: &Path) -> Result<Campaign, CampaignError> {
        let text = std::fs::read_to_string(path).map_err(|source| CampaignError::Read {
            path: path.into(),
            source,
        })?;
        Campaign::parse(&text, path)
    }

    /// Validates campaign text that was read from `path` (relative paths resolve against its folder).
    pub fn parse(text: &str, path: &Path) -> Result<Campaign, CampaignError> {
        let file: CampaignFile = toml::from_str(text).map_err(|error| CampaignError::Parse {
            path: path.into(),
            message: error.to_string(),
        })?;
        Validator {
            path,
            base: path.parent().unwrap_or(Path::new(".")),
        }
        .campaign(file)
    }

    /// Whether quiet hours apply: advertising SMS/LMS and every brand message.
    pub fn is_advertising(&self) -> bool {
        match self.kind {
            Kind::Brand => true,
            Kind::Sms | Kind::Lms | Kind::Text => self.message.advertising,
            Kind::Alimtalk | Kind::GatewayAlimtalk => false,
        }
    }

    /// The compiled text whose filled length decides a recipient's lane; `None` when the text
    /// lives at the service (a BASIC brand template) or the kind has none (a FREE image message).
    pub fn lane_text(&self) -> Option<&Template> {
        if self.kind == Kind::Brand && self.message.send_type == SendType::Basic {
            return None;
        }
        self.message.compiled.as_ref()
    }

    /// The message text as written in the campaign (`text` or the contents of `text_file`).
    pub fn message_text(&self) -> Option<&str> {
        self.message.text.as_deref()
    }

    /// The text of the fallback SMS/LMS sent when `alter` is true: `alter_message`, else the message text.
    pub fn fallback_text(&self) -> Option<&str> {
        if !self.message.alter {
            return None;
        }
        self.message.alter_message.as_deref().or(self.message.text.as_deref())
    }

    /// Whether brand targeting reaches non-friends (`N`, `M`): billed as `bm_nonfriend`.
    pub fn reaches_non_friends(&self) -> bool {
        self.message.targeting.reaches_non_friends()
    }

    /// The lanes this campaign may use.
    pub fn lanes(&self) -> Vec<Lane> {
        match self.kind {
            Kind::Alimtalk => vec![Lane::Alimtalk],
            Kind::Brand => vec![Lane::Brand],
            Kind::Sms => vec![Lane::Sms],
            Kind::Lms => vec![Lane::Lms],
            Kind::Text => vec![Lane::Sms, Lane::Lms],
            Kind::GatewayAlimtalk => vec![Lane::Gateway],
        }
    }

    /// Columns the recipients file must have.
    pub fn required_columns(&self) -> Vec<&str> {
        let recipients = &self.recipients;
        let mut columns = vec![recipients.phone_column.as_str()];
        columns.extend(recipients.name_column.as_deref());
        columns.extend(recipients.variables.iter().map(|(_, column)| column.as_str()));
        columns
    }
}

struct Validator<'a> {
    path: &'a Path,
    base: &'a Path,
}

impl Validator<'_> {
    fn error(&self, key: &str, message: impl Into<String>) -> CampaignError {
        CampaignError::Setting {
            path: self.path.into(),
            key: key.into(),
            message: message.into(),
        }
    }

    fn resolve(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.base.join(path)
        }
    }

    fn campaign(&self, file: CampaignFile) -> Result<Campaign, CampaignError> {
        let name = match file.name {
            Some(name) if name.trim().is_empty() => return Err(self.error("name", "must not be empty")),
            Some(name) => name,
            None => self
                .path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "campaign".into()),
        };
        let endpoint = self.endpoint(file.endpoint, file.sandbox_accounts)?;
        let credentials = Credentials {
            api_key_env: file
                .credentials
                .api_key_env
                .unwrap_or_else(|| "MSGBATCH_API_KEY".into()),
            api_key_file: file.credentials.api_key_file.map(|p| self.resolve(&p)),
            group_id_env: file
                .credentials
                .group_id_env
                .unwrap_or_else(|| "MSGBATCH_GROUP_ID".into()),
            group_id: file.credentials.group_id,
        };
        let recipients = self.recipients(file.recipients)?;
        let message = self.message(file.kind, file.message, &recipients)?;
        let send = self.send(file.send)?;
        let prices = match file.prices {
            None => None,
            Some(table) => {
                let mut prices = BTreeMap::new();
                for (class, price) in table {
                    let parsed: BillingClass = serde_json::from_value(serde_json::Value::String(class.clone()))
                        .map_err(|_| self.error(&format!("prices.{class}"), "not a billing class (alimtalk, bm_friend, bm_nonfriend, sms, lms, fallback_sms, fallback_lms)"))?;
                    if price < 0 {
                        return Err(self.error(&format!("prices.{class}"), "must not be negative"));
                    }
                    prices.insert(parsed, price);
                }
                Some(prices)
            }
        };
        Ok(Campaign {
            file: self.path.to_path_buf(),
            name,
            kind: file.kind,
            endpoint,
            credentials,
            message,
            recipients,
            send,
            output_dir: file.output.dir.map(|p| self.resolve(&p)),
            prices,
        })
    }

    fn endpoint(&self, value: Option<toml::Value>, accounts: Option<PathBuf>) -> Result<Endpoint, CampaignError> {
        let sandbox = Endpoint::Sandbox {
            accounts: accounts.as_deref().map(|p| self.resolve(p)),
        };
        match value {
            None => Ok(sandbox),
            Some(toml::Value::String(name)) if name == "sandbox" => Ok(sandbox),
            Some(toml::Value::String(other)) => Err(self.error(
                "endpoint",
                format!("{other:?} is not known: use \"sandbox\" or a table with base_url and gateway_url"),
            )),
            Some(toml::Value::Table(table)) => {
                if accounts.is_some() {
                    return Err(self.error("sandbox_accounts", "only applies to endpoint = \"sandbox\""));
                }
                for key in table.keys() {
                    if key != "base_url" && key != "gateway_url" {
                        return Err(self.error(
                            &format!("endpoint.{key}"),
                            "unknown key (expected base_url, gateway_url)",
                        ));
                    }
                }
                let url = |key: &str| -> Result<String, CampaignError> {
                    match table.get(key) {
                        Some(toml::Value::String(url)) if url.starts_with("http://") || url.starts_with("https://") => {
                            Ok(url.trim_end_matches('/').to_string())
                        }
                        Some(_) => Err(self.error(&format!("endpoint.{key}"), "must be an http:// or https:// URL")),
                        None => Err(self.error(&format!("endpoint.{key}"), "is required when endpoint is a table")),
                    }
                };
                Ok(Endpoint::Urls {
                    base_url: url("base_url")?,
                    gateway_url: url("gateway_url")?,
                })
            }
            Some(_) => Err(self.error(
                "endpoint",
                "must be \"sandbox\" or a table with base_url and gateway_url",
            )),
        }
    }

    fn recipients(&self, file: RecipientsFile) -> Result<Recipients, CampaignError> {
        let path = self.resolve(&file.path);
        let format = match file.format {
            Some(format) => format,
            None => match path
                .extension()
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase)
                .as_deref()
            {
                Some("parquet") | Some("pq") => InputFormat::Parquet,
                Some("csv") | Some("txt") | Some("tsv") => InputFormat::Csv,
                _ => {
                    return Err(self.error(
                        "recipients.format",
                        "cannot tell from the file name: set \"csv\" or \"parquet\"",
                    ))
                }
            },
        };
        if format == InputFormat::Parquet && file.encoding != Encoding::Auto {
            return Err(self.error("recipients.encoding", "applies to CSV only"));
        }
        let mut variables = Vec::new();
        for (variable, column) in file.variables {
            if column.trim().is_empty() {
                return Err(self.error(
                    &format!("recipients.variables.{variable}"),
                    "column name must not be empty",
                ));
            }
            if variable == "name" || variable == "이름" {
                return Err(self.error(
                    &format!("recipients.variables.{variable}"),
                    "map the name with recipients.name",
                ));
            }
            variables.push((variable, column));
        }
        Ok(Recipients {
            path,
            format,
            encoding: file.encoding,
            phone_column: file.phone.unwrap_or_else(|| "phone".into()),
            name_column: file.name,
            variables,
            suppression: file.suppression.map(|p| self.resolve(&p)),
            suppression_column: file.suppression_column.unwrap_or_else(|| "phone".into()),
            drop_duplicates: file.drop_duplicates.unwrap_or(true),
        })
    }

    fn message(&self, kind: Kind, file: MessageFile, recipients: &Recipients) -> Result<Message, CampaignError> {
        let text = match (file.text, &file.text_file) {
            (Some(_), Some(_)) => {
                return Err(self.error("message.text_file", "give message.text or message.text_file, not both"))
            }
            (Some(text), None) => Some(text),
            (None, Some(path)) => {
                let resolved = self.resolve(path);
                let text = std::fs::read_to_string(&resolved)
                    .map_err(|e| self.error("message.text_file", format!("cannot read {}: {e}", resolved.display())))?;
                Some(text.trim_end_matches(['\n', '\r']).to_string())
            }
            (None, None) => None,
        };
        let needs = |key: &str, present: bool| -> Result<(), CampaignError> {
            if present {
                Ok(())
            } else {
                Err(self.error(key, format!("is required for kind {}", kind.as_str())))
            }
        };
        let refuses = |key: &str, present: bool| -> Result<(), CampaignError> {
            if present {
                Err(self.error(key, format!("does not apply to kind {}", kind.as_str())))
            } else {
                Ok(())
            }
        };
        let send_type = file.send_type.unwrap_or_default();
        let targeting = file.targeting.unwrap_or_default();
        let mut brand_buttons = None;
        let mut gateway_buttons = None;
        if let Some(buttons) = &file.buttons {
            match kind {
                Kind::Brand => brand_buttons = Some(self.buttons::<BrandButton>(buttons)?),
                Kind::GatewayAlimtalk => gateway_buttons = Some(self.buttons::<GatewayButton>(buttons)?),
                _ => return Err(self.error("message.buttons", format!("does not apply to kind {}", kind.as_str()))),
            }
        }
        match kind {
            Kind::Alimtalk => {
                needs("message.service", file.service.is_some())?;
                needs("message.template", file.template.is_some())?;
                needs("message.text", text.is_some())?;
                refuses("message.sender_key", file.sender_key.is_some())?;
                refuses("message.subject", file.subject.is_some())?;
                refuses("message.alter_message", file.alter_message.is_some())?;
            }
            Kind::GatewayAlimtalk => {
                needs("message.sender_key", file.sender_key.is_some())?;
                needs("message.template", file.template.is_some())?;
                needs("message.text", text.is_some())?;
                refuses("message.service", file.service.is_some())?;
                refuses("message.subject", file.subject.is_some())?;
            }
            Kind::Brand => {
                needs("message.service", file.service.is_some())?;
                needs("message.chat_bubble_type", file.chat_bubble_type.is_some())?;
                refuses("message.subject", file.subject.is_some())?;
                let bubble = file.chat_bubble_type.expect("checked");
                match send_type {
                    SendType::Free => {
                        if !bubble.allowed_for_free() {
                            return Err(self.error(
                                "message.chat_bubble_type",
                                format!("{bubble:?} needs send_type = \"BASIC\" with a template"),
                            ));
                        }
                        if text.is_none() && file.image.is_none() {
                            return Err(self.error(
                                "message.text",
                                "a FREE brand message needs message.text or message.image",
                            ));
                        }
                        if text.as_deref().is_some_and(|t| Template::compile(t).has_placeholders()) {
                            return Err(self.error("message.text", "a FREE brand message is sent as written: #{...} variables are filled only for BASIC templates"));
                        }
                    }
                    SendType::Basic => {
                        needs("message.template", file.template.is_some())?;
                        for (key, present) in [
                            ("message.image", file.image.is_some()),
                            ("message.buttons", file.buttons.is_some()),
                        ] {
                            if present {
                                return Err(self.error(key, "structural data must not be sent with send_type = \"BASIC\" (it comes from the template)"));
                            }
                        }
                    }
                }
                if targeting.reaches_non_friends() {
                    needs("message.channel_id", file.channel_id.is_some())?;
                }
            }
            Kind::Sms | Kind::Lms | Kind::Text => {
                needs("message.service", file.service.is_some())?;
                needs("message.text", text.is_some())?;
                needs("message.callback_no", file.callback_no.is_some())?;
                refuses("message.template", file.template.is_some())?;
                refuses("message.sender_key", file.sender_key.is_some())?;
                refuses("message.alter", file.alter.is_some())?;
                if kind == Kind::Sms {
                    refuses("message.subject", file.subject.is_some())?;
                }
                if let Some(subject) = &file.subject {
                    match crate::text::euc_kr_len(subject) {
                        Ok(bytes) if bytes <= crate::text::LMS_SUBJECT_MAX_BYTES => {}
                        Ok(bytes) => {
                            return Err(self.error(
                                "message.subject",
                                format!(
                                    "is {bytes} bytes in EUC-KR, at most {}",
                                    crate::text::LMS_SUBJECT_MAX_BYTES
                                ),
                            ))
                        }
                        Err(error) => return Err(self.error("message.subject", error.to_string())),
                    }
                }
            }
        }
        if file.advertising && !matches!(kind, Kind::Sms | Kind::Lms | Kind::Text | Kind::Brand) {
            return Err(self.error(
                "message.advertising",
                format!("kind {} is a notification, not advertising", kind.as_str()),
            ));
        }
        let alter = file.alter.unwrap_or(false);
        if alter && file.callback_no.is_none() && kind != Kind::GatewayAlimtalk {
            return Err(self.error("message.callback_no", "is required when message.alter is true"));
        }
        if alter && kind == Kind::Brand && send_type == SendType::Basic && file.alter_message.is_none() {
            // The template's text lives at the service: without its own text the fallback's
            // length, and so its SMS or LMS billing, could not be known or reported.
            return Err(self.error(
                "message.alter_message",
                "is required for a BASIC brand message with alter = true",
            ));
        }
        let compiled = text.as_deref().map(Template::compile);
        if let Some(template) = &compiled {
            for placeholder in template.placeholders() {
                match placeholder {
                    Placeholder::Name if recipients.name_column.is_none() => {
                        return Err(self.error(
                            "recipients.name",
                            "the message uses #{이름}/#{name}: map it to a column",
                        ));
                    }
                    Placeholder::Var(key) if !recipients.variables.iter().any(|(variable, _)| variable == key) => {
                        return Err(self.error(
                            &format!("recipients.variables.{key}"),
                            format!("the message uses #{{{key}}}: map it to a column"),
                        ));
                    }
                    _ => {}
                }
            }
        }
        Ok(Message {
            service: file.service,
            sender_key: file.sender_key,
            template_code: file.template,
            text,
            compiled,
            title: file.title,
            brand_buttons,
            gateway_buttons,
            alter,
            alter_message: file.alter_message,
            callback_no: file.callback_no,
            send_type,
            chat_bubble_type: file.chat_bubble_type,
            targeting,
            channel_id: file.channel_id,
            image: file.image,
            header: file.header,
            additional_content: file.additional_content,
            subject: file.subject,
            advertising: file.advertising,
        })
    }

    fn buttons<T: serde::de::DeserializeOwned>(&self, values: &[toml::Value]) -> Result<Vec<T>, CampaignError> {
        values
            .iter()
            .enumerate()
            .map(|(index, value)| {
                value.clone().try_into().map_err(|error: toml::de::Error| {
                    self.error(&format!("message.buttons[{index}]"), error.message().to_string())
                })
            })
            .collect()
    }

    fn send(&self, file: SendFile) -> Result<SendSettings, CampaignError> {
        let chunk_size = file.chunk_size.unwrap_or(DEFAULT_CHUNK_SIZE);
        if chunk_size == 0 || chunk_size > MAX_CHUNK_SIZE {
            return Err(self.error(
                "send.chunk_size",
                format!("must be 1 to {MAX_CHUNK_SIZE}, got {chunk_size}"),
            ));
        }
        let concurrency = file.concurrency.unwrap_or(4);
        if concurrency == 0 || concurrency > 256 {
            return Err(self.error("send.concurrency", format!("must be 1 to 256, got {concurrency}")));
        }
        if let Some(rate) = file.messages_per_second {
            if !(rate > 0.0 && rate.is_finite()) {
                return Err(self.error("send.messages_per_second", "must be a positive number"));
            }
        }
        let max_attempts = file.max_attempts.unwrap_or(8);
        if max_attempts == 0 {
            return Err(self.error("send.max_attempts", "must be at least 1"));
        }
        Ok(SendSettings {
            chunk_size,
            concurrency,
            messages_per_second: file.messages_per_second,
            quiet_hours: file.quiet_hours.unwrap_or_default(),
            timeout_secs: file.timeout_secs.unwrap_or(30).max(1),
            max_attempts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Campaign, CampaignError> {
        Campaign::parse(text, Path::new("/tmp/c/campaign.toml"))
    }

    const SMS: &str = r#"
kind = "sms"
[message]
service = 3001
text = "hello #{name}"
callback_no = "0212345678"
[recipients]
path = "people.csv"
name = "name"
"#;

    #[test]
    fn a_minimal_sms_campaign_is_valid_with_defaults() {
        let campaign = parse(SMS).unwrap();
        assert_eq!(campaign.name, "campaign");
        assert_eq!(campaign.endpoint, Endpoint::Sandbox { accounts: None });
        assert_eq!(campaign.recipients.path, Path::new("/tmp/c/people.csv"));
        assert_eq!(campaign.recipients.format, InputFormat::Csv);
        assert_eq!(campaign.send.chunk_size, DEFAULT_CHUNK_SIZE);
        assert_eq!(campaign.send.quiet_hours, QuietHoursMode::Enforce);
    }

    #[test]
    fn unknown_keys_are_refused_by_name() {
        let error = parse(&SMS.replace("callback_no", "callback_number"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("callback_number"), "{error}");
        let error = parse(&format!("{SMS}\n[send]\nchunksize = 3\n"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("chunksize"), "{error}");
    }

    #[test]
    fn chunk_size_over_one_thousand_is_refused() {
        let error = parse(&format!("{SMS}\n[send]\nchunk_size = 1001\n"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("send.chunk_size"), "{error}");
        assert!(parse(&format!("{SMS}\n[send]\nchunk_size = 1000\n")).is_ok());
    }

    #[test]
    fn a_variable_without_a_column_names_the_variable() {
        let error = parse(&SMS.replace("hello #{name}", "hi #{VAR2}"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("recipients.variables.VAR2"), "{error}");
    }

    #[test]
    fn kind_specific_keys_are_checked() {
        let error = parse(&SMS.replace("kind = \"sms\"", "kind = \"alimtalk\""))
            .unwrap_err()
            .to_string();
        assert!(error.contains("message.template"), "{error}");
        let brand = "kind = \"brand\"\n[message]\nservice = 2001\nchat_bubble_type = \"COMMERCE\"\ntext = \"x\"\n[recipients]\npath = \"a.csv\"\n";
        let error = parse(brand).unwrap_err().to_string();
        assert!(
            error.contains("message.chat_bubble_type") && error.contains("BASIC"),
            "{error}"
        );
    }

    #[test]
    fn a_basic_brand_fallback_needs_its_own_text() {
        let brand = "kind = \"brand\"\n[message]\nservice = 2001\nchat_bubble_type = \"PREMIUM_VIDEO\"\nsend_type = \"BASIC\"\ntemplate = \"WINTER_SALE\"\nalter = true\ncallback_no = \"0212345678\"\n[recipients]\npath = \"a.csv\"\n";
        let error = parse(brand).unwrap_err().to_string();
        assert!(error.contains("message.alter_message"), "{error}");
        assert!(parse(&brand.replace("alter = true", "alter = true\nalter_message = \"(광고) 세일\"")).is_ok());
    }

    #[test]
    fn endpoint_table_needs_both_urls() {
        let text = SMS.replace(
            "kind = \"sms\"",
            "kind = \"sms\"\nendpoint = { base_url = \"http://h/standard\" }",
        );
        let error = parse(&text).unwrap_err().to_string();
        assert!(error.contains("endpoint.gateway_url"), "{error}");
    }
}
