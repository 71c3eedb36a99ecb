//! Error paths and hot loops (docs/budget.md §9): what a share of resources with a lasting
//! fault, drift or an observe-only absent cloud resource costs, how much of the global
//! budget it takes from the healthy resources, and how far their poll period stretches.

use std::borrow::Cow;
use std::collections::BTreeMap;

use limiter::crossplane::{ErrorRequeue, ObserveOnlyAbsent};

use super::formula::{Prediction, fmt_num};
use super::intervals;
use super::params::Params;
use crate::scenario::{GroupFault, Scenario};

const HOUR: f64 = 3600.0;

/// Attempts of a resource failing from time 0 on the per-item backoff (base `b`, cap `m`)
/// that start in `[0, t]`: the schedule 0, b, 3b, 7b, … (t_k = b·(2^k − 1)) while the delay
/// b·2^(k−1) is below the cap, then one every m (§9.1).
#[must_use]
pub fn backoff_attempts(t: f64, b: f64, m: f64) -> f64 {
    if t.is_nan() || t < 0.0 {
        return 0.0;
    }
    if !t.is_finite() {
        return t;
    }
    // A base of 0 would never reach the cap: the limiter's first delay is at least 1 ns.
    let mut at = 0.0;
    let mut delay = b.max(1e-9);
    let mut n = 0.0;
    while at <= t {
        n += 1.0;
        if delay >= m {
            return n + ((t - at) / m).floor();
        }
        at += delay;
        delay *= 2.0;
    }
    n
}

/// Cloud calls of one failed attempt: Observe, plus the Create that fails for a conflict
/// or a validation error (the resource is absent, so every attempt tries to create it).
#[must_use]
pub fn calls_per_attempt(fault: &GroupFault) -> f64 {
    match fault {
        GroupFault::Error { error, .. } => match error {
            mock_cloud::LastingError::AccessDenied => 1.0,
            mock_cloud::LastingError::Conflict | mock_cloud::LastingError::Validation => 2.0,
        },
        _ => 1.0,
    }
}

/// One share of resources on an error path or a drift loop, as the plan sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultedShare {
    /// `group/label`.
    pub id: String,
    /// The group's index in the scenario.
    pub group: usize,
    /// Resources in the share.
    pub n: f64,
    /// Cloud calls per reconcile.
    pub calls_per_reconcile: f64,
    /// Reconciles per resource-hour in steady state (after the ramp).
    pub reconciles_per_hour: f64,
    /// Reconciles per resource in the first hour of failing (with the ramp).
    pub first_hour_reconciles: f64,
    /// On the failure backoff (error paths) rather than the poll (drift, observe-only).
    pub backoff: bool,
    /// The share's own poll intervals: (P_i in seconds, resources), ascending.
    pub intervals: Vec<(f64, f64)>,
}

impl FaultedShare {
    /// Calls per resource-hour in steady state.
    #[must_use]
    pub fn calls_per_hour(&self) -> f64 {
        self.calls_per_reconcile * self.reconciles_per_hour
    }
}

/// Every faulted share of the groups `alive` marks, with its cost per resource (§9.1–§9.3).
/// `p_eff` is the healthy resources' effective poll period.
#[must_use]
pub fn faulted_shares(s: &Scenario, p: &Params, alive: &[bool]) -> Vec<FaultedShare> {
    let (b, m) = p.backoff;
    let ramp = backoff_attempts(HOUR, b, m);
    // A share paced by the poll reconciles once per P_i: 3600/P_i per resource-hour, and
    // 3600/P_i + 1 in its first, averaged over the share's own intervals.
    let paced = |hist: &[(f64, f64)], n: f64| {
        let per_hour = intervals::sum_over(hist, |pi| HOUR / pi.max(1e-3)) / n.max(1.0);
        (per_hour, per_hour + 1.0)
    };
    let mut out = Vec::new();
    for (g, group) in s.groups.iter().enumerate() {
        if !alive.get(g).copied().unwrap_or(false) {
            continue;
        }
        if group.observe_only() {
            let backoff = s.settings.observe_only_absent == ObserveOnlyAbsent::Backoff;
            let hist = intervals::histogram(s, g, 0..group.count);
            let n = f64::from(group.count);
            let (per_hour, first) = paced(&hist, n);
            out.push(FaultedShare {
                id: format!("{}/observe-only-absent", group.name),
                group: g,
                n,
                calls_per_reconcile: 1.0,
                reconciles_per_hour: if backoff { HOUR / m } else { per_hour },
                first_hour_reconciles: if backoff { ramp } else { first },
                backoff,
                intervals: hist,
            });
            continue;
        }
        for share in &group.faults {
            let id = format!("{}/{}", group.name, share.fault.label());
            let n = f64::from(share.len());
            let hist = intervals::histogram(s, g, share.start..share.end);
            match &share.fault {
                GroupFault::Error { .. } => out.push(FaultedShare {
                    id,
                    group: g,
                    n,
                    calls_per_reconcile: calls_per_attempt(&share.fault),
                    reconciles_per_hour: HOUR / m,
                    first_hour_reconciles: ramp,
                    backoff: true,
                    intervals: hist,
                }),
                GroupFault::Drift { .. } => {
                    let (per_hour, first) = paced(&hist, n);
                    out.push(FaultedShare {
                        id,
                        group: g,
                        n,
                        calls_per_reconcile: 2.0,
                        reconciles_per_hour: per_hour,
                        first_hour_reconciles: first,
                        backoff: false,
                        intervals: hist,
                    });
                }
                GroupFault::NotFoundAfterCreate(_) | GroupFault::SlowCreate(_) => {}
            }
        }
    }
    out
}

