//! A console campaign as the engine reads it: the editor's settings (no endpoint, key, price or output of their own; every file inside the campaign's folder) composed with the workspace's connection into `composed.toml`, the file every check, test send and run of the campaign loads.
//!
//! The editor's `campaign.toml` is what the edit page shows; `composed.toml` is written by the
//! console alone (uploads are stored under generated names, so no upload can replace it). A run
//! records `composed.toml` as its campaign file, so `msgbatch status`, `report` and a resume read
//! exactly what was approved, and the run's fingerprint covers the connection's settings too.

use super::campaigns::{CampaignRecord, Workspace};
use super::connections;
use super::error::ConsoleError;
use crate::campaign::Campaign;
use std::path::{Component, Path, PathBuf};

pub const COMPOSED_FILE: &str = "composed.toml";

/// Settings that name a file: (section, key).
const FILE_KEYS: [(&str, &str); 4] = [
    ("recipients", "path"),
    ("recipients", "suppression"),
    ("recipients", "opt_outs"),
    ("message", "text_file"),
];

/// Refuses, by name, a file setting that reaches outside the campaign's folder: an absolute
/// path, `..`, or a symbolic link on the way.
fn confine(dir: &Path, settings: &toml::Table) -> Result<(), ConsoleError> {
    for (section, key) in FILE_KEYS {
        let Some(value) = settings.get(section).and_then(|table| table.get(key)) else {
            continue;
        };
        let name = format!("{section}.{key}");
        let text = value
            .as_str()
            .ok_or_else(|| ConsoleError::Invalid(format!("campaign settings: `{name}` must be a file name")))?;
        inside(dir, text).map_err(|why| {
            ConsoleError::Invalid(format!(
                "campaign settings: `{name}` = {text:?} {why}: a campaign reads only the files in its own folder (upload the file on the edit page)"
            ))
        })?;
    }
    Ok(())
}

/// The path of `name` inside `dir`, or why it is not inside.
fn inside(dir: &Path, name: &str) -> Result<PathBuf, &'static str> {
    let relative = Path::new(name);
    if name.is_empty() {
        return Err("is empty");
    }
    let mut path = dir.to_path_buf();
    for component in relative.components() {
        match component {
            Component::Normal(part) => {
                path.push(part);
                if std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.file_type().is_symlink()) {
                    return Err("is a symbolic link");
                }
            }
            Component::CurDir => {}
            Component::ParentDir => return Err("climbs out with '..'"),
            Component::RootDir | Component::Prefix(_) => return Err("is an absolute path"),
        }
    }
    if name.contains('\\') {
        return Err("holds a '\\'");
    }
    Ok(path)
}

/// Composes the campaign's settings with its connection into `composed.toml` (rewritten only
/// when it would change) and answers its path.
pub fn compose(workspace: &Workspace, id: &str) -> Result<PathBuf, ConsoleError> {
    let text = std::fs::read_to_string(workspace.campaign_file(id)).map_err(ConsoleError::from_io)?;
    compose_settings(workspace, id, &text)
}

/// [`compose`] of settings about to be saved: refused (by name) before anything is written when
/// they hold a workspace's setting, reach outside the folder or name no connection there is.
pub fn compose_settings(workspace: &Workspace, id: &str, text: &str) -> Result<PathBuf, ConsoleError> {
    let dir = workspace.campaign_dir(id);
    let mut settings = super::settings::parse_settings(text)?;
    super::settings::refuse_workspace_keys(&settings)?;
    confine(&dir, &settings)?;
    let named = match settings.remove("connection") {
        Some(toml::Value::String(name)) => Some(name),
        Some(_) => {
            return Err(ConsoleError::Invalid(
                "campaign settings: `connection` must be the name of a connection".into(),
            ))
        }
        None => None,
    };
    let connections = connections::load(workspace)?;
    let (_, connection) = connections::chosen(&connections, named.as_deref())?;
    settings.extend(connection.settings());
    pause_when_failing_by_default(&mut settings);
    if super::frequency::placed(&dir) {
        super::settings::recipients_section(&mut settings)?.insert(
            "frequency_capped".into(),
            toml::Value::String(super::frequency::SNAPSHOT_FILE.into()),
        );
    }
    let composed = toml::to_string(&settings).map_err(ConsoleError::internal)?;
    let path = dir.join(COMPOSED_FILE);
    if std::fs::read_to_string(&path).ok().as_deref() != Some(composed.as_str()) {
        let mut file = crate::files::create_private(&path).map_err(ConsoleError::from_io)?;
        std::io::Write::write_all(&mut file, composed.as_bytes()).map_err(ConsoleError::from_io)?;
    }
    Ok(path)
}

