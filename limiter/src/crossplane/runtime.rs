//! Wiring a provider's controllers for its rate-limit model.

use std::sync::Arc;

use super::{GlobalRateLimited, MiddlewareStats, RateLimitModel, Settings, new_controller};
use crate::clock::Clock;
use crate::controller::{Controller, ControllerOptions, Request, SharedReconciler};
use crate::rate::{Limit, Limiter};
use crate::workqueue::{
    Bucket, PriorityQueue, QueueConfig, QueueMetrics, RateLimitingQueue, SharedRateLimiter,
    WorkQueue, client_go_default_with_clock,
};

/// What one provider process shares across its controllers: the global bucket and the
/// middleware counters. Build every controller of the process from one `ProviderRuntime`.
///
/// Everything runs on one [`Clock`]: tokio's by default, which is also what a provider run on
/// tokio's paused clock needs (see [`crate::clock`]).
pub struct ProviderRuntime {
    settings: Settings,
    global: Option<Limiter>,
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
        let global = settings
            .global_bucket()
            .map(|(rate, burst)| Limiter::with_clock(Limit(rate), burst, clock.clone()));
        ProviderRuntime {
            settings,
            global,
            middleware_stats: Arc::new(MiddlewareStats::default()),
            clock,
        }
    }

    /// The settings.
    #[must_use]
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The global reconcile bucket, if the model has one.
    #[must_use]
    pub fn global_bucket(&self) -> Option<&Limiter> {
        self.global.as_ref()
    }

    /// Counters of the `crossplane` middleware (zero for other models).
    #[must_use]
    pub fn middleware_stats(&self) -> &Arc<MiddlewareStats> {
        &self.middleware_stats
    }

    /// Starts a controller named `name` for `reconciler`, wired for the model:
    /// - `crossplane`: priority queue with per-item 1s..60s, R workers, the global-limiter
    ///   middleware around the reconciler;
    /// - `in-queue`: the same queue and workers, the global bucket as the hand-out gate;
    /// - `controller-runtime`: classic queue with client-go's default limiter, 1 worker;
    /// - `concurrency-only`: priority queue with 1s..60s, R workers, no bucket.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub fn controller(
        &self,
        name: &str,
        reconciler: SharedReconciler<Request>,
        metrics: Arc<QueueMetrics<Request>>,
    ) -> Controller<Request> {
        let workers = self.settings.workers_per_controller();
        let config = QueueConfig::default()
            .clock(self.clock.clone())
            .metrics(metrics);
        let queue = match self.settings.model {
            RateLimitModel::ControllerRuntime => {
                WorkQueue::Classic(RateLimitingQueue::with_config(
                    Arc::new(client_go_default_with_clock(self.clock.clone())),
                    config,
                ))
            }
            _ => WorkQueue::Priority(PriorityQueue::with_config(
                Arc::new(new_controller()),
                config,
            )),
        };
        let mut options = ControllerOptions::new(name, queue).workers(workers);
        let reconciler = match (self.settings.model, &self.global) {
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
