//! The verdicts of the checks of core's composite layer: `coreApiRequests`,
//! `functionCalls`, `xrTimeToReady`, `breakerOpens` and `staleXRs`, on the
//! [`CoreReport`] of a run.

use super::core::{CorePhase, CoreReport};
use super::model::{LimitKind, Outcome, Verdict};
use crate::predict::{Plan, Prediction};
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

/// The plan's prediction a check of `c` reads, when the scenario gives no limit: over the
/// run, or within `phase`.
fn prediction<'a>(c: &CoreCheck, plan: &'a Plan, phase: Option<&str>) -> Option<&'a Prediction> {
    if let Some(ph) = phase {
        return match c {
            CoreCheck::ApiRequests { window, .. } => plan.find(&format!(
                "core/phase/{ph}/api-requests/{}s",
                window.as_secs_f64()
            )),
            CoreCheck::FunctionCalls { .. } => {
                plan.find(&format!("core/phase/{ph}/function-calls"))
            }
            _ => None,
        };
    }
    match c {
        CoreCheck::ApiRequests { window, .. } => {
            plan.find(&format!("core/api-requests/{}s", window.as_secs_f64()))
        }
        CoreCheck::FunctionCalls { .. } => plan.find("core/function-calls"),
        CoreCheck::XrTimeToReady { .. } => plan.find("core/xr-time-to-ready"),
        CoreCheck::BreakerOpens { .. } => plan.find("core/breaker-opens"),
        CoreCheck::StaleXrs { .. } => plan.find("core/stale-xrs"),
    }
}

