//! The campaign file as written: serde types with unknown keys refused, before any validation.

use super::{Encoding, InputFormat, Kind, QuietHoursMode};
use crate::api::standard::{ChatBubbleType, SendType, Targeting};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CampaignFile {
    pub name: Option<String>,
    pub kind: Kind,
    /// `"sandbox"` (default) or a table `{ base_url, gateway_url }`.
    pub endpoint: Option<EndpointFile>,
    /// Accounts file for the in-process sandbox (default: the built-in demo accounts).
    pub sandbox_accounts: Option<PathBuf>,
    #[serde(default)]
    pub credentials: CredentialsFile,
    #[serde(default)]
    pub message: MessageFile,
    pub recipients: RecipientsFile,
    #[serde(default)]
    pub send: SendFile,
    #[serde(default)]
    pub output: OutputFile,
    /// Price per billing class, for the estimated charge.
    pub prices: Option<BTreeMap<String, i64>>,
}

/// `endpoint`: a name (only `"sandbox"` is known) or a table of URLs, told apart by the TOML
/// type, as an untagged enum would. Deserialised by hand because serde's `untagged` swallows the
/// inner error: an unknown key or a wrong type inside the table would no longer be named.
#[derive(Debug, PartialEq)]
pub(super) enum EndpointFile {
    Named(String),
    Urls(EndpointUrlsFile),
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(super) struct EndpointUrlsFile {
    /// Optional here so that a missing one is named by validation (`endpoint.gateway_url`).
    pub base_url: Option<String>,
    pub gateway_url: Option<String>,
    /// Allows plain `http://` to a host that is not loopback.
    #[serde(default)]
    pub insecure_http: bool,
}

impl<'de> Deserialize<'de> for EndpointFile {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EndpointVisitor;

        impl<'de> Visitor<'de> for EndpointVisitor {
            type Value = EndpointFile;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("\"sandbox\" or a table with base_url and gateway_url")
            }

            fn visit_str<E: de::Error>(self, name: &str) -> Result<EndpointFile, E> {
                Ok(EndpointFile::Named(name.to_string()))
            }

            fn visit_map<A: MapAccess<'de>>(self, table: A) -> Result<EndpointFile, A::Error> {
                EndpointUrlsFile::deserialize(de::value::MapAccessDeserializer::new(table)).map(EndpointFile::Urls)
            }
        }

        deserializer.deserialize_any(EndpointVisitor)
    }
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct CredentialsFile {
    pub api_key_env: Option<String>,
    pub api_key_file: Option<PathBuf>,
    pub group_id_env: Option<String>,
    pub group_id: Option<String>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct MessageFile {
    pub service: Option<u64>,
    pub sender_key: Option<String>,
    pub template: Option<String>,
    pub text: Option<String>,
    pub text_file: Option<PathBuf>,
    pub title: Option<String>,
    /// Brand or gateway buttons: their shape depends on the kind, so they are read after it.
    pub buttons: Option<Vec<toml::Value>>,
    pub alter: Option<bool>,
    pub alter_message: Option<String>,
    pub callback_no: Option<String>,
    pub send_type: Option<SendType>,
    pub chat_bubble_type: Option<ChatBubbleType>,
    pub targeting: Option<Targeting>,
    pub channel_id: Option<String>,
    pub image: Option<String>,
    pub header: Option<String>,
    pub additional_content: Option<String>,
    pub subject: Option<String>,
    #[serde(default)]
    pub advertising: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RecipientsFile {
    pub path: PathBuf,
    pub format: Option<InputFormat>,
    #[serde(default)]
    pub encoding: Encoding,
    pub sheet: Option<String>,
    pub phone: Option<String>,
    pub name: Option<String>,
    #[serde(default)]
    pub variables: BTreeMap<String, String>,
    pub suppression: Option<PathBuf>,
    pub suppression_column: Option<String>,
    /// Numbers that refused advertising (column `phone`, or the only one): applied to an
    /// advertising campaign only, on top of `suppression`.
    pub opt_outs: Option<PathBuf>,
    /// The numbers a workspace's frequency cap holds back (`msgbatch serve` writes it: see
    /// `plan::capped`): applied to an advertising campaign only.
    pub frequency_capped: Option<PathBuf>,
    pub drop_duplicates: Option<bool>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct SendFile {
    pub chunk_size: Option<usize>,
    pub concurrency: Option<usize>,
    pub messages_per_second: Option<f64>,
    pub quiet_hours: Option<QuietHoursMode>,
    pub timeout_secs: Option<u64>,
    pub max_attempts: Option<u32>,
    /// Spend cap in won: the run never lets charged + reserved pass it.
    pub budget: Option<i64>,
    /// `{ percent, window }` or `false`, read by [`super::FailingRule::parse`].
    pub pause_when_failing: Option<toml::Value>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct OutputFile {
    pub dir: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(toml_text: &str) -> Result<Option<EndpointFile>, String> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Only {
            endpoint: Option<EndpointFile>,
        }
        toml::from_str::<Only>(toml_text)
            .map(|only| only.endpoint)
            .map_err(|error| error.to_string())
    }

    #[test]
    fn endpoint_is_a_name_or_a_table_of_urls() {
        assert_eq!(
            endpoint("endpoint = \"sandbox\"").unwrap(),
            Some(EndpointFile::Named("sandbox".into()))
        );
        let urls =
            endpoint("[endpoint]\nbase_url = \"https://a\"\ngateway_url = \"https://b\"\ninsecure_http = true\n");
        assert_eq!(
            urls.unwrap(),
            Some(EndpointFile::Urls(EndpointUrlsFile {
                base_url: Some("https://a".into()),
                gateway_url: Some("https://b".into()),
                insecure_http: true,
            }))
        );
        let default = endpoint("endpoint = { base_url = \"https://a\" }").unwrap();
        assert!(matches!(
            default,
            Some(EndpointFile::Urls(EndpointUrlsFile {
                insecure_http: false,
                ..
            }))
        ));
    }

    #[test]
    fn endpoint_table_errors_name_the_key() {
        let error = endpoint("endpoint = { base_url = \"https://a\", gateway = \"https://b\" }").unwrap_err();
        assert!(error.contains("unknown field `gateway`"), "{error}");
        let error = endpoint("endpoint = { base_url = \"https://a\", insecure_http = \"yes\" }").unwrap_err();
        assert!(
            error.contains("insecure_http") && error.contains("expected a boolean"),
            "{error}"
        );
        let error = endpoint("endpoint = 5").unwrap_err();
        assert!(
            error.contains("endpoint") && error.contains("\"sandbox\" or a table"),
            "{error}"
        );
    }
}
