//! Error paths in a run's result: the top offenders (who made the calls, and why), and the
//! verdicts of `perResourceCalls`, `hotLoops` and `pollPeriod` (docs/budget.md §9).

use std::collections::BTreeMap;

use super::model::{Offender, ShareCost, Verdict};
use super::observe::{CallAction, Observations};
use crate::measure::{NamedCall, ResourceCalls, hot_loops_by, per_resource};
use crate::predict::error_paths::{ResourceLimits, every_phase};
use crate::predict::intervals::OwnIntervals;
use crate::predict::{Plan, fmt_num};
use crate::scenario::{Assertion, Scenario};

/// How many offenders the report lists.
pub const TOP_OFFENDERS: usize = 10;

fn named(obs: &Observations) -> impl Iterator<Item = NamedCall<'_>> {
    obs.cloud_calls.iter().map(|c| NamedCall {
        name: c.name.as_str(),
        at_us: c.at_us,
        observe: c.action == CallAction::Get && !c.throttled,
    })
}

/// The scenario's fault label of each resource faulted at some time of the run (the latest
/// one of a resource whose fault a `cloudFault` phase changed), by cloud name.
fn planned_faults(s: &Scenario) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for seen in every_phase(s) {
        for g in &seen.groups {
            for i in 0..g.count {
                let label = if g.observe_only() {
                    Some("observe-only".to_owned())
                } else {
                    g.fault(i).map(|f| f.label().to_owned())
                };
                if let Some(label) = label {
                    out.insert(g.resource_name(i, &s.name), label);
                }
            }
        }
    }
    out
}

/// The resources with the most cloud calls, most first; empty when none of them has a
/// reason (no failing condition, no planned fault).
#[must_use]
pub fn offenders(s: &Scenario, obs: &Observations) -> Vec<Offender> {
    let total = obs.cloud_calls.len().max(1) as f64;
    let planned = planned_faults(s);
    let conditions: BTreeMap<&str, &str> = obs
        .custom_resources
        .iter()
        .filter_map(|cr| {
            let name = cr.external_name.as_deref().unwrap_or(&cr.name);
            cr.condition.as_deref().map(|c| (name, c))
        })
        .collect();
    let end_us = obs
        .phases
        .iter()
        .map(|p| p.end_us)
        .chain(obs.cloud_calls.last().map(|c| c.at_us + 1))
        .max()
        .unwrap_or(0);
    let bin_us = strip_bin_us(end_us);
    let bins = usize::try_from(end_us.div_ceil(bin_us)).unwrap_or(0).max(1);
    let mut top: Vec<Offender> = per_resource(named(obs), 0, u64::MAX, 1)
        .into_iter()
        .take(TOP_OFFENDERS)
        .map(|r| Offender {
            bin_s: bin_us as f64 / 1e6,
            calls_per_bin: vec![0; bins],
            share: r.calls as f64 / total,
            reason: conditions
                .get(r.name.as_str())
                .map(|c| (*c).to_owned())
                .or_else(|| planned.get(&r.name).map(|l| format!("fault: {l}")))
                .unwrap_or_default(),
            calls: r.calls,
            name: r.name,
        })
        .collect();
    let row: BTreeMap<&str, usize> = top
        .iter()
        .enumerate()
        .map(|(i, o)| (o.name.as_str(), i))
        .collect();
    let cells: Vec<(usize, usize)> = obs
        .cloud_calls
        .iter()
        .filter_map(|c| {
            let i = *row.get(c.name.as_str())?;
            let b = usize::try_from(c.at_us / bin_us).ok()?.min(bins - 1);
            Some((i, b))
        })
        .collect();
    for (i, b) in cells {
        top[i].calls_per_bin[b] += 1;
    }
    // Only a run with a resource on an error path has offenders worth a table.
    if top.iter().any(|o| !o.reason.is_empty()) {
        top
    } else {
        Vec::new()
    }
}

/// The most bins an offender's strip has.
pub const STRIP_BINS: u64 = 120;

/// The bin of the offenders' strips for a run of `end_us`: the least round width (1 s,
/// 2 s, 5 s, … 1 h, 2 h, …) that cuts it into at most [`STRIP_BINS`] bins.
fn strip_bin_us(end_us: u64) -> u64 {
    const STEPS_S: [u64; 18] = [
        1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14_400, 21_600, 43_200,
        86_400,
    ];
    STEPS_S
        .into_iter()
        .map(|s| s * 1_000_000)
        .find(|&b| end_us.div_ceil(b) <= STRIP_BINS)
        .unwrap_or_else(|| end_us.div_ceil(STRIP_BINS).max(1))
}

