//! [`ApiServer`]: the shared state behind every service and socket, and its [`Config`].

use std::sync::Arc;
use std::time::Duration;

use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use serde_json::{Value, json};

use crate::clock::Clock;
use crate::crd;
use crate::error::ApiError;
use crate::flowcontrol::{FlowControl, Limiter};
use crate::identity::User;
use crate::journal::Journal;
use crate::object::StoredObject;
use crate::registry::{Registry, ResourceKind};
use crate::store::{
    GarbageCollection, Store, Subresource, WatchHistory, WriteOptions, Written, run_collector,
};

/// Server settings. `Config::default()` suits tests and load runs alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Watch events kept per resource for watches resuming from a resourceVersion: by
    /// default as kube-apiserver's watch cache keeps them ([`WatchHistory::KUBE`]).
    pub watch_history: WatchHistory,
    /// Events buffered per resource for slow watchers before they get a 410.
    pub watch_buffer: usize,
    /// How often watches with `allowWatchBookmarks` get a BOOKMARK.
    pub bookmark_interval: Duration,
    /// Optional flow control (429 with `Retry-After`): API Priority and Fairness or the
    /// immediate limit.
    pub flow_control: Option<FlowControl>,
    /// Who a request without impersonation headers is, for API Priority and Fairness
    /// (see [`Config::with_user`]).
    pub user: User,
    /// Journal entries kept (counts per user agent are always complete).
    pub journal_capacity: usize,
    /// Namespaces that exist from the start.
    pub namespaces: Vec<String>,
    /// The seed of uids and `generateName` suffixes; `None` seeds them at random.
    pub seed: Option<u64>,
    /// The wall-clock time at which the server's clock reads zero; `None` reads the wall
    /// clock when the server is built. A host running several components on one (maybe
    /// paused) tokio clock gives them all the same epoch, so their stamps agree.
    pub epoch: Option<jiff::Timestamp>,
    /// When set, Deployments get a status and their rollouts complete this long after
    /// each change (see [`Config::with_deployment_rollouts`]).
    pub rollout_delay: Option<Duration>,
    /// When the garbage collector acts on `ownerReferences` (see
    /// [`Config::with_garbage_collection`]).
    pub garbage_collection: GarbageCollection,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            watch_history: WatchHistory::KUBE,
            watch_buffer: 16_384,
            bookmark_interval: Duration::from_secs(60),
            flow_control: None,
            user: User::anonymous(),
            journal_capacity: 100_000,
            namespaces: vec!["default".into(), "kube-system".into(), "kube-public".into()],
            seed: None,
            epoch: None,
            rollout_delay: None,
            garbage_collection: GarbageCollection::Immediate,
        }
    }
}

impl Config {
    /// Keeps watch events per resource as `history` says: a fixed number, or sized by a
    /// window as kube-apiserver's watch cache is (the default).
    #[must_use]
    pub fn with_watch_history(mut self, history: WatchHistory) -> Self {
        self.watch_history = history;
        self
    }

    /// Buffers `events` per resource for slow watchers.
    #[must_use]
    pub fn with_watch_buffer(mut self, events: usize) -> Self {
        self.watch_buffer = events;
        self
    }

    /// Sends bookmarks every `interval`.
    #[must_use]
    pub fn with_bookmark_interval(mut self, interval: Duration) -> Self {
        self.bookmark_interval = interval;
        self
    }

    /// Turns on flow control.
    #[must_use]
    pub fn with_flow_control(mut self, flow_control: FlowControl) -> Self {
        self.flow_control = Some(flow_control);
        self
    }

    /// Who a request without `Impersonate-User` is: `system:anonymous` in
    /// `system:unauthenticated` by default, as a real server names a request without
    /// credentials (API Priority and Fairness classifies it into `global-default`). A
    /// request's `Impersonate-User` and `Impersonate-Group` headers (`kubectl --as`,
    /// kube's `impersonate`) name another user; nothing is authenticated or authorized.
    #[must_use]
    pub fn with_user(mut self, user: User) -> Self {
        self.user = user;
        self
    }

    /// Keeps `entries` journal entries.
    #[must_use]
    pub fn with_journal_capacity(mut self, entries: usize) -> Self {
        self.journal_capacity = entries;
        self
    }