/// The poll classes of the healthy resources the groups `alive` marks: each group's own
/// intervals less its faulted shares' (§9.2).
fn healthy_intervals(s: &Scenario, alive: &[bool], shares: &[FaultedShare]) -> Vec<(f64, f64)> {
    let mut by: Vec<(f64, f64)> = Vec::new();
    let mut add = |p: f64, n: f64| match by.iter_mut().find(|(x, _)| *x == p) {
        Some((_, c)) => *c += n,
        None => by.push((p, n)),
    };
    for (g, group) in s.groups.iter().enumerate() {
        if !alive.get(g).copied().unwrap_or(false) {
            continue;
        }
        for (p, n) in intervals::histogram(s, g, 0..group.count) {
            add(p, n);
        }
        for sh in shares.iter().filter(|sh| sh.group == g) {
            for &(p, n) in &sh.intervals {
                add(p, -n);
            }
        }
    }
    by.retain(|(_, n)| *n > 0.0);
    by
}

/// V ≥ 0 with Σ n_i/(P_i + V) = `rate` (0 when the classes ask for no more): the wait the
/// healthy resources share when what the faulted shares leave of the bucket binds (§9.2).
fn shared_wait(hist: &[(f64, f64)], rate: f64) -> f64 {
    let demand = |v: f64| intervals::sum_over(hist, |pi| 1.0 / (pi + v).max(1e-9));
    if demand(0.0) <= rate {
        return 0.0;
    }
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..200 {
        if demand(hi) <= rate {
            break;
        }
        hi *= 2.0;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if demand(mid) > rate {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// The error-path predictions of a hold of `duration` seconds (§9): per faulted share, calls
/// per resource-hour (steady and first hour); the failing resources' share of the global
/// budget; the healthy resources' stretched poll period; and the per-resource window limit
/// `perResourceCalls` and `hotLoops` read.
pub fn predictions(
    s: &Scenario,
    p: &Params,
    phase: &str,
    alive: &[bool],
    healthy: f64,
    out: &mut Vec<Prediction>,
) {
    let shares = faulted_shares(s, p, alive);
    let (b, m) = p.backoff;
    let poll = s.settings.poll_interval.as_secs_f64();
    let immediate = s.settings.error_requeue == ErrorRequeue::Immediate;
    let healthy_cls = healthy_intervals(s, alive, &shares);
    let healthy_demand = intervals::sum_over(&healthy_cls, |pi| 1.0 / pi.max(1e-3));
    let mut failing_rate = 0.0;
    for sh in &shares {
        let rate = if sh.backoff && immediate {
            // The broken mode: whatever the bucket leaves, shared by the failing resources.
            let failing: f64 = shares.iter().filter(|x| x.backoff).map(|x| x.n).sum();
            ((p.r - healthy_demand).max(0.0) / failing.max(1.0)) * HOUR
        } else {
            sh.reconciles_per_hour
        };
        failing_rate += sh.n * rate / HOUR;
        let formula = if sh.backoff && immediate {
            "c_f·3600·(R − Σ_h 1/P_i)/n_f per resource-hour: requeued at once, the failing resources take what the bucket leaves"
        } else if sh.backoff {
            "c_f·3600/d_max per resource-hour at the cap; first hour c_f·A(3600) with A(t) the attempts of the ramp 0, b, 3b, 7b, … then every d_max"
        } else {
            "c_f·3600/P_i per resource-hour, averaged over the share's own intervals: one reconcile per poll, Observe + Update (drift) or Observe (observe-only)"
        };
        out.push(
            Prediction::new(
                format!("{phase}/error-paths/{}/calls-per-hour", sh.id),
                format!("cloud calls per resource-hour of {}", sh.id),
                sh.calls_per_reconcile * rate,
                "calls",
            )
            .formula(formula)
            .input("c_f", sh.calls_per_reconcile)
            .input("n_f", sh.n)
            .input("b", b)
            .input("d_max", m)
            .input("P", poll)
            .input("A(3600)", sh.first_hour_reconciles)
            .phase(Some(phase))
            .source(if sh.backoff {
                "[D][S] §9.1"
            } else {
                "[D] §9.3"
            }),
        );
    }
    if shares.is_empty() {
        return;
    }
    let share_of_budget = failing_rate / p.r;
    out.push(
        Prediction::new(
            format!("{phase}/error-paths/budget-share"),
            "share of the global reconcile budget the faulted resources take",
            share_of_budget,
            "",
        )
        .formula("Σ n_f·λ_f / R")
        .input("Σ n_f·λ_f", failing_rate)
        .input("R", p.r)
        .phase(Some(phase))
        .source("[D] §9.2"),
    );
    let left = (p.r - failing_rate).max(1e-9);
    // One interval: max(P, N_h/left). Own intervals: every healthy resource waits the same
    // V, Σ_h 1/(P_i + V) = left, and the flag's P stretches to P + V.
    let stretched = poll + shared_wait(&healthy_cls, left);
    out.push(
        Prediction::new(
            format!("{phase}/error-paths/healthy-poll-period"),
            "the healthy resources' effective poll period",
            stretched,
            "s",
        )
        .formula("P + V, V ≥ 0 the least with Σ_h 1/(P_i + V) ≤ R − Σ n_f·λ_f (one interval: max(P, N_h/(R − Σ n_f·λ_f)))")
        .input("P", poll)
        .input("N_h", healthy)
        .input("Σ_h 1/P_i", healthy_demand)
        .input("R", p.r)
        .input("Σ n_f·λ_f", failing_rate)
        .phase(Some(phase))
        .source("[A] §9.2"),
    );
}

/// What the faulted shares add to the busiest window of a hold's cloud calls (§9.6).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WindowExcess {
    /// Calls the faulted shares may make in any closed window of W beyond one call per poll
    /// of a resource polled at P: a backoff share's c_f·A(W) each (it is not polled), a drift
    /// share's Update each poll.
    pub calls: f64,
    /// The part of `calls` beyond one call per reconcile: what a bound that counts reconciles
    /// (the saturated bucket's ⌊B + R·W⌋) misses.
    pub extra_calls: f64,
    /// Resources per group on the failure backoff: out of the poll population.
    pub off_poll: Vec<(usize, f64)>,
    /// Σ n_f/d_max: reconciles per second the backoff shares take from the global budget.
    pub failing_rate: f64,
    /// Errors requeued at once (`errorRequeue: immediate`): the failing resources take all
    /// the bucket leaves, so the window is the bucket's.
    pub takes_bucket: bool,
    /// How `calls` was reached, for the prediction's formula.
    pub terms: Vec<String>,
}

/// The excess of the faulted shares alive in a hold over windows of `w` seconds (§9.6).
#[must_use]
pub fn window_excess(s: &Scenario, p: &Params, alive: &[bool], w: f64) -> WindowExcess {
    let (b, m) = p.backoff;
    // The most polls one resource at P_i makes in W: ⌊W/(P_i − j_i)⌋ + 1.
    let polls = |pi: f64| (w / (pi - p.jitter_of(pi)).max(1e-3)).floor() + 1.0;
    let attempts = backoff_attempts(w, b, m);
    let immediate = s.settings.error_requeue == ErrorRequeue::Immediate;
    let mut out = WindowExcess::default();
    for sh in faulted_shares(s, p, alive) {
        let c = sh.calls_per_reconcile;
        if sh.backoff {
            out.off_poll.push((sh.group, sh.n));
            out.failing_rate += sh.n / m;
            out.takes_bucket |= immediate;
            out.calls += sh.n * c * attempts;
            out.extra_calls += sh.n * (c - 1.0) * attempts;
            out.terms.push(format!(
                "{}: {}·{}·A({w})",
                sh.id,
                fmt_num(sh.n),
                fmt_num(c)
            ));
        } else if c > 1.0 {
            let polls = intervals::sum_over(&sh.intervals, polls);
            out.calls += (c - 1.0) * polls;
            out.extra_calls += (c - 1.0) * polls;
            out.terms.push(format!(
                "{}: {}·{}·(⌊W/(P_i − j_i)⌋ + 1)",
                sh.id,
                fmt_num(sh.n),
                fmt_num(c - 1.0)
            ));
        }
    }
    out
}

/// The cloud names of the resources on the failure backoff in `s` (a lasting error, or an
/// observe-only resource with the pre-#1088 requeue): they are not polled (§9.6).
#[must_use]
pub fn off_poll_names(s: &Scenario) -> std::collections::BTreeSet<String> {
    let backoff = s.settings.observe_only_absent == ObserveOnlyAbsent::Backoff;
    let mut out = std::collections::BTreeSet::new();
    for g in &s.groups {
        for i in 0..g.count {
            let off = if g.observe_only() {
                backoff
            } else {
                matches!(g.fault(i), Some(GroupFault::Error { .. }))
            };
            if off {
                out.insert(g.resource_name(i, &s.name));
            }
        }
    }
    out
}

/// The most calls one resource may make in a closed window of `w` seconds without looping
/// hot (§9.4) at the provider's P: [`allowed_for_interval`] of P.
#[must_use]
pub fn allowed_in_window(s: &Scenario, p: &Params, w: f64) -> (f64, f64) {
    allowed_for_interval(p, s.settings.poll_interval.as_secs_f64(), w)
}

/// The most calls a resource polled every `interval` seconds (its own P_i) may make in a
/// closed window of `w` seconds without looping hot (§9.4): c_max·(⌊w/g⌋ + 1), where
/// g = min(P_i − j_i, d_max) is the shortest gap between two of its reconciles the
/// provider's rules allow in steady state. Returns (the limit, g).
#[must_use]
pub fn allowed_for_interval(p: &Params, interval: f64, w: f64) -> (f64, f64) {
    let gap = (interval - p.jitter_of(interval))
        .min(p.backoff.1)
        .max(1e-3);
    (p.c_max * ((w / gap).floor() + 1.0), gap)
}

/// The scenario as each phase saw it: one scenario when no phase changes the faults.
#[must_use]
pub fn every_phase(s: &Scenario) -> Vec<Cow<'_, Scenario>> {
    if s.changes_faults() {
        (0..s.phases.len())
            .map(|i| Cow::Owned(s.during(i)))
            .collect()
    } else {
        vec![Cow::Borrowed(s)]
    }
}

/// The most calls one resource may make in a closed window of `w` seconds of a phase (or of
/// the whole run), by its own poll interval P_i (§9.4, §9.7): what `perResourceCalls` and
/// `hotLoops` hold each resource to.
pub struct ResourceLimits<'a> {
    p: Option<&'a Params>,
    w: f64,
    /// The most a resource of a failing share may make in W: c_f·A(W) of the busiest
    /// backoff share the phase sees (the ramp is the densest part of the backoff), 0
    /// without one.
    pub failing: f64,
    /// The coupled regime's most calls of one resource of each class in W, by class label.
    pub coupled: BTreeMap<String, f64>,
    /// Each resource's class label, by cloud name (only when `coupled` has a limit).
    classes: BTreeMap<String, String>,
}

