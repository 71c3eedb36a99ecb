//! Observations from what the driver did and what the sources report: the one place that
//! joins them. Inventory and the custom resources at the end are read here too, through
//! the target (`present`).

use std::time::Duration;

use super::clock::{Micros, RunClock};
use super::driver::{Log, Unmet};
use super::source::watches::SeenMap;
use super::source::{ApiReport, AuditReport, CloudReport, ProviderReport};
use super::target::TargetInfo;
use crate::measure::{CloudResource, CustomResource};
use crate::result::waiting::{LISTED, Pending, Waiting};
use crate::result::{
    CloudCall, Dropped, Kill, Observations, PhaseSpan, ResourceTimes, RunInfo, StopCause, Stopped,
    TimeInfo,
};
use crate::scenario::{TimeMode, Until};

/// What every source reported at the end of a run.
pub struct Reports {
    /// The cloud journal.
    pub cloud: CloudReport,
    /// The API requests.
    pub api: ApiReport,
    /// The provider's counters.
    pub provider: ProviderReport,
    /// The watches.
    pub seen: SeenMap,
    /// The audits at the end of each phase and after each kill.
    pub audits: AuditReport,
}

/// Facts about the target for the result.
pub struct TargetFacts {
    /// Where the run happened.
    pub info: TargetInfo,
    /// How many times the provider was started or rolled.
    pub provider_starts: u32,
    /// Notes on how it was measured.
    pub notes: Vec<String>,
    /// How time passed: the scenario's mode, which [`super::run`] put in force.
    pub time: TimeMode,
    /// The CPU time per reconcile the provider sleeps (virtual time), or zero.
    pub reconcile_cpu: Duration,
}

fn resources(log: &Log, seen: &SeenMap) -> Vec<ResourceTimes> {
    log.records
        .values()
        .map(|r| {
            let s = seen.get(&(r.kind.clone(), r.name.clone()));
            ResourceTimes {
                name: r.name.clone(),
                group: r.group.clone(),
                created_in: r.created_in.clone(),
                created_us: r.created_us,
                ready_us: s.and_then(|s| s.ready_us),
                deleted_us: r.deleted_us,
                gone_us: s.and_then(|s| s.gone_us),
                external_name: s.and_then(|s| s.external_name.clone()),
                expected_poll_s: r.expected_poll_s,
            }
        })
        .collect()
}

/// The driver's kills, each with the creates it interrupted as the audits found them (one
/// list per kill, in the same order).
fn kills(log: &Log, audits: &AuditReport) -> Vec<Kill> {
    log.kills
        .iter()
        .enumerate()
        .map(|(i, k)| Kill {
            interrupted_creates: audits
                .interrupted_creates
                .get(i)
                .cloned()
                .unwrap_or_default(),
            ..k.clone()
        })
        .collect()
}

/// What a phase that timed out was waiting for, with each listed resource's last conditions.
fn waiting(unmet: &Unmet, seen: &SeenMap) -> Waiting {
    Waiting {
        until: match unmet.until {
            Until::AllReady => "Ready",
            Until::ComposedReady => "Ready (an XR: its composed resources)",
            Until::AllHandled => "handled (their reconcile request)",
            Until::AllGone => "gone",
            Until::Elapsed => "done",
        }
        .to_owned(),
        of: unmet.of as u64,
        pending: unmet.pending.len() as u64,
        first: unmet
            .pending
            .iter()
            .take(LISTED)
            .map(|key| Pending {
                kind: key.0.clone(),
                name: key.1.clone(),
                conditions: seen
                    .get(key)
                    .map(|s| s.conditions.clone())
                    .unwrap_or_default(),
                composite: unmet.composite,
            })
            .collect(),
    }
}

/// Moves cloud calls dated before the first phase to its start when they are that early
/// only by the cloud epoch's `uncertainty`: the cloud starts afresh with the run and holds
/// nothing before the first phase, so such a call was made in it (the cloud's clock offset
/// is known only to the round trip that measured it). Earlier calls stay where they are.
fn place_early_calls(calls: &mut [CloudCall], first_phase_us: u64, uncertainty: Duration) {
    let slack = u64::try_from(uncertainty.as_micros()).unwrap_or(u64::MAX);
    for c in calls.iter_mut().take_while(|c| c.at_us < first_phase_us) {
        if first_phase_us - c.at_us <= slack {
            c.at_us = first_phase_us;
        }
    }
}

