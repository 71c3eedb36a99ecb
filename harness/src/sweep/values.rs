//! A point's figures: predicted from the scenario's plan (docs/budget.md's formulas, with
//! the point's settings) and measured from its run's result. Plain functions of their
//! inputs; a figure the scenario gives no phase for (no hold, no restart) is `None`.

use super::figure::Figure;
use crate::predict::Plan;
use crate::result::RunResult;
use crate::scenario::{Action, Scenario};

/// The name of the first phase whose action `is`.
fn first(s: &Scenario, is: impl Fn(&Action) -> bool) -> Option<&str> {
    s.phases
        .iter()
        .find(|p| is(&p.action))
        .map(|p| p.name.as_str())
}

/// The largest finite value of the phases' predictions `PHASE/{what}`.
fn max_over_phases(plan: &Plan, what: &str) -> Option<f64> {
    plan.phases
        .iter()
        .filter_map(|pp| plan.find(&format!("{}/{what}", pp.name)))
        .map(|p| p.value)
        .filter(|v| v.is_finite())
        .reduce(f64::max)
}

/// The first hold's plan: its population and steady rate (reconciles per second).
fn first_hold(s: &Scenario, plan: &Plan) -> Option<(f64, f64)> {
    let name = first(s, |a| matches!(a, Action::Hold { .. }))?;
    let pp = plan.phases.iter().find(|p| p.name == name)?;
    (pp.steady.rate > 0.0 && pp.population > 0).then_some((pp.population as f64, pp.steady.rate))
}

/// The predicted value of `f` for scenario `s` (with the point's settings) and its plan.
#[must_use]
pub fn predicted(s: &Scenario, plan: &Plan, f: Figure) -> Option<f64> {
    let v = match f {
        Figure::CloudCalls { window_s } => {
            max_over_phases(plan, &format!("cloud-calls/{window_s}s"))
        }
        Figure::ApiRequests { window_s } => {
            max_over_phases(plan, &format!("api-requests/{window_s}s"))
        }
        Figure::SteadyCallsPerHour => {
            let (mut calls, mut time) = (0.0, 0.0);
            for (phase, pp) in s.phases.iter().zip(&plan.phases) {
                if let Action::Hold { duration } = phase.action {
                    let t = duration.as_secs_f64();
                    calls += pp.steady.rate * pp.params.c_poll.max(1.0) * t;
                    time += t;
                }
            }
            (time > 0.0).then(|| calls / time * 3600.0)
        }
        Figure::Throttles => None,
        Figure::TimeToReady { quantile } => {
            let create = first(s, |a| matches!(a, Action::Create { .. }))?;
            plan.find(&format!("{create}/ttr-p{}", quantile * 100.0))
                .map(|p| p.value)
        }
        Figure::PollPeriod => first_hold(s, plan).map(|(n, rate)| n / rate),
        Figure::DriftDetection => {
            let (n, rate) = first_hold(s, plan)?;
            let period = n / rate;
            let name = first(s, |a| matches!(a, Action::Hold { .. }))?;
            let pp = plan.phases.iter().find(|p| p.name == name)?;
            // A uniform P ± j has variance j²/3.
            let j = pp.params.jitter_of(s.settings.poll_interval.as_secs_f64());
            Some(residual(period, j * j / 3.0))
        }
        Figure::DrainTime => {
            let restart = first(s, |a| matches!(a, Action::Restart))?;
            plan.expected_duration(s)
                .phases
                .into_iter()
                .find(|(n, _)| n == restart)
                .map(|(_, d)| d.as_secs_f64())
        }
    };
    v.filter(|v| v.is_finite())
}

/// Whether each poll of every group of `s` is one read of the cloud (an Observe of one call
/// and no Connect call): the run's realised intervals are the gaps between a resource's
/// reads, which are its poll period only then.
#[must_use]
pub fn one_read_per_poll(s: &Scenario) -> bool {
    s.groups.iter().all(|g| {
        let c = s
            .calls
            .get(&g.kind)
            .copied()
            .unwrap_or(crate::scenario::Calls::SAMPLE);
        c.observe + c.connect <= 1
    })
}

/// The mean wait from a moment chosen at random to the next poll, when polls are `mean`
/// apart with variance `var`: `E[T²] / 2E[T]` (the length-biased residual of a renewal
/// process), `mean / 2` for polls exactly `mean` apart.
#[must_use]
pub fn residual(mean: f64, var: f64) -> f64 {
    (mean * mean + var) / (2.0 * mean)
}

