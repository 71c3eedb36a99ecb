//! From a scenario, its plan and what a run observed to a [`RunResult`] with verdicts.

use std::collections::BTreeMap;

use limiter::go::GoDuration;

use super::audit_verdict::audit_verdict;
use super::echo;
use super::error_paths;
use super::info::scenario_info;
use super::memory_verdict::memory_verdict;
use super::model::{
    ApiCount, ApiRequestCount, LimitKind, Outcome, Peak, PhaseResult, RESULT_VERSION, RunResult,
    ServerThrottling, StopCause, Timeline, Verdict,
};
use super::observe::{CloudCall, Observations, PhaseSpan};
use crate::measure::{
    Latencies, ObserveSeries, audit, bin_counts, realised_intervals, window_us, windowed_max,
    within,
};
use crate::predict::{Plan, Prediction, backlog, fmt_num};
use crate::scenario::{Assertion, Check, Scenario, TtrLimit};

const US: f64 = 1e6;

fn call_times<'a>(calls: impl Iterator<Item = &'a CloudCall>) -> Vec<u64> {
    let mut t: Vec<u64> = calls.map(|c| c.at_us).collect();
    t.sort_unstable();
    t
}

fn windows_of(s: &Scenario) -> Vec<f64> {
    let mut w = vec![1.0, 10.0];
    for a in &s.assertions {
        if let Check::CloudCalls { window, .. } | Check::SteadyRate { window, .. } = a.check {
            w.push(window.as_secs_f64());
        }
    }
    w.sort_by(f64::total_cmp);
    w.dedup();
    w
}

/// An API-request verdict as far as the count can judge it: a count that may include other
/// clients' requests shows a provider within its bound when it is within, and cannot show
/// it past; a count that may miss some of the provider's shows it past its bound when it
/// is past, and cannot show it within; an unknown count shows neither (UNMEASURED, with
/// the measured figure kept).
fn judged_by_count(mut v: Verdict, count: ApiCount) -> Verdict {
    let why = match (count, v.pass) {
        (ApiCount::Exact, _)
        | (ApiCount::MayIncludeOthers, true)
        | (ApiCount::MayMissSome, false) => return v,
        (ApiCount::MayIncludeOthers, false) => {
            "past the limit, but the count includes other clients' requests, so it does not show the provider's past it"
        }
        (ApiCount::MayMissSome, true) => {
            "within the limit, but the count may miss some of the provider's requests, so it does not show the provider's within it"
        }
        (ApiCount::Unknown, _) => {
            "the provider's API requests were not measured apart from other clients' nor in full"
        }
    };
    let why = format!(
        "UNMEASURED: {why} (run.api_requests_measured_by and the run's notes say how they were counted)"
    );
    v.note = Some(match v.note.take() {
        Some(n) => format!("{n}; {why}"),
        None => why,
    });
    v.pass = true;
    v.outcome = Outcome::Unmeasured;
    v
}

/// An API-request verdict of a provider the server held back (429s, requests queued by
/// priority and fairness): within its bound it is not within by its own merit, since the
/// server let through less than it sent or later than it sent it, so it is UNMEASURED with
/// what the server did; past its bound it fails as it is.
fn held_back_by_the_server(mut v: Verdict, th: Option<&ServerThrottling>) -> Verdict {
    let Some(th) = th.filter(|t| t.held_back()) else {
        return v;
    };
    let what = format!(
        "the server held the provider back ({} requests rejected with 429, {} queued more than 5 ms, {} s of waiting in all, at priority level {})",
        th.rejected,
        th.queued,
        fmt_num(th.queued_s),
        th.priority_level
    );
    let why = if v.pass && v.outcome != Outcome::Unmeasured {
        v.outcome = Outcome::Unmeasured;
        format!("UNMEASURED: within the limit, but {what}, so not by the provider's own limits")
    } else {
        what
    };
    v.note = Some(match v.note.take() {
        Some(n) => format!("{n}; {why}"),
        None => why,
    });
    v
}

/// The provider's API requests by verb and resource.
fn api_requests_by(obs: &Observations) -> Vec<ApiRequestCount> {
    let mut by: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    for r in obs.api_requests.iter().filter(|r| r.from_provider) {
        *by.entry((r.verb.as_str(), r.resource.as_deref().unwrap_or("unknown")))
            .or_default() += 1;
    }
    by.into_iter()
        .map(|((verb, resource), count)| ApiRequestCount {
            verb: verb.to_owned(),
            resource: resource.to_owned(),
            count,
        })
        .collect()
}