impl<'a> ResourceLimits<'a> {
    /// The limits of windows of `w` seconds in `phase` (every phase without one) under the
    /// parameters `p`, given the coupled regime's limits of each class (§9.7) by label.
    #[must_use]
    pub fn new(
        s: &Scenario,
        p: Option<&'a Params>,
        phase: Option<&str>,
        w: f64,
        coupled: BTreeMap<String, f64>,
    ) -> Self {
        let failing = p.map_or(0.0, |p| {
            let all = vec![true; s.groups.len()];
            let (b, m) = p.backoff;
            let seen = match phase.and_then(|name| s.phase_index(name)) {
                Some(i) if s.changes_faults() => vec![Cow::Owned(s.during(i))],
                _ => every_phase(s),
            };
            seen.iter()
                .flat_map(|seen| faulted_shares(seen, p, &all))
                .filter(|f| f.backoff)
                .map(|f| f.calls_per_reconcile * backoff_attempts(w, b, m))
                .fold(0.0, f64::max)
        });
        let mut classes = BTreeMap::new();
        if !coupled.is_empty() {
            for (gi, g) in s.groups.iter().enumerate() {
                for i in 0..g.count {
                    classes.insert(
                        g.resource_name(i, &s.name),
                        super::coupled::class_label(s, gi, i),
                    );
                }
            }
        }
        Self {
            p,
            w,
            failing,
            coupled,
            classes,
        }
    }

