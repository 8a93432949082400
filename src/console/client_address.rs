//! Who the client is: the TCP peer, or — when the peer is a proxy the console was told to trust — the right-most address in `X-Forwarded-For` that is not itself a trusted proxy (the sign-in limits count by it).

use axum::http::HeaderMap;
use std::net::{IpAddr, SocketAddr};

const X_FORWARDED_FOR: &str = "x-forwarded-for";

/// The proxies whose `X-Forwarded-For` is believed: only a declared proxy may say who its client
/// is; anyone else would choose their own address and escape (or aim) the sign-in limits.
#[derive(Debug, Default)]
pub struct TrustedProxies {
    addresses: Vec<IpAddr>,
    /// `--behind-proxy` without `--trusted-proxy`: the proxy usually runs on the same host.
    any_loopback: bool,
    behind_proxy: bool,
    /// Whether the log already says that a peer we do not trust sent `X-Forwarded-For` (once is
    /// enough to show a proxy on another host that was not declared).
    warned: std::sync::atomic::AtomicBool,
}

impl TrustedProxies {
    /// Behind a proxy: the declared addresses, or every loopback address when none is declared.
    /// Not behind one: nobody, whatever was declared; every client is its TCP peer.
    pub fn for_serving(behind_proxy: bool, declared: &[IpAddr]) -> TrustedProxies {
        if !behind_proxy {
            return TrustedProxies::default();
        }
        TrustedProxies {
            addresses: declared.iter().map(|address| address.to_canonical()).collect(),
            any_loopback: declared.is_empty(),
            behind_proxy: true,
            warned: Default::default(),
        }
    }

    pub fn trusts(&self, address: IpAddr) -> bool {
        let address = address.to_canonical();
        (self.any_loopback && address.is_loopback()) || self.addresses.contains(&address)
    }

    /// The address of the person at the other end: the TCP peer, unless the peer is a trusted
    /// proxy; then the right-most `X-Forwarded-For` entry that is not itself a trusted proxy.
    pub fn client_address(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = peer.to_canonical();
        if !self.trusts(peer) {
            if self.behind_proxy
                && headers.contains_key(X_FORWARDED_FOR)
                && !self.warned.swap(true, std::sync::atomic::Ordering::Relaxed)
            {
                tracing::warn!(
                    "{peer} sent X-Forwarded-For but is not a trusted proxy, so it counts as the client for the sign-in limits; if it is the proxy, give --trusted-proxy {peer}"
                );
            }
            return peer;
        }
        // Each proxy appends the address it heard from, so the list is read from the right: the
        // first entry that is not one of our proxies is the client, and whatever lies left of it
        // the client wrote itself. An entry that is not an address was not written by a proxy of
        // ours: the answer is then the nearest hop we can vouch for.
        let mut nearest = peer;
        for value in headers.get_all(X_FORWARDED_FOR).iter().rev() {
            let Ok(text) = value.to_str() else {
                return nearest;
            };
            for entry in text.rsplit(',') {
                let entry = entry.trim();
                if entry.is_empty() {
                    // A header list may hold empty elements; they name nobody.
                    continue;
                }
                let Some(address) = forwarded_address(entry) else {
                    return nearest;
                };
                if !self.trusts(address) {
                    return address;
                }
                nearest = address;
            }
        }
        nearest
    }
}

