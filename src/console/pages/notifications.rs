//! The notifications page (administrators): the channels notices go to, each with its events, added and removed; the log of deliveries.

use super::filters;
use super::{render, to, Me};
use crate::console::auth::{Admin, Posted};
use crate::console::error::ConsoleError;
use crate::console::notify::{Channel, Delivery, NoticeKind, SmtpSecurity, Target};
use crate::console::words::Words;
use crate::console::Shared;
use askama::Template;
use axum::extract::{Path, State as Console};
use axum::response::Response;

#[derive(Template)]
#[template(path = "console/notifications.html")]
struct NotificationsPage {
    w: &'static Words,
    me: Me,
    channels: Vec<ChannelView>,
    kinds: Vec<(&'static str, &'static str)>,
    log: Vec<DeliveryView>,
}

struct ChannelView {
    id: String,
    address: String,
    events: String,
}

struct DeliveryView {
    at: String,
    channel: String,
    event: &'static str,
    campaign: String,
    attempts: u32,
    error: String,
}

pub async fn page(Console(console): Console<Shared>, Admin(signed): Admin) -> Result<Response, ConsoleError> {
    let w = signed.words;
    let channels = console
        .channels()?
        .into_iter()
        .map(|channel| ChannelView {
            events: channel
                .events
                .iter()
                .map(|kind| kind.words(w))
                .collect::<Vec<_>>()
                .join(", "),
            address: channel.address(),
            id: channel.id,
        })
        .collect();
    let log = console
        .deliveries()?
        .into_iter()
        .map(|delivery: Delivery| DeliveryView {
            at: delivery.at,
            channel: delivery.channel,
            event: delivery.event.words(w),
            campaign: delivery.campaign.unwrap_or_default(),
            attempts: delivery.attempts,
            error: delivery.error.unwrap_or_default(),
        })
        .collect();
    render(NotificationsPage {
        w,
        me: Me::of(&signed),
        channels,
        kinds: NoticeKind::ALL
            .iter()
            .map(|kind| (kind.as_str(), kind.words(w)))
            .collect(),
        log,
    })
}

/// The form: a target of either kind and the events ticked (`event` repeated).
pub async fn add(
    Console(console): Console<Shared>,
    posted: Posted<Vec<(String, String)>, Admin>,
) -> Result<Response, ConsoleError> {
    let Admin(signed) = posted.signed;
    let channel = read_channel(&posted.form)?;
    let mut channels = console.channels()?;
    let address = channel.address();
    channels.push(channel);
    console.put_channels(&channels)?;
    console
        .store
        .audit(&signed.user.name, "notification channel added", None, &address)?;
    Ok(to("/notifications".into()))
}

pub async fn remove(
    Console(console): Console<Shared>,
    Path(id): Path<String>,
    posted: Posted<Vec<(String, String)>, Admin>,
) -> Result<Response, ConsoleError> {
    let Admin(signed) = posted.signed;
    let mut channels = console.channels()?;
    let before = channels.len();
    let removed: Vec<String> = channels
        .iter()
        .filter(|channel| channel.id == id)
        .map(Channel::address)
        .collect();
    channels.retain(|channel| channel.id != id);
    if channels.len() == before {
        return Err(ConsoleError::NotFound);
    }
    console.put_channels(&channels)?;
    console.store.audit(
        &signed.user.name,
        "notification channel removed",
        None,
        &removed.join(", "),
    )?;
    Ok(to("/notifications".into()))
}

