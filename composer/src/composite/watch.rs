//! Realtime composition's watches: an informer-like loop per watched kind that turns
//! kube's watcher events into Create, Update and Delete events (an Update carries the
//! previous object, as an informer's does), maps them through [`Realtime`] and adds the
//! kept XRs to the controller's queue.
//!
//! Core starts one cluster-wide informer per composed kind and one on the XR kind
//! (`definition/reconciler.go`); no predicates are applied.
//!
//! **Resync** (`--sync-interval`, 1 h): each informer replays every object it holds as an
//! Update whose old and new objects are the same, on a period of its own drawn once as the
//! interval × [0.9, 1.1) (controller-runtime `pkg/cache/internal/informers.go`,
//! `calculateResyncPeriod`). Each replay goes through the breaker like any Update (2 tokens
//! an object, crossplane-contrib/provider-upjet-azure#1284), and what it keeps goes into the
//! queue at controller-runtime's low priority, as `enqueue_mapped.go` adds an Update whose
//! resourceVersion did not change.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kube::runtime::watcher::{self, Event};
use limiter::controller::Request;
use limiter::crossplane::circuit::{Handled, WatchEvent};
use limiter::workqueue::{AddOpts, WorkQueue};
use tokio::time::Instant;

use super::Realtime;
use crate::api::{Composition, CompositionRevision};

/// The API resource Compositions are cached under.
#[must_use]
pub fn composition_resource() -> ApiResource {
    ApiResource::erase::<Composition>(&())
}

/// The API resource CompositionRevisions are cached under.
#[must_use]
pub fn revision_resource() -> ApiResource {
    ApiResource::erase::<CompositionRevision>(&())
}

/// Which map function a watch runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watched {
    /// The XR kind itself.
    Xr,
    /// A composed kind.
    Composed,
}

/// An object's key in a watch's store: namespace and name.
type Key = (Option<String>, Option<String>);

/// An object a watch holds, shared by the store and its readers, with its JSON value made
/// once, at the first read that wants it (the composer reads each composed resource at
/// every reconcile of its XR, far more often than the resource changes).
#[derive(Debug)]
pub struct Cached {
    object: DynamicObject,
    value: std::sync::OnceLock<serde_json::Value>,
}

impl Cached {
    /// `object`, its value not made yet.
    #[must_use]
    pub fn new(object: DynamicObject) -> Self {
        Cached {
            object,
            value: std::sync::OnceLock::new(),
        }
    }

    /// The object.
    #[must_use]
    pub fn object(&self) -> &DynamicObject {
        &self.object
    }

    /// The object as JSON, made at the first call.
    ///
    /// # Panics
    /// Never: a `DynamicObject` always serializes.
    pub fn value(&self) -> &serde_json::Value {
        self.value
            .get_or_init(|| serde_json::to_value(&self.object).expect("objects serialize"))
    }

    /// The object, taken from `cached` when no one else holds it, else a copy.
    #[must_use]
    pub fn into_object(cached: Arc<Cached>) -> DynamicObject {
        Arc::try_unwrap(cached).map_or_else(|shared| shared.object.clone(), |c| c.object)
    }
}

/// What one watch holds, and whether it has synced (listed everything once), as an
/// informer's store and its `HasSynced`.
#[derive(Debug)]
struct Kind {
    /// Each object shared, so that a read takes no copy of it.
    objects: RwLock<BTreeMap<Key, Arc<Cached>>>,
    synced: tokio::sync::watch::Sender<bool>,
}

impl Default for Kind {
    fn default() -> Self {
        Kind {
            objects: RwLock::default(),
            synced: tokio::sync::watch::Sender::new(false),
        }
    }
}

impl Kind {
    /// Waits until the watch filling this store has synced.
    async fn synced(&self) {
        let mut synced = self.synced.subscribe();
        // The sender lives in `self`, so the wait ends only by a sync.
        let _ = synced.wait_for(|s| *s).await;
    }

    fn insert(&self, object: DynamicObject) {
        let key = (
            object.metadata.namespace.clone(),
            object.metadata.name.clone(),
        );
        self.objects
            .write()
            .expect("not poisoned")
            .insert(key, Arc::new(Cached::new(object)));
    }

    fn remove(&self, object: &DynamicObject) {
        let key = (
            object.metadata.namespace.clone(),
            object.metadata.name.clone(),
        );
        self.objects.write().expect("not poisoned").remove(&key);
    }
}

type Store = Arc<Kind>;
/// A kind: group, version and kind.
type KindKey = (String, String, String);

