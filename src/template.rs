//! Message templates with `#{VAR1}`, `#{이름}` and `#{name}` placeholders (also written `#<VAR1>`, `#<이름>`, `#<name>`): compiled once, filled per recipient.

use crate::api::VariableSource;

/// What a placeholder is filled from, whichever way it was written.
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

/// The two ways to write a placeholder; the service itself knows only `#{…}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// `#{VAR1}`
    Braces,
    /// `#<VAR1>`
    Angles,
}

impl Spelling {
    fn of_opener(byte: u8) -> Option<Spelling> {
        match byte {
            b'{' => Some(Spelling::Braces),
            b'<' => Some(Spelling::Angles),
            _ => None,
        }
    }

    fn open(self) -> char {
        match self {
            Spelling::Braces => '{',
            Spelling::Angles => '<',
        }
    }

    fn close(self) -> char {
        match self {
            Spelling::Braces => '}',
            Spelling::Angles => '>',
        }
    }
}

/// Where a placeholder's value sits among a recipient's name and variables, worked out once for
/// a list of variable keys (see [`Template::bind`]) instead of looked up by key for every row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueAt {
    Name,
    /// The variable at this position of the keys.
    Var(usize),
    /// A key that is not among them: always missing.
    Nowhere,
}

/// A placeholder where it appears in the text: what fills it and how it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    placeholder: Placeholder,
    /// The key between the brackets, as written (`이름`, `name`, `VAR1`).
    key: String,
    spelling: Spelling,
}

impl Slot {
    pub fn placeholder(&self) -> &Placeholder {
        &self.placeholder
    }

    /// The placeholder as the campaign wrote it: `#<VAR1>`, `#{이름}`.
    pub fn written(&self) -> String {
        format!("#{}{}{}", self.spelling.open(), self.key, self.spelling.close())
    }

    /// The value that fills this placeholder; absent or empty is missing.
    fn value<'s>(&self, source: &'s dyn VariableSource) -> Result<&'s str, MissingVariable> {
        self.filled(match &self.placeholder {
            Placeholder::Name => source.name(),
            Placeholder::Var(key) => source.var(key),
        })
    }

    /// The value found for this placeholder, unless it is absent or empty (then it is missing).
    fn filled<'s>(&self, value: Option<&'s str>) -> Result<&'s str, MissingVariable> {
        match value {
            Some(value) if !value.is_empty() => Ok(value),
            _ => Err(MissingVariable {
                key: self.placeholder.key().to_string(),
                written: self.written(),
            }),
        }
    }

    /// The placeholder in the service's spelling: `#{VAR1}`.
    fn for_service(&self) -> String {
        format!("#{{{}}}", self.key)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Slot(Slot),
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
#[error("variable {written} has no value")]
pub struct MissingVariable {
    /// The key the value is looked up by: `name` for both name spellings, else the variable's key.
    pub key: String,
    /// The placeholder as the campaign wrote it (`#<VAR1>`, `#{이름}`), for messages to the user.
    pub written: String,
}

/// What is wrong with a placeholder that [`Template::parse`] refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaceholderProblem {
    /// `#{VAR1` with no `}` before the next bracket or the end of the line.
    Unclosed,
    /// `#{}` or `#<>`.
    Empty,
}

/// A malformed placeholder, and where it starts (1-based line and column, counted in characters).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct TemplateError {
    pub problem: PlaceholderProblem,
    /// The start of the placeholder as written (`#{VAR1`, `#<>`), shortened when long.
    pub written: String,
    pub line: usize,
    pub column: usize,
    /// Characters before the placeholder, from 0.
    pub offset: usize,
    closer: char,
}

impl TemplateError {
    fn describe(&self) -> String {
        let at = format!("at line {}, column {}", self.line, self.column);
        match self.problem {
            PlaceholderProblem::Unclosed => format!(
                "placeholder `{}` {at} is not closed with `{}` (a placeholder is #{{KEY}} or #<KEY> on one line)",
                self.written, self.closer
            ),
            PlaceholderProblem::Empty => format!("placeholder `{}` {at} names no variable", self.written),
        }
    }
}

/// The first malformed placeholder met while scanning, as byte positions into the source.
struct Malformed {
    at: usize,
    key_end: usize,
    spelling: Spelling,
    problem: PlaceholderProblem,
}

impl Malformed {
    const SHOWN_CHARS: usize = 24;

    fn error(&self, source: &str) -> TemplateError {
        let before = &source[..self.at];
        let line_start = before.rfind('\n').map_or(0, |index| index + 1);
        let written = match self.problem {
            PlaceholderProblem::Empty => format!("#{}{}", self.spelling.open(), self.spelling.close()),
            PlaceholderProblem::Unclosed => {
                let text = &source[self.at..self.key_end];
                match text.char_indices().nth(Self::SHOWN_CHARS) {
                    Some((cut, _)) => format!("{}…", &text[..cut]),
                    None => text.to_string(),
                }
            }
        };
        TemplateError {
            problem: self.problem,
            written,
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
            offset: before.chars().count(),
            closer: self.spelling.close(),
        }
    }
}

/// Characters that end a key: brackets of either spelling and line breaks.
fn ends_key(c: char) -> bool {
    matches!(c, '{' | '}' | '<' | '>' | '\n' | '\r')
}

impl Template {
    /// Compiles any text; a malformed placeholder (`#{VAR1`, `#{}`) stays literal text. The
    /// sandbox compiles what it receives this way; campaign text goes through [`Template::parse`].
    pub fn compile(source: &str) -> Template {
        Template::scan(source).0
    }

