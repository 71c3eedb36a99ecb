//! Crossplane core's part of a composite scenario's plan (budget.md §12): for each XR group
//! the [`CoreShape`] its Composition and core's settings make, everything
//! [`crate::predict::core::predict`] says of it under `core/<group>/…`, and the bounds the
//! core checks take when the scenario gives no limit (`core/api-requests/<W>s`,
//! `core/function-calls`, `core/xr-time-to-ready`, `core/breaker-opens`).
//!
//! What a scenario does not say is read from §12's documented defaults, named in each
//! prediction's inputs and notes: the provider's writes per composed resource (u = 6, ours),
//! the changes an XR's status shows (h = 2), a creation span Δt = 0 (the breaker's worst
//! case), no Secrets, zero function and apply times; τ_MR is the provider's p99 time to
//! Ready (§5.2) of every composed resource the creating phase makes, all at once.

use super::Plan;
use crate::predict::backlog::{self, Backlog};
use crate::predict::core::{self as model, BreakerShape, CloseMode, CorePrediction, CoreShape};
use crate::predict::formula::{Meaning, Prediction};
use crate::scenario::composite::{CoreCheck, CoreSettings, XrGroup};
use crate::scenario::{Action, Check, Scenario};
use limiter::crossplane::circuit::Mode;

/// One XR group's shape and what §12 predicts of it.
#[derive(Clone, Debug)]
pub struct CoreGroupPlan {
    /// The group's name.
    pub group: String,
    /// The phase that creates it, when one does.
    pub create_phase: Option<String>,
    /// The shape the predictions read.
    pub shape: CoreShape,
    /// §12's predictions, ids `core/<group>/…`.
    pub prediction: CorePrediction,
}