/// A console run pauses itself when failing unless its settings say how (or `false`): nobody
/// may be watching it (the CLI, run by a person at a terminal, sets nothing).
fn pause_when_failing_by_default(settings: &mut toml::Table) {
    let rule = crate::campaign::FailingRule::CONSOLE_DEFAULT;
    let send = settings
        .entry("send")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if let Some(send) = send.as_table_mut() {
        send.entry("pause_when_failing").or_insert_with(|| {
            toml::Value::Table(toml::Table::from_iter([
                ("percent".to_string(), toml::Value::Integer(i64::from(rule.percent))),
                ("window".to_string(), toml::Value::Integer(i64::from(rule.window))),
            ]))
        });
    }
}

/// Loads the campaign as the engine will run it: its settings composed with the workspace's
/// connection.
pub fn load(workspace: &Workspace, id: &str) -> Result<Campaign, ConsoleError> {
    let composed = compose(workspace, id)?;
    // A refusal page cuts the paths in the text down to file names (`error::without_server_paths`).
    Campaign::load(&composed).map_err(|error| ConsoleError::Invalid(error.to_string()))
}

/// The fingerprint a check and an approval bind: the composed settings (the campaign's own and
/// its connection's), the message text (which may come from `text_file`) and every file the
/// run reads — recipients, suppression, the opt-out list.
pub fn fingerprint(workspace: &Workspace, record: &CampaignRecord) -> Result<String, ConsoleError> {
    fingerprint_of(&load(workspace, &record.id)?)
}

/// [`fingerprint`] of a campaign already loaded: each file by the engine's own digest
/// (a file not there yet, such as recipients before their upload, counts as missing).
pub fn fingerprint_of(campaign: &Campaign) -> Result<String, ConsoleError> {
    fingerprint_with(campaign, &mut |path| crate::engine::fingerprint_file(path))
}

/// [`fingerprint_of`] with each file's digest from `digest` (so that a caller that keeps the
/// digests, the approval's snapshot, reads each file once).
pub fn fingerprint_with(
    campaign: &Campaign,
    digest: &mut dyn FnMut(&Path) -> anyhow::Result<String>,
) -> Result<String, ConsoleError> {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let files = [
        Some(&campaign.file),
        Some(&campaign.recipients.path),
        campaign.recipients.suppression.as_ref(),
        campaign.recipients.opt_outs.as_ref(),
    ];
    for (name, path) in ["settings", "recipients", "suppression", "opt-outs"]
        .into_iter()
        .zip(files)
    {
        hasher.update(name.as_bytes());
        match path {
            Some(path) if path.exists() => {
                hasher.update(digest(path)?.as_bytes());
            }
            Some(_) => hasher.update(b"missing"),
            None => {}
        }
    }
    hasher.update(b"text");
    hasher.update(campaign.message_text().unwrap_or("").as_bytes());
    hasher.update(campaign.fallback_text().unwrap_or("").as_bytes());
    Ok(format!("{:032x}", hasher.digest128()))
}

/// [`fingerprint`] on a blocking thread (it reads every file whole).
pub async fn fingerprint_now(workspace: &Workspace, record: &CampaignRecord) -> Result<String, ConsoleError> {
    let (workspace, record) = (workspace.clone(), record.clone());
    tokio::task::spawn_blocking(move || fingerprint(&workspace, &record))
        .await
        .map_err(ConsoleError::internal)?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(text: &str) -> toml::Table {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn paths_outside_the_folder_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        for (text, why) in [
            ("[message]\ntext_file = \"../other/recipients.txt\"", "'..'"),
            ("[message]\ntext_file = \"/etc/hostname\"", "absolute"),
            ("[recipients]\npath = \"a/../../x.csv\"", "'..'"),
            ("[recipients]\nsuppression = \"..\\\\x.csv\"", "'\\'"),
        ] {
            let error = confine(dir.path(), &settings(text)).unwrap_err().to_string();
            assert!(error.contains(why), "{text}: {error}");
            assert!(error.contains('`'), "names the setting: {error}");
        }
        confine(dir.path(), &settings("[recipients]\npath = \"recipients.csv\"")).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join("recipients.csv")).unwrap();
        let error = confine(dir.path(), &settings("[recipients]\npath = \"recipients.csv\""))
            .unwrap_err()
            .to_string();
        assert!(error.contains("symbolic link"), "{error}");
    }
}
