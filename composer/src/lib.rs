//! # composer
//!
//! Crossplane core's composite layer, for the load-testing harness: what core does between
//! a composite resource (XR) and the managed resources a provider reconciles. This first
//! piece is the **function layer** ([`function`]): the composition-function gRPC protocol
//! (`apiextensions.fn.proto.v1`, wire-compatible with Crossplane and its SDKs), the clients
//! core uses to call functions (over loopback, or in process with no socket so virtual-time
//! runs can call them), a server for any function, a built-in patch-and-transform-shaped
//! function, faults, and a pipeline that chains steps as core does. The composite
//! reconciler is under way: [`api`] holds the Crossplane objects it reads, [`xcrd`]
//! generates an XR kind's CRD from its XRD, and [`composite`] holds the reconcile steps
//! (Composition and revision selection, conditions, requeue), composing against an API
//! server, one XR reconcile in core's order, and realtime event mapping through the
//! circuit breaker. The `composer` binary (feature `cli`, on by default) runs one
//! controller per XRD against an API server with core's flags.
//!
//! ## Where to start
//! - [`function::FunctionRunner`]: what a reconciler calls; [`function::GrpcRunner`] and
//!   [`function::InProcessRunner`] implement it, [`function::Functions`] maps names to them.
//! - [`function::pipeline::run`]: a Composition's steps, one call each.
//! - [`function::builtin`]: the built-in function and its input.
//! - [`function::FunctionServer`]: serve a [`function::Function`] on a port.
//! - [`api::CompositeResourceDefinition`] and [`xcrd::for_composite_resource`]: an XR kind
//!   and its CRD.
//! - [`composite::select_composition`], [`composite::fetch_revision`],
//!   [`composite::outcome`], [`composite::requeue`]: steps of one XR reconcile.
//! - [`composite::Reconciler`] and [`composite::Composer`]: one XR reconciled against an
//!   API server; [`composite::start`]: its controller with a worker pool;
//!   [`composite::watch`] and [`composite::Realtime`]: watch events through the breaker
//!   into the queue; [`composite::watch_cached`], [`composite::watch_compositions`],
//!   [`composite::watch_revisions_cached`] and [`composite::Cache`]: the XR, Compositions,
//!   revisions and composed resources a reconcile reads.
//! - [`composite::Recorder`]: core's XR events; [`composite::run_revision_controllers`]:
//!   a CompositionRevision per Composition change.
//!
//! ## Example
//! The built-in function, served over gRPC on loopback and called with core's 2-minute
//! deadline:
//!
//! ```
//! use std::time::Duration;
//! use composer::function::builtin::{self, Resources};
//! use composer::function::proto::{Ready, RunFunctionRequest, State};
//! use composer::function::value::to_struct;
//! use composer::function::{FunctionRunner, FunctionServer, GrpcRunner};
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let server = FunctionServer::bind("127.0.0.1:0".parse().unwrap(), Resources).await.unwrap();
//!
//! let input = json!({
//!     "apiVersion": builtin::API_VERSION,
//!     "kind": builtin::KIND,
//!     "ttl": "1m",
//!     "resources": [{
//!         "name": "bucket",
//!         "count": 2,
//!         "base": {"apiVersion": "s3.aws.upbound.io/v1beta1", "kind": "Bucket"},
//!         "patches": [{"fromFieldPath": "spec.region", "toFieldPath": "spec.forProvider.region"}],
//!     }],
//! });
//! let xr = json!({"apiVersion": "example.org/v1", "kind": "XBucket", "spec": {"region": "eu-west-1"}});
//! let request = RunFunctionRequest {
//!     observed: Some(State {
//!         composite: Some(composer::function::proto::Resource {
//!             resource: Some(to_struct(xr.as_object().unwrap())),
//!             ..Default::default()
//!         }),
//!         ..Default::default()
//!     }),
//!     input: Some(to_struct(input.as_object().unwrap())),
//!     ..Default::default()
//! };
//!
//! let runner = GrpcRunner::new(server.address());
//! let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
//! let response = runner.run("resources", request, deadline).await.unwrap();
//!
//! let desired = response.desired.unwrap().resources;
//! assert_eq!(desired.keys().collect::<Vec<_>>(), ["bucket-0", "bucket-1"]);
//! // Nothing is observed yet, so nothing is ready.
//! assert_eq!(desired["bucket-0"].ready(), Ready::False);
//! assert_eq!(response.meta.unwrap().ttl.unwrap().seconds, 60);
//! server.shutdown().await;
//! # });
//! ```

pub mod api;
pub mod composite;
pub mod function;
pub mod xcrd;
