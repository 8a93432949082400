//! Validation of the campaign file into a [`Campaign`]: every error names its setting; the only I/O is reading `text_file`.

use super::file::{CampaignFile, EndpointFile, MessageFile, RecipientsFile, SendFile};
use super::message::{
    Brand, BrandContent, GatewayFallback, GatewayNotification, Message, Notification, StandardFallback, TextMessage,
};
use super::{
    Campaign, CampaignError, Credentials, Encoding, Endpoint, InputFormat, Kind, Recipients, SendSettings,
    DEFAULT_CHUNK_SIZE, MAX_CHUNK_SIZE,
};
use crate::api::gateway::GatewayButton;
use crate::api::ledger::BillingClass;
use crate::api::standard::{BrandButton, SendType};
use crate::template::{Placeholder, Template};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub(super) struct Validator<'a> {
    path: &'a Path,
    base: &'a Path,
}

impl<'a> Validator<'a> {
    pub(super) fn new(path: &'a Path) -> Validator<'a> {
        Validator {
            path,
            base: path.parent().unwrap_or(Path::new(".")),
        }
    }

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

    pub(super) fn campaign(&self, file: CampaignFile) -> Result<Campaign, CampaignError> {
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
        let prices = file.prices.map(|table| self.prices(table)).transpose()?;
        if send.budget.is_some() && prices.is_none() {
            return Err(self.error(
                "send.budget",
                "a budget needs [prices]: give the price of each billing class the campaign uses (for example `[prices]` with `sms = 9`)",
            ));
        }
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

    fn prices(&self, table: BTreeMap<String, i64>) -> Result<BTreeMap<BillingClass, i64>, CampaignError> {
        let mut prices = BTreeMap::new();
        for (class, price) in table {
            let key = format!("prices.{class}");
            let parsed: BillingClass = serde_json::from_value(serde_json::Value::String(class)).map_err(|_| {
                self.error(
                    &key,
                    "not a billing class (alimtalk, bm_friend, bm_nonfriend, sms, lms, fallback_sms, fallback_lms)",
                )
            })?;
            if price < 0 {
                return Err(self.error(&key, "must not be negative"));
            }
            prices.insert(parsed, price);
        }
        Ok(prices)
    }

    fn endpoint(&self, endpoint: Option<EndpointFile>, accounts: Option<PathBuf>) -> Result<Endpoint, CampaignError> {
        let sandbox = Endpoint::Sandbox {
            accounts: accounts.as_deref().map(|p| self.resolve(p)),
        };
        match endpoint {
            None => Ok(sandbox),
            Some(EndpointFile::Named(name)) if name == "sandbox" => Ok(sandbox),
            Some(EndpointFile::Named(other)) => Err(self.error(
                "endpoint",
                format!("{other:?} is not known: use \"sandbox\" or a table with base_url and gateway_url"),
            )),
            Some(EndpointFile::Urls(urls)) => {
                if accounts.is_some() {
                    return Err(self.error("sandbox_accounts", "only applies to endpoint = \"sandbox\""));
                }
                let url = |key: &str, url: Option<String>| -> Result<String, CampaignError> {
                    match url {
                        Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
                            Ok(url.trim_end_matches('/').to_string())
                        }
                        Some(_) => Err(self.error(key, "must be an http:// or https:// URL")),
                        None => Err(self.error(key, "is required when endpoint is a table")),
                    }
                };
                Ok(Endpoint::Urls {
                    base_url: url("endpoint.base_url", urls.base_url)?,
                    gateway_url: url("endpoint.gateway_url", urls.gateway_url)?,
                    insecure_http: urls.insecure_http,
                })
            }
        }
    }

    fn recipients(&self, file: RecipientsFile) -> Result<Recipients, CampaignError> {
        let path = self.resolve(&file.path);
        let format = match file.format.or_else(|| InputFormat::from_path(&path)) {
            Some(format) => format,
            // calamine reads .xlsb, but 0.38 skips a formula's saved error there (a lookup's #N/A
            // would read as an empty cell, not a rejected row), and no tool here writes an .xlsb
            // to test with; Excel converts the file in one step.
            None if path
                .extension()
                .is_some_and(|extension| extension.eq_ignore_ascii_case("xlsb")) =>
            {
                return Err(self.error(
                    "recipients.path",
                    format!(
                        "{}: an Excel binary workbook (.xlsb) is not read: in Excel, save it as an Excel workbook (.xlsx) and set recipients.path to that file",
                        path.display()
                    ),
                ))
            }
            None => {
                return Err(self.error(
                    "recipients.format",
                    format!(
                        "{}: cannot tell the format from the file name: name a file .csv (or .txt, .tsv), .parquet (.pq), .xlsx (.xlsm), .xls or .ods, or set recipients.format to \"csv\", \"parquet\", \"xlsx\", \"xls\" or \"ods\"",
                        path.display()
                    ),
                ))
            }
        };
        if format != InputFormat::Csv && file.encoding != Encoding::Auto {
            return Err(self.error("recipients.encoding", "applies to CSV only"));
        }
        match &file.sheet {
            Some(_) if !format.is_spreadsheet() => {
                return Err(self.error("recipients.sheet", "applies to Excel and ODS files only"))
            }
            Some(sheet) if sheet.trim().is_empty() => {
                return Err(self.error(
                    "recipients.sheet",
                    "must not be empty: leave it out to read the first sheet",
                ))
            }
            _ => {}
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
            sheet: file.sheet,
            phone_column: file.phone.unwrap_or_else(|| "phone".into()),
            name_column: file.name,
            variables,
            suppression: file.suppression.map(|p| self.resolve(&p)),
            suppression_column: file.suppression_column.unwrap_or_else(|| "phone".into()),
            opt_outs: file.opt_outs.map(|p| self.resolve(&p)),
            frequency_capped: file.frequency_capped.map(|p| self.resolve(&p)),
            drop_duplicates: file.drop_duplicates.unwrap_or(true),
        })
    }

