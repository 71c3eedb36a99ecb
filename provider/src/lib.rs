//! # provider
//!
//! A Crossplane-style provider on kube-rs: it manages mock-cloud resources through the
//! namespaced custom resources `Bucket`, `Database` and `Record` (group
//! `mockcloud.example.org/v1alpha1`), behaving like a provider built on crossplane-runtime's
//! managed reconciler, rate limited by the shared [`limiter`]. It is the system under test of
//! the load-testing harness, and the example of how a Rust controller uses the limiter.
//!
//! ## Where to start
//! - [`Provider`] and [`ProviderOptions`]: run the provider in-process (the harness does) or
//!   from the `provider` binary. [`ProviderOptions::from_service`] builds the one
//!   rate-limited Kubernetes client over any tower `Service` (mock-apiserver's in-process
//!   service, or a real connection: [`kube_client::from_kubeconfig`]).
//! - [`crd`]: the kinds, their `spec.forProvider`, conditions and printer columns;
//!   [`crd::crds_yaml`] is `provider crds`.
//! - [`reconciler`]: crossplane-runtime's managed reconciler, path for path.
//! - [`watch`]: kube's watcher and reflector feeding our work queue through Crossplane's
//!   event filter.
//! - [`cloud`]: the cloud client over any tower `Service`; it never retries.
//! - [`metrics`]: what `/metrics` serves.
//!
//! ## Calls per reconcile: c_max = 2
//! A reconcile makes **at most one Observe plus at most one of Create, Update or Delete**:
//! never more than 2 cloud calls. The harness's budget is `c_max · reconciles`. A reconcile
//! makes no GET against the API server (all reads come from reflector caches); its writes
//! are at most: external-name PUT, finalizer PUT, pending PUT, succeeded/failed PUT (up to 5
//! tries on conflict) and one status PUT, and usually just the status PUT, which the API
//! server skips when nothing changed.
//!
//! ## Rate limits
//! [`limiter::crossplane::ProviderRuntime`] wires the model chosen by `--rate-limit-model`,
//! with **one global bucket (R/s, burst 10R) shared by the three controllers**, R workers
//! per controller, per-item backoff 1 s·2^k up to 60 s. Every Kubernetes request of the
//! process goes through one [`limiter::client_qps::ClientQpsLayer`] at QPS 5R / burst 10R
//! (none for `controller-runtime`); see [`kube_client`] for how kube's own retry counts.
//! Polls use each resource's own interval (`crossplane.io/poll-interval`, clamped up to
//! `--min-poll-interval`; invalid values fall back to `--poll-interval` with a warning
//! event) with jitter proportional to it, so a requeue is never zero.
//!
//! ## The AWS flavour (feature `aws`)
//! `provider::aws` adds upjet-shaped AWS kinds (`Bucket`, cluster-scoped and namespaced, `VPC`,
//! `Table`) and their ProviderConfigs on aws-sdk-rust, served by the same managed reconciler
//! through its [`reconciler::Connecter`] seam. Their calls per reconcile are not bounded by
//! c_max = 2: a Bucket's Observe alone is 15 S3 calls, and Connect may call STS; the table
//! is in `provider/README.md`. The cluster-scoped Bucket runs in the cluster scope's global
//! bucket, the `.m.` kinds in the namespaced one (with `--scoped-buckets`).
//!
//! ## Deviations from crossplane-runtime v2.4
//! - **Interrupted creates retry** (path P5). crossplane-runtime stops when
//!   `external-create-pending` is newer than succeeded/failed, until a human acts. Creates
//!   here carry an idempotency key derived from the object's uid (plus the last succeeded
//!   stamp), so the reconciler carries on: Observe finds a resource the lost create made,
//!   or the retried Create is replayed by the cloud instead of duplicating it. A resource
//!   whose interrupted Create reached the cloud is found by Observe and keeps its pending
//!   stamp with no outcome after it (nothing writes one); the harness's `stuck` check sees it.
//! - **Read your own writes.** The reconcile after our own write reads our returned copy
//!   until the cache catches up (by resourceVersion), instead of the stale cache copy that
//!   makes crossplane-runtime's next status PUT fail with 409 (pitfall 3).
//! - **Observations survive metadata writes.** `atProvider` and Observe's `Ready` are
//!   applied at the status write rather than lost with the working copy (pitfall 9); this
//!   changes no call counts.
//! - **observedGeneration on every condition**, Ready included.
//! - **No ProviderConfigUsage objects, no deletion policy, no connection secrets, no
//!   references**: the mock cloud has none of these, and they would only add API writes (1
//!   PCU POST per resource).
//! - **Management policies without validation** (path P2): `spec.managementPolicies` is
//!   honoured (`[]` pauses, `[Observe]` only observes, P9 and P19 as upstream), but a
//!   combination crossplane-runtime refuses is not refused here. P9's requeue is v2.4.0's
//!   (after P) unless `--observe-only-absent backoff` asks for the pre-#1088 one.
//! - **Events** go through kube's `Recorder` (`events.k8s.io/v1`, series PATCHes for repeats)
//!   from a background task, with no per-object spam filter; client-go writes core/v1
//!   Events with a 25-burst spam filter.
//! - The initial list is queued once complete (so the reconciler never finds an object
//!   missing from a half-filled cache), with controller-runtime's low priority.
//!
//! ## Example
//! The CRDs, as `provider crds` prints them:
//! ```
//! let yaml = provider::crd::crds_yaml().unwrap();
//! assert!(yaml.contains("name: buckets.mockcloud.example.org"));
//! assert_eq!(
//!     yaml.matches("kind: CustomResourceDefinition").count(),
//!     provider::crd::crds().len()
//! );
//! ```

#[cfg(feature = "aws")]
pub mod aws;
pub mod cli;
pub mod cloud;
pub mod crd;
pub mod events;
mod kinds;
pub mod kube_client;
pub mod metrics;
pub mod metrics_server;
mod provider;
pub mod reconciler;
pub mod watch;

pub use cloud::{CloudClient, CloudError};
pub use metrics::ProviderMetrics;
pub use provider::{
    DEFAULT_SHUTDOWN_TIMEOUT, Provider, ProviderError, ProviderOptions, RunSummary,
};
