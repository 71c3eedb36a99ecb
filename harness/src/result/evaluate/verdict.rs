//! One verdict per assertion: each check judged against its limit.

use super::api_count::{held_back_by_the_server, judged_by_count, judged_by_dates};
use super::measure::call_times;
use super::settle::settle;
use super::{Series, US, echo};
use crate::measure::{window_us, windowed_max, within};
use crate::predict::{Plan, Prediction, fmt_num};
use crate::result::audit_verdict::audit_verdict;
use crate::result::error_paths;
use crate::result::memory_verdict::memory_verdict;
use crate::result::model::{LimitKind, Outcome, RunResult, Verdict};
use crate::result::observe::{Observations, PhaseSpan};
use crate::scenario::{Assertion, Check, Scenario};

fn span_of<'a>(obs: &'a Observations, a: &Assertion, s: &Scenario) -> Option<&'a PhaseSpan> {
    let name = &s.phases[a.phase?].name;
    obs.phases.iter().find(|p| &p.name == name)
}

/// The largest prediction with this id suffix over every phase (a run-wide bound).
fn run_bound(plan: &Plan, suffix: &str) -> Option<Prediction> {
    plan.phases
        .iter()
        .filter_map(|p| plan.find(&format!("{}/{suffix}", p.name)))
        .max_by(|a, b| a.value.total_cmp(&b.value))
        .cloned()
}

fn upper(
    a: &Assertion,
    pred: Option<&Prediction>,
    explicit: Option<f64>,
    observed: f64,
) -> Verdict {
    let predicted = pred.map_or(f64::NAN, |p| p.value);
    let limit = explicit.unwrap_or(predicted);
    Verdict {
        formula: pred.map_or_else(|| "explicit limit".to_owned(), |p| p.formula.clone()),
        inputs: pred.map(Prediction::inputs_text).unwrap_or_default(),
        predicted,
        note: pred.and_then(|p| p.note.clone()).filter(|n| !n.is_empty()),
        kind: match (pred, explicit) {
            (Some(p), None) => LimitKind::of_prediction(p),
            _ => LimitKind::Given,
        },
        ..Verdict::at_most(&a.name, check_name(&a.check), limit, observed)
    }
}

pub(super) fn check_name(c: &Check) -> &'static str {
    match c {
        Check::CloudCalls { .. } => "cloudCalls",
        Check::ApiRequests { .. } => "apiRequests",
        Check::SteadyRate { .. } => "steadyRate",
        Check::Throttles { .. } => "throttles",
        Check::TimeToReady { .. } => "timeToReady",
        Check::Orphans { .. } => "orphans",
        Check::Duplicates { .. } => "duplicates",
        Check::DrainEfficiency { .. } => "drainEfficiency",
        Check::Stuck { .. } => "stuck",
        Check::Lost { .. } => "lost",
        Check::MemoryGrowth { .. } => "memoryGrowth",
        Check::PerResourceCalls { .. } => "perResourceCalls",
        Check::HotLoops { .. } => "hotLoops",
        Check::PollPeriod { .. } => "pollPeriod",
        Check::RetryAfterHonoured { .. } => "retryAfterHonoured",
        Check::OperationCalls { .. } => "operationCalls",
        Check::CallsPerReconcile { .. } => "callsPerReconcile",
        Check::Core(c) => crate::result::core_verdict::check_name(c),
    }
}