    /// Uids and `generateName` suffixes repeatable for `seed`.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The server's clock reads zero at wall time `epoch`.
    #[must_use]
    pub fn with_epoch(mut self, epoch: jiff::Timestamp) -> Self {
        self.epoch = Some(epoch);
        self
    }

    /// Runs a minimal Deployment controller: each change gets a rolling status at once
    /// and a rolled-out one (every replica updated and available) `delay` later, so
    /// `kubectl rollout status` finishes. Off by default; it needs a tokio runtime when
    /// the server is built.
    #[must_use]
    pub fn with_deployment_rollouts(mut self, delay: Duration) -> Self {
        self.rollout_delay = Some(delay);
        self
    }

    /// When the garbage collector deletes dependents and completes foreground and
    /// orphaning deletes: [`GarbageCollection::Immediate`] (the default) inside the
    /// DELETE; [`GarbageCollection::Async`] as kube-controller-manager's collector does,
    /// `delay` after each change (it needs a tokio runtime when the server is built);
    /// [`GarbageCollection::None`] never, as a bare API server (envtest).
    #[must_use]
    pub fn with_garbage_collection(mut self, mode: GarbageCollection) -> Self {
        self.garbage_collection = mode;
        self
    }
}

/// A CRD file or object that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The YAML did not parse.
    #[error("invalid yaml")]
    Yaml(#[source] serde_saphyr::Error),
    /// A document is not a CustomResourceDefinition.
    #[error("document {index} is a {kind:?}, not a CustomResourceDefinition")]
    NotACrd {
        /// Index of the document in the file.
        index: usize,
        /// Its kind.
        kind: String,
    },
    /// The server refused the CRD.
    #[error("the crd was refused")]
    Refused(#[source] ApiError),
}

pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(crate) store: Arc<Store>,
    /// Shared by a server's replicas ([`ApiServer::replica`]).
    pub(crate) registry: Arc<RwLock<Registry>>,
    pub(crate) journal: Journal,
    pub(crate) limiter: Option<Limiter>,
}

