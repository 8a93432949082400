//! People: sign in and out, the one-time sign-in link, one's own password, the users page (admin), and the audit log.

use super::filters;
use super::tokens::TokenView;
use super::{render, to, Me};
use crate::console::auth::{self, Admin, Posted, Signed};
use crate::console::campaigns::CampaignRecord;
use crate::console::error::ConsoleError;
use crate::console::store::{AuditEntry, AuditFilter, Role, Session, User};
use crate::console::words::Words;
use crate::console::Shared;
use askama::Template;
use axum::extract::{ConnectInfo, Path, Query, State as Console};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::Form;
use serde::Deserialize;
use std::net::SocketAddr;

/// The cookie that carries a sign-in form's token before there is a session (double submit).
const PRE_SESSION: &str = "msgbatch_signin";

#[derive(Template)]
#[template(path = "console/signin.html")]
struct SignInPage {
    w: &'static Words,
    token: String,
    message: String,
    next: String,
}

fn cookie_header(console: &Shared, name: &str, value: &str, max_age: Option<i64>) -> String {
    let mut cookie = format!("{name}={value}; Path=/; HttpOnly; SameSite=Strict");
    if console.secure {
        cookie.push_str("; Secure");
    }
    if let Some(age) = max_age {
        cookie.push_str(&format!("; Max-Age={age}"));
    }
    cookie
}

fn sign_in_page(
    console: &Shared,
    headers: &HeaderMap,
    message: String,
    status: axum::http::StatusCode,
    next: &str,
) -> Response {
    let token = auth::random_token();
    let page = SignInPage {
        w: super::words(console, headers),
        token: token.clone(),
        message,
        next: crate::console::guard::local_path(next).unwrap_or_default().to_string(),
    };
    match render(page) {
        Ok(mut response) => {
            *response.status_mut() = status;
            if let Ok(value) = cookie_header(console, PRE_SESSION, &token, None).parse() {
                response.headers_mut().append(header::SET_COOKIE, value);
            }
            response
        }
        Err(error) => error.into_response(),
    }
}

#[derive(Deserialize)]
pub struct NextQuery {
    #[serde(default)]
    next: String,
}

/// The sign-in form; after a session ended, it says so and leads back to the page (`next`).
pub async fn sign_in_form(
    Console(console): Console<Shared>,
    headers: HeaderMap,
    axum::extract::Query(query): axum::extract::Query<NextQuery>,
) -> Response {
    let message = if crate::console::guard::local_path(&query.next).is_some() {
        super::words(&console, &headers).sign_in_to_continue.to_string()
    } else {
        String::new()
    };
    sign_in_page(&console, &headers, message, axum::http::StatusCode::OK, &query.next)
}

#[derive(Deserialize)]
pub struct SignInForm {
    #[serde(default)]
    token: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    password: String,
    /// The page to go back to (a path of this console), after a session ended.
    #[serde(default)]
    next: String,
}

/// Starts a session for `user`: a new token and CSRF secret, the cookie set.
fn start_session(console: &Shared, user: &str, then: &str) -> Result<Response, ConsoleError> {
    let token = auth::random_token();
    let now = auth::unix_now();
    console.store.put_session(
        &token,
        &Session {
            user: user.to_string(),
            csrf: auth::random_token(),
            created: now,
            last_seen: now,
        },
    )?;
    let mut response = to(then.to_string());
    let value = cookie_header(console, console.cookie_name(), &token, None);
    response
        .headers_mut()
        .append(header::SET_COOKIE, value.parse().map_err(ConsoleError::internal)?);
    let clear = cookie_header(console, PRE_SESSION, "", Some(0));
    response
        .headers_mut()
        .append(header::SET_COOKIE, clear.parse().map_err(ConsoleError::internal)?);
    Ok(response)
}