/// The objects the watches hold, by kind: what core's informer cache serves to a
/// reconcile. A watch started with [`watch_cached`], [`watch_into`] or
/// [`watch_revisions_cached`] keeps its kind's store current; the composer reads composed
/// resources from it ([`super::Composer::with_cache`]), the reconciler the XR, Compositions
/// and CompositionRevisions ([`super::Reconciler::with_cache`]), each read of those three
/// waiting until its kind's watch has synced, as controller-runtime's cached client does.
#[derive(Clone, Debug, Default)]
pub struct Cache {
    kinds: Arc<RwLock<HashMap<KindKey, Store>>>,
}

impl Cache {
    /// An empty cache.
    #[must_use]
    pub fn new() -> Self {
        Cache::default()
    }

    fn key(resource: &ApiResource) -> KindKey {
        (
            resource.group.clone(),
            resource.version.clone(),
            resource.kind.clone(),
        )
    }

    /// The store of `resource`'s kind, made empty if no watch filled it yet.
    fn store(&self, resource: &ApiResource) -> Store {
        let mut kinds = self.kinds.write().expect("not poisoned");
        Arc::clone(kinds.entry(Cache::key(resource)).or_default())
    }

    /// Whether a watch fills `resource`'s kind.
    #[must_use]
    pub fn watches(&self, resource: &ApiResource) -> bool {
        self.kinds
            .read()
            .expect("not poisoned")
            .contains_key(&Cache::key(resource))
    }

