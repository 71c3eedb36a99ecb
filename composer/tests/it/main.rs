//! composer's integration tests: functions over real gRPC on loopback, in process on
//! paused time, and real Python functions as processes.

mod binary;
mod breaker;
mod chain;
mod compose;
mod errors;
mod fixture;
mod grpc;
mod in_process;
mod predict;
mod predict_smoke;
mod python;
mod pythonic;
mod reconcile;
mod revisions;
mod storms;
mod support;
mod wire;
mod xcrd;
