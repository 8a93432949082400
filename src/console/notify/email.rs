//! A notice by email over SMTP (lettre): SMTPS, STARTTLS required, or plain to a relay on this machine; the password from the server's environment.

use super::{Notice, SmtpSecurity, Target};
use lettre::message::header::ContentType;
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use std::time::Duration;

pub async fn send(target: &Target, notice: &Notice, text: &str) -> Result<(), String> {
    let Target::Email {
        host,
        port,
        security,
        from,
        to,
        user,
        password_env,
    } = target
    else {
        return Err("not an email channel".into());
    };
    let mut message = Message::builder()
        .from(from.parse().map_err(|error| format!("from {from:?}: {error}"))?)
        .subject(subject(notice))
        .header(ContentType::TEXT_PLAIN);
    for address in to {
        message = message.to(address.parse().map_err(|error| format!("to {address:?}: {error}"))?);
    }
    let message = message.body(text.to_string()).map_err(|error| error.to_string())?;
    let builder = match security {
        SmtpSecurity::Tls => AsyncSmtpTransport::<Tokio1Executor>::relay(host).map_err(|error| error.to_string())?,
        SmtpSecurity::StartTls => {
            AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(host).map_err(|error| error.to_string())?
        }
        SmtpSecurity::Plain => AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host),
    };
    let mut builder = builder.port(*port).timeout(Some(Duration::from_secs(10)));
    if let Some(user) = user {
        let password = password_env
            .as_deref()
            .and_then(|name| std::env::var(name).ok())
            .ok_or_else(|| "the SMTP password's environment variable is not set on the server".to_string())?;
        builder = builder.credentials(Credentials::new(user.clone(), password));
    }
    builder
        .build()
        .send(message)
        .await
        .map(|_| ())
        .map_err(|error| error.to_string())
}

/// `[msgbatch] winter-sale: approved`.
fn subject(notice: &Notice) -> String {
    match &notice.campaign {
        Some((_, name)) => format!("[msgbatch] {name}: {}", notice.kind.as_str().replace('_', " ")),
        None => format!("[msgbatch] {}", notice.kind.as_str().replace('_', " ")),
    }
}
