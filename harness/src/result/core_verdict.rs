//! The verdicts of the checks of core's composite layer: `coreApiRequests`,
//! `functionCalls`, `xrTimeToReady`, `breakerOpens` and `staleXRs`, on the
//! [`CoreReport`] of a run.

use super::core::CoreReport;
use super::model::{LimitKind, Outcome, Verdict};
use crate::scenario::composite::CoreCheck;
use crate::scenario::{Assertion, Check, Scenario};

/// The check's name, as scenario files spell it.
#[must_use]
pub fn check_name(c: &CoreCheck) -> &'static str {
    match c {
        CoreCheck::ApiRequests { .. } => "coreApiRequests",
        CoreCheck::FunctionCalls { .. } => "functionCalls",
        CoreCheck::XrTimeToReady { .. } => "xrTimeToReady",
        CoreCheck::BreakerOpens { .. } => "breakerOpens",
        CoreCheck::StaleXrs { .. } => "staleXRs",
    }
}

/// The verdict of `a` (a check of `c`) on what core did (`None`: core did not run or was
/// not measured, which fails the check).
#[must_use]
pub fn verdict(a: &Assertion, c: &CoreCheck, core: Option<&CoreReport>) -> Verdict {
    #[allow(clippy::cast_precision_loss)]
    let (observed, limit, formula, note) = match (c, core) {
        (_, None) => (
            f64::NAN,
            f64::NAN,
            "explicit limit",
            Some("core was not measured: the run started no composite layer (an embedded run of a scenario with `composites` does)".to_owned()),
        ),
        (CoreCheck::ApiRequests { window, max }, Some(r)) => (
            r.max_in_window(*window) as f64,
            *max,
            "explicit limit",
            Some(format!(
                "core's requests (User-Agent {:?}…) in any {:?} window; {} in all, {} PATCHes",
                r.user_agent,
                window,
                r.requests,
                r.patches()
            )),
        ),
        (CoreCheck::FunctionCalls { max }, Some(r)) => (
            r.total_function_calls() as f64,
            *max,
            "explicit limit",
            Some(
                r.function_calls
                    .iter()
                    .map(|(f, n)| format!("{f}: {n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        ),
        (CoreCheck::XrTimeToReady { quantile, max }, Some(r)) => (
            r.ready_quantile(*quantile).unwrap_or(f64::INFINITY),
            max.as_secs_f64(),
            "explicit limit (s)",
            Some(format!(
                "{} of {} XRs Ready; slowest composed resource's p{}: {}",
                r.xrs.iter().filter(|x| x.ready_s.is_some()).count(),
                r.xrs.len(),
                quantile * 100.0,
                r.composed_ready_quantile(*quantile)
                    .map_or_else(|| "none".to_owned(), |s| format!("{s:.3}s"))
            )),
        ),
        (CoreCheck::BreakerOpens { max }, Some(r)) => (
            r.breaker_opens() as f64,
            *max as f64,
            "max (default 0)",
            None,
        ),
        (CoreCheck::StaleXrs { max }, Some(r)) => (
            r.stale.len() as f64,
            *max as f64,
            "max (default 0)",
            (!r.stale.is_empty()).then(|| r.stale.iter().take(10).cloned().collect::<Vec<_>>().join(", ")),
        ),
    };
    Verdict {
        name: a.name.clone(),
        check: check_name(c).to_owned(),
        phase: None,
        formula: formula.to_owned(),
        inputs: String::new(),
        predicted: f64::NAN,
        limit,
        observed,
        upper: true,
        margin: limit - observed,
        pass: observed <= limit,
        outcome: Outcome::default(),
        note: note.filter(|n| !n.is_empty()),
        calls_window_s: None,
        kind: LimitKind::Given,
    }
}

/// Gives `result` what core did and judges the scenario's checks of it again (the
/// verdicts are in assertion order).
pub fn judge(s: &Scenario, result: &mut super::RunResult, core: Option<CoreReport>) {
    result.core = core;
    for (a, v) in s.assertions.iter().zip(result.verdicts.iter_mut()) {
        if let Check::Core(c) = &a.check {
            *v = verdict(a, c, result.core.as_ref());
            v.outcome = if v.pass { Outcome::Pass } else { Outcome::Fail };
            if result.partial && v.pass {
                v.outcome = Outcome::Incomplete;
                v.pass = false;
                v.note = Some(format!(
                    "the run stopped early: within its limit so far, but not a pass{}",
                    v.note.take().map(|n| format!("; {n}")).unwrap_or_default()
                ));
            }
        }
    }
}