/// The shape of `g` under `core`'s settings, τ_MR = `mr_ready`; `None` when its pipeline
/// does not say how many resources an XR composes (a step of another function, or a count
/// from a field).
#[must_use]
pub fn shape_of(g: &XrGroup, core: &CoreSettings, mr_ready: f64) -> Option<CoreShape> {
    let n = g.shape.resources_per_xr()?;
    let steps = g
        .shape
        .steps
        .iter()
        .map(|(_, function)| model::Step::new(function))
        .collect();
    let mut s = CoreShape::new(f64::from(g.count), f64::from(n), steps);
    s.ttl = g.shape.ttl.map_or(0.0, |t| t.as_secs_f64());
    s.realtime = core.realtime;
    s.poll_interval = core.poll_interval.as_secs_f64();
    s.sync_interval = core.sync_interval.as_secs_f64();
    s.workers = core.max_reconcile_rate as f64;
    s.composed_kinds = {
        let mut kinds: Vec<(&str, &str)> = Vec::new();
        for c in &g.shape.composed {
            let k = (c.api_version.as_str(), c.kind.as_str());
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
        kinds.len().max(1) as f64
    };
    // n_kind: the most composed resources of one kind per XR (each kind's informer replays
    // its own objects).
    s.watched_per_kind = f64::from(most_of_one_kind(g).unwrap_or(n));
    s.mr_ready = mr_ready;
    s.t_apply = core.request_latency.as_secs_f64();
    s.breaker = BreakerShape {
        burst: core.breaker.burst,
        refill: core.breaker.refill_per_second,
        cooldown: core.breaker.cooldown.to_std().as_secs_f64(),
        half_open: core.breaker.half_open_interval.to_std().as_secs_f64(),
        mode: match core.breaker.mode {
            Mode::EagerClose => CloseMode::Eager,
            _ => CloseMode::Released,
        },
    };
    Some(s)
}

/// The most resources of one kind an XR of `g` composes, over the kinds of its built-in
/// steps (`None` when a count comes from the XR).
fn most_of_one_kind(g: &XrGroup) -> Option<u32> {
    let mut per_kind: Vec<((&str, &str), u32)> = Vec::new();
    for c in &g.shape.composed {
        let k = (c.api_version.as_str(), c.kind.as_str());
        let n = c.count?;
        match per_kind.iter_mut().find(|(kind, _)| *kind == k) {
            Some((_, m)) => *m += n,
            None => per_kind.push((k, n)),
        }
    }
    per_kind.into_iter().map(|(_, n)| n).max()
}

const DEFAULTS: &str = "not in the scenario, §12's defaults: u = 6 (our provider's writes per composed resource), h = 2, Δt = 0, S = 0, t_fn = t_watch = 0; t_apply = core.requestLatency";

/// Renames `p` from `core/…` to `core/<group>/…` and names the defaults it read.
fn in_group(mut p: Prediction, group: &str) -> Prediction {
    p.id = format!(
        "core/{group}/{}",
        p.id.strip_prefix("core/").unwrap_or(&p.id)
    );
    p.what = format!("{group}: {}", p.what);
    p
}

/// The phase that creates XR group `g`, if any.
fn create_phase(s: &Scenario, g: usize) -> Option<&str> {
    s.phases
        .iter()
        .find(|ph| matches!(ph.action, Action::Create { .. }) && ph.composites.contains(&g))
        .map(|ph| ph.name.as_str())
}

/// τ_MR for the XRs `phase` creates: the provider's p99 time to Ready (§5.2) of all their
/// composed resources, created at once (core does not pace them), read with the phase's
/// parameters and per-resource reconciles and requests; each is Ready at the reconcile
/// after its create, τ_unloaded = 1 s + 2L̄ (§5.1), when nothing queues it.
fn mr_ready(s: &Scenario, plan: &Plan, phase: &str) -> f64 {
    let Some(pp) = plan.phases.iter().find(|p| p.name == phase) else {
        return 0.0;
    };
    let Some(i) = s.phase_index(phase) else {
        return 0.0;
    };
    let n: f64 = s.phases[i]
        .composites
        .iter()
        .filter_map(|&g| {
            let g = &s.composites.groups[g];
            g.shape
                .resources_per_xr()
                .map(|n| f64::from(n) * f64::from(g.count))
        })
        .sum();
    let mut b = pp.backlog.clone().unwrap_or(Backlog {
        per_controller: Vec::new(),
        m: 2.0,
        a_first: 5.0,
        a_next: 1.0,
        arrival_rate: None,
    });
    b.per_controller = vec![n];
    b.arrival_rate = None;
    // Composed kinds are taken as synchronous: Ready at the reconcile after their create.
    let poll = s.settings.poll_interval.as_secs_f64();
    let unloaded = backlog::ttr_unloaded(&pp.params, 0.0, poll);
    backlog::ttr_quantile(&pp.params, &b, 0.99, unloaded)
}

/// Every XR group's shape and predictions (groups whose shape the pipeline does not say are
/// left out: their checks need the scenario's limits).
#[must_use]
pub fn groups(s: &Scenario, plan: &Plan) -> Vec<CoreGroupPlan> {
    let c = &s.composites;
    c.groups
        .iter()
        .enumerate()
        .filter_map(|(i, g)| {
            let phase = create_phase(s, i);
            let tau = phase.map_or(0.0, |p| mr_ready(s, plan, p));
            let shape = shape_of(g, &c.core, tau)?;
            Some(CoreGroupPlan {
                group: g.name.clone(),
                create_phase: phase.map(str::to_owned),
                prediction: model::predict(&shape),
                shape,
            })
        })
        .collect()
}

/// The windows of the scenario's `coreApiRequests` checks, in seconds.
fn request_windows(s: &Scenario) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    for a in &s.assertions {
        if let Check::Core(CoreCheck::ApiRequests { window, .. }) = &a.check {
            let w = window.as_secs_f64();
            if !out.contains(&w) {
                out.push(w);
            }
        }
    }
    out
}

/// Core's predictions of the plan: each group's, then the checks' bounds.
#[must_use]
pub fn predictions(s: &Scenario, plan: &Plan) -> Vec<Prediction> {
    let groups = groups(s, plan);
    let mut out = Vec::new();
    for g in &groups {
        for p in g.prediction.all() {
            out.push(in_group(p.clone(), &g.group));
        }
        let tau = match &g.create_phase {
            Some(ph) => format!(
                "τ_MR: the provider's p99 time to Ready (§5.2) of the composed resources {ph} makes, all at once, with {ph}'s parameters"
            ),
            None => "τ_MR = 0: no phase creates the group".to_owned(),
        };
        let ready = out
            .iter_mut()
            .rev()
            .find(|p| p.id.ends_with("/xr-time-to-ready"))
            .expect("every group predicts its XR time to Ready");
        ready.note = Some(format!("{tau}; {}", ready.note.take().unwrap_or_default()));
    }
    if groups.is_empty() || groups.len() < s.composites.groups.len() {
        return out;
    }
    out.extend(phase_predictions(s, &groups));
    let run_s = plan.expected_duration(s).at_most.as_secs_f64();
    for w in request_windows(s) {
        out.push(api_requests(&groups, w));
    }
    out.push(function_calls(&groups, run_s));
    out.push(xr_time_to_ready(&groups));
    out.push(breaker_opens(&groups, held(s)));
    out.push(stale_xrs(&groups));
    out
}

