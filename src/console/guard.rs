//! What every answer of the console passes through: the `Host` check (no DNS rebinding) and the security headers (CSP with embedded assets only, no framing, no sniffing, no caching of pages).

use super::error::ConsoleError;
use super::Shared;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'";

/// Refuses a request whose `Host` the console does not serve, then adds the headers.
pub async fn guard(State(console): State<Shared>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if !console.hosts.contains(&host) {
        return with_headers(&console, ConsoleError::WrongHost(host).into_response());
    }
    let response = next.run(request).await;
    with_headers(&console, response)
}

fn with_headers(console: &Shared, mut response: Response) -> Response {
    let headers = response.headers_mut();
    // A page may narrow it further (summary.html: no script at all); none widens it.
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        );
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // Only a run's summary is shown inside the console's own results page (SAMEORIGIN).
    if !headers.contains_key(header::X_FRAME_OPTIONS) {
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    if console.secure {
        headers.insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static("max-age=31536000"),
        );
    }
    response
}

/// The `Host` values a console listening on `address` answers to: the address itself, and
/// `localhost` for a loopback one; with a public URL, that URL's host (and port).
pub fn served_hosts(address: std::net::SocketAddr, public_url: Option<&str>) -> Vec<String> {
    let port = address.port();
    let mut hosts = Vec::new();
    let ip = address.ip();
    let ip_text = match ip {
        std::net::IpAddr::V6(v6) => format!("[{v6}]"),
        std::net::IpAddr::V4(v4) => v4.to_string(),
    };
    hosts.push(format!("{ip_text}:{port}"));
    if ip.is_loopback() {
        hosts.push(format!("localhost:{port}"));
        hosts.push(format!("127.0.0.1:{port}"));
        hosts.push(format!("[::1]:{port}"));
    }
    if let Some(url) = public_url {
        if let Ok(url) = reqwest::Url::parse(url) {
            if let Some(host) = url.host_str() {
                let host = host.to_ascii_lowercase();
                match url.port() {
                    Some(port) => hosts.push(format!("{host}:{port}")),
                    None => hosts.push(host),
                }
            }
        }
    }
    hosts.sort();
    hosts.dedup();
    hosts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loopback_console_answers_to_its_port_only() {
        let hosts = served_hosts("127.0.0.1:8080".parse().unwrap(), None);
        assert!(hosts.contains(&"localhost:8080".to_string()));
        assert!(hosts.contains(&"127.0.0.1:8080".to_string()));
        assert!(!hosts.contains(&"localhost".to_string()));
        assert!(!hosts.iter().any(|host| host.starts_with("evil")));
    }

    #[test]
    fn a_proxied_console_answers_to_its_public_host() {
        let hosts = served_hosts("127.0.0.1:8080".parse().unwrap(), Some("https://Send.Example.com/"));
        assert!(hosts.contains(&"send.example.com".to_string()));
    }
}
