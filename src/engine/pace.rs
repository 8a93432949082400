//! When to send: a token-bucket rate limit in messages per second, and capped, jittered backoff for retries.

use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::Instant;

/// Messages-per-second limit shared by all senders. A chunk larger than one second's worth
/// still goes, and the bucket runs into debt that later chunks wait out.
pub struct RateLimiter {
    per_second: f64,
    burst: f64,
    state: Mutex<(f64, Instant)>,
}

impl RateLimiter {
    pub fn new(per_second: f64, chunk_size: usize) -> RateLimiter {
        let burst = per_second.max(chunk_size as f64);
        RateLimiter {
            per_second,
            burst,
            state: Mutex::new((burst, Instant::now())),
        }
    }

    /// Waits until `messages` may go.
    pub async fn acquire(&self, messages: usize) {
        let wait = {
            let mut state = self.state.lock().await;
            let (tokens, last) = &mut *state;
            let now = Instant::now();
            *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * self.per_second).min(self.burst);
            *last = now;
            *tokens -= messages as f64;
            if *tokens >= 0.0 {
                Duration::ZERO
            } else {
                Duration::from_secs_f64(-*tokens / self.per_second)
            }
        };
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

/// Backoff before retry `attempt` (1 = the first retry): full jitter over an exponential
/// ceiling capped at 30 s, and never shorter than what the service asked for in `Retry-After`.
pub fn backoff(attempt: u32, retry_after: Option<Duration>) -> Duration {
    let ceiling = Duration::from_millis(200)
        .saturating_mul(1u32 << attempt.min(8))
        .min(Duration::from_secs(30));
    let jittered = ceiling.mul_f64(rand::random::<f64>());
    jittered.max(retry_after.unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_respects_retry_after_and_the_cap() {
        for attempt in 1..20 {
            let wait = backoff(attempt, None);
            assert!(wait <= Duration::from_secs(30));
            assert!(backoff(attempt, Some(Duration::from_secs(3))) >= Duration::from_secs(3));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_bucket_holds_the_rate() {
        let limiter = RateLimiter::new(100.0, 100);
        let start = tokio::time::Instant::now();
        for _ in 0..5 {
            limiter.acquire(100).await;
        }
        // 500 messages at 100/s with a burst of 100: at least 4 s of (virtual) waiting.
        assert!(start.elapsed() >= Duration::from_secs(4), "{:?}", start.elapsed());
    }
}