/// The time the run surely lasts: its holds' durations (other phases may end at once).
fn held(s: &Scenario) -> f64 {
    s.phases
        .iter()
        .map(|p| match &p.action {
            Action::Hold { duration } => duration.as_secs_f64(),
            _ => 0.0,
        })
        .sum()
}

/// `core/stale-xrs`: XRs the creation leaves stale until the next resync, at most.
fn stale_xrs(groups: &[CoreGroupPlan]) -> Prediction {
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
fn api_requests(groups: &[CoreGroupPlan], w: f64) -> Prediction {
    let creation: f64 = groups
        .iter()
        .map(|g| g.prediction.creation_requests.value)
        .sum();
    let steady: f64 = groups
        .iter()
        .map(|g| model::load::steady_requests_bound(&g.shape, w).value)
        .sum();
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
fn function_calls(groups: &[CoreGroupPlan], run_s: f64) -> Prediction {
    let mut creation = 0.0;
    let mut steady = 0.0;
    for g in groups {
        creation += g
            .prediction
            .creation_function_calls
            .iter()
            .map(|p| p.value)
            .sum::<f64>();
        steady += g
            .shape
            .functions()
            .iter()
            .map(|f| model::load::function_calls_bound(&g.shape, f, run_s).value)
            .sum::<f64>();
    }
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
fn xr_time_to_ready(groups: &[CoreGroupPlan]) -> Prediction {
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
fn breaker_opens(groups: &[CoreGroupPlan], held: f64) -> Prediction {
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
    .formula("Σ_groups X·([c + 2U_min > B_cb + R_cb·Δt] + max([2·n_kind > B_cb], reopens)·[holds ≥ 1.1·S_sync])")
    .input("X_may", may)
    .input("holds", held)
    .meaning(Meaning::LowerBound)
    .source("[P] §12.5, Lemma 6")
    .checks(&["breakerOpens"])
    .note(format!(
        "a breakerOpens of 0 is assured only when no circuit may open; with circuits sure to open, breakerOpens checks at least these opened (the storm); {DEFAULTS}"
    ))
}

/// The windows of the scenario's `coreApiRequests` checks restricted to phase `phase`.
fn phase_windows(s: &Scenario, phase: usize) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    for a in &s.assertions {
        if let (Check::Core(CoreCheck::ApiRequests { window, .. }), Some(p)) = (&a.check, a.phase)
            && p == phase
        {
            let w = window.as_secs_f64();
            if !out.contains(&w) {
                out.push(w);
            }
        }
    }
    out
}

fn in_phase(mut p: Prediction, phase: &str, group: &str) -> Prediction {
    p.id = format!(
        "core/phase/{phase}/{group}/{}",
        p.id.strip_prefix("core/").unwrap_or(&p.id)
    );
    p.what = format!("{phase}, {group}: {}", p.what);
    p.phase(Some(phase))
}

/// §12.8 for core's own phases: each XR group's share of a compositionUpdate's fan-out or a
/// functionFault's calls (ids `core/phase/<phase>/<group>/…`), and the bounds the checks
/// restricted to the phase take (`core/phase/<phase>/api-requests/<W>s`,
/// `core/phase/<phase>/function-calls`).
fn phase_predictions(s: &Scenario, groups: &[CoreGroupPlan]) -> Vec<Prediction> {
    let mut out = Vec::new();
    for (i, phase) in s.phases.iter().enumerate() {
        let name = phase.name.as_str();
        let timeout = phase.timeout.as_secs_f64();
        // The other groups poll as in steady state meanwhile.
        let acted = |g: &CoreGroupPlan| {
            phase
                .composites
                .iter()
                .any(|&x| s.composites.groups[x].name == g.group)
        };
        match &phase.action {
            Action::CompositionUpdate(edit) => {
                let (Some((changed, created)), Some(after)) =
                    (edit.changed_per_xr, edit.shape.resources_per_xr())
                else {
                    continue;
                };
                let e = model::phases::Edit::new(
                    f64::from(changed),
                    f64::from(created),
                    f64::from(after),
                );
                let (mut requests, mut calls) = (0.0, 0.0);
                for g in groups {
                    if acted(g) {
                        let p = model::phases::revision_edit(&g.shape, &e);
                        requests += p.requests.value;
                        calls += p.function_calls.iter().map(|c| c.value).sum::<f64>();
                        out.extend(p.all().map(|x| in_phase(x.clone(), name, &g.group)));
                    }
                }
                for w in phase_windows(s, i) {
                    let steady: f64 = groups
                        .iter()
                        .map(|g| model::load::steady_requests_bound(&g.shape, w).value)
                        .sum();
                    out.push(
                        Prediction::new(
                            format!("core/phase/{name}/api-requests/{w}s"),
                            format!("core's API requests in any {w}s window of {name}"),
                            requests + steady,
                            "requests",
                        )
                        .formula(
                            "Σ_groups X·R_rev·(2·N_x′ + 4 + S) + the steady bound in W (§12.1)",
                        )
                        .input("fan-out", requests)
                        .input("steady", steady)
                        .input("W", w)
                        .meaning(Meaning::UpperBound)
                        .source("[D] §12.1, §12.8")
                        .checks(&["coreApiRequests"])
                        .phase(Some(name))
                        .note(format!("the whole fan-out in one window; {DEFAULTS}")),
                    );
                }
                let steady: f64 = groups
                    .iter()
                    .flat_map(|g| {
                        g.shape
                            .functions()
                            .into_iter()
                            .map(|f| model::load::function_calls_bound(&g.shape, &f, timeout).value)
                    })
                    .sum();
                out.push(
                    Prediction::new(
                        format!("core/phase/{name}/function-calls"),
                        format!("calls of every function in {name}"),
                        calls + steady,
                        "calls",
                    )
                    .formula(
                        "Σ_groups X·R_rev·Σk_f + the steady bound over the phase's timeout (§12.2)",
                    )
                    .input("fan-out", calls)
                    .input("steady", steady)
                    .input("T", timeout)
                    .meaning(Meaning::UpperBound)
                    .source("[D] §12.2, §12.8")
                    .checks(&["functionCalls"])
                    .phase(Some(name))
                    .note(DEFAULTS),
                );
            }
            Action::FunctionFault {
                function,
                fault,
                duration: Some(d),
            } => {
                let f = model::phases::Fault {
                    function: function.clone(),
                    delay: fault.delay.as_secs_f64(),
                    errors: fault.error_percent / 100.0,
                    down: fault.down,
                    ttl: fault.ttl.map(|t| t.as_secs_f64()),
                    duration: d.as_secs_f64(),
                };
                let mut bound = 0.0;
                for g in groups {
                    if acted(g) {
                        let p = model::phases::function_fault(&g.shape, &f);
                        // Every call of a reconcile the fault slows or fails: the faulted
                        // function's bound times the pipeline's calls per its own.
                        let k_f = g.shape.calls_of(function);
                        let per = if k_f > 0.0 {
                            g.shape.calls_per_reconcile() / k_f
                        } else {
                            0.0
                        };
                        bound += p.calls_bound.value * per.max(1.0);
                        out.extend(p.all().map(|x| in_phase(x.clone(), name, &g.group)));
                    } else {
                        bound += g
                            .shape
                            .functions()
                            .iter()
                            .map(|fun| {
                                model::load::function_calls_bound(&g.shape, fun, f.duration).value
                            })
                            .sum::<f64>();
                    }
                }
                out.push(
                    Prediction::new(
                        format!("core/phase/{name}/function-calls"),
                        format!("calls of every function in {name}"),
                        bound,
                        "calls",
                    )
                    .formula("Σ_groups calling it: the fault's bound·Σk_i/k_f; the others' steady bound over D")
                    .input("D", f.duration)
                    .meaning(Meaning::UpperBound)
                    .source("[D] §12.8")
                    .checks(&["functionCalls"])
                    .phase(Some(name))
                    .note(DEFAULTS),
                );
            }
            Action::Hold { duration } => {
                let d = duration.as_secs_f64();
                let steady: f64 = groups
                    .iter()
                    .flat_map(|g| {
                        g.shape
                            .functions()
                            .into_iter()
                            .map(|f| model::load::function_calls_bound(&g.shape, &f, d).value)
                    })
                    .sum();
                out.push(
                    Prediction::new(
                        format!("core/phase/{name}/function-calls"),
                        format!("calls of every function in {name}"),
                        steady,
                        "calls",
                    )
                    .formula(
                        "Σ_groups Σ_f X·k_f·(⌊D/(0.9·TTL + L)⌋ + 1 + 2·i·(⌊D/(0.9·S_sync)⌋ + 1))",
                    )
                    .input("D", d)
                    .meaning(Meaning::UpperBound)
                    .source("[D] §12.2")
                    .checks(&["functionCalls"])
                    .phase(Some(name))
                    .note(format!(
                        "the steady state: nothing changes in the hold; {DEFAULTS}"
                    )),
                );
            }
            _ => {}
        }
    }
    out
}
