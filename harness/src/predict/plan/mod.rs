//! A scenario's budget, phase by phase and account by account: which formulas apply where.

use std::collections::BTreeSet;

use limiter::crossplane::RateLimitModel;

use super::backlog::{self, Backlog, QuotaNeed};
use super::bounds::{self, Excess};
use super::formula::{Meaning, Prediction};
use super::params::Params;
use super::quota::{self, ThrottleVerdict};
use super::scan;
use super::steady::{self, PollClass, Steady};
use crate::scenario::{Action, ActionClass, Check, Kind, Scenario};

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

fn kinds(s: &Scenario) -> Vec<Kind> {
    s.groups
        .iter()
        .map(|g| g.kind)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

fn classes(s: &Scenario, alive: &[bool]) -> Vec<PollClass> {
    let ks = kinds(s);
    let mut out = Vec::new();
    for (g, on) in s.groups.iter().zip(alive) {
        if !on {
            continue;
        }
        let controller = ks.iter().position(|k| *k == g.kind).unwrap_or(0);
        for (interval, count) in g.poll_intervals(&s.settings, &s.name) {
            out.push(PollClass {
                interval: interval.as_secs_f64(),
                count: f64::from(count),
                controller,
            });
        }
    }
    out
}

fn per_controller(s: &Scenario, groups: &[usize]) -> Vec<f64> {
    let ks = kinds(s);
    let mut v = vec![0.0; ks.len()];
    for &g in groups {
        let grp = &s.groups[g];
        let c = ks.iter().position(|k| *k == grp.kind).unwrap_or(0);
        v[c] += f64::from(grp.count);
    }
    v
}

/// The windows the plan reports bounds for: 1 s, 10 s and every assertion's window.
fn windows(s: &Scenario) -> Vec<f64> {
    let mut w: Vec<f64> = vec![1.0, 10.0];
    for a in &s.assertions {
        if let Check::CloudCalls { window, .. }
        | Check::ApiRequests { window, .. }
        | Check::SteadyRate { window, .. } = a.check
        {
            w.push(window.as_secs_f64());
        }
    }
    w.sort_by(f64::total_cmp);
    w.dedup();
    w
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
    let mut run = Vec::new();
    for w in windows(s) {
        run.push(bounds::reconciles(&base, w, &Excess::default()).phase(None));
        run.push(with_id(bounds::api_requests(&base, w), "run", w));
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
    phase: &crate::scenario::Phase,
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
    let mut backlog_opt = None;
    let mut physical = None;
    let groups = phase
        .action
        .groups()
        .map(<[usize]>::to_vec)
        .unwrap_or_default();
    let acted: f64 = groups.iter().map(|&g| f64::from(s.groups[g].count)).sum();
    let rate = phase.action.rate();
    let api = p.api;
    let backlog = match &phase.action {
        Action::Create { .. } => {
            let tp = groups
                .iter()
                .filter(|&&g| s.groups[g].kind == Kind::Database)
                .map(|_| s.cloud.provisioning.database_create.as_secs_f64())
                .fold(0.0, f64::max);
            let m = backlog::reconciles_per_create(
                p,
                acted,
                tp,
                s.settings.poll_interval.as_secs_f64(),
            );
            Some((
                Backlog {
                    per_controller: per_controller(s, &groups),
                    m,
                    a_first: f64::from(api.create),
                    a_next: f64::from(api.observe),
                    arrival_rate: rate,
                },
                tp,
            ))
        }
        Action::Resync { .. } => Some((
            Backlog {
                per_controller: per_controller(s, &groups),
                m: 1.0,
                a_first: f64::from(api.resync),
                a_next: 0.0,
                arrival_rate: rate,
            },
            0.0,
        )),
        Action::Update { .. } => Some((
            Backlog {
                per_controller: per_controller(s, &groups),
                m: 1.0,
                a_first: f64::from(api.update),
                a_next: 0.0,
                arrival_rate: rate,
            },
            0.0,
        )),
        Action::Delete { .. } => {
            let td = groups
                .iter()
                .filter(|&&g| s.groups[g].kind == Kind::Database)
                .map(|_| s.cloud.provisioning.database_delete.as_secs_f64())
                .fold(0.0, f64::max);
            let m = backlog::reconciles_per_create(
                p,
                acted,
                td,
                s.settings.poll_interval.as_secs_f64(),
            );
            Some((
                Backlog {
                    per_controller: per_controller(s, &groups),
                    m,
                    a_first: f64::from(api.delete),
                    a_next: f64::from(api.poll),
                    arrival_rate: rate,
                },
                td,
            ))
        }
        Action::Restart => {
            let all: Vec<usize> = (0..s.groups.len()).filter(|&g| alive[g]).collect();
            Some((
                Backlog {
                    per_controller: per_controller(s, &all),
                    m: 1.0,
                    a_first: f64::from(api.poll),
                    a_next: 0.0,
                    arrival_rate: None,
                },
                0.0,
            ))
        }
        _ => None,
    };
    let acted_on = backlog.as_ref().map_or(0.0, |(b, _)| b.n());
    if let Some((b, t_p)) = backlog {
        let n = b.n();
        if matches!(phase.action, Action::Resync { .. } | Action::Update { .. }) {
            let (e, expected) = backlog::resync_excess(p, n, &st, 10.0, mu);
            excess = e;
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
                .input("E", excess.e)
                .input("W", 10.0)
                .meaning(Meaning::Expected)
                .source("[D][S] §2.2, §7.4")
                .phase(Some(name)),
            );
        }
        let last = backlog::last_start(p, &b);
        preds.push(
            Prediction::new(
                format!("{name}/drain"),
                "last start of the backlog (model's drain)",
                last,
                "s",
            )
            .formula(drain_formula(p))
            .input("N", n)
            .input("m", b.m)
            .input("R", p.r)
            .input("B", p.b)
            .input("w", p.w)
            .input("L̄", p.l)
            .input("r_h", b.arrival_rate.unwrap_or(f64::INFINITY))
            .meaning(Meaning::Expected)
            .source("[D][S] §4.2")
            .phase(Some(name)),
        );
        let first = backlog::first_window(p, &b, 1.0);
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
        let needs = quota_needs(s, &phase.action, &groups, &b);
        let (dphys, terms) = backlog::physical_limit(p, &b, &needs);
        let mut phys = Prediction::new(format!("{name}/physical-limit"), "physical drain limit D_phys", dphys, "s")
            .formula("max((N_tok − B)/R, max_c(⌈N_c·m/w⌉ − 1)·L_min, (A_tot − 10R)/(5R), max_a (C_a − b_a)/r_a, N/r_h) + L_min")
            .meaning(Meaning::LowerBound).source("[P] §4.5").phase(Some(name));
        for t in &terms {
            phys = phys.input(&t.name, t.seconds.max(0.0));
        }
        phys = phys.input("L_min", p.l_min);
        preds.push(phys.clone());
        physical = Some(phys);
        if matches!(phase.action, Action::Create { .. }) {
            let tau = backlog::ttr_unloaded(p, t_p, s.settings.poll_interval.as_secs_f64());
            for q in [0.5, 0.9, 0.99] {
                let v = backlog::ttr_quantile(p, &b, q, tau);
                preds.push(
                    Prediction::new(
                        format!("{name}/ttr-p{}", q * 100.0),
                        format!("time to Ready, p{}", q * 100.0),
                        v,
                        "s",
                    )
                    .formula("max(τ_unloaded, ((m − 1 + q)·N − B)/R + L̄, q·N/r_h + τ_unloaded)")
                    .input("τ_unloaded", tau)
                    .input("m", b.m)
                    .input("q", q)
                    .input("N", n)
                    .input("B", p.b)
                    .input("R", p.r)
                    .input("L̄", p.l)
                    .meaning(Meaning::Expected)
                    .source("[D][S] §5.2")
                    .phase(Some(name)),
                );
            }
            *since_wave = Some((n, last));
        }
        if matches!(phase.action, Action::Restart | Action::Resync { .. }) {
            *since_wave = Some((n, last));
        }
        backlog_opt = Some(b);
        quota_predictions(s, p, name, &phase.action, &groups, &mut preds);
    }
    if let Action::Hold { duration } = &phase.action {
        hold_predictions(
            s,
            p,
            name,
            duration.as_secs_f64(),
            &cls,
            &st,
            since_wave.take(),
            &mut preds,
        );
    }
    if let Action::CloudOutage { duration, .. } = &phase.action {
        let retry = (population / (60.0 + p.l)).min(backlog::effective_rate(p));
        preds.push(Prediction::new(format!("{name}/failing-rate"), "failed reconciles per second once backoff reaches 60 s", retry, "/s")
            .formula("min(R_eff, N/(60 s + L̄))").input("N", population).input("R_eff", backlog::effective_rate(p))
            .meaning(Meaning::Expected).source("[A] §4.3, §6").phase(Some(name))
            .note(if p.model == RateLimitModel::Crossplane { "the middleware resets backoff on every throttled pass: under a backlog retries stay at 1 s" } else { "backoff 1 s·2^(k−1), capped at 60 s" }));
        let recover = backlog::last_start(
            p,
            &Backlog {
                per_controller: vec![population],
                m: 1.0,
                a_first: f64::from(p.api.poll),
                a_next: 0.0,
                arrival_rate: None,
            },
        ) + 60.0;
        preds.push(
            Prediction::new(
                format!("{name}/recovery"),
                "all resources reconciled again after the outage",
                recover,
                "s",
            )
            .formula("60 s (longest backoff) + (N − B)/R")
            .input("N", population)
            .input("outage", duration.as_secs_f64())
            .meaning(Meaning::Expected)
            .source("[A] §4.2, §4.3")
            .phase(Some(name)),
        );
    }
    if let Action::CloudLatency { .. } = &phase.action
        && p.r * p.l > p.w
    {
        excess.q = phase_duration(phase);
        excess.mechanism = format!(
            "workers saturated (R·L̄ = {:.1} > w = {}): delayed copies bunch for the whole phase (§2.2 M2, §8 row 4)",
            p.r * p.l,
            p.w
        );
    }
    for w in windows(s) {
        preds.push(with_id(bounds::cloud_calls(p, w, &excess), name, w).phase(Some(name)));
        preds.push(with_id(bounds::api_requests(p, w), name, w).phase(Some(name)));
    }
    PhasePlan {
        name: name.to_owned(),
        population: population as u64,
        acted_on: acted_on as u64,
        params: p.clone(),
        excess,
        steady: st,
        backlog: backlog_opt,
        physical,
        predictions: preds,
    }
}

fn phase_duration(phase: &crate::scenario::Phase) -> f64 {
    match &phase.action {
        Action::Hold { duration } | Action::CloudOutage { duration, .. } => duration.as_secs_f64(),
        Action::CloudLatency { duration, .. } => {
            duration.map_or(phase.timeout.as_secs_f64(), |d| d.as_secs_f64())
        }
        _ => phase.timeout.as_secs_f64(),
    }
}

fn drain_formula(p: &Params) -> &'static str {
    match p.model {
        RateLimitModel::Crossplane | RateLimitModel::InQueue => {
            "max((m·N − B)/R, max_c(⌈N_c·m/w⌉ − 1)·L̄, N/r_h)"
        }
        RateLimitModel::ConcurrencyOnly => "max(max_c(⌈N_c·m/R⌉ − 1)·L̄, (A_tot − 10R)/(5R), N/r_h)",
        RateLimitModel::ControllerRuntime => "max(max_c (m·N_c − 1)·L̄, N/r_h)",
    }
}