pub(super) fn verdict(
    s: &Scenario,
    plan: &Plan,
    obs: &Observations,
    res: &RunResult,
    a: &Assertion,
    series: &Series<'_>,
) -> Verdict {
    let (all, api) = (series.all, series.api);
    let span = span_of(obs, a, s);
    let range = match (a.phase, span) {
        (_, Some(p)) => (p.start_us, p.end_us),
        (Some(_), None) => (0, 0),
        (None, None) => (0, u64::MAX),
    };
    let phase = a.phase.map(|i| s.phases[i].name.clone());
    let subject = error_paths::Subject {
        s,
        plan,
        obs,
        a,
        own: series.own,
        range,
        phase: phase.as_deref(),
    };
    let v = match &a.check {
        // Judged again once the run has read core (`result::core_verdict::judge`).
        Check::Core(c) => crate::result::core_verdict::verdict(a, c, res.core.as_ref(), (plan, s)),
        Check::CloudCalls { window, max } => {
            let w = window.as_secs_f64();
            let times = match &a.account {
                Some(acct) => call_times(obs.cloud_calls.iter().filter(|c| &c.account == acct)),
                None => all.to_vec(),
            };
            let observed =
                windowed_max(within(&times, range.0, range.1), window_us(*window)).count as f64;
            let key = format!("cloud-calls/{w}s");
            let pred = match &phase {
                Some(p) => plan.find(&format!("{p}/{key}")).cloned(),
                None => run_bound(plan, &key),
            };
            upper(a, pred.as_ref(), *max, observed)
        }
        Check::OperationCalls {
            operation,
            window,
            max,
        } => {
            let w = window.as_secs_f64();
            let times = call_times(
                obs.cloud_calls
                    .iter()
                    .filter(|c| crate::scenario::op_matches(operation, &c.op)),
            );
            let observed =
                windowed_max(within(&times, range.0, range.1), window_us(*window)).count as f64;
            let key = format!("op/{operation}/{w}s");
            let pred = match &phase {
                Some(p) => plan.find(&format!("{p}/{key}")).cloned(),
                None => run_bound(plan, &key).or_else(|| plan.find(&format!("run/{key}")).cloned()),
            };
            let mut v = upper(a, pred.as_ref(), *max, observed);
            if pred.is_none() && max.is_none() {
                v.pass = false;
                v.note = Some(format!(
                    "no bound for {operation}: every kind in use needs its calls by operation (a profile `calibration`, or `operations` in `calls`), or give `max`"
                ));
            }
            v
        }
        Check::CallsPerReconcile { kind, path, extra } => {
            let base = upper(a, None, None, 0.0);
            crate::result::calls_verdict::verdict(
                s,
                res,
                (kind.as_deref(), path.as_deref(), *extra),
                base,
            )
        }
        Check::ApiRequests { window, max } => {
            let w = window.as_secs_f64();
            let dated = within(api, range.0, range.1);
            let observed = windowed_max(dated, window_us(*window)).count as f64;
            let key = format!("api-requests/{w}s");
            let pred = match &phase {
                Some(p) => plan.find(&format!("{p}/{key}")).cloned(),
                None => run_bound(plan, &key),
            };
            let reads = series.api_reads;
            let first = reads.partition_point(|r| r.1 < range.0);
            let reads = &reads[first..reads.partition_point(|r| r.1 <= range.1).max(first)];
            let v = judged_by_dates(upper(a, pred.as_ref(), *max, observed), reads, *window);
            let v = judged_by_count(v, res.run.api_count);
            held_back_by_the_server(v, res.run.api_server_throttling.as_ref())
        }
        Check::SteadyRate { window, max } => {
            let w = window.as_secs_f64();
            let observed =
                windowed_max(within(all, range.0, range.1), window_us(*window)).count as f64;
            let planned = phase
                .as_ref()
                .and_then(|p| plan.find(&format!("{p}/steady-max/{w}s")));
            let conditional = phase.as_ref().and_then(|p| {
                let id = echo::id(p, w);
                series.conditional.iter().find(|(x, _)| *x == id)
            });
            match conditional.map(|(_, c)| c) {
                Some(Ok(c)) => upper(a, Some(c), *max, observed),
                Some(Err(why)) => {
                    let mut v = upper(a, planned, *max, observed);
                    let line = format!("conditional bound (§3.6 b) not used: {why}");
                    v.append_note(line);
                    v
                }
                None => upper(a, planned, *max, observed),
            }
        }
        Check::Throttles { max } => {
            let observed = obs
                .cloud_calls
                .iter()
                .filter(|c| c.throttled && c.at_us >= range.0 && c.at_us <= range.1)
                .filter(|c| a.account.as_ref().is_none_or(|acct| &c.account == acct))
                .count() as f64;
            let conds: Vec<&Prediction> = plan
                .all()
                .filter(|p| {
                    p.id.contains("/quota/") && p.meaning == crate::predict::Meaning::Condition
                })
                .collect();
            let impossible = conds.iter().all(|p| p.value >= 1.0);
            let mut v = upper(a, None, Some(*max as f64), observed);
            v.predicted = if impossible { 0.0 } else { f64::NAN };
            v.formula = "c_a·min(N, B) ≤ b_a and c_a·R ≤ r_a ⟹ no 429 (§6.1)".to_owned();
            v.note = Some(if impossible {
                "no-throttle condition holds for every quota".to_owned()
            } else {
                "the no-throttle condition fails for some quota: 429s are expected".to_owned()
            });
            v
        }
        Check::TimeToReady { quantile, limit } => {
            super::ttr::ttr_verdict(s, plan, res, a, *quantile, *limit)
        }
        Check::PerResourceCalls { window, max } => {
            error_paths::per_resource_calls(subject, (window.as_secs_f64(), *max))
        }
        Check::HotLoops {
            window,
            factor,
            max,
        } => error_paths::hot_loops_verdict(subject, (window.as_secs_f64(), *factor, *max)),
        Check::RetryAfterHonoured { max } => {
            crate::result::retry_after::verdict(obs, a, range, *max)
        }
        Check::PollPeriod { tolerance_percent } => {
            error_paths::poll_period_verdict(subject, *tolerance_percent)
        }
        Check::Orphans { .. }
        | Check::Duplicates { .. }
        | Check::Stuck { .. }
        | Check::Lost { .. } => audit_verdict(s, res, &obs.phase_audits, a)
            .expect("an audit check has an audit verdict"),
        Check::MemoryGrowth { max_percent } => memory_verdict(s, obs, a, *max_percent),
        Check::DrainEfficiency { min } => drain_efficiency(s, plan, a, &phase, span, *min),
    };
    settle(v, (a, check_name(&a.check)), plan, obs, phase, span)
}

