//! Backlog phases (create, resync, update, delete, restart): the backlog each makes and its
//! drain, first second, physical limit and time to Ready.

use limiter::crossplane::RateLimitModel;

use super::accounts::{quota_needs, quota_predictions, simulated_creation};
use super::scope::per_controller;
use crate::predict::backlog::{self, Backlog};
use crate::predict::bounds::Excess;
use crate::predict::formula::{Meaning, Prediction};
use crate::predict::intervals;
use crate::predict::params::Params;
use crate::predict::steady::Steady;
use crate::scenario::{Action, GroupFault, Phase, Scenario};

/// A phase's backlog. Create and delete waves take as many reconciles per resource as the
/// slowest of their resources to provision or delete.
pub(super) fn backlog_of(
    s: &Scenario,
    p: &Params,
    action: &Action,
    groups: &[usize],
    alive: &[bool],
) -> Option<Backlog> {
    let acted: f64 = groups.iter().map(|&g| f64::from(s.groups[g].count)).sum();
    let api = p.api;
    let one = |a_first: u32| Backlog {
        per_controller: per_controller(s, groups),
        m: 1.0,
        a_first: f64::from(a_first),
        a_next: 0.0,
        arrival_rate: action.rate(),
    };
    // Create and delete poll until the cloud finishes, each resource at its own P_i: m
    // reconciles per resource on average.
    let provisioned = |t_p: f64, a_first: u32, a_next: u32| {
        let m = if t_p > 0.0 {
            let hist = acted_intervals(s, groups);
            intervals::sum_over(&hist, |pi| {
                backlog::reconciles_per_create(p, acted, t_p, pi)
            }) / acted.max(1.0)
        } else {
            backlog::reconciles_per_create(p, acted, t_p, s.settings.poll_interval.as_secs_f64())
        };
        Backlog {
            m,
            a_next: f64::from(a_next),
            ..one(a_first)
        }
    };
    let slowest = |t: std::time::Duration| {
        groups
            .iter()
            .filter(|&&g| s.groups[g].kind.provisioned())
            .map(|_| t.as_secs_f64())
            .fold(0.0, f64::max)
    };
    match action {
        Action::Create { .. } => {
            let tp = slowest(s.cloud.provisioning.database_create);
            Some(provisioned(tp, api.create, api.observe))
        }
        Action::Resync { .. } => Some(one(api.resync)),
        Action::Update { .. } => Some(one(api.update)),
        Action::Delete { .. } => {
            let td = slowest(s.cloud.provisioning.database_delete);
            Some(provisioned(td, api.delete, api.poll))
        }
        Action::Restart => {
            let all: Vec<usize> = (0..s.groups.len()).filter(|&g| alive[g]).collect();
            Some(Backlog {
                per_controller: per_controller(s, &all),
                m: 1.0,
                a_first: f64::from(api.poll),
                a_next: 0.0,
                arrival_rate: None,
            })
        }
        _ => None,
    }
}

/// The own poll intervals of the resources of `groups`: (P_i, count), a histogram.
fn acted_intervals(s: &Scenario, groups: &[usize]) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    for &g in groups {
        let count = s.groups.get(g).map_or(0, |x| x.count);
        for (pi, n) in intervals::histogram(s, g, 0..count) {
            match out.iter_mut().find(|(x, _)| *x == pi) {
                Some((_, c)) => *c += n,
                None => out.push((pi, n)),
            }
        }
    }
    out
}

/// What a backlog phase's predictions leave for the rest of the plan.
/// A wave that locks the phases of the resources it reconciles.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Wave {
    /// How many resources it reconciled.
    pub size: f64,
    /// Its expected spread: the model's drain (s).
    pub spread: f64,
    /// The share of its reconciles in its first second: b₀/N, the burst of its profile.
    pub burst: f64,
    /// The groups it reconciled (every live group for a restart).
    pub groups: Vec<usize>,
}

pub(super) struct WaveOutcome {
    /// The `crossplane` model's excess, for resync, update and delete waves.
    pub excess: Option<Excess>,
    /// The physical drain limit.
    pub physical: Prediction,
    /// The wave, for a later hold's echo, for waves that lock phases.
    pub wave: Option<Wave>,
}

