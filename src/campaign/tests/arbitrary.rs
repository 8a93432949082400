//! Property tests of the campaign file parser: arbitrary text never panics, and every error on a TOML campaign names a setting.

use super::parse;
use crate::campaign::CampaignError;
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;

const TOP: &[&str] = &["name", "endpoint", "sandbox_accounts"];

const SECTIONS: &[(&str, &[&str])] = &[
    (
        "credentials",
        &["api_key_env", "api_key_file", "group_id_env", "group_id"],
    ),
    (
        "message",
        &[
            "service",
            "sender_key",
            "template",
            "text",
            "title",
            "buttons",
            "alter",
            "alter_message",
            "callback_no",
            "send_type",
            "chat_bubble_type",
            "targeting",
            "channel_id",
            "image",
            "header",
            "additional_content",
            "subject",
            "advertising",
        ],
    ),
    (
        "recipients",
        &[
            "format",
            "encoding",
            "phone",
            "name",
            "variables",
            "suppression",
            "suppression_column",
            "opt_outs",
            "frequency_capped",
            "drop_duplicates",
        ],
    ),
    (
        "send",
        &[
            "chunk_size",
            "concurrency",
            "messages_per_second",
            "quiet_hours",
            "timeout_secs",
            "max_attempts",
            "pause_when_failing",
        ],
    ),
    ("output", &["dir"]),
    ("prices", &["sms", "lms", "alimtalk", "bm_friend", "coupon"]),
];
const ROOTS: &[&str] = &[
    "name",
    "kind",
    "endpoint",
    "sandbox_accounts",
    "credentials",
    "message",
    "recipients",
    "send",
    "output",
    "prices",
];

fn quoted(text: String) -> String {
    toml::Value::String(text).to_string()
}

fn one_of(words: &'static [&'static str]) -> BoxedStrategy<String> {
    prop::sample::select(words)
        .prop_map(|word| quoted(word.to_string()))
        .boxed()
}

fn literal(text: &'static str) -> BoxedStrategy<String> {
    Just(text.to_string()).boxed()
}

/// Message text made of words and placeholders, well-formed or not, in both spellings.
fn message_text() -> BoxedStrategy<String> {
    let piece = prop_oneof![
        Just("(광고) 세일 "),
        Just("hello "),
        Just("#{name}"),
        Just("#<이름>"),
        Just("#{VAR1}"),
        Just("#<VAR2>"),
        Just("#{"),
        Just("#<VAR1"),
        Just("#{}"),
        Just("#<>"),
        Just("\n"),
        Just(" "),
    ];
    proptest::collection::vec(piece, 0..6)
        .prop_map(|pieces| quoted(pieces.concat()))
        .boxed()
}