    /// A text the recipients receive, compiled; `key` is the setting it came from.
    fn template(&self, key: &str, text: &str) -> Result<Template, CampaignError> {
        if text.trim().is_empty() {
            // An empty message would still be sent, and charged, to every recipient.
            return Err(self.error(key, "must not be empty"));
        }
        Template::parse(text).map_err(|error| self.error(key, error.to_string()))
    }

    /// `message.text` or the contents of `message.text_file`, compiled.
    fn text(&self, file: &MessageFile) -> Result<Option<Template>, CampaignError> {
        match (&file.text, &file.text_file) {
            (Some(_), Some(_)) => {
                Err(self.error("message.text_file", "give message.text or message.text_file, not both"))
            }
            (Some(text), None) => self.template("message.text", text).map(Some),
            (None, Some(path)) => {
                let resolved = self.resolve(path);
                let text = std::fs::read_to_string(&resolved)
                    .map_err(|e| self.error("message.text_file", format!("cannot read {}: {e}", resolved.display())))?;
                self.template("message.text_file", text.trim_end_matches(['\n', '\r']))
                    .map(Some)
            }
            (None, None) => Ok(None),
        }
    }

    /// Every placeholder of the text has a column to fill it from.
    fn check_mapped(&self, text: &Template, recipients: &Recipients) -> Result<(), CampaignError> {
        for slot in text.slots() {
            match slot.placeholder() {
                Placeholder::Name if recipients.name_column.is_none() => {
                    return Err(self.error(
                        "recipients.name",
                        format!("the message uses {}: map it to a column", slot.written()),
                    ));
                }
                Placeholder::Var(key) if !recipients.variables.iter().any(|(variable, _)| variable == key) => {
                    return Err(self.error(
                        &format!("recipients.variables.{key}"),
                        format!("the message uses {}: map it to a column", slot.written()),
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn message(&self, kind: Kind, file: MessageFile, recipients: &Recipients) -> Result<Message, CampaignError> {
        let text = self.text(&file)?;
        let alter_message = file
            .alter_message
            .as_deref()
            .map(|text| self.template("message.alter_message", text))
            .transpose()?;
        let required = |key: &str| self.error(key, format!("is required for kind {}", kind.as_str()));
        let refuses = |key: &str, present: bool| -> Result<(), CampaignError> {
            if present {
                Err(self.error(key, format!("does not apply to kind {}", kind.as_str())))
            } else {
                Ok(())
            }
        };
        let mut brand_buttons = None;
        let mut gateway_buttons = None;
        if let Some(buttons) = &file.buttons {
            match kind {
                Kind::Brand => brand_buttons = Some(self.buttons::<BrandButton>(buttons)?),
                Kind::GatewayAlimtalk => gateway_buttons = Some(self.buttons::<GatewayButton>(buttons)?),
                _ => refuses("message.buttons", true)?,
            }
        }
        if file.advertising && matches!(kind, Kind::Alimtalk | Kind::GatewayAlimtalk) {
            return Err(self.error(
                "message.advertising",
                format!("kind {} is a notification, not advertising", kind.as_str()),
            ));
        }
        let alter = file.alter.unwrap_or(false);
        let message = match kind {
            Kind::Alimtalk => {
                let service = file.service.ok_or_else(|| required("message.service"))?;
                let template = file.template.ok_or_else(|| required("message.template"))?;
                let text = text.ok_or_else(|| required("message.text"))?;
                refuses("message.sender_key", file.sender_key.is_some())?;
                refuses("message.subject", file.subject.is_some())?;
                refuses("message.alter_message", alter_message.is_some())?;
                Message::Notification(Notification {
                    service,
                    template,
                    text,
                    title: file.title,
                    fallback: self.standard_fallback(alter, file.callback_no, None)?,
                })
            }
            Kind::GatewayAlimtalk => {
                let sender_key = file.sender_key.ok_or_else(|| required("message.sender_key"))?;
                let template = file.template.ok_or_else(|| required("message.template"))?;
                let text = text.ok_or_else(|| required("message.text"))?;
                refuses("message.service", file.service.is_some())?;
                refuses("message.subject", file.subject.is_some())?;
                // Without a number of its own the gateway may fall back from the channel's or the
                // group's, or not at all: the report could not say which fallbacks were charged.
                if alter && file.callback_no.is_none() {
                    return Err(self.error(
                        "message.callback_no",
                        "is required with alter = true for kind gateway-alimtalk: the fallback SMS/LMS goes from this registered number, so the report charges exactly the fallbacks the service sends",
                    ));
                }
                Message::GatewayNotification(GatewayNotification {
                    sender_key,
                    template,
                    text,
                    title: file.title,
                    buttons: gateway_buttons,
                    channel_id: file.channel_id,
                    fallback: alter.then_some(GatewayFallback {
                        text: alter_message,
                        callback_no: file.callback_no,
                    }),
                })
            }
            Kind::Brand => {
                let service = file.service.ok_or_else(|| required("message.service"))?;
                let chat_bubble_type = file
                    .chat_bubble_type
                    .ok_or_else(|| required("message.chat_bubble_type"))?;
                refuses("message.subject", file.subject.is_some())?;
                let fallback = self.standard_fallback(alter, file.callback_no, alter_message)?;
                let send_type = file.send_type.unwrap_or_default();
                let content = match send_type {
                    SendType::Free => {
                        if !chat_bubble_type.allowed_for_free() {
                            return Err(self.error(
                                "message.chat_bubble_type",
                                format!("{chat_bubble_type:?} needs send_type = \"BASIC\" with a template"),
                            ));
                        }
                        if text.is_none() && file.image.is_none() {
                            return Err(self.error(
                                "message.text",
                                "a FREE brand message needs message.text or message.image",
                            ));
                        }
                        if text.as_ref().is_some_and(Template::has_placeholders) {
                            return Err(self.error("message.text", "a FREE brand message is sent as written: #{...} (or #<...>) variables are filled only for BASIC templates"));
                        }
                        BrandContent::Free {
                            text,
                            image: file.image,
                            buttons: brand_buttons,
                        }
                    }
                    SendType::Basic => {
                        let template = file.template.ok_or_else(|| required("message.template"))?;
                        for (key, present) in [
                            ("message.image", file.image.is_some()),
                            ("message.buttons", file.buttons.is_some()),
                        ] {
                            if present {
                                return Err(self.error(key, "structural data must not be sent with send_type = \"BASIC\" (it comes from the template)"));
                            }
                        }
                        if fallback.as_ref().is_some_and(|fallback| fallback.text.is_none()) {
                            // The template's text lives at the service: without its own text the fallback's
                            // length, and so its SMS or LMS billing, could not be known or reported.
                            return Err(self.error(
                                "message.alter_message",
                                "is required for a BASIC brand message with alter = true",
                            ));
                        }
                        BrandContent::Basic { template, text }
                    }
                };
                let targeting = file.targeting.unwrap_or_default();
                let channel_id = if targeting.reaches_non_friends() {
                    Some(file.channel_id.ok_or_else(|| required("message.channel_id"))?)
                } else {
                    file.channel_id
                };
                Message::Brand(Brand {
                    service,
                    chat_bubble_type,
                    content,
                    targeting,
                    channel_id,
                    header: file.header,
                    additional_content: file.additional_content,
                    fallback,
                })
            }
            Kind::Sms | Kind::Lms | Kind::Text => {
                let service = file.service.ok_or_else(|| required("message.service"))?;
                let text = text.ok_or_else(|| required("message.text"))?;
                let callback_no = file.callback_no.ok_or_else(|| required("message.callback_no"))?;
                refuses("message.template", file.template.is_some())?;
                refuses("message.sender_key", file.sender_key.is_some())?;
                refuses("message.alter", file.alter.is_some())?;
                if kind == Kind::Sms {
                    refuses("message.subject", file.subject.is_some())?;
                }
                if let Some(subject) = &file.subject {
                    self.check_subject(subject)?;
                }
                Message::Text(TextMessage {
                    service,
                    text,
                    callback_no,
                    subject: file.subject,
                    advertising: file.advertising,
                })
            }
        };
        if let Some(text) = message.text() {
            self.check_mapped(text, recipients)?;
        }
        Ok(message)
    }

    fn standard_fallback(
        &self,
        alter: bool,
        callback_no: Option<String>,
        text: Option<Template>,
    ) -> Result<Option<StandardFallback>, CampaignError> {
        if !alter {
            return Ok(None);
        }
        let callback_no =
            callback_no.ok_or_else(|| self.error("message.callback_no", "is required when message.alter is true"))?;
        Ok(Some(StandardFallback { callback_no, text }))
    }

    fn check_subject(&self, subject: &str) -> Result<(), CampaignError> {
        use crate::text::{euc_kr_len, LMS_SUBJECT_MAX_BYTES};
        match euc_kr_len(subject) {
            Ok(bytes) if bytes <= LMS_SUBJECT_MAX_BYTES => Ok(()),
            Ok(bytes) => Err(self.error(
                "message.subject",
                format!("is {bytes} bytes in EUC-KR, at most {LMS_SUBJECT_MAX_BYTES}"),
            )),
            Err(error) => Err(self.error("message.subject", error.to_string())),
        }
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
        let concurrency = super::check_concurrency(file.concurrency.unwrap_or(4))
            .map_err(|message| self.error("send.concurrency", message))?;
        if let Some(rate) = file.messages_per_second {
            super::check_rate(rate).map_err(|message| self.error("send.messages_per_second", message))?;
        }
        if let Some(budget) = file.budget {
            super::check_budget(budget).map_err(|message| self.error("send.budget", message))?;
        }
        let pause_when_failing = match &file.pause_when_failing {
            Some(value) => {
                super::FailingRule::parse(value).map_err(|message| self.error("send.pause_when_failing", message))?
            }
            None => None,
        };
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
            budget: file.budget,
            pause_when_failing,
        })
    }
}