/// The cost of every faulted share in every hold phase.
#[must_use]
pub fn share_costs(s: &Scenario, plan: &Plan, obs: &Observations) -> Vec<ShareCost> {
    let mut out = Vec::new();
    for span in &obs.phases {
        let hours = (span.end_us.saturating_sub(span.start_us)) as f64 / 3.6e9;
        if hours <= 0.0 {
            continue;
        }
        let prefix = format!("{}/error-paths/", span.name);
        for pred in plan
            .all()
            .filter(|p| p.id.starts_with(&prefix) && p.id.ends_with("/calls-per-hour"))
        {
            let share = pred.id[prefix.len()..pred.id.len() - "/calls-per-hour".len()].to_owned();
            let names = match s.phase_index(&span.name) {
                Some(i) if s.changes_faults() => share_names(&s.during(i), &share),
                _ => share_names(s, &share),
            };
            let calls = obs
                .cloud_calls
                .iter()
                .filter(|c| c.at_us >= span.start_us && c.at_us < span.end_us)
                .filter(|c| names.contains(&c.name))
                .count() as f64;
            let n = names.len().max(1) as f64;
            out.push(ShareCost {
                phase: span.name.clone(),
                share,
                resources: names.len() as u64,
                observed_per_hour: calls / n / hours,
                predicted_per_hour: pred.value,
                predicted_first_hour: pred.get("c_f").unwrap_or(1.0)
                    * pred.get("A(3600)").unwrap_or(f64::NAN),
            });
        }
    }
    out
}

/// The cloud names of the resources of a share id (`group/label`).
fn share_names(s: &Scenario, share: &str) -> std::collections::BTreeSet<String> {
    let (group, label) = share.split_once('/').unwrap_or((share, ""));
    let Some(g) = s.groups.iter().find(|g| g.name == group) else {
        return Default::default();
    };
    (0..g.count)
        .filter(|&i| {
            if label == "observe-only-absent" {
                g.observe_only()
            } else {
                g.fault(i).is_some_and(|f| f.label() == label)
            }
        })
        .map(|i| g.resource_name(i, &s.name))
        .collect()
}

/// What a per-resource check (`perResourceCalls`, `hotLoops`, `pollPeriod`) reads: the
/// scenario, its plan and what the run observed, the assertion, each resource's own poll
/// interval, and the span (µs) and phase the check is restricted to.
#[derive(Clone, Copy)]
pub struct Subject<'a> {
    /// The scenario.
    pub s: &'a Scenario,
    /// Its plan.
    pub plan: &'a Plan,
    /// What the run observed.
    pub obs: &'a Observations,
    /// The assertion judged.
    pub a: &'a Assertion,
    /// Each resource's own poll interval.
    pub own: &'a OwnIntervals,
    /// The span the check reads, µs since the run started.
    pub range: (u64, u64),
    /// The phase it is restricted to, if any.
    pub phase: Option<&'a str>,
}

fn verdict(a: &Assertion, check: &str, formula: String, limit: f64, observed: f64) -> Verdict {
    Verdict {
        formula,
        predicted: limit,
        ..Verdict::at_most(&a.name, check, limit, observed)
    }
}

impl Subject<'_> {
    /// Each resource's calls in the span, with its busiest window of `w` seconds.
    fn measured(&self, w: f64) -> Vec<ResourceCalls> {
        let (from, to) = self.range;
        per_resource(named(self.obs), from, to, (w * 1e6) as u64)
    }

    /// What the plan holds each resource to in windows of `w` seconds of the phase.
    fn limits(&self, w: f64) -> ResourceLimits<'_> {
        self.plan.resource_limits(self.s, self.phase, w)
    }
}

/// The own intervals in a verdict's inputs: `5s→268, 3600s→22` (interval → its limit),
/// only when some resource's interval is not P.
fn limits_by_interval(own: &OwnIntervals, limit: impl Fn(f64) -> f64) -> String {
    if own.distinct().iter().all(|&pi| pi == own.default()) {
        return String::new();
    }
    let each: Vec<String> = own
        .distinct()
        .iter()
        .map(|&pi| format!("{}s→{}", fmt_num(pi), fmt_num(limit(pi))))
        .collect();
    format!(", limits by own interval P_i: {}", each.join(", "))
}