/// A value of the type a key takes, with spellings right and wrong for it.
fn typed(key: &'static str) -> BoxedStrategy<String> {
    match key {
        "service" | "chunk_size" | "concurrency" | "timeout_secs" | "max_attempts" | "sms" | "lms" | "alimtalk"
        | "bm_friend" | "coupon" => (-5i64..1_500).prop_map(|n| n.to_string()).boxed(),
        "alter" | "advertising" | "drop_duplicates" => any::<bool>().prop_map(|b| b.to_string()).boxed(),
        "messages_per_second" => (-10.0f64..1_000.0).prop_map(|f| format!("{f:?}")).boxed(),
        "send_type" => one_of(&["FREE", "BASIC", "free"]),
        "chat_bubble_type" => one_of(&["TEXT", "IMAGE", "PREMIUM_VIDEO", "COMMERCE"]),
        "targeting" => one_of(&["I", "F", "N", "M"]),
        "format" => one_of(&["csv", "parquet", "xlsx"]),
        "encoding" => one_of(&["auto", "utf-8", "cp949", "latin1"]),
        "quiet_hours" => one_of(&["enforce", "warn", "off"]),
        "endpoint" => prop_oneof![
            one_of(&["sandbox", "production"]),
            literal("{ base_url = \"https://h/s\", gateway_url = \"https://h/g\" }"),
            literal("{ base_url = \"http://h/s\", gateway_url = \"http://h/g\", insecure_http = true }"),
            literal("{ base_url = \"ftp://h/s\" }"),
            literal("{ base_url = \"https://h/s\", gateway_url = \"https://h/g\", proxy = \"x\" }"),
        ]
        .boxed(),
        "buttons" => prop_oneof![
            literal("[]"),
            literal("[{ name = \"b\", link1 = \"https://h\" }]"),
            literal("[{ type = \"WL\", name = \"b\", url_pc = \"https://h\" }]"),
            literal("[{ label = \"b\" }]"),
        ]
        .boxed(),
        "variables" => prop_oneof![
            literal("{ VAR1 = \"order_no\" }"),
            literal("{ VAR1 = \"order_no\", VAR2 = \"amount\" }"),
            literal("{ VAR1 = \" \" }"),
            literal("{ \"이름\" = \"name\" }"),
        ]
        .boxed(),
        "text" | "alter_message" | "title" | "subject" => message_text(),
        _ => one_of(&["x", "", "0212345678", "people.csv", "ch-demo-large", "name"]),
    }
}

/// Any value at all, for the cases where a key gets the wrong type.
fn anything() -> BoxedStrategy<String> {
    prop_oneof![
        "[ -~가-힣#{}<>\n]{0,24}".prop_map(quoted),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<bool>().prop_map(|b| b.to_string()),
        Just("[]".to_string()),
        Just("{}".to_string()),
    ]
    .boxed()
}

/// A valid campaign of each kind, as (section, key, value); `""` is the top level.
fn valid_campaign() -> BoxedStrategy<Vec<(&'static str, &'static str, String)>> {
    const RECIPIENTS: [(&str, &str, &str); 3] = [
        ("recipients", "path", "\"people.csv\""),
        ("recipients", "name", "\"name\""),
        ("recipients", "variables", "{ VAR1 = \"order_no\" }"),
    ];
    let kinds: Vec<Vec<(&str, &str, &str)>> = vec![
        vec![
            ("", "kind", "\"sms\""),
            ("message", "service", "3001"),
            ("message", "text", "\"#<name>님 쿠폰 #{VAR1}\""),
            ("message", "callback_no", "\"0212345678\""),
        ],
        vec![
            ("", "kind", "\"text\""),
            ("message", "service", "3001"),
            ("message", "text", "\"(광고) #{name}님\""),
            ("message", "callback_no", "\"0212345678\""),
            ("message", "subject", "\"세일\""),
            ("message", "advertising", "true"),
        ],
        vec![
            ("", "kind", "\"alimtalk\""),
            ("message", "service", "1001"),
            ("message", "template", "\"ORDER_SHIPPED\""),
            ("message", "text", "\"#<이름>님, 송장번호: #<VAR1>\""),
            ("message", "alter", "true"),
            ("message", "callback_no", "\"0212345678\""),
        ],
        vec![
            ("", "kind", "\"gateway-alimtalk\""),
            ("message", "sender_key", "\"0f1e2d3c\""),
            ("message", "template", "\"ORDER_SHIPPED\""),
            ("message", "text", "\"#{이름}님, 송장번호: #{VAR1}\""),
            ("message", "alter", "true"),
            ("message", "alter_message", "\"#<name>님 #<VAR1>\""),
        ],
        vec![
            ("", "kind", "\"brand\""),
            ("message", "service", "2001"),
            ("message", "chat_bubble_type", "\"TEXT\""),
            ("message", "text", "\"(광고) 세일\""),
        ],
        vec![
            ("", "kind", "\"brand\""),
            ("message", "service", "2001"),
            ("message", "chat_bubble_type", "\"PREMIUM_VIDEO\""),
            ("message", "send_type", "\"BASIC\""),
            ("message", "template", "\"WINTER_SALE\""),
            ("message", "targeting", "\"N\""),
            ("message", "channel_id", "\"ch-demo-large\""),
        ],
    ];
    prop::sample::select(kinds)
        .prop_map(|entries| {
            entries
                .into_iter()
                .chain(RECIPIENTS)
                .map(|(section, key, value)| (section, key, value.to_string()))
                .collect()
        })
        .boxed()
}

