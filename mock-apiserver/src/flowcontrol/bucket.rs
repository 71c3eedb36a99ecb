//! The immediate limit: a token bucket (QPS with burst) and a cap on requests in flight,
//! answered at once with a JSON `Status` 429 and `Retry-After`. Not what kube-apiserver
//! does (see [`super::apf`]); kept as a named mode for its simplicity.

use std::num::{NonZeroU32, NonZeroUsize};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

/// The immediate limit's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Sustained requests per second.
    pub qps: NonZeroU32,
    /// Requests allowed at once after idling.
    pub burst: NonZeroU32,
    /// Most requests handled at once (watches count only until their stream starts).
    pub max_in_flight: Option<NonZeroUsize>,
}

impl RateLimit {
    /// A token bucket of `qps` per second holding up to `burst` tokens.
    pub fn new(qps: NonZeroU32, burst: NonZeroU32) -> Self {
        Self {
            qps,
            burst,
            max_in_flight: None,
        }
    }

    /// Also caps requests in flight.
    #[must_use]
    pub fn with_max_in_flight(mut self, max: NonZeroUsize) -> Self {
        self.max_in_flight = Some(max);
        self
    }
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

/// The live limiter.
#[derive(Debug)]
pub struct Limiter {
    settings: RateLimit,
    bucket: Mutex<Bucket>,
    in_flight: Arc<AtomicUsize>,
}

/// Held while a request is in flight.
#[derive(Debug)]
pub struct Permit(Option<Arc<AtomicUsize>>);

impl Drop for Permit {
    fn drop(&mut self) {
        if let Some(counter) = &self.0 {
            counter.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Limiter {
    /// A full bucket.
    pub fn new(settings: RateLimit) -> Self {
        Self {
            settings,
            bucket: Mutex::new(Bucket {
                tokens: f64::from(settings.burst.get()),
                last: Instant::now(),
            }),
            in_flight: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Admits a request at `now`, or says how long to wait before retrying.
    pub fn admit(&self, now: Instant) -> Result<Permit, Duration> {
        let permit = match self.settings.max_in_flight {
            Some(max) => {
                let before = self.in_flight.fetch_add(1, Ordering::AcqRel);
                let permit = Permit(Some(self.in_flight.clone()));
                if before >= max.get() {
                    return Err(Duration::from_secs(1));
                }
                permit
            }
            None => Permit(None),
        };
        let mut bucket = self.bucket.lock();
        let qps = f64::from(self.settings.qps.get());
        let elapsed = now.saturating_duration_since(bucket.last).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * qps).min(f64::from(self.settings.burst.get()));
        bucket.last = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(permit)
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / qps))
        }
    }
}

/// Whole seconds for `Retry-After`: the wait rounded up, at least one.
pub fn retry_after_secs(wait: Duration) -> u64 {
    wait.as_secs_f64().ceil().max(1.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nz(n: u32) -> NonZeroU32 {
        NonZeroU32::new(n).unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn the_bucket_allows_a_burst_then_refills_at_the_rate() {
        let limiter = Limiter::new(RateLimit::new(nz(2), nz(3)));
        let now = Instant::now();
        for _ in 0..3 {
            assert!(limiter.admit(now).is_ok());
        }
        let wait = limiter.admit(now).unwrap_err();
        assert_eq!(wait, Duration::from_millis(500));
        assert_eq!(retry_after_secs(wait), 1);
        assert!(limiter.admit(now + Duration::from_millis(500)).is_ok());
        assert!(limiter.admit(now + Duration::from_millis(500)).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn requests_in_flight_are_capped_until_permits_drop() {
        let settings =
            RateLimit::new(nz(1000), nz(1000)).with_max_in_flight(NonZeroUsize::new(2).unwrap());
        let limiter = Limiter::new(settings);
        let now = Instant::now();
        let first = limiter.admit(now).unwrap();
        let _second = limiter.admit(now).unwrap();
        assert!(limiter.admit(now).is_err());
        drop(first);
        assert!(limiter.admit(now).is_ok());
    }
}