    /// The healthy limit of a resource polled every `interval` seconds and its shortest gap
    /// g ([`allowed_for_interval`]); NaN without parameters.
    #[must_use]
    pub fn healthy(&self, interval: f64) -> (f64, f64) {
        self.p.map_or((f64::NAN, f64::NAN), |p| {
            allowed_for_interval(p, interval, self.w)
        })
    }

    /// The largest of the coupled regime's limits, 0 without the coupled regime.
    #[must_use]
    pub fn coupled_max(&self) -> f64 {
        self.coupled.values().copied().fold(0.0, f64::max)
    }

    /// The coupled regime's limit of the class of the resource `name`, 0 without one.
    #[must_use]
    pub fn class_limit(&self, name: &str) -> f64 {
        self.classes
            .get(name)
            .and_then(|l| self.coupled.get(l))
            .copied()
            .unwrap_or(0.0)
    }

    /// `perResourceCalls`' limit of a resource at P_i = `interval`: the healthy limit, c·A(W)
    /// of each failing share and the coupled regime's per-resource limit, whichever is
    /// largest (a failing or throttled resource comes back at the bucket's pace).
    #[must_use]
    pub fn per_resource(&self, interval: f64) -> f64 {
        self.healthy(interval)
            .0
            .max(self.failing)
            .max(self.coupled_max())
    }