/// Evaluates a run: measurements per phase, timelines, the audit, and one verdict per
/// assertion.
#[must_use]
pub fn evaluate(s: &Scenario, plan: &Plan, obs: &Observations) -> RunResult {
    let all_calls = call_times(obs.cloud_calls.iter());
    let api: Vec<u64> = {
        let mut t: Vec<u64> = obs
            .api_requests
            .iter()
            .filter(|r| r.from_provider)
            .map(|r| r.at_us)
            .collect();
        t.sort_unstable();
        t
    };
    let throttled = call_times(obs.cloud_calls.iter().filter(|c| c.throttled));
    let end = obs.duration_us.max(all_calls.last().copied().unwrap_or(0));
    let timeline = Timeline {
        bin_s: 1.0,
        cloud_calls: bin_counts(&all_calls, 0, end, 1_000_000),
        throttles: bin_counts(&throttled, 0, end, 1_000_000),
        api_requests: bin_counts(&api, 0, end, 1_000_000),
    };
    let mut overall = Latencies::new();
    for r in &obs.resources {
        if let Some(ready) = r.ready_us {
            overall.record_us(ready.saturating_sub(r.created_us));
        }
    }
    let lengths = plan.expected_duration(s);
    let phases: Vec<PhaseResult> = obs
        .phases
        .iter()
        .map(|span| {
            let length = lengths
                .phases
                .iter()
                .find(|(n, _)| *n == span.name)
                .map_or(f64::NAN, |(_, d)| d.as_secs_f64());
            phase_result(s, plan, obs, span, (&all_calls, &api), length)
        })
        .collect();
    let audit = audit(&obs.inventory, &obs.custom_resources);
    let poll = poll_stats(obs);
    let mut result = RunResult {
        version: RESULT_VERSION,
        partial: obs.partial,
        stopped: obs.stopped.clone(),
        scenario: scenario_info(s),
        run: obs.run.clone(),
        duration_s: end as f64 / US,
        phases,
        timeline,
        ttr: overall.summary(),
        audit,
        kills: obs.kills.clone(),
        phase_audits: obs.phase_audits.clone(),
        memory: obs.memory.clone(),
        poll,
        offenders: error_paths::offenders(s, obs),
        share_costs: error_paths::share_costs(s, plan, obs),
        predictions: plan.all().cloned().collect(),
        verdicts: Vec::new(),
        provider: super::provider_check::provider_check(s, obs, end),
        calls_per_reconcile: super::per_reconcile::calls_per_reconcile(s, obs),
        api_requests_by: api_requests_by(obs),
        core: None,
    };
    let conditional = conditional_tolerances(s, plan, obs);
    result.predictions.extend(
        conditional
            .iter()
            .filter_map(|(_, c)| c.as_ref().ok())
            .cloned(),
    );
    let own = crate::predict::intervals::OwnIntervals::of(s);
    let series = Series {
        all: &all_calls,
        api: &api,
        conditional: &conditional,
        own: &own,
    };
    result.verdicts = s
        .assertions
        .iter()
        .map(|a| verdict(s, plan, obs, &result, a, &series))
        .collect();
    attribute_early_runs(s, &mut result);
    result
}

/// The measured series a verdict reads, and the conditional tolerances of §3.6 (b) by id.
struct Series<'a> {
    all: &'a [u64],
    api: &'a [u64],
    conditional: &'a [(String, Result<Prediction, String>)],
    /// Each resource's own poll interval, for the per-resource checks: built once a run.
    own: &'a crate::predict::intervals::OwnIntervals,
}

/// §3.6 (b) for every steadyRate assertion on a hold the plan puts within a wave's echo.
fn conditional_tolerances(
    s: &Scenario,
    plan: &Plan,
    obs: &Observations,
) -> Vec<(String, Result<Prediction, String>)> {
    let mut out: Vec<(String, Result<Prediction, String>)> = Vec::new();
    for a in &s.assertions {
        let (Check::SteadyRate { window, .. }, Some(i)) = (&a.check, a.phase) else {
            continue;
        };
        let (phase, w) = (s.phases[i].name.as_str(), window.as_secs_f64());
        let id = echo::id(phase, w);
        if out.iter().any(|(x, _)| *x == id) {
            continue;
        }
        if let Some(c) = echo::conditional(s, plan, obs, phase, w) {
            out.push((id, c));
        }
    }
    out
}

