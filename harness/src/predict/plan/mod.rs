//! A scenario's budget, phase by phase and account by account: which formulas apply where.
//!
//! [`plan`] walks the phases; each kind of phase has its file: [`wave`] for backlogs, [`hold`]
//! for steady holds, [`faults`] for outages and latency, [`accounts`] for cloud quotas,
//! [`scope`] for what a phase acts on, [`coverage`] for the reasons a hold leaves the
//! formulas, [`coupled`] for the simulated coupled regime and UNMODELED for the rest;
//! [`composite`] for Crossplane core's part of a composite scenario.

mod accounts;
pub mod composite;
mod coupled;
mod coverage;
mod duration;
mod faults;
mod hold;
mod operations;
mod scope;

pub(crate) use scope::windows;
mod wave;

use super::backlog::Backlog;
use super::bounds::{self, Excess};
use super::error_paths;
use super::formula::{Meaning, Prediction};
use super::params::Params;
use super::steady::{self, Steady};
use crate::scenario::{Action, Phase, Scenario};
use scope::{calls_in_use, classes, kinds, scopes_in_use};

pub use duration::ExpectedDuration;
pub(crate) use wave::unloaded_ttr;

/// What the harness predicts for one phase.
#[derive(Clone, Debug)]
pub struct PhasePlan {
    /// Phase name.
    pub name: String,
    /// Resources that exist during the phase.
    pub population: u64,
    /// Resources the phase acts on (its backlog), 0 for hold/outage/latency.
    pub acted_on: u64,
    /// The model's parameters in this phase (latency phases change L).
    pub params: Params,
    /// The `crossplane` model's predicted excess for this phase.
    pub excess: Excess,
    /// The steady state of the population.
    pub steady: Steady,
    /// The backlog, for phases that make one.
    pub backlog: Option<Backlog>,
    /// Physical drain limit and its terms, for backlog phases.
    pub physical: Option<Prediction>,
    /// Every prediction of the phase, in report order.
    pub predictions: Vec<Prediction>,
}

/// A scenario's budget.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Run-wide predictions (hard bounds that hold in every phase).
    pub run: Vec<Prediction>,
    /// Per phase.
    pub phases: Vec<PhasePlan>,
    /// Crossplane core's, for a composite scenario (budget.md §12): each XR group's under
    /// `core/<group>/…`, and the core checks' bounds.
    pub core: Vec<Prediction>,
}

