//! Core's API requests and function calls (budget.md §12.1–§12.3): steady-state polling by
//! the functions' TTL, the informers' resyncs, and the creation fan-in.

use super::CoreShape;
use crate::predict::formula::{Meaning, Prediction};

/// Writes to the XR itself in its first reconcile, each an Update event of the XR: the
/// finalizer, the Composition reference, the revision reference and the composite label
/// (four Updates), the resource-reference apply, the status apply and the status Update.
/// Core's first reconcile makes the same less one Update (it sets both references in one).
pub const FIRST_XR_WRITES: f64 = 7.0;

/// Informers whose resync replays reach an XR: its own kind, each composed kind and the
/// CompositionRevisions (realtime); with realtime off only the XR's own.
#[must_use]
pub fn informers(s: &CoreShape) -> f64 {
    if s.realtime {
        2.0 + s.composed_kinds
    } else {
        1.0
    }
}

/// ρ: reconciles of one XR per resync of all informers, expected: one for its own object,
/// one for each revision informer, and two for a composed kind replaying more than one of
/// its objects (the first replayed event hands the XR to a worker, the rest queue it once
/// more).
#[must_use]
pub fn resync_reconciles(s: &CoreShape) -> f64 {
    if !s.realtime {
        return 1.0;
    }
    let per_kind = if s.watched_per_kind > 1.0 { 2.0 } else { 1.0 };
    2.0 + s.composed_kinds * per_kind
}

/// λ: steady reconciles per second of all X XRs, expected: each XR every T + L (T the TTL
/// or, realtime off, the poll interval; none when 0) plus ρ per S_sync, at most w_core/L.
#[must_use]
pub fn steady_rate(s: &CoreShape) -> f64 {
    let l = s.reconcile_time();
    let t = s.period();
    let polls = if t > 0.0 { 1.0 / (t + l) } else { 0.0 };
    let resyncs = if s.sync_interval.is_finite() && s.sync_interval > 0.0 {
        resync_reconciles(s) / s.sync_interval
    } else {
        0.0
    };
    let demand = s.xrs * (polls + resyncs);
    if l > 0.0 {
        demand.min(s.workers / l)
    } else {
        demand
    }
}

fn with_steady_inputs(p: Prediction, s: &CoreShape, w: f64) -> Prediction {
    p.input("X", s.xrs)
        .input("N_x", s.composed)
        .input("S", s.secret_reads)
        .input("TTL", s.period())
        .input("L", s.reconcile_time())
        .input("S_sync", s.sync_interval)
        .input("ρ", resync_reconciles(s))
        .input("w_core", s.workers)
        .input("W", w)
}

/// The inputs of a steady bound over any window of `w` s (the polls' period and the
/// informers' resyncs), and its meaning: an upper bound.
fn with_bound_inputs(p: Prediction, s: &CoreShape, w: f64) -> Prediction {
    p.input("TTL", s.period())
        .input("L", s.reconcile_time())
        .input("i", informers(s))
        .input("S_sync", s.sync_interval)
        .input("W", w)
        .meaning(Meaning::UpperBound)
}

/// Core's API requests in a steady window of `w` s, expected \[D\]\[A\] §12.1:
/// (N_x + 2 + S)·λ·W. No watch events in steady state: every apply is a no-op that bumps
/// no resourceVersion, and the status is written only when it changed.
#[must_use]
pub fn steady_requests(s: &CoreShape, w: f64) -> Prediction {
    let v = s.steady_requests() * steady_rate(s) * w;
    with_steady_inputs(
        Prediction::new(
            "core/steady-requests",
            format!("core's API requests in a steady {w}s window"),
            v,
            "requests",
        ),
        s,
        w,
    )
    .formula("(N_x + 2 + S)·W·min(X·(1/(TTL + L) + ρ/S_sync), w_core/L)")
    .meaning(Meaning::Expected)
    .source("[D][A] §12.1")
}

