//! What a phase acts on: the live resources' poll classes, resources per controller and per
//! account, and the windows the plan reports bounds for.

use std::collections::BTreeSet;

use crate::predict::steady::PollClass;
use crate::scenario::{Action, Calls, Check, GroupKind, Phase, Scenario};

pub(super) fn kinds(s: &Scenario) -> Vec<GroupKind> {
    s.groups
        .iter()
        .map(|g| g.kind.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// σ: the scopes of the kinds of the groups in `on` (1 when none is).
pub(super) fn scopes_in_use(s: &Scenario, on: &[bool]) -> u32 {
    let scopes: BTreeSet<_> = s
        .groups
        .iter()
        .zip(on)
        .filter(|(_, on)| **on)
        .map(|(g, _)| g.kind.scope() == limiter::crossplane::Scope::Cluster)
        .collect();
    scopes.len().max(1) as u32
}

/// (c_max, c_poll) over the kinds of the groups in `on` (docs/budget.md §10): the most
/// calls a reconcile, and a poll, of any of them makes (the sample kinds' 2 and 1 when none
/// is).
pub(super) fn calls_in_use(s: &Scenario, on: &[bool]) -> (f64, f64) {
    let used: Vec<Calls> = s
        .groups
        .iter()
        .zip(on)
        .filter(|(_, on)| **on)
        .map(|(g, _)| s.calls.get(&g.kind).copied().unwrap_or(Calls::SAMPLE))
        .collect();
    if used.is_empty() {
        return (
            f64::from(Calls::SAMPLE.max()),
            f64::from(Calls::SAMPLE.poll()),
        );
    }
    (
        f64::from(used.iter().map(Calls::max).max().unwrap_or(0)),
        f64::from(used.iter().map(Calls::poll).max().unwrap_or(0)),
    )
}

/// The poll classes of the groups `alive` marks, less `off_poll` resources per group (those
/// on the failure backoff, §9.6), taken from the group's classes in proportion.
pub(super) fn classes(s: &Scenario, alive: &[bool], off_poll: &[(usize, f64)]) -> Vec<PollClass> {
    let ks = kinds(s);
    let mut out = Vec::new();
    for (i, (g, on)) in s.groups.iter().zip(alive).enumerate() {
        if !on {
            continue;
        }
        let off: f64 = off_poll
            .iter()
            .filter(|(x, _)| *x == i)
            .map(|(_, n)| n)
            .sum();
        let keep = if g.count == 0 {
            0.0
        } else {
            (1.0 - off / f64::from(g.count)).max(0.0)
        };
        let controller = ks.iter().position(|k| *k == g.kind).unwrap_or(0);
        for (interval, count) in crate::predict::intervals::histogram(s, i, 0..g.count) {
            out.push(PollClass {
                interval,
                count: count * keep,
                controller,
            });
        }
    }
    out
}

pub(super) fn per_controller(s: &Scenario, groups: &[usize]) -> Vec<f64> {
    let ks = kinds(s);
    let mut v = vec![0.0; ks.len()];
    for &g in groups {
        let grp = &s.groups[g];
        let c = ks.iter().position(|k| *k == grp.kind).unwrap_or(0);
        v[c] += f64::from(grp.count);
    }
    v
}

/// The windows the plan reports bounds for: 1 s, 10 s and every assertion's window (a
/// sweep measures its points' peaks over the same).
pub(crate) fn windows(s: &Scenario) -> Vec<f64> {
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

pub(super) fn phase_duration(phase: &Phase) -> f64 {
    match &phase.action {
        Action::Hold { duration } | Action::CloudOutage { duration, .. } => duration.as_secs_f64(),
        Action::CloudLatency { duration, .. } => {
            duration.map_or(phase.timeout.as_secs_f64(), |d| d.as_secs_f64())
        }
        _ => phase.timeout.as_secs_f64(),
    }
}

pub(super) fn account_counts(s: &Scenario, groups: &[usize]) -> Vec<(String, f64)> {
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

/// The groups a phase acts on; all groups when it names none.
pub(super) fn acted_groups(s: &Scenario, groups: &[usize]) -> Vec<usize> {
    if groups.is_empty() {
        (0..s.groups.len()).collect()
    } else {
        groups.to_vec()
    }
}