/// Computes the plan.
#[must_use]
pub fn plan(s: &Scenario) -> Plan {
    let k = kinds(s).len() as u32;
    let all = vec![true; s.groups.len()];
    let mut base = Params::new(&s.settings, k, scopes_in_use(s, &all), &s.prediction);
    if let Some(profile) = &s.profile {
        base.client_limiters.clone_from(&profile.client_limiters);
    }
    (base.c_max, base.c_poll) = calls_in_use(s, &all);
    if s.retries_possible() {
        base.attempts = f64::from(s.prediction.sdk_attempts.max(1));
    }
    let mut alive = vec![false; s.groups.len()];
    let mut phases = Vec::new();
    let mut params = base.clone();
    let mut since_wave: Option<wave::Wave> = None;
    let mut last_wave: Option<wave::Wave> = None;
    let changes_faults = s.changes_faults();
    for (index, phase) in s.phases.iter().enumerate() {
        let pre_alive = alive.clone();
        if let Action::Create { groups, .. } = &phase.action {
            groups.iter().for_each(|&g| alive[g] = true);
        }
        if let Action::CloudLatency { latency, .. } = &phase.action {
            let extra = latency.read.map(|l| l.mean().as_secs_f64()).unwrap_or(0.0)
                - s.cloud
                    .latency
                    .read
                    .map(|l| l.mean().as_secs_f64())
                    .unwrap_or(0.0);
            params.l = (base.l + extra).max(0.0);
            params.l_max = (base.l_max + extra).max(params.l);
            params.l_min = (base.l_min + extra.min(0.0)).max(0.0);
        }
        let live = if matches!(phase.action, Action::Delete { .. }) {
            &pre_alive
        } else {
            &alive
        };
        // With scoped buckets, the phase's resources draw on the buckets of their scopes.
        let mut phase_params = if s.settings.scoped_buckets {
            params.clone().with_scopes(scopes_in_use(s, live))
        } else {
            params.clone()
        };
        if live.iter().any(|l| *l) {
            (phase_params.c_max, phase_params.c_poll) = calls_in_use(s, live);
        }
        // A cloudFault phase changes which resources fail from then on.
        let during = changes_faults.then(|| s.during(index));
        // Without jitter the phases a wave locked never dephase: every later hold replays
        // them, not only the first one after the wave (§3.6).
        if matches!(phase.action, Action::Hold { .. })
            && since_wave.is_none()
            && phase_params.jitter_of(s.settings.poll_interval.as_secs_f64()) <= 0.0
        {
            since_wave.clone_from(&last_wave);
        }
        let pp = phase_plan(
            during.as_ref().unwrap_or(s),
            &phase_params,
            phase,
            live,
            &mut since_wave,
        );
        if let Some(w) = &since_wave {
            last_wave = Some(w.clone());
        }
        // A cloud outage or fault wave puts the resources it fails on the backoff, whose
        // schedule has no jitter and starts at each one's next poll: they come back in the
        // order and with the spacing they failed in, so the phases the last wave locked
        // echo again in the hold after it, at least as tight as before, with the bucket's
        // drain when more come back than B + R pass (§3.6).
        if matches!(
            phase.action,
            Action::CloudOutage { .. } | Action::CloudFault { .. }
        ) && since_wave.is_none()
            && let Some(w) = &last_wave
        {
            let n = w.size;
            let drain = if phase_params.has_bucket() && n > phase_params.b {
                (n - phase_params.b) / phase_params.r
            } else {
                0.0
            };
            since_wave = Some(wave::Wave {
                spread: w.spread.max(drain),
                ..w.clone()
            });
        }
        if let Action::Delete { groups, .. } = &phase.action {
            groups.iter().for_each(|&g| alive[g] = false);
        }
        phases.push(pp);
    }
    // Provider starts a run-wide window can hold: one per restart phase and per kill
    // (rigorous, if loose when restarts are far apart).
    let restarts = s
        .phases
        .iter()
        .filter(|ph| matches!(ph.action, Action::Restart))
        .count() as u32
        + s.total_kills();
    let mut run = Vec::new();
    let selectors = operations::selectors(s);
    for w in windows(s) {
        run.push(bounds::reconciles(&base, w, &Excess::default()).phase(None));
        run.push(with_id(bounds::api_requests(&base, w, restarts), "run", w));
        // Services in every window; operations (many) in the 10 s one, and where asserted.
        for sel in selectors
            .iter()
            .filter(|sel| !sel.contains(':') || w == 10.0)
        {
            if let Some(c) = operations::c_of(s, &all, sel) {
                let b = operations::bound(&base, w, &Excess::default(), sel, c);
                run.push(with_id(b, "run", w));
            }
        }
    }
    for r in &mut run {
        if r.id == "reconciles" {
            let w = r.get("W").unwrap_or(0.0);
            r.id = format!("run/reconciles/{w}s");
        }
    }
    if s.settings.scoped_buckets {
        run.insert(0, global_budget(&base));
    }
    let mut plan = Plan {
        run,
        phases,
        core: Vec::new(),
    };
    plan.core = composite::predictions(s, &plan);
    plan
}

/// The global budget a provider with one bucket per scope has over the scenario's kinds
/// (budget.md §0 "Scoped buckets").
fn global_budget(p: &Params) -> Prediction {
    Prediction::new(
        "run/global-budget",
        "global reconcile budget over the scopes in use",
        p.r,
        "/s",
    )
    .formula("R_g = σ·R per second, burst B = 10·σ·R (one bucket per scope)")
    .input("σ", f64::from(p.scopes))
    .input("R", p.r_flag)
    .input("B", p.b)
    .meaning(Meaning::UpperBound)
    .source("[P] §2.7")
    .note("every bucket formula of this plan reads R as R_g and B as 10·σ·R; the API client's 5R and 10R keep the flag's R")
}

