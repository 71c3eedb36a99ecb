//! From a scenario's hold to the classes and settings the simulation runs.

use limiter::crossplane::{ErrorRequeue, ObserveOnlyAbsent, RateLimitModel};

use super::{Behaviour, Class, Config, Outcome, simulate};
use crate::predict::params::Params;
use crate::predict::quota_wave::Quota;
use crate::scenario::{Calls, GroupFault, Scenario};

/// The label of resource `index` of group `g`: its faulted share's id, or its interval's
/// healthy class.
#[must_use]
pub fn class_label(s: &Scenario, g: usize, index: u32) -> String {
    let group = &s.groups[g];
    if group.observe_only() {
        return format!("{}/observe-only-absent", group.name);
    }
    match group.fault(index) {
        Some(f @ (GroupFault::Error { .. } | GroupFault::Drift { .. })) => {
            format!("{}/{}", group.name, f.label())
        }
        _ => format!(
            "{}/poll-{}",
            group.name,
            crate::predict::fmt_num(
                group
                    .poll_interval_of(index, &s.settings, &s.name)
                    .as_secs_f64()
            )
        ),
    }
}

/// The classes of the groups `alive` marks in a hold of `s`.
#[must_use]
pub fn classes(s: &Scenario, p: &Params, alive: &[bool]) -> Vec<Class> {
    let kinds: Vec<_> = s
        .groups
        .iter()
        .map(|g| g.kind.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let accounts: Vec<&str> = s.cloud.accounts.iter().map(|a| a.name.as_str()).collect();
    let mut out: Vec<Class> = Vec::new();
    for (gi, g) in s.groups.iter().enumerate() {
        if !alive.get(gi).copied().unwrap_or(false) {
            continue;
        }
        let reads = s
            .calls
            .get(&g.kind)
            .copied()
            .unwrap_or(Calls::SAMPLE)
            .poll();
        let controller = kinds.iter().position(|k| *k == g.kind).unwrap_or(0);
        let account = accounts.iter().position(|a| *a == g.account).unwrap_or(0);
        // A group with neither faults nor annotations is one class: no need to visit each
        // resource (a hundred thousand of them).
        let uniform = !g.observe_only() && g.faults.is_empty() && g.annotations.is_empty();
        if uniform && g.count > 0 {
            let interval = s.settings.poll_interval.as_secs_f64();
            let label = class_label(s, gi, 0);
            match out.iter_mut().find(|c| c.label == label) {
                Some(c) => c.n += g.count as usize,
                None => out.push(Class {
                    label,
                    n: g.count as usize,
                    interval,
                    jitter: p.jitter_of(interval),
                    behaviour: Behaviour::Healthy,
                    reads,
                    account,
                    controller,
                }),
            }
            continue;
        }
        for i in 0..g.count {
            let label = class_label(s, gi, i);
            if let Some(c) = out.iter_mut().find(|c| c.label == label) {
                c.n += 1;
                continue;
            }
            let interval = g.poll_interval_of(i, &s.settings, &s.name).as_secs_f64();
            let behaviour = if g.observe_only() {
                if s.settings.observe_only_absent == ObserveOnlyAbsent::Backoff {
                    Behaviour::FailObserve
                } else {
                    Behaviour::Healthy
                }
            } else {
                match g.fault(i) {
                    Some(GroupFault::Error { error, .. }) => match error {
                        mock_cloud::LastingError::AccessDenied => Behaviour::FailObserve,
                        mock_cloud::LastingError::Conflict
                        | mock_cloud::LastingError::Validation => Behaviour::FailCreate,
                    },
                    Some(GroupFault::Drift { .. }) => Behaviour::Drift,
                    _ => Behaviour::Healthy,
                }
            };
            out.push(Class {
                label,
                n: 1,
                interval,
                jitter: p.jitter_of(interval),
                behaviour,
                reads,
                account,
                controller,
            });
        }
    }
    out
}

/// The simulated hold of `t` seconds of the groups `alive` marks, with the busiest counts of
/// `windows`; `None` where the model does not apply (not the `crossplane` model, or errors
/// requeued at once).
#[must_use]
pub fn hold(s: &Scenario, p: &Params, alive: &[bool], t: f64, windows: &[f64]) -> Option<Outcome> {
    if p.model != RateLimitModel::Crossplane || s.settings.error_requeue == ErrorRequeue::Immediate
    {
        return None;
    }
    let classes = classes(s, p, alive);
    let quotas = s
        .cloud
        .accounts
        .iter()
        .map(|a| {
            let q = |x: Option<crate::scenario::Quota>| {
                x.map(|q| Quota {
                    burst: q.burst,
                    per_second: q.per_second,
                })
            };
            (q(a.quotas.read), q(a.quotas.mutate))
        })
        .collect();
    let controllers = classes.iter().map(|c| c.controller + 1).max().unwrap_or(1);
    let cfg = Config {
        bucket: (p.r, p.b),
        backoff: p.backoff,
        workers: p.w.max(1.0) as usize,
        controllers,
        reconcile: p.l,
        quotas,
        duration: t,
        windows: windows.to_vec(),
    };
    Some(simulate(&cfg, &classes))
}
