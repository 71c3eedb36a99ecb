//! What every verdict gets once its check has judged it.

use crate::predict::{Plan, fmt_num};
use crate::result::model::{LimitKind, Outcome, StopCause, Verdict};
use crate::result::observe::{Observations, PhaseSpan};
use crate::scenario::{Assertion, Check};

/// What every verdict gets once its check has judged it: the window the report marks, the
/// kind of its limit, its outcome, and whether the model covers check `check` (its name as
/// scenarios spell it) and its phase finished.
pub(super) fn settle(
    mut v: Verdict,
    (a, check): (&Assertion, &str),
    plan: &Plan,
    obs: &Observations,
    phase: Option<String>,
    span: Option<&PhaseSpan>,
) -> Verdict {
    v.calls_window_s = match &a.check {
        Check::CloudCalls { window, .. } | Check::SteadyRate { window, .. }
            if a.account.is_none() =>
        {
            Some(window.as_secs_f64())
        }
        _ => None,
    };
    // The per-resource checks compute their limits from §9's formulas without a
    // prediction: their kind is that of the sections they cite.
    v.kind = match &a.check {
        Check::PerResourceCalls { max: None, .. } | Check::HotLoops { .. } => {
            LimitKind::of("[D] §9.4", crate::predict::Meaning::UpperBound)
        }
        Check::PollPeriod { .. } => LimitKind::of("[A] §9.2", crate::predict::Meaning::Expected),
        _ => v.kind,
    };
    if v.outcome != Outcome::Unmeasured {
        v.outcome = if v.pass { Outcome::Pass } else { Outcome::Fail };
    }
    let why: Vec<&str> = phase
        .as_ref()
        .map(|p| unmodeled(plan, p, check))
        .unwrap_or_default();
    if !why.is_empty() {
        v.outcome = Outcome::Unmodeled;
        v.pass = true;
        v.note = Some(format!(
            "UNMODELED: {}; measured {} against the uncovered limit {}{}",
            why.join("; "),
            fmt_num(v.observed),
            fmt_num(v.limit),
            v.note.map(|n| format!("; {n}")).unwrap_or_default()
        ));
    }
    let unfinished = match (&phase, span) {
        (Some(p), None) => Some(format!("phase {p} never ran")),
        (Some(p), Some(sp)) if !sp.completed => Some(match &sp.failure {
            Some(f) => format!("phase {p} stopped: {}", f.headline()),
            None => format!("phase {p} did not complete"),
        }),
        (Some(_), Some(_)) => None,
        (None, _) => obs.stopped.as_ref().map(|st| match st.cause {
            StopCause::Interrupted(sig) => format!(
                "the run was interrupted ({}) during phase {}",
                sig.name(),
                st.phase
            ),
            StopCause::TimedOut => format!("the run stopped when phase {} timed out", st.phase),
            StopCause::ProviderExited(_) => {
                format!("the provider exited by itself during phase {}", st.phase)
            }
        }),
    };
    if let Some(why) = unfinished {
        if v.pass || (phase.is_some() && span.is_none()) {
            v.outcome = Outcome::Incomplete;
            v.pass = false;
            v.note = Some(format!(
                "{why}: within its limit so far, but not a pass{}",
                v.note.map(|n| format!("; {n}")).unwrap_or_default()
            ));
        } else {
            v.note = Some(format!(
                "{}{why}",
                v.note.map(|n| n + "; ").unwrap_or_default()
            ));
        }
    }
    v.phase = phase;
    v
}

/// The reasons the plan gives for `check` not being modelled in `phase`.
fn unmodeled<'a>(plan: &'a Plan, phase: &str, check: &str) -> Vec<&'a str> {
    let prefix = format!("{phase}/unmodeled/");
    plan.all()
        .filter(|c| c.id.starts_with(&prefix) && c.value >= 1.0)
        .filter(|c| c.checks.iter().any(|x| x == check))
        .map(|c| {
            c.note
                .as_deref()
                .unwrap_or("the formula does not cover this phase")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::evaluate;
    use crate::result::observe::Observations;
    use crate::result::observe::PhaseSpan;

    /// A read quota below the polls under controller-runtime's model, which the simulation
    /// of the coupled regime (crossplane's) does not cover.
    const MIXED: &str = "apiVersion: harness/v1\nname: mixed\nprovider: {rateLimitModel: controller-runtime, maxReconcileRate: 5, pollInterval: 1m}\ncloud:\n  quotas:\n    read: {burst: 20, perSecond: 4}\nresources:\n  - name: b\n    kind: Bucket\n    count: 300\n    faults: [{percent: 5, error: Conflict}]\n    annotations: [{percent: 10, values: {crossplane.io/poll-interval: 10s}}]\nphases:\n  - {name: create, action: create, rate: 20}\n  - {name: hold, action: hold, duration: 1h}\nassertions:\n  - {check: steadyRate, phase: hold}\n  - {check: cloudCalls, window: 10s}\n";

    fn observations() -> Observations {
        Observations {
            duration_us: 3_700_000_000,
            phases: vec![
                PhaseSpan::complete("create", 0, 100_000_000),
                PhaseSpan::complete("hold", 100_000_000, 3_700_000_000),
            ],
            ..Observations::default()
        }
    }

    #[test]
    fn a_check_the_model_does_not_cover_is_unmodeled_with_its_reason_and_strict_fails_it() {
        let s = crate::scenario::parse(MIXED, "mixed.yaml").expect("valid");
        let plan = crate::predict::plan(&s);
        let mut r = evaluate(&s, &plan, &observations());
        let steady = &r.verdicts[0];
        assert_eq!(steady.outcome, Outcome::Unmodeled, "{steady:?}");
        assert!(steady.pass);
        let note = steady.note.as_deref().unwrap_or_default();
        assert!(
            note.starts_with("UNMODELED: the cloud's read quota rejects"),
            "{note}"
        );
        assert!(
            note.contains("measured 0 against the uncovered limit"),
            "{note}"
        );
        // A run-wide hard bound is covered.
        assert_eq!(r.verdicts[1].outcome, Outcome::Pass);
        assert!(r.passed());
        assert!(r.headline().contains("1 UNMODELED"), "{}", r.headline());
        r.make_strict();
        assert!(!r.passed());
        assert!(!r.verdicts[0].pass && r.verdicts[1].pass);
    }
}
