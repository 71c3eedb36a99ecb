//! A reconcile runtime: N workers over a [`WorkQueue`], with controller-runtime's mapping from
//! reconcile results to queue operations.
//!
//! | reconcile returned | queue operation | forget? |
//! |---|---|---|
//! | error (not terminal) | `add_rate_limited` (the limiter's `when` is charged) | no |
//! | terminal error | nothing | no (the failure count is kept) |
//! | error with a `requeue_after` | as for an error: the delay is ignored | no |
//! | `requeue_after(d)` | `forget`, then `add_after(d)` (not rate limited) | yes |
//! | `requeue()` | `add_rate_limited` | no |
//! | done | — | yes |
//!
//! The requeue keeps the priority the item was handed out with unless the result sets one.
//!
//! With [`ControllerOptions::gate`] set, every hand-out first reserves a token from that
//! bucket and waits for it, holding the item: the `in-queue` model (one token per reconcile,
//! no second trip through the queue, no backoff reset).
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use limiter::controller::{Action, Controller, ControllerOptions, FnReconciler, Request};
//! use limiter::workqueue::{PriorityQueue, WorkQueue, controller_runtime_pq_default};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let seen = Arc::new(AtomicUsize::new(0));
//! let counter = Arc::clone(&seen);
//! let queue = WorkQueue::Priority(PriorityQueue::new(Arc::new(controller_runtime_pq_default())));
//! let controller = Controller::start(
//!     ControllerOptions::new("example", queue).workers(2),
//!     Arc::new(FnReconciler(move |_req: Request| {
//!         let counter = Arc::clone(&counter);
//!         async move {
//!             counter.fetch_add(1, Ordering::SeqCst);
//!             Ok(Action::done())
//!         }
//!     })),
//! );
//! controller.queue().add(Request::new("default", "a"));
//! tokio::time::sleep(std::time::Duration::from_millis(1)).await;
//! controller.shut_down().await;
//! assert_eq!(seen.load(Ordering::SeqCst), 1);
//! # }
//! ```

mod reconciler;
mod request;
mod result;
mod stats;

use std::hash::Hash;
use std::sync::Arc;

use tokio::task::JoinSet;

pub use reconciler::{BoxFuture, FnReconciler, Reconciler, SharedReconciler};
pub use request::Request;
pub use result::{Action, BoxError, Outcome, ReconcileError, ReconcileResult};
pub use stats::{ControllerStats, ControllerStatsSnapshot};

use crate::go::GoDuration;
use crate::rate::Limiter;
use crate::workqueue::{AddOpts, WorkQueue};

/// How to run a controller.
pub struct ControllerOptions<T> {
    name: String,
    queue: WorkQueue<T>,
    workers: usize,
    gate: Option<Limiter>,
}

impl<T> ControllerOptions<T> {
    /// A controller named `name` working from `queue`, with one worker and no gate.
    pub fn new(name: impl Into<String>, queue: WorkQueue<T>) -> Self {
        ControllerOptions {
            name: name.into(),
            queue,
            workers: 1,
            gate: None,
        }
    }

    /// `MaxConcurrentReconciles`; 0 means 1, as in controller-runtime.
    #[must_use]
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = workers.max(1);
        self
    }

    /// The `in-queue` model: reserve a token from `bucket` at every hand-out and wait for it
    /// (on the bucket's clock) before reconciling. Several controllers may share one bucket.
    #[must_use]
    pub fn gate(mut self, bucket: Limiter) -> Self {
        self.gate = Some(bucket);
        self
    }
}

/// A running controller: its workers, its queue and its counters.
pub struct Controller<T> {
    name: String,
    queue: WorkQueue<T>,
    stats: Arc<ControllerStats>,
    workers: JoinSet<()>,
}

struct Worker<T> {
    name: Arc<str>,
    queue: WorkQueue<T>,
    reconciler: SharedReconciler<T>,
    stats: Arc<ControllerStats>,
    gate: Option<Limiter>,
}

