//! Crossplane core's part of a composite scenario's plan (budget.md §12): for each XR group
//! the [`CoreShape`] its Composition and core's settings make, everything
//! [`crate::predict::core::predict`] says of it under `core/<group>/…`, and the bounds the
//! core checks take when the scenario gives no limit (`core/api-requests/<W>s`,
//! `core/function-calls`, `core/xr-time-to-ready`, `core/breaker-opens`).
//!
//! What a scenario does not say is read from §12's documented defaults, named in each
//! prediction's inputs and notes: the provider's writes per composed resource (u = 6, ours),
//! the changes an XR's status shows (h = 2), a shortest creation span Δt = 0 (the breaker's
//! worst case; the longest is the XR's time to Ready), no Secrets, zero function and apply times; τ_MR is the provider's p99 time to
//! Ready (§5.2) of every composed resource the creating phase makes, all at once.

mod phases;
mod run;

use super::Plan;
use crate::predict::backlog::{self, Backlog};
use crate::predict::core::{self as model, BreakerShape, CloseMode, CorePrediction, CoreShape};
use crate::predict::formula::Prediction;
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

const DEFAULTS: &str = "not in the scenario, §12's defaults: u = 6 (our provider's writes per composed resource), h = 2, Δt = 0 (Δt_max: the XR's time to Ready), S = 0, t_fn = t_watch = 0; t_apply = core.requestLatency";

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
    out.extend(phases::predictions(s, &groups));
    let run_s = plan.expected_duration(s).at_most.as_secs_f64();
    for w in request_windows(s, None) {
        out.push(run::api_requests(&groups, w));
    }
    out.push(run::function_calls(&groups, run_s));
    out.push(run::xr_time_to_ready(&groups));
    out.push(run::breaker_opens(&groups, run::held(s)));
    out.push(run::stale_xrs(&groups));
    out
}

/// The windows of the scenario's `coreApiRequests` checks, in seconds: every one, or those
/// restricted to phase `phase`.
fn request_windows(s: &Scenario, phase: Option<usize>) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    for a in &s.assertions {
        if let Check::Core(CoreCheck::ApiRequests { window, .. }) = &a.check
            && phase.is_none_or(|p| a.phase == Some(p))
        {
            let w = window.as_secs_f64();
            if !out.contains(&w) {
                out.push(w);
            }
        }
    }
    out
}

/// Core's steady API requests in any window of `w` seconds, at most, over the groups.
fn steady_requests(groups: &[CoreGroupPlan], w: f64) -> f64 {
    groups
        .iter()
        .map(|g| model::load::steady_requests_bound(&g.shape, w).value)
        .sum()
}

/// Every function's steady calls over `t` seconds, at most, over the groups.
fn steady_function_calls<'a>(groups: impl IntoIterator<Item = &'a CoreGroupPlan>, t: f64) -> f64 {
    groups
        .into_iter()
        .flat_map(|g| {
            g.shape
                .functions()
                .into_iter()
                .map(|f| model::load::function_calls_bound(&g.shape, &f, t).value)
        })
        .sum()
}
