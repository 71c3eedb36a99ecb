use std::sync::atomic::{AtomicU64, Ordering};

use super::result::Outcome;

/// Counters a controller keeps (controller-runtime's `controller_runtime_reconcile_total` by
/// result, plus the in-queue gate's reservations).
#[derive(Debug, Default)]
pub struct ControllerStats {
    success: AtomicU64,
    error: AtomicU64,
    terminal_error: AtomicU64,
    requeue: AtomicU64,
    requeue_after: AtomicU64,
    gate_reservations: AtomicU64,
    active_workers: AtomicU64,
}

/// A snapshot of [`ControllerStats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ControllerStatsSnapshot {
    /// Reconciles that ended with success.
    pub success: u64,
    /// Reconciles that ended with a (retryable) error.
    pub error: u64,
    /// Reconciles that ended with a terminal error.
    pub terminal_error: u64,
    /// Reconciles that asked for a rate-limited requeue.
    pub requeue: u64,
    /// Reconciles that asked for a requeue after a delay.
    pub requeue_after: u64,
    /// Tokens reserved by the in-queue gate (one per hand-out).
    pub gate_reservations: u64,
    /// Workers inside a reconcile right now.
    pub active_workers: u64,
}

impl ControllerStatsSnapshot {
    /// All finished reconciles.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.success + self.error + self.terminal_error + self.requeue + self.requeue_after
    }
}

impl ControllerStats {
    pub(crate) fn record(&self, outcome: Outcome) {
        let c = match outcome {
            Outcome::Success => &self.success,
            Outcome::Error => &self.error,
            Outcome::TerminalError => &self.terminal_error,
            Outcome::Requeue => &self.requeue,
            Outcome::RequeueAfter => &self.requeue_after,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn reserved(&self) {
        self.gate_reservations.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn worker_active(&self, active: bool) {
        if active {
            self.active_workers.fetch_add(1, Ordering::Relaxed);
        } else {
            self.active_workers.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// The counters now.
    #[must_use]
    pub fn snapshot(&self) -> ControllerStatsSnapshot {
        let r = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ControllerStatsSnapshot {
            success: r(&self.success),
            error: r(&self.error),
            terminal_error: r(&self.terminal_error),
            requeue: r(&self.requeue),
            requeue_after: r(&self.requeue_after),
            gate_reservations: r(&self.gate_reservations),
            active_workers: r(&self.active_workers),
        }
    }
}