/// The verdict of `a` (a check of `c`) on what core did (`None`: core did not run or was
/// not measured, which fails the check), its limit the scenario's or, without one, the
/// plan's prediction (budget.md §12), shown beside the observed figure.
#[must_use]
pub fn verdict(
    a: &Assertion,
    c: &CoreCheck,
    core: Option<&CoreReport>,
    (plan, s): (&Plan, &Scenario),
) -> Verdict {
    let phase_name = a.phase.map(|i| s.phases[i].name.as_str());
    let pred = prediction(c, plan, phase_name);
    if let Some(ph) = phase_name {
        let mut v = phase_verdict(a, c, core.and_then(|r| r.phase(ph).map(|p| (r, p))), pred);
        v.phase = Some(ph.to_owned());
        return v;
    }
    let predicted = pred.map_or(f64::NAN, |p| p.value);
    // The limit and whether it is the scenario's; `upper`: at most (else at least).
    let mut upper = true;
    #[allow(clippy::cast_precision_loss)]
    let (limit, given) = match c {
        CoreCheck::ApiRequests { max, .. } | CoreCheck::FunctionCalls { max } => {
            (max.unwrap_or(predicted), max.is_some())
        }
        CoreCheck::XrTimeToReady {
            max,
            tolerance_percent,
            ..
        } => match max {
            Some(d) => (d.as_secs_f64(), true),
            None => (predicted * (1.0 + tolerance_percent / 100.0), false),
        },
        CoreCheck::BreakerOpens { max: Some(m), .. } => (*m as f64, true),
        CoreCheck::BreakerOpens { min: Some(m), .. } => {
            upper = false;
            (*m as f64, true)
        }
        // The plan says circuits surely open: at least that many must (the storm).
        CoreCheck::BreakerOpens { .. } if predicted > 0.0 => {
            upper = false;
            (predicted, false)
        }
        CoreCheck::BreakerOpens { .. } => (0.0, true),
        CoreCheck::StaleXrs { max: Some(m), .. } => (*m as f64, true),
        CoreCheck::StaleXrs { .. } if predicted > 0.0 => (predicted, false),
        CoreCheck::StaleXrs { .. } => (0.0, true),
    };
    #[allow(clippy::cast_precision_loss)]
    let (observed, note) = match (c, core) {
        (_, None) => (
            f64::NAN,
            Some("core was not measured: the run started no composite layer (an embedded run of a scenario with `composites` does)".to_owned()),
        ),
        (CoreCheck::ApiRequests { window, .. }, Some(r)) => (
            r.max_in_window(*window) as f64,
            Some(format!(
                "core's requests (User-Agent {:?}…) in any {:?} window; {} in all, {} PATCHes",
                r.user_agent,
                window,
                r.requests,
                r.patches()
            )),
        ),
        (CoreCheck::FunctionCalls { .. }, Some(r)) => (
            r.total_function_calls() as f64,
            Some(
                r.function_calls
                    .iter()
                    .map(|(f, n)| format!("{f}: {n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        ),
        (CoreCheck::XrTimeToReady { quantile, .. }, Some(r)) => (
            r.ready_quantile(*quantile).unwrap_or(f64::INFINITY),
            Some(format!(
                "{} of {} XRs Ready; slowest composed resource's p{}: {}",
                r.xrs.iter().filter(|x| x.ready_s.is_some()).count(),
                r.xrs.len(),
                quantile * 100.0,
                r.composed_ready_quantile(*quantile)
                    .map_or_else(|| "none".to_owned(), |s| format!("{s:.3}s"))
            )),
        ),
        (CoreCheck::BreakerOpens { .. }, Some(r)) => (
            r.breaker_opens() as f64,
            r.longest_open().map(|(xr, s)| {
                let open: Vec<_> = r.xrs.iter().filter(|x| x.opens > 0).collect();
                format!(
                    "{} of {} XRs' circuits opened; the longest open in all: {xr}, {s:.0}s; {} events dropped",
                    open.len(),
                    r.xrs.len(),
                    r.breakers.iter().map(|b| b.dropped).sum::<u64>()
                )
            }),
        ),
        (CoreCheck::StaleXrs { grace, .. }, Some(r)) => {
            let stale = r.stale_after(*grace);
            (
                stale.len() as f64,
                Some(format!(
                    "stale for at least {grace:?} at the end{}{}",
                    if stale.is_empty() { "" } else { ": " },
                    stale.iter().take(10).copied().collect::<Vec<_>>().join(", ")
                )),
            )
        }
    };
    let formula = match (c, pred, given) {
        (CoreCheck::BreakerOpens { .. } | CoreCheck::StaleXrs { .. }, _, true) => {
            if upper { "max (default 0)" } else { "min" }.to_owned()
        }
        (_, Some(p), false) => p.formula.clone(),
        (_, None, false) => "no prediction".to_owned(),
        (_, _, true) => "explicit limit".to_owned(),
    };
    let mut note = note.filter(|n| !n.is_empty());
    if !given && pred.is_none() {
        note = Some(format!(
            "no prediction of core's load for this scenario (an XR group whose pipeline does not say how many resources it composes): give the check a limit{}",
            note.map(|n| format!("; {n}")).unwrap_or_default()
        ));
    }
    judged(
        a,
        c,
        (formula, pred),
        (given, upper, limit),
        (observed, note),
    )
}

/// Gives `result` what core did and judges the scenario's checks of it again (the
/// verdicts are in assertion order).
pub fn judge(s: &Scenario, plan: &Plan, result: &mut super::RunResult, core: Option<CoreReport>) {
    result.core = core;
    if let Some(c) = &mut result.core {
        c.bin_requests(result.timeline.bin_s);
    }
    for (a, v) in s.assertions.iter().zip(result.verdicts.iter_mut()) {
        if let Check::Core(c) = &a.check {
            *v = verdict(a, c, result.core.as_ref(), (plan, s));
            v.outcome = if v.pass { Outcome::Pass } else { Outcome::Fail };
            // A phase's check: what its phase could not read at all (`phases`), or this
            // check's part of it (`phases/functionCalls`, …).
            let parts = if a.phase.is_some() {
                vec!["phases".to_owned(), format!("phases/{}", check_name(c))]
            } else {
                vec![check_name(c).to_owned()]
            };
            let unmeasured = result
                .core
                .as_ref()
                .and_then(|r| parts.iter().find_map(|p| r.unmeasured.get(p)));
            if let Some(why) = unmeasured {
                // Not judged: what it reads was not there to read.
                v.pass = true;
                v.outcome = Outcome::Unmeasured;
                v.note = Some(format!("UNMEASURED: {why}"));
                continue;
            }
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

/// The verdict of `a`, a check of `c` restricted to one phase, on core's share of it
/// (`None`: the phase did not run or core was not measured).
fn phase_verdict(
    a: &Assertion,
    c: &CoreCheck,
    measured: Option<(&CoreReport, &CorePhase)>,
    pred: Option<&Prediction>,
) -> Verdict {
    let predicted = pred.map_or(f64::NAN, |p| p.value);
    // A phase's breaker opens: at most `max` (default 0), or at least `min`.
    let upper = !matches!(
        c,
        CoreCheck::BreakerOpens {
            max: None,
            min: Some(_)
        }
    );
    #[allow(clippy::cast_precision_loss)]
    let (limit, given) = match c {
        CoreCheck::ApiRequests { max, .. } | CoreCheck::FunctionCalls { max } => {
            (max.unwrap_or(predicted), max.is_some())
        }
        CoreCheck::BreakerOpens {
            max: None,
            min: Some(m),
        } => (*m as f64, true),
        CoreCheck::BreakerOpens { max, .. } | CoreCheck::StaleXrs { max, .. } => {
            (max.map_or(0.0, |m| m as f64), true)
        }
        CoreCheck::XrTimeToReady { .. } => (f64::NAN, true),
    };
    #[allow(clippy::cast_precision_loss)]
    let (observed, note) = match (c, measured) {
        (_, None) => (
            f64::NAN,
            Some("core's share of the phase was not measured: the phase did not run, or no composite layer did".to_owned()),
        ),
        (CoreCheck::ApiRequests { window, .. }, Some((r, p))) => (
            r.max_in_window_between(*window, p.start_us, p.end_us) as f64,
            Some(format!(
                "core's requests in any {window:?} window of phase {}; {} in the phase",
                p.phase, p.requests
            )),
        ),
        (CoreCheck::FunctionCalls { .. }, Some((_, p))) => (
            p.total_function_calls() as f64,
            Some(
                p.function_calls
                    .iter()
                    .map(|(f, n)| {
                        let reached = p.function_reached.get(f).copied();
                        match reached {
                            Some(m) => format!("{f}: {n} (reached it: {m})"),
                            None => format!("{f}: {n}"),
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        ),
        (CoreCheck::BreakerOpens { .. }, Some((_, p))) => (
            p.breaker_opens as f64,
            Some(format!("{} events dropped in the phase", p.breaker_dropped)),
        ),
        (_, Some(_)) => (
            f64::NAN,
            Some("this check is not read per phase".to_owned()),
        ),
    };
    let formula = match (c, pred, given) {
        (
            CoreCheck::BreakerOpens {
                min: Some(_),
                max: None,
            },
            _,
            _,
        ) => "min".to_owned(),
        (CoreCheck::BreakerOpens { .. }, _, _) => "max (default 0)".to_owned(),
        (_, Some(p), false) => p.formula.clone(),
        (_, None, false) => "no prediction".to_owned(),
        (_, _, true) => "explicit limit".to_owned(),
    };
    judged(
        a,
        c,
        (formula, pred),
        (given, upper, limit),
        (observed, note),
    )
}

/// The verdict of `a`, a check of `c`, judged on `observed`: the one place a check of core's
/// [`Verdict`] is built, over the whole run or one phase. `given`: the limit is the
/// scenario's, not predicted; `upper`: an upper bound (`observed ≤ limit`), else a lower
/// one.
fn judged(
    a: &Assertion,
    c: &CoreCheck,
    (formula, pred): (String, Option<&Prediction>),
    (given, upper, limit): (bool, bool, f64),
    (observed, note): (f64, Option<String>),
) -> Verdict {
    Verdict {
        name: a.name.clone(),
        check: check_name(c).to_owned(),
        phase: None,
        formula,
        inputs: pred.map(Prediction::inputs_text).unwrap_or_default(),
        predicted: pred.map_or(f64::NAN, |p| p.value),
        limit,
        observed,
        upper,
        margin: if upper {
            limit - observed
        } else {
            observed - limit
        },
        pass: if upper {
            observed <= limit
        } else {
            observed >= limit
        },
        outcome: Outcome::default(),
        note,
        calls_window_s: None,
        kind: match (pred, given) {
            (Some(p), false) => LimitKind::of_prediction(p),
            _ => LimitKind::Given,
        },
    }
}
