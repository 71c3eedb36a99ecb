//! The bounds core's run-wide checks take when the scenario gives no limit
//! (`core/api-requests/<W>s`, `core/function-calls`, `core/xr-time-to-ready`,
//! `core/breaker-opens`, `core/stale-xrs`).

use super::{CoreGroupPlan, DEFAULTS, steady_function_calls, steady_requests};
use crate::predict::formula::{Meaning, Prediction};
use crate::scenario::{Action, Scenario};

/// The time the run surely lasts: its holds' durations (other phases may end at once).
pub(super) fn held(s: &Scenario) -> f64 {
    s.phases
        .iter()
        .map(|p| match &p.action {
            Action::Hold { duration } => duration.as_secs_f64(),
            _ => 0.0,
        })
        .sum()
}

/// `core/stale-xrs`: XRs the creation leaves stale until the next resync, at most.
pub(super) fn stale_xrs(groups: &[CoreGroupPlan]) -> Prediction {
    let n: f64 = groups
        .iter()
        .map(|g| g.prediction.creation_opens.stale_xrs.value)
        .sum();
    Prediction::new(
        "core/stale-xrs",
        "XRs the creation leaves stale until the next resync",
        n,
        "XRs",
    )
    .formula("Σ_groups X·[c + 2U > B_cb + R_cb·Δt + 6]·[TTL = 0]·[released]")
    .meaning(Meaning::UpperBound)
    .source("[D] §12.5")
    .checks(&["staleXRs"])
    .note(format!(
        "the creation's last Ready write dropped by the open circuit, no TTL requeue, and no eager requeue: the XR waits for the next resync (#7703); {DEFAULTS}"
    ))
}

/// `core/api-requests/<W>s`: the creation's whole fan-in in one window plus every steady
/// poll and resync the window can hold, over the groups.
pub(super) fn api_requests(groups: &[CoreGroupPlan], w: f64) -> Prediction {
    let creation: f64 = groups
        .iter()
        .map(|g| g.prediction.creation_requests.value)
        .sum();
    let steady = steady_requests(groups, w);
    Prediction::new(
        format!("core/api-requests/{w}s"),
        format!("core's API requests in any {w}s window"),
        creation + steady,
        "requests",
    )
    .formula("Σ_groups X·(a_core + (R_c − 1)·(N_x + 3 + S)) + X·(N_x + 2 + S)·(⌊W/(0.9·TTL + L)⌋ + 1 + 2·i·(⌊W/(0.9·S_sync)⌋ + 1))")
    .input("creation", creation)
    .input("steady", steady)
    .input("W", w)
    .meaning(Meaning::UpperBound)
    .source("[D] §12.1, §12.3")
    .checks(&["coreApiRequests"])
    .note(format!("the whole creation in one window, plus the steady bound; XR deletion is not modelled (§12.7); {DEFAULTS}"))
}

/// `core/function-calls`: every function's calls over the run, at most: the creation's and
/// the steady bound over the longest the run can take.
pub(super) fn function_calls(groups: &[CoreGroupPlan], run_s: f64) -> Prediction {
    let creation: f64 = groups
        .iter()
        .flat_map(|g| &g.prediction.creation_function_calls)
        .map(|p| p.value)
        .sum();
    let steady = steady_function_calls(groups, run_s);
    Prediction::new(
        "core/function-calls",
        "calls of every function over the run",
        creation + steady,
        "calls",
    )
    .formula("Σ_groups Σ_f X·k_f·(R_c + ⌊T/(0.9·TTL + L)⌋ + 1 + 2·i·(⌊T/(0.9·S_sync)⌋ + 1))")
    .input("creation", creation)
    .input("steady", steady)
    .input("T", run_s)
    .meaning(Meaning::UpperBound)
    .source("[D] §12.2, §12.3")
    .checks(&["functionCalls"])
    .note(format!("T: the longest the run can take (every phase up to its timeout, holds their duration); XR deletion is not modelled (§12.7); {DEFAULTS}"))
}

/// `core/xr-time-to-ready`: the slowest group's XR time to Ready (expected).
pub(super) fn xr_time_to_ready(groups: &[CoreGroupPlan]) -> Prediction {
    let slowest = groups
        .iter()
        .map(|g| &g.prediction.xr_time_to_ready)
        .max_by(|a, b| a.value.total_cmp(&b.value));
    let mut p = slowest
        .cloned()
        .unwrap_or_else(|| Prediction::new("", "", 0.0, "s").meaning(Meaning::Expected));
    p.id = "core/xr-time-to-ready".to_owned();
    p.what = "an XR's time to Ready from its create, the slowest group's".to_owned();
    p.checks(&["xrTimeToReady"]).note(
        "τ_MR: the provider's p99 time to Ready (§5.2) of the composed resources of the phase that creates the XRs, created at once; the check's limit adds its tolerance",
    )
}

/// `core/breaker-opens`: circuits the creation and the informers' resyncs surely open; a
/// resync only when the run's holds (`held` seconds) outlast the longest informer period,
/// 1.1·S_sync, so that a replay surely falls in the run; the replay opens a circuit by its
/// own tokens, or reopens the one the creation opened (`core/<group>/resync/reopens`).
pub(super) fn breaker_opens(groups: &[CoreGroupPlan], held: f64) -> Prediction {
    let replayed = |g: &CoreGroupPlan| {
        if held >= 1.1 * g.shape.sync_interval {
            1.0
        } else {
            0.0
        }
    };
    let sure: f64 = groups
        .iter()
        .map(|g| {
            g.shape.xrs
                * (g.prediction.creation_opens.opens.value
                    + replayed(g)
                        * g.prediction
                            .resync_opens
                            .opens
                            .value
                            .max(g.prediction.resync_reopens.value))
        })
        .sum();
    let may: f64 = groups
        .iter()
        .map(|g| {
            g.shape.xrs
                * (g.prediction.creation_opens.may_open.value
                    + g.prediction.resync_opens.may_open.value)
                    .min(1.0)
        })
        .sum();
    Prediction::new(
        "core/breaker-opens",
        "circuits the creation and the resyncs surely open",
        sure,
        "opens",
    )
    .formula("Σ_groups X·([c + 2U_min > B_cb + R_cb·Δt_max] + max([2·n_kind > B_cb], reopens)·[holds ≥ 1.1·S_sync])")
    .input("X_may", may)
    .input("holds", held)
    .meaning(Meaning::LowerBound)
    .source("[P] §12.5, Lemma 6")
    .checks(&["breakerOpens"])
    .note(format!(
        "a breakerOpens of 0 is assured only when no circuit may open; with circuits sure to open, breakerOpens checks at least these opened (the storm); {DEFAULTS}"
    ))
}