impl<T: Eq + Hash + Clone + Send + Sync + std::fmt::Debug + 'static> Controller<T> {
    /// Starts the workers on the current tokio runtime.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub fn start(options: ControllerOptions<T>, reconciler: SharedReconciler<T>) -> Self {
        let stats = Arc::new(ControllerStats::default());
        let name: Arc<str> = Arc::from(options.name.as_str());
        let mut workers = JoinSet::new();
        for _ in 0..options.workers {
            let worker = Worker {
                name: Arc::clone(&name),
                queue: options.queue.clone(),
                reconciler: Arc::clone(&reconciler),
                stats: Arc::clone(&stats),
                gate: options.gate.clone(),
            };
            workers.spawn(worker.run());
        }
        Controller {
            name: options.name,
            queue: options.queue,
            stats,
            workers,
        }
    }

    /// The controller's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The queue: watch handlers call [`WorkQueue::add`] on it.
    #[must_use]
    pub fn queue(&self) -> &WorkQueue<T> {
        &self.queue
    }

    /// Reconcile counters.
    #[must_use]
    pub fn stats(&self) -> ControllerStatsSnapshot {
        self.stats.snapshot()
    }

    /// The counters themselves, which outlive the controller: a metrics registry keeps
    /// exporting them after a shutdown, as controller-runtime's global counters do.
    #[must_use]
    pub fn stats_handle(&self) -> Arc<ControllerStats> {
        Arc::clone(&self.stats)
    }

    /// Shuts the queue down and waits for the workers to finish their current reconciles.
    pub async fn shut_down(mut self) {
        self.queue.shut_down();
        while self.workers.join_next().await.is_some() {}
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + std::fmt::Debug + 'static> Worker<T> {
    async fn run(self) {
        while let Some((item, priority)) = self.queue.get_with_priority().await {
            if let Some(gate) = &self.gate {
                let clock = gate.clock();
                let now = clock.now();
                let r = gate.reserve_at(now);
                self.stats.reserved();
                if r.delay_from(now) > GoDuration::ZERO {
                    clock.sleep_until(r.time_to_act()).await;
                }
            }
            self.stats.worker_active(true);
            let result = self.reconciler.reconcile(item.clone()).await;
            self.stats.worker_active(false);
            let outcome = self.handle(&item, priority, result);
            self.stats.record(outcome);
            self.queue.done(&item);
        }
    }

    /// controller-runtime's `reconcileHandler` after the reconcile returned.
    fn handle(&self, item: &T, priority: i64, result: ReconcileResult) -> Outcome {
        match result {
            Err(e) => {
                let priority = e.result().priority.unwrap_or(priority);
                if e.is_terminal() {
                    tracing::warn!(controller = %self.name, ?item, error = %e, "terminal reconcile error");
                    return Outcome::TerminalError;
                }
                if !e.result().is_zero() {
                    tracing::info!(controller = %self.name, ?item, "reconciler returned both a result and an error; the result is ignored");
                }
                tracing::debug!(controller = %self.name, ?item, error = %e, "reconcile error");
                self.queue.add_with_opts(
                    AddOpts::rate_limited().with_priority(priority),
                    item.clone(),
                );
                Outcome::Error
            }
            Ok(action) => {
                let priority = action.priority.unwrap_or(priority);
                if let Some(after) = action.requeue_after.filter(|d| !d.is_zero()) {
                    self.queue.forget(item);
                    self.queue.add_with_opts(
                        AddOpts::after(GoDuration::from_std(after)).with_priority(priority),
                        item.clone(),
                    );
                    Outcome::RequeueAfter
                } else if action.requeue {
                    self.queue.add_with_opts(
                        AddOpts::rate_limited().with_priority(priority),
                        item.clone(),
                    );
                    Outcome::Requeue
                } else {
                    self.queue.forget(item);
                    Outcome::Success
                }
            }
        }
    }
}
