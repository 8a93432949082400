//! Message templates with `#{VAR1}`, `#{이름}` and `#{name}` placeholders: compiled once, filled per recipient.

use crate::api::VariableSource;

/// A placeholder found in a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placeholder {
    /// `#{이름}` or `#{name}`: filled from the recipient's `name`.
    Name,
    /// `#{VAR1}` and any other key: filled from the recipient's variable of that key.
    Var(String),
}

impl Placeholder {
    pub fn key(&self) -> &str {
        match self {
            Placeholder::Name => "name",
            Placeholder::Var(key) => key,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Slot(Placeholder),
}

/// A template compiled into literal text and placeholders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    source: String,
    segments: Vec<Segment>,
    literal_len: usize,
}

/// A recipient lacks a value the template needs (absent or empty).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("variable #{{{key}}} has no value")]
pub struct MissingVariable {
    pub key: String,
}

impl Template {
    pub fn compile(source: &str) -> Template {
        let mut segments = Vec::new();
        let mut literal = String::new();
        let mut rest = source;
        while let Some(start) = rest.find("#{") {
            let after = &rest[start + 2..];
            match after.find('}') {
                Some(end) if end > 0 && !after[..end].contains("#{") => {
                    literal.push_str(&rest[..start]);
                    if !literal.is_empty() {
                        segments.push(Segment::Literal(std::mem::take(&mut literal)));
                    }
                    let key = &after[..end];
                    let placeholder = match key {
                        "이름" | "name" => Placeholder::Name,
                        other => Placeholder::Var(other.to_string()),
                    };
                    segments.push(Segment::Slot(placeholder));
                    rest = &after[end + 1..];
                }
                _ => {
                    literal.push_str(&rest[..start + 2]);
                    rest = after;
                }
            }
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            segments.push(Segment::Literal(literal));
        }
        let literal_len = segments
            .iter()
            .map(|segment| match segment {
                Segment::Literal(text) => text.len(),
                Segment::Slot(_) => 0,
            })
            .sum();
        Template {
            source: source.to_string(),
            segments,
            literal_len,
        }
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// The placeholders in order of appearance, each once.
    pub fn placeholders(&self) -> Vec<&Placeholder> {
        let mut seen: Vec<&Placeholder> = Vec::new();
        for segment in &self.segments {
            if let Segment::Slot(placeholder) = segment {
                if !seen.contains(&placeholder) {
                    seen.push(placeholder);
                }
            }
        }
        seen
    }

    pub fn has_placeholders(&self) -> bool {
        self.segments.iter().any(|segment| matches!(segment, Segment::Slot(_)))
    }

    /// Fills every placeholder from `source`; an absent or empty value is an error.
    pub fn render(&self, source: &dyn VariableSource) -> Result<String, MissingVariable> {
        let mut out = String::with_capacity(self.literal_len + 32);
        self.render_into(source, &mut out)?;
        Ok(out)
    }

    /// As [`Template::render`], appending to `out` (cleared first) to reuse its allocation.
    pub fn render_into(&self, source: &dyn VariableSource, out: &mut String) -> Result<(), MissingVariable> {
        out.clear();
        for segment in &self.segments {
            match segment {
                Segment::Literal(text) => out.push_str(text),
                Segment::Slot(placeholder) => {
                    let value = match placeholder {
                        Placeholder::Name => source.name(),
                        Placeholder::Var(key) => source.var(key),
                    };
                    match value {
                        Some(value) if !value.is_empty() => out.push_str(value),
                        _ => {
                            return Err(MissingVariable {
                                key: placeholder.key().to_string(),
                            })
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether `message` is this template with every placeholder replaced by some non-empty text
    /// (the gateway lets the caller substitute variables itself).
    pub fn matches_filled(&self, message: &str) -> bool {
        fn walk(segments: &[Segment], message: &str) -> bool {
            match segments.split_first() {
                None => message.is_empty(),
                Some((Segment::Literal(text), rest)) => {
                    message.strip_prefix(text.as_str()).is_some_and(|tail| walk(rest, tail))
                }
                Some((Segment::Slot(_), rest)) => message
                    .char_indices()
                    .skip(1)
                    .map(|(index, _)| index)
                    .chain(std::iter::once(message.len()))
                    .filter(|&index| index > 0)
                    .any(|index| walk(rest, &message[index..])),
            }
        }
        walk(&self.segments, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::MappingEntry;

    fn recipient(name: Option<&str>, vars: &[(&str, &str)]) -> MappingEntry {
        MappingEntry {
            name: name.map(str::to_string),
            vars: vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        }
    }

    #[test]
    fn fills_name_in_both_spellings_and_numbered_variables() {
        let template = Template::compile("#{이름}님 #{name} 주문 #{VAR1}, #{VAR2}");
        let filled = template
            .render(&recipient(Some("김민수"), &[("VAR1", "A-1"), ("VAR2", "3")]))
            .unwrap();
        assert_eq!(filled, "김민수님 김민수 주문 A-1, 3");
    }

    #[test]
    fn missing_or_empty_variable_is_named() {
        let template = Template::compile("주문 #{VAR1} #{VAR2}");
        let error = template
            .render(&recipient(None, &[("VAR1", "x"), ("VAR2", "")]))
            .unwrap_err();
        assert_eq!(error.key, "VAR2");
        let error = Template::compile("#{이름}").render(&recipient(None, &[])).unwrap_err();
        assert_eq!(error.key, "name");
    }

    #[test]
    fn unclosed_or_empty_braces_stay_literal() {
        let template = Template::compile("a #{ b #{} c #{VAR1");
        assert!(!template.has_placeholders());
        assert_eq!(template.render(&recipient(None, &[])).unwrap(), "a #{ b #{} c #{VAR1");
    }

    #[test]
    fn recognises_a_caller_filled_message() {
        let template = Template::compile("#{이름}님, 송장 #{VAR1} 발송");
        assert!(template.matches_filled("김님, 송장 123 발송"));
        assert!(template.matches_filled("#{이름}님, 송장 #{VAR1} 발송"));
        assert!(!template.matches_filled("김님, 송장  발송x"));
        assert!(!template.matches_filled("님, 송장 123 발송"));
    }
}