pub async fn sign_in(
    Console(console): Console<Shared>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Form(form): Form<SignInForm>,
) -> Result<Response, ConsoleError> {
    let expected = auth::cookie(&headers, PRE_SESSION).unwrap_or("");
    if expected.is_empty() || !auth::same_token(expected, &form.token) {
        return Err(ConsoleError::Csrf);
    }
    let client = console.proxies.client_address(peer.ip(), &headers);
    let attempt = console.limiter.attempt(&form.name, client)?;
    let user = console.store.user(&form.name)?;
    let hash = user
        .as_ref()
        .filter(|user| !user.disabled)
        .and_then(|user| user.password_hash.clone());
    let password = form.password.clone();
    let verified = tokio::task::spawn_blocking(move || match hash {
        Some(hash) => auth::verify_password(&password, &hash),
        None => {
            // As long as a real check, so the time does not tell which names exist.
            let _ = auth::hash_password(&password);
            false
        }
    })
    .await
    .map_err(ConsoleError::internal)?;
    if !verified {
        // The attempt stays counted as failed.
        return Ok(sign_in_page(
            &console,
            &headers,
            super::words(&console, &headers).wrong_password.into(),
            axum::http::StatusCode::UNAUTHORIZED,
            &form.next,
        ));
    }
    console.limiter.succeeded(attempt);
    console.store.audit(&form.name, "signed in", None, "")?;
    let then = crate::console::guard::local_path(&form.next).unwrap_or("/campaigns");
    start_session(&console, &form.name, then)
}

pub async fn sign_out(
    Console(console): Console<Shared>,
    posted: Posted<super::flow::Empty>,
) -> Result<Response, ConsoleError> {
    console.store.remove_session(&posted.signed.token)?;
    let mut response = to("/signin".into());
    let clear = cookie_header(&console, console.cookie_name(), "", Some(0));
    response
        .headers_mut()
        .append(header::SET_COOKIE, clear.parse().map_err(ConsoleError::internal)?);
    Ok(response)
}

#[derive(Template)]
#[template(path = "console/welcome.html")]
struct WelcomePage {
    w: &'static Words,
    user: String,
    token: String,
}

fn live_link(console: &Shared, token: &str) -> Result<String, ConsoleError> {
    let link = console
        .store
        .peek_link(token)?
        .filter(|link| link.expires > auth::unix_now());
    link.map(|link| link.user)
        .ok_or_else(|| ConsoleError::forbidden(crate::word!(refuse_link_used), vec![]))
}

pub async fn welcome_form(
    Console(console): Console<Shared>,
    headers: HeaderMap,
    Path(token): Path<String>,
) -> Result<Response, ConsoleError> {
    let user = live_link(&console, &token)?;
    render(WelcomePage {
        w: super::words(&console, &headers),
        user,
        token,
    })
}

#[derive(Deserialize)]
pub struct PasswordForm {
    #[serde(default)]
    password: String,
    #[serde(default)]
    again: String,
}

/// Sets the password through a one-time link (the token in the path is the form's secret) and signs in.
pub async fn welcome(
    Console(console): Console<Shared>,
    Path(token): Path<String>,
    Form(form): Form<PasswordForm>,
) -> Result<Response, ConsoleError> {
    live_link(&console, &token)?;
    auth::check_new_password(&form.password, &form.again)?;
    let link = console
        .store
        .take_link(&token)?
        .ok_or_else(|| ConsoleError::forbidden(crate::word!(refuse_link_used), vec![]))?;
    let mut user = console.store.user(&link.user)?.ok_or(ConsoleError::NotFound)?;
    let password = form.password;
    user.password_hash = Some(
        tokio::task::spawn_blocking(move || auth::hash_password(&password))
            .await
            .map_err(ConsoleError::internal)??,
    );
    console.store.put_user(&user)?;
    console.store.remove_sessions_of(&user.name)?;
    console
        .store
        .audit(&user.name, "set password", None, "through a sign-in link")?;
    start_session(&console, &user.name, "/campaigns")
}