/// Under the `crossplane` model, early runs (flagged passes before their token's time) are
/// the mechanism that takes reconciles past the nominal budget; say how many there were next
/// to every budget verdict (budget.md §8, row 1).
fn attribute_early_runs(s: &Scenario, result: &mut RunResult) {
    let Some(early) = result.provider.as_ref().and_then(|p| p.early_runs) else {
        return;
    };
    if s.settings.model != limiter::crossplane::RateLimitModel::Crossplane || early == 0 {
        return;
    }
    for v in result
        .verdicts
        .iter_mut()
        .filter(|v| v.check == "cloudCalls")
    {
        let line = format!(
            "{early} early runs over the run (limiter_early_runs_total): reconciles the middleware let through before their token's time"
        );
        v.note = Some(match v.note.take() {
            Some(n) => format!("{n}; {line}"),
            None => line,
        });
    }
}

fn poll_stats(obs: &Observations) -> Vec<crate::measure::PollStats> {
    let mut by_name: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for c in obs
        .cloud_calls
        .iter()
        .filter(|c| c.action == super::CallAction::Get && !c.throttled)
    {
        by_name.entry(c.name.as_str()).or_default().push(c.at_us);
    }
    by_name.values_mut().for_each(|v| v.sort_unstable());
    let series: Vec<ObserveSeries<'_>> = obs
        .resources
        .iter()
        .filter_map(|r| {
            let ext = r.external_name.as_deref()?;
            let times = by_name.get(ext)?;
            Some(ObserveSeries {
                name: &r.name,
                expected_s: r.expected_poll_s,
                times_us: times,
            })
        })
        .collect();
    realised_intervals(&series)
}

/// Cloud calls a backlog makes per resource acted on: Observe plus the action, then one
/// Observe per further reconcile (create and delete: m − 1 of them).
fn backlog_calls_per_resource(action: &crate::scenario::Action, m: f64) -> f64 {
    use crate::scenario::Action;
    match action {
        Action::Create { .. } | Action::Delete { .. } => 1.0 + m,
        Action::Update { .. } => 2.0,
        _ => 1.0,
    }
}

fn phase_result(
    s: &Scenario,
    plan: &Plan,
    obs: &Observations,
    span: &PhaseSpan,
    (all, api): (&[u64], &[u64]),
    expected_length: f64,
) -> PhaseResult {
    let mut calls = BTreeMap::new();
    let mut operations: BTreeMap<String, u64> = BTreeMap::new();
    let mut throttles = 0;
    for c in obs
        .cloud_calls
        .iter()
        .filter(|c| c.at_us >= span.start_us && c.at_us < span.end_us)
    {
        *calls.entry(c.action.as_str().to_owned()).or_insert(0) += 1;
        if !c.op.is_empty() {
            match operations.get_mut(&*c.op) {
                Some(n) => *n += 1,
                None => {
                    operations.insert(c.op.to_string(), 1);
                }
            }
        }
        throttles += u64::from(c.throttled);
    }
    let inside = within(all, span.start_us, span.end_us);
    let peaks = windows_of(s)
        .into_iter()
        .map(|w| {
            let m = windowed_max(inside, (w * US) as u64);
            Peak {
                window_s: w,
                count: m.count,
                start_s: m.start_us as f64 / US,
            }
        })
        .collect();
    let mut ttr = Latencies::new();
    for r in obs.resources.iter().filter(|r| r.created_in == span.name) {
        if let Some(ready) = r.ready_us {
            ttr.record_us(ready.saturating_sub(r.created_us));
        }
    }
    let pp = plan.phases.iter().find(|p| p.name == span.name);
    let expected = pp.map_or(0.0, |p| p.steady.rate);
    let bound = plan
        .find(&format!("{}/cloud-calls/1s", span.name))
        .map_or(f64::NAN, |p| p.value);
    let phase = s.phases.iter().find(|p| p.name == span.name);
    let action = phase.map_or("", |p| p.action.name());
    let backlog_rate = match (pp.and_then(|p| p.backlog.as_ref()), phase) {
        (Some(b), Some(ph)) if expected_length > 0.0 => {
            b.n() * backlog_calls_per_resource(&ph.action, b.m) / expected_length
        }
        _ => 0.0,
    };
    let api_pred = plan.find(&format!("{}/api-requests/1s", span.name));
    let api_bound = api_pred.map_or(f64::NAN, |p| p.value);
    let api_bound_formula = api_pred.map_or_else(String::new, |p| {
        format!("{} [{}] {}", p.formula, p.inputs_text(), p.source)
    });
    PhaseResult {
        name: span.name.clone(),
        action: action.to_owned(),
        start_s: span.start_us as f64 / US,
        end_s: span.end_us as f64 / US,
        completed: span.completed,
        calls,
        operations,
        throttles,
        api_requests: within(api, span.start_us, span.end_us).len() as u64,
        peaks,
        ttr: (!ttr.is_empty()).then(|| ttr.summary()),
        expected_per_s: expected,
        bound_per_s: bound,
        expected_calls_per_s: expected + backlog_rate,
        api_bound_per_s: api_bound,
        api_bound_formula,
        failure: span.failure.clone(),
    }
}

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
        name: a.name.clone(),
        check: check_name(&a.check).to_owned(),
        phase: None,
        formula: pred.map_or_else(|| "explicit limit".to_owned(), |p| p.formula.clone()),
        inputs: pred.map(Prediction::inputs_text).unwrap_or_default(),
        predicted,
        limit,
        observed,
        upper: true,
        margin: limit - observed,
        pass: observed <= limit,
        outcome: Outcome::default(),
        note: pred.and_then(|p| p.note.clone()).filter(|n| !n.is_empty()),
        calls_window_s: None,
        kind: match (pred, explicit) {
            (Some(p), None) => LimitKind::of_prediction(p),
            _ => LimitKind::Given,
        },
    }
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