    /// The object `name` (in `namespace`) of `resource`'s kind, if a watch of that kind
    /// holds it: the object the store holds, shared.
    #[must_use]
    pub fn get(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Arc<Cached>> {
        let store = self
            .kinds
            .read()
            .expect("not poisoned")
            .get(&Cache::key(resource))
            .cloned()?;
        let objects = store.objects.read().expect("not poisoned");
        objects
            .get(&(namespace.map(str::to_owned), Some(name.to_owned())))
            .cloned()
    }

    /// [`Cache::get`] once a watch of `resource`'s kind has synced: waits for that sync
    /// (forever if no watch of the kind is started), as a read of controller-runtime's
    /// cache blocks until its informer has synced, then lets the watches catch up
    /// (`catch_up`).
    pub async fn get_synced(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Arc<Cached>> {
        let store = self.store(resource);
        store.synced().await;
        catch_up().await;
        let objects = store.objects.read().expect("not poisoned");
        objects
            .get(&(namespace.map(str::to_owned), Some(name.to_owned())))
            .cloned()
    }

    /// Every object of `resource`'s kind once a watch of it has synced (waiting as
    /// [`Cache::get_synced`]), by namespace and name.
    pub async fn list_synced(&self, resource: &ApiResource) -> Vec<DynamicObject> {
        let store = self.store(resource);
        store.synced().await;
        catch_up().await;
        let objects = store.objects.read().expect("not poisoned");
        objects.values().map(|o| o.object().clone()).collect()
    }
}

/// How many times a cached read yields first: more than the hops an event takes from the
/// API server's write to a watch's store (the server's watch stream, the client's body, the
/// watcher, the store).
const CATCH_UP_YIELDS: usize = 8;

/// Lets every task that is ready run before a cached read. In core the informers run in
/// goroutines beside the workers, so an event the API server has already sent reaches the
/// cache within moments of a write. On one thread (the embedded stack, paused time) a
/// worker that reads right after its own write would otherwise read before the watch task
/// has been polled, every time: a reconcile's status apply and status Update then undo each
/// other's conditions on every pass, each pass's two events queueing the next, until the
/// XR's breaker opens, a storm no real core shows as a rule. Yielding costs no time, real or
/// virtual; a read can still be stale when the event is not yet sent, as in core.
async fn catch_up() {
    for _ in 0..CATCH_UP_YIELDS {
        tokio::task::yield_now().await;
    }
}

/// controller-runtime's `handler.LowPriority`: the priority of an Update whose old and new
/// resourceVersions are equal, as a resync's are.
pub const LOW_PRIORITY: i64 = -100;

/// An informer's resync period: `sync_interval` × [0.9, 1.1), with `u` a uniform draw in
/// `[0, 1)` (controller-runtime's `calculateResyncPeriod`).
#[must_use]
pub fn resync_period(sync_interval: Duration, u: f64) -> Duration {
    sync_interval.mul_f64(0.9 + u / 5.0)
}

/// Adds what a handler kept: at [`LOW_PRIORITY`] when `low`.
fn enqueue(queue: &WorkQueue<Request>, handled: Handled, low: bool) {
    for request in handled.enqueued {
        if low {
            queue.add_with_opts(AddOpts::default().with_priority(LOW_PRIORITY), request);
        } else {
            queue.add(request);
        }
    }
}

fn same_version(old: Option<&DynamicObject>, new: &DynamicObject) -> bool {
    old.is_some_and(|o| o.metadata.resource_version == new.metadata.resource_version)
}

/// The informer's resync timer: never without an interval.
async fn next_resync(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Watches `api` until the stream ends, feeding `queue` through `realtime`, with no
/// resync.
pub async fn watch(
    api: Api<DynamicObject>,
    watched: Watched,
    realtime: Arc<Realtime>,
    queue: WorkQueue<Request>,
) {
    watch_with_resync(api, watched, realtime, queue, None).await;
}

/// [`watch`], replaying every object it holds as an Update every `period`: this
/// informer's own period, [`resync_period`] of `--sync-interval` with a fresh draw, as core
/// gets it (a test passes exact periods).
pub async fn watch_with_resync(
    api: Api<DynamicObject>,
    watched: Watched,
    realtime: Arc<Realtime>,
    queue: WorkQueue<Request>,
    period: Option<Duration>,
) {
    run_watch(api, watched, realtime, queue, period, None).await;
}

/// [`watch_with_resync`] of `resource`'s kind, keeping what it holds in `cache` for
/// reconciles to read.
pub async fn watch_cached(
    api: Api<DynamicObject>,
    resource: &ApiResource,
    watched: Watched,
    realtime: Arc<Realtime>,
    queue: WorkQueue<Request>,
    period: Option<Duration>,
    cache: &Cache,
) {
    let store = cache.store(resource);
    run_watch(api, watched, realtime, queue, period, Some(store)).await;
}

/// An informer that only keeps `cache` current for `resource`'s kind, mapping nothing into
/// any queue: what controller-runtime's cache starts for a kind a reconcile reads but no
/// controller watches (core's XR controllers read Compositions so).
pub async fn watch_into(api: Api<DynamicObject>, resource: &ApiResource, cache: &Cache) {
    let store = cache.store(resource);
    let mut events = watcher::watcher(api, watcher::Config::default()).boxed();
    while let Some(event) = events.next().await {
        match event {
            Ok(Event::Apply(o) | Event::InitApply(o)) => store.insert(o),
            Ok(Event::Delete(o)) => store.remove(&o),
            Ok(Event::InitDone) => {
                store.synced.send_replace(true);
            }
            Ok(Event::Init) => {}
            Err(_) => tracing::debug!("watch error; the watcher retries"),
        }
    }
}

/// [`watch_into`] for Compositions, started once per controller: the cache its
/// reconciles list Compositions from.
pub async fn watch_compositions(client: kube::Client, cache: &Cache) {
    let resource = composition_resource();
    watch_into(Api::all_with(client, &resource), &resource, cache).await;
}

async fn run_watch(
    api: Api<DynamicObject>,
    watched: Watched,
    realtime: Arc<Realtime>,
    queue: WorkQueue<Request>,
    period: Option<Duration>,
    store: Option<Store>,
) {
    let mut resync_at = period.map(|p| Instant::now() + p);
    let map = |now, kind, old: Option<&DynamicObject>, object: &DynamicObject| match watched {
        Watched::Xr => realtime.xr(now, kind, old, object),
        Watched::Composed => realtime.composed(now, kind, old, object),
    };
    let mut known: BTreeMap<(Option<String>, Option<String>), DynamicObject> = BTreeMap::new();
    let mut events = watcher::watcher(api, watcher::Config::default()).boxed();
    loop {
        let event = tokio::select! {
            event = events.next() => event,
            () = next_resync(resync_at) => {
                let now = Instant::now();
                for object in known.values() {
                    let handled = map(now, WatchEvent::Update, Some(object), object);
                    enqueue(&queue, handled, true);
                }
                resync_at = period.map(|p| now + p);
                continue;
            }
        };
        let Some(event) = event else { break };
        let Ok(event) = event else {
            tracing::debug!("watch error; the watcher retries");
            continue;
        };
        let (kind, object) = match event {
            Event::Apply(o) | Event::InitApply(o) => (None, o),
            Event::Delete(o) => (Some(WatchEvent::Delete), o),
            Event::Init => continue,
            Event::InitDone => {
                if let Some(store) = &store {
                    store.synced.send_replace(true);
                }
                continue;
            }
        };
        let key = (
            object.metadata.namespace.clone(),
            object.metadata.name.clone(),
        );
        if let Some(store) = &store {
            if kind == Some(WatchEvent::Delete) {
                store.remove(&object);
            } else {
                store.insert(object.clone());
            }
        }
        let old = if kind == Some(WatchEvent::Delete) {
            known.remove(&key)
        } else {
            known.insert(key, object.clone())
        };
        let kind = kind.unwrap_or(if old.is_some() {
            WatchEvent::Update
        } else {
            WatchEvent::Create
        });
        let old = (kind == WatchEvent::Update).then_some(old).flatten();
        let low = kind == WatchEvent::Update && same_version(old.as_ref(), &object);
        let handled = map(Instant::now(), kind, old.as_ref(), &object);
        enqueue(&queue, handled, low);
    }
}

/// Watches CompositionRevisions until the stream ends: each event maps to every Automatic
/// XR of the revision's Composition (listed from `xrs` at the time; core reads its cache),
/// through `realtime`, into `queue` (`definition/handlers.go`).
pub async fn watch_revisions(
    revisions: Api<CompositionRevision>,
    xrs: Api<DynamicObject>,
    realtime: Arc<Realtime>,
    queue: WorkQueue<Request>,
) {
    watch_revisions_with_resync(revisions, xrs, realtime, queue, None).await;
}

/// [`watch_revisions`], replaying every revision as an Update every `period` (this
/// informer's own, as for [`watch_with_resync`]).
pub async fn watch_revisions_with_resync(
    revisions: Api<CompositionRevision>,
    xrs: Api<DynamicObject>,
    realtime: Arc<Realtime>,
    queue: WorkQueue<Request>,
    period: Option<Duration>,
) {
    run_revisions(revisions, xrs, realtime, queue, period, None).await;
}

/// [`watch_revisions_with_resync`], keeping the revisions it holds in `cache` (under
/// [`revision_resource`]) for reconciles to read.
pub async fn watch_revisions_cached(
    revisions: Api<CompositionRevision>,
    xrs: Api<DynamicObject>,
    realtime: Arc<Realtime>,
    queue: WorkQueue<Request>,
    period: Option<Duration>,
    cache: &Cache,
) {
    let store = cache.store(&revision_resource());
    run_revisions(revisions, xrs, realtime, queue, period, Some(store)).await;
}

/// A revision as the cache holds it.
fn dynamic(revision: &CompositionRevision) -> Option<DynamicObject> {
    serde_json::to_value(revision)
        .and_then(serde_json::from_value)
        .ok()
}

async fn run_revisions(
    revisions: Api<CompositionRevision>,
    xrs: Api<DynamicObject>,
    realtime: Arc<Realtime>,
    queue: WorkQueue<Request>,
    period: Option<Duration>,
    store: Option<Store>,
) {
    let mut resync_at = period.map(|p| Instant::now() + p);
    let mut known: BTreeMap<Option<String>, CompositionRevision> = BTreeMap::new();
    let mut events = watcher::watcher(revisions, watcher::Config::default()).boxed();
    loop {
        let event = tokio::select! {
            event = events.next() => event,
            () = next_resync(resync_at) => {
                if let Ok(list) = xrs.list(&ListParams::default()).await {
                    let now = Instant::now();
                    for revision in known.values() {
                        let handled = realtime.revision(now, WatchEvent::Update, revision, &list.items);
                        enqueue(&queue, handled, true);
                    }
                } else {
                    tracing::debug!("cannot list XRs to map a revision resync");
                }
                resync_at = period.map(|p| Instant::now() + p);
                continue;
            }
        };
        let Some(event) = event else { break };
        let Ok(event) = event else {
            tracing::debug!("watch error; the watcher retries");
            continue;
        };
        if let Some(store) = &store {
            match &event {
                Event::Apply(r) | Event::InitApply(r) => {
                    if let Some(object) = dynamic(r) {
                        store.insert(object);
                    }
                }
                Event::Delete(r) => {
                    if let Some(object) = dynamic(r) {
                        store.remove(&object);
                    }
                }
                Event::InitDone => {
                    store.synced.send_replace(true);
                }
                Event::Init => {}
            }
        }
        let (kind, revision) = match event {
            Event::Apply(r) | Event::InitApply(r) => {
                let seen = known.insert(r.metadata.name.clone(), r.clone()).is_some();
                (
                    if seen {
                        WatchEvent::Update
                    } else {
                        WatchEvent::Create
                    },
                    r,
                )
            }
            Event::Delete(r) => {
                known.remove(&r.metadata.name);
                (WatchEvent::Delete, r)
            }
            Event::Init | Event::InitDone => continue,
        };
        let Ok(list) = xrs.list(&ListParams::default()).await else {
            tracing::debug!("cannot list XRs to map a revision event");
            continue;
        };
        let handled = realtime.revision(Instant::now(), kind, &revision, &list.items);
        enqueue(&queue, handled, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resync_period_is_the_interval_times_nine_tenths_to_eleven_tenths() {
        let hour = Duration::from_secs(3600);
        assert_eq!(resync_period(hour, 0.0), Duration::from_secs(3240));
        assert_eq!(resync_period(hour, 0.5), hour);
        assert!(resync_period(hour, 0.999_999) < Duration::from_secs(3960));
    }
}