/// Reconciles of one XR in any steady window of `w` s, at most: its TTL chain
/// ⌊W/(0.9·TTL + L)⌋ + 1 (a requeue comes no sooner than 0.9·TTL after the reconcile ends)
/// and two per informer resync, each informer firing ⌊W/(0.9·S_sync)⌋ + 1 times.
#[must_use]
pub fn steady_reconciles_bound(s: &CoreShape, w: f64) -> f64 {
    let l = s.reconcile_time();
    let t = s.period();
    let polls = if t > 0.0 {
        (w / (0.9 * t + l) + 1e-9).floor() + 1.0
    } else {
        0.0
    };
    let resyncs = if s.sync_interval.is_finite() && s.sync_interval > 0.0 {
        2.0 * informers(s) * ((w / (0.9 * s.sync_interval) + 1e-9).floor() + 1.0)
    } else {
        0.0
    };
    polls + resyncs
}

/// Core's API requests in any steady window of `w` s, at most \[D\] §12.1:
/// X·(N_x + 2 + S)·(⌊W/(0.9·TTL + L)⌋ + 1 + 2·i·(⌊W/(0.9·S_sync)⌋ + 1)).
#[must_use]
pub fn steady_requests_bound(s: &CoreShape, w: f64) -> Prediction {
    let v = s.xrs * s.steady_requests() * steady_reconciles_bound(s, w);
    let p = Prediction::new(
        "core/steady-requests-bound",
        format!("core's API requests in any steady {w}s window"),
        v,
        "requests",
    )
    .formula("X·(N_x + 2 + S)·(⌊W/(0.9·TTL + L)⌋ + 1 + 2·i·(⌊W/(0.9·S_sync)⌋ + 1))")
    .input("X", s.xrs)
    .input("N_x", s.composed)
    .input("S", s.secret_reads);
    with_bound_inputs(p, s, w)
        .source("[D] §12.1")
        .note("steady state: no watch events but the informers' resyncs (no provider writes, no spec changes)")
}

/// Calls of `function` in a steady window of `w` s, expected \[D\]\[A\] §12.2: k_f·λ·W, k_f
/// the calls per reconcile of the steps naming it.
#[must_use]
pub fn function_calls(s: &CoreShape, function: &str, w: f64) -> Prediction {
    let k = s.calls_of(function);
    let v = k * steady_rate(s) * w;
    with_steady_inputs(
        Prediction::new(
            format!("core/function-calls/{function}"),
            format!("calls of function {function} in a steady {w}s window"),
            v,
            "calls",
        ),
        s,
        w,
    )
    .input("k_f", k)
    .formula("k_f·W·min(X·(1/(TTL + L) + ρ/S_sync), w_core/L)")
    .meaning(Meaning::Expected)
    .source("[D][A] §12.2")
}

/// Calls of `function` in any steady window of `w` s, at most \[D\] §12.2.
#[must_use]
pub fn function_calls_bound(s: &CoreShape, function: &str, w: f64) -> Prediction {
    let k = s.calls_of(function);
    let p = Prediction::new(
        format!("core/function-calls-bound/{function}"),
        format!("calls of function {function} in any steady {w}s window"),
        s.xrs * k * steady_reconciles_bound(s, w),
        "calls",
    )
    .formula("X·k_f·(⌊W/(0.9·TTL + L)⌋ + 1 + 2·i·(⌊W/(0.9·S_sync)⌋ + 1))")
    .input("X", s.xrs)
    .input("k_f", k);
    with_bound_inputs(p, s, w).source("[D] §12.2")
}

/// w_xr: the XR's changing writes while it is created, at most, each an Update event of
/// the XR: the first reconcile's seven, then for each of the h·N_x changes of its composed
/// resources that its status shows, a status apply and a status Update (each change seen by
/// a reconcile of its own).
#[must_use]
pub fn creation_xr_writes(s: &CoreShape) -> f64 {
    FIRST_XR_WRITES + 2.0 * s.status_changes * s.composed
}

