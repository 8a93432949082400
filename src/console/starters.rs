//! The settings a new console campaign of each kind starts from: the samples' message, with production defaults — quiet hours enforced, no endpoint, key, price, output or file of the demo's, no demo account identifier (service, sender number, template, profile key), the text inline.

use super::settings;

const WINTER_SALE_TEXT: &str = include_str!("../../samples/winter-sale.txt");

/// Each kind the new-campaign page offers, with the sample its message comes from.
pub const KINDS: [(&str, &str); 6] = [
    ("alimtalk", include_str!("../../samples/alimtalk.toml")),
    ("brand", include_str!("../../samples/brand.toml")),
    ("text", include_str!("../../samples/text.toml")),
    ("sms", include_str!("../../samples/sms.toml")),
    ("lms", include_str!("../../samples/lms.toml")),
    ("gateway-alimtalk", include_str!("../../samples/gateway-alimtalk.toml")),
];

/// What names the demo account in the samples' messages; a new campaign starts without them.
const ACCOUNT_KEYS: [&str; 5] = ["service", "callback_no", "template", "sender_key", "channel_id"];

/// The samples' shop, as their texts name it.
const DEMO_SHOP: [&str; 2] = ["[데모몰] ", "데모몰 "];

/// The starting settings of a kind, or `None` for a kind the console does not know.
pub fn starter(kind: &str) -> Option<toml::Table> {
    let (_, sample) = KINDS.iter().find(|(name, _)| *name == kind)?;
    let mut table: toml::Table = toml::from_str(sample).expect("the samples are valid TOML");
    production_defaults(&mut table);
    Some(table)
}

/// Takes out what a sample sets for the demo: the demo's connection settings, a text kept in a
/// file beside the sample, relaxed quiet hours and tuned sending, and its files.
fn production_defaults(table: &mut toml::Table) {
    settings::drop_workspace_keys(table);
    if let Some(message) = table.get_mut("message").and_then(toml::Value::as_table_mut) {
        // The sandbox's demo account: the team's own service, sender number, template and
        // profile are typed on the form (empty fields, never someone else's that would send).
        for key in ACCOUNT_KEYS {
            message.remove(key);
        }
        // Links to example.com are no button a team sends.
        message.remove("buttons");
        if message.remove("text_file").is_some() {
            message.insert(
                "text".into(),
                toml::Value::String(WINTER_SALE_TEXT.trim_end().to_string()),
            );
        }
        if let Some(text) = message.get("text").and_then(toml::Value::as_str) {
            let text = DEMO_SHOP
                .iter()
                .fold(text.to_string(), |text, shop| text.replace(shop, ""));
            message.insert("text".into(), toml::Value::String(text));
        }
    }
    if let Some(send) = table.get_mut("send").and_then(toml::Value::as_table_mut) {
        // The engine's defaults: quiet hours enforced, 100 a request.
        for key in ["quiet_hours", "chunk_size", "concurrency"] {
            send.remove(key);
        }
        if send.is_empty() {
            table.remove("send");
        }
    }
    if let Some(recipients) = table.get_mut("recipients").and_then(toml::Value::as_table_mut) {
        // The samples' columns: the person ties each placeholder to a column of their own file.
        for key in ["path", "suppression", "opt_outs", "variables"] {
            recipients.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_starts_from_production_defaults() {
        for (kind, _) in KINDS {
            let table = starter(kind).unwrap();
            settings::refuse_workspace_keys(&table).unwrap();
            let quiet = table.get("send").and_then(|send| send.get("quiet_hours"));
            assert!(
                quiet.is_none(),
                "{kind}: quiet hours left to the engine's default (enforce)"
            );
            let message = table["message"].as_table().unwrap();
            assert!(!message.contains_key("text_file"), "{kind}: no hidden text file");
            for key in ACCOUNT_KEYS.into_iter().chain(["buttons"]) {
                assert!(!message.contains_key(key), "{kind}: no demo {key}");
            }
            let text = message.get("text").and_then(toml::Value::as_str).unwrap_or_default();
            assert!(!text.contains("데모"), "{kind}: no demo shop in {text}");
        }
        let lms = starter("lms").unwrap();
        assert!(lms["message"]["text"].as_str().unwrap().starts_with("(광고)"));
    }
}
