//! Wire types for every request and response of the messaging service, shared by the client and the sandbox.

pub mod channel;
pub mod faults;
pub mod gateway;
pub mod ledger;
pub mod standard;
mod variables;

pub use variables::Variables;

use serde::{Deserialize, Serialize};
use std::fmt;

/// Header carrying the API key on every request.
pub const HEADER_API_KEY: &str = "apikey";
/// Header carrying the group code (HTTP header names are case-insensitive, so this is also `groupId`).
pub const HEADER_GROUP_ID: &str = "groupid";

/// A service code that the spec shows both as a number (`code: 200`, `508`) and as a string
/// (`ERR_100`, SMS `code`); kept in the form it came in so it serialises back unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Code {
    Number(i64),
    Text(String),
}

impl Code {
    pub fn text(text: impl Into<String>) -> Self {
        Code::Text(text.into())
    }
    /// The code as text, whichever form it came in.
    pub fn to_text(&self) -> String {
        self.to_string()
    }
    pub fn is(&self, expected: &str) -> bool {
        match self {
            Code::Number(number) => expected.parse::<i64>() == Ok(*number),
            Code::Text(text) => text == expected,
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Code::Number(number) => write!(f, "{number}"),
            Code::Text(text) => f.write_str(text),
        }
    }
}

/// The body the service sends with an error: standard endpoints use `status`/`code`/`message`,
/// gateway lookups use `error`. Every field is optional so any of the shapes parses.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ErrorBody {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<Code>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A recipient entry of the standard notification and brand requests: `key`, `hp`, `name`, `VARn`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct NumberEntry {
    pub key: u64,
    pub hp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(flatten)]
    pub vars: Variables,
}

/// A recipient entry of the gateway notification request: `hp` (required), `name`, `VARn`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct GatewayNumberEntry {
    pub hp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(flatten)]
    pub vars: Variables,
}

/// Variable values of one SMS/LMS recipient, matched to `numbers` by position.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct MappingEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(flatten)]
    pub vars: Variables,
}

/// Where the engine and the sandbox look up a template variable of a recipient.
pub trait VariableSource {
    fn name(&self) -> Option<&str>;
    fn var(&self, key: &str) -> Option<&str>;
}

macro_rules! variable_source {
    ($($entry:ty),*) => {$(
        impl VariableSource for $entry {
            fn name(&self) -> Option<&str> {
                self.name.as_deref()
            }
            fn var(&self, key: &str) -> Option<&str> {
                self.vars.get(key)
            }
        }
    )*};
}
variable_source!(NumberEntry, GatewayNumberEntry, MappingEntry);

/// Epoch milliseconds now, the unit of every `date` field.
pub fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_keeps_numbers_and_text() {
        let number: Code = serde_json::from_str("508").unwrap();
        assert!(number.is("508"));
        assert_eq!(serde_json::to_string(&number).unwrap(), "508");
        let text: Code = serde_json::from_str("\"ERR_100\"").unwrap();
        assert_eq!(serde_json::to_string(&text).unwrap(), "\"ERR_100\"");
    }

    #[test]
    fn number_entry_flattens_variables() {
        let entry: NumberEntry =
            serde_json::from_str(r#"{"key":1,"hp":"01012345678","name":"김","VAR1":"A"}"#).unwrap();
        assert_eq!(entry.var("VAR1"), Some("A"));
        assert_eq!(entry.name(), Some("김"));
        let back = serde_json::to_value(&entry).unwrap();
        assert_eq!(back["VAR1"], "A");
    }
}
