//! How long a scenario is expected to take: each phase's predicted length from the plan's own
//! predictions, and the total. Shown by `predict`, `validate` and `run`.

use std::time::Duration;

use super::Plan;
use crate::scenario::{Action, Scenario};

/// A scenario's expected duration.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpectedDuration {
    /// Each phase's expected length, in order.
    pub phases: Vec<(String, Duration)>,
    /// Their sum.
    pub total: Duration,
    /// The longest the run can take: every phase up to its timeout (holds take their
    /// duration).
    pub at_most: Duration,
}

/// crossplane-runtime's creation grace (the provider's `CREATION_GRACE`).
const CREATION_GRACE_S: f64 = 30.0;

/// The first time of the per-item backoff schedule (1 s, 3 s, 7 s, 15 s, 31 s, 63 s, then
/// every 60 s) at or past `t`; 0 for `t` ≤ 0.
fn backoff_reaching(t: f64) -> f64 {
    if t.is_nan() || t <= 0.0 {
        return 0.0;
    }
    if !t.is_finite() {
        return t;
    }
    let mut at = 0.0;
    let mut step = 1.0_f64;
    while at < t {
        at += step;
        step = (step * 2.0).min(60.0);
    }
    at
}

fn secs(v: f64) -> Duration {
    Duration::from_secs_f64(if v.is_finite() { v.max(0.0) } else { 0.0 })
}

impl Plan {
    /// The expected length of each phase and of the run (not counting the stack's start and
    /// the cleanup): a hold takes its duration; a backlog phase the longest of its model's
    /// drain (plus one reconcile), its physical limit and its time to Ready (p99); a fault
    /// phase its duration plus, for an outage, the predicted recovery. A phase never takes
    /// longer than its timeout.
    ///
    /// A delete soon after a create also waits out the provider's creation grace
    /// (crossplane-runtime: a resource Observe cannot find within 30 s of its create is
    /// requeued with backoff, 1 s, 2 s, 4 s, …, until the grace has passed).
    #[must_use]
    pub fn expected_duration(&self, s: &Scenario) -> ExpectedDuration {
        let mut phases = Vec::new();
        let mut at_most = Duration::ZERO;
        let mut now = 0.0;
        let mut created = vec![f64::NEG_INFINITY; s.groups.len()];
        for (phase, pp) in s.phases.iter().zip(&self.phases) {
            let get = |q: &str| {
                self.find(&format!("{}/{q}", phase.name))
                    .map_or(0.0, |p| p.value)
            };
            let backlog = (get("drain") + pp.params.l)
                .max(get("physical-limit"))
                .max(get("ttr-p99"));
            let (expected, longest) = match &phase.action {
                Action::Hold { duration } => (duration.as_secs_f64(), *duration),
                // Its kills fall in the phase they interrupt; it takes no time of its own.
                Action::Kill { .. } => (0.0, Duration::ZERO),
                Action::CloudOutage { duration, .. } => (
                    duration.as_secs_f64() + get("recovery"),
                    (*duration + phase.timeout),
                ),
                Action::CloudLatency { duration, .. }
                | Action::CloudFault { duration, .. }
                | Action::FunctionFault { duration, .. } => (
                    duration.map_or(0.0, |d| d.as_secs_f64()),
                    duration.unwrap_or_default() + phase.timeout,
                ),
                Action::Create { groups, rate } => {
                    let n: f64 = groups.iter().map(|&g| f64::from(s.groups[g].count)).sum();
                    let writes = rate.map_or(0.0, |r| n / r);
                    groups.iter().for_each(|&g| created[g] = now + writes);
                    (backlog, phase.timeout)
                }
                Action::Delete { groups, .. } => {
                    let grace = groups
                        .iter()
                        .map(|&g| created[g] + CREATION_GRACE_S - now)
                        .fold(0.0, f64::max);
                    (backlog.max(backoff_reaching(grace)), phase.timeout)
                }
                _ => (backlog, phase.timeout),
            };
            at_most += longest;
            let d = secs(expected).min(longest);
            now += d.as_secs_f64();
            phases.push((phase.name.clone(), d));
        }
        let total = phases.iter().map(|(_, d)| *d).sum();
        ExpectedDuration {
            phases,
            total,
            at_most,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::backoff_reaching;
    use crate::predict::plan;

    #[test]
    fn the_backoff_schedule_doubles_to_a_minute() {
        let times: Vec<f64> = [0.0, 1.0, 2.0, 11.0, 40.0, 100.0]
            .into_iter()
            .map(backoff_reaching)
            .collect();
        assert_eq!(times, [0.0, 1.0, 3.0, 15.0, 63.0, 123.0]);
    }
    use crate::scenario::parse;

    #[test]
    fn a_hold_takes_its_duration_and_a_wave_its_drain() {
        let s = parse(
            "apiVersion: harness/v1\nname: t\nprovider: {maxReconcileRate: 10}\nresources:\n  - {name: b, kind: Bucket, count: 1000}\nphases:\n  - {name: create, action: create}\n  - {name: restart, action: restart}\n  - {name: hold, action: hold, duration: 90s}\n",
            "t.yaml",
        )
        .unwrap();
        let d = plan(&s).expected_duration(&s);
        // create: 2N reconciles through the bucket, (2·1000 − 100)/10 = 190 s, plus L̄.
        assert_eq!(d.phases[0].1.as_millis(), 190_050);
        // restart: (N − B)/R = (1000 − 100)/10 = 90 s, plus L̄ = 50 ms.
        assert_eq!(d.phases[1].1.as_millis(), 90_050);
        assert_eq!(d.phases[2].1.as_secs(), 90);
        assert_eq!(d.total.as_millis(), 370_100);
        assert_eq!(d.at_most.as_secs(), 600 + 600 + 90);
    }
}
