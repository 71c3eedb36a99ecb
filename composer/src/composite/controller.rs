//! One controller per XRD: core's XR queue and worker pool around a [`Reconciler`].
//!
//! Follows crossplane/crossplane's `definition/reconciler.go` (the XR controller it starts:
//! named `composite/<XRD name>`, a per-item exponential rate limiter from 1 s to 30 s, and
//! `--max-concurrent-reconciles` workers, 100 by default) on `limiter`'s controller runtime,
//! which maps results to queue operations as controller-runtime does.

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject};
use kube::core::GroupVersionKind;
use limiter::controller::{
    Action, BoxFuture, Controller, ControllerOptions, ReconcileError as RuntimeError,
    ReconcileResult, Reconciler as RuntimeReconciler, Request,
};
use limiter::crossplane::circuit::BreakerConfig;
use limiter::workqueue::{ItemExponential, PriorityQueue, WorkQueue};
use provider::reconciler::Draws;
use tokio::task::JoinHandle;

use super::{
    Cache, Composer, Realtime, Reconciler, Recorder, Requeue, RequeueSettings, Watched,
    watch_cached, watch_compositions, watch_revisions_cached,
};
use crate::api::CompositeResourceDefinition;
use crate::function::Functions;

/// `--max-concurrent-reconciles`' default: workers per XR controller.
pub const DEFAULT_MAX_CONCURRENT_RECONCILES: usize = 100;

/// Mixed into [`XrdSettings::jitter_seed`] to seed the reconciles' picks apart from the
/// requeue jitter.
const PICKS_STREAM: u64 = 0x5E1E_C7ED_0000_0000;

/// The XR queue: controller-runtime's priority queue with core's 1 s → 30 s per-item
/// backoff.
#[must_use]
pub fn xr_queue() -> WorkQueue<Request> {
    WorkQueue::Priority(PriorityQueue::new(Arc::new(ItemExponential::new(
        Duration::from_secs(1),
        Duration::from_secs(30),
    ))))
}

/// A [`Reconciler`] as the controller runtime calls it, with the source of its requeue
/// jitter's draws.
struct Runtime {
    reconciler: Arc<Reconciler>,
    draws: Draws,
}

impl RuntimeReconciler<Request> for Runtime {
    fn reconcile(&self, item: Request) -> BoxFuture<'_, ReconcileResult> {
        Box::pin(async move {
            let namespace = (!item.namespace.is_empty()).then_some(item.namespace.as_str());
            let u = self.draws.unit();
            match self.reconciler.reconcile(namespace, &item.name, u).await {
                Ok(Requeue::Never) => Ok(Action::done()),
                Ok(Requeue::After(d)) => Ok(Action::requeue_after(d)),
                Ok(Requeue::Backoff) => Ok(Action::requeue()),
                Err(error) => Err(RuntimeError::new(error)),
            }
        })
    }
}

/// Starts the controller of `xrd_name`'s XRs with `workers` workers; add XRs to its queue
/// (a watch's mapped events, or a test) and shut it down when done. The requeue jitter
/// draws from a source seeded by the operating system.
#[must_use]
pub fn start(xrd_name: &str, reconciler: Arc<Reconciler>, workers: usize) -> Controller<Request> {
    start_seeded(xrd_name, reconciler, workers, None)
}

/// [`start`], the requeue jitter drawn from a source seeded with `jitter_seed` when there
/// is one (the provider's [`Draws`]): a run on a paused clock then repeats draw for draw.
#[must_use]
pub fn start_seeded(
    xrd_name: &str,
    reconciler: Arc<Reconciler>,
    workers: usize,
    jitter_seed: Option<u64>,
) -> Controller<Request> {
    Controller::start(
        ControllerOptions::new(format!("composite/{xrd_name}"), xr_queue()).workers(workers),
        Arc::new(Runtime {
            reconciler,
            draws: jitter_seed.map_or_else(Draws::from_os, Draws::seeded),
        }),
    )
}

/// What [`start_xrd`] starts an XRD's controller with.
#[derive(Clone, Copy, Debug)]
pub struct XrdSettings {
    /// When XRs are requeued, and whether compositions are realtime (with them off, no
    /// composed kind is watched: XRs are polled every poll interval).
    pub requeue: RequeueSettings,
    /// The XR kind's circuit breaker.
    pub breaker: BreakerConfig,
    /// `--max-concurrent-reconciles`.
    pub workers: usize,
    /// Seeds the controller's draws (a run that must repeat, as the harness's virtual
    /// time): the requeue jitter, and from a second stream the Composition picks and the
    /// generated names' suffixes; `None` seeds them from the operating system, as core's
    /// are.
    pub jitter_seed: Option<u64>,
}

/// One XRD's running controller.
pub struct XrdController {
    /// The XRD's name.
    pub xrd: String,
    /// The XR kind.
    pub kind: String,
    /// The controller: its queue and workers.
    pub controller: Controller<Request>,
    /// The XR kind's circuit breaker, which its watches feed.
    pub realtime: Arc<Realtime>,
}