/// How time passed, and the CPU time per reconcile the provider measured.
fn time_info(target: &TargetFacts, reports: &Reports, clock: &RunClock) -> TimeInfo {
    let ms = |d: Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
    let measured = reports
        .provider
        .metrics
        .as_ref()
        .filter(|m| m.reconciles > 0)
        .map(|m| ms(Duration::from_micros(m.reconcile_cpu_us / m.reconciles)));
    TimeInfo {
        mode: target.time,
        wall_s: (clock.wall_elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
        reconcile_cpu_simulated_ms: (target.time == TimeMode::Virtual)
            .then(|| ms(target.reconcile_cpu)),
        reconcile_cpu_measured_ms: measured,
    }
}

/// The result's description of the run.
fn run_info(target: TargetFacts, reports: &Reports, clock: &RunClock) -> RunInfo {
    let notes = target
        .notes
        .iter()
        .chain(&reports.api.notes)
        .chain(&reports.provider.notes)
        .cloned()
        .collect();
    let time = time_info(&target, reports, clock);
    RunInfo {
        harness: env!("CARGO_PKG_VERSION").to_owned(),
        target: target.info,
        api_requests_measured_by: reports.api.measure.describe(reports.api.interval),
        api_count: reports.api.count,
        api_server_throttling: reports.api.throttling.clone(),
        api_read_gap_s: reports
            .api
            .max_gap
            .map(|g| (g.as_secs_f64() * 1e3).round() / 1e3),
        // Rounded up, so the band it puts around a window's count is never too narrow.
        api_longest_request_s: reports
            .api
            .longest_request
            .map(|d| (d.as_secs_f64() * 1e3).ceil() / 1e3),
        dropped: Dropped {
            api: reports.api.dropped,
            cloud: reports.cloud.dropped,
        },
        provider_starts: target.provider_starts,
        notes,
        time,
        started_at: Some(
            clock
                .wall_start()
                .strftime("%Y-%m-%dT%H:%M:%SZ")
                .to_string(),
        ),
        commit: None,
        features: crate::BUILD_FEATURES
            .iter()
            .map(|f| (*f).to_owned())
            .collect(),
    }
}

/// Everything the run observed. `stop` (a signal, or the provider's own exit; none when the
/// phases ran out or one timed out) marks the result partial, as do a journal that could
/// not be read or dropped entries, and a phase that did not complete; the last phase the
/// log has is where the run stopped.
#[must_use]
pub fn observations(
    log: &Log,
    reports: Reports,
    target: TargetFacts,
    inventory: Vec<CloudResource>,
    custom_resources: Vec<CustomResource>,
    (clock, duration): (&RunClock, Micros),
    stop: Option<StopCause>,
) -> Observations {
    if reports.api.dropped > 0 || reports.cloud.dropped > 0 {
        tracing::warn!(
            api_dropped = reports.api.dropped,
            cloud_dropped = reports.cloud.dropped,
            "journal entries were dropped: the result is partial"
        );
    }
    // A phase that failed with a verdict did not stop the run: the run went on.
    let stopped_at = |p: &&PhaseSpan| !p.completed && p.failure.is_none();
    let stopped = log.spans.iter().find(stopped_at).map(|p| {
        let cause = stop.unwrap_or(StopCause::TimedOut);
        Stopped {
            phase: p.name.clone(),
            cause,
            waiting: log
                .unmet
                .as_ref()
                .filter(|_| cause == StopCause::TimedOut)
                .map(|u| waiting(u, &reports.seen)),
        }
    });
    let partial = stop.is_some()
        || reports.cloud.failed
        || reports.api.dropped > 0
        || reports.cloud.dropped > 0
        || log.spans.iter().any(|p| stopped_at(&p));
    let run = run_info(target, &reports, clock);
    let mut cloud_calls = reports.cloud.calls;
    if let Some(first) = log.spans.first() {
        place_early_calls(
            &mut cloud_calls,
            first.start_us,
            reports.cloud.epoch_uncertainty,
        );
    }
    Observations {
        duration_us: duration.0,
        phases: log.spans.clone(),
        resources: resources(log, &reports.seen),
        cloud_calls,
        api_requests: reports.api.requests,
        inventory,
        custom_resources,
        provider_metrics: reports.provider.metrics,
        run,
        partial,
        stopped,
        kills: kills(log, &reports.audits),
        phase_audits: reports.audits.phase_audits,
        // The run adds the memory samples: the sampler ends with the phases.
        memory: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::CallAction;

    fn call(at_us: u64) -> CloudCall {
        CloudCall {
            at_us,
            account: "a".into(),
            action: CallAction::Get,
            op: "generic:get".into(),
            name: "b".into(),
            status: 200,
            throttled: false,
            retry_not_before_us: None,
        }
    }

    /// The cluster test once counted 19 of 20 creates in its create phase: with a 58 ms round
    /// trip to mock-cloud, the first bucket's calls were dated up to 29 ms early, before the
    /// phase began, and fell in no phase.
    #[test]
    fn calls_early_by_no_more_than_the_epochs_uncertainty_belong_to_the_first_phase() {
        let mut calls = vec![call(10_000), call(40_000), call(66_000), call(70_000)];
        place_early_calls(&mut calls, 66_000, Duration::from_millis(30));
        let at: Vec<u64> = calls.iter().map(|c| c.at_us).collect();
        assert_eq!(at, [10_000, 66_000, 66_000, 70_000]);
    }
}