/// One change to a campaign: a key set to a value (mostly of its type) or removed, or an
/// unknown key added.
fn change() -> BoxedStrategy<(&'static str, &'static str, Option<String>)> {
    let mut keys: Vec<(&str, &str)> = vec![("", "kind"), ("recipients", "path")];
    keys.extend(TOP.iter().map(|key| ("", *key)));
    for (section, section_keys) in SECTIONS {
        keys.extend(section_keys.iter().map(|key| (*section, *key)));
    }
    let known = prop::sample::select(keys).prop_flat_map(|(section, key)| {
        let value = prop_oneof![12 => typed(key).prop_map(Some), 1 => anything().prop_map(Some), 2 => Just(None)];
        (Just(section), Just(key), value)
    });
    let unknown = prop::sample::select(vec!["", "message", "recipients", "send"])
        .prop_map(|section| (section, "bogus", Some("1".to_string())));
    prop_oneof![30 => known, 1 => unknown].boxed()
}

/// A campaign file of any kind with a few changes, and the keys it holds.
fn campaign_text() -> impl Strategy<Value = (String, Vec<&'static str>)> {
    let changes = proptest::collection::vec(change(), 0..5);
    (valid_campaign(), changes).prop_map(|(mut entries, changes)| {
        for (section, key, value) in changes {
            let at = entries.iter().position(|(s, k, _)| (*s, *k) == (section, key));
            match (at, value) {
                (Some(at), Some(value)) => entries[at].2 = value,
                (Some(at), None) => {
                    entries.remove(at);
                }
                (None, Some(value)) => entries.push((section, key, value)),
                (None, None) => {}
            }
        }
        let mut sections: Vec<&str> = vec![""];
        for (section, _, _) in &entries {
            if !sections.contains(section) {
                sections.push(section);
            }
        }
        let mut text = String::new();
        let mut written = Vec::new();
        for section in sections {
            if !section.is_empty() {
                text.push_str(&format!("[{section}]\n"));
                written.push(section);
            }
            for (_, key, value) in entries.iter().filter(|(s, _, _)| *s == section) {
                text.push_str(&format!("{key} = {value}\n"));
                written.push(*key);
            }
        }
        (text, written)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn errors_name_a_setting((text, written) in campaign_text()) {
        match parse(&text) {
            Ok(_) => {}
            Err(CampaignError::Setting { key, message, .. }) => {
                let root = key.split(['.', '[']).next().unwrap_or_default();
                prop_assert!(ROOTS.contains(&root), "{key}: {message}\n{text}");
                prop_assert!(!message.is_empty());
                let shown = parse(&text).unwrap_err().to_string();
                prop_assert!(shown.contains(&format!("`{key}`")), "{shown}");
            }
            Err(CampaignError::Parse { message, .. }) => {
                // A type error shows the line of its key; a missing or unknown key is named.
                let named = written.iter().chain(&["kind", "recipients", "path"]).any(|key| {
                    message.contains(&format!("`{key}`"))
                        || message.contains(&format!("{key} ="))
                        || message.contains(&format!("[{key}]"))
                });
                prop_assert!(named, "{message}\n{text}");
            }
            Err(other) => prop_assert!(false, "{other}"),
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in prop_oneof![any::<String>(), "[a-z_=\\[\\]{}\"#<>.\n 0-9]{0,80}"]) {
        let _ = parse(&text);
    }
}