/// w_xr,min: the fewest: the first reconcile's seven and a status apply and Update for each
/// of the h steps when every composed resource takes it at once (one reconcile sees them
/// all).
#[must_use]
pub fn creation_xr_writes_min(s: &CoreShape) -> f64 {
    FIRST_XR_WRITES + 2.0 * s.status_changes
}

/// R_c: reconciles of one XR while it is created, at most \[D\] §12.3:
/// 1 + w_xr + N_x·(1 + u). Every write to the XR or to one of its composed resources
/// enqueues it once (the create of each, the provider's u writes of each); keys are
/// deduplicated and never reconciled twice at once, so no reconcile runs without one of
/// those events (or the first).
#[must_use]
pub fn creation_reconciles(s: &CoreShape) -> Prediction {
    let w_xr = creation_xr_writes(s);
    let v = 1.0 + w_xr + s.composed * (1.0 + s.provider_writes);
    Prediction::new(
        "core/creation-reconciles",
        "reconciles of one XR while it is created",
        v,
        "reconciles",
    )
    .formula("1 + w_xr + N_x·(1 + u), w_xr = 7 + 2·h·N_x")
    .input("N_x", s.composed)
    .input("u", s.provider_writes)
    .input("h", s.status_changes)
    .input("w_xr", w_xr)
    .meaning(Meaning::UpperBound)
    .source("[D] §12.3")
    .note("with a TTL shorter than the creation, add its polls; a real provider's spread-out writes are deduplicated less than a mock's")
}

/// a_core: API requests of an XR's first reconcile: the four XR Updates, the
/// resource-reference apply, N_x creating applies, the status apply and the status Update,
/// and S live reads. Composed names cost no request: core names a composed resource from
/// its XR's uid and its composition name.
#[must_use]
pub fn first_reconcile_requests(s: &CoreShape) -> f64 {
    s.composed + FIRST_XR_WRITES + s.secret_reads
}

/// Core's API requests of the creation of all X XRs, at most \[D\] §12.3:
/// X·(a_core + (R_c − 1)·(N_x + 3 + S)). With no client limit (QPS −1) nothing in core
/// spreads them: the workers (w_core at a time) and the API server's own limits are the
/// only brakes.
#[must_use]
pub fn creation_requests(s: &CoreShape) -> Prediction {
    let r_c = creation_reconciles(s).value;
    let a_first = first_reconcile_requests(s);
    let later = s.composed + 3.0 + s.secret_reads;
    let v = s.xrs * (a_first + (r_c - 1.0) * later);
    Prediction::new(
        "core/creation-requests",
        "core's API requests while the XRs are created",
        v,
        "requests",
    )
    .formula("X·(a_core + (R_c − 1)·(N_x + 3 + S)), a_core = N_x + 7 + S")
    .input("X", s.xrs)
    .input("N_x", s.composed)
    .input("S", s.secret_reads)
    .input("a_core", a_first)
    .input("R_c", r_c)
    .meaning(Meaning::UpperBound)
    .source("[D] §12.3")
    .note("no client-side limit (QPS −1): only core's workers and the API server's own limits pace them")
}

/// Calls of `function` during the creation of all X XRs, at most \[D\] §12.3: X·R_c·k_f.
#[must_use]
pub fn creation_function_calls(s: &CoreShape, function: &str) -> Prediction {
    let r_c = creation_reconciles(s).value;
    let k = s.calls_of(function);
    Prediction::new(
        format!("core/creation-function-calls/{function}"),
        format!("calls of function {function} while the XRs are created"),
        s.xrs * r_c * k,
        "calls",
    )
    .formula("X·R_c·k_f")
    .input("X", s.xrs)
    .input("R_c", r_c)
    .input("k_f", k)
    .meaning(Meaning::UpperBound)
    .source("[D] §12.3")
}