/// The (operation, window) pairs of the `operationCalls` assertions.
fn asserted_operations(s: &Scenario) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for a in &s.assertions {
        if let crate::scenario::Check::OperationCalls {
            operation, window, ..
        } = &a.check
        {
            let pair = (operation.clone(), window.as_secs_f64());
            if !out.contains(&pair) {
                out.push(pair);
            }
        }
    }
    out
}

/// The kills that fall in the phase named `name`.
fn kills_in(s: &Scenario, name: &str) -> u32 {
    s.phase_index(name)
        .map_or(0, |i| s.kills_during(i).iter().map(|(_, n, _)| n).sum())
}

fn with_id(mut p: Prediction, scope: &str, w: f64) -> Prediction {
    p.id = format!("{scope}/{}/{w}s", p.id);
    p
}

fn phase_plan(
    s: &Scenario,
    p: &Params,
    phase: &Phase,
    alive: &[bool],
    since_wave: &mut Option<wave::Wave>,
) -> PhasePlan {
    let name = phase.name.as_str();
    let cls = classes(s, alive, &[]);
    let population: f64 = cls.iter().map(|c| c.count).sum();
    // In a hold, the resources on the failure backoff are not polled, and what they take
    // from the bucket is not the healthy ones' (§9.2, §9.6).
    let hold = matches!(phase.action, Action::Hold { .. });
    let failing = hold.then(|| error_paths::window_excess(s, p, alive, 10.0));
    let (poll_cls, healthy_p) = match &failing {
        Some(f) if !f.off_poll.is_empty() => {
            let mut h = p.clone();
            if p.has_bucket() && !f.takes_bucket {
                h.r = (p.r - f.failing_rate).max(1e-9);
            }
            (classes(s, alive, &f.off_poll), h)
        }
        _ => (cls.clone(), p.clone()),
    };
    let st = steady::steady(&healthy_p, &poll_cls, 10.0);
    let mu = if st.rate > 0.0 {
        population / st.demand.max(1e-12)
    } else {
        f64::INFINITY
    };
    let mut preds = Vec::new();
    let mut excess = Excess::default();
    let mut physical = None;
    let groups = phase
        .action
        .groups()
        .map(<[usize]>::to_vec)
        .unwrap_or_default();
    let backlog = wave::backlog_of(s, p, &phase.action, &groups, alive);
    let acted_on = backlog.as_ref().map_or(0.0, Backlog::n);
    if let Some(b) = &backlog {
        let out = wave::wave_predictions(s, p, phase, &groups, b, &st, mu, &mut preds);
        if let Some(e) = out.excess {
            excess = e;
        }
        physical = Some(out.physical);
        if let Some(mut w) = out.wave {
            if w.groups.is_empty() {
                // A restart reconciles every live resource.
                w.groups = (0..alive.len()).filter(|&g| alive[g]).collect();
            }
            *since_wave = Some(w);
        }
    }
    if let Action::Hold { .. } = &phase.action {
        let faulted: f64 = error_paths::faulted_shares(s, p, alive)
            .iter()
            .map(|f| f.n)
            .sum();
        error_paths::predictions(
            s,
            p,
            name,
            alive,
            (population - faulted).max(0.0),
            &mut preds,
        );
    }
    match &phase.action {
        Action::Hold { duration } => {
            // The wave's resources that are still live and polled, by poll class.
            let echo = since_wave.take().map(|w| {
                let mut on = vec![false; alive.len()];
                w.groups
                    .iter()
                    .filter(|&&g| alive.get(g).copied().unwrap_or(false))
                    .for_each(|&g| on[g] = true);
                let off = failing.as_ref().map_or(&[][..], |f| &f.off_poll[..]);
                (w, classes(s, &on, off))
            });
            hold::hold_predictions(
                s,
                p,
                alive,
                name,
                duration.as_secs_f64(),
                &poll_cls,
                &st,
                echo,
                &mut preds,
            );
            let t = duration.as_secs_f64();
            let reasons = coverage::coupled_reasons(
                p,
                name,
                t,
                s.prediction.alpha,
                &st,
                failing.as_ref(),
                &preds,
            );
            if !reasons.is_empty() {
                let ws = windows(s);
                match crate::predict::coupled::hold(s, p, alive, t, &coupled::sim_windows(s, &ws)) {
                    Some(out) => coupled::apply(
                        s,
                        p,
                        alive,
                        (name, t, s.prediction.alpha),
                        &reasons,
                        &ws,
                        &out,
                        &mut preds,
                    ),
                    None => coverage::unmodeled(
                        name,
                        reasons,
                        "the simulation of §9.7 models the crossplane model with errors on the backoff only",
                        &mut preds,
                    ),
                }
            }
        }
        Action::CloudOutage { duration, .. } => {
            faults::outage_predictions(p, name, duration.as_secs_f64(), population, &mut preds)
        }
        Action::CloudLatency { .. } => {
            if let Some(e) = faults::latency_excess(p, phase) {
                excess = e;
            }
        }
        _ => {}
    }
    for (sel, w) in asserted_operations(s) {
        if let Some(c) = operations::c_of(s, alive, &sel) {
            let b = operations::bound(p, w, &excess, &sel, c);
            preds.push(with_id(b, name, w).phase(Some(name)));
        }
    }
    for w in windows(s) {
        preds.push(with_id(bounds::cloud_calls(p, w, &excess), name, w).phase(Some(name)));
        let starts = u32::from(matches!(phase.action, Action::Restart)) + kills_in(s, name);
        preds.push(with_id(bounds::api_requests(p, w, starts), name, w).phase(Some(name)));
    }
    PhasePlan {
        name: name.to_owned(),
        population: population as u64,
        acted_on: acted_on as u64,
        params: p.clone(),
        excess,
        steady: st,
        backlog,
        physical,
        predictions: preds,
    }
}

