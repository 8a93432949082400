//! Fault injection: latency, 503 and 429 with `Retry-After`, and requests processed then answered by a dropped connection.

use crate::api::faults::{FaultConfig, FaultScope};
use parking_lot::Mutex;
use std::time::Duration;

/// What to do to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultAction {
    None,
    /// Answer 503 with `Retry-After`, without processing.
    Unavailable {
        retry_after_secs: u64,
    },
    /// Answer 429 with `Retry-After`, without processing.
    RateLimited {
        retry_after_secs: u64,
    },
    /// Process, then drop the connection without an answer.
    Drop,
}

/// The faults in force, and counters that spread them evenly.
pub struct Faults {
    inner: Mutex<(FaultConfig, [u64; 3])>,
}

/// How the send-group result listing misbehaves: records it leaves out, a `lastKey` it repeats.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ListingFaults {
    pub hidden_share: f64,
    pub repeats_last_key: bool,
}

impl ListingFaults {
    /// Whether the record at `position` in its send group is left out of the listing: the same
    /// records on every read, exactly `floor(n * share)` of the first `n`, spread evenly.
    pub fn hides(&self, position: usize) -> bool {
        picked(position as u64, self.hidden_share)
    }
}

/// Whether request number `n` (from 0) is one of the `share` of requests picked: exactly
/// `floor(n * share)` of the first `n` requests are, spread evenly.
fn picked(n: u64, share: f64) -> bool {
    share > 0.0 && ((n + 1) as f64 * share).floor() > (n as f64 * share).floor()
}

/// Picks among `requests` the `share` of all requests, given that `taken` of all was already
/// picked by earlier kinds: the share of what is left is `share / (1 - taken)`.
fn pick(counter: &mut u64, share: f64, taken: f64) -> bool {
    if share <= 0.0 {
        return false;
    }
    let left = 1.0 - taken;
    let relative = if left <= 0.0 { 0.0 } else { (share / left).min(1.0) };
    let n = *counter;
    *counter += 1;
    picked(n, relative)
}

impl Faults {
    pub fn new(config: FaultConfig) -> Faults {
        Faults {
            inner: Mutex::new((config, [0; 3])),
        }
    }

    pub fn config(&self) -> FaultConfig {
        self.inner.lock().0.clone()
    }

    pub fn listing(&self) -> ListingFaults {
        let inner = self.inner.lock();
        ListingFaults {
            hidden_share: inner.0.listing_hidden_share,
            repeats_last_key: inner.0.listing_repeats_last_key,
        }
    }

    /// Replaces the faults in force and restarts the counters.
    pub fn set(&self, config: FaultConfig) {
        *self.inner.lock() = (config, [0; 3]);
    }

    /// Decides for one request; `is_send` tells whether it is one of the five send endpoints.
    /// 503 picks its share of all requests, 429 its share among those 503 left, the drop its
    /// share among those both left, so the three shares add up.
    pub fn decide(&self, is_send: bool) -> (Duration, FaultAction) {
        let mut inner = self.inner.lock();
        let (config, counters) = &mut *inner;
        if !is_send && config.applies_to == FaultScope::Sends {
            return (Duration::ZERO, FaultAction::None);
        }
        let latency = Duration::from_millis(config.latency_ms);
        let retry_after_secs = config.retry_after_secs;
        let action = if pick(&mut counters[0], config.unavailable_share, 0.0) {
            FaultAction::Unavailable { retry_after_secs }
        } else if pick(&mut counters[1], config.rate_limited_share, config.unavailable_share) {
            FaultAction::RateLimited { retry_after_secs }
        } else if pick(
            &mut counters[2],
            config.drop_share,
            config.unavailable_share + config.rate_limited_share,
        ) {
            FaultAction::Drop
        } else {
            FaultAction::None
        };
        (latency, action)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_exact_over_a_run() {
        for share in [0.0, 0.1, 0.25, 1.0 / 3.0, 0.5, 1.0] {
            let hits = (0..1_000u64).filter(|&n| picked(n, share)).count();
            assert_eq!(hits, (1_000.0 * share).floor() as usize, "share {share}");
        }
    }

    #[test]
    fn equal_shares_of_503_and_429_add_up() {
        let faults = Faults::new(FaultConfig {
            unavailable_share: 0.3,
            rate_limited_share: 0.3,
            drop_share: 0.2,
            ..FaultConfig::default()
        });
        let mut seen = std::collections::HashMap::new();
        for _ in 0..1_000 {
            *seen.entry(format!("{:?}", faults.decide(true).1)).or_insert(0) += 1;
        }
        let count = |prefix: &str| {
            seen.iter()
                .filter(|(k, _)| k.starts_with(prefix))
                .map(|(_, v)| *v)
                .sum::<i32>()
        };
        assert!((295..=305).contains(&count("Unavailable")), "{seen:?}");
        assert!((295..=305).contains(&count("RateLimited")), "{seen:?}");
        assert!((195..=205).contains(&count("Drop")), "{seen:?}");
    }

    #[test]
    fn the_listing_hides_the_same_exact_share_on_every_read() {
        let listing = ListingFaults {
            hidden_share: 0.25,
            repeats_last_key: false,
        };
        let hidden: Vec<usize> = (0..12).filter(|&p| listing.hides(p)).collect();
        assert_eq!(hidden, vec![3, 7, 11]);
        assert_eq!(hidden, (0..12).filter(|&p| listing.hides(p)).collect::<Vec<_>>());
        assert!(!(0..1_000).any(|p| ListingFaults::default().hides(p)));
    }

    #[test]
    fn reads_are_spared_unless_scope_is_all() {
        let faults = Faults::new(FaultConfig {
            unavailable_share: 1.0,
            ..FaultConfig::default()
        });
        assert_eq!(faults.decide(false).1, FaultAction::None);
        assert!(matches!(faults.decide(true).1, FaultAction::Unavailable { .. }));
        faults.set(FaultConfig {
            drop_share: 1.0,
            applies_to: FaultScope::All,
            ..FaultConfig::default()
        });
        assert_eq!(faults.decide(false).1, FaultAction::Drop);
    }
}
