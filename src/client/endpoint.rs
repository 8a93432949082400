//! Which endpoint URLs the client talks to: `https://` anywhere, plain `http://` only to loopback unless allowed.

use super::ClientError;
use reqwest::Url;
use std::net::IpAddr;

/// Refuses a URL the credentials must not be sent to.
pub(super) fn check(url: &str, allow_insecure_http: bool) -> Result<(), ClientError> {
    let refuse = |reason: String| ClientError::Endpoint {
        url: url.to_string(),
        reason,
    };
    let parsed = Url::parse(url).map_err(|error| refuse(format!("not a URL: {error}")))?;
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if allow_insecure_http || is_loopback(&parsed) => Ok(()),
        "http" => Err(refuse(
            "plain http:// to a host that is not loopback would send the API key and the recipients unencrypted; use https://"
                .into(),
        )),
        other => Err(refuse(format!("{other}:// is not http:// or https://"))),
    }
}

/// 127.0.0.0/8, `[::1]` and `localhost`.
fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::ErrorKind;

    #[test]
    fn loopback_and_https_are_always_allowed() {
        for url in [
            "http://127.0.0.1:7070/standard",
            "http://127.9.8.7/gateway",
            "http://localhost:1/",
            "http://LOCALHOST/",
            "http://[::1]:8080/standard",
            "https://api.example.com/standard",
            "https://192.0.2.10/",
        ] {
            assert!(check(url, false).is_ok(), "{url}");
        }
    }

    #[test]
    fn plain_http_elsewhere_is_refused_unless_allowed() {
        for url in [
            "http://api.example.com/standard",
            "http://192.0.2.10:7070/",
            "http://[2001:db8::1]/",
            "http://localhost.example.com/",
            "http://0.0.0.0:7070/",
        ] {
            let error = check(url, false).expect_err(url);
            assert_eq!(error.kind(), ErrorKind::Endpoint, "{url}");
            assert!(error.to_string().contains("plain http://"), "{error}");
            assert!(check(url, true).is_ok(), "{url} allowed");
        }
    }

    #[test]
    fn what_is_not_an_http_url_is_refused() {
        assert!(check("ftp://127.0.0.1/", true).is_err());
        assert!(check("127.0.0.1:7070/standard", true).is_err());
    }
}