/// The predictions of a backlog phase, appended to `preds`.
#[allow(clippy::too_many_arguments)]
pub(super) fn wave_predictions(
    s: &Scenario,
    p: &Params,
    phase: &Phase,
    groups: &[usize],
    b: &Backlog,
    st: &Steady,
    mu: f64,
    preds: &mut Vec<Prediction>,
) -> WaveOutcome {
    let name = phase.name.as_str();
    let n = b.n();
    let mut excess = None;
    // A delete marks every key of the wave as a resync or an update does: each deletion's
    // watch event reaches a key the `crossplane` model may have flagged (§2.2, §7.4).
    if matches!(
        phase.action,
        Action::Resync { .. } | Action::Update { .. } | Action::Delete { .. }
    ) {
        let (e, expected) = backlog::resync_excess(p, n, st, 10.0, mu);
        preds.push(
            Prediction::new(
                format!("{name}/reconciles-first-10s"),
                "reconciles in the first 10 s of the wave",
                expected,
                "reconciles",
            )
            .formula(if p.model == RateLimitModel::Crossplane && st.saturated {
                "min(worker cap, N_fl) on the priority queue (saturated)"
            } else {
                "min(N, ⌊B + R·W⌋) + E"
            })
            .input("N", n)
            .input("N_fl", st.flagged)
            .input("E", e.e)
            .input("W", 10.0)
            .meaning(Meaning::Expected)
            .source("[D][S] §2.2, §7.4")
            .phase(Some(name)),
        );
        excess = Some(e);
    }
    let sim = match &phase.action {
        Action::Create { .. } => simulated_creation(s, p, groups, b.arrival_rate),
        _ => None,
    };
    let formula = |f: &str| match &sim {
        Some(_) => format!("max({f}, quota simulation)"),
        None => f.to_owned(),
    };
    let sim_last = sim.as_ref().map(|w| w.last_ready - p.l);
    let last = backlog::last_start(p, b).max(sim_last.unwrap_or(0.0));
    let mut drain = Prediction::new(
        format!("{name}/drain"),
        "last start of the backlog (model's drain)",
        last,
        "s",
    )
    .formula(formula(drain_formula(p)));
    if let Some(t) = sim_last {
        drain = drain.input("quota simulation", t);
    }
    if let Some(stop) = sim.as_ref().and_then(|w| w.truncated_at) {
        drain = drain.note(format!(
            "the quota simulation reached its event bound at {} s; the rest of the wave drains at its limiting rate (fluid)",
            crate::predict::fmt_num(stop)
        ));
    }
    preds.push(
        drain
            .input("N", n)
            .input("m", b.m)
            .input("R", p.r)
            .input("B", p.b)
            .input("w", p.w)
            .input("L̄", p.l)
            .input("A_tot", b.api_total())
            .input("r_h", b.arrival_rate.unwrap_or(f64::INFINITY))
            .meaning(Meaning::Expected)
            .source(if sim.is_some() {
                "[D][S] §4.2, §6.3"
            } else {
                "[D][S] §4.2"
            })
            .phase(Some(name)),
    );
    let first = backlog::first_window(p, b, 1.0);
    preds.push(
        Prediction::new(
            format!("{name}/first-second"),
            "reconcile starts in the first second",
            first,
            "reconciles",
        )
        .formula("min(N, B + R, Σ_c w(⌊1/L⌋+1), ⌊15R/a_first⌋ + W_tot), per model")
        .input("N", n)
        .input("a_first", b.a_first)
        .meaning(Meaning::Expected)
        .source("[D] §4.2, §4.4")
        .phase(Some(name)),
    );
    let needs = quota_needs(s, &phase.action, groups, b);
    let (dphys, terms) = backlog::physical_limit(p, b, &needs);
    let mut phys = Prediction::new(format!("{name}/physical-limit"), "physical drain limit D_phys", dphys, "s")
        .formula("max((N_tok − B)/R, max_c(⌈N_c·m/w⌉ − 1)·L_min, (A_tot − 10R)/(5R), max_a (C_a − b_a)/r_a, N/r_h) + L_min")
        .meaning(Meaning::LowerBound).source("[P] §4.5").phase(Some(name));
    for t in &terms {
        phys = phys.input(&t.name, t.seconds.max(0.0));
    }
    phys = phys.input("L_min", p.l_min);
    preds.push(phys.clone());
    if matches!(phase.action, Action::Create { .. }) {
        let mix = unloaded_mix(s, p, groups);
        for q in [0.5, 0.9, 0.99] {
            let tau = backlog::unloaded_quantile(&mix, q);
            let sim_q = sim.as_ref().map(|w| w.ttr_quantile(q));
            let v = backlog::ttr_quantile(p, b, q, tau).max(sim_q.unwrap_or(0.0));
            let mut pred = Prediction::new(
                format!("{name}/ttr-p{}", q * 100.0),
                format!("time to Ready, p{}", q * 100.0),
                v,
                "s",
            )
            .formula(formula(ttr_formula(p)));
            if let Some(t) = sim_q {
                pred = pred.input("quota simulation", t);
            }
            if v > tau && b.arrival_rate.is_some() {
                pred = pred.note(LOADED_NOTE);
            }
            preds.push(
                pred.input("τ_unloaded", tau)
                    .input("m", b.m)
                    .input("q", q)
                    .input("N", n)
                    .input("B", p.b)
                    .input("R", p.r)
                    .input("L̄", p.l)
                    .input("a_first", b.a_first)
                    .input("a_next", b.a_next)
                    .input("r_h", b.arrival_rate.unwrap_or(f64::INFINITY))
                    .meaning(Meaning::Expected)
                    .source(if sim.is_some() {
                        "[D][S] §5.2, §6.3"
                    } else {
                        "[D][S] §5.2"
                    })
                    .phase(Some(name)),
            );
        }
    }
    let wave = matches!(
        phase.action,
        Action::Create { .. } | Action::Restart | Action::Resync { .. }
    )
    .then(|| Wave {
        size: n,
        spread: last,
        burst: if n > 0.0 { (first / n).min(1.0) } else { 1.0 },
        groups: groups.to_vec(),
    });
    quota_predictions(s, p, name, &phase.action, groups, preds);
    WaveOutcome {
        excess,
        physical: phys,
        wave,
    }
}

