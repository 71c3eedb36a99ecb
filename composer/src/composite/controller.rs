//! One controller per XRD: core's XR queue and worker pool around a [`Reconciler`].
//!
//! Follows crossplane/crossplane's `definition/reconciler.go` (the XR controller it starts:
//! named `composite/<XRD name>`, a per-item exponential rate limiter from 1 s to 30 s, and
//! `--max-concurrent-reconciles` workers, 100 by default) on `limiter`'s controller runtime,
//! which maps results to queue operations as controller-runtime does.

use std::sync::Arc;
use std::time::Duration;

use limiter::controller::{
    Action, BoxFuture, Controller, ControllerOptions, ReconcileError as RuntimeError,
    ReconcileResult, Reconciler as RuntimeReconciler, Request,
};
use limiter::workqueue::{ItemExponential, PriorityQueue, WorkQueue};

use super::{Reconciler, Requeue};

/// `--max-concurrent-reconciles`' default: workers per XR controller.
pub const DEFAULT_MAX_CONCURRENT_RECONCILES: usize = 100;

/// The XR queue: controller-runtime's priority queue with core's 1 s → 30 s per-item
/// backoff.
#[must_use]
pub fn xr_queue() -> WorkQueue<Request> {
    WorkQueue::Priority(PriorityQueue::new(Arc::new(ItemExponential::new(
        Duration::from_secs(1),
        Duration::from_secs(30),
    ))))
}

/// A [`Reconciler`] as the controller runtime calls it.
struct Runtime(Arc<Reconciler>);

impl RuntimeReconciler<Request> for Runtime {
    fn reconcile(&self, item: Request) -> BoxFuture<'_, ReconcileResult> {
        Box::pin(async move {
            let namespace = (!item.namespace.is_empty()).then_some(item.namespace.as_str());
            let u: f64 = rand::random();
            match self.0.reconcile(namespace, &item.name, u).await {
                Ok(Requeue::Never) => Ok(Action::done()),
                Ok(Requeue::After(d)) => Ok(Action::requeue_after(d)),
                Ok(Requeue::Backoff) => Ok(Action::requeue()),
                Err(error) => Err(RuntimeError::new(error)),
            }
        })
    }
}

/// Starts the controller of `xrd_name`'s XRs with `workers` workers; add XRs to its queue
/// (a watch's mapped events, or a test) and shut it down when done.
#[must_use]
pub fn start(xrd_name: &str, reconciler: Arc<Reconciler>, workers: usize) -> Controller<Request> {
    Controller::start(
        ControllerOptions::new(format!("composite/{xrd_name}"), xr_queue()).workers(workers),
        Arc::new(Runtime(reconciler)),
    )
}
