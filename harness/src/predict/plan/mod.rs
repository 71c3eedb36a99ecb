//! A scenario's budget, phase by phase and account by account: which formulas apply where.
//!
//! [`plan`] walks the phases; each kind of phase has its file: [`wave`] for backlogs, [`hold`]
//! for steady holds, [`faults`] for outages and latency, [`accounts`] for cloud quotas, and
//! [`scope`] for what a phase acts on.

mod accounts;
mod duration;
mod faults;
mod hold;
mod scope;
mod wave;

use super::backlog::Backlog;
use super::bounds::{self, Excess};
use super::formula::Prediction;
use super::params::Params;
use super::steady::{self, Steady};
use crate::scenario::{Action, Phase, Scenario};
use scope::{classes, kinds, windows};

pub use duration::ExpectedDuration;

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
}

/// Computes the plan.
#[must_use]
pub fn plan(s: &Scenario) -> Plan {
    let k = kinds(s).len() as u32;
    let base = Params::new(&s.settings, k, &s.prediction);
    let mut alive = vec![false; s.groups.len()];
    let mut phases = Vec::new();
    let mut params = base.clone();
    let mut since_wave: Option<(f64, f64)> = None; // (wave size, wave spread)
    for phase in &s.phases {
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
        let pp = phase_plan(s, &params, phase, live, &mut since_wave);
        if let Action::Delete { groups, .. } = &phase.action {
            groups.iter().for_each(|&g| alive[g] = false);
        }
        phases.push(pp);
    }
    // Provider starts a run-wide window can hold: one per restart phase (rigorous, if loose
    // when restarts are far apart).
    let restarts = s
        .phases
        .iter()
        .filter(|ph| matches!(ph.action, Action::Restart))
        .count() as u32;
    let mut run = Vec::new();
    for w in windows(s) {
        run.push(bounds::reconciles(&base, w, &Excess::default()).phase(None));
        run.push(with_id(bounds::api_requests(&base, w, restarts), "run", w));
    }
    for r in &mut run {
        if r.id == "reconciles" {
            let w = r.get("W").unwrap_or(0.0);
            r.id = format!("run/reconciles/{w}s");
        }
    }
    Plan { run, phases }
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
    since_wave: &mut Option<(f64, f64)>,
) -> PhasePlan {
    let name = phase.name.as_str();
    let cls = classes(s, alive);
    let population: f64 = cls.iter().map(|c| c.count).sum();
    let st = steady::steady(p, &cls, 10.0);
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
    let acted_on = backlog.as_ref().map_or(0.0, |(b, _)| b.n());
    if let Some((b, t_p)) = &backlog {
        let out = wave::wave_predictions(s, p, phase, &groups, (b, *t_p), &st, mu, &mut preds);
        if let Some(e) = out.excess {
            excess = e;
        }
        physical = Some(out.physical);
        if out.wave.is_some() {
            *since_wave = out.wave;
        }
    }
    match &phase.action {
        Action::Hold { duration } => hold::hold_predictions(
            s,
            p,
            name,
            duration.as_secs_f64(),
            &cls,
            &st,
            since_wave.take(),
            &mut preds,
        ),
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
    for w in windows(s) {
        preds.push(with_id(bounds::cloud_calls(p, w, &excess), name, w).phase(Some(name)));
        let starts = u32::from(matches!(phase.action, Action::Restart));
        preds.push(with_id(bounds::api_requests(p, w, starts), name, w).phase(Some(name)));
    }
    PhasePlan {
        name: name.to_owned(),
        population: population as u64,
        acted_on: acted_on as u64,
        params: p.clone(),
        excess,
        steady: st,
        backlog: backlog.map(|(b, _)| b),
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
            .find(|p| p.id == id)
    }

    /// Every prediction, run-wide first, then phase by phase.
    pub fn all(&self) -> impl Iterator<Item = &Prediction> {
        self.run
            .iter()
            .chain(self.phases.iter().flat_map(|p| &p.predictions))
    }
}
