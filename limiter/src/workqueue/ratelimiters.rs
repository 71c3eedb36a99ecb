//! client-go's workqueue rate limiters (`util/workqueue/default_rate_limiters.go`).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

use crate::clock::Clock;
use crate::go::{GoDuration, f64_to_i64_amd64};
use crate::rate::{Limit, Limiter};

/// client-go's `TypedRateLimiter[T]`: how long an item should wait before it is retried.
///
/// `when` records a failure and returns the wait; `forget` stops tracking the item;
/// `num_requeues` is the number of `when` calls since the last `forget`.
///
/// Durations are [`GoDuration`]s because client-go's limiters can return negative waits (the
/// exponential limiter's overflow hole) and `InfDuration`; queues treat a negative wait as none.
pub trait RateLimiter<T>: Send + Sync {
    /// Records a failure of `item` and returns how long to wait before retrying it.
    fn when(&self, item: &T) -> GoDuration;
    /// Stops tracking `item`: the next `when` starts from scratch.
    fn forget(&self, item: &T);
    /// How many times `when` was called for `item` since it was last forgotten.
    fn num_requeues(&self, item: &T) -> usize;
}

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Arc<R> {
    fn when(&self, item: &T) -> GoDuration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item);
    }
    fn num_requeues(&self, item: &T) -> usize {
        (**self).num_requeues(item)
    }
}

/// A shareable rate limiter of any kind.
pub type SharedRateLimiter<T> = Arc<dyn RateLimiter<T>>;

/// `ItemExponentialFailureRateLimiter`: `base · 2^(k−1)` for the k-th failure, capped at `max`.
///
/// # Semantics
/// The product is computed in `f64`. Above 2^63 ns it returns `max`; at exactly 2^63 ns (a base
/// that is a power of two) and for NaN (base 0 after 1024 failures) Go on amd64 converts to
/// `math.MinInt64`, and so do we (conformance vector 12); queues treat that as "no wait".
#[derive(Debug)]
pub struct ItemExponential<T> {
    base: GoDuration,
    max: GoDuration,
    failures: Mutex<HashMap<T, u64>>,
}

impl<T: Eq + Hash + Clone> ItemExponential<T> {
    /// `NewTypedItemExponentialFailureRateLimiter(base, max)`.
    #[must_use]
    pub fn new(base: Duration, max: Duration) -> Self {
        Self::with_go_durations(GoDuration::from_std(base), GoDuration::from_std(max))
    }

    /// The same with Go durations (a base of 0 or a negative max are allowed, as in Go).
    #[must_use]
    pub fn with_go_durations(base: GoDuration, max: GoDuration) -> Self {
        ItemExponential {
            base,
            max,
            failures: Mutex::new(HashMap::new()),
        }
    }
}

/// Counts one more failure of `item` and returns the new count (clones the key only when it
/// is new).
fn bump<T: Eq + Hash + Clone>(failures: &mut HashMap<T, u64>, item: &T) -> u64 {
    if let Some(count) = failures.get_mut(item) {
        *count += 1;
        return *count;
    }
    failures.insert(item.clone(), 1);
    1
}

/// `2^exp` exactly, `+Inf` from 1024 on.
fn pow2(exp: u64) -> f64 {
    if exp >= 1024 {
        f64::INFINITY
    } else {
        f64::from_bits((exp + 1023) << 52)
    }
}

impl<T: Eq + Hash + Clone + Send> RateLimiter<T> for ItemExponential<T> {
    fn when(&self, item: &T) -> GoDuration {
        let exp = bump(&mut self.failures.lock(), item) - 1;
        let backoff = self.base.as_nanos() as f64 * pow2(exp);
        if backoff > i64::MAX as f64 {
            return self.max;
        }
        let calculated = GoDuration(f64_to_i64_amd64(backoff));
        if calculated > self.max {
            return self.max;
        }
        calculated
    }