fn check_name(c: &Check) -> &'static str {
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
        Check::Core(c) => super::core_verdict::check_name(c),
    }
}

fn verdict(
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
    let mut v = match &a.check {
        // Judged again once the run has read core (`result::core_verdict::judge`).
        Check::Core(c) => super::core_verdict::verdict(a, c, res.core.as_ref(), (plan, s)),
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
            super::calls_verdict::verdict(s, res, (kind.as_deref(), path.as_deref(), *extra), base)
        }
        Check::ApiRequests { window, max } => {
            let w = window.as_secs_f64();
            let observed =
                windowed_max(within(api, range.0, range.1), window_us(*window)).count as f64;
            let key = format!("api-requests/{w}s");
            let pred = match &phase {
                Some(p) => plan.find(&format!("{p}/{key}")).cloned(),
                None => run_bound(plan, &key),
            };
            let v = judged_by_count(upper(a, pred.as_ref(), *max, observed), res.run.api_count);
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
                    v.note = Some(match v.note.take() {
                        Some(n) => format!("{n}; {line}"),
                        None => line,
                    });
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
        Check::TimeToReady { quantile, limit } => ttr_verdict(s, plan, res, a, *quantile, *limit),
        Check::PerResourceCalls { window, max } => error_paths::per_resource_calls(
            s,
            plan,
            obs,
            a,
            series.own,
            (range, phase.as_deref()),
            (window.as_secs_f64(), *max),
        ),
        Check::HotLoops {
            window,
            factor,
            max,
        } => error_paths::hot_loops_verdict(
            s,
            plan,
            obs,
            a,
            series.own,
            (range, phase.as_deref()),
            (window.as_secs_f64(), *factor, *max),
        ),
        Check::RetryAfterHonoured { max } => super::retry_after::verdict(obs, a, range, *max),
        Check::PollPeriod { tolerance_percent } => error_paths::poll_period_verdict(
            s,
            plan,
            obs,
            a,
            series.own,
            (range, phase.as_deref().unwrap_or_default()),
            *tolerance_percent,
        ),
        Check::Orphans { .. }
        | Check::Duplicates { .. }
        | Check::Stuck { .. }
        | Check::Lost { .. } => audit_verdict(s, res, &obs.phase_audits, a)
            .expect("an audit check has an audit verdict"),
        Check::MemoryGrowth { max_percent } => memory_verdict(s, obs, a, *max_percent),
        Check::DrainEfficiency { min } => {
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
                limit: *min,
                observed: eff,
                upper: false,
                margin: eff - min,
                pass: eff >= *min,
                outcome: Outcome::default(),
                note,
                calls_window_s: None,
                kind: LimitKind::Given,
            }
        }
    };
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
        .map(|p| unmodeled(plan, p, check_name(&a.check)))
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

