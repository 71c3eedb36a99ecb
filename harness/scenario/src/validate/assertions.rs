//! The `assertions` section: which fields each check takes, and the phase it needs.

use std::time::Duration;

use limiter::go::GoDuration;

use super::checker::Checker;
use super::phases::Declared;
use super::pos;
use crate::model::{Action, Assertion, Check, Cloud, TtrLimit};
use crate::raw::{CheckName, RawAssertion};

const DEFAULT_WINDOW: Duration = Duration::from_secs(10);
/// The default window of the per-resource checks: long enough for the backoff to reach its
/// cap and for several polls.
const PER_RESOURCE_WINDOW: Duration = Duration::from_secs(600);

/// A `memoryGrowth` check's limit when it gives no `max`, in percent.
const DEFAULT_MEMORY_GROWTH_PERCENT: f64 = 5.0;

fn check_str(k: CheckName) -> &'static str {
    match k {
        CheckName::CloudCalls => "cloudCalls",
        CheckName::ApiRequests => "apiRequests",
        CheckName::SteadyRate => "steadyRate",
        CheckName::Throttles => "throttles",
        CheckName::TimeToReady => "timeToReady",
        CheckName::Orphans => "orphans",
        CheckName::Duplicates => "duplicates",
        CheckName::DrainEfficiency => "drainEfficiency",
        CheckName::Stuck => "stuck",
        CheckName::Lost => "lost",
        CheckName::MemoryGrowth => "memoryGrowth",
        CheckName::PerResourceCalls => "perResourceCalls",
        CheckName::HotLoops => "hotLoops",
        CheckName::PollPeriod => "pollPeriod",
        CheckName::RetryAfterHonoured => "retryAfterHonoured",
        CheckName::OperationCalls => "operationCalls",
        CheckName::CallsPerReconcile => "callsPerReconcile",
        CheckName::CoreApiRequests => "coreApiRequests",
        CheckName::FunctionCalls => "functionCalls",
        CheckName::XrTimeToReady => "xrTimeToReady",
        CheckName::BreakerOpens => "breakerOpens",
        CheckName::StaleXrs => "staleXRs",
    }
}

pub(super) fn assertions(
    c: &mut Checker,
    raw: &[RawAssertion],
    phases: &[Declared],
    cloud: &Cloud,
) -> Vec<Assertion> {
    raw.iter()
        .filter_map(|a| assertion(c, a, phases, cloud))
        .collect()
}