impl Plan {
    /// A prediction by id.
    #[must_use]
    pub fn find(&self, id: &str) -> Option<&Prediction> {
        self.run
            .iter()
            .chain(self.phases.iter().flat_map(|p| &p.predictions))
            .chain(&self.core)
            .find(|p| p.id == id)
    }

    /// The parameters of `phase`, or of the first phase without one.
    #[must_use]
    pub fn params_of(&self, phase: Option<&str>) -> Option<&Params> {
        match phase {
            Some(p) => self.phases.iter().find(|x| x.name == p).map(|x| &x.params),
            None => self.phases.first().map(|x| &x.params),
        }
    }

    /// The most calls one resource may make in windows of `w` seconds of `phase` (of every
    /// hold without one), by its own interval (§9.4): the healthy and failing limits under
    /// the phase's parameters, and the coupled regime's per-resource limit of each class
    /// (§9.7) this plan predicted, the hold's or the largest of every hold's.
    #[must_use]
    pub fn resource_limits(
        &self,
        s: &Scenario,
        phase: Option<&str>,
        w: f64,
    ) -> error_paths::ResourceLimits<'_> {
        let suffix = format!("/per-resource/{w}s");
        let mut coupled: std::collections::BTreeMap<String, f64> = Default::default();
        for p in self.all() {
            let Some((at, rest)) = p.id.split_once("/coupled/") else {
                continue;
            };
            if phase.is_some_and(|ph| ph != at) {
                continue;
            }
            if let Some(label) = rest.strip_suffix(&suffix) {
                let v = coupled.entry(label.to_owned()).or_insert(0.0);
                *v = v.max(p.value);
            }
        }
        error_paths::ResourceLimits::new(s, self.params_of(phase), phase, w, coupled)
    }

    /// Every prediction, run-wide first, then phase by phase, then core's.
    pub fn all(&self) -> impl Iterator<Item = &Prediction> {
        self.run
            .iter()
            .chain(self.phases.iter().flat_map(|p| &p.predictions))
            .chain(&self.core)
    }
}

#[cfg(test)]
mod tests;
