//! Who is asking: argon2id passwords, session cookies, the CSRF token of every state-changing form, roles (the sign-in limits are `sign_in_limit.rs`).

use super::error::ConsoleError;
use super::store::{Role, Session, User};
use super::words::Words;
use super::Shared;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::time::Duration;

/// A session ends after this long without a request.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// A one-time sign-in link works for this long.
pub const LINK_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);
pub const MIN_PASSWORD_CHARS: usize = 10;
/// Forms are small; uploads have their own limit.
const FORM_LIMIT: usize = 256 * 1024;

pub fn random_token() -> String {
    use rand::Rng;
    let bytes: [u8; 32] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn unix_now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// argon2id with the crate's defaults (19 MiB, 2 passes), as OWASP recommends.
pub fn hash_password(password: &str) -> Result<String, ConsoleError> {
    use rand::Rng;
    let salt_bytes: [u8; 16] = rand::rng().random();
    let salt = SaltString::encode_b64(&salt_bytes).map_err(ConsoleError::internal)?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(ConsoleError::internal)
}

pub fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash)
        .map(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
        .unwrap_or(false)
}

/// The password rule, in one place.
pub fn check_new_password(password: &str, again: &str) -> Result<(), ConsoleError> {
    if password != again {
        return Err(ConsoleError::invalid(crate::word!(refuse_passwords_differ), vec![]));
    }
    if password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(ConsoleError::invalid(
            crate::word!(refuse_password_short),
            vec![("n", MIN_PASSWORD_CHARS.to_string().into())],
        ));
    }
    Ok(())
}

/// Compares two tokens in time that does not depend on where they differ.
pub fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A cookie's value from the request.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// A person with a live session.
#[derive(Clone)]
pub struct Signed {
    pub user: User,
    pub token: String,
    pub session: Session,
    pub words: &'static Words,
}

impl Signed {
    /// Refuses unless the person's role is at least `role`, naming both.
    pub fn require(&self, role: Role) -> Result<(), ConsoleError> {
        if self.user.role >= role {
            Ok(())
        } else {
            Err(ConsoleError::forbidden(
                crate::word!(refuse_role),
                vec![
                    ("role", super::error::Figure::Role(role.as_str())),
                    ("name", self.user.name.clone().into()),
                    ("their", super::error::Figure::Role(self.user.role.as_str())),
                ],
            ))
        }
    }

    pub fn can(&self, role: Role) -> bool {
        self.user.role >= role
    }
}

impl FromRequestParts<Shared> for Signed {
    type Rejection = ConsoleError;

    async fn from_request_parts(parts: &mut Parts, console: &Shared) -> Result<Signed, ConsoleError> {
        // Read once a request: the campaign extractor and the form both ask who is signed in.
        if let Some(signed) = parts.extensions.get::<Signed>() {
            return Ok(signed.clone());
        }
        let signed = Signed::read(parts, console)?;
        parts.extensions.insert(signed.clone());
        Ok(signed)
    }
}

impl Signed {
    /// The session the request's cookie names, live and of a user not disabled.
    fn read(parts: &Parts, console: &Shared) -> Result<Signed, ConsoleError> {
        let token = cookie(&parts.headers, console.cookie_name())
            .ok_or(ConsoleError::SignIn)?
            .to_string();
        let mut session = console.store.session(&token)?.ok_or(ConsoleError::SignIn)?;
        let now = unix_now();
        if now - session.last_seen > IDLE_TIMEOUT.as_secs() as i64 {
            console.store.remove_session(&token)?;
            return Err(ConsoleError::SignIn);
        }
        let user = console.store.user(&session.user)?.ok_or(ConsoleError::SignIn)?;
        if user.disabled {
            console.store.remove_session(&token)?;
            return Err(ConsoleError::SignIn);
        }
        // Written at most once a minute: a page's requests do not each write the database.
        if now - session.last_seen >= 60 {
            session.last_seen = now;
            console.store.put_session(&token, &session)?;
        }
        Ok(Signed {
            user,
            token,
            session,
            words: console.words_for(&parts.headers),
        })
    }
}