    fn forget(&self, item: &T) {
        self.failures.lock().remove(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.failures.lock().get(item).map_or(0, |n| *n as usize)
    }
}

/// `ItemFastSlowRateLimiter`: `fast` for the first `max_fast` failures, then `slow`.
///
/// # Semantics
/// As in Go, any `max_fast` is accepted: zero or a negative count means every failure gets
/// `slow`; negative delays are returned as they are (a queue treats them as no wait).
#[derive(Debug)]
pub struct ItemFastSlow<T> {
    fast: GoDuration,
    slow: GoDuration,
    max_fast: i64,
    failures: Mutex<HashMap<T, u64>>,
}

impl<T: Eq + Hash + Clone> ItemFastSlow<T> {
    /// `NewTypedItemFastSlowRateLimiter(fast, slow, maxFast)`.
    #[must_use]
    pub fn new(fast: Duration, slow: Duration, max_fast: i64) -> Self {
        Self::with_go_durations(fast.into(), slow.into(), max_fast)
    }

    /// The same with Go durations (negative ones are allowed, as in Go).
    #[must_use]
    pub fn with_go_durations(fast: GoDuration, slow: GoDuration, max_fast: i64) -> Self {
        ItemFastSlow {
            fast,
            slow,
            max_fast,
            failures: Mutex::new(HashMap::new()),
        }
    }
}

impl<T: Eq + Hash + Clone + Send> RateLimiter<T> for ItemFastSlow<T> {
    fn when(&self, item: &T) -> GoDuration {
        let failures = bump(&mut self.failures.lock(), item);
        if i64::try_from(failures).unwrap_or(i64::MAX) <= self.max_fast {
            self.fast
        } else {
            self.slow
        }
    }

    fn forget(&self, item: &T) {
        self.failures.lock().remove(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.failures.lock().get(item).map_or(0, |n| *n as usize)
    }
}

/// `BucketRateLimiter`: one token bucket for all items. Every `when` reserves a token (going
/// into debt) and is never refunded; the item is ignored, `forget` does nothing and
/// `num_requeues` is always 0. `when` reads the bucket's clock once (Go reads it twice, for
/// `Reserve` and `Delay`, which in real time makes Go's delay a few nanoseconds shorter).
#[derive(Clone, Debug)]
pub struct Bucket {
    limiter: Limiter,
}

impl Bucket {
    /// A bucket of `burst` tokens refilling at `qps`, on tokio's clock.
    #[must_use]
    pub fn new(qps: f64, burst: i64) -> Self {
        Self::with_clock(qps, burst, Clock::tokio())
    }

    /// A bucket of `burst` tokens refilling at `qps`, on `clock`.
    #[must_use]
    pub fn with_clock(qps: f64, burst: i64, clock: Clock) -> Self {
        Bucket {
            limiter: Limiter::with_clock(Limit(qps), burst, clock),
        }
    }

    /// Wraps an existing token bucket (shared with whoever else holds it).
    #[must_use]
    pub fn from_limiter(limiter: Limiter) -> Self {
        Bucket { limiter }
    }

    /// The token bucket behind it.
    #[must_use]
    pub fn limiter(&self) -> &Limiter {
        &self.limiter
    }

    /// `when` at an explicit time.
    pub fn when_at(&self, now: Instant) -> GoDuration {
        self.limiter.reserve_at(now).delay_from(now)
    }
}

impl<T> RateLimiter<T> for Bucket {
    fn when(&self, _item: &T) -> GoDuration {
        self.when_at(self.limiter.clock().now())
    }
    fn forget(&self, _item: &T) {}
    fn num_requeues(&self, _item: &T) -> usize {
        0
    }
}

/// `MaxOfRateLimiter`: asks every limiter (all of them change state) and returns the largest
/// wait, never below 0.
pub struct MaxOf<T> {
    limiters: Vec<SharedRateLimiter<T>>,
}

impl<T> MaxOf<T> {
    /// `NewTypedMaxOfRateLimiter(limiters...)`.
    #[must_use]
    pub fn new(limiters: Vec<SharedRateLimiter<T>>) -> Self {
        MaxOf { limiters }
    }
}

impl<T> RateLimiter<T> for MaxOf<T> {
    fn when(&self, item: &T) -> GoDuration {
        let mut ret = GoDuration::ZERO;
        for l in &self.limiters {
            let d = l.when(item);
            if d > ret {
                ret = d;
            }
        }
        ret
    }

    fn forget(&self, item: &T) {
        for l in &self.limiters {
            l.forget(item);
        }
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.limiters
            .iter()
            .map(|l| l.num_requeues(item))
            .max()
            .unwrap_or(0)
    }
}

/// `WithMaxWaitRateLimiter`: the inner limiter's wait, capped at `max`.
pub struct MaxWait<T> {
    inner: SharedRateLimiter<T>,
    max: GoDuration,
}

impl<T> MaxWait<T> {
    /// `NewWithMaxWaitRateLimiter(limiter, maxDelay)`.
    #[must_use]
    pub fn new(inner: SharedRateLimiter<T>, max: Duration) -> Self {
        Self::with_go_duration(inner, max.into())
    }

