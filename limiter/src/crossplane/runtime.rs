//! Wiring a provider's controllers for its rate-limit model.

use std::sync::Arc;

use super::{FailureBackoff, GlobalRateLimited, MiddlewareStats, RateLimitModel, Scope, Settings};
use crate::clock::Clock;
use crate::controller::{Controller, ControllerOptions, Request, SharedReconciler};
use crate::rate::{Limit, Limiter};
use crate::workqueue::{
    Bucket, ItemExponential, MaxOf, PriorityQueue, QueueConfig, QueueMetrics, RateLimitingQueue,
    SharedRateLimiter, WorkQueue,
};

/// What one provider process shares across its controllers: the global bucket (or, with
/// [`Settings::scoped_buckets`], one per [`Scope`], as crossplane-runtime v2 providers run) and
/// the middleware counters. Build every controller of the process from one `ProviderRuntime`.
///
/// Everything runs on one [`Clock`]: tokio's by default, which is also what a provider run on
/// tokio's paused clock needs (see [`crate::clock`]).
pub struct ProviderRuntime {
    settings: Settings,
    /// The shared bucket, or the cluster scope's.
    global: Option<Limiter>,
    /// The namespaced scope's bucket, with scoped buckets.
    global_namespaced: Option<Limiter>,
    middleware_stats: Arc<MiddlewareStats>,
    clock: Clock,
}

impl ProviderRuntime {
    /// The shared parts for `settings`, on tokio's clock.
    #[must_use]
    pub fn new(settings: Settings) -> Self {
        Self::with_clock(settings, Clock::tokio())
    }

    /// The shared parts for `settings`, with every bucket, queue and gate on `clock`.
    #[must_use]
    pub fn with_clock(settings: Settings, clock: Clock) -> Self {
        let bucket = || {
            settings
                .global_bucket()
                .map(|(rate, burst)| Limiter::with_clock(Limit(rate), burst, clock.clone()))
        };
        let global = bucket();
        let global_namespaced = if settings.scoped_buckets {
            bucket()
        } else {
            None
        };
        ProviderRuntime {
            settings,
            global,
            global_namespaced,
            middleware_stats: Arc::new(MiddlewareStats::default()),
            clock,
        }
    }

    /// The settings.
    #[must_use]
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The global reconcile bucket, if the model has one (the cluster scope's with scoped
    /// buckets).
    #[must_use]
    pub fn global_bucket(&self) -> Option<&Limiter> {
        self.global.as_ref()
    }

    /// The global bucket of controllers in `scope`: the shared one, or the scope's own with
    /// scoped buckets.
    #[must_use]
    pub fn global_bucket_of(&self, scope: Scope) -> Option<&Limiter> {
        match scope {
            Scope::Namespaced if self.settings.scoped_buckets => self.global_namespaced.as_ref(),
            _ => self.global.as_ref(),
        }
    }

    /// Counters of the `crossplane` middleware (zero for other models).
    #[must_use]
    pub fn middleware_stats(&self) -> &Arc<MiddlewareStats> {
        &self.middleware_stats
    }

    /// Starts a cluster-scoped controller named `name` for `reconciler`
    /// ([`ProviderRuntime::controller_in`] with [`Scope::Cluster`]; with one shared bucket the
    /// scope does not matter).
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub fn controller(
        &self,
        name: &str,
        reconciler: SharedReconciler<Request>,
        metrics: Arc<QueueMetrics<Request>>,
    ) -> Controller<Request> {
        self.controller_in(Scope::Cluster, name, reconciler, metrics)
    }

    /// Starts a controller of a kind in `scope`, named `name`, for `reconciler`, with the
    /// provider-wide failure backoff ([`Settings::failure_backoff`]), wired for the model:
    /// - `crossplane`: priority queue with the per-item backoff (1s..60s by default), R
    ///   workers, the global-limiter middleware (the scope's bucket) around the reconciler;
    /// - `in-queue`: the same queue and workers, the scope's bucket as the hand-out gate;
    /// - `controller-runtime`: classic queue with client-go's default limiter (its exponential
    ///   part 5ms..1000s by default), 1 worker;
    /// - `concurrency-only`: priority queue with the per-item backoff, R workers, no bucket.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub fn controller_in(
        &self,
        scope: Scope,
        name: &str,
        reconciler: SharedReconciler<Request>,
        metrics: Arc<QueueMetrics<Request>>,
    ) -> Controller<Request> {
        let backoff = self.settings.failure_backoff();
        self.controller_with_backoff(scope, backoff, name, reconciler, metrics)
    }

    /// [`ProviderRuntime::controller_in`] with a failure backoff of its own: the hook for a
    /// ProviderConfig's `reconciliationPolicy.exponentialFailureRateLimiter`, which in upjet
    /// providers wins over `--backoff-base` and `--backoff-max`.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub fn controller_with_backoff(
        &self,
        scope: Scope,
        backoff: FailureBackoff,
        name: &str,
        reconciler: SharedReconciler<Request>,
        metrics: Arc<QueueMetrics<Request>>,
    ) -> Controller<Request> {
        let workers = self.settings.workers_per_controller();
        let config = QueueConfig::default()
            .clock(self.clock.clone())
            .metrics(metrics);
        let per_item = Arc::new(ItemExponential::new(backoff.base, backoff.max));
        let queue = match self.settings.model {
            // client-go's DefaultTypedControllerRateLimiter, its exponential part from `backoff`.
            RateLimitModel::ControllerRuntime => {
                WorkQueue::Classic(RateLimitingQueue::with_config(
                    Arc::new(MaxOf::new(vec![
                        per_item,
                        Arc::new(Bucket::with_clock(10.0, 100, self.clock.clone())),
                    ])),
                    config,
                ))
            }
            _ => WorkQueue::Priority(PriorityQueue::with_config(per_item, config)),
        };
        let mut options = ControllerOptions::new(name, queue).workers(workers);
        let reconciler = match (self.settings.model, self.global_bucket_of(scope)) {
            (RateLimitModel::Crossplane, Some(bucket)) => {
                let global: SharedRateLimiter<String> =
                    Arc::new(Bucket::from_limiter(bucket.clone()));
                let middleware = GlobalRateLimited::new(name, reconciler, global)
                    .with_stats(Arc::clone(&self.middleware_stats))
                    .with_clock(self.clock.clone());
                Arc::new(middleware) as SharedReconciler<Request>
            }
            (RateLimitModel::InQueue, Some(bucket)) => {
                options = options.gate(bucket.clone());
                reconciler
            }
            _ => reconciler,
        };
        Controller::start(options, reconciler)
    }
}