/// `perResourceCalls`: the busiest window of each resource against the most a resource of
/// the scenario at its own poll interval may make in it (§9.4): the healthy limit at its
/// P_i, and c·A(W) of each failing share (the ramp is the densest part of the backoff).
/// Without `max`, the verdict shows the resource nearest its own limit (or furthest over
/// it); with `max`, the busiest resource against it.
#[must_use]
pub fn per_resource_calls(subject: Subject<'_>, (w, max): (f64, Option<f64>)) -> Verdict {
    let Subject { plan, a, own, .. } = subject;
    let found = subject.measured(w);
    let busiest = found.iter().map(|r| r.busiest_window).max().unwrap_or(0) as f64;
    let Some(p) = plan.params_of(subject.phase) else {
        return verdict(a, "perResourceCalls", "no plan".into(), f64::NAN, busiest);
    };
    let (b, m) = p.backoff;
    let limits = subject.limits(w);
    // In the coupled regime (§9.7) a failing or throttled resource comes back at the
    // bucket's pace: the simulated limit of its class replaces A(W).
    let coupled = limits.coupled_max();
    let limit_at = |pi: f64| limits.per_resource(pi);
    // The resource nearest its own limit: the largest busiest window over limit.
    let shown = found.iter().map(|r| (r, own.get(&r.name))).max_by(|x, y| {
        (x.0.busiest_window as f64 / limit_at(x.1))
            .total_cmp(&(y.0.busiest_window as f64 / limit_at(y.1)))
    });
    let top = found.iter().max_by_key(|r| r.busiest_window);
    let (observed, interval) = match (max, shown) {
        (Some(_), _) => (busiest, top.map_or(own.default(), |r| own.get(&r.name))),
        (None, Some((r, pi))) => (r.busiest_window as f64, pi),
        (None, None) => (0.0, own.default()),
    };
    let predicted = limit_at(interval);
    let gap = limits.healthy(interval).1;
    let mut v = verdict(
        a,
        "perResourceCalls",
        if coupled > 0.0 {
            "each resource's busiest W ≤ max(c_max·(⌊W/g_i⌋ + 1), c_f·A(W), the coupled regime's per-resource limit) with g_i = min(P_i − j_i, d_max) (§9.4, §9.7)"
        } else {
            "each resource's busiest W ≤ max(c_max·(⌊W/g_i⌋ + 1), c_f·A(W)) with g_i = min(P_i − j_i, d_max) (§9.4)"
        }
        .into(),
        max.unwrap_or(predicted),
        observed,
    );
    v.predicted = predicted;
    v.inputs = format!(
        "W={}, P_i={}, g_i={}, c_max={}, b={}, d_max={}{}{}",
        fmt_num(w),
        fmt_num(interval),
        fmt_num(gap),
        fmt_num(p.c_max),
        fmt_num(b),
        fmt_num(m),
        limits_by_interval(own, limit_at),
        if coupled > 0.0 {
            format!(", coupled={}", fmt_num(coupled))
        } else {
            String::new()
        }
    );
    let mut notes = Vec::new();
    if let Some(top) = top {
        notes.push(format!(
            "busiest: {} with {} calls in {} s (P_i = {} s, limit {})",
            top.name,
            top.busiest_window,
            fmt_num(w),
            fmt_num(own.get(&top.name)),
            fmt_num(limit_at(own.get(&top.name)))
        ));
    }
    if let (None, Some((r, pi))) = (max, shown) {
        notes.push(format!(
            "nearest its own limit: {} with {} of {}",
            r.name,
            r.busiest_window,
            fmt_num(limit_at(pi))
        ));
    }
    if !notes.is_empty() {
        v.note = Some(notes.join("; "));
    }
    v
}