#[derive(Deserialize)]
struct CsrfField {
    #[serde(default)]
    csrf: String,
}

/// A state-changing form from a signed-in person, its CSRF token checked against the session.
/// Who sent it is `R`: any signed-in person ([`Signed`]) or one holding a role ([`Editor`],
/// [`Approver`], [`Admin`]), checked after the CSRF token and before the handler runs.
pub struct Posted<T, R = Signed> {
    pub signed: R,
    pub form: T,
}

/// A signed-in person as an extractor may require them: any role, or at least one.
pub trait Holder: Sized {
    fn holding(signed: Signed) -> Result<Self, ConsoleError>;
}

impl Holder for Signed {
    fn holding(signed: Signed) -> Result<Signed, ConsoleError> {
        Ok(signed)
    }
}

/// A signed-in person holding at least a role: the extractor refuses (403, naming the role)
/// before the handler runs, so a handler states its role in its signature and cannot forget it.
macro_rules! role_extractor {
    ($name:ident, $role:expr) => {
        #[doc = concat!("A signed-in person whose role is ", stringify!($name), " or above.")]
        pub struct $name(pub Signed);

        impl Holder for $name {
            fn holding(signed: Signed) -> Result<$name, ConsoleError> {
                signed.require($role)?;
                Ok($name(signed))
            }
        }

        impl std::ops::Deref for $name {
            type Target = Signed;

            fn deref(&self) -> &Signed {
                &self.0
            }
        }

        impl FromRequestParts<Shared> for $name {
            type Rejection = ConsoleError;

            async fn from_request_parts(parts: &mut Parts, console: &Shared) -> Result<$name, ConsoleError> {
                $name::holding(Signed::from_request_parts(parts, console).await?)
            }
        }
    };
}

role_extractor!(Editor, Role::Editor);
role_extractor!(Approver, Role::Approver);
role_extractor!(Admin, Role::Admin);

impl<T: DeserializeOwned, R: Holder> FromRequest<Shared> for Posted<T, R> {
    type Rejection = ConsoleError;

    async fn from_request(request: Request, console: &Shared) -> Result<Posted<T, R>, ConsoleError> {
        let (mut parts, body) = request.into_parts();
        let signed = Signed::from_request_parts(&mut parts, console).await?;
        let bytes = axum::body::to_bytes(body, FORM_LIMIT)
            .await
            .map_err(|_| ConsoleError::TooLarge("the form is too large".into()))?;
        let field: CsrfField = serde_urlencoded::from_bytes(&bytes).map_err(|_| ConsoleError::Csrf)?;
        if !same_token(&field.csrf, &signed.session.csrf) {
            return Err(ConsoleError::Csrf);
        }
        let signed = R::holding(signed)?;
        let form = serde_urlencoded::from_bytes(&bytes)
            .map_err(|error| ConsoleError::Invalid(format!("the form could not be read: {error}")))?;
        Ok(Posted { signed, form })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_hash_is_argon2id_and_checks_only_its_password() {
        let hash = hash_password("correct horse battery").unwrap();
        assert!(hash.starts_with("$argon2id$"), "{hash}");
        assert!(verify_password("correct horse battery", &hash));
        assert!(!verify_password("correct horse batterx", &hash));
        assert!(!verify_password("x", "not a hash"));
    }

    #[test]
    fn cookies_are_found_by_exact_name() {
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, "a_x=1; a=2".parse().unwrap());
        assert_eq!(cookie(&headers, "a"), Some("2"));
        assert_eq!(cookie(&headers, "b"), None);
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same_token("abc", "abc"));
        assert!(!same_token("abc", "abd"));
        assert!(!same_token("abc", "ab"));
    }
}
