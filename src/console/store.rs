//! The console's own records in `console.db` (sled): users, sessions, one-time sign-in links, campaigns, the audit log and the opt-out list; they survive restarts.

use super::error::ConsoleError;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What a person may do; each role may do what the ones before it may.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Reads campaigns and downloads reports.
    Viewer,
    /// Creates, uploads, checks, test-sends and submits campaigns.
    Editor,
    /// Approves another's campaign, starts, pauses, stops and resumes.
    Approver,
    /// Manages users.
    Admin,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Viewer, Role::Editor, Role::Approver, Role::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Editor => "editor",
            Role::Approver => "approver",
            Role::Admin => "admin",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.as_str() == text)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct User {
    pub name: String,
    pub role: Role,
    /// argon2id PHC string; `None` until the person sets one through their sign-in link.
    pub password_hash: Option<String>,
    pub disabled: bool,
    pub created_at: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Session {
    pub user: String,
    /// Sent in every form and checked against this on every state-changing request.
    pub csrf: String,
    /// Unix seconds.
    pub created: i64,
    pub last_seen: i64,
}

/// A one-time sign-in link: the first admin's, or one an admin made for a new user.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SignInLink {
    pub user: String,
    /// Unix seconds after which it no longer works.
    pub expires: i64,
}

/// One line of the audit log.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AuditEntry {
    pub at: String,
    pub user: String,
    pub action: String,
    /// The campaign it concerns, if any.
    pub campaign: Option<String>,
    pub detail: String,
}

/// Which audit entries a reader asks for: of a campaign, by a person, in a month (`2026-11`,
/// Korean time); an empty part keeps every entry.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct AuditFilter {
    #[serde(default)]
    pub campaign: String,
    #[serde(default)]
    pub user: String,
    #[serde(default)]
    pub month: String,
}

impl AuditFilter {
    pub fn campaign(id: &str) -> AuditFilter {
        AuditFilter {
            campaign: id.to_string(),
            ..AuditFilter::default()
        }
    }

    fn keeps(&self, entry: &AuditEntry) -> bool {
        (self.campaign.is_empty() || entry.campaign.as_deref() == Some(self.campaign.as_str()))
            && (self.user.is_empty() || entry.user == self.user)
            && (self.month.is_empty() || crate::campaign::quiet::wall_time(&entry.at).starts_with(&self.month))
    }
}

const USERS: &str = "users";
const SESSIONS: &str = "sessions";
const LINKS: &str = "links";
const CAMPAIGNS: &str = "campaigns";
const AUDIT: &str = "audit";
const OPT_OUTS: &str = "opt_outs";
/// The snapshot of each campaign's last approval (`approval::Snapshot`), kept when a change voids it.
const APPROVALS: &str = "approvals";
const WORKSPACE: &str = "workspace";
/// API tokens under the SHA-256 digest of their text (`tokens::ApiToken`).
pub const TOKENS: &str = "tokens";
/// The API's first answers to requests with an `Idempotency-Key` (`api::idempotency`).
pub const IDEMPOTENCY: &str = "idempotency";

/// A record as bytes: its tree, key and value.
pub type RawEntry = (String, Vec<u8>, Vec<u8>);

/// `console.db`: one sled database with a tree per kind of record, values as JSON.
#[derive(Clone)]
pub struct Store {
    db: sled::Db,
}