/// `hotLoops`: resources whose busiest window holds more than `factor` times what their own
/// interval allows (§9.4); the verdict names them.
#[must_use]
pub fn hot_loops_verdict(subject: Subject<'_>, (w, factor, max): (f64, f64, u64)) -> Verdict {
    let Subject { a, own, .. } = subject;
    let found = subject.measured(w);
    // A resource whose rate the crossplane rules explain (the coupled regime's simulated
    // limit of its class, §9.7) is not a hot loop: its own limit is the larger one.
    let limits = subject.limits(w);
    let coupled = &limits.coupled;
    let limit_at = |pi: f64| factor * limits.healthy(pi).0;
    let gap = limits.healthy(own.default()).1;
    let hot = hot_loops_by(&found, |r| limits.hot(&r.name, own.get(&r.name), factor));
    let mut v = verdict(
        a,
        "hotLoops",
        if coupled.is_empty() {
            "resources with calls in some W > k·c_max·(⌊W/g_i⌋ + 1), g_i = min(P_i − j_i, d_max) (§9.4)"
        } else {
            "resources with calls in some W > k·max(c_max·(⌊W/g_i⌋ + 1), the coupled regime's limit of their class), g_i = min(P_i − j_i, d_max) (§9.4, §9.7)"
        }
        .into(),
        max as f64,
        hot.len() as f64,
    );
    v.predicted = 0.0;
    v.inputs = format!(
        "W={}, k={}, g={}, per-resource limit={}{}",
        fmt_num(w),
        fmt_num(factor),
        fmt_num(gap),
        fmt_num(limit_at(own.default())),
        limits_by_interval(own, limit_at)
    );
    if !hot.is_empty() {
        let names: Vec<String> = hot
            .iter()
            .take(10)
            .map(|r| {
                format!(
                    "{} ({} calls, limit {})",
                    r.name,
                    r.busiest_window,
                    fmt_num(limits.hot(&r.name, own.get(&r.name), factor))
                )
            })
            .collect();
        let more = hot.len().saturating_sub(10);
        v.note = Some(format!(
            "hot: {}{}",
            names.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    v
}

/// `pollPeriod`: each healthy resource's mean realised period between Observes in the hold
/// against its own predicted one (§9.2), P_i stretched by the wait the healthy resources
/// share plus L̄, within `tolerance` percent on average: the mean of observed ÷ predicted
/// is within `tolerance` of 1. A resource polled every hour by its annotation is held to
/// an hour, not to the flag's P.
#[must_use]
pub fn poll_period_verdict(subject: Subject<'_>, tolerance: f64) -> Verdict {
    let Subject {
        s, plan, a, own, ..
    } = subject;
    let phase = subject.phase.unwrap_or_default();
    let planned = planned_faults(s);
    let found = subject.measured(1.0);
    let poll = s.settings.poll_interval.as_secs_f64();
    let l = plan
        .phases
        .iter()
        .find(|x| x.name == phase)
        .map_or(0.0, |x| x.params.l);
    // The wait every healthy resource gets: the plan's stretched period over P (§9.2).
    let stretch = plan
        .find(&format!("{phase}/error-paths/healthy-poll-period"))
        .map_or(0.0, |p| (p.value - poll).max(0.0));
    let (mut observed, mut predicted, mut ratio, mut n) = (0.0, 0.0, 0.0, 0.0);
    let mut intervals = std::collections::BTreeSet::new();
    for r in &found {
        if planned.contains_key(&r.name) || !r.mean_period_s.is_finite() {
            continue;
        }
        let p_i = own.get(&r.name);
        let expected = p_i + stretch + l;
        intervals.insert((p_i * 1e3).round() as u64);
        observed += r.mean_period_s;
        predicted += expected;
        ratio += r.mean_period_s / expected;
        n += 1.0;
    }
    let (observed, predicted, deviation) = if n > 0.0 {
        (observed / n, predicted / n, (ratio / n - 1.0).abs() * 100.0)
    } else {
        (f64::NAN, poll + stretch + l, f64::NAN)
    };
    Verdict {
        formula: "|mean over healthy i of period_i / (P_i + max(0, N_h/(R − Σ n_f·λ_f) − P) + L̄) − 1| ≤ tolerance (§9.2)"
            .into(),
        inputs: format!(
            "P={}, stretch={}, L̄={}, healthy resources={}, own intervals={}",
            fmt_num(poll),
            fmt_num(stretch),
            fmt_num(l),
            n,
            intervals.len()
        ),
        predicted: 0.0,
        note: Some(if n > 0.0 {
            format!(
                "deviation in percent of each resource's predicted period; mean period over the healthy resources {} s observed, {} s predicted",
                fmt_num(observed),
                fmt_num(predicted)
            )
        } else {
            "no healthy resource polled twice in the hold: no period to measure".to_owned()
        }),
        ..Verdict::at_most(&a.name, "pollPeriod", tolerance, deviation)
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod own_interval_tests;
