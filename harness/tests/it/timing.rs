//! Real-time tests whose figures depend on the provider being scheduled promptly, kept from
//! running beside the tests that keep both cores busy for minutes.
//!
//! The test binary runs two tests at a time. A real-time calibration attributes cloud calls
//! to reconciles by the times the journals give them; beside a virtual-time run that holds a
//! core for three minutes, the provider's process is starved and a reconcile's boundary
//! lands among its calls (seen: one steady observe of 14 calls, one of 17, where every
//! other made 15). A CPU-heavy test takes [`heavy`] (any number may run together); a
//! timing-sensitive one takes [`sensitive`], which waits until none of them runs and keeps
//! them out while it does.

use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

static CORES: RwLock<()> = RwLock::new(());

/// Held by a test that keeps a core busy for minutes.
pub fn heavy() -> RwLockReadGuard<'static, ()> {
    CORES.read().unwrap_or_else(PoisonError::into_inner)
}

/// Held by a real-time test whose figures need the provider scheduled promptly.
pub fn sensitive() -> RwLockWriteGuard<'static, ()> {
    CORES.write().unwrap_or_else(PoisonError::into_inner)
}
