//! Personal API tokens: made on the account page and shown once, kept as their SHA-256 digest, listed with their last use, revocable by their user or an administrator; a token acts as its user with the user's role at the time of use.

use super::auth::{unix_now, Signed};
use super::error::ConsoleError;
use super::store::{Session, Store, TOKENS};
use super::Console;
use axum::http::{header, HeaderMap};
use serde::{Deserialize, Serialize};

/// What every token's text starts with, so that a leaked one is recognised (secret scanners, logs).
pub const PREFIX: &str = "msgbatch_";

/// A token's use is written (and audited as a sign-in) at most this often.
const USE_RECORDED_EVERY: i64 = 60 * 60;

/// Scopes beyond acting as the user.
pub const SCOPE_METRICS: &str = "metrics";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ApiToken {
    /// Shown in lists and the audit log; never the token itself.
    pub id: String,
    pub user: String,
    pub name: String,
    pub created_at: String,
    /// Unix seconds after which it no longer works.
    pub expires: Option<i64>,
    /// Unix seconds of its last recorded use.
    pub last_used: Option<i64>,
    #[serde(default)]
    pub scopes: Vec<String>,
}

impl ApiToken {
    pub fn expired(&self, now: i64) -> bool {
        self.expires.is_some_and(|expires| now >= expires)
    }
}

/// The digest a token is kept under: its text is 256 random bits, so one SHA-256 suffices.
pub fn digest(token: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
    digest.as_ref().iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Makes a token for `user`; answers its text, which is not kept anywhere.
pub fn make(
    store: &Store,
    user: &str,
    name: &str,
    days: Option<u32>,
    scopes: Vec<String>,
) -> Result<(String, ApiToken), ConsoleError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 80 {
        return Err(ConsoleError::invalid(crate::word!(refuse_token_name), vec![]));
    }
    if days.is_some_and(|days| !(1..=3650).contains(&days)) {
        return Err(ConsoleError::invalid(crate::word!(refuse_token_days), vec![]));
    }
    let text = format!("{PREFIX}{}", super::auth::random_token());
    let token = ApiToken {
        id: super::auth::random_token()[..12].to_string(),
        user: user.to_string(),
        name: name.to_string(),
        created_at: super::campaigns::now_text(),
        expires: days.map(|days| unix_now() + i64::from(days) * 24 * 60 * 60),
        last_used: None,
        scopes,
    };
    store.put_in(TOKENS, &digest(&text), &token)?;
    store.audit(
        user,
        "made an API token",
        None,
        &format!("{} ({})", token.name, token.id),
    )?;
    Ok((text, token))
}

/// Every token, or a user's, newest first.
pub fn list(store: &Store, user: Option<&str>) -> Result<Vec<ApiToken>, ConsoleError> {
    let mut tokens: Vec<ApiToken> = store
        .entries_in::<ApiToken>(TOKENS)?
        .into_iter()
        .map(|(_, token)| token)
        .filter(|token| user.is_none_or(|user| token.user == user))
        .collect();
    tokens.sort_by(|a, b| b.created_at.cmp(&a.created_at));
    Ok(tokens)
}

/// Revokes the token `id`: its user's own, or anyone's for an administrator.
pub fn revoke(store: &Store, by: &Signed, id: &str) -> Result<(), ConsoleError> {
    let admin = by.can(super::store::Role::Admin);
    for (digest, token) in store.entries_in::<ApiToken>(TOKENS)? {
        if token.id == id && (admin || token.user == by.user.name) {
            store.remove_in(TOKENS, &digest)?;
            store.audit(
                &by.user.name,
                "revoked an API token",
                None,
                &format!("{} ({}) of {}", token.name, token.id, token.user),
            )?;
            return Ok(());
        }
    }
    Err(ConsoleError::NotFound)
}

/// The person an API request acts for: its `Authorization: Bearer` token, live, of a user not
/// disabled, with the user's role now. Cookies are never read here.
pub fn authenticate(console: &Console, headers: &HeaderMap) -> Result<(Signed, ApiToken), ConsoleError> {
    let text = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        // The scheme's name is case-insensitive (RFC 9110, 11.1).
        .and_then(|value| value.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .filter(|text| text.starts_with(PREFIX))
        .ok_or(ConsoleError::SignIn)?;
    let key = digest(text);
    let mut token: ApiToken = console.store.get_in(TOKENS, &key)?.ok_or(ConsoleError::SignIn)?;
    let now = unix_now();
    if token.expired(now) {
        return Err(ConsoleError::SignIn);
    }
    let user = console.store.user(&token.user)?.ok_or(ConsoleError::SignIn)?;
    if user.disabled {
        return Err(ConsoleError::SignIn);
    }
    if token.last_used.is_none_or(|last| now - last >= USE_RECORDED_EVERY) {
        token.last_used = Some(now);
        console.store.put_in(TOKENS, &key, &token)?;
        console.store.audit(
            &user.name,
            "signed in with an API token",
            None,
            &format!("{} ({})", token.name, token.id),
        )?;
    }
    let signed = Signed {
        token: String::new(),
        session: Session {
            user: user.name.clone(),
            // No form is taken on a token (the API reads no CSRF field); a value nobody holds, so
            // that a form check could never pass on one.
            csrf: super::auth::random_token(),
            created: now,
            last_seen: now,
        },
        words: console.words_for(headers),
        user,
    };
    Ok((signed, token))
}