/// An embedded Kubernetes API server. Clones share one state.
///
/// Call [`ApiServer::service`] for a tower `Service` to hand to
/// `kube::Client::new`, or [`crate::serve`] to listen on a socket.
#[derive(Clone)]
pub struct ApiServer {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for ApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiServer")
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

impl Default for ApiServer {
    fn default() -> Self {
        Self::new(Config::default())
    }
}

impl ApiServer {
    /// A server with the built-in kinds and the configured namespaces.
    pub fn new(config: Config) -> Self {
        let clock = match config.epoch {
            Some(epoch) => Clock::at(epoch, tokio::time::Instant::now()),
            None => Clock::new(),
        };
        let seed = config.seed.unwrap_or_else(|| {
            std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), 0_u8)
        });
        let store = Arc::new(
            Store::new(clock, config.watch_history, config.watch_buffer, seed)
                .with_garbage_collection(config.garbage_collection),
        );
        if let GarbageCollection::Async { .. } = config.garbage_collection {
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(run_collector(Arc::downgrade(&store)));
                }
                Err(_) => tracing::warn!("no tokio runtime: the garbage collector will not run"),
            }
        }
        let registry = Registry::with_builtins();
        let namespaces = registry
            .get("", "v1", "namespaces")
            .expect("namespaces are built in");
        for name in &config.namespaces {
            // A duplicate in the configured list is harmless.
            let _ = store.create(
                &namespaces,
                "",
                json!({"metadata": {"name": name}}),
                WriteOptions::default(),
            );
        }
        if let Some(delay) = config.rollout_delay {
            let deployments = registry
                .get("apps", "v1", "deployments")
                .expect("deployments are built in");
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(crate::rollout::run(store.clone(), deployments, delay));
                }
                Err(_) => tracing::warn!("no tokio runtime: Deployments will get no status"),
            }
        }
        let limiter = config.flow_control.clone().map(Limiter::new);
        let journal = Journal::new(config.journal_capacity, clock);
        Self {
            shared: Arc::new(Shared {
                config,
                store,
                registry: Arc::new(RwLock::new(registry)),
                journal,
                limiter,
            }),
        }
    }

    /// Another replica of this API server, as a control plane runs several
    /// kube-apiservers over one etcd: it shares the objects, their resourceVersions and
    /// watches, the served kinds and the configuration, and has its own request journal,
    /// request metrics (`/metrics`) and flow control, as each kube-apiserver process
    /// counts and limits only what it serves. A watch opened through one replica sees
    /// writes made through another. Serve each on its own socket ([`crate::serve`]), and
    /// [`crate::balance`] connections over them.
    pub fn replica(&self) -> ApiServer {
        let config = self.shared.config.clone();
        let limiter = config.flow_control.clone().map(Limiter::new);
        let journal = Journal::new(config.journal_capacity, *self.shared.store.clock());
        Self {
            shared: Arc::new(Shared {
                config,
                store: Arc::clone(&self.shared.store),
                registry: Arc::clone(&self.shared.registry),
                journal,
                limiter,
            }),
        }
    }

    /// Writes the `kubernetes` Service's EndpointSlices in `default` for the replicas
    /// serving at `addresses`, as kube-apiserver's endpoint reconciler lists every
    /// replica: one slice per port (a real control plane's replicas share one port, so
    /// it writes one slice, `kubernetes`; replicas on one machine differ by port, so
    /// each port has its own slice, `kubernetes` for the first, then `kubernetes-PORT`),
    /// each labelled `kubernetes.io/service-name: kubernetes`, its port named `https` as
    /// the real one is (the scheme is the kubeconfig's).
    ///
    /// # Errors
    /// The store refused a slice.
    pub fn set_replica_endpoints(
        &self,
        addresses: &[std::net::SocketAddr],
    ) -> Result<(), ApiError> {
        let kind = self
            .kind("discovery.k8s.io", "v1", "endpointslices")
            .expect("endpointslices are built in");
        let mut ports: Vec<u16> = addresses.iter().map(std::net::SocketAddr::port).collect();
        ports.sort_unstable();
        ports.dedup();
        for (i, port) in ports.iter().enumerate() {
            let ips: Vec<String> = addresses
                .iter()
                .filter(|a| a.port() == *port)
                .map(|a| a.ip().to_string())
                .collect();
            let family = if addresses.iter().any(|a| a.port() == *port && a.is_ipv6()) {
                "IPv6"
            } else {
                "IPv4"
            };
            let name = if i == 0 {
                "kubernetes".to_owned()
            } else {
                format!("kubernetes-{port}")
            };
            let slice = json!({
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": {
                    "name": name,
                    "namespace": "default",
                    "labels": {
                        "kubernetes.io/service-name": "kubernetes",
                        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
                    },
                },
                "addressType": family,
                "endpoints": ips.iter().map(|ip| json!({"addresses": [ip], "conditions": {"ready": true}})).collect::<Vec<_>>(),
                "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
            });
            let options = WriteOptions {
                create_if_missing: true,
                ..WriteOptions::default()
            };
            self.shared.store.update(
                &kind,
                "default",
                &name,
                Subresource::Main,
                options,
                |old| {
                    let mut new = slice.clone();
                    if let Some(old) = old {
                        let rv = old["metadata"]["resourceVersion"].clone();
                        crate::object::metadata_mut(&mut new).insert("resourceVersion".into(), rv);
                    }
                    Ok(new)
                },
            )?;
        }
        Ok(())
    }

    /// The request journal.
    pub fn journal(&self) -> &Journal {
        &self.shared.journal
    }

    /// The wall-clock time at which the server's clock read zero: the time base of the
    /// journal ([`crate::Entry::at_us`]). Read once, when the server is built, right after
    /// its clock starts.
    pub fn epoch(&self) -> jiff::Timestamp {
        self.shared.store.clock().epoch()
    }

    /// The tokio instant at which the server's clock read zero (the same moment as
    /// [`ApiServer::epoch`]), for in-process readers on the same tokio clock.
    pub fn started_at(&self) -> tokio::time::Instant {
        self.shared.store.clock().start()
    }

    /// The configuration the server runs with.
    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    /// The current global resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.shared.store.resource_version()
    }

    /// Number of objects stored for `group/version/plural` (0 when unknown).
    pub fn object_count(&self, group: &str, version: &str, plural: &str) -> usize {
        self.kind(group, version, plural)
            .map_or(0, |k| self.shared.store.count(&k))
    }

    /// Forgets watch history and ends open watches with an in-stream 410, as after
    /// etcd compaction: kube's watchers relist.
    pub fn expire_watches(&self) {
        self.shared.store.expire_history();
    }

    /// Registers (or updates) a CRD given as a JSON value.
    pub fn load_crd(&self, crd: Value) -> Result<(), LoadError> {
        let kind = self
            .kind("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            .expect("crds are built in");
        let name = crd["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let options = WriteOptions {
            create_if_missing: true,
            ..WriteOptions::default()
        };
        self.write_crd(|| {
            self.shared
                .store
                .update(&kind, "", &name, Subresource::Main, options, |old| {
                    let mut new = crd.clone();
                    if !new.is_object() {
                        return Err(ApiError::bad_request(
                            "a CustomResourceDefinition must be an object",
                        ));
                    }
                    if let Some(old) = old {
                        let rv = old["metadata"]["resourceVersion"].clone();
                        crate::object::metadata_mut(&mut new).insert("resourceVersion".into(), rv);
                    }
                    Ok(new)
                })
        })
        .map_err(LoadError::Refused)?;
        Ok(())
    }

    /// Registers every CRD of a (multi-document) YAML or JSON text; returns how many.
    pub fn load_crd_yaml(&self, text: &str) -> Result<usize, LoadError> {
        let documents: Vec<Value> = serde_saphyr::from_multiple(text).map_err(LoadError::Yaml)?;
        let documents: Vec<Value> = documents.into_iter().filter(|d| !d.is_null()).collect();
        for (index, document) in documents.iter().enumerate() {
            if document["kind"] != "CustomResourceDefinition" {
                let kind = document["kind"].as_str().unwrap_or_default().to_owned();
                return Err(LoadError::NotACrd { index, kind });
            }
        }
        let count = documents.len();
        for document in documents {
            self.load_crd(document)?;
        }
        Ok(count)
    }

    pub(crate) fn registry(&self) -> RwLockReadGuard<'_, Registry> {
        self.shared.registry.read()
    }

    fn registry_mut(&self) -> RwLockWriteGuard<'_, Registry> {
        self.shared.registry.write()
    }

    pub(crate) fn kind(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<Arc<ResourceKind>> {
        self.registry().get(group, version, plural)
    }

    /// Runs a write of a CRD (create, update, patch) and serves the kinds it describes
    /// with the server's kinds locked throughout: a request that looks a kind up waits
    /// until the write and its kinds are both in place. A client that has read the CRD,
    /// which says `Established`, finds its kinds served, as kube-apiserver's clients do
    /// once they see that condition.
    pub(crate) fn write_crd<E>(
        &self,
        write: impl FnOnce() -> Result<Written, E>,
    ) -> Result<Written, E> {
        let mut registry = self.registry_mut();
        let written = write()?;
        self.sync_crd(&mut registry, &written.object.to_value());
        Ok(written)
    }

    /// Runs the delete of a CRD and, if it removed the object (no finalizer kept it),
    /// stops serving its kinds, with the server's kinds locked throughout (as
    /// [`ApiServer::write_crd`]).
    pub(crate) fn delete_crd<E>(
        &self,
        delete: impl FnOnce() -> Result<Arc<StoredObject>, E>,
    ) -> Result<Arc<StoredObject>, E> {
        let mut registry = self.registry_mut();
        let deleted = delete()?;
        let value = deleted.to_value();
        if value["metadata"].get("deletionTimestamp").is_none() {
            self.remove_crd(&mut registry, &value);
        }
        Ok(deleted)
    }

    /// Serves the kinds of a stored CRD (after a create or update).
    fn sync_crd(&self, registry: &mut Registry, crd: &Value) {
        let Ok(definition) = crd::parse(crd) else {
            return;
        };
        // Stored objects read with the defaults of the (storage version's) schema, as the
        // real server defaults what it reads from etcd; nothing is written back.
        if let Some(storage) = definition.kinds.first()
            && let Some(schema) = storage.structural.clone()
            && schema.0.has_defaults()
        {
            self.shared
                .store
                .rewrite_quietly(storage, |object| schema.0.apply_defaults(object));
        }
        registry.remove(&definition.group, &definition.plural);
        for kind in definition.kinds {
            tracing::info!(group = %kind.group, version = %kind.version, kind = %kind.kind, "serving custom resource");
            registry.insert(kind);
        }
    }

    /// Stops serving a deleted CRD's kinds and drops their objects.
    fn remove_crd(&self, registry: &mut Registry, crd: &Value) {
        let Ok(definition) = crd::parse(crd) else {
            return;
        };
        registry.remove(&definition.group, &definition.plural);
        self.shared
            .store
            .drop_resource(&format!("{}/{}", definition.group, definition.plural));
        tracing::info!(group = %definition.group, plural = %definition.plural, "custom resource removed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: buckets.example.org
spec:
  group: example.org
  scope: Namespaced
  names: {plural: buckets, singular: bucket, kind: Bucket}
  versions:
    - name: v1alpha1
      served: true
      storage: true
      subresources: {status: {}}
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
"#;

    #[test]
    fn loading_a_crd_from_yaml_serves_its_kind() {
        let server = ApiServer::default();
        assert_eq!(server.load_crd_yaml(CRD).unwrap(), 1);
        assert!(server.kind("example.org", "v1alpha1", "buckets").is_some());
        // Loading the same CRD again is an update, not a conflict.
        assert_eq!(server.load_crd_yaml(CRD).unwrap(), 1);
    }

    #[test]
    fn a_request_that_has_read_a_crd_finds_its_kinds_served() {
        // The composer's binary test created an object right after it read the CRD the
        // composer had created, and got a 404 once under load: the CRD was stored, and so
        // readable, before its kinds were served. A reader that sees the CRD mid-write
        // now waits for them.
        let server = ApiServer::default();
        let crds = server
            .kind("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            .unwrap();
        let crd: Value = serde_saphyr::from_str(CRD.trim_end_matches("---\n")).unwrap();
        let options = WriteOptions {
            create_if_missing: true,
            ..WriteOptions::default()
        };
        let served = std::thread::scope(|scope| {
            let mut reader = None;
            server
                .write_crd(|| {
                    let written = server.shared.store.update(
                        &crds,
                        "",
                        "buckets.example.org",
                        Subresource::Main,
                        options,
                        |_| Ok(crd.clone()),
                    )?;
                    reader = Some(scope.spawn(|| {
                        server
                            .shared
                            .store
                            .get(&crds, "", "buckets.example.org")
                            .expect("the CRD is stored before its kinds are served");
                        server.kind("example.org", "v1alpha1", "buckets").is_some()
                    }));
                    // Time for the reader to look the kind up before the kinds are served.
                    std::thread::sleep(Duration::from_millis(100));
                    Ok::<_, ApiError>(written)
                })
                .unwrap();
            reader.unwrap().join().unwrap()
        });
        assert!(served, "the reader saw the CRD and not its kind");
    }

    #[test]
    fn a_crd_that_is_not_an_object_is_refused_without_panicking() {
        let server = ApiServer::default();
        assert!(matches!(
            server.load_crd(json!("nope")),
            Err(LoadError::Refused(_))
        ));
        let err = server
            .load_crd(json!({"kind": "CustomResourceDefinition", "metadata": "x"}))
            .unwrap_err();
        assert!(
            matches!(err, LoadError::Refused(ApiError::Invalid { .. })),
            "{err:?}"
        );
    }

    #[test]
    fn a_yaml_file_with_other_kinds_is_refused() {
        let server = ApiServer::default();
        let err = server
            .load_crd_yaml("kind: ConfigMap\nmetadata: {name: x}\n")
            .unwrap_err();
        assert!(matches!(err, LoadError::NotACrd { index: 0, .. }));
        assert!(matches!(
            server.load_crd_yaml("a: [b"),
            Err(LoadError::Yaml(_))
        ));
    }
}
