//! Fault injection: latency, 503 and 429 with `Retry-After`, and requests processed then answered by a dropped connection.

use super::accounts::{FaultConfig, FaultScope};
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

/// The faults in force and the request counter that spreads them evenly.
pub struct Faults {
    inner: Mutex<(FaultConfig, u64)>,
}

/// Whether request number `n` (from 0) is one of the `share` of requests picked: exactly
/// `floor(n * share)` of the first `n` requests are, spread evenly.
fn picked(n: u64, share: f64) -> bool {
    share > 0.0 && ((n + 1) as f64 * share).floor() > (n as f64 * share).floor()
}

impl Faults {
    pub fn new(config: FaultConfig) -> Faults {
        Faults {
            inner: Mutex::new((config, 0)),
        }
    }

    pub fn config(&self) -> FaultConfig {
        self.inner.lock().0.clone()
    }

    /// Replaces the faults in force and restarts the counter.
    pub fn set(&self, config: FaultConfig) {
        *self.inner.lock() = (config, 0);
    }

    /// Decides for one request; `is_send` tells whether it is one of the five send endpoints.
    pub fn decide(&self, is_send: bool) -> (Duration, FaultAction) {
        let mut inner = self.inner.lock();
        let (config, counter) = &mut *inner;
        if !is_send && config.applies_to == FaultScope::Sends {
            return (Duration::ZERO, FaultAction::None);
        }
        let n = *counter;
        *counter += 1;
        let latency = Duration::from_millis(config.latency_ms);
        let retry_after_secs = config.retry_after_secs;
        let action = if picked(n, config.unavailable_share) {
            FaultAction::Unavailable { retry_after_secs }
        } else if picked(n, config.rate_limited_share) {
            FaultAction::RateLimited { retry_after_secs }
        } else if picked(n, config.drop_share) {
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