fn ttr_verdict(
    s: &Scenario,
    plan: &Plan,
    res: &RunResult,
    a: &Assertion,
    q: f64,
    limit: TtrLimit,
) -> Verdict {
    let phase = a
        .phase
        .map(|i| s.phases[i].name.as_str())
        .unwrap_or_default();
    let pred = plan
        .find(&format!("{phase}/ttr-p{}", q * 100.0))
        .cloned()
        .or_else(|| {
            let pp = plan.phases.iter().find(|p| p.name == phase)?;
            let b = pp.backlog.as_ref()?;
            let base = plan.find(&format!("{phase}/ttr-p50"))?;
            let tau = crate::predict::unloaded_ttr(s, &pp.params, &s.phases[a.phase?], q)?;
            let mut p = base.clone();
            p.value = backlog::ttr_quantile(&pp.params, b, q, tau);
            p.id = format!("{phase}/ttr-p{}", q * 100.0);
            for input in &mut p.inputs {
                match input.name.as_str() {
                    "τ_unloaded" => input.value = tau,
                    "q" => input.value = q,
                    _ => {}
                }
            }
            Some(p)
        });
    let observed = res
        .phases
        .iter()
        .find(|p| p.name == phase)
        .and_then(|p| p.ttr.as_ref())
        .and_then(|t| t.quantile(q))
        .unwrap_or(f64::NAN);
    let predicted = pred.as_ref().map_or(f64::NAN, |p| p.value);
    let (lim, how) = match limit {
        TtrLimit::Fixed(d) => (
            d.as_secs_f64(),
            format!("maxDuration {}", GoDuration::from_std(d)),
        ),
        TtrLimit::Predicted { tolerance_percent } => (
            predicted * (1.0 + tolerance_percent / 100.0),
            format!("prediction + {tolerance_percent}%"),
        ),
    };
    Verdict {
        name: a.name.clone(),
        check: "timeToReady".into(),
        phase: None,
        formula: pred
            .as_ref()
            .map_or_else(String::new, |p| p.formula.clone()),
        inputs: pred
            .as_ref()
            .map(Prediction::inputs_text)
            .unwrap_or_default(),
        predicted,
        limit: lim,
        observed,
        upper: true,
        margin: lim - observed,
        pass: observed <= lim,
        outcome: Outcome::default(),
        note: Some(match pred.as_ref().and_then(|p| p.note.as_deref()) {
            Some(why) => format!("limit: {how}; {why}"),
            None => format!("limit: {how}"),
        }),
        calls_window_s: None,
        kind: match (&pred, limit) {
            (Some(p), TtrLimit::Predicted { .. }) => LimitKind::of_prediction(p),
            _ => LimitKind::Given,
        },
    }
}

#[cfg(test)]
mod unmodeled_tests {
    use super::*;
    use crate::result::observe::PhaseSpan;

    /// A read quota below the polls under controller-runtime's model, which the simulation
    /// of the coupled regime (crossplane's) does not cover.
    const MIXED: &str = "apiVersion: harness/v1\nname: mixed\nprovider: {rateLimitModel: controller-runtime, maxReconcileRate: 5, pollInterval: 1m}\ncloud:\n  quotas:\n    read: {burst: 20, perSecond: 4}\nresources:\n  - name: b\n    kind: Bucket\n    count: 300\n    faults: [{percent: 5, error: Conflict}]\n    annotations: [{percent: 10, values: {crossplane.io/poll-interval: 10s}}]\nphases:\n  - {name: create, action: create, rate: 20}\n  - {name: hold, action: hold, duration: 1h}\nassertions:\n  - {check: steadyRate, phase: hold}\n  - {check: cloudCalls, window: 10s}\n";