/// `drainEfficiency`: the physical lower bound on the phase's length over its observed length,
/// at least `min`.
fn drain_efficiency(
    s: &Scenario,
    plan: &Plan,
    a: &Assertion,
    phase: &Option<String>,
    span: Option<&PhaseSpan>,
    min: f64,
) -> Verdict {
    let pp = phase
        .as_ref()
        .and_then(|p| plan.phases.iter().find(|x| &x.name == p));
    let dphys = pp.and_then(|p| p.physical.clone());
    let observed_drain = span.map_or(f64::NAN, |p| (p.end_us - p.start_us) as f64 / US);
    let d = dphys.as_ref().map_or(f64::NAN, |p| p.value);
    let eff = d / observed_drain;
    // What the plan expects of the phase (the model's drain, a quota simulation, time
    // to Ready): the efficiency the provider should reach.
    let expected_drain = phase
        .as_ref()
        .and_then(|name| {
            plan.expected_duration(s)
                .phases
                .into_iter()
                .find(|(n, _)| n == name)
        })
        .map_or(f64::NAN, |(_, t)| t.as_secs_f64());
    let mut note = dphys.as_ref().map(|p| {
        format!(
            "D_phys = {} s, observed drain = {} s; predicted efficiency {} (expected drain {} s)",
            fmt_num(p.value),
            fmt_num(observed_drain),
            fmt_num(p.value / expected_drain),
            fmt_num(expected_drain)
        )
    });
    if eff > 1.0 {
        note = Some(format!(
            "{}; faster than the physical limit: the derivation missed something (a finding)",
            note.unwrap_or_default()
        ));
    }
    Verdict {
        name: a.name.clone(),
        check: "drainEfficiency".into(),
        phase: None,
        formula: "efficiency = D_phys / D_observed (predicted: D_phys / D_expected)".into(),
        inputs: dphys
            .as_ref()
            .map(Prediction::inputs_text)
            .unwrap_or_default(),
        predicted: d / expected_drain,
        limit: min,
        observed: eff,
        upper: false,
        margin: eff - min,
        pass: eff >= min,
        outcome: Outcome::default(),
        note,
        calls_window_s: None,
        kind: LimitKind::Given,
    }
}
