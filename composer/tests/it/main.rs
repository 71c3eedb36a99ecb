//! composer's integration tests: functions over real gRPC on loopback, in process on
//! paused time, and real Python functions as processes.

/// mimalloc, as the harness binary uses: the virtual-time runs allocate heavily.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
/// The harness's two rooms (file locks in the workspace's shared test directory, so they
/// hold between every test process of a run): the composer's heaviest virtual-time runs
/// take the heavy one, so that they never starve the harness's real-time calibrations.
#[allow(dead_code)]
#[path = "../../../harness/tests/it/timing.rs"]
mod timing;
mod wire;
mod xcrd;
