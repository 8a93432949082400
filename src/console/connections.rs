//! The workspace's connections: where the service is, where its key and group id come from, and the contract prices — owned by the admin (`connections.toml` beside console.db), named by a campaign, never written by an editor.
//!
//! A connection holds exactly the settings a CLI campaign file may hold and a console campaign
//! may not (`endpoint`, `sandbox_accounts`, `[credentials]`, `[prices]`), so that the engine reads
//! the composed campaign the way it reads an operator's file (see `compose.rs`).

use super::campaigns::{CampaignRecord, Workspace};
use super::error::ConsoleError;
use super::store::Store;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

pub const CONNECTIONS_FILE: &str = "connections.toml";

/// The keys of a connection; a console campaign may hold none of them.
pub const CONNECTION_KEYS: [&str; 4] = ["endpoint", "sandbox_accounts", "credentials", "prices"];

/// What `serve --demo` starts with: the embedded sandbox and the demo prices.
pub const DEMO_CONNECTIONS: &str = r#"# The workspace's connections, kept by an admin (the Connections page, or this file).
# A campaign names one with `connection = "NAME"`.
[sandbox]
endpoint = "sandbox"

[sandbox.prices]
alimtalk = 8
bm_friend = 15
bm_nonfriend = 20
sms = 9
lms = 30
fallback_sms = 9
fallback_lms = 30
"#;

/// One connection as the file holds it.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Connection {
    pub endpoint: toml::Value,
    pub sandbox_accounts: Option<PathBuf>,
    pub credentials: Option<toml::Table>,
    pub prices: Option<BTreeMap<String, i64>>,
}

impl Connection {
    /// The connection as campaign settings, to be merged into a campaign's own.
    pub fn settings(&self) -> toml::Table {
        let mut table = toml::Table::new();
        table.insert("endpoint".into(), self.endpoint.clone());
        if let Some(path) = &self.sandbox_accounts {
            table.insert(
                "sandbox_accounts".into(),
                toml::Value::String(path.to_string_lossy().into_owned()),
            );
        }
        if let Some(credentials) = &self.credentials {
            table.insert("credentials".into(), toml::Value::Table(credentials.clone()));
        }
        if let Some(prices) = &self.prices {
            let prices = prices
                .iter()
                .map(|(class, price)| (class.clone(), toml::Value::Integer(*price)))
                .collect();
            table.insert("prices".into(), toml::Value::Table(prices));
        }
        table
    }

    /// Where it sends, for the pages: `sandbox` or the base URL (never a key).
    pub fn describe(&self) -> String {
        match &self.endpoint {
            toml::Value::String(name) => name.clone(),
            toml::Value::Table(urls) => urls
                .get("base_url")
                .and_then(toml::Value::as_str)
                .unwrap_or("?")
                .to_string(),
            _ => "?".into(),
        }
    }
}

/// Every connection of the workspace, by name.
pub type Connections = BTreeMap<String, Connection>;

fn path(workspace: &Workspace) -> PathBuf {
    workspace.root.join(CONNECTIONS_FILE)
}

/// The connections file's text (empty when there is none yet).
pub fn text(workspace: &Workspace) -> Result<String, ConsoleError> {
    match std::fs::read_to_string(path(workspace)) {
        Ok(text) => Ok(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(error) => Err(ConsoleError::from_io(error)),
    }
}

/// Reads connections from text; a wrong one is refused naming it.
pub fn parse(text: &str) -> Result<Connections, ConsoleError> {
    let connections: Connections = toml::from_str(text)
        .map_err(|error| ConsoleError::Invalid(format!("{CONNECTIONS_FILE}: {}", error.message())))?;
    for (name, connection) in &connections {
        check(name, connection)?;
    }
    Ok(connections)
}

/// The workspace's connections.
pub fn load(workspace: &Workspace) -> Result<Connections, ConsoleError> {
    parse(&text(workspace)?)
}

/// A connection is checked the way the engine will read it: composed with a small campaign.
fn check(name: &str, connection: &Connection) -> Result<(), ConsoleError> {
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_') {
        return Err(ConsoleError::Invalid(format!(
            "{CONNECTIONS_FILE}: the connection name {name:?} may hold letters, digits, '-' and '_' only"
        )));
    }
    let mut probe: toml::Table = toml::from_str(
        "name = \"probe\"\nkind = \"sms\"\n[message]\nservice = 1\ntext = \"x\"\ncallback_no = \"0212345678\"\n[recipients]\npath = \"r.csv\"\n",
    )
    .map_err(ConsoleError::internal)?;
    probe.extend(connection.settings());
    let text = toml::to_string(&probe).map_err(ConsoleError::internal)?;
    crate::campaign::Campaign::parse(&text, std::path::Path::new(CONNECTIONS_FILE))
        .map(drop)
        .map_err(|error| {
            let error = error.to_string();
            let detail = error.rsplit_once(": ").map_or(error.as_str(), |(_, detail)| detail);
            ConsoleError::Invalid(format!("{CONNECTIONS_FILE}: connection {name:?}: {detail}"))
        })
}