    /// Compiles campaign text, refusing an unclosed or empty placeholder: sent literally, it
    /// would reach every recipient as `#{VAR1`.
    pub fn parse(source: &str) -> Result<Template, TemplateError> {
        match Template::scan(source) {
            (template, None) => Ok(template),
            (_, Some(malformed)) => Err(malformed.error(source)),
        }
    }

    fn scan(source: &str) -> (Template, Option<Malformed>) {
        let bytes = source.as_bytes();
        let mut segments = Vec::new();
        let mut first_malformed = None;
        let mut literal_start = 0;
        let mut cursor = 0;
        while let Some(found) = source[cursor..].find('#') {
            let at = cursor + found;
            let Some(spelling) = bytes.get(at + 1).copied().and_then(Spelling::of_opener) else {
                cursor = at + 1;
                continue;
            };
            let key_start = at + 2;
            let key_end = source[key_start..]
                .find(ends_key)
                .map_or(source.len(), |length| key_start + length);
            let closed = source[key_end..].starts_with(spelling.close());
            if closed && key_end > key_start {
                if literal_start < at {
                    segments.push(Segment::Literal(source[literal_start..at].to_string()));
                }
                let key = &source[key_start..key_end];
                let placeholder = match key {
                    "이름" | "name" => Placeholder::Name,
                    other => Placeholder::Var(other.to_string()),
                };
                segments.push(Segment::Slot(Slot {
                    placeholder,
                    key: key.to_string(),
                    spelling,
                }));
                cursor = key_end + 1;
                literal_start = cursor;
            } else {
                first_malformed.get_or_insert(Malformed {
                    at,
                    key_end,
                    spelling,
                    problem: if closed {
                        PlaceholderProblem::Empty
                    } else {
                        PlaceholderProblem::Unclosed
                    },
                });
                // The opener stays literal text; scanning goes on after it.
                cursor = key_start;
            }
        }
        if literal_start < source.len() {
            segments.push(Segment::Literal(source[literal_start..].to_string()));
        }
        let literal_len = segments
            .iter()
            .map(|segment| match segment {
                Segment::Literal(text) => text.len(),
                Segment::Slot(_) => 0,
            })
            .sum();
        let template = Template {
            source: source.to_string(),
            segments,
            literal_len,
        };
        (template, first_malformed)
    }

    /// The text as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The text in the service's own spelling, every `#<KEY>` written `#{KEY}`: the service fills
    /// only that spelling, and a notification's text must equal the registered one.
    pub fn service_text(&self) -> String {
        if self.slots().all(|slot| slot.spelling == Spelling::Braces) {
            return self.source.clone();
        }
        let mut text = String::with_capacity(self.source.len());
        for segment in &self.segments {
            match segment {
                Segment::Literal(literal) => text.push_str(literal),
                Segment::Slot(slot) => text.push_str(&slot.for_service()),
            }
        }
        text
    }

    /// Every placeholder where it appears, with its spelling.
    pub fn slots(&self) -> impl Iterator<Item = &Slot> {
        self.segments.iter().filter_map(|segment| match segment {
            Segment::Slot(slot) => Some(slot),
            Segment::Literal(_) => None,
        })
    }

    /// The placeholders in order of appearance, each once whatever its spelling.
    pub fn placeholders(&self) -> Vec<&Placeholder> {
        let mut seen: Vec<&Placeholder> = Vec::new();
        for slot in self.slots() {
            if !seen.contains(&&slot.placeholder) {
                seen.push(&slot.placeholder);
            }
        }
        seen
    }

    pub fn has_placeholders(&self) -> bool {
        self.slots().next().is_some()
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
                Segment::Slot(slot) => out.push_str(slot.value(source)?),
            }
        }
        Ok(())
    }

    /// The text between the placeholders, run together. A measure that adds up over joined
    /// text (characters, EUC-KR bytes) of a filled text is this text's measure plus the measure
    /// of each value `for_each_bound_value` visits: the text need not be built to be measured.
    pub fn literal_text(&self) -> String {
        let mut text = String::with_capacity(self.literal_len);
        for segment in &self.segments {
            if let Segment::Literal(literal) = segment {
                text.push_str(literal);
            }
        }
        text
    }

    /// For each placeholder in order, where its value sits among a name and variables with these
    /// keys (a variable source looks keys up the same way).
    pub fn bind(&self, keys: &[String]) -> Vec<ValueAt> {
        self.slots()
            .map(|slot| match &slot.placeholder {
                Placeholder::Name => ValueAt::Name,
                Placeholder::Var(key) => keys
                    .iter()
                    .position(|k| k == key)
                    .map_or(ValueAt::Nowhere, ValueAt::Var),
            })
            .collect()
    }

    /// Visits the value of every placeholder in order, as [`Template::render`] would fill it,
    /// without building the text (an absent or empty value is the same error); each value is
    /// found where `bound` (from [`Template::bind`]) says, by `value_at`.
    pub fn for_each_bound_value<'s>(
        &self,
        bound: &[ValueAt],
        value_at: impl Fn(ValueAt) -> Option<&'s str>,
        mut each: impl FnMut(&'s str),
    ) -> Result<(), MissingVariable> {
        for (slot, at) in self.slots().zip(bound) {
            each(slot.filled(value_at(*at))?);
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
mod tests;