#[derive(Template)]
#[template(path = "console/account.html")]
struct AccountPage {
    w: &'static Words,
    me: Me,
    message: String,
    /// The person's API tokens, and one just made (shown this once).
    tokens: Vec<TokenView>,
    made: Option<String>,
}

pub async fn account(Console(console): Console<Shared>, signed: Signed) -> Result<Response, ConsoleError> {
    account_page(&console, &signed, String::new(), None)
}

/// The account page, with a message or a token just made.
pub(super) fn account_page(
    console: &Shared,
    signed: &Signed,
    message: String,
    made: Option<String>,
) -> Result<Response, ConsoleError> {
    render(AccountPage {
        w: signed.words,
        me: Me::of(signed),
        message,
        tokens: TokenView::all(console, Some(&signed.user.name), signed.words)?,
        made,
    })
}

#[derive(Deserialize)]
pub struct ChangePasswordForm {
    #[serde(default)]
    current: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    again: String,
}

pub async fn change_password(
    Console(console): Console<Shared>,
    posted: Posted<ChangePasswordForm>,
) -> Result<Response, ConsoleError> {
    let Posted { signed, form } = posted;
    auth::check_new_password(&form.password, &form.again)?;
    let mut user = signed.user.clone();
    let hash = user.password_hash.clone().unwrap_or_default();
    let (current, password) = (form.current, form.password);
    let new_hash = tokio::task::spawn_blocking(move || {
        if auth::verify_password(&current, &hash) {
            auth::hash_password(&password).map(Some)
        } else {
            Ok(None)
        }
    })
    .await
    .map_err(ConsoleError::internal)??
    .ok_or_else(|| ConsoleError::forbidden(crate::word!(refuse_password_wrong), vec![]))?;
    user.password_hash = Some(new_hash);
    console.store.put_user(&user)?;
    // Other sessions end; this one goes on.
    console.store.remove_sessions_of(&user.name)?;
    console.store.put_session(&signed.token, &signed.session)?;
    console.store.audit(&user.name, "changed password", None, "")?;
    account_page(&console, &signed, signed.words.password_changed.into(), None)
}

#[derive(Template)]
#[template(path = "console/users.html")]
struct UsersPage {
    w: &'static Words,
    me: Me,
    /// Everyone's API tokens, for an administrator to revoke.
    tokens: Vec<TokenView>,
    users: Vec<User>,
    roles: Vec<&'static str>,
    link: String,
}

pub async fn users(Console(console): Console<Shared>, Admin(signed): Admin) -> Result<Response, ConsoleError> {
    users_page(&console, signed, String::new())
}

fn users_page(console: &Shared, signed: Signed, link: String) -> Result<Response, ConsoleError> {
    let mut users = console.store.users()?;
    users.sort_by(|a, b| a.name.cmp(&b.name));
    render(UsersPage {
        tokens: TokenView::all(console, None, signed.words)?,
        w: signed.words,
        me: Me::of(&signed),
        users,
        roles: Role::ALL.iter().map(|role| role.as_str()).collect(),
        link,
    })
}

#[derive(Deserialize)]
pub struct AddUserForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    role: String,
}

fn valid_user_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 40
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | '@'))
}

/// Adds a user and shows their one-time sign-in link to hand over.
pub async fn add_user(
    Console(console): Console<Shared>,
    posted: Posted<AddUserForm, Admin>,
) -> Result<Response, ConsoleError> {
    let Posted {
        signed: Admin(signed),
        form,
    } = posted;
    let name = form.name.trim().to_string();
    if !valid_user_name(&name) {
        return Err(ConsoleError::invalid(crate::word!(refuse_user_name), vec![]));
    }
    let role = Role::parse(&form.role).ok_or_else(|| ConsoleError::Invalid(format!("no role {:?}", form.role)))?;
    if console.store.user(&name)?.is_some() {
        return Err(ConsoleError::conflict(
            crate::word!(refuse_user_exists),
            vec![("name", name.into())],
        ));
    }
    console.store.put_user(&User {
        name: name.clone(),
        role,
        password_hash: None,
        disabled: false,
        created_at: crate::console::campaigns::now_text(),
    })?;
    let link = console.sign_in_link(&name)?;
    console.store.audit(
        &signed.user.name,
        "added user",
        None,
        &format!("{name} ({})", role.as_str()),
    )?;
    users_page(&console, signed, format!("{name}: {link}"))
}

