//! A console campaign's settings as text: read as a TOML table, the uploader's file paths replaced by the stored names, the mapped columns set, and the settings that belong to the workspace refused by name.

use super::campaigns::StoredFile;
use super::error::ConsoleError;

/// Settings that belong to the workspace, not to a campaign, and what to do instead.
const WORKSPACE_KEYS: [(&str, &str); 5] = [
    (
        "endpoint",
        "where the service is belongs to the workspace's connection: name one with connection = \"NAME\"",
    ),
    (
        "sandbox_accounts",
        "the sandbox's accounts belong to the workspace's connection: name one with connection = \"NAME\"",
    ),
    (
        "credentials",
        "where the API key and group id come from belongs to the workspace's connection (kept by an admin): name one with connection = \"NAME\"",
    ),
    (
        "prices",
        "the contract prices belong to the workspace's connection (kept by an admin), so that an estimate and a budget rest on them: remove it",
    ),
    (
        "output",
        "the console keeps every run in the workspace's own folder: remove it",
    ),
];

/// Takes out of settings written for the CLI (a sample) what belongs to the workspace.
pub fn drop_workspace_keys(settings: &mut toml::Table) {
    for (key, _) in WORKSPACE_KEYS {
        settings.remove(key);
    }
}

/// Refuses, by name, a setting a console campaign may not hold.
pub fn refuse_workspace_keys(settings: &toml::Table) -> Result<(), ConsoleError> {
    for (key, instead) in WORKSPACE_KEYS {
        if settings.contains_key(key) {
            return Err(ConsoleError::Invalid(format!(
                "campaign settings: `{key}` is not a campaign's to set: {instead}"
            )));
        }
    }
    let recipients = settings.get("recipients").and_then(toml::Value::as_table);
    if recipients.is_some_and(|recipients| recipients.contains_key("frequency_capped")) {
        return Err(ConsoleError::Invalid(
            "campaign settings: `recipients.frequency_capped` is not a campaign's to set: the frequency cap is the workspace's (an admin sets it on the month page): remove it".into(),
        ));
    }
    Ok(())
}

/// A campaign's settings as a TOML table; the error names campaign.toml.
pub fn parse_settings(text: &str) -> Result<toml::Table, ConsoleError> {
    toml::from_str(text).map_err(|error| ConsoleError::Invalid(format!("campaign.toml: {error}")))
}

/// The `[recipients]` table of the settings, made if missing.
pub fn recipients_section(table: &mut toml::Table) -> Result<&mut toml::Table, ConsoleError> {
    table
        .entry("recipients")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
        .ok_or_else(|| ConsoleError::Invalid("campaign.toml: `recipients` must be a table".into()))
}

/// The campaign text with the console's file names in place of the uploader's paths and no
/// opt-out list of its own; a setting that belongs to the workspace (endpoint, credentials,
/// prices, output) is refused by name.
pub fn with_stored_paths(
    text: &str,
    recipients: Option<&StoredFile>,
    suppression: Option<&StoredFile>,
) -> Result<String, ConsoleError> {
    let mut table = parse_settings(text)?;
    refuse_workspace_keys(&table)?;
    let section = recipients_section(&mut table)?;
    // The console places the workspace's opt-out list itself when it checks (see `opt_outs::place`).
    section.remove("opt_outs");
    // Before an upload the path names the file to come, inside the folder, not the uploader's.
    let stored = recipients.map_or("recipients.csv", |file| file.stored.as_str());
    section.insert("path".into(), toml::Value::String(stored.into()));
    match suppression {
        Some(file) => {
            section.insert("suppression".into(), toml::Value::String(file.stored.clone()));
        }
        None => {
            section.remove("suppression");
        }
    }
    toml::to_string(&table).map_err(ConsoleError::internal)
}

/// A new draft's settings for the recipients a run did not reach: the campaign's own settings
/// (never the run's composed copy, whose endpoint, key and prices are the connection's), reading
/// the subset's CSV (UTF-8, no sheet) stored as `recipients`.
pub fn for_retry(original: &str, recipients: &StoredFile) -> Result<String, ConsoleError> {
    let mut table = parse_settings(original)?;
    if let Some(name) = table.get("name").and_then(toml::Value::as_str).map(str::to_string) {
        table.insert("name".into(), toml::Value::String(format!("{name}-retry")));
    }
    let section = recipients_section(&mut table)?;
    section.insert("format".into(), toml::Value::String("csv".into()));
    section.insert("encoding".into(), toml::Value::String("utf-8".into()));
    // The subset is a CSV: a spreadsheet's sheet no longer applies (and would be refused).
    section.remove("sheet");
    let text = toml::to_string(&table).map_err(ConsoleError::internal)?;
    with_stored_paths(&text, Some(recipients), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_paths_replace_the_uploaders_and_workspace_settings_are_refused() {
        let text = "name = \"x\"\n[recipients]\npath = \"/home/a/list.csv\"\nsuppression = \"../s.csv\"\n";
        let recipients = StoredFile {
            stored: "recipients.csv".into(),
            original: "list.csv".into(),
            bytes: 1,
        };
        let out = with_stored_paths(text, Some(&recipients), None).unwrap();
        let table: toml::Table = toml::from_str(&out).unwrap();
        assert_eq!(table["recipients"]["path"].as_str(), Some("recipients.csv"));
        assert!(table["recipients"].get("suppression").is_none());
        let out = with_stored_paths(text, None, None).unwrap();
        let table: toml::Table = toml::from_str(&out).unwrap();
        assert_eq!(table["recipients"]["path"].as_str(), Some("recipients.csv"));
        let error = with_stored_paths(&format!("{text}[output]\ndir = \"/tmp\"\n"), None, None).unwrap_err();
        assert!(error.to_string().contains("`output`"), "{error}");
    }

    #[test]
    fn workspace_settings_are_refused_by_name() {
        for key in [
            "endpoint = \"sandbox\"",
            "[prices]\nlms = 0",
            "[credentials]\napi_key_env = \"HOME\"",
            "[output]\ndir = \"/tmp\"",
        ] {
            let table: toml::Table = toml::from_str(key).unwrap();
            let error = refuse_workspace_keys(&table).unwrap_err().to_string();
            let name = key.trim_start_matches('[').split([' ', ']']).next().unwrap();
            assert!(error.contains(&format!("`{name}`")), "{key}: {error}");
        }
    }
}