/// Calls per resource by class for a backlog phase: (class, calls per resource).
fn class_calls(action: &Action, m: f64) -> Vec<(ActionClass, f64)> {
    match action {
        Action::Create { .. } => vec![(ActionClass::Read, m), (ActionClass::Mutate, 1.0)],
        Action::Update { .. } => vec![(ActionClass::Read, 1.0), (ActionClass::Mutate, 1.0)],
        Action::Delete { .. } => vec![(ActionClass::Read, m), (ActionClass::Delete, 1.0)],
        _ => vec![(ActionClass::Read, 1.0)],
    }
}

fn account_counts(s: &Scenario, groups: &[usize]) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for &g in groups {
        let grp = &s.groups[g];
        match out.iter_mut().find(|(a, _)| *a == grp.account) {
            Some((_, n)) => *n += f64::from(grp.count),
            None => out.push((grp.account.clone(), f64::from(grp.count))),
        }
    }
    out
}

fn quota_needs(s: &Scenario, action: &Action, groups: &[usize], b: &Backlog) -> Vec<QuotaNeed> {
    let groups: Vec<usize> = if groups.is_empty() {
        (0..s.groups.len()).collect()
    } else {
        groups.to_vec()
    };
    let mut out = Vec::new();
    for (acct, n) in account_counts(s, &groups) {
        let Some(account) = s.cloud.account(&acct) else {
            continue;
        };
        for (class, c) in class_calls(action, b.m) {
            if let Some(q) = account.quotas.get(class) {
                out.push(QuotaNeed {
                    name: format!("{acct}/{}", class.as_str()),
                    calls: c * n,
                    burst: q.burst,
                    per_second: q.per_second,
                });
            }
        }
    }
    out
}

