//! API tokens on the account page (made, shown once, listed with their last use, revoked) and on the users page (every token, for an administrator to revoke).

use super::people::account_page;
use super::to;
use crate::console::auth::Posted;
use crate::console::error::ConsoleError;
use crate::console::tokens::{self, ApiToken};
use crate::console::words::Words;
use crate::console::Shared;
use axum::extract::{Path, State as Console};
use axum::response::Response;
use serde::Deserialize;

/// A token as a list shows it: never its text.
pub struct TokenView {
    pub id: String,
    pub user: String,
    pub name: String,
    pub created: String,
    pub expires: String,
    pub last_used: String,
    pub metrics: bool,
}

impl TokenView {
    /// Every token, or a user's, in the words `w`, times in KST.
    pub fn all(console: &Shared, user: Option<&str>, w: &Words) -> Result<Vec<TokenView>, ConsoleError> {
        let at = |seconds: Option<i64>| {
            seconds
                .and_then(|seconds| chrono::DateTime::from_timestamp(seconds, 0))
                .map_or_else(
                    || w.token_never.to_string(),
                    |time| crate::campaign::quiet::wall_time(&time.to_rfc3339()),
                )
        };
        Ok(tokens::list(&console.store, user)?
            .into_iter()
            .map(|token: ApiToken| TokenView {
                created: crate::campaign::quiet::wall_time(&token.created_at),
                expires: at(token.expires),
                last_used: at(token.last_used),
                metrics: token.scopes.iter().any(|scope| scope == tokens::SCOPE_METRICS),
                id: token.id,
                user: token.user,
                name: token.name,
            })
            .collect())
    }
}

#[derive(Deserialize)]
pub struct MakeForm {
    #[serde(default)]
    name: String,
    /// Empty: no end.
    #[serde(default)]
    days: String,
    #[serde(default)]
    metrics: String,
}

/// Makes a token for the signed-in person and shows it once.
pub async fn make(Console(console): Console<Shared>, posted: Posted<MakeForm>) -> Result<Response, ConsoleError> {
    let Posted { signed, form } = posted;
    let days = match form.days.trim() {
        "" => None,
        text => Some(
            text.parse::<u32>()
                .map_err(|_| ConsoleError::invalid(crate::word!(refuse_token_days), vec![]))?,
        ),
    };
    let scopes = if form.metrics == "on" {
        vec![tokens::SCOPE_METRICS.to_string()]
    } else {
        Vec::new()
    };
    let (text, _) = tokens::make(&console.store, &signed.user.name, &form.name, days, scopes)?;
    account_page(&console, &signed, String::new(), Some(text))
}

#[derive(Deserialize)]
pub struct Empty {}

/// Revokes a token: one's own, or anyone's for an administrator (back to the page it was on).
pub async fn revoke(
    Console(console): Console<Shared>,
    Path(id): Path<String>,
    posted: Posted<Empty>,
) -> Result<Response, ConsoleError> {
    tokens::revoke(&console.store, &posted.signed, &id)?;
    Ok(to(if posted.signed.can(crate::console::store::Role::Admin) {
        "/users".to_string()
    } else {
        "/account".to_string()
    }))
}
