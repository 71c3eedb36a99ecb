//! The API server, Crossplane's kinds and the objects the composite tests share: one place
//! that installs the CRDs, an XRD, a Composition with its valid revision, and marks
//! composed resources Ready as a provider would; a reconciler, its controller and its
//! realtime watches; a function's own log of the calls it served; and a runner that calls
//! a real function over a socket from a test on tokio's paused clock.

// By path: composer's benchmark includes this file with `#[path]`, where a plain `mod`
// would be looked for beside it.
#[path = "fixture/functions.rs"]
mod functions;

use std::sync::Arc;
use std::time::Duration;

use composer::api::{
    CompositeResourceDefinition, LABEL_COMPOSITION_NAME, TYPE_VALID_PIPELINE, open_crd,
};
use composer::composite::{
    Cache, Composer, DEFAULT_MAX_CONCURRENT_RECONCILES, Realtime, Reconciler, RequeueSettings,
    Watched, start, watch_cached, watch_compositions, watch_revisions_cached,
};
use composer::function::Functions;
use composer::function::builtin::{API_VERSION, KIND};
use composer::xcrd::for_composite_resource;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use limiter::controller::{Controller, Request};
use limiter::crossplane::circuit::BreakerConfig;
use limiter::workqueue::WorkQueue;
use mock_apiserver::ApiServer;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

pub use functions::{Logged, RealTime};

pub const NS: &str = "default";
/// Crossplane's API group of XRDs, Compositions and revisions.
pub const X: &str = "apiextensions.crossplane.io";

pub fn object(v: Value) -> DynamicObject {
    serde_json::from_value(v).unwrap()
}

pub fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

/// `XWidget` (example.org/v1): a Namespaced XRD whose spec has a `region` and a `count`.
pub fn xrd() -> CompositeResourceDefinition {
    let mut xrd = example_xrd(
        "XWidget",
        "xwidgets",
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "region": {"type": "string"}, "count": {"type": "integer"}}},
        }}),
    );
    xrd.spec.scope = composer::api::Scope::Namespaced;
    xrd
}

/// An XRD of `kind` (`plural`) in `example.org`, named `plural.example.org`, with one
/// referenceable version `v1` whose schema is `schema`.
pub fn example_xrd(kind: &str, plural: &str, schema: Value) -> CompositeResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.crossplane.io/v2",
        "kind": "CompositeResourceDefinition",
        "metadata": {"name": format!("{plural}.example.org")},
        "spec": {
            "group": "example.org",
            "names": {"kind": kind, "plural": plural},
            "versions": [{
                "name": "v1",
                "referenceable": true,
                "served": true,
                "schema": {"openAPIV3Schema": schema},
            }],
        },
    }))
    .unwrap()
}

/// A cluster with the [`xrd`] installed and the Composition `widgets` of `n` Widgets
/// (TTL 60 s) with its valid revision.
pub async fn widgets_cluster(n: usize) -> Cluster {
    let cluster = Cluster::new(ApiServer::new(mock_apiserver::Config::default())).await;
    cluster.install_xrd(&xrd()).await;
    cluster
        .composition("widgets", &widgets_pipeline(n, "60s"))
        .await;
    cluster
}

pub fn xr_resource() -> ApiResource {
    resource("example.org", "v1", "XWidget", "xwidgets")
}

/// The composed kind that stands in for a provider's managed resource.
pub fn widget_resource() -> ApiResource {
    resource("test.example.org", "v1", "Widget", "widgets")
}

pub fn revision_resource() -> ApiResource {
    resource(X, "v1", "CompositionRevision", "compositionrevisions")
}

/// An XWidget in [`NS`].
pub fn xr(name: &str) -> DynamicObject {
    object(json!({
        "apiVersion": "example.org/v1", "kind": "XWidget",
        "metadata": {"name": name}, "spec": {"region": "eu-west-1"},
    }))
}

/// A built-in function step composing `count` objects from `base`, with the XR's region
/// patched to `region_path` and a TTL.
pub fn builtin_step(count: usize, base: Value, region_path: &str, ttl: &str) -> Value {
    json!({"step": "compose", "functionRef": {"name": "resources"}, "input": {
        "apiVersion": API_VERSION, "kind": KIND, "ttl": ttl,
        "resources": [{"name": "widget", "count": count, "base": base,
            "patches": [{"fromFieldPath": "spec.region", "toFieldPath": region_path}]}],
    }})
}

