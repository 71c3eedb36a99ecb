//! XR time to Ready (budget.md §12.4).

use super::CoreShape;
use crate::predict::formula::{Meaning, Prediction};

/// An XR's time to Ready, from its create \[D\] §12.4: τ_MR + t_watch + L, where
/// L = Σk_i·t_fn + (N_x + 2 + S)·t_apply (one reconcile; its applies are sequential).
///
/// The XR reads Ready in the reconcile that follows its slowest composed resource's Ready
/// write: the write reaches core's watch after t_watch, the event enqueues the XR (the
/// breaker closed), a worker takes it at once (fewer XRs busy than w_core), and the
/// reconcile's status apply is the XR's Ready. With realtime off, or the event dropped by
/// an open circuit, the next poll or TTL requeue takes the event's place: add up to
/// 1.1·TTL (§12.5 says when).
#[must_use]
pub fn xr_time_to_ready(s: &CoreShape) -> Prediction {
    let l = s.reconcile_time();
    let v = s.mr_ready + s.t_watch + l;
    Prediction::new(
        "core/xr-time-to-ready",
        "an XR's time to Ready from its create",
        v,
        "s",
    )
    .formula("τ_MR + t_watch + Σk_i·t_fn + (N_x + 2 + S)·t_apply")
    .input("τ_MR", s.mr_ready)
    .input("t_watch", s.t_watch)
    .input("Σk_i", s.calls_per_reconcile())
    .input("t_fn", s.t_fn)
    .input("N_x", s.composed)
    .input("S", s.secret_reads)
    .input("t_apply", s.t_apply)
    .meaning(Meaning::Expected)
    .source("[D] §12.4")
    .note("a free worker assumed (the XRs in reconcile at once fewer than w_core)")
}
