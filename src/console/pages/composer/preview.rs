//! The composer's preview: the first recipient's message as a phone shows it — the text with its placeholders filled from the first row, its size as the service counts it (characters, EUC-KR bytes) and the billing class it takes.

use super::columns::{Mapping, Sample};
use crate::campaign::Lane;
use crate::console::words::{fill, Words};
use crate::template::{Placeholder, Template};
use crate::text::TextLane;
use std::collections::HashMap;

/// The preview as the page shows it.
#[derive(Debug, Clone, Default)]
pub struct Preview {
    pub text: String,
    pub size: String,
    pub class: String,
    /// A placeholder is shown as written: no column, or no file to fill it from.
    pub unfilled: bool,
}

/// Values by placeholder, the placeholder as written where there is none.
struct Filled {
    name: Option<String>,
    vars: HashMap<String, String>,
}

impl crate::api::VariableSource for Filled {
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    fn var(&self, key: &str) -> Option<&str> {
        self.vars.get(key).map(String::as_str)
    }
}

/// The first recipient's message of a `kind` campaign with `text`.
pub fn preview(kind: &str, text: &str, mapping: &Mapping, sample: &Sample, w: &Words) -> Preview {
    let template = Template::compile(text);
    let mut filled = Filled {
        name: None,
        vars: HashMap::new(),
    };
    let mut unfilled = false;
    for slot in template.slots() {
        let column = match slot.placeholder() {
            Placeholder::Name => mapping.name.as_str(),
            Placeholder::Var(key) => mapping.variables.get(key).map_or("", String::as_str),
        };
        let value = match sample
            .value(column)
            .filter(|value| !column.is_empty() && !value.is_empty())
        {
            Some(value) => value.to_string(),
            None => {
                unfilled = true;
                slot.written()
            }
        };
        match slot.placeholder() {
            Placeholder::Name => filled.name = Some(value),
            Placeholder::Var(key) => {
                filled.vars.insert(key.clone(), value);
            }
        }
    }
    let text = template.render(&filled).unwrap_or_else(|_| text.to_string());
    let chars = text.chars().count();
    let bytes = crate::text::euc_kr_len(&text).ok();
    let chars_text = chars.to_string();
    let size = match bytes {
        Some(bytes) => fill(
            w.composer_preview_size,
            &[("chars", &chars_text), ("bytes", &bytes.to_string())],
        ),
        None => fill(w.composer_preview_unencodable, &[("chars", &chars_text)]),
    };
    Preview {
        class: class(kind, bytes.unwrap_or(usize::MAX), w).to_string(),
        text,
        size,
        unfilled,
    }
}

/// The lane a message of `kind` goes by at this size, by its name in the page's language.
pub fn class(kind: &str, bytes: usize, w: &Words) -> &'static str {
    let lane = match kind {
        "sms" => Lane::Sms,
        "lms" => Lane::Lms,
        // The engine's own rule: SMS while it fits, LMS after.
        "text" => match TextLane::for_bytes(bytes) {
            Some(TextLane::Sms) => Lane::Sms,
            _ => Lane::Lms,
        },
        "brand" => Lane::Brand,
        "gateway-alimtalk" => Lane::Gateway,
        _ => Lane::Alimtalk,
    };
    crate::report::lane_label(lane, w.report_lang())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::words::{EN, KO};
    use std::collections::BTreeMap;

    #[test]
    fn the_first_recipients_values_fill_the_text_and_its_size_is_counted() {
        let sample = Sample {
            sheets: Vec::new(),
            header: vec!["phone".into(), "고객명".into(), "쿠폰".into()],
            first: vec![
                ("phone".into(), "010-****-0001".into()),
                ("고객명".into(), "김하나".into()),
                ("쿠폰".into(), "WINTER10".into()),
            ],
        };
        let mapping = Mapping {
            name: "고객명".into(),
            variables: BTreeMap::from([("VAR1".to_string(), "쿠폰".to_string())]),
            ..Mapping::default()
        };
        let shown = preview("text", "#{이름}님\n쿠폰 #{VAR1}", &mapping, &sample, &KO);
        assert_eq!(shown.text, "김하나님\n쿠폰 WINTER10");
        assert!(!shown.unfilled);
        assert_eq!(shown.size, "16자 · 22바이트 (EUC-KR)");
        assert_eq!(shown.class, "SMS");
        let shown = preview("sms", "#{VAR2} 안내", &mapping, &sample, &EN);
        assert_eq!(shown.text, "#{VAR2} 안내");
        assert!(shown.unfilled);
        assert_eq!(class("text", 91, &EN), "LMS");
        assert_eq!(class("alimtalk", 1, &KO), "알림톡");
    }
}