#[derive(Deserialize)]
pub struct ChangeUserForm {
    #[serde(default)]
    role: String,
    #[serde(default)]
    disabled: Option<String>,
    #[serde(default)]
    new_link: Option<String>,
}

pub async fn change_user(
    Console(console): Console<Shared>,
    Path(name): Path<String>,
    posted: Posted<ChangeUserForm, Admin>,
) -> Result<Response, ConsoleError> {
    let Posted {
        signed: Admin(signed),
        form,
    } = posted;
    let mut user = console.store.user(&name)?.ok_or(ConsoleError::NotFound)?;
    if form.new_link.is_some() {
        let link = console.sign_in_link(&name)?;
        console
            .store
            .audit(&signed.user.name, "new sign-in link", None, &name)?;
        return users_page(&console, signed, format!("{name}: {link}"));
    }
    let role = Role::parse(&form.role).ok_or_else(|| ConsoleError::Invalid(format!("no role {:?}", form.role)))?;
    let disabled = form.disabled.is_some();
    if name == signed.user.name && (role != Role::Admin || disabled) {
        return Err(ConsoleError::conflict(crate::word!(refuse_own_administration), vec![]));
    }
    user.role = role;
    user.disabled = disabled;
    console.store.put_user(&user)?;
    if disabled {
        console.store.remove_sessions_of(&name)?;
    }
    console.store.audit(
        &signed.user.name,
        "changed user",
        None,
        &format!("{name}: {}{}", role.as_str(), if disabled { ", disabled" } else { "" }),
    )?;
    Ok(to("/users".into()))
}

#[derive(Template)]
#[template(path = "console/audit.html")]
struct AuditPage {
    w: &'static Words,
    me: Me,
    /// Each entry with its campaign's name (the id when the campaign is gone).
    entries: Vec<(AuditEntry, String)>,
    filter: AuditFilter,
    /// What the filter offers: campaigns (id, name) and people, newest campaign first.
    campaigns: Vec<(String, String)>,
    people: Vec<String>,
}

/// The audit log, newest first: each line names its campaign and person, filtered by campaign,
/// person and month (Korean time).
pub async fn audit(
    Console(console): Console<Shared>,
    signed: Signed,
    Query(filter): Query<AuditFilter>,
) -> Result<Response, ConsoleError> {
    let mut records: Vec<CampaignRecord> = console.store.campaigns()?;
    records.sort_by(|a, b| b.created_at.cmp(&a.created_at));
    let names: std::collections::HashMap<&str, &str> = records
        .iter()
        .map(|record| (record.id.as_str(), record.name.as_str()))
        .collect();
    let entries = console
        .store
        .audit_log(&filter, 500)?
        .into_iter()
        .map(|entry| {
            let name = entry
                .campaign
                .as_deref()
                .map(|id| names.get(id).copied().unwrap_or(id).to_string())
                .unwrap_or_default();
            (entry, name)
        })
        .collect();
    let mut people: Vec<String> = console.store.users()?.into_iter().map(|user| user.name).collect();
    people.sort();
    render(AuditPage {
        w: signed.words,
        me: Me::of(&signed),
        entries,
        campaigns: records
            .iter()
            .map(|record| (record.id.clone(), record.name.clone()))
            .collect(),
        people,
        filter,
    })
}