/// Each resource's time to Ready without a queue in front of it (§5.1), as (τ_unloaded, how
/// many) by group and poll class of a create wave: a kind the cloud provisions for T_p
/// seconds is observed again on its own poll interval (its `crossplane.io/poll-interval`
/// annotation or the provider's) until T_p has passed; any other kind is Ready at the
/// reconcile that follows its create; each of those polls waits P_i ± j_i with its jitter.
/// A mix of synchronous and provisioned kinds thus has quantiles of both: steady-1k's p50
/// is a Bucket's or a Record's 2L̄, not a Database's next poll.
fn unloaded_mix(s: &Scenario, p: &Params, groups: &[usize]) -> Vec<(f64, f64)> {
    /// Points at which a jittered poll's wait is taken, equally likely.
    const JITTER_POINTS: u32 = 20;
    let provisioning = s.cloud.provisioning.database_create.as_secs_f64();
    let mut mix = Vec::new();
    for &g in groups {
        let group = &s.groups[g];
        let t_p = if group.kind.provisioned() {
            provisioning
        } else {
            0.0
        };
        // Faulted shares: a lasting error is never Ready (and not in the measured times);
        // a read answering 404 for d after the create is Ready at the first retry on the
        // backoff past d; a create that stays `creating` for d is a provisioning of d.
        let mut unfaulted = f64::from(group.count);
        for share in &group.faults {
            let n = f64::from(share.len());
            match &share.fault {
                GroupFault::Error { .. } => unfaulted -= n,
                GroupFault::NotFoundAfterCreate(d) => {
                    unfaulted -= n;
                    let first = backlog::first_observe(p);
                    mix.push((first + backoff_retry_after(p, d.as_secs_f64()) + p.l, n));
                }
                GroupFault::SlowCreate(d) => {
                    unfaulted -= n;
                    let poll = s.settings.poll_interval.as_secs_f64();
                    mix.push((backlog::ttr_unloaded(p, d.as_secs_f64().max(t_p), poll), n));
                }
                GroupFault::Drift { .. } => {}
            }
        }
        let keep = if group.count > 0 {
            unfaulted.max(0.0) / f64::from(group.count)
        } else {
            0.0
        };
        for (interval, count) in group.poll_intervals(&s.settings, &s.name) {
            let count = f64::from(count) * keep;
            let interval = interval.as_secs_f64();
            let j = p.jitter_of(interval);
            if t_p > 0.0 && j > 0.0 {
                // Each poll while it provisions waits P_i ± j_i, uniformly: the mix takes
                // the wait at JITTER_POINTS equally likely points of that range, so a
                // quantile reaches into the jittered tail (99 % jitter nearly doubles a
                // poll) instead of stopping at P_i.
                let share = count / f64::from(JITTER_POINTS);
                for k in 0..JITTER_POINTS {
                    let u = (f64::from(k) + 0.5) / f64::from(JITTER_POINTS);
                    let wait = (interval + j * (2.0 * u - 1.0)).max(0.0);
                    mix.push((backlog::ttr_unloaded(p, t_p, wait), share));
                }
            } else {
                mix.push((backlog::ttr_unloaded(p, t_p, interval), count));
            }
        }
    }
    mix
}

/// When the first retry on the per-item backoff (base b, cap c) comes at or after `d`
/// seconds: the retries come b, 2b, 4b, … (each at most c) after one another.
fn backoff_retry_after(p: &Params, d: f64) -> f64 {
    let (b, c) = p.backoff;
    if b <= 0.0 {
        return d;
    }
    let (mut t, mut step) = (0.0, b);
    // Bounded: the steps reach the cap within 64 doublings, then at most d/c more.
    for _ in 0..64 {
        if t >= d {
            return t;
        }
        t += step.min(c);
        step *= 2.0;
    }
    if t >= d || c <= 0.0 {
        t
    } else {
        t + ((d - t) / c).ceil() * c
    }
}

