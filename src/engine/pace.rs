//! When to send: a token-bucket rate limit in messages per second, and capped, jittered backoff for retries.

use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::Instant;

/// Messages-per-second limit shared by all senders, changeable while the run goes. A chunk
/// larger than one second's worth still goes, and the bucket runs into debt that later chunks
/// wait out. Without a rate, nothing waits.
pub struct RateLimiter {
    state: Mutex<Bucket>,
    chunk_size: usize,
}

struct Bucket {
    per_second: Option<f64>,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl RateLimiter {
    pub fn new(per_second: Option<f64>, chunk_size: usize) -> RateLimiter {
        let burst = burst(per_second, chunk_size);
        RateLimiter {
            state: Mutex::new(Bucket {
                per_second,
                burst,
                tokens: burst,
                last: Instant::now(),
            }),
            chunk_size,
        }
    }

    /// A new rate from now on; the debt already run up is kept, so lowering the rate takes effect
    /// for the very next chunk.
    pub async fn set_rate(&self, per_second: Option<f64>) {
        let mut bucket = self.state.lock().await;
        bucket.refill(Instant::now());
        bucket.per_second = per_second;
        bucket.burst = burst(per_second, self.chunk_size);
        bucket.tokens = bucket.tokens.min(bucket.burst);
    }

    /// Waits until `messages` may go.
    pub async fn acquire(&self, messages: usize) {
        let wait = {
            let mut bucket = self.state.lock().await;
            let Some(per_second) = bucket.per_second else {
                return;
            };
            bucket.refill(Instant::now());
            bucket.tokens -= messages as f64;
            if bucket.tokens >= 0.0 {
                Duration::ZERO
            } else {
                Duration::from_secs_f64(-bucket.tokens / per_second)
            }
        };
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

fn burst(per_second: Option<f64>, chunk_size: usize) -> f64 {
    per_second.unwrap_or(0.0).max(chunk_size as f64)
}

impl Bucket {
    fn refill(&mut self, now: Instant) {
        if let Some(per_second) = self.per_second {
            self.tokens = (self.tokens + now.duration_since(self.last).as_secs_f64() * per_second).min(self.burst);
        }
        self.last = now;
    }
}

/// How many requests may be in flight at once, changeable while the run goes: lowering it
/// takes permits back as requests end, raising it adds them at once.
pub struct Admission {
    semaphore: std::sync::Arc<tokio::sync::Semaphore>,
    target: std::sync::Mutex<usize>,
}

impl Admission {
    pub fn new(concurrency: usize) -> Admission {
        Admission {
            semaphore: std::sync::Arc::new(tokio::sync::Semaphore::new(concurrency)),
            target: std::sync::Mutex::new(concurrency),
        }
    }

    pub fn semaphore(&self) -> std::sync::Arc<tokio::sync::Semaphore> {
        self.semaphore.clone()
    }

    pub fn set(&self, concurrency: usize) {
        let mut target = self.target.lock().expect("admission lock");
        if concurrency > *target {
            self.semaphore.add_permits(concurrency - *target);
        } else if concurrency < *target {
            let surplus = (*target - concurrency) as u32;
            let semaphore = self.semaphore.clone();
            // Permits held by requests in flight come back as they end; these are taken then.
            tokio::spawn(async move {
                if let Ok(permits) = semaphore.acquire_many_owned(surplus).await {
                    permits.forget();
                }
            });
        }
        *target = concurrency;
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
        let limiter = RateLimiter::new(Some(100.0), 100);
        let start = tokio::time::Instant::now();
        for _ in 0..5 {
            limiter.acquire(100).await;
        }
        // 500 messages at 100/s with a burst of 100: at least 4 s of (virtual) waiting.
        assert!(start.elapsed() >= Duration::from_secs(4), "{:?}", start.elapsed());
    }

    #[tokio::test(start_paused = true)]
    async fn a_lowered_rate_holds_from_the_next_chunk_and_no_rate_waits_for_nothing() {
        let limiter = RateLimiter::new(None, 100);
        let start = tokio::time::Instant::now();
        for _ in 0..50 {
            limiter.acquire(100).await;
        }
        assert_eq!(start.elapsed(), Duration::ZERO, "no rate, no wait");
        limiter.set_rate(Some(10.0)).await;
        let lowered = tokio::time::Instant::now();
        limiter.acquire(100).await;
        limiter.acquire(100).await;
        // A burst of one chunk (100), then 100 more at 10/s: 10 s.
        assert!(lowered.elapsed() >= Duration::from_secs(10), "{:?}", lowered.elapsed());
    }

    #[tokio::test]
    async fn admission_lowered_takes_permits_back_as_they_are_returned() {
        let admission = Admission::new(4);
        let semaphore = admission.semaphore();
        let held: Vec<_> = (0..4).map(|_| semaphore.clone().try_acquire_owned().unwrap()).collect();
        admission.set(1);
        drop(held);
        // The surplus is taken by a task once the permits are back: wait until it has run.
        while semaphore.available_permits() != 1 {
            tokio::task::yield_now().await;
        }
        assert!(semaphore.clone().try_acquire_owned().is_ok());
        admission.set(3);
        assert_eq!(semaphore.available_permits(), 3);
    }
}
