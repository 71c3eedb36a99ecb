//! Wiring a provider's controllers for its rate-limit model.

use std::sync::Arc;

use super::{GlobalRateLimited, MiddlewareStats, RateLimitModel, Settings, new_controller};
use crate::controller::{Controller, ControllerOptions, Request, SharedReconciler};
use crate::rate::{Limit, Limiter};
use crate::workqueue::{
    Bucket, PriorityQueue, QueueMetrics, RateLimitingQueue, SharedRateLimiter, WorkQueue,
    client_go_default,
};

/// What one provider process shares across its controllers: the global bucket and the
/// middleware counters. Build every controller of the process from one `ProviderRuntime`.
pub struct ProviderRuntime {
    settings: Settings,
    global: Option<Limiter>,
    middleware_stats: Arc<MiddlewareStats>,
}

impl ProviderRuntime {
    /// The shared parts for `settings`.
    #[must_use]
    pub fn new(settings: Settings) -> Self {
        let global = settings
            .global_bucket()
            .map(|(rate, burst)| Limiter::new(Limit(rate), burst));
        ProviderRuntime {
            settings,
            global,
            middleware_stats: Arc::new(MiddlewareStats::default()),
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
        let queue = match self.settings.model {
            RateLimitModel::ControllerRuntime => WorkQueue::Classic(
                RateLimitingQueue::with_metrics(Arc::new(client_go_default()), metrics),
            ),
            _ => WorkQueue::Priority(PriorityQueue::with_metrics(
                Arc::new(new_controller()),
                metrics,
            )),
        };
        let mut options = ControllerOptions::new(name, queue).workers(workers);
        let reconciler = match (self.settings.model, &self.global) {
            (RateLimitModel::Crossplane, Some(bucket)) => {
                let global: SharedRateLimiter<String> =
                    Arc::new(Bucket::from_limiter(bucket.clone()));
                let middleware = GlobalRateLimited::new(name, reconciler, global)
                    .with_stats(Arc::clone(&self.middleware_stats));
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
