//! The edit page's form per kind: the settings of campaign.toml a person fills in (the text with its size, template, sender number, fallback, brand fields, budget, rate, quiet hours; prices belong to the workspace's connection) as fields, read from the settings and written back into them; every other setting stays TOML beside them.

use super::error::ConsoleError;
use super::settings::parse_settings;
use crate::text::{ALIMTALK_MAX_CHARS, LMS_MAX_BYTES, SMS_MAX_BYTES};
use std::collections::HashMap;

/// How a field is entered.
#[derive(Debug, Clone, Copy)]
enum Input {
    Line,
    /// A text sent to recipients, with its size as the service limits it.
    Message(Measure),
    Number,
    Flag,
    Choice(&'static [&'static str]),
}

/// The measure a message's limit is written in.
#[derive(Debug, Clone, Copy)]
enum Measure {
    /// EUC-KR bytes: an SMS up to the first limit, an LMS up to the second (the same limit twice:
    /// one kind only).
    EucKr { sms: usize, lms: usize },
    /// Characters, with the limit when there is one.
    Chars(Option<usize>),
}

struct Spec {
    section: &'static str,
    key: &'static str,
    en: &'static str,
    ko: &'static str,
    input: Input,
}

const fn spec(section: &'static str, key: &'static str, en: &'static str, ko: &'static str, input: Input) -> Spec {
    Spec {
        section,
        key,
        en,
        ko,
        input,
    }
}

const SMS_ONLY: Measure = Measure::EucKr {
    sms: SMS_MAX_BYTES,
    lms: SMS_MAX_BYTES,
};
const LMS_ONLY: Measure = Measure::EucKr {
    sms: LMS_MAX_BYTES,
    lms: LMS_MAX_BYTES,
};
const SMS_OR_LMS: Measure = Measure::EucKr {
    sms: SMS_MAX_BYTES,
    lms: LMS_MAX_BYTES,
};

const SERVICE: Spec = spec("message", "service", "Service number", "서비스 번호", Input::Number);
const CALLBACK: Spec = spec("message", "callback_no", "Sender number", "발신 번호", Input::Line);
const SUBJECT: Spec = spec("message", "subject", "Subject (LMS)", "제목 (LMS)", Input::Line);
const ADVERTISING: Spec = spec("message", "advertising", "Advertising", "광고", Input::Flag);
const TEMPLATE: Spec = spec("message", "template", "Template code", "템플릿 코드", Input::Line);
const ALTER: Spec = spec(
    "message",
    "alter",
    "Fallback SMS/LMS on a channel failure",
    "실패 시 문자 대체 발송",
    Input::Flag,
);
const ALTER_MESSAGE: Spec = spec(
    "message",
    "alter_message",
    "Fallback text",
    "대체 발송 문구",
    Input::Message(SMS_OR_LMS),
);
const CHANNEL: Spec = spec("message", "channel_id", "Channel id", "채널 ID", Input::Line);
const NOTIFICATION_TEXT: Spec = spec(
    "message",
    "text",
    "Text (as the registered template)",
    "본문 (등록된 템플릿과 같게)",
    Input::Message(Measure::Chars(Some(ALIMTALK_MAX_CHARS))),
);
const BUDGET: Spec = spec("send", "budget", "Budget (won)", "예산 (원)", Input::Number);
const RATE: Spec = spec(
    "send",
    "messages_per_second",
    "Messages per second",
    "초당 발송 수",
    Input::Number,
);
const QUIET: Spec = spec(
    "send",
    "quiet_hours",
    "Quiet hours",
    "야간 발송 제한",
    Input::Choice(&["enforce", "warn", "off"]),
);

const SMS: &[Spec] = &[
    SERVICE,
    CALLBACK,
    spec("message", "text", "Text", "본문", Input::Message(SMS_ONLY)),
    ADVERTISING,
];
const LMS: &[Spec] = &[
    SERVICE,
    CALLBACK,
    SUBJECT,
    spec("message", "text", "Text", "본문", Input::Message(LMS_ONLY)),
    ADVERTISING,
];
const TEXT: &[Spec] = &[
    SERVICE,
    CALLBACK,
    SUBJECT,
    spec("message", "text", "Text", "본문", Input::Message(SMS_OR_LMS)),
    ADVERTISING,
];
const ALIMTALK: &[Spec] = &[SERVICE, TEMPLATE, NOTIFICATION_TEXT, ALTER, CALLBACK];
const GATEWAY: &[Spec] = &[
    spec(
        "message",
        "sender_key",
        "Sender profile key",
        "발신 프로필 키",
        Input::Line,
    ),
    TEMPLATE,
    NOTIFICATION_TEXT,
    CHANNEL,
    ALTER,
    ALTER_MESSAGE,
    CALLBACK,
];
const BRAND: &[Spec] = &[
    SERVICE,
    spec(
        "message",
        "send_type",
        "Send type",
        "발송 유형",
        Input::Choice(&["FREE", "BASIC"]),
    ),
    spec(
        "message",
        "chat_bubble_type",
        "Bubble",
        "말풍선 유형",
        Input::Choice(&[
            "TEXT",
            "IMAGE",
            "WIDE",
            "WIDE_ITEM_LIST",
            "CAROUSEL_FEED",
            "PREMIUM_VIDEO",
            "COMMERCE",
            "CAROUSEL_COMMERCE",
        ]),
    ),
    spec(
        "message",
        "targeting",
        "Targeting",
        "타게팅",
        Input::Choice(&["I", "F", "N", "M"]),
    ),
    TEMPLATE,
    spec("message", "text", "Text", "본문", Input::Message(Measure::Chars(None))),
    spec("message", "image", "Image URL", "이미지 URL", Input::Line),
    spec("message", "header", "Header", "헤더", Input::Line),
    spec(
        "message",
        "additional_content",
        "Additional content",
        "부가 정보",
        Input::Line,
    ),
    CHANNEL,
    ALTER,
    ALTER_MESSAGE,
    CALLBACK,
];
const SEND: &[Spec] = &[BUDGET, RATE, QUIET];

