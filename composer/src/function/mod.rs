//! Composition functions: the `RunFunction` protocol, clients, a server, a built-in function
//! and faults.
//!
//! | item | what it is |
//! |---|---|
//! | [`proto`] | the messages of `apiextensions.fn.proto.v1`, by hand from the proto |
//! | [`FunctionRunner`] | what the composite reconciler calls: a function by name, by deadline |
//! | [`GrpcRunner`] | calls a function at an address over plaintext HTTP/2, waiting for it to be ready |
//! | [`InProcessRunner`] | calls a [`Function`] over the same protocol with no socket (paused time works) |
//! | [`Functions`] | runners by function name |
//! | [`Function`], [`FunctionService`], [`FunctionServer`] | what a function implements; its gRPC service; that service on a listener |
//! | [`builtin`] | a patch-and-transform-shaped function |
//! | [`Faulty`] | latency, FATAL results, a function that is down, a TTL override |
//! | [`FunctionMetrics`] | core's `function_run_function_*` metrics, per gRPC call |
//! | [`pipeline`] | a Composition's steps, chained as core chains them |
//! | [`response`] | responses built from requests, as function-sdk-go's `response.To` and `Fatal` |
//! | [`value`] | `google.protobuf.Struct` to and from JSON, `Duration` from `std` |

pub mod builtin;
mod client;
mod codec;
mod error;
mod fault;
mod in_process;
pub mod metrics;
pub mod pipeline;
pub mod proto;
mod registry;
pub mod response;
mod runner;
mod sanitize;
mod server;
mod service;
pub mod value;

pub use client::GrpcRunner;
pub use error::{BoxError, Direction, FunctionError};
pub use fault::{Fault, Faulty};
pub use in_process::InProcessRunner;
pub use metrics::FunctionMetrics;
pub use proto::{decode_request, decode_response};
pub use registry::Functions;
pub use runner::{BoxFuture, FunctionRunner, MAX_MESSAGE_SIZE, RunFuture};
pub use server::FunctionServer;
pub use service::{FnFunction, Function, FunctionService};
