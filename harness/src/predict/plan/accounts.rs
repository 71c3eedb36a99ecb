//! Cloud quotas per account and action class: what a backlog phase needs of each, and
//! whether the provider can be throttled by them.

use limiter::crossplane::RateLimitModel;

use super::scope::{account_counts, acted_groups};
use crate::predict::backlog::{Backlog, QuotaNeed};
use crate::predict::formula::{Meaning, Prediction, fmt_num};
use crate::predict::params::Params;
use crate::predict::quota::{self, ThrottleVerdict};
use crate::predict::quota_wave::{self, Quota, WaveOutcome};
use crate::scenario::{Action, ActionClass, Scenario};

/// Calls per resource by class for a backlog phase: (class, calls per resource).
fn class_calls(action: &Action, m: f64) -> Vec<(ActionClass, f64)> {
    match action {
        Action::Create { .. } => vec![(ActionClass::Read, m), (ActionClass::Mutate, 1.0)],
        Action::Update { .. } => vec![(ActionClass::Read, 1.0), (ActionClass::Mutate, 1.0)],
        Action::Delete { .. } => vec![(ActionClass::Read, m), (ActionClass::Delete, 1.0)],
        _ => vec![(ActionClass::Read, 1.0)],
    }
}

pub(super) fn quota_needs(
    s: &Scenario,
    action: &Action,
    groups: &[usize],
    b: &Backlog,
) -> Vec<QuotaNeed> {
    let groups = acted_groups(s, groups);
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

/// A creation wave under the quotas of the accounts it creates in, simulated per account
/// (budget.md §6.3); None when no account of the wave has a read or mutate quota. With
/// several accounts the slowest one's outcome is taken (they share the provider's bucket,
/// which the per-account simulation does not see).
pub(super) fn simulated_creation(
    s: &Scenario,
    p: &Params,
    groups: &[usize],
    arrival_rate: Option<f64>,
) -> Option<WaveOutcome> {
    let quota_of = |acct: &str, class| {
        s.cloud
            .account(acct)
            .and_then(|a| a.quotas.get(class))
            .map(|q| Quota {
                burst: q.burst,
                per_second: q.per_second,
            })
    };
    account_counts(s, &acted_groups(s, groups))
        .into_iter()
        .filter_map(|(acct, n)| {
            let (read, mutate) = (
                quota_of(&acct, ActionClass::Read),
                quota_of(&acct, ActionClass::Mutate),
            );
            (read.is_some() || mutate.is_some())
                .then(|| quota_wave::creation_wave(p, n as usize, arrival_rate, read, mutate))
        })
        .max_by(|a, b| a.last_ready.total_cmp(&b.last_ready))
}

pub(super) fn quota_predictions(
    s: &Scenario,
    p: &Params,
    name: &str,
    action: &Action,
    groups: &[usize],
    preds: &mut Vec<Prediction>,
) {
    let groups = acted_groups(s, groups);
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
                        let (k_e, t_e) = p.backoff_escalation();
                        let (t_e, cap) = (fmt_num(t_e), fmt_num(p.backoff.1));
                        format!("min({t_e}R, {k_e}·n(0)) + ∫_{{{t_e}s}} (min(R, n(t)/({cap} + L)) − r_m)⁺ dt")
                    } else {
                        "(R − 2·r_m)⁺ · (N − b_m)/r_m".to_owned()
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