fn specs(kind: &str) -> impl Iterator<Item = &'static Spec> {
    let message: &[Spec] = match kind {
        "sms" => SMS,
        "lms" => LMS,
        "text" => TEXT,
        "alimtalk" => ALIMTALK,
        "gateway-alimtalk" => GATEWAY,
        "brand" => BRAND,
        _ => &[],
    };
    message.iter().chain(SEND)
}

/// A field as the page shows it.
pub struct FieldView {
    /// `section.key`, the form field's name.
    pub name: String,
    pub label: &'static str,
    /// `line`, `message`, `number`, `flag` or `choice`.
    pub input: &'static str,
    pub value: String,
    pub options: &'static [&'static str],
    /// For a message: `euc-kr` or `chars`, the limits, and its size now (placeholders as written).
    pub measure: &'static str,
    pub limit: usize,
    pub lms_limit: usize,
    pub size: String,
}

/// The fields of a kind, filled from the settings.
pub fn views(kind: &str, settings: &toml::Table, korean: bool) -> Vec<FieldView> {
    specs(kind)
        .map(|spec| {
            let value = settings
                .get(spec.section)
                .and_then(|section| section.get(spec.key))
                .map(value_text)
                .unwrap_or_default();
            let (input, options, measure, limit, lms_limit) = match spec.input {
                Input::Line => ("line", &[][..], "", 0, 0),
                Input::Number => ("number", &[][..], "", 0, 0),
                Input::Flag => ("flag", &[][..], "", 0, 0),
                Input::Choice(options) => ("choice", options, "", 0, 0),
                Input::Message(Measure::EucKr { sms, lms }) => ("message", &[][..], "euc-kr", sms, lms),
                Input::Message(Measure::Chars(limit)) => ("message", &[][..], "chars", limit.unwrap_or(0), 0),
            };
            let size = match spec.input {
                Input::Message(measure) => size_text(&value, measure),
                _ => String::new(),
            };
            FieldView {
                name: format!("{}.{}", spec.section, spec.key),
                label: if korean { spec.ko } else { spec.en },
                input,
                value,
                options,
                measure,
                limit,
                lms_limit,
                size,
            }
        })
        .collect()
}

fn value_text(value: &toml::Value) -> String {
    match value {
        toml::Value::String(text) => text.clone(),
        toml::Value::Boolean(flag) => if *flag { "true" } else { "" }.to_string(),
        other => other.to_string(),
    }
}

/// A message's size as the page says it (the live count in the browser says the same).
fn size_text(text: &str, measure: Measure) -> String {
    match measure {
        Measure::EucKr { sms, lms } => match crate::text::euc_kr_len(text) {
            Ok(bytes) if sms == lms => format!("{bytes} / {sms} bytes EUC-KR"),
            Ok(bytes) => format!(
                "{bytes} bytes EUC-KR: {}",
                if bytes <= sms {
                    format!("SMS (up to {sms})")
                } else {
                    format!("LMS (up to {lms})")
                }
            ),
            Err(unencodable) => unencodable.to_string(),
        },
        Measure::Chars(Some(limit)) => format!("{} / {limit} characters", text.chars().count()),
        Measure::Chars(None) => format!("{} characters", text.chars().count()),
    }
}

/// The settings without the keys the form shows: the "other settings" box.
pub fn others(kind: &str, settings: &toml::Table) -> Result<String, ConsoleError> {
    let mut rest = settings.clone();
    for spec in specs(kind) {
        if let Some(section) = rest.get_mut(spec.section).and_then(toml::Value::as_table_mut) {
            section.remove(spec.key);
        }
    }
    rest.retain(|_, value| !value.as_table().is_some_and(toml::Table::is_empty));
    toml::to_string(&rest).map_err(ConsoleError::internal)
}