impl Store {
    /// Opens console.db. A lock still held is waited for a few seconds: sled lets it go a moment
    /// after the process (or the console) that held it ended, as at a quick restart.
    pub fn open(path: &Path) -> Result<Store, ConsoleError> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let db = loop {
            match sled::open(path) {
                Ok(db) => break db,
                // sled reports a held lock as an I/O error of kind `Other` naming it.
                Err(sled::Error::Io(io)) if io.to_string().contains("could not acquire lock") => {
                    if std::time::Instant::now() >= deadline {
                        return Err(ConsoleError::internal(format!(
                            "{} is in use by another `msgbatch serve`",
                            path.display()
                        )));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                Err(other) => {
                    return Err(ConsoleError::internal(format!(
                        "cannot open {}: {other}",
                        path.display()
                    )))
                }
            }
        };
        crate::files::make_private_tree(path).map_err(ConsoleError::from_io)?;
        Ok(Store { db })
    }

    fn tree(&self, name: &str) -> Result<sled::Tree, ConsoleError> {
        self.db.open_tree(name).map_err(ConsoleError::from_sled)
    }

    fn get<T: DeserializeOwned>(&self, tree: &str, key: &str) -> Result<Option<T>, ConsoleError> {
        match self.tree(tree)?.get(key).map_err(ConsoleError::from_sled)? {
            Some(bytes) => Ok(Some(serde_json::from_slice(&bytes).map_err(ConsoleError::internal)?)),
            None => Ok(None),
        }
    }

    /// Writes and flushes: a record the console acted on is on disk before it answers.
    fn put<T: Serialize>(&self, tree: &str, key: &str, value: &T) -> Result<(), ConsoleError> {
        let bytes = serde_json::to_vec(value).map_err(ConsoleError::internal)?;
        let tree = self.tree(tree)?;
        tree.insert(key, bytes).map_err(ConsoleError::from_sled)?;
        tree.flush().map_err(ConsoleError::from_sled)?;
        Ok(())
    }

    fn all<T: DeserializeOwned>(&self, tree: &str) -> Result<Vec<T>, ConsoleError> {
        self.tree(tree)?
            .iter()
            .values()
            .map(|value| {
                let bytes = value.map_err(ConsoleError::from_sled)?;
                serde_json::from_slice(&bytes).map_err(ConsoleError::internal)
            })
            .collect()
    }

    fn entries<T: DeserializeOwned>(&self, tree: &str) -> Result<Vec<(String, T)>, ConsoleError> {
        self.tree(tree)?
            .iter()
            .map(|entry| {
                let (key, value) = entry.map_err(ConsoleError::from_sled)?;
                let value = serde_json::from_slice(&value).map_err(ConsoleError::internal)?;
                Ok((String::from_utf8_lossy(&key).into_owned(), value))
            })
            .collect()
    }

    fn remove(&self, tree: &str, key: &str) -> Result<bool, ConsoleError> {
        let tree = self.tree(tree)?;
        let removed = tree.remove(key).map_err(ConsoleError::from_sled)?.is_some();
        tree.flush().map_err(ConsoleError::from_sled)?;
        Ok(removed)
    }

    pub fn user(&self, name: &str) -> Result<Option<User>, ConsoleError> {
        self.get(USERS, name)
    }

    pub fn put_user(&self, user: &User) -> Result<(), ConsoleError> {
        self.put(USERS, &user.name, user)
    }

    pub fn users(&self) -> Result<Vec<User>, ConsoleError> {
        self.all(USERS)
    }

    pub fn session(&self, token: &str) -> Result<Option<Session>, ConsoleError> {
        self.get(SESSIONS, token)
    }

    pub fn put_session(&self, token: &str, session: &Session) -> Result<(), ConsoleError> {
        self.put(SESSIONS, token, session)
    }

    pub fn remove_session(&self, token: &str) -> Result<(), ConsoleError> {
        self.remove(SESSIONS, token).map(|_| ())
    }

    /// Ends every session of a user (disabled, or a new password).
    pub fn remove_sessions_of(&self, user: &str) -> Result<(), ConsoleError> {
        let tree = self.tree(SESSIONS)?;
        for entry in tree.iter() {
            let (key, value) = entry.map_err(ConsoleError::from_sled)?;
            let session: Session = serde_json::from_slice(&value).map_err(ConsoleError::internal)?;
            if session.user == user {
                tree.remove(key).map_err(ConsoleError::from_sled)?;
            }
        }
        tree.flush().map_err(ConsoleError::from_sled)?;
        Ok(())
    }

    /// Every record of every tree as bytes (a backup's copy).
    pub fn raw_entries(&self) -> Result<Vec<RawEntry>, ConsoleError> {
        let mut entries = Vec::new();
        for name in self.db.tree_names() {
            let tree = self.db.open_tree(&name).map_err(ConsoleError::from_sled)?;
            let name = String::from_utf8_lossy(&name).into_owned();
            for entry in tree.iter() {
                let (key, value) = entry.map_err(ConsoleError::from_sled)?;
                entries.push((name.clone(), key.to_vec(), value.to_vec()));
            }
        }
        Ok(entries)
    }

    /// One record as bytes (a restore).
    pub fn put_raw(&self, tree: &str, key: &[u8], value: &[u8]) -> Result<(), ConsoleError> {
        self.db
            .open_tree(tree)
            .map_err(ConsoleError::from_sled)?
            .insert(key, value)
            .map_err(ConsoleError::from_sled)?;
        Ok(())
    }

    pub fn flush(&self) -> Result<(), ConsoleError> {
        self.db.flush().map_err(ConsoleError::from_sled).map(drop)
    }

    /// A record of the tree `tree` (tokens, the API's kept answers, the webhooks' outbox and
    /// messages: records of one kind each, read and written through these four).
    pub fn get_in<T: DeserializeOwned>(&self, tree: &str, key: &str) -> Result<Option<T>, ConsoleError> {
        self.get(tree, key)
    }

    pub fn put_in<T: Serialize>(&self, tree: &str, key: &str, value: &T) -> Result<(), ConsoleError> {
        self.put(tree, key, value)
    }

    /// [`Store::put_in`] without the flush: a batch of records is flushed once, by [`Store::flush`].
    pub fn put_unflushed_in<T: Serialize>(&self, tree: &str, key: &str, value: &T) -> Result<(), ConsoleError> {
        let bytes = serde_json::to_vec(value).map_err(ConsoleError::internal)?;
        self.tree(tree)?.insert(key, bytes).map_err(ConsoleError::from_sled)?;
        Ok(())
    }

    pub fn entries_in<T: DeserializeOwned>(&self, tree: &str) -> Result<Vec<(String, T)>, ConsoleError> {
        self.entries(tree)
    }

    pub fn remove_in(&self, tree: &str, key: &str) -> Result<bool, ConsoleError> {
        self.remove(tree, key)
    }

    pub fn put_link(&self, token: &str, link: &SignInLink) -> Result<(), ConsoleError> {
        self.put(LINKS, token, link)
    }

    /// The link, removed: it works once.
    pub fn take_link(&self, token: &str) -> Result<Option<SignInLink>, ConsoleError> {
        let tree = self.tree(LINKS)?;
        let taken = tree.remove(token).map_err(ConsoleError::from_sled)?;
        tree.flush().map_err(ConsoleError::from_sled)?;
        match taken {
            Some(bytes) => Ok(Some(serde_json::from_slice(&bytes).map_err(ConsoleError::internal)?)),
            None => Ok(None),
        }
    }

    pub fn peek_link(&self, token: &str) -> Result<Option<SignInLink>, ConsoleError> {
        self.get(LINKS, token)
    }

    pub fn campaign<T: DeserializeOwned>(&self, id: &str) -> Result<Option<T>, ConsoleError> {
        self.get(CAMPAIGNS, id)
    }

    pub fn put_campaign<T: Serialize>(&self, id: &str, campaign: &T) -> Result<(), ConsoleError> {
        self.put(CAMPAIGNS, id, campaign)
    }

    pub fn campaigns<T: DeserializeOwned>(&self) -> Result<Vec<T>, ConsoleError> {
        self.all(CAMPAIGNS)
    }

    /// Appends to the audit log, under a key that sorts by time.
    pub fn audit(&self, user: &str, action: &str, campaign: Option<&str>, detail: &str) -> Result<(), ConsoleError> {
        let key = self.db.generate_id().map_err(ConsoleError::from_sled)?;
        let entry = AuditEntry {
            at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            user: user.to_string(),
            action: action.to_string(),
            campaign: campaign.map(str::to_string),
            detail: detail.to_string(),
        };
        self.put(AUDIT, &format!("{key:020}"), &entry)
    }

    /// The newest `limit` entries first, optionally of one campaign.
    /// The newest `limit` audit entries that `filter` keeps, newest first.
    pub fn audit_log(&self, filter: &AuditFilter, limit: usize) -> Result<Vec<AuditEntry>, ConsoleError> {
        let mut entries = Vec::new();
        for value in self.tree(AUDIT)?.iter().values().rev() {
            let bytes = value.map_err(ConsoleError::from_sled)?;
            let entry: AuditEntry = serde_json::from_slice(&bytes).map_err(ConsoleError::internal)?;
            if filter.keeps(&entry) {
                entries.push(entry);
                if entries.len() == limit {
                    break;
                }
            }
        }
        Ok(entries)
    }

    /// The workspace's opt-out list: normalised numbers.
    pub fn opt_outs(&self) -> Result<Vec<String>, ConsoleError> {
        Ok(self.get(OPT_OUTS, "numbers")?.unwrap_or_default())
    }

    pub fn put_opt_outs(&self, numbers: &[String]) -> Result<(), ConsoleError> {
        self.put(OPT_OUTS, "numbers", &numbers)
    }

    /// A workspace setting an administrator made (the monthly limit), by its name.
    pub fn setting<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, ConsoleError> {
        self.get(WORKSPACE, name)
    }

    pub fn put_setting<T: Serialize>(&self, name: &str, value: &T) -> Result<(), ConsoleError> {
        self.put(WORKSPACE, name, value)
    }

    /// What the campaign's last approval approved, if it was ever approved.
    pub fn approved_snapshot<T: DeserializeOwned>(&self, id: &str) -> Result<Option<T>, ConsoleError> {
        self.get(APPROVALS, id)
    }

    pub fn put_approved_snapshot<T: Serialize>(&self, id: &str, snapshot: &T) -> Result<(), ConsoleError> {
        self.put(APPROVALS, id, snapshot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("console.db");
        {
            let store = Store::open(&path).unwrap();
            store
                .put_user(&User {
                    name: "mina".into(),
                    role: Role::Editor,
                    password_hash: None,
                    disabled: false,
                    created_at: "now".into(),
                })
                .unwrap();
            store.audit("mina", "upload", Some("c1"), "recipients.csv").unwrap();
            store.audit("mina", "check", Some("c2"), "").unwrap();
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(store.user("mina").unwrap().unwrap().role, Role::Editor);
        let log = store.audit_log(&AuditFilter::default(), 10).unwrap();
        assert_eq!(
            log.iter().map(|e| e.action.as_str()).collect::<Vec<_>>(),
            ["check", "upload"]
        );
        assert_eq!(store.audit_log(&AuditFilter::campaign("c1"), 10).unwrap().len(), 1);
    }

    #[test]
    fn a_sign_in_link_works_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("console.db")).unwrap();
        store
            .put_link(
                "t",
                &SignInLink {
                    user: "a".into(),
                    expires: 1,
                },
            )
            .unwrap();
        assert!(store.take_link("t").unwrap().is_some());
        assert!(store.take_link("t").unwrap().is_none());
    }

    #[test]
    fn roles_are_ordered() {
        assert!(Role::Viewer < Role::Editor && Role::Editor < Role::Approver && Role::Approver < Role::Admin);
        for role in Role::ALL {
            assert_eq!(Role::parse(role.as_str()), Some(role));
        }
    }
}
