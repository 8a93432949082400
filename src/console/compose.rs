//! A console campaign as the engine reads it: the editor's settings (no endpoint, key, price or output of their own; every file inside the campaign's folder) composed with the workspace's connection into `composed.toml`, the file every check, test send and run of the campaign loads.
//!
//! The editor's `campaign.toml` is what the edit page shows; `composed.toml` is written by the
//! console alone (uploads are stored under generated names, so no upload can replace it). A run
//! records `composed.toml` as its campaign file, so `msgbatch status`, `report` and a resume read
//! exactly what was approved, and the run's fingerprint covers the connection's settings too.

use super::campaigns::Workspace;
use super::connections;
use super::error::ConsoleError;
use std::path::{Component, Path, PathBuf};

pub const COMPOSED_FILE: &str = "composed.toml";

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

/// Settings that name a file: (section, key).
const FILE_KEYS: [(&str, &str); 4] = [
    ("recipients", "path"),
    ("recipients", "suppression"),
    ("recipients", "opt_outs"),
    ("message", "text_file"),
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
    Ok(())
}

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
    let mut settings = super::campaigns::parse_settings(text)?;
    refuse_workspace_keys(&settings)?;
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
    let composed = toml::to_string(&settings).map_err(ConsoleError::internal)?;
    let path = dir.join(COMPOSED_FILE);
    if std::fs::read_to_string(&path).ok().as_deref() != Some(composed.as_str()) {
        let mut file = crate::files::create_private(&path).map_err(ConsoleError::from_io)?;
        std::io::Write::write_all(&mut file, composed.as_bytes()).map_err(ConsoleError::from_io)?;
    }
    Ok(path)
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

    #[test]
    fn workspace_settings_are_refused_by_name() {
        for key in [
            "endpoint = \"sandbox\"",
            "[prices]\nlms = 0",
            "[credentials]\napi_key_env = \"HOME\"",
            "[output]\ndir = \"/tmp\"",
        ] {
            let error = refuse_workspace_keys(&settings(key)).unwrap_err().to_string();
            let name = key.trim_start_matches('[').split([' ', ']']).next().unwrap();
            assert!(error.contains(&format!("`{name}`")), "{key}: {error}");
        }
    }
}