/// One `X-Forwarded-For` entry: an address, also as some proxies write it, with a port
/// (`203.0.113.9:41234`, `[2001:db8::1]:443`) or in brackets.
fn forwarded_address(entry: &str) -> Option<IpAddr> {
    entry
        .parse::<IpAddr>()
        .ok()
        .or_else(|| entry.parse::<SocketAddr>().ok().map(|socket| socket.ip()))
        .or_else(|| entry.strip_prefix('[')?.strip_suffix(']')?.parse().ok())
        .map(|address| address.to_canonical())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(X_FORWARDED_FOR, value.parse().unwrap());
        }
        headers
    }

    #[test]
    fn the_client_is_the_right_most_forwarded_address_that_is_not_a_trusted_proxy() {
        let proxies = TrustedProxies::for_serving(true, &[ip("10.0.0.2"), ip("10.0.0.3")]);
        let loopback = TrustedProxies::for_serving(true, &[]);
        let nobody = TrustedProxies::for_serving(false, &[ip("10.0.0.2")]);
        let cases: &[(&TrustedProxies, &str, &[&str], &str)] = &[
            // The peer is not a trusted proxy: the header is the client's own words.
            (&proxies, "203.0.113.9", &["198.51.100.7"], "203.0.113.9"),
            (&nobody, "10.0.0.2", &["198.51.100.7"], "10.0.0.2"),
            (&loopback, "10.0.0.2", &["198.51.100.7"], "10.0.0.2"),
            // A trusted proxy: the right-most entry that is not one of ours.
            (&proxies, "10.0.0.2", &["198.51.100.7"], "198.51.100.7"),
            (&proxies, "10.0.0.2", &["1.1.1.1, 198.51.100.7"], "198.51.100.7"),
            (
                &proxies,
                "10.0.0.2",
                &["1.1.1.1, 198.51.100.7, 10.0.0.3"],
                "198.51.100.7",
            ),
            (&proxies, "10.0.0.2", &["1.1.1.1", "198.51.100.7"], "198.51.100.7"),
            (&proxies, "10.0.0.2", &["198.51.100.7,", " ,10.0.0.3"], "198.51.100.7"),
            (&loopback, "127.0.0.1", &["198.51.100.7"], "198.51.100.7"),
            (&loopback, "::1", &["2001:db8::9"], "2001:db8::9"),
            (&loopback, "::ffff:127.0.0.1", &["198.51.100.7"], "198.51.100.7"),
            // Ports and brackets, as some proxies write them.
            (&proxies, "10.0.0.2", &["198.51.100.7:41234"], "198.51.100.7"),
            (&proxies, "10.0.0.2", &["[2001:db8::9]:443"], "2001:db8::9"),
            (&proxies, "10.0.0.2", &["[2001:db8::9]"], "2001:db8::9"),
            (&proxies, "10.0.0.2", &["::ffff:198.51.100.7"], "198.51.100.7"),
            // No header, or only our proxies: the nearest hop.
            (&proxies, "10.0.0.2", &[], "10.0.0.2"),
            (&proxies, "10.0.0.2", &["10.0.0.3"], "10.0.0.3"),
            // Not an address where a proxy of ours would have written one: the nearest vouched hop.
            (&proxies, "10.0.0.2", &["198.51.100.7, unknown"], "10.0.0.2"),
            (&proxies, "10.0.0.2", &["198.51.100.7, garbage, 10.0.0.3"], "10.0.0.3"),
            (&proxies, "10.0.0.2", &["fe80::1%eth0"], "10.0.0.2"),
        ];
        for (trusted, peer, values, client) in cases {
            assert_eq!(
                trusted.client_address(ip(peer), &forwarded(values)),
                ip(client),
                "peer {peer}, X-Forwarded-For {values:?}"
            );
        }
    }

    mod forwarded_for {
        use super::super::*;
        use proptest::prelude::*;

        fn address() -> impl Strategy<Value = IpAddr> {
            prop_oneof![
                any::<[u8; 4]>().prop_map(IpAddr::from),
                any::<[u8; 16]>().prop_map(IpAddr::from),
                // Often one of the trusted proxies, so chains of them are tried.
                Just("10.0.0.2".parse().unwrap()),
                Just("10.0.0.3".parse().unwrap()),
            ]
        }

        proptest! {
            #[test]
            fn any_header_is_read_without_panic_and_names_nobody_the_proxies_did_not(
                values in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..60), 0..4),
                peer in address(),
            ) {
                let proxies = TrustedProxies::for_serving(true, &["10.0.0.2".parse().unwrap()]);
                let mut headers = HeaderMap::new();
                for bytes in &values {
                    if let Ok(value) = axum::http::HeaderValue::from_bytes(bytes) {
                        headers.append(X_FORWARDED_FOR, value);
                    }
                }
                let client = proxies.client_address(peer, &headers);
                if !proxies.trusts(peer) {
                    prop_assert_eq!(client, peer.to_canonical());
                }
            }

            #[test]
            fn a_chain_through_trusted_proxies_yields_its_right_most_stranger(
                chain in proptest::collection::vec(address(), 0..8),
                split in 0usize..8,
            ) {
                let proxies = TrustedProxies::for_serving(true, &["10.0.0.2".parse().unwrap(), "10.0.0.3".parse().unwrap()]);
                let peer: IpAddr = "10.0.0.2".parse().unwrap();
                let text: Vec<String> = chain.iter().map(|address| match address {
                    IpAddr::V6(v6) => format!("[{v6}]"),
                    IpAddr::V4(v4) => v4.to_string(),
                }).collect();
                // The same list, once in one header and once cut across two.
                let cut = split.min(text.len());
                let mut one = HeaderMap::new();
                let mut two = HeaderMap::new();
                if !text.is_empty() {
                    one.insert(X_FORWARDED_FOR, text.join(", ").parse().unwrap());
                    if cut > 0 {
                        two.append(X_FORWARDED_FOR, text[..cut].join(",").parse().unwrap());
                    }
                    if cut < text.len() {
                        two.append(X_FORWARDED_FOR, text[cut..].join(" , ").parse().unwrap());
                    }
                }
                let expected = chain
                    .iter()
                    .rev()
                    .map(|address| address.to_canonical())
                    .find(|address| !proxies.trusts(*address))
                    .or_else(|| chain.first().map(|address| address.to_canonical()))
                    .unwrap_or(peer);
                prop_assert_eq!(proxies.client_address(peer, &one), expected);
                prop_assert_eq!(proxies.client_address(peer, &two), expected);
            }
        }
    }
}