    /// The same with a Go duration: a negative cap is allowed, as in Go, and every wait then
    /// becomes that negative duration (which a queue treats as no wait).
    #[must_use]
    pub fn with_go_duration(inner: SharedRateLimiter<T>, max: GoDuration) -> Self {
        MaxWait { inner, max }
    }
}

impl<T> RateLimiter<T> for MaxWait<T> {
    fn when(&self, item: &T) -> GoDuration {
        self.inner.when(item).min(self.max)
    }
    fn forget(&self, item: &T) {
        self.inner.forget(item);
    }
    fn num_requeues(&self, item: &T) -> usize {
        self.inner.num_requeues(item)
    }
}

/// `DefaultTypedControllerRateLimiter()`: the max of a per-item exponential backoff (5ms to
/// 1000s) and an overall bucket of 10 qps with burst 100, on tokio's clock.
#[must_use]
pub fn client_go_default<T: Eq + Hash + Clone + Send + 'static>() -> MaxOf<T> {
    client_go_default_with_clock(Clock::tokio())
}

/// [`client_go_default`] with its bucket on `clock`.
#[must_use]
pub fn client_go_default_with_clock<T: Eq + Hash + Clone + Send + 'static>(
    clock: Clock,
) -> MaxOf<T> {
    MaxOf::new(vec![
        Arc::new(ItemExponential::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        )),
        Arc::new(Bucket::with_clock(10.0, 100, clock)),
    ])
}

/// `DefaultTypedItemBasedRateLimiter()`: per-item exponential, 1ms to 1000s.
#[must_use]
pub fn client_go_item_default<T: Eq + Hash + Clone>() -> ItemExponential<T> {
    ItemExponential::new(Duration::from_millis(1), Duration::from_secs(1000))
}

/// controller-runtime's default when the priority queue is used (v0.23+): per-item
/// exponential, 5ms to 1000s, with no bucket.
#[must_use]
pub fn controller_runtime_pq_default<T: Eq + Hash + Clone>() -> ItemExponential<T> {
    ItemExponential::new(Duration::from_millis(5), Duration::from_secs(1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whens<R: RateLimiter<&'static str>>(r: &R, item: &'static str, n: usize) -> Vec<String> {
        (0..n).map(|_| r.when(&item).to_string()).collect()
    }

    #[test]
    fn exponential_doubles_from_base_up_to_max() {
        let r = ItemExponential::new(Duration::from_secs(1), Duration::from_secs(60));
        assert_eq!(
            whens(&r, "a", 9),
            ["1s", "2s", "4s", "8s", "16s", "32s", "1m0s", "1m0s", "1m0s"]
        );
        assert_eq!(r.num_requeues(&"a"), 9);
        r.forget(&"a");
        assert_eq!(r.num_requeues(&"a"), 0);
        assert_eq!(r.when(&"a").to_string(), "1s");
    }

    #[test]
    fn exponential_overflow_hole_gives_min_int64_like_go_on_amd64() {
        let r = ItemExponential::with_go_durations(GoDuration(1), GoDuration(1_000_000_000_000));
        let all = whens(&r, "z", 66);
        assert_eq!(all[63], "-2562047h47m16.854775808s");
        assert_eq!(all[64], "16m40s");
    }

    #[test]
    fn fast_slow_switches_after_max_fast() {
        let r = ItemFastSlow::new(Duration::from_millis(5), Duration::from_secs(10), 3);
        assert_eq!(whens(&r, "a", 5), ["5ms", "5ms", "5ms", "10s", "10s"]);
    }

    #[test]
    fn max_of_charges_the_bucket_even_when_exponential_wins() {
        let e: SharedRateLimiter<&str> = Arc::new(ItemExponential::new(
            Duration::from_millis(1),
            Duration::from_secs(1),
        ));
        let b: SharedRateLimiter<&str> = Arc::new(Bucket::new(1.0, 1));
        let m = MaxOf::new(vec![e, b]);
        assert_eq!(m.when(&"a"), GoDuration(1_000_000));
        assert!(m.when(&"a") >= GoDuration(999_000_000));
    }
}
