//! Wire type of the sandbox's fault settings: read and replaced at `/_sandbox/faults`, and the `[faults]` table of its accounts file.

use serde::{Deserialize, Serialize};

/// Fault injection. Shares are fractions (0 to 1) of eligible requests, spread evenly and
/// deterministically so a test can count on them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct FaultConfig {
    pub latency_ms: u64,
    pub unavailable_share: f64,
    pub retry_after_secs: u64,
    pub rate_limited_share: f64,
    pub drop_share: f64,
    pub applies_to: FaultScope,
    /// Share of each send group's records that `GET /result/sendGroup/:sendGroupId` leaves out
    /// of its pages (`GET /result/:id` still finds them), whatever `applies_to` says.
    pub listing_hidden_share: f64,
    /// Pages of `GET /result/sendGroup/:sendGroupId` after the first answer again the `lastKey`
    /// they were given, as a service stuck on one token would.
    pub listing_repeats_last_key: bool,
}

impl FaultConfig {
    /// Each share between 0 and 1, and the three request shares together at most 1.
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.listing_hidden_share) {
            return Err(format!(
                "faults.listing_hidden_share must be between 0 and 1, got {}",
                self.listing_hidden_share
            ));
        }
        let shares = [
            ("unavailable_share", self.unavailable_share),
            ("rate_limited_share", self.rate_limited_share),
            ("drop_share", self.drop_share),
        ];
        for (name, share) in shares {
            if !(0.0..=1.0).contains(&share) {
                return Err(format!("faults.{name} must be between 0 and 1, got {share}"));
            }
        }
        let total: f64 = shares.iter().map(|(_, share)| share).sum();
        if total > 1.0 + 1e-9 {
            return Err(format!("faults: the shares add up to {total}, more than 1"));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum FaultScope {
    /// The five send endpoints only.
    #[default]
    Sends,
    /// Every endpoint of both deployments (admin paths never).
    All,
}