/// The connection a campaign's settings name, or the workspace's only one when it names none.
pub fn chosen<'a>(
    connections: &'a Connections,
    named: Option<&str>,
) -> Result<(&'a str, &'a Connection), ConsoleError> {
    match named {
        Some(name) => connections
            .get_key_value(name)
            .map(|(name, connection)| (name.as_str(), connection))
            .ok_or_else(|| {
                ConsoleError::Invalid(format!(
                    "connection = {name:?}: the workspace has no such connection ({}); an admin keeps them on the Connections page",
                    names(connections)
                ))
            }),
        None if connections.len() == 1 => {
            let (name, connection) = connections.iter().next().expect("one connection");
            Ok((name.as_str(), connection))
        }
        None => Err(ConsoleError::Invalid(format!(
            "choose a connection: `connection = \"NAME\"` in the settings, one of {}",
            names(connections)
        ))),
    }
}

fn names(connections: &Connections) -> String {
    if connections.is_empty() {
        "none yet".into()
    } else {
        connections.keys().map(String::as_str).collect::<Vec<_>>().join(", ")
    }
}

/// The connection a campaign names in its own settings (`connection = "NAME"`), if it names one.
pub fn named_by(workspace: &Workspace, id: &str) -> Option<String> {
    let text = std::fs::read_to_string(workspace.campaign_file(id)).ok()?;
    let table: toml::Table = toml::from_str(&text).ok()?;
    table.get("connection")?.as_str().map(str::to_string)
}

/// Replaces the workspace's connections (an admin's save): checked whole first, written, audited;
/// every campaign not yet started whose connection changed goes back to draft (its approval saw
/// the old endpoint and prices). Answers the ids sent back to draft.
pub fn save(workspace: &Workspace, store: &Store, text: &str, by: &str) -> Result<Vec<String>, ConsoleError> {
    let before = load(workspace).unwrap_or_default();
    let after = parse(text)?;
    let changed: Vec<&String> = before
        .keys()
        .chain(after.keys())
        .filter(|name| before.get(*name) != after.get(*name))
        .collect();
    let mut file = crate::files::create_private(&path(workspace)).map_err(ConsoleError::from_io)?;
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(ConsoleError::from_io)?;
    let mut voided = Vec::new();
    for mut record in store.campaigns::<CampaignRecord>()? {
        if !record.state.editable() {
            continue;
        }
        let uses = match named_by(workspace, &record.id) {
            Some(name) => changed.contains(&&name),
            // Naming none, it used the only connection there was, or will use a new only one.
            None => before.len() <= 1 || after.len() <= 1,
        };
        if uses && (record.check.is_some() || record.approval.is_some()) {
            record.void_check(by);
            store.put_campaign(&record.id, &record)?;
            store.audit(by, "voided", Some(&record.id), "its connection changed")?;
            voided.push(record.id.clone());
        }
    }
    let names: Vec<&str> = changed.iter().map(|name| name.as_str()).collect();
    store.audit(
        by,
        "connections changed",
        None,
        &format!("changed: {}; back to draft: {}", names.join(", "), voided.len()),
    )?;
    Ok(voided)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_connection_reads() {
        let connections = parse(DEMO_CONNECTIONS).unwrap();
        assert_eq!(connections["sandbox"].describe(), "sandbox");
        assert_eq!(connections["sandbox"].prices.as_ref().unwrap()["lms"], 30);
    }

    #[test]
    fn a_wrong_connection_is_named() {
        let error = parse("[prod]\nendpoint = { base_url = \"https://a\" }\nprices = { lmss = 3 }\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("\"prod\""), "{error}");
        let error = parse("[prod]\nendpoint = \"sandbox\"\nurl = 1\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("url"), "{error}");
    }

    #[test]
    fn a_campaign_names_one_or_takes_the_only_one() {
        let connections = parse(DEMO_CONNECTIONS).unwrap();
        assert_eq!(chosen(&connections, None).unwrap().0, "sandbox");
        assert!(chosen(&connections, Some("prod")).is_err());
        assert!(chosen(&Connections::new(), None).is_err());
    }
}