/// The settings from the "other settings" text and the form's fields. A field's key written in
/// the other settings as well is refused, named, rather than one silently winning.
pub fn merge(kind: &str, others: &str, fields: &HashMap<String, String>) -> Result<String, ConsoleError> {
    let mut table = parse_settings(others)?;
    for spec in specs(kind) {
        let name = format!("{}.{}", spec.section, spec.key);
        if table
            .get(spec.section)
            .and_then(|section| section.get(spec.key))
            .is_some()
        {
            return Err(ConsoleError::Invalid(format!(
                "{name} is a field of the form: remove it from the other settings"
            )));
        }
        let given = fields
            .get(&name)
            .map(|text| text.trim_end_matches(['\r', '\n']))
            .unwrap_or("");
        let value = match spec.input {
            Input::Flag => (given == "on" || given == "true").then_some(toml::Value::Boolean(true)),
            _ if given.trim().is_empty() => None,
            Input::Number => Some(number(&name, given.trim())?),
            Input::Choice(options) if !options.contains(&given.trim()) => {
                return Err(ConsoleError::Invalid(format!(
                    "{name}: {given:?} is not one of {}",
                    options.join(", ")
                )))
            }
            Input::Choice(_) | Input::Line => Some(toml::Value::String(given.trim().to_string())),
            // A message keeps its own spaces; browsers send line ends as CR LF.
            Input::Message(_) => Some(toml::Value::String(given.replace("\r\n", "\n"))),
        };
        if let Some(value) = value {
            table
                .entry(spec.section)
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
                .ok_or_else(|| ConsoleError::Invalid(format!("campaign.toml: `{}` must be a table", spec.section)))?
                .insert(spec.key.to_string(), value);
        }
    }
    toml::to_string(&table).map_err(ConsoleError::internal)
}

/// A number of a field, as a person types it (`150,000`, `₩150000`, `12.5`), read as the CLI
/// reads its number flags (the engine's `typed_number`).
fn number(name: &str, text: &str) -> Result<toml::Value, ConsoleError> {
    use crate::engine::rules::typed_number;
    if let Some(whole) = typed_number::<i64>(text) {
        return Ok(toml::Value::Integer(whole));
    }
    match typed_number::<f64>(text) {
        Some(real) if real.is_finite() => Ok(toml::Value::Float(real)),
        _ => Err(ConsoleError::Invalid(format!("{name}: {text:?} is not a number"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SAMPLE: &str = include_str!("../../samples/sms.toml");

    fn fields(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn the_form_and_the_other_settings_make_the_settings_back() {
        let settings = parse_settings(SAMPLE).unwrap();
        let views = views("sms", &settings, false);
        let given: HashMap<String, String> = views
            .iter()
            .map(|view| {
                (
                    view.name.clone(),
                    if view.input == "flag" && view.value == "true" {
                        "on".into()
                    } else {
                        view.value.clone()
                    },
                )
            })
            .collect();
        let rest = others("sms", &settings).unwrap();
        let merged = merge("sms", &rest, &given).unwrap();
        assert_eq!(parse_settings(&merged).unwrap(), settings);
    }

    #[test]
    fn a_field_also_in_the_other_settings_is_named() {
        let error = merge("sms", "[message]\ntext = \"x\"\n", &fields(&[("message.text", "y")])).unwrap_err();
        assert!(error.to_string().contains("message.text"), "{error}");
    }

    #[test]
    fn numbers_are_read_as_people_type_them_and_others_named() {
        let merged = merge(
            "sms",
            "",
            &fields(&[("send.budget", "₩150,000"), ("send.messages_per_second", "12.5")]),
        )
        .unwrap();
        let table = parse_settings(&merged).unwrap();
        assert_eq!(table["send"]["budget"].as_integer(), Some(150_000));
        assert_eq!(table["send"]["messages_per_second"].as_float(), Some(12.5));
        let error = merge("sms", "", &fields(&[("send.budget", "lots")])).unwrap_err();
        assert!(error.to_string().contains("send.budget"), "{error}");
    }

    #[test]
    fn a_message_size_is_measured_as_the_service_limits_it() {
        // 안녕 4, a space 1, #{ 2, 이름 4, } 1.
        assert_eq!(size_text("안녕 #{이름}", SMS_ONLY), "12 / 90 bytes EUC-KR");
        assert!(size_text(&"가".repeat(46), SMS_OR_LMS).ends_with("LMS (up to 2000)"));
        assert!(size_text("😀", SMS_ONLY).contains("EUC-KR"));
        assert_eq!(size_text("가나", Measure::Chars(Some(1000))), "2 / 1000 characters");
    }

    proptest! {
        /// Whatever is typed into the fields, merging never panics, and a field it takes reads back as typed.
        #[test]
        fn typed_fields_read_back(text in "[a-z가-힣 #{}<>\\r\\n]{0,40}", budget in "[0-9,₩a-z]{0,8}") {
            let given = fields(&[("message.text", &text), ("send.budget", &budget)]);
            if let Ok(merged) = merge("sms", "", &given) {
                let table = parse_settings(&merged).unwrap();
                let read = table.get("message").and_then(|m| m.get("text")).and_then(|t| t.as_str()).unwrap_or("");
                let typed = text.trim_end_matches(['\r', '\n']);
                let expected = if typed.trim().is_empty() { String::new() } else { typed.replace("\r\n", "\n") };
                prop_assert_eq!(read, expected);
            }
        }
    }
}
