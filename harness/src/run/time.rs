//! How time passes in a run: real time on a multi-threaded runtime, or virtual time on a
//! single-threaded runtime whose clock is paused.
//!
//! # Semantics
//! Every component of the embedded stack keeps time on tokio's clock (a test fails the build
//! otherwise). With the clock paused, tokio advances it only when every task waits, and then
//! straight to the next timer: a 24-hour hold takes as long as the work in it, not a day.
//! On one thread the tasks run in a fixed order, and every random draw comes from the
//! scenario's seed, so a run repeats exactly. Work takes no virtual time, so the provider
//! sleeps the scenario's `prediction.reconcileCpu` in each reconcile, and the cloud's
//! configured latency is slept as in real time.
//!
//! What cannot run on a paused clock is refused: a cluster (its API server, provider and
//! cloud keep real time).

use tokio::runtime::{Handle, Runtime, RuntimeFlavor};

use super::error::RunError;
use crate::scenario::TimeMode;

/// The runtime for a run in `time`: multi-threaded for real time; for virtual time, one
/// thread whose clock is paused from its start.
///
/// The clock must not run at all before it is paused: tokio's timer counts whole
/// milliseconds from the runtime's start, so a few microseconds of real time before a
/// pause would shift every deadline's rounding, and timers would fire a millisecond apart
/// from one run to the next.
///
/// # Errors
/// The runtime cannot start (no threads, no I/O driver).
pub fn runtime(time: TimeMode) -> std::io::Result<Runtime> {
    match time {
        TimeMode::Real => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build(),
        TimeMode::Virtual => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build(),
    }
}

/// Checks that `time` can be in force for a run on a target that can (`virtual_capable`)
/// or cannot run on a paused clock, on the current runtime: for virtual time, the target
/// runs in this process, and the runtime is single-threaded with its clock paused from the
/// start (as [`runtime`] builds it, or a test with `start_paused = true`).
///
/// # Errors
/// Virtual time on a target that keeps real time, or on a runtime that is multi-threaded or
/// whose clock runs.
pub(super) fn check(time: TimeMode, virtual_capable: bool) -> Result<(), RunError> {
    if time == TimeMode::Real {
        return Ok(());
    }
    if !virtual_capable {
        return Err(RunError::VirtualTimeTarget);
    }
    if Handle::current().runtime_flavor() != RuntimeFlavor::CurrentThread || !paused() {
        return Err(RunError::VirtualTimeRuntime);
    }
    Ok(())
}

/// Whether tokio's clock is paused: a paused clock stands still while the thread sleeps
/// (it moves only when the runtime waits with nothing to do).
fn paused() -> bool {
    let before = tokio::time::Instant::now();
    std::thread::sleep(std::time::Duration::from_micros(100));
    tokio::time::Instant::now() == before
}