/// τ_unloaded(q) of a create phase's wave: the q-quantile of [`unloaded_mix`]; None for a
/// phase that creates nothing. What a `timeToReady` check at a quantile the plan did not
/// predict uses.
#[must_use]
pub(crate) fn unloaded_ttr(s: &Scenario, p: &Params, phase: &Phase, q: f64) -> Option<f64> {
    match &phase.action {
        Action::Create { groups, .. } => {
            Some(backlog::unloaded_quantile(&unloaded_mix(s, p, groups), q))
        }
        _ => None,
    }
}

/// Why a time to Ready above τ_unloaded(q) cannot be tighter when the harness writes the
/// wave at a rate.
const LOADED_NOTE: &str = "the loaded terms are counted from the start of the wave and each \
resource's time to Ready from its own creation: an upper estimate, since which resources \
wait for the wave's tokens and API requests, and for how long, depends on the order the \
provider serves them in; a wave written no faster than the tokens come may wait for none, \
down to τ_unloaded(q)";

fn ttr_formula(p: &Params) -> &'static str {
    match p.model {
        RateLimitModel::Crossplane | RateLimitModel::InQueue => {
            "max(τ_unloaded(q), ((m − 1 + q)·N − B)/R + L̄, (N·a_first + q·N·(m − 1)·a_next − 10R)/(5R) + L̄, q·N/r_h + τ_unloaded(q))"
        }
        RateLimitModel::ConcurrencyOnly => {
            "max(τ_unloaded(q), (q·N·a_first − 10R)/(5R) + 1 s + 2L̄, q·N/r_h + τ_unloaded(q))"
        }
        RateLimitModel::ControllerRuntime => {
            "max(τ_unloaded(q), max_c max(q·N_c·m·L̄, (q·N_c − 100)/10), q·N/r_h + τ_unloaded(q))"
        }
    }
}

fn drain_formula(p: &Params) -> &'static str {
    match p.model {
        RateLimitModel::Crossplane | RateLimitModel::InQueue => {
            "max((m·N − B)/R, max_c(⌈N_c·m/w⌉ − 1)·L̄, (A_tot − 10R)/(5R), N/r_h)"
        }
        RateLimitModel::ConcurrencyOnly => "max(max_c(⌈N_c·m/R⌉ − 1)·L̄, (A_tot − 10R)/(5R), N/r_h)",
        RateLimitModel::ControllerRuntime => "max(max_c (m·N_c − 1)·L̄, N/r_h)",
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::parse;

    #[test]
    fn steady_1k_predicts_the_median_of_its_synchronous_kinds_and_the_tail_of_its_databases() {
        let s = parse(
            include_str!("../../../../scenarios/steady-1k.yaml"),
            "steady-1k.yaml",
        )
        .expect("valid");
        let plan = crate::predict::plan(&s);
        let l = plan.phases[0].params.l;
        let p50 = plan.find("create/ttr-p50").expect("predicted");
        // 800 of 1,000 are Buckets and Records, Ready at the reconcile after their create;
        // the wave's queue is counted from its start, and the check says so.
        assert!(
            (p50.get("τ_unloaded").unwrap() - 2.0 * l).abs() < 1e-9,
            "{p50:?}"
        );
        assert!(p50.value < 60.0, "{p50:?}");
        assert_eq!(p50.note.as_deref(), Some(super::LOADED_NOTE));
        // The 200 Databases provision for 5 s and are Ready at their first poll after it,
        // which waits P ± j: the p90 is the median Database's, the p99 near P + j.
        let p = &plan.phases[0].params;
        let j = p.jitter_of(60.0);
        assert!(j > 0.0);
        let p90 = plan.find("create/ttr-p90").expect("predicted");
        let tau90 = p90.get("τ_unloaded").unwrap();
        assert!((tau90 - (60.0 + 3.0 * l)).abs() <= 0.1 * j, "{p90:?}");
        let create = &s.phases[0];
        assert_eq!(
            super::unloaded_ttr(&s, p, create, 0.75),
            p50.get("τ_unloaded")
        );
        assert_eq!(super::unloaded_ttr(&s, p, create, 0.9), Some(tau90));
        let tau99 = super::unloaded_ttr(&s, p, create, 0.99).unwrap();
        assert!(
            tau99 > 60.0 + 0.8 * j && tau99 < 60.0 + j + 3.0 * l,
            "{tau99} with j = {j}"
        );
        assert_eq!(super::unloaded_ttr(&s, p, &s.phases[1], 0.5), None);
    }
}