/// One step of the built-in function composing `count` Widgets.
pub fn widgets_pipeline(count: usize, ttl: &str) -> Value {
    json!([builtin_step(
        count,
        json!({"apiVersion": "test.example.org/v1", "kind": "Widget"}),
        "spec.region",
        ttl,
    )])
}

/// An API server with Crossplane's kinds, and a client of it.
pub struct Cluster {
    pub server: ApiServer,
    pub client: kube::Client,
}

impl Cluster {
    /// `server` with the CRDs of XRDs, Compositions, CompositionRevisions, Functions and
    /// the Widget kind.
    pub async fn new(server: ApiServer) -> Cluster {
        let client = kube::Client::new(server.service(), NS);
        let cluster = Cluster { server, client };
        for crd in [
            open_crd(
                X,
                "v2",
                "CompositeResourceDefinition",
                "compositeresourcedefinitions",
                "Cluster",
            ),
            open_crd(X, "v1", "Composition", "compositions", "Cluster"),
            open_crd(
                X,
                "v1",
                "CompositionRevision",
                "compositionrevisions",
                "Cluster",
            ),
            open_crd(
                "pkg.crossplane.io",
                "v1",
                "Function",
                "functions",
                "Cluster",
            ),
            open_crd("test.example.org", "v1", "Widget", "widgets", "Namespaced"),
        ] {
            cluster.create_crd(&crd).await;
        }
        cluster
    }

    pub async fn create_crd(&self, crd: &CustomResourceDefinition) {
        Api::<CustomResourceDefinition>::all(self.client.clone())
            .create(&PostParams::default(), crd)
            .await
            .unwrap();
    }

    /// The XR CRD generated from `xrd`.
    pub async fn install_xrd(&self, xrd: &CompositeResourceDefinition) {
        self.create_crd(&for_composite_resource(xrd).unwrap()).await;
    }

    /// Objects of `resource`: namespaced in [`NS`], or all.
    pub fn api(&self, resource: &ApiResource) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), NS, resource)
    }

    pub fn all(&self, resource: &ApiResource) -> Api<DynamicObject> {
        Api::all_with(self.client.clone(), resource)
    }

    /// The object `name` of `resource` in [`NS`], which must exist.
    pub async fn get(&self, resource: &ApiResource, name: &str) -> DynamicObject {
        self.api(resource).get(name).await.unwrap()
    }

    pub async fn list(&self, resource: &ApiResource) -> Vec<DynamicObject> {
        self.all(resource)
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
    }

    /// The Composition `name` of XWidgets with `pipeline`, and its revision 1, valid.
    pub async fn composition(&self, name: &str, pipeline: &Value) {
        let spec = json!({"compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XWidget"},
            "mode": "Pipeline", "pipeline": pipeline});
        self.all(&resource(X, "v1", "Composition", "compositions"))
            .create(
                &PostParams::default(),
                &object(json!({
                    "apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition",
                    "metadata": {"name": name}, "spec": spec,
                })),
            )
            .await
            .unwrap();
        self.revision(name, 1, pipeline).await;
    }

    /// Revision `n` of Composition `composition` (`<composition>-<n>`), controlled by it and
    /// marked `ValidPipeline`, as core's revision controller would leave it.
    pub async fn revision(&self, composition: &str, n: u64, pipeline: &Value) {
        let uid = self
            .all(&resource(X, "v1", "Composition", "compositions"))
            .get(composition)
            .await
            .unwrap()
            .metadata
            .uid;
        let name = format!("{composition}-{n}");
        let revisions = self.all(&revision_resource());
        revisions
            .create(
                &PostParams::default(),
                &object(json!({
                    "apiVersion": "apiextensions.crossplane.io/v1", "kind": "CompositionRevision",
                    "metadata": {"name": name, "labels": {LABEL_COMPOSITION_NAME: composition},
                        "ownerReferences": [{"apiVersion": "apiextensions.crossplane.io/v1",
                            "kind": "Composition", "name": composition, "uid": uid,
                            "controller": true}]},
                    "spec": {"compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XWidget"},
                        "mode": "Pipeline", "pipeline": pipeline, "revision": n},
                })),
            )
            .await
            .unwrap();
        let valid = json!({"status": {"conditions": [{"type": TYPE_VALID_PIPELINE, "status": "True",
            "reason": "ValidPipeline", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}});
        revisions
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&valid))
            .await
            .unwrap();
    }

    /// The provider's part, done by hand: every object of `resource` in [`NS`] reports
    /// `Ready=True` with one status write.
    pub async fn mark_ready(&self, resource: &ApiResource) -> usize {
        self.mark_ready_with(resource, None).await
    }

    /// [`Cluster::mark_ready`] one object at a time, `gap` apart, so that everything the
    /// write sets off (a reconcile of the XR it maps to) runs before the next.
    pub async fn mark_ready_one_by_one(&self, resource: &ApiResource, gap: Duration) -> usize {
        self.mark_ready_with(resource, Some(gap)).await
    }

    async fn mark_ready_with(&self, resource: &ApiResource, gap: Option<Duration>) -> usize {
        let api = self.api(resource);
        let all = api.list(&ListParams::default()).await.unwrap().items;
        for o in &all {
            set_condition(&api, o, "Ready", "True").await;
            if let Some(gap) = gap {
                tokio::time::sleep(gap).await;
            }
        }
        all.len()
    }
}