    /// `hotLoops`' limit of the resource `name` at P_i = `interval`: `factor` times the
    /// larger of its healthy limit and its class's coupled limit (a rate the crossplane
    /// rules explain is not a hot loop).
    #[must_use]
    pub fn hot(&self, name: &str, interval: f64, factor: f64) -> f64 {
        (factor * self.healthy(interval).0).max(factor * self.class_limit(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_backoff_makes_65_attempts_in_the_first_hour_and_60_after() {
        // 0, 1, 3, 7, 15, 31, 63 s, then every 60 s: 7 + ⌊(3600 − 63)/60⌋ = 65.
        assert_eq!(backoff_attempts(3600.0, 1.0, 60.0), 65.0);
        assert_eq!(backoff_attempts(63.0, 1.0, 60.0), 7.0);
        assert_eq!(backoff_attempts(62.9, 1.0, 60.0), 6.0);
        assert_eq!(
            backoff_attempts(7200.0, 1.0, 60.0) - backoff_attempts(3600.0, 1.0, 60.0),
            60.0
        );
        // base 2 s, cap 30 s: 0, 2, 6, 14, 30, then every 30 s.
        assert_eq!(backoff_attempts(300.0, 2.0, 30.0), 14.0);
    }

    /// A discrete simulation of one resource on controller-runtime's per-item rate limiter
    /// (delay base·2^(k−1), capped, k counting failures since the last success).
    fn simulate(t_end: f64, base: f64, max: f64) -> f64 {
        let (mut now, mut failures, mut attempts) = (0.0f64, 0u32, 0.0);
        while now <= t_end {
            attempts += 1.0;
            failures += 1;
            let delay = (base * 2f64.powi(failures as i32 - 1)).min(max);
            now += delay;
        }
        attempts
    }

    #[test]
    fn the_ramp_formula_agrees_with_a_simulation_of_the_per_item_limiter() {
        for (b, m) in [(1.0, 60.0), (2.0, 30.0), (0.005, 1000.0), (5.0, 300.0)] {
            for t in [0.0, 10.0, 100.0, 3599.0, 3600.0, 86_400.0] {
                assert_eq!(
                    backoff_attempts(t, b, m),
                    simulate(t, b, m),
                    "b={b} m={m} t={t}"
                );
            }
        }
    }
}
