//! What every answer of the console passes through: the `Host` check (no DNS rebinding), error pages drawn in the request's language, and the security headers (CSP with embedded assets only, no framing, no sniffing, no caching of pages).

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
    let words = console.words_for(request.headers());
    if !console.hosts.contains(&host) {
        let response = in_language(ConsoleError::WrongHost(host).into_response(), words, || {
            "/campaigns".to_string()
        });
        return with_headers(&console, response);
    }
    // Kept (cheap clones of the header and the path) for an answer that needs them: an error
    // page's way back, a sign-in's way back to the page.
    let referer = request.headers().get(header::REFERER).cloned();
    let back = || super::error::way_back(&host, referer.as_ref().and_then(|value| value.to_str().ok()));
    // Where a person sent to sign in comes back to: the page asked for, or the page a form was
    // sent from (its text kept in the browser meanwhile, see keep.js).
    let asked = (request.method() == axum::http::Method::GET).then(|| request.uri().path_and_query().cloned());
    let response = next.run(request).await;
    let response = back_after_sign_in(response, || match &asked {
        Some(path) => path
            .as_ref()
            .map_or_else(|| "/campaigns".to_string(), |path| path.to_string()),
        None => back(),
    });
    with_headers(&console, in_language(response, words, back))
}

/// A "sign in first" answer names the page to come back to (`/signin?next=…`).
fn back_after_sign_in(mut response: Response, here: impl FnOnce() -> String) -> Response {
    let to_sign_in = response
        .headers()
        .get(header::LOCATION)
        .is_some_and(|to| to == "/signin");
    if !to_sign_in {
        return response;
    }
    let here = here();
    if here.starts_with('/') && !here.starts_with("/signin") {
        let query = serde_urlencoded::to_string([("next", here)]).unwrap_or_default();
        if let Ok(value) = HeaderValue::from_str(&format!("/signin?{query}")) {
            response.headers_mut().insert(header::LOCATION, value);
        }
    }
    response
}

/// A `next` a sign-in may lead to: a path of this console, never another site (`//evil`,
/// `/\\evil`, `https://…`).
pub fn local_path(next: &str) -> Option<&str> {
    let safe = next.starts_with('/')
        && !next.starts_with("//")
        && !next.starts_with("/\\")
        && !next.contains(['\\', '\r', '\n'])
        && !next.starts_with("/signin");
    safe.then_some(next)
}

/// An error answer drawn again in the request's language, with its way back (the status stays).
fn in_language(response: Response, words: &'static super::words::Words, back: impl FnOnce() -> String) -> Response {
    let Some(page) = response.extensions().get::<super::error::ErrorPage>().cloned() else {
        return response;
    };
    let status = response.status();
    let mut drawn = page.render(words, &back());
    *drawn.status_mut() = status;
    drawn
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
    fn a_sign_in_leads_back_only_to_a_page_of_this_console() {
        assert_eq!(local_path("/campaigns/x/edit"), Some("/campaigns/x/edit"));
        for outside in [
            "//evil.example/x",
            "https://evil.example",
            "/\\evil.example",
            "evil",
            "/signin?next=/x",
            "",
        ] {
            assert_eq!(local_path(outside), None, "{outside}");
        }
    }

    proptest::proptest! {
        #[test]
        fn no_next_leads_off_the_console(next in "\\PC{0,30}") {
            if let Some(path) = local_path(&next) {
                proptest::prop_assert!(path.starts_with('/') && !path.starts_with("//") && !path.contains('\\'));
            }
        }
    }

    #[test]
    fn a_proxied_console_answers_to_its_public_host() {
        let hosts = served_hosts("127.0.0.1:8080".parse().unwrap(), Some("https://Send.Example.com/"));
        assert!(hosts.contains(&"send.example.com".to_string()));
    }
}
