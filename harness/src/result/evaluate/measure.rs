//! A run's measurements: per phase, the poll intervals it realised, its API requests.

use std::collections::BTreeMap;

use super::US;
use crate::measure::{Latencies, ObserveSeries, realised_intervals, windowed_max, within};
use crate::predict::Plan;
use crate::result::model::{ApiRequestCount, Peak, PhaseResult};
use crate::result::observe::{CloudCall, Observations, PhaseSpan};
use crate::scenario::{Check, Scenario};

pub(super) fn call_times<'a>(calls: impl Iterator<Item = &'a CloudCall>) -> Vec<u64> {
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

/// The provider's API requests by verb and resource.
pub(super) fn api_requests_by(obs: &Observations) -> Vec<ApiRequestCount> {
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

pub(super) fn poll_stats(obs: &Observations) -> Vec<crate::measure::PollStats> {
    let mut by_name: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for c in obs
        .cloud_calls
        .iter()
        .filter(|c| c.action == crate::result::CallAction::Get && !c.throttled)
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

pub(super) fn phase_result(
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
