//! client-go's rate-limiting queue (`rate_limiting_queue.go`).

use std::hash::Hash;
use std::sync::Arc;

use super::config::QueueConfig;
use super::delaying::DelayingQueue;
use super::metrics::QueueMetrics;
use super::ratelimiters::SharedRateLimiter;

/// A [`DelayingQueue`] whose `add_rate_limited` waits as long as its rate limiter says:
/// client-go's `TypedRateLimitingInterface`. Clones share the queue.
///
/// # Semantics
/// `add_rate_limited(x)` is `add_after(x, limiter.when(x))`: the limiter is charged on every
/// call, including calls that de-duplicate against a waiting entry, so three calls in a row
/// give `num_requeues == 3` but one processing, at the earliest ready time. A wait of zero or
/// less (the exponential limiter's overflow hole, a negative fast delay) is a plain `add`.
pub struct RateLimitingQueue<T> {
    delaying: DelayingQueue<T>,
    limiter: SharedRateLimiter<T>,
}

impl<T> Clone for RateLimitingQueue<T> {
    fn clone(&self) -> Self {
        RateLimitingQueue {
            delaying: self.delaying.clone(),
            limiter: Arc::clone(&self.limiter),
        }
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> RateLimitingQueue<T> {
    /// `NewTypedRateLimitingQueue(limiter)`.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    #[must_use]
    pub fn new(limiter: SharedRateLimiter<T>) -> Self {
        RateLimitingQueue {
            delaying: DelayingQueue::new(),
            limiter,
        }
    }

    /// The same, recording into `metrics`.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    #[must_use]
    pub fn with_metrics(limiter: SharedRateLimiter<T>, metrics: Arc<QueueMetrics<T>>) -> Self {
        Self::with_config(limiter, QueueConfig::default().metrics(metrics))
    }

    /// `NewTypedRateLimitingQueueWithConfig`: with the given clock and metrics. The limiter
    /// keeps its own clock; give a [`Bucket`](super::Bucket) the same one.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    #[must_use]
    pub fn with_config(limiter: SharedRateLimiter<T>, config: QueueConfig<T>) -> Self {
        RateLimitingQueue {
            delaying: DelayingQueue::with_config(config),
            limiter,
        }
    }

    /// Adds `item` after the wait its rate limiter gives it.
    pub fn add_rate_limited(&self, item: T) {
        let after = self.limiter.when(&item);
        self.delaying.add_after(item, after);
    }

    /// Stops rate limiting `item` (queued or waiting entries stay).
    pub fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    /// The limiter's count of failures for `item`.
    #[must_use]
    pub fn num_requeues(&self, item: &T) -> usize {
        self.limiter.num_requeues(item)
    }

    /// The delaying queue underneath (`add`, `add_after`, `get`, `done`, shutdown).
    #[must_use]
    pub fn delaying(&self) -> &DelayingQueue<T> {
        &self.delaying
    }

    /// The rate limiter.
    #[must_use]
    pub fn limiter(&self) -> &SharedRateLimiter<T> {
        &self.limiter
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workqueue::ItemExponential;
    use std::time::Duration;
    use tokio::time::Instant;

    #[tokio::test(start_paused = true)]
    async fn repeated_rate_limited_adds_count_every_call_but_process_once() {
        let limiter = Arc::new(ItemExponential::new(
            Duration::from_millis(100),
            Duration::from_secs(10),
        ));
        let q = RateLimitingQueue::new(limiter);
        let start = Instant::now();
        for _ in 0..3 {
            q.add_rate_limited("a");
        }
        assert_eq!(q.num_requeues(&"a"), 3);
        assert_eq!(q.delaying().get().await, Some("a"));
        assert_eq!(start.elapsed(), Duration::from_millis(100));
        q.delaying().done(&"a");
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(q.delaying().is_empty());
    }
}