fn quota_predictions(
    s: &Scenario,
    p: &Params,
    name: &str,
    action: &Action,
    groups: &[usize],
    preds: &mut Vec<Prediction>,
) {
    let groups: Vec<usize> = if groups.is_empty() {
        (0..s.groups.len()).collect()
    } else {
        groups.to_vec()
    };
    for (acct, n) in account_counts(s, &groups) {
        let Some(account) = s.cloud.account(&acct) else {
            continue;
        };
        for (class, c) in class_calls(action, 1.0) {
            let Some(q) = account.quotas.get(class) else {
                continue;
            };
            let burst = n.min(p.b);
            let v = quota::no_throttle(c, burst, p.r, q.burst, q.per_second);
            preds.push(
                Prediction::new(
                    format!("{name}/quota/{acct}/{}", class.as_str()),
                    format!("{} quota of {acct}: {}", class.as_str(), v.as_str()),
                    f64::from(u8::from(v == ThrottleVerdict::Impossible)),
                    "",
                )
                .formula("c_a·min(N, B) ≤ b_a and c_a·R ≤ r_a ⟹ no 429")
                .input("c_a", c)
                .input("min(N,B)", burst)
                .input("R", p.r)
                .input("b_a", q.burst)
                .input("r_a", q.per_second)
                .meaning(Meaning::Condition)
                .source("[P] §6.1")
                .phase(Some(name))
                .account(Some(&acct))
                .note(if p.model == RateLimitModel::Crossplane {
                    "crossplane: holds only if E = Q = 0"
                } else {
                    ""
                }),
            );
            if matches!(action, Action::Create { .. })
                && class == ActionClass::Mutate
                && v != ThrottleVerdict::Impossible
            {
                let (rejected, t) = quota::creation_under_quota(p, n, q.burst, q.per_second);
                preds.push(
                    Prediction::new(
                        format!("{name}/quota/{acct}/rejected-creates"),
                        format!("rejected creates of {acct}"),
                        rejected,
                        "calls",
                    )
                    .formula(if p.model == RateLimitModel::InQueue {
                        "min(63R, 6·n(0)) + ∫_{63s} (min(R, n(t)/(60 + L)) − r_m)⁺ dt"
                    } else {
                        "(R − 2·r_m)⁺ · (N − b_m)/r_m"
                    })
                    .input("R", p.r)
                    .input("N", n)
                    .input("b_m", q.burst)
                    .input("r_m", q.per_second)
                    .meaning(Meaning::Expected)
                    .source("[A][S] §6.3")
                    .phase(Some(name))
                    .account(Some(&acct)),
                );
                preds.push(
                    Prediction::new(
                        format!("{name}/quota/{acct}/convergence"),
                        format!("creation convergence of {acct} (physical)"),
                        t,
                        "s",
                    )
                    .formula("max((N − b_m)/r_m, (2N − B)/R)")
                    .input("N", n)
                    .input("b_m", q.burst)
                    .input("r_m", q.per_second)
                    .input("B", p.b)
                    .input("R", p.r)
                    .meaning(Meaning::LowerBound)
                    .source("[A] §6.3")
                    .phase(Some(name))
                    .account(Some(&acct)),
                );
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn hold_predictions(
    s: &Scenario,
    p: &Params,
    name: &str,
    t: f64,
    cls: &[PollClass],
    st: &Steady,
    wave: Option<(f64, f64)>,
    preds: &mut Vec<Prediction>,
) {
    let alpha = s.prediction.alpha;
    let n: f64 = cls.iter().map(|c| c.count).sum();
    preds.push(
        Prediction::new(
            format!("{name}/rate"),
            "expected reconciles (poll calls) per second",
            st.rate,
            "/s",
        )
        .formula(if st.saturated {
            "R (saturated: solve Σ 1/(P_i + L̄ + V) = R)"
        } else {
            "λ = Σ 1/(P_i + L̄)"
        })
        .input("N", n)
        .input("demand", st.demand)
        .input("V", st.wait)
        .input("R", p.r)
        .input("L̄", p.l)
        .meaning(Meaning::Expected)
        .source("[D][S] §3.2, §3.3")
        .phase(Some(name)),
    );
    preds.push(
        Prediction::new(
            format!("{name}/band"),
            "long-run band (DESIGN.md), high end",
            st.band.1,
            "/s",
        )
        .formula("Σ 1/(P_i − j_i) (low end Σ 1/(P_i + j_i))")
        .input("low", st.band.0)
        .input("high", st.band.1)
        .meaning(Meaning::Expected)
        .source("[D] §3.2")
        .phase(Some(name)),
    );
    preds.push(
        Prediction::new(
            format!("{name}/api-rate"),
            "expected API requests per second",
            st.rate * f64::from(p.api.poll),
            "/s",
        )
        .formula("Σ ā_i/μ_i")
        .input("ā", f64::from(p.api.poll))
        .input("λ", st.rate)
        .meaning(Meaning::Expected)
        .source("[D] §3.2")
        .phase(Some(name)),
    );
    if st.saturated && p.model == RateLimitModel::Crossplane {
        preds.push(
            Prediction::new(
                format!("{name}/flagged"),
                "flagged keys at any instant",
                st.flagged,
                "keys",
            )
            .formula("N_fl = Σ V/(P_i + L̄ + V)")
            .input("V", st.wait)
            .meaning(Meaning::Expected)
            .source("[A][S] §3.3")
            .phase(Some(name)),
        );
    }
    for w in windows(s) {
        preds.push(steady_tolerance(p, name, w, t, alpha, cls, st, wave));
    }
    for account in &s.cloud.accounts {
        let Some(q) = account.quotas.read else {
            continue;
        };
        let share: f64 = s
            .groups
            .iter()
            .filter(|g| g.account == account.name)
            .map(|g| f64::from(g.count))
            .sum::<f64>()
            / n.max(1.0);
        let poll = if st.rate > 0.0 {
            n / st.demand - p.l
        } else {
            0.0
        };
        let (att, acc, rej, period) =
            quota::steady_overload(p, n * share, poll.max(0.0), q.per_second);
        preds.push(
            Prediction::new(
                format!("{name}/quota/{}/read-steady", account.name),
                format!("steady reads of {}: rejected per second", account.name),
                rej,
                "/s",
            )
            .formula("λ = min(R_eff, N/D̄(q)), q = min(1, r_a/λ); rejected = λ − r_a")
            .input("N", n * share)
            .input("P̄", poll)
            .input("r_a", q.per_second)
            .input("attempts", att)
            .input("accepted", acc)
            .input("period", period)
            .meaning(Meaning::Expected)
            .source("[A][S] §6.2")
            .phase(Some(name))
            .account(Some(&account.name)),
        );
    }
}

/// The tolerance for the windowed maximum of cloud calls in a hold of `t` seconds.
#[allow(clippy::too_many_arguments)]
fn steady_tolerance(
    p: &Params,
    name: &str,
    w: f64,
    t: f64,
    alpha: f64,
    cls: &[PollClass],
    st: &Steady,
    wave: Option<(f64, f64)>,
) -> Prediction {
    let id = format!("{name}/steady-max/{w}s");
    let what = format!("windowed maximum of cloud calls per {w}s in the hold");
    if st.saturated && p.has_bucket() {
        return Prediction::new(id, what, bounds::bucket_window(p.b, p.r, w), "calls")
            .formula("⌊B + R·W⌋ (saturated: paced by the bucket)")
            .input("B", p.b)
            .input("R", p.r)
            .input("W", w)
            .meaning(Meaning::Tolerance)
            .source("[A][S] §3.3")
            .phase(Some(name));
    }
    let n: f64 = cls.iter().map(|c| c.count).sum();
    let mu = if st.rate > 0.0 {
        n / st.rate
    } else {
        f64::INFINITY
    };
    let j = p.jitter_share * (mu - p.l);
    if let Some((size, spread)) = wave {
        let cycles = steady::ripple_cycles(j, mu, spread, 0.1);
        if t < cycles * mu {
            let (peak, busiest) = steady::first_echo(p, size, j, w);
            let (k, delta) = scan::union_tolerance(peak, w, t, alpha);
            return Prediction::new(id, what, k as f64, "calls")
                .formula("least k with G·P(Poisson(λ_echo·(W + δ)) ≥ k) ≤ α, λ_echo = min(N, B + 2jR)/(2j)")
                .input("λ_echo", peak).input("busiest W mean", busiest).input("W", w).input("δ", delta).input("T", t).input("α", alpha)
                .input("cycles to 10% ripple", cycles)
                .meaning(Meaning::Tolerance).source("[D] §3.5, §3.6").phase(Some(name))
                .note(format!("the hold starts within {cycles:.0} poll cycles of a wave: its echo, not the stationary count, sets the maximum"));
        }
    }
    let naus = scan::naus_tolerance(st.rate, w, t, alpha);
    let (union, delta) = scan::union_tolerance(st.rate, w, t, alpha);
    Prediction::new(id, what, naus as f64, "calls")
        .formula(
            "Naus (1982) scan approximation: least k with P(M ≥ k) ≤ α (union bound alongside)",
        )
        .input("λ", st.rate)
        .input("W", w)
        .input("T", t)
        .input("α", alpha)
        .input("union bound", union as f64)
        .input("δ", delta)
        .input("mean", st.rate * w)
        .input("sd", st.window_var.sqrt())
        .meaning(Meaning::Tolerance)
        .source("[D][A][S] §3.4, §3.5")
        .phase(Some(name))
        .note("above Naus: anomaly at level ≈ α; above the union bound: proven at level ≤ α")
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