/// Starts the controller of `xrd`'s XRs as core's definition reconciler does once the XR
/// CRD is established: a [`Reconciler`] on a [`Composer`] calling `functions`, both reading
/// from one [`Cache`]; the informers that fill it and feed the queue through the XR kind's
/// breaker (the XRs, the Compositions, the CompositionRevisions and, with realtime
/// compositions, each composed kind a reconcile first meets: core's step 7) spawned into
/// `tasks`; `events` records the XRs' events. `resync` draws each informer's jittered resync
/// period: the XRs' first, then 16 that the composed kinds' watches take in turn, then the
/// revisions'.
#[must_use]
pub fn start_xrd(
    client: &kube::Client,
    functions: &Functions,
    xrd: CompositeResourceDefinition,
    settings: &XrdSettings,
    (events, resync): (&Recorder, &mut dyn FnMut() -> Option<Duration>),
    tasks: &mut Vec<JoinHandle<()>>,
) -> XrdController {
    let name = xrd.metadata.name.clone().unwrap_or_default();
    let version = xrd.referenceable_version().unwrap_or_default().to_owned();
    let gvk = GroupVersionKind::gvk(&xrd.spec.group, &version, &xrd.spec.names.kind);
    let resource = ApiResource::from_gvk_with_plural(&gvk, &xrd.spec.names.plural);
    let api_version = format!("{}/{version}", xrd.spec.group);
    let realtime = Arc::new(Realtime::new(&api_version, &gvk.kind, settings.breaker));
    // Composed kinds go to a task that starts their watches once the queue exists.
    let (kinds, mut new_kinds) = tokio::sync::mpsc::unbounded_channel::<ApiResource>();
    let cache = Cache::new();
    // The reconciles' own picks (a Composition among those a selector matches, a generated
    // name's suffix) come from a second seeded stream, apart from the requeue jitter's.
    let picks = Arc::new(
        settings
            .jitter_seed
            .map_or_else(Draws::from_os, |seed| Draws::seeded(seed ^ PICKS_STREAM)),
    );
    let composer = Composer::new(client.clone(), functions.clone())
        .with_cache(cache.clone())
        .with_draws(Arc::clone(&picks))
        .on_new_kind(move |kind| {
            let _ = kinds.send(kind.clone());
        });
    let reconciler = Reconciler::new(
        client.clone(),
        xrd,
        resource.clone(),
        composer,
        settings.requeue,
    )
    .with_realtime(Arc::clone(&realtime))
    .with_events(events.clone())
    .with_cache(cache.clone())
    .with_draws(picks);
    let controller = start_seeded(
        &name,
        Arc::new(reconciler),
        settings.workers,
        settings.jitter_seed,
    );
    let xrs: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let queue = controller.queue().clone();
    let (x_api, x_rt, x_q, x_cache, x_period) = (
        xrs.clone(),
        Arc::clone(&realtime),
        queue.clone(),
        cache.clone(),
        resync(),
    );
    tasks.push(tokio::spawn(async move {
        watch_cached(x_api, &resource, Watched::Xr, x_rt, x_q, x_period, &x_cache).await;
    }));
    // No controller of this XRD watches Compositions, but its reconciles read them: the
    // cache runs an informer of them (once per controller).
    let (c_client, c_cache) = (client.clone(), cache.clone());
    tasks.push(tokio::spawn(async move {
        watch_compositions(c_client, &c_cache).await;
    }));
    let (k_client, k_rt, k_q, k_cache) = (
        client.clone(),
        Arc::clone(&realtime),
        queue.clone(),
        cache.clone(),
    );
    let kind_periods: Vec<_> = (0..16).map(|_| resync()).collect();
    let watch_composed = settings.requeue.realtime;
    tasks.push(tokio::spawn(async move {
        // Dropped (so its watches aborted) when this task is aborted at shutdown.
        let mut watches = tokio::task::JoinSet::new();
        let mut periods = kind_periods.into_iter().cycle();
        while let Some(kind) = new_kinds.recv().await {
            if !watch_composed {
                continue;
            }
            tracing::info!(kind = %kind.kind, group = %kind.group, "watching a composed kind");
            let (rt, q, cache) = (Arc::clone(&k_rt), k_q.clone(), k_cache.clone());
            let api = Api::all_with(k_client.clone(), &kind);
            let period = periods.next().flatten();
            watches.spawn(async move {
                watch_cached(api, &kind, Watched::Composed, rt, q, period, &cache).await;
            });
        }
    }));
    let (revisions, r_period, r_rt) = (Api::all(client.clone()), resync(), Arc::clone(&realtime));
    tasks.push(tokio::spawn(async move {
        watch_revisions_cached(revisions, xrs, r_rt, queue, r_period, &cache).await;
    }));
    tracing::info!(xrd = %name, kind = %gvk.kind, "started the XR controller");
    XrdController {
        xrd: name,
        kind: gvk.kind,
        controller,
        realtime,
    }
}
