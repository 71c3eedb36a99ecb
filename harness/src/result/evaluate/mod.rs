//! From a scenario, its plan and what a run observed to a [`RunResult`] with verdicts.

mod api_count;
mod measure;
mod settle;
mod ttr;
mod verdict;

use super::info::scenario_info;
use super::model::{PhaseResult, RESULT_VERSION, RunResult, Timeline};
use super::observe::Observations;
use super::{echo, error_paths};
use crate::measure::{Latencies, audit, bin_counts};
use crate::predict::{Plan, Prediction};
use crate::scenario::{Check, Scenario};
use measure::{api_requests_by, call_times, phase_result, poll_stats};

const US: f64 = 1e6;

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
    let api_reads = api_count::dated_reads(obs);
    let series = Series {
        all: &all_calls,
        api: &api,
        api_reads: &api_reads,
        conditional: &conditional,
        own: &own,
    };
    result.verdicts = s
        .assertions
        .iter()
        .map(|a| verdict::verdict(s, plan, obs, &result, a, &series))
        .collect();
    attribute_early_runs(s, &mut result);
    result
}

/// The measured series a verdict reads, and the conditional tolerances of §3.6 (b) by id.
pub(super) struct Series<'a> {
    pub(super) all: &'a [u64],
    pub(super) api: &'a [u64],
    /// The provider's requests by the read of the server's counters that dated them
    /// (`api_count::dated_reads`); empty for a source with each request's own time.
    pub(super) api_reads: &'a [(u64, u64, u64)],
    pub(super) conditional: &'a [(String, Result<Prediction, String>)],
    /// Each resource's own poll interval, for the per-resource checks: built once a run.
    pub(super) own: &'a crate::predict::intervals::OwnIntervals,
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
        v.append_note(line);
    }
}
