//! An embedded Kubernetes API server that kube-rs and kubectl accept, for tests and
//! load runs on machines with no cluster.
//!
//! It keeps objects in memory with one global resourceVersion, serves CRUD, watches
//! (with bookmarks and in-stream 410s), the `/status` subresource, merge, JSON,
//! strategic-merge (built-ins) and server-side-apply patches, finalizers, label and
//! field selectors, discovery, a minimal OpenAPI v3, CustomResourceDefinitions (with
//! their structural schemas: pruning, `fieldValidation`, defaulting, validation),
//! `meta.k8s.io/v1` Tables, both Event APIs, protobuf bodies of the built-in kinds
//! client-go sends that way, a garbage collector for `ownerReferences`, an optional
//! Deployment status writer ([`Config::with_deployment_rollouts`]), optional flow
//! control ([`FlowControl`]: API Priority and Fairness with kube-apiserver's priority
//! levels and queues, or an immediate limit) and a journal of every request.
//!
//! # Where to start
//! - [`ApiServer::new`] builds a server from a [`Config`]; [`ApiServer::service`] gives a
//!   tower `Service` for `kube::Client::new(service, "default")`, in-process.
//! - [`serve`] puts the same server on a socket; [`write_kubeconfig`] points kubectl at it.
//! - [`ApiServer::replica`] gives another replica over the same objects (its own journal,
//!   metrics and flow control); [`balance`] spreads connections over replicas' sockets and
//!   [`ApiServer::set_replica_endpoints`] lists them in the `kubernetes` EndpointSlices.
//! - [`ApiServer::load_crd_yaml`] preloads CRDs; [`ApiServer::journal`] reads the
//!   [`Journal`] of requests (also served at [`JOURNAL_PATH`]`?since=SEQ` as a
//!   [`JournalPage`], timed from [`ApiServer::epoch`]); [`Verb::of`] classifies a request
//!   as the journal does.
//!
//! # Example
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, PostParams};
//! use mock_apiserver::{ApiServer, Config};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = ApiServer::new(Config::default());
//! let client = kube::Client::new(server.service(), "default");
//! let configmaps: Api<ConfigMap> = Api::default_namespaced(client);
//!
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! let created = configmaps.create(&PostParams::default(), &cm).await?;
//! assert_eq!(created.metadata.resource_version, Some(server.resource_version().to_string()));
//!
//! let journal = server.journal().since(0);
//! assert_eq!(journal.last().map(|e| e.verb.as_str()), Some("create"));
//! # Ok(())
//! # }
//! ```

mod balance;
mod clock;
mod crd;
mod discovery;
mod error;
mod events;
mod flowcontrol;
mod handlers;
mod identity;
mod journal;
mod jsonpath;
mod kinds;
mod kubeconfig;
mod long_running;
mod object;
mod openapi;
mod patch;
mod prometheus;
mod protobuf;
mod query;
mod registry;
mod render;
mod response;
#[cfg(test)]
mod robustness;
mod rollout;
mod route;
mod schema;
mod selector;
mod serve;
mod server;
mod service;
mod ssa;
mod store;
mod strategic;
mod verb;
mod watch;

pub use balance::balance;
pub use error::{ApiError, Cause, Details};
pub use flowcontrol::config::{
    ConfigError as FlowControlConfigError, Distinguisher, FlowSchema, LevelKind, LimitResponse,
    NonResourceRule, PolicyRules, PriorityLevel, ResourceRule, Subject,
};
pub use flowcontrol::{FlowControl, PriorityAndFairness, RateLimit};
pub use identity::User;
pub use journal::{Entry, JOURNAL_PATH, Journal, JournalPage, X_EPOCH};
pub use kubeconfig::{kubeconfig, write_kubeconfig};
pub use response::ResponseBody;
pub use schema::{SchemaError, Structural};
pub use serve::serve;
pub use server::{ApiServer, Config, LoadError};
pub use service::ApiService;
pub use store::{GarbageCollection, WatchHistory};
pub use verb::Verb;
