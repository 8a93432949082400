//! The service connection of a run or a management command: where the service is and whose credentials, by one rule.

use crate::campaign::{Campaign, Credentials, Endpoint};
use crate::client::{ApiKey, Client, ClientConfig};
use crate::engine::Refusal;
use crate::sandbox::{Accounts, SandboxHandle};
use anyhow::{Context, Result};
use std::path::PathBuf;

/// Environment variables the management commands read their credentials from.
pub const ENV_API_KEY: &str = "MSGBATCH_API_KEY";
pub const ENV_API_KEY_FILE: &str = "MSGBATCH_API_KEY_FILE";
pub const ENV_GROUP_ID: &str = "MSGBATCH_GROUP_ID";

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

/// The API key: the environment variable when set, else the key file.
pub fn api_key(credentials: &Credentials) -> Result<ApiKey> {
    if let Some(key) = std::env::var(&credentials.api_key_env)
        .ok()
        .filter(|k| !k.trim().is_empty())
    {
        return Ok(ApiKey::new(key.trim()));
    }
    let Some(path) = &credentials.api_key_file else {
        return Err(Refusal(format!(
            "no API key: set {} (or a key file: credentials.api_key_file in a campaign, {ENV_API_KEY_FILE} for the management commands)",
            credentials.api_key_env
        ))
        .into());
    };
    let key =
        std::fs::read_to_string(path).with_context(|| format!("cannot read the API key file {}", path.display()))?;
    if key.trim().is_empty() {
        return Err(Refusal(format!("the API key file {} is empty", path.display())).into());
    }
    Ok(ApiKey::new(key.trim()))
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

/// A client of the service at these URLs with these credentials.
pub fn client(base_url: &str, gateway_url: &str, credentials: &Credentials) -> Result<Client> {
    let config = ClientConfig::new(base_url, gateway_url, api_key(credentials)?, group_id(credentials)?);
    Ok(Client::new(config)?)
}

/// The service connection of a run, and the in-process sandbox behind it when the endpoint is `sandbox`.
pub struct Session {
    pub client: Client,
    _sandbox: Option<SandboxHandle>,
}

impl Session {
    pub async fn connect(campaign: &Campaign) -> Result<Session> {
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
                let config = ClientConfig::new(
                    base_url.clone(),
                    gateway_url.clone(),
                    api_key(credentials)?,
                    group_id(credentials)?,
                );
                (config, None)
            }
        };
        config.timeout = std::time::Duration::from_secs(campaign.send.timeout_secs);
        Ok(Session {
            client: Client::new(config)?,
            _sandbox: sandbox,
        })
    }
}
