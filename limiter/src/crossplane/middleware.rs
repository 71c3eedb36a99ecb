//! crossplane-runtime's global rate-limit middleware (`pkg/ratelimiter/reconciler.go`).

use std::collections::HashMap;
use std::fmt::Display;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use tokio::time::Instant;

use crate::clock::Clock;
use crate::controller::{Action, BoxFuture, ReconcileResult, Reconciler};
use crate::go::GoDuration;
use crate::instant::add_duration;
use crate::workqueue::SharedRateLimiter;

/// Counters that let the harness attribute reconciles beyond the nominal budget.
#[derive(Debug, Default)]
pub struct MiddlewareStats {
    reservations: AtomicU64,
    throttled: AtomicU64,
    early_runs: AtomicU64,
}

impl MiddlewareStats {
    /// `limiter_reservations_total`: `when` calls on the global limiter (one per pass of a key
    /// that is not flagged).
    #[must_use]
    pub fn reservations(&self) -> u64 {
        self.reservations.load(Ordering::Relaxed)
    }

    /// Passes that were throttled (`RequeueAfter`, inner reconciler not called).
    #[must_use]
    pub fn throttled(&self) -> u64 {
        self.throttled.load(Ordering::Relaxed)
    }

    /// `limiter_early_runs_total`: flagged passes that ran before their token's time to act.
    #[must_use]
    pub fn early_runs(&self) -> u64 {
        self.early_runs.load(Ordering::Relaxed)
    }
}

/// crossplane-runtime's `ratelimiter.Reconciler`: every pass of a key takes a token from a
/// global limiter before the inner reconciler runs; a throttled pass returns
/// `RequeueAfter(wait)` and flags the key, and the next pass of a flagged key runs without a
/// token.
///
/// # Semantics
/// Exactly as crossplane-runtime v2.4: the key is the controller name followed by the item's
/// text (`name + req.String()`); the flag is per key, so whichever pass of the key comes next
/// uses it, even an unrelated early event (flaws documented in docs/go-rate-limiting.md §5.6). The
/// limiter is `forget`-ed before the inner reconciler runs. A throttle's `RequeueAfter` makes
/// controller-runtime forget the item's own backoff.
pub struct GlobalRateLimited<R> {
    name: String,
    inner: R,
    limiter: SharedRateLimiter<String>,
    /// Flagged keys and the time their token becomes due.
    limited: Mutex<HashMap<String, Instant>>,
    stats: Arc<MiddlewareStats>,
    clock: Clock,
}

impl<R> GlobalRateLimited<R> {
    /// `ratelimiter.NewReconciler(name, inner, limiter)`.
    pub fn new(name: impl Into<String>, inner: R, limiter: SharedRateLimiter<String>) -> Self {
        GlobalRateLimited {
            name: name.into(),
            inner,
            limiter,
            limited: Mutex::new(HashMap::new()),
            stats: Arc::new(MiddlewareStats::default()),
            clock: Clock::tokio(),
        }
    }

    /// Reads `clock` to tell early runs (counters only; the default is tokio's clock).
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Shares counters with other middlewares (one set for a whole provider).
    #[must_use]
    pub fn with_stats(mut self, stats: Arc<MiddlewareStats>) -> Self {
        self.stats = stats;
        self
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> &Arc<MiddlewareStats> {
        &self.stats
    }

    fn when(&self, key: &str) -> GoDuration {
        let now = self.clock.now();
        let flagged = self.limited.lock().remove(key);
        if let Some(due) = flagged {
            if now < due {
                self.stats.early_runs.fetch_add(1, Ordering::Relaxed);
            }
            return GoDuration::ZERO;
        }
        let d = self.limiter.when(&key.to_owned());
        self.stats.reservations.fetch_add(1, Ordering::Relaxed);
        if d != GoDuration::ZERO {
            self.limited
                .lock()
                .insert(key.to_owned(), add_duration(now, d));
        }
        d
    }
}

impl<T, R> Reconciler<T> for GlobalRateLimited<R>
where
    T: Display + Send + 'static,
    R: Reconciler<T>,
{
    fn reconcile(&self, item: T) -> BoxFuture<'_, ReconcileResult> {
        let key = format!("{}{}", self.name, item);
        let d = self.when(&key);
        if d > GoDuration::ZERO {
            self.stats.throttled.fetch_add(1, Ordering::Relaxed);
            return Box::pin(std::future::ready(Ok(Action::requeue_after(d.to_std()))));
        }
        self.limiter.forget(&key);
        self.inner.reconcile(item)
    }
}
