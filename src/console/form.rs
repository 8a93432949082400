//! The edit page's form per kind: the settings of campaign.toml a person fills in (the text with its size, template, sender number, fallback, brand fields, budget, rate, quiet hours; prices belong to the workspace's connection) as fields, read from the settings and written back into them; every other setting stays TOML beside them.

use super::error::ConsoleError;
use super::settings::parse_settings;
use super::words::{fill, Words};
use crate::text::{ALIMTALK_MAX_CHARS, LMS_MAX_BYTES, SMS_MAX_BYTES};
use std::collections::HashMap;

/// A form refused: the form field in error (its `name`) and what to do, in the page's language.
#[derive(Debug, Clone)]
pub struct Refused {
    pub field: String,
    pub message: String,
}

impl Refused {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Refused {
        Refused {
            field: field.into(),
            message: message.into(),
        }
    }

    /// A refusal of the settings, placed on the advanced settings box.
    pub fn settings(error: &ConsoleError, w: &Words) -> Refused {
        let detail = super::error::without_server_paths(&error.to_string());
        Refused::new("settings", fill(w.composer_refused_settings, &[("detail", &detail)]))
    }
}

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
    label: fn(&Words) -> &'static str,
    input: Input,
}

const fn spec(section: &'static str, key: &'static str, label: fn(&Words) -> &'static str, input: Input) -> Spec {
    Spec {
        section,
        key,
        label,
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

const SERVICE: Spec = spec("message", "service", |w| w.field_service, Input::Number);
const CALLBACK: Spec = spec("message", "callback_no", |w| w.field_callback_no, Input::Line);
const SUBJECT: Spec = spec("message", "subject", |w| w.field_subject, Input::Line);
const ADVERTISING: Spec = spec("message", "advertising", |w| w.field_advertising, Input::Flag);
const TEMPLATE: Spec = spec("message", "template", |w| w.field_template, Input::Line);
const ALTER: Spec = spec("message", "alter", |w| w.field_alter, Input::Flag);
const ALTER_MESSAGE: Spec = spec(
    "message",
    "alter_message",
    |w| w.field_alter_message,
    Input::Message(SMS_OR_LMS),
);
const CHANNEL: Spec = spec("message", "channel_id", |w| w.field_channel_id, Input::Line);
const NOTIFICATION_TEXT: Spec = spec(
    "message",
    "text",
    |w| w.field_text_template,
    Input::Message(Measure::Chars(Some(ALIMTALK_MAX_CHARS))),
);
const BUDGET: Spec = spec("send", "budget", |w| w.field_budget, Input::Number);
const RATE: Spec = spec(
    "send",
    "messages_per_second",
    |w| w.field_messages_per_second,
    Input::Number,
);
const QUIET: Spec = spec(
    "send",
    "quiet_hours",
    |w| w.field_quiet_hours,
    Input::Choice(&["enforce", "warn", "off"]),
);

const SMS: &[Spec] = &[
    SERVICE,
    CALLBACK,
    spec("message", "text", |w| w.field_text, Input::Message(SMS_ONLY)),
    ADVERTISING,
];
const LMS: &[Spec] = &[
    SERVICE,
    CALLBACK,
    SUBJECT,
    spec("message", "text", |w| w.field_text, Input::Message(LMS_ONLY)),
    ADVERTISING,
];
const TEXT: &[Spec] = &[
    SERVICE,
    CALLBACK,
    SUBJECT,
    spec("message", "text", |w| w.field_text, Input::Message(SMS_OR_LMS)),
    ADVERTISING,
];
const ALIMTALK: &[Spec] = &[SERVICE, TEMPLATE, NOTIFICATION_TEXT, ALTER, CALLBACK];
const GATEWAY: &[Spec] = &[
    spec("message", "sender_key", |w| w.field_sender_key, Input::Line),
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
        |w| w.field_send_type,
        Input::Choice(&["FREE", "BASIC"]),
    ),
    spec(
        "message",
        "chat_bubble_type",
        |w| w.field_chat_bubble_type,
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
        |w| w.field_targeting,
        Input::Choice(&["I", "F", "N", "M"]),
    ),
    TEMPLATE,
    spec(
        "message",
        "text",
        |w| w.field_text,
        Input::Message(Measure::Chars(None)),
    ),
    spec("message", "image", |w| w.field_image, Input::Line),
    spec("message", "header", |w| w.field_header, Input::Line),
    spec(
        "message",
        "additional_content",
        |w| w.field_additional_content,
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
pub fn views(kind: &str, settings: &toml::Table, w: &Words) -> Vec<FieldView> {
    views_with(kind, w, |spec| {
        settings
            .get(spec.section)
            .and_then(|section| section.get(spec.key))
            .map(value_text)
            .unwrap_or_default()
    })
}

/// The fields of a kind as a refused form sent them, for the person to mend.
pub fn posted_views(kind: &str, fields: &HashMap<String, String>, w: &Words) -> Vec<FieldView> {
    views_with(kind, w, |spec| {
        let given = fields
            .get(&format!("{}.{}", spec.section, spec.key))
            .map(String::as_str)
            .unwrap_or("");
        match spec.input {
            Input::Flag => if given == "on" || given == "true" { "true" } else { "" }.to_string(),
            _ => given.replace("\r\n", "\n"),
        }
    })
}

fn views_with(kind: &str, w: &Words, value_of: impl Fn(&Spec) -> String) -> Vec<FieldView> {
    specs(kind)
        .map(|spec| {
            let value = value_of(spec);
            let (input, options, measure, limit, lms_limit) = match spec.input {
                Input::Line => ("line", &[][..], "", 0, 0),
                Input::Number => ("number", &[][..], "", 0, 0),
                Input::Flag => ("flag", &[][..], "", 0, 0),
                Input::Choice(options) => ("choice", options, "", 0, 0),
                Input::Message(Measure::EucKr { sms, lms }) => ("message", &[][..], "euc-kr", sms, lms),
                Input::Message(Measure::Chars(limit)) => ("message", &[][..], "chars", limit.unwrap_or(0), 0),
            };
            let size = match spec.input {
                Input::Message(measure) => size_text(&value, measure, w),
                _ => String::new(),
            };
            FieldView {
                name: format!("{}.{}", spec.section, spec.key),
                label: (spec.label)(w),
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

/// A message's size as the page says it (the live count in the browser says the same, from the
/// same words).
fn size_text(text: &str, measure: Measure, w: &Words) -> String {
    let n = |template: &str, n: usize, limit: usize| {
        fill(template, &[("n", &n.to_string()), ("limit", &limit.to_string())])
    };
    match measure {
        Measure::EucKr { sms, lms } => match crate::text::euc_kr_len(text) {
            Ok(bytes) if sms == lms => n(w.composer_size_bytes_limit, bytes, sms),
            Ok(bytes) => {
                let (lane, limit) = if bytes <= sms {
                    (w.lane("sms"), sms)
                } else {
                    (w.lane("lms"), lms)
                };
                let lane = fill(&n(w.composer_lane_up_to, 0, limit), &[("lane", lane)]);
                fill(&n(w.composer_size_bytes_lane, bytes, 0), &[("lane", &lane)])
            }
            Err(unencodable) => fill(
                w.composer_size_unencodable,
                &[("c", &format!("{:?}", unencodable.character))],
            ),
        },
        Measure::Chars(Some(limit)) => n(w.composer_size_chars_limit, text.chars().count(), limit),
        Measure::Chars(None) => n(w.composer_size_chars, text.chars().count(), 0),
    }
}

/// The `[recipients]` keys the form's column lists show.
pub const MAPPING_KEYS: [&str; 4] = ["phone", "name", "sheet", "variables"];

/// The settings without the keys the form shows: the "other settings" box.
pub fn others(kind: &str, settings: &toml::Table) -> Result<String, ConsoleError> {
    let mut rest = settings.clone();
    for spec in specs(kind) {
        if let Some(section) = rest.get_mut(spec.section).and_then(toml::Value::as_table_mut) {
            section.remove(spec.key);
        }
    }
    // The columns and the placeholders' columns are the form's too.
    if let Some(section) = rest.get_mut("recipients").and_then(toml::Value::as_table_mut) {
        for key in MAPPING_KEYS {
            section.remove(key);
        }
    }
    rest.retain(|_, value| !value.as_table().is_some_and(toml::Table::is_empty));
    toml::to_string(&rest).map_err(ConsoleError::internal)
}

/// The settings from the "other settings" text and the form's fields. A field's key written in
/// the other settings as well is refused, named, rather than one silently winning; a message
/// whose placeholder is malformed is refused on its field.
pub fn merge(kind: &str, others: &str, fields: &HashMap<String, String>, w: &Words) -> Result<String, Refused> {
    let mut table = parse_settings(others).map_err(|error| Refused::settings(&error, w))?;
    for spec in specs(kind) {
        let name = format!("{}.{}", spec.section, spec.key);
        if table
            .get(spec.section)
            .and_then(|section| section.get(spec.key))
            .is_some()
        {
            return Err(Refused::new("settings", fill(w.composer_in_both, &[("field", &name)])));
        }
        let given = fields
            .get(&name)
            .map(|text| text.trim_end_matches(['\r', '\n']))
            .unwrap_or("");
        let value = match spec.input {
            Input::Flag => (given == "on" || given == "true").then_some(toml::Value::Boolean(true)),
            _ if given.trim().is_empty() => None,
            Input::Number => Some(
                number(given.trim())
                    .ok_or_else(|| Refused::new(&name, fill(w.composer_not_a_number, &[("value", given.trim())])))?,
            ),
            Input::Choice(options) if !options.contains(&given.trim()) => {
                return Err(Refused::new(
                    &name,
                    fill(w.composer_not_a_choice, &[("value", given.trim())]),
                ))
            }
            Input::Choice(_) | Input::Line => Some(toml::Value::String(given.trim().to_string())),
            // A message keeps its own spaces; browsers send line ends as CR LF.
            Input::Message(_) => {
                let text = given.replace("\r\n", "\n");
                crate::template::Template::parse(&text).map_err(|error| {
                    Refused::new(
                        &name,
                        fill(w.composer_bad_placeholder, &[("detail", &error.to_string())]),
                    )
                })?;
                Some(toml::Value::String(text))
            }
        };
        if let Some(value) = value {
            table
                .entry(spec.section)
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
                .ok_or_else(|| {
                    Refused::settings(
                        &ConsoleError::Invalid(format!("campaign.toml: `{}` must be a table", spec.section)),
                        w,
                    )
                })?
                .insert(spec.key.to_string(), value);
        }
    }
    toml::to_string(&table).map_err(|error| Refused::settings(&ConsoleError::internal(error), w))
}

/// A number of a field, as a person types it (`150,000`, `₩150000`, `12.5`), read as the CLI
/// reads its number flags (the engine's `typed_number`).
fn number(text: &str) -> Option<toml::Value> {
    use crate::engine::rules::typed_number;
    if let Some(whole) = typed_number::<i64>(text) {
        return Some(toml::Value::Integer(whole));
    }
    match typed_number::<f64>(text) {
        Some(real) if real.is_finite() => Some(toml::Value::Float(real)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::words::{EN, KO};
    use proptest::prelude::*;

    const SAMPLE: &str = include_str!("../../samples/sms.toml");

    fn fields(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn the_form_and_the_other_settings_make_the_settings_back() {
        let settings = parse_settings(SAMPLE).unwrap();
        let views = views("sms", &settings, &EN);
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
        let merged = merge("sms", &rest, &given, &EN).unwrap();
        // The columns are the form's column lists (composer::columns puts them back).
        let mut expected = settings.clone();
        let recipients = expected["recipients"].as_table_mut().unwrap();
        for key in MAPPING_KEYS {
            recipients.remove(key);
        }
        assert_eq!(parse_settings(&merged).unwrap(), expected);
        assert!(!rest.contains("variables") && rest.contains("[recipients]"), "{rest}");
    }

    #[test]
    fn a_field_also_in_the_other_settings_is_named() {
        let error = merge(
            "sms",
            "[message]\ntext = \"x\"\n",
            &fields(&[("message.text", "y")]),
            &EN,
        )
        .unwrap_err();
        assert_eq!(error.field, "settings");
        assert!(error.message.contains("message.text"), "{error:?}");
    }

    #[test]
    fn numbers_are_read_as_people_type_them_and_others_named() {
        let merged = merge(
            "sms",
            "",
            &fields(&[("send.budget", "₩150,000"), ("send.messages_per_second", "12.5")]),
            &EN,
        )
        .unwrap();
        let table = parse_settings(&merged).unwrap();
        assert_eq!(table["send"]["budget"].as_integer(), Some(150_000));
        assert_eq!(table["send"]["messages_per_second"].as_float(), Some(12.5));
        let error = merge("sms", "", &fields(&[("send.budget", "lots")]), &EN).unwrap_err();
        assert_eq!(error.field, "send.budget");
        assert!(error.message.contains("lots"), "{error:?}");
        let error = merge("sms", "", &fields(&[("message.text", "#{VAR1 쿠폰")]), &KO).unwrap_err();
        assert_eq!(error.field, "message.text");
        assert!(error.message.starts_with("본문의 변수"), "{error:?}");
    }

    #[test]
    fn a_message_size_is_measured_as_the_service_limits_it() {
        // 안녕 4, a space 1, #{ 2, 이름 4, } 1.
        assert_eq!(size_text("안녕 #{이름}", SMS_ONLY, &EN), "12 / 90 bytes EUC-KR");
        assert_eq!(size_text("안녕 #{이름}", SMS_ONLY, &KO), "12 / 90바이트 (EUC-KR)");
        assert!(size_text(&"가".repeat(46), SMS_OR_LMS, &EN).ends_with("LMS (up to 2000)"));
        assert_eq!(
            size_text("가", SMS_OR_LMS, &KO),
            "2바이트 (EUC-KR): SMS (최대 90바이트)"
        );
        assert!(size_text("😀", SMS_ONLY, &EN).contains("EUC-KR"));
        assert_eq!(
            size_text("가나", Measure::Chars(Some(1000)), &EN),
            "2 / 1000 characters"
        );
        assert_eq!(size_text("가나", Measure::Chars(Some(1000)), &KO), "2 / 1000자");
    }

    proptest! {
        /// Whatever is typed into the fields, merging never panics, and a field it takes reads back as typed.
        #[test]
        fn typed_fields_read_back(text in "[a-z가-힣 #{}<>\\r\\n]{0,40}", budget in "[0-9,₩a-z]{0,8}") {
            let given = fields(&[("message.text", &text), ("send.budget", &budget)]);
            if let Ok(merged) = merge("sms", "", &given, &EN) {
                let table = parse_settings(&merged).unwrap();
                let read = table.get("message").and_then(|m| m.get("text")).and_then(|t| t.as_str()).unwrap_or("");
                let typed = text.trim_end_matches(['\r', '\n']);
                let expected = if typed.trim().is_empty() { String::new() } else { typed.replace("\r\n", "\n") };
                prop_assert_eq!(read, expected);
            }
        }
    }
}