/// The measured value of `f` in run result `r`.
#[must_use]
pub fn measured(r: &RunResult, f: Figure) -> Option<f64> {
    let v = match f {
        Figure::CloudCalls { window_s } => r
            .phases
            .iter()
            .flat_map(|p| &p.peaks)
            .filter(|k| (k.window_s - window_s).abs() < 1e-9)
            .map(|k| k.count as f64)
            .reduce(f64::max),
        Figure::ApiRequests { window_s } => {
            let t = &r.timeline;
            if t.api_requests.is_empty() || t.bin_s <= 0.0 {
                return None;
            }
            let k = ((window_s / t.bin_s).round() as usize).max(1);
            Some(sliding_max(&t.api_requests, k) as f64)
        }
        Figure::SteadyCallsPerHour => {
            let (mut calls, mut time) = (0u64, 0.0);
            for p in r.phases.iter().filter(|p| p.action == "hold") {
                calls += p.calls.values().sum::<u64>();
                time += p.end_s - p.start_s;
            }
            (time > 0.0).then(|| calls as f64 / time * 3600.0)
        }
        Figure::Throttles => Some(r.throttles() as f64),
        Figure::TimeToReady { quantile } => r
            .phases
            .iter()
            .find(|p| p.action == "create")
            .and_then(|p| p.ttr.as_ref())
            .filter(|t| t.count > 0)
            .and_then(|t| {
                t.quantiles
                    .iter()
                    .find(|(q, _)| (q - quantile).abs() < 1e-9)
                    .map(|(_, v)| *v)
            }),
        Figure::PollPeriod => {
            let gaps: f64 = r.poll.iter().map(|p| p.gaps as f64).sum();
            (gaps > 0.0)
                .then(|| r.poll.iter().map(|p| p.gaps as f64 * p.mean_s).sum::<f64>() / gaps)
        }
        Figure::DriftDetection => {
            // Σ n·E[T²] / 2 Σ n·E[T] over the poll classes.
            let second: f64 = r
                .poll
                .iter()
                .map(|p| p.gaps as f64 * (p.mean_s * p.mean_s + p.stddev_s * p.stddev_s))
                .sum();
            let first: f64 = r.poll.iter().map(|p| p.gaps as f64 * p.mean_s).sum();
            (first > 0.0).then(|| second / (2.0 * first))
        }
        Figure::DrainTime => r
            .phases
            .iter()
            .find(|p| p.action == "restart")
            .filter(|p| p.completed)
            .map(|p| p.end_s - p.start_s),
    };
    v.filter(|v| v.is_finite())
}

/// The largest sum of `k` consecutive bins.
fn sliding_max(bins: &[u32], k: usize) -> u64 {
    let mut sum: u64 = bins.iter().take(k).map(|&b| u64::from(b)).sum();
    let mut best = sum;
    for i in k..bins.len() {
        sum = sum + u64::from(bins[i]) - u64::from(bins[i - k]);
        best = best.max(sum);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_of_bins_slides_over_the_timeline() {
        assert_eq!(sliding_max(&[1, 5, 2, 0, 7, 1], 2), 8);
        assert_eq!(sliding_max(&[1, 5, 2], 10), 8);
        assert_eq!(sliding_max(&[], 1), 0);
    }

    #[test]
    fn polls_exactly_p_apart_see_a_drift_after_p_over_2_on_average() {
        assert_eq!(residual(600.0, 0.0), 300.0);
        // Uniform 540..660 s: variance 60²/3 = 1200.
        assert!((residual(600.0, 1200.0) - 301.0).abs() < 1e-9);
    }

    #[test]
    fn the_gaps_between_reads_are_poll_periods_only_where_a_poll_is_one_read() {
        let sample = "apiVersion: harness/v1\nname: t\nresources:\n  - {name: b, kind: Bucket, count: 3}\nphases:\n  - {name: create, action: create}\n";
        let s = crate::scenario::parse(sample, "t.yaml").unwrap();
        assert!(one_read_per_poll(&s));
        let aws = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/sweep-aws.yaml"),
        )
        .unwrap();
        let s = crate::scenario::parse(&aws, "sweep-aws.yaml").unwrap();
        assert!(
            !one_read_per_poll(&s),
            "15 calls an observe and a Connect's"
        );
    }

    #[test]
    fn predicted_figures_come_from_the_plan_of_the_points_settings() {
        let yaml = "apiVersion: harness/v1\nname: t\nprovider: {maxReconcileRate: 10, pollInterval: 10m}\nresources:\n  - {name: b, kind: Bucket, count: 1000}\nphases:\n  - {name: create, action: create}\n  - {name: hold, action: hold, duration: 1h}\n  - {name: restart, action: restart}\n";
        let s = crate::scenario::parse(yaml, "t.yaml").unwrap();
        let plan = crate::predict::plan(&s);
        let p99 = predicted(&s, &plan, Figure::TimeToReady { quantile: 0.99 }).unwrap();
        assert_eq!(Some(p99), plan.find("create/ttr-p99").map(|p| p.value));
        let peak = predicted(&s, &plan, Figure::CloudCalls { window_s: 10.0 }).unwrap();
        assert!(peak >= 100.0 + 10.0 * 10.0, "B + R·W at least: {peak}");
        let period = predicted(&s, &plan, Figure::PollPeriod).unwrap();
        assert!((600.0..700.0).contains(&period), "{period}");
        let drift = predicted(&s, &plan, Figure::DriftDetection).unwrap();
        assert!((period / 2.0..period).contains(&drift), "{drift}");
        assert!(predicted(&s, &plan, Figure::DrainTime).unwrap() > 0.0);
        assert_eq!(predicted(&s, &plan, Figure::Throttles), None);
    }
}
