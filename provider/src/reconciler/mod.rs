//! The managed reconciler: crossplane-runtime's `managed.Reconciler`, path for path, over a
//! reflector cache, kube's typed API and the cloud client.
//!
//! # Semantics
//! Each reconcile makes **at most one Observe plus one of Create, Update or Delete** (c_max =
//! 2 cloud calls), no GET against the API server (reads come from the reflector caches), and
//! returns exactly one of: done, `RequeueAfter(poll)` (success paths), a rate-limited
//! requeue (creation, deletion and every failure, including cloud throttling), or an error
//! (a status write that failed other than by conflict). The paths are listed in
//! `specs/managed-reconciler.md` §5; the deviations are in the crate docs.

mod cache;
pub mod conditions;
mod cpu;
mod draws;
mod external;
mod flow;
pub mod meta;
mod pass;

use std::sync::Arc;

use k8s_openapi::api::core::v1::Secret;
use kube::runtime::reflector::Store;
use limiter::controller::{BoxFuture, ReconcileResult, Reconciler, Request};
use limiter::crossplane::Settings;
use tracing::Instrument;

pub use cache::ReadYourWrites;
pub use draws::Draws;
pub use external::{ConnectError, ExternalError, Observation};

use crate::cloud::CloudClient;
use crate::crd::{Managed, ProviderConfig};
use crate::events::EventSink;
use crate::metrics::Reconciles;
use meta::Clock;

/// What the reconcilers of one provider share.
#[derive(Clone)]
pub struct Context {
    /// The (rate-limited) Kubernetes client for writes.
    pub client: kube::Client,
    /// The cloud client.
    pub cloud: CloudClient,
    /// The rate-limit and poll settings.
    pub settings: Settings,
    /// Cached ProviderConfigs.
    pub provider_configs: Store<ProviderConfig>,
    /// Cached Secrets (credentials).
    pub secrets: Store<Secret>,
    /// The event writer.
    pub events: EventSink,
    /// Wall time on tokio's clock.
    pub clock: Clock,
    /// The random draws (jitter).
    pub draws: Arc<Draws>,
    /// Simulated CPU time of a reconcile, slept on tokio's clock before its work.
    pub reconcile_cost: std::time::Duration,
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
}

impl<K: Managed> ManagedReconciler<K> {
    /// A reconciler reading `store`.
    pub fn new(ctx: Arc<Context>, store: Store<K>) -> Self {
        ManagedReconciler {
            kind: kind_name::<K>(),
            ctx,
            cache: Arc::new(ReadYourWrites::new(store)),
        }
    }
}

fn kind_name<K: Managed>() -> &'static str {
    match K::COLLECTION {
        "buckets" => "Bucket",
        "databases" => "Database",
        "records" => "Record",
        _ => "Unknown",
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
                let (result, cpu) = cpu::timed(self.run(&request)).await;
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