/// A channel from the form's fields, refused by field when a value cannot be used.
fn read_channel(fields: &[(String, String)]) -> Result<Channel, ConsoleError> {
    let field = |name: &str| {
        fields
            .iter()
            .find(|(key, _)| key == name)
            .map_or("", |(_, value)| value.trim())
    };
    let events: Vec<NoticeKind> = fields
        .iter()
        .filter(|(key, _)| key == "event")
        .filter_map(|(_, value)| NoticeKind::parse(value))
        .collect();
    if events.is_empty() {
        return Err(ConsoleError::invalid(crate::word!(refuse_notice_no_event), vec![]));
    }
    let target = match field("kind") {
        "webhook" => {
            let url = field("url");
            if !reachable_safely(url) {
                return Err(ConsoleError::invalid(
                    crate::word!(refuse_notice_url),
                    vec![("url", url.into())],
                ));
            }
            Target::Webhook { url: url.to_string() }
        }
        "email" => {
            let security = match field("security") {
                "tls" => SmtpSecurity::Tls,
                "plain" => SmtpSecurity::Plain,
                _ => SmtpSecurity::StartTls,
            };
            let host = field("host");
            let loopback = ["localhost", "127.0.0.1", "::1"].contains(&host);
            let port: u16 = field("port").parse().unwrap_or(0);
            let to: Vec<String> = field("to")
                .split([',', ' ', ';'])
                .filter(|address| !address.is_empty())
                .map(str::to_string)
                .collect();
            let addresses_read = std::iter::once(field("from"))
                .chain(to.iter().map(String::as_str))
                .all(|address| address.parse::<lettre::Address>().is_ok());
            if host.is_empty()
                || port == 0
                || to.is_empty()
                || !addresses_read
                || (security == SmtpSecurity::Plain && !loopback)
            {
                return Err(ConsoleError::invalid(crate::word!(refuse_notice_email), vec![]));
            }
            let optional = |value: &str| (!value.is_empty()).then(|| value.to_string());
            Target::Email {
                host: host.to_string(),
                port,
                security,
                from: field("from").to_string(),
                to,
                user: optional(field("user")),
                password_env: optional(field("password_env")),
            }
        }
        _ => return Err(ConsoleError::invalid(crate::word!(refuse_notice_kind), vec![])),
    };
    Ok(Channel {
        id: crate::console::auth::random_token()[..12].to_string(),
        target,
        events,
    })
}

/// HTTPS anywhere; plain HTTP only to this machine (the campaign names and figures a notice
/// carries do not cross a network in clear).
pub(super) fn reachable_safely(url: &str) -> bool {
    match reqwest::Url::parse(url) {
        Ok(url) if url.scheme() == "https" => url.host_str().is_some(),
        Ok(url) if url.scheme() == "http" => matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]")),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fields(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .collect()
    }

    #[test]
    fn a_webhook_needs_https_or_this_machine_and_an_event() {
        let webhook = |url: &str| read_channel(&fields(&[("kind", "webhook"), ("url", url), ("event", "approved")]));
        assert!(webhook("https://hooks.slack.com/services/T/B/X").is_ok());
        assert!(webhook("http://127.0.0.1:9000/hook").is_ok());
        assert!(
            webhook("http://hooks.example.com/hook").is_err(),
            "clear text across a network"
        );
        assert!(webhook("file:///etc/passwd").is_err());
        assert!(
            read_channel(&fields(&[("kind", "webhook"), ("url", "https://a.example/x")])).is_err(),
            "no event"
        );
    }

    #[test]
    fn an_email_channel_reads_its_addresses_and_keeps_plain_smtp_on_this_machine() {
        let email = |host: &str, security: &str, to: &str| {
            read_channel(&fields(&[
                ("kind", "email"),
                ("host", host),
                ("port", "2525"),
                ("security", security),
                ("from", "msgbatch@example.com"),
                ("to", to),
                ("event", "finished"),
            ]))
        };
        let channel = email("127.0.0.1", "plain", "a@example.com, b@example.com").unwrap();
        let Target::Email { to, .. } = channel.target else {
            panic!("an email channel")
        };
        assert_eq!(to, ["a@example.com", "b@example.com"]);
        assert!(email("smtp.example.com", "plain", "a@example.com").is_err());
        assert!(email("smtp.example.com", "starttls", "a@example.com").is_ok());
        assert!(email("smtp.example.com", "starttls", "not an address").is_err());
    }

    proptest! {
        /// Any form: a channel or a refusal, never a panic; a channel has an event.
        #[test]
        fn any_form_is_a_channel_with_events_or_refused(
            kind in "(webhook|email|x)", url in "\\PC{0,30}", host in "[a-z0-9.:]{0,12}", port in "\\PC{0,6}", to in "\\PC{0,30}", event in "[a-z_]{0,20}",
        ) {
            let form = fields(&[("kind", &kind), ("url", &url), ("host", &host), ("port", &port), ("from", "x@example.com"), ("to", &to), ("event", &event)]);
            if let Ok(channel) = read_channel(&form) {
                prop_assert!(!channel.events.is_empty());
            }
        }
    }
}
