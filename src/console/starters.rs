//! The settings a new console campaign of each kind starts from: the samples' message, with production defaults — quiet hours enforced, no endpoint, key, price, output or file of the demo's, the text inline.

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

/// A kind by its name in the page's language (`알림톡`, `브랜드 메시지`); a kind the console does not
/// know by its own name.
pub fn kind_name<'a>(kind: &'a str, w: &'static crate::console::words::Words) -> &'a str {
    match kind {
        "alimtalk" => w.composer_kind_alimtalk,
        "brand" => w.composer_kind_brand,
        "text" => w.composer_kind_text,
        "sms" => w.composer_kind_sms,
        "lms" => w.composer_kind_lms,
        "gateway-alimtalk" => w.composer_kind_gateway_alimtalk,
        other => other,
    }
}

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
        if message.remove("text_file").is_some() {
            message.insert(
                "text".into(),
                toml::Value::String(WINTER_SALE_TEXT.trim_end().to_string()),
            );
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
        for key in ["path", "suppression", "opt_outs"] {
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
        }
        let lms = starter("lms").unwrap();
        assert!(lms["message"]["text"].as_str().unwrap().starts_with("(광고)"));
    }
}
