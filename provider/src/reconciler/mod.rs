//! The managed reconciler: crossplane-runtime's `managed.Reconciler`, path for path, over a
//! reflector cache, kube's typed API and the cloud client.
//!
//! # Semantics
//! Each reconcile makes **at most one Observe plus one of Create, Update or Delete** (c_max =
//! 2 cloud calls), no GET against the API server (reads come from the reflector caches), and
//! returns exactly one of: done, `RequeueAfter(poll)` (success paths), a rate-limited
//! requeue (creation, deletion and every failure, including cloud throttling), or an error
//! (a status write that failed other than by conflict). The paths are listed in
//! docs/managed-reconciler.md, "The paths"; the deviations are in the crate docs.

mod cache;
pub mod conditions;
mod cpu;
mod draws;
mod external;
mod flow;
pub mod meta;
mod pass;
mod policies;

use std::collections::HashMap;
use std::sync::Arc;

use kube::runtime::reflector::Store;
use limiter::controller::{Action, BoxFuture, ReconcileResult, Reconciler, Request};
use limiter::crossplane::{FailureBackoff, Settings};
use limiter::workqueue::{ItemExponential, RateLimiter};
use parking_lot::Mutex;
use tracing::Instrument;

pub use cache::ReadYourWrites;
pub use draws::Draws;
pub use external::{
    CloudConnecter, ConnectError, Connecter, ExternalClient, ExternalError, ExternalFailure,
    Observation,
};

use crate::crd::Managed;
use crate::events::EventSink;
use crate::metrics::Reconciles;
use meta::Clock;

/// What the reconcilers of one provider share.
#[derive(Clone)]
pub struct Context {
    /// The (rate-limited) Kubernetes client for writes.
    pub client: kube::Client,
    /// The rate-limit and poll settings.
    pub settings: Settings,
    /// The event writer.
    pub events: EventSink,
    /// Wall time on tokio's clock.
    pub clock: Clock,
    /// The random draws (jitter).
    pub draws: Arc<Draws>,
    /// Simulated CPU time of a reconcile, slept on tokio's clock before its work.
    pub reconcile_cost: std::time::Duration,
    /// crossplane-runtime's creation grace period ([`meta::CREATION_GRACE`] by default).
    pub creation_grace: std::time::Duration,
    /// `provider_reconciles_total`.
    pub reconciles: Reconciles,
    /// `provider_reconcile_cpu_seconds`.
    pub reconcile_cpu: prometheus_client::metrics::histogram::Histogram,
}

/// The reconciler of one managed kind; a [`limiter::controller::Reconciler`] of
/// [`Request`]s.
pub struct ManagedReconciler<K: Managed> {
    kind: &'static str,
    ctx: Arc<Context>,
    cache: Arc<ReadYourWrites<K>>,
    connecter: Arc<dyn Connecter<K>>,
    /// Per-item failure backoffs of the resources whose ProviderConfig sets its own
    /// ([`Connecter::failure_backoff`]), one per distinct policy.
    overrides: Mutex<HashMap<FailureBackoff, ItemExponential<Request>>>,
}

impl<K: Managed> ManagedReconciler<K> {
    /// A reconciler reading `store`, connecting through `connecter`.
    pub fn new(ctx: Arc<Context>, store: Store<K>, connecter: Arc<dyn Connecter<K>>) -> Self {
        ManagedReconciler {
            kind: K::LABEL,
            ctx,
            cache: Arc::new(ReadYourWrites::new(store)),
            connecter,
            overrides: Mutex::new(HashMap::new()),
        }
    }

    /// A ProviderConfig's failure backoff wins over the controller's: a rate-limited requeue
    /// of a resource whose ProviderConfig sets one becomes a requeue after that backoff's
    /// next delay (per item: `base·2^failures` up to `max`, as the controller's own limiter
    /// computes it), and any other outcome forgets the item's failures.
    fn apply_backoff(
        &self,
        request: &Request,
        backoff: Option<FailureBackoff>,
        result: ReconcileResult,
    ) -> ReconcileResult {
        let mut overrides = self.overrides.lock();
        match (&result, backoff) {
            (Ok(action), Some(b)) if action.requeue && action.requeue_after.is_none() => {
                let limiter = overrides
                    .entry(b)
                    .or_insert_with(|| ItemExponential::new(b.base, b.max));
                let delay = limiter.when(request).to_std();
                let mut next = Action::requeue_after(delay);
                next.priority = action.priority;
                Ok(next)
            }
            (Ok(_), _) => {
                for limiter in overrides.values() {
                    limiter.forget(request);
                }
                result
            }
            (Err(_), _) => result,
        }
    }
}

impl<K: Managed> Reconciler<Request> for ManagedReconciler<K> {
    fn reconcile(&self, request: Request) -> BoxFuture<'_, ReconcileResult> {
        let span = tracing::debug_span!("reconcile", kind = self.kind, %request);
        Box::pin(
            async move {
                if !self.ctx.reconcile_cost.is_zero() {
                    tokio::time::sleep(self.ctx.reconcile_cost).await;
                }
                let backoff = self
                    .cache
                    .get(&request.namespace, &request.name)
                    .and_then(|mr| self.connecter.failure_backoff(&mr));
                let (result, cpu) = cpu::timed(self.run(&request)).await;
                let result = self.apply_backoff(&request, backoff, result);
                self.ctx.reconcile_cpu.observe(cpu.as_secs_f64());
                let label = match &result {
                    Ok(a) if a.requeue_after.is_some() => "requeue_after",
                    Ok(a) if a.requeue => "requeue",
                    Ok(_) => "success",
                    Err(_) => "error",
                };
                self.ctx.reconciles.inc(self.kind, label);
                tracing::debug!(result = label, "reconciled");
                result
            }
            .instrument(span),
        )
    }
}