    fn observations() -> Observations {
        let span = |name: &str, start_us, end_us| PhaseSpan {
            name: name.into(),
            start_us,
            end_us,
            completed: true,
            failure: None,
        };
        Observations {
            duration_us: 3_700_000_000,
            phases: vec![
                span("create", 0, 100_000_000),
                span("hold", 100_000_000, 3_700_000_000),
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

#[cfg(test)]
mod unmeasured_tests {
    use super::*;
    use crate::result::observe::{ApiRequest, PhaseSpan};

    const S: &str = "apiVersion: harness/v1\nname: api\nprovider: {maxReconcileRate: 10}\nresources:\n  - {name: b, kind: Bucket, count: 1}\nphases:\n  - {name: hold, action: hold, duration: 10s}\nassertions:\n  - {check: apiRequests, window: 1s, max: 5}\n";

    /// `n` of the provider's requests in the first second, counted as `count` says.
    fn verdict(n: u64, count: ApiCount) -> Verdict {
        let s = crate::scenario::parse(S, "api.yaml").expect("valid");
        let plan = crate::predict::plan(&s);
        let mut obs = Observations {
            duration_us: 10_000_000,
            phases: vec![PhaseSpan {
                name: "hold".into(),
                start_us: 0,
                end_us: 10_000_000,
                completed: true,
                failure: None,
            }],
            api_requests: (0..n)
                .map(|i| ApiRequest {
                    at_us: i * 1_000,
                    verb: "get".into(),
                    resource: Some("secrets".into()),
                    from_provider: true,
                    object: None,
                    main_write: false,
                })
                .collect(),
            ..Observations::default()
        };
        obs.run.api_count = count;
        let r = evaluate(&s, &plan, &obs);
        assert_eq!(
            r.api_requests_by,
            [ApiRequestCount {
                verb: "get".into(),
                resource: "secrets".into(),
                count: n
            }]
        );
        r.verdicts[0].clone()
    }

    #[test]
    fn a_provider_the_server_held_back_is_not_within_its_budget_by_its_own_merit() {
        let held = ServerThrottling {
            priority_level: "tiny".into(),
            rejected: 2,
            queued: 5,
            queued_s: 1.5,
        };
        let within = held_back_by_the_server(verdict(4, ApiCount::Exact), Some(&held));
        assert_eq!(within.outcome, Outcome::Unmeasured, "{within:?}");
        assert!(
            within.note.as_deref().unwrap_or_default().contains(
                "UNMEASURED: within the limit, but the server held the provider back (2 requests rejected with 429, 5 queued more than 5 ms, 1.5 s of waiting in all, at priority level tiny)"
            ),
            "{within:?}"
        );
        let past = held_back_by_the_server(verdict(7, ApiCount::Exact), Some(&held));
        assert_eq!(
            (past.outcome, past.pass),
            (Outcome::Fail, false),
            "{past:?}"
        );
        let free = ServerThrottling {
            priority_level: "tiny".into(),
            ..ServerThrottling::default()
        };
        let v = held_back_by_the_server(verdict(4, ApiCount::Exact), Some(&free));
        assert_eq!(v.outcome, Outcome::Pass, "{v:?}");
    }

    #[test]
    fn a_count_that_cannot_judge_the_provider_is_unmeasured_on_the_side_it_cannot_judge() {
        use ApiCount::{Exact, MayIncludeOthers, MayMissSome, Unknown};
        // (observed, count) → outcome: within the limit of 5 at 4, past it at 7.
        for (n, count, outcome) in [
            (4, Exact, Outcome::Pass),
            (7, Exact, Outcome::Fail),
            (4, MayIncludeOthers, Outcome::Pass),
            (7, MayIncludeOthers, Outcome::Unmeasured),
            (4, MayMissSome, Outcome::Unmeasured),
            (7, MayMissSome, Outcome::Fail),
            (4, Unknown, Outcome::Unmeasured),
            (7, Unknown, Outcome::Unmeasured),
        ] {
            let v = verdict(n, count);
            let got = if v.outcome == Outcome::Unmeasured {
                Outcome::Unmeasured
            } else if v.pass {
                Outcome::Pass
            } else {
                Outcome::Fail
            };
            assert_eq!(got, outcome, "{n} {count:?}: {v:?}");
            assert_eq!(v.observed, n as f64);
            if outcome == Outcome::Unmeasured {
                assert!(v.pass, "not a failure unless --strict");
                assert!(
                    v.note
                        .as_deref()
                        .unwrap_or_default()
                        .contains("UNMEASURED: "),
                    "{v:?}"
                );
            }
        }
    }
}
