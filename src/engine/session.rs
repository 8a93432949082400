//! The service connection of a run or a management command: where the service is and whose credentials, by one rule.

use crate::campaign::{Campaign, Credentials, Endpoint};
use crate::client::{ApiKey, Client, ClientConfig, ErrorKind};
use crate::engine::events::{Event, Sink};
use crate::engine::Refusal;
use crate::sandbox::{Accounts, SandboxHandle};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Environment variables the management commands read their credentials from.
pub const ENV_API_KEY: &str = "MSGBATCH_API_KEY";
pub const ENV_API_KEY_FILE: &str = "MSGBATCH_API_KEY_FILE";
pub const ENV_GROUP_ID: &str = "MSGBATCH_GROUP_ID";
/// `1`: the management commands may use plain `http://` to a host that is not loopback.
pub const ENV_INSECURE_HTTP: &str = "MSGBATCH_INSECURE_HTTP";
/// `1`: a key file readable by group or others is used anyway.
pub const ENV_ALLOW_OPEN_KEY_FILE: &str = "MSGBATCH_ALLOW_OPEN_KEY_FILE";

/// Whether an on/off environment variable is on.
fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|value| value.trim() == "1")
}

/// The credentials of the management commands: the same rule as a campaign's defaults, with
/// the key file named by `MSGBATCH_API_KEY_FILE`.
pub fn management_credentials() -> Credentials {
    Credentials {
        api_key_env: ENV_API_KEY.into(),
        api_key_file: std::env::var_os(ENV_API_KEY_FILE)
            .filter(|path| !path.is_empty())
            .map(PathBuf::from),
        group_id_env: ENV_GROUP_ID.into(),
        group_id: None,
    }
}

/// The API key: the environment variable when set, else the key file, which must be private
/// to its owner, like an ssh key.
pub fn api_key(credentials: &Credentials, events: &dyn Sink) -> Result<ApiKey> {
    if let Some(key) = std::env::var(&credentials.api_key_env)
        .ok()
        .filter(|k| !k.trim().is_empty())
    {
        if let Some(path) = &credentials.api_key_file {
            events.event(&Event::Warning {
                text: format!(
                    "using the API key in {}; the key file {} is not read",
                    credentials.api_key_env,
                    path.display()
                ),
            });
        }
        return Ok(ApiKey::new(key.trim()));
    }
    let Some(path) = &credentials.api_key_file else {
        return Err(Refusal(format!(
            "no API key: set {} (or a key file: credentials.api_key_file in a campaign, {ENV_API_KEY_FILE} for the management commands)",
            credentials.api_key_env
        ))
        .into());
    };
    refuse_open_key_file(path)?;
    let key =
        std::fs::read_to_string(path).with_context(|| format!("cannot read the API key file {}", path.display()))?;
    if key.trim().is_empty() {
        return Err(Refusal(format!("the API key file {} is empty", path.display())).into());
    }
    Ok(ApiKey::new(key.trim()))
}

/// A key file that group or others can read is refused, unless the user says otherwise.
fn refuse_open_key_file(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .with_context(|| format!("cannot read the API key file {}", path.display()))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 && !env_flag(ENV_ALLOW_OPEN_KEY_FILE) {
            return Err(Refusal(format!(
                "the API key file {file} can be read by others (mode {:04o}; it must be 0600 or stricter): \
                 make it private with `chmod 600 {file}`, or set {ENV_ALLOW_OPEN_KEY_FILE}=1 to use it anyway",
                mode & 0o7777,
                file = path.display(),
            ))
            .into());
        }
    }
    Ok(())
}

/// The group: the one written in the campaign, else the environment variable.
pub fn group_id(credentials: &Credentials) -> Result<String> {
    if let Some(id) = &credentials.group_id {
        return Ok(id.clone());
    }
    std::env::var(&credentials.group_id_env)
        .ok()
        .map(|g| g.trim().to_string())
        .filter(|g| !g.is_empty())
        .ok_or_else(|| {
            Refusal(format!(
                "no group: set {} (or credentials.group_id in the campaign)",
                credentials.group_id_env
            ))
            .into()
        })
}

/// A client of the service at these URLs with these credentials, for the management commands.
pub fn client(base_url: &str, gateway_url: &str, credentials: &Credentials, events: &dyn Sink) -> Result<Client> {
    let mut config = ClientConfig::new(
        base_url,
        gateway_url,
        api_key(credentials, events)?,
        group_id(credentials)?,
    );
    config.allow_insecure_http = env_flag(ENV_INSECURE_HTTP);
    connect_client(config, &format!("set {ENV_INSECURE_HTTP}=1"))
}

/// The client, with a URL it refuses turned into a refusal that says how to allow it.
fn connect_client(config: ClientConfig, how_to_allow_http: &str) -> Result<Client> {
    Client::new(config).map_err(|error| {
        if error.kind() == ErrorKind::Endpoint {
            Refusal(format!(
                "{error} (to send over plain http:// anyway, {how_to_allow_http})"
            ))
            .into()
        } else {
            error.into()
        }
    })
}

/// Whether the campaign allows plain `http://` to a host that is not loopback (`endpoint.insecure_http = true`).
fn campaign_allows_insecure_http(campaign: &Campaign) -> bool {
    matches!(
        campaign.endpoint,
        Endpoint::Urls {
            insecure_http: true,
            ..
        }
    )
}

/// The service connection of a run, and the in-process sandbox behind it when the endpoint is `sandbox`.
pub struct Session {
    pub client: Client,
    _sandbox: Option<SandboxHandle>,
}

impl Session {
    pub async fn connect(campaign: &Campaign, events: &dyn Sink) -> Result<Session> {
        let (mut config, sandbox) = match &campaign.endpoint {
            Endpoint::Sandbox { accounts } => {
                let accounts = match accounts {
                    Some(path) => Accounts::load(path)?,
                    None => Accounts::demo(),
                };
                // The sandbox's own accounts, never the environment's key: a production key has no business here.
                let group = match &campaign.credentials.group_id {
                    Some(id) => accounts.groups.iter().find(|g| &g.id == id).ok_or_else(|| {
                        Refusal(format!(
                            "credentials.group_id {id:?} is not a group of the sandbox accounts"
                        ))
                    })?,
                    None => accounts
                        .groups
                        .first()
                        .ok_or_else(|| Refusal("the sandbox accounts have no group".into()))?,
                };
                let (key, id) = (ApiKey::new(group.api_key.clone()), group.id.clone());
                let handle = SandboxHandle::start(accounts.clone())
                    .await
                    .context("cannot start the in-process sandbox")?;
                let config = ClientConfig::new(handle.base_url(), handle.gateway_url(), key, id);
                (config, Some(handle))
            }
            Endpoint::Urls {
                base_url, gateway_url, ..
            } => {
                let credentials = &campaign.credentials;
                let mut config = ClientConfig::new(
                    base_url.clone(),
                    gateway_url.clone(),
                    api_key(credentials, events)?,
                    group_id(credentials)?,
                );
                config.allow_insecure_http = campaign_allows_insecure_http(campaign);
                (config, None)
            }
        };
        config.timeout = std::time::Duration::from_secs(campaign.send.timeout_secs);
        Ok(Session {
            client: connect_client(config, "set endpoint.insecure_http = true in the campaign")?,
            _sandbox: sandbox,
        })
    }
}