/// Writes the condition `type_` with `status` on `o`'s status, as a provider does: one
/// merge patch of `/status`.
pub async fn set_condition(api: &Api<DynamicObject>, o: &DynamicObject, type_: &str, status: &str) {
    let patch = json!({"status": {"conditions": [{"type": type_, "status": status}]}});
    api.patch_status(
        o.metadata.name.as_deref().unwrap(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .unwrap();
}

/// Whether `o` has the condition `type_` with status `True`.
pub fn is_true(o: &DynamicObject, type_: &str) -> bool {
    o.data["status"]["conditions"].as_array().is_some_and(|c| {
        c.iter()
            .any(|c| c["type"] == type_ && c["status"] == "True")
    })
}

/// A reconciler of XWidgets composing through `functions`, showing `realtime`'s breaker,
/// reading everything live (no watch needed: a test drives it alone).
pub fn reconciler(
    cluster: &Cluster,
    functions: Functions,
    settings: RequeueSettings,
    realtime: &Arc<Realtime>,
) -> Reconciler {
    Reconciler::new(
        cluster.client.clone(),
        xrd(),
        xr_resource(),
        Composer::new(cluster.client.clone(), functions),
        settings,
    )
    .with_realtime(Arc::clone(realtime))
}

/// [`reconciler`], reading the XR, Compositions, revisions and composed resources from
/// `cache` (filled by [`watches`], or the watches of a [`Running::start_cached`]; each read
/// but the composed resources' waits until its kind's watch has synced).
pub fn cached_reconciler(
    cluster: &Cluster,
    functions: Functions,
    settings: RequeueSettings,
    realtime: &Arc<Realtime>,
    cache: &Cache,
) -> Reconciler {
    Reconciler::new(
        cluster.client.clone(),
        xrd(),
        xr_resource(),
        Composer::new(cluster.client.clone(), functions).with_cache(cache.clone()),
        settings,
    )
    .with_realtime(Arc::clone(realtime))
    .with_cache(cache.clone())
}

/// A reconciler of the cluster's XRs reading from `cache`, composing with the built-in
/// function in process, and the XWidget, Composition, revision and Widget watches that
/// fill the cache (nothing drains their queue).
pub fn cached_widgets(
    cluster: &Cluster,
    breaker: &Arc<Realtime>,
    cache: &Cache,
) -> (Reconciler, Vec<JoinHandle<()>>) {
    let functions = Functions::new().with(
        "resources",
        composer::function::InProcessRunner::new(composer::function::builtin::Resources),
    );
    let reconciler = cached_reconciler(
        cluster,
        functions,
        RequeueSettings::default(),
        breaker,
        cache,
    );
    let watches = watches(
        cluster,
        breaker,
        &composer::composite::xr_queue(),
        &[widget_resource()],
        Resync::default(),
        cache,
    );
    (reconciler, watches)
}

/// The watches a controller runs, as the binary starts them, feeding `queue` through
/// `realtime` and keeping `cache` current: the XWidgets, Compositions (cache only),
/// CompositionRevisions and each kind of `composed`, each informer resyncing on the period
/// `resync` gives it.
pub fn watches(
    cluster: &Cluster,
    realtime: &Arc<Realtime>,
    queue: &WorkQueue<Request>,
    composed: &[ApiResource],
    resync: Resync,
    cache: &Cache,
) -> Vec<JoinHandle<()>> {
    let mut kinds = vec![(xr_resource(), Watched::Xr, resync.xr)];
    kinds.extend(
        composed
            .iter()
            .map(|kind| (kind.clone(), Watched::Composed, resync.composed)),
    );
    let mut watches: Vec<JoinHandle<()>> = kinds
        .into_iter()
        .map(|(kind, watched, period)| {
            let (api, realtime, queue, cache) = (
                cluster.all(&kind),
                Arc::clone(realtime),
                queue.clone(),
                cache.clone(),
            );
            tokio::spawn(async move {
                watch_cached(api, &kind, watched, realtime, queue, period, &cache).await;
            })
        })
        .collect();
    let (client, compositions) = (cluster.client.clone(), cache.clone());
    watches.push(tokio::spawn(async move {
        watch_compositions(client, &compositions).await;
    }));
    let (revisions, xrs, realtime, queue, cache) = (
        Api::all(cluster.client.clone()),
        cluster.all(&xr_resource()),
        Arc::clone(realtime),
        queue.clone(),
        cache.clone(),
    );
    watches.push(tokio::spawn(async move {
        watch_revisions_cached(revisions, xrs, realtime, queue, resync.revisions, &cache).await;
    }));
    watches
}

/// The XWidget breaker with `config`.
pub fn realtime(config: BreakerConfig) -> Arc<Realtime> {
    Arc::new(Realtime::new("example.org/v1", "XWidget", config))
}

/// Each informer's resync period (`--sync-interval` × [0.9, 1.1), drawn once per informer
/// in core; exact here); `None`: no resync.
#[derive(Clone, Copy, Debug, Default)]
pub struct Resync {
    pub xr: Option<Duration>,
    pub revisions: Option<Duration>,
    pub composed: Option<Duration>,
}

/// An XRD's controller and its realtime watches, as the binary starts them.
pub struct Running {
    pub controller: Controller<Request>,
    pub realtime: Arc<Realtime>,
    watches: Vec<JoinHandle<()>>,
}

impl Running {
    /// The controller of `reconciler` with core's worker count, watching XWidgets, the
    /// composed kinds in `composed` and CompositionRevisions through `realtime`.
    pub fn start(
        cluster: &Cluster,
        reconciler: Reconciler,
        realtime: Arc<Realtime>,
        composed: &[ApiResource],
    ) -> Running {
        Running::start_with(cluster, reconciler, realtime, composed, Resync::default())
    }

    /// [`Running::start`], each informer resyncing on the period `resync` gives it.
    pub fn start_with(
        cluster: &Cluster,
        reconciler: Reconciler,
        realtime: Arc<Realtime>,
        composed: &[ApiResource],
        resync: Resync,
    ) -> Running {
        Running::start_cached(
            cluster,
            reconciler,
            realtime,
            composed,
            resync,
            &Cache::new(),
        )
    }

    /// The controller as the binary runs it: a [`cached_reconciler`] of `functions` (core's
    /// requeue settings) reading the cache its watches keep, each informer resyncing on the
    /// period `resync` gives it.
    pub fn cached(
        cluster: &Cluster,
        functions: Functions,
        realtime: Arc<Realtime>,
        composed: &[ApiResource],
        resync: Resync,
    ) -> Running {
        let cache = Cache::new();
        let reconciler = cached_reconciler(
            cluster,
            functions,
            RequeueSettings::default(),
            &realtime,
            &cache,
        );
        Running::start_cached(cluster, reconciler, realtime, composed, resync, &cache)
    }

    /// [`Running::start_with`], the watches keeping `cache` current (what a
    /// [`cached_reconciler`] of the same cache reads).
    pub fn start_cached(
        cluster: &Cluster,
        reconciler: Reconciler,
        realtime: Arc<Realtime>,
        composed: &[ApiResource],
        resync: Resync,
        cache: &Cache,
    ) -> Running {
        let controller = start(
            "xwidgets.example.org",
            Arc::new(reconciler),
            DEFAULT_MAX_CONCURRENT_RECONCILES,
        );
        let queue = controller.queue().clone();
        let watches = watches(cluster, &realtime, &queue, composed, resync, cache);
        Running {
            controller,
            realtime,
            watches,
        }
    }

    pub async fn stop(self) -> limiter::controller::ControllerStatsSnapshot {
        for w in &self.watches {
            w.abort();
        }
        let stats = self.controller.stats();
        self.controller.shut_down().await;
        stats
    }
}