fn assertion(
    c: &mut Checker,
    a: &RawAssertion,
    phases: &[Declared],
    cloud: &Cloud,
) -> Option<Assertion> {
    let k = a.check.value;
    let allowed: &[&str] = match k {
        CheckName::CloudCalls => &["phase", "account", "window", "max"],
        CheckName::ApiRequests | CheckName::SteadyRate => &["phase", "window", "max"],
        CheckName::Throttles => &["phase", "account", "max"],
        CheckName::TimeToReady => &["phase", "quantile", "tolerancePercent", "maxDuration"],
        CheckName::Orphans | CheckName::Duplicates => &["max"],
        CheckName::DrainEfficiency => &["phase", "min"],
        CheckName::Stuck => &["phase", "max", "allowInterrupted"],
        CheckName::Lost | CheckName::MemoryGrowth => &["phase", "max"],
        CheckName::PerResourceCalls => &["phase", "window", "max"],
        CheckName::HotLoops => &["phase", "window", "factor", "max"],
        CheckName::PollPeriod => &["phase", "tolerancePercent"],
        CheckName::RetryAfterHonoured => &["phase", "account", "max"],
        CheckName::OperationCalls => &["phase", "operation", "window", "max"],
        CheckName::CallsPerReconcile => &["kind", "path", "max"],
        // Core's counts can be read per phase (`run::core::phases`).
        CheckName::CoreApiRequests => &["window", "max", "phase"],
        CheckName::FunctionCalls => &["max", "phase"],
        CheckName::BreakerOpens => &["max", "min", "phase"],
        CheckName::StaleXrs => &["max", "grace"],
        CheckName::XrTimeToReady => &["quantile", "maxDuration", "tolerancePercent"],
    };
    let present = [
        ("phase", a.phase.as_ref().map(pos)),
        ("account", a.account.as_ref().map(pos)),
        ("window", a.window.as_ref().map(pos)),
        ("max", a.max.as_ref().map(pos)),
        ("maxDuration", a.max_duration.as_ref().map(pos)),
        ("min", a.min.as_ref().map(pos)),
        ("grace", a.grace.as_ref().map(pos)),
        ("quantile", a.quantile.as_ref().map(pos)),
        ("tolerancePercent", a.tolerance_percent.as_ref().map(pos)),
        ("allowInterrupted", a.allow_interrupted.as_ref().map(pos)),
        ("factor", a.factor.as_ref().map(pos)),
        ("operation", a.operation.as_ref().map(pos)),
        ("kind", a.kind.as_ref().map(pos)),
        ("path", a.path.as_ref().map(pos)),
    ];
    for (field, at) in present {
        if let Some(at) = at
            && !allowed.contains(&field)
        {
            c.err(
                at,
                format!(
                    "`{field}` does not apply to a {} check, expected only {}",
                    check_str(k),
                    allowed.join(", ")
                ),
            );
        }
    }
    let phase = match &a.phase {
        Some(p) => {
            let Some(i) = phases.iter().position(|x| x.name == p.value) else {
                c.unknown(p, "phase", phases.iter().map(|x| x.name.as_str()));
                return None;
            };
            // A phase whose body failed its checks has said so; naming it is no mistake.
            phases[i].phase.as_ref()?;
            Some(i)
        }
        None => None,
    };
    let action = |i: usize| phases[i].phase.as_ref().map(|p| &p.action);
    let phase_action = phase.and_then(action);
    if let (Some(p), Some(Action::Kill { .. })) = (&a.phase, phase_action) {
        c.err(
            pos(p),
            format!(
                "phase {:?} is a kill phase, expected the phase its kills interrupt",
                p.value
            ),
        );
        return None;
    }
    let budget = matches!(
        k,
        CheckName::CloudCalls
            | CheckName::ApiRequests
            | CheckName::SteadyRate
            | CheckName::TimeToReady
            | CheckName::DrainEfficiency
    );
    let killed = |i: usize| {
        (0..phases.len())
            .any(|k| matches!(action(k), Some(Action::Kill { during, .. }) if *during == i))
    };
    let has_kills = match phase {
        Some(i) => killed(i),
        None => (0..phases.len()).any(killed),
    };
    if budget && has_kills {
        c.err(
            pos(&a.check),
            format!(
                "a {} check cannot cover a phase with kills: each kill starts a provider with a full bucket and an empty cache, which the budget does not predict; expected `phase` naming a phase without kills",
                check_str(k)
            ),
        );
        return None;
    }
    let need_phase = |c: &mut Checker, what: &str, ok: bool| -> bool {
        if !ok {
            c.err(
                pos(&a.check),
                format!("a {} check needs `phase` naming {what}", check_str(k)),
            );
        }
        ok
    };
    if let Some(acc) = &a.account
        && cloud.account(&acc.value).is_none()
    {
        c.unknown(
            acc,
            "account",
            cloud.accounts.iter().map(|a| a.name.as_str()),
        );
    }
    let default_window = match k {
        CheckName::PerResourceCalls | CheckName::HotLoops => PER_RESOURCE_WINDOW,
        _ => DEFAULT_WINDOW,
    };
    let window = c.opt_duration(a.window.as_ref(), "window", default_window);
    let max = a
        .max
        .as_ref()
        .and_then(|m| c.range(m, "max", 0.0, false, f64::INFINITY));
    let count = max.map_or(0, |m| m as u64);
    let check = match k {
        CheckName::CloudCalls => Check::CloudCalls { window, max },
        CheckName::ApiRequests => Check::ApiRequests { window, max },
        CheckName::SteadyRate => {
            if !need_phase(
                c,
                "a hold phase",
                matches!(phase_action, Some(Action::Hold { .. })),
            ) {
                return None;
            }
            Check::SteadyRate { window, max }
        }
        CheckName::OperationCalls => {
            let Some(op) = &a.operation else {
                c.err(
                    pos(&a.check),
                    "an operationCalls check needs `operation`: an operation (s3:GetBucketTagging) or a service (s3)",
                );
                return None;
            };
            let v = op.value.trim();
            if v.is_empty() || v.starts_with(':') || v.matches(':').count() > 1 {
                c.err(
                    pos(op),
                    format!("operation {:?} is not service:Operation or a service, expected such as s3:GetBucketTagging or s3", op.value),
                );
                return None;
            }
            Check::OperationCalls {
                operation: v.trim_end_matches(':').to_owned(),
                window,
                max,
            }
        }
        CheckName::CallsPerReconcile => {
            if let Some(p) = &a.path
                && !crate::model::CALL_PATHS.contains(&p.value.as_str())
            {
                c.err(
                    pos(p),
                    format!(
                        "unknown path {:?}, expected one of {}",
                        p.value,
                        crate::model::CALL_PATHS.join(", ")
                    ),
                );
                return None;
            }
            Check::CallsPerReconcile {
                kind: a.kind.as_ref().map(|k| k.value.clone()),
                path: a.path.as_ref().map(|p| p.value.clone()),
                extra: max.unwrap_or(0.0),
            }
        }
        CheckName::CoreApiRequests
        | CheckName::FunctionCalls
        | CheckName::XrTimeToReady
        | CheckName::BreakerOpens
        | CheckName::StaleXrs => {
            Check::Core(super::composite_checks::check(c, a, (window, max, count))?)
        }
        CheckName::Throttles => Check::Throttles { max: count },
        CheckName::Orphans => Check::Orphans { max: count },
        CheckName::Duplicates => Check::Duplicates { max: count },
        CheckName::Stuck => Check::Stuck {
            max: count,
            allow_interrupted: a.allow_interrupted.as_ref().is_some_and(|b| b.value),
        },
        CheckName::Lost => Check::Lost { max: count },
        CheckName::MemoryGrowth => Check::MemoryGrowth {
            max_percent: max.unwrap_or(DEFAULT_MEMORY_GROWTH_PERCENT),
        },
        CheckName::TimeToReady => {
            if !need_phase(
                c,
                "a create phase",
                matches!(phase_action, Some(Action::Create { .. })),
            ) {
                return None;
            }
            let quantile = a
                .quantile
                .as_ref()
                .map_or(Some(0.99), |q| c.range(q, "quantile", 0.0, true, 1.0))?;
            let limit = match (&a.max_duration, &a.tolerance_percent) {
                (Some(d), _) => TtrLimit::Fixed(c.positive_duration(d, "maxDuration")?),
                (None, Some(t)) => TtrLimit::Predicted {
                    tolerance_percent: c.range(t, "tolerancePercent", 0.0, false, f64::INFINITY)?,
                },
                (None, None) => TtrLimit::Predicted {
                    tolerance_percent: 25.0,
                },
            };
            Check::TimeToReady { quantile, limit }
        }
        CheckName::PerResourceCalls => Check::PerResourceCalls { window, max },
        CheckName::RetryAfterHonoured => Check::RetryAfterHonoured { max: count },
        CheckName::HotLoops => {
            let factor = a.factor.as_ref().map_or(Some(3.0), |f| {
                c.range(f, "factor", 0.0, true, f64::INFINITY)
            })?;
            Check::HotLoops {
                window,
                factor,
                max: count,
            }
        }
        CheckName::PollPeriod => {
            if !need_phase(
                c,
                "a hold phase",
                matches!(phase_action, Some(Action::Hold { .. })),
            ) {
                return None;
            }
            let tolerance_percent = a.tolerance_percent.as_ref().map_or(Some(20.0), |t| {
                c.range(t, "tolerancePercent", 0.0, true, f64::INFINITY)
            })?;
            Check::PollPeriod { tolerance_percent }
        }
        CheckName::DrainEfficiency => {
            let backlog = matches!(
                phase_action,
                Some(
                    Action::Create { .. }
                        | Action::Resync { .. }
                        | Action::Update { .. }
                        | Action::Delete { .. }
                        | Action::Restart
                )
            );
            if !need_phase(
                c,
                "a create, resync, update, restart or delete phase",
                backlog,
            ) {
                return None;
            }
            let min = a
                .min
                .as_ref()
                .map_or(Some(0.8), |m| c.range(m, "min", 0.0, true, 1.0))?;
            Check::DrainEfficiency { min }
        }
    };
    let name = match &a.name {
        Some(n) => n.value.clone(),
        None => default_name(
            k,
            &check,
            phase.map(|i| phases[i].name.as_str()),
            a.account.as_ref().map(|s| s.value.as_str()),
        ),
    };
    Some(Assertion {
        name,
        check,
        phase,
        account: a.account.as_ref().map(|s| s.value.clone()),
        pos: pos(&a.check),
    })
}

fn default_name(k: CheckName, check: &Check, phase: Option<&str>, account: Option<&str>) -> String {
    let mut n = check_str(k).to_owned();
    match check {
        Check::CloudCalls { window, .. }
        | Check::ApiRequests { window, .. }
        | Check::SteadyRate { window, .. }
        | Check::PerResourceCalls { window, .. }
        | Check::HotLoops { window, .. } => {
            n.push_str(&format!(" per {}", GoDuration::from_std(*window)));
        }
        Check::TimeToReady { quantile, .. } => n.push_str(&format!(" p{}", quantile * 100.0)),
        Check::OperationCalls {
            operation, window, ..
        } => n.push_str(&format!(
            " {operation} per {}",
            GoDuration::from_std(*window)
        )),
        Check::CallsPerReconcile { kind, path, .. } => {
            for part in [kind, path].into_iter().flatten() {
                n.push_str(&format!(" {part}"));
            }
        }
        _ => {}
    }
    if let Some(p) = phase {
        n.push_str(&format!(" [{p}]"));
    }
    if let Some(a) = account {
        n.push_str(&format!(" account {a}"));
    }
    n
}
