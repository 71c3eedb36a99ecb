//! The calibration run of a scenario: its groups cut to a sample, healthy, created, held
//! through a few polls, updated as the scenario updates them, and deleted.

use std::time::Duration;

use crate::scenario::{Action, Classes, Phase, Scenario, Until};

/// How a calibration samples a scenario.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleOptions {
    /// Resources per group (at most the group's count).
    pub per_group: u32,
    /// Polls each resource is held for.
    pub polls: u32,
    /// Resources created, updated and deleted per second.
    pub rate: f64,
}

impl Default for SampleOptions {
    fn default() -> Self {
        SampleOptions {
            per_group: 5,
            polls: 3,
            rate: 1.0,
        }
    }
}

/// The longest a sample's create, update or delete may take beyond its pacing: a sample
/// is small, and a kind that never becomes Ready should say so in minutes, not hours.
const PHASE_SLACK: Duration = Duration::from_secs(120);

/// The calibration run of `s`: each group cut to `per_group` resources without its faults,
/// the cloud without injected errors, no assertions, and the phases `create` (paced at
/// `rate`, until every resource is Ready), `hold` (`polls` of the longest poll interval, its
/// jitter included), each of the scenario's `update` phases (paced, then held for the
/// shorter of a poll and 30 s, so its reconciles end before the next write), and `delete`
/// (paced, until every resource is gone).
#[must_use]
pub fn sample(s: &Scenario, o: SampleOptions) -> Scenario {
    // The name stays: objects were rendered with it (a Secret's namespace).
    let mut c = s.clone();
    c.assertions.clear();
    c.cloud.errors = Classes::default();
    for g in &mut c.groups {
        g.count = g.count.min(o.per_group);
        g.faults.clear();
        for share in &mut g.annotations {
            share.start = share.start.min(g.count);
            share.end = share.end.min(g.count);
        }
    }
    let all: Vec<usize> = (0..c.groups.len()).collect();
    let n = c.total_resources() as f64;
    let paced = |n: f64| Duration::from_secs_f64(n / o.rate.max(1e-3)) + PHASE_SLACK;
    let longest_poll = c
        .groups
        .iter()
        .flat_map(|g| g.poll_intervals(&c.settings, &c.name))
        .map(|(p, _)| p)
        .max()
        .unwrap_or(c.settings.poll_interval);
    let jitter = 1.0 + f64::from(c.settings.poll_jitter_percent.max(10)) / 100.0;
    let hold = longest_poll.mul_f64(f64::from(o.polls) * jitter) + Duration::from_secs(1);
    let settle = longest_poll.min(Duration::from_secs(30));
    let mut phases = vec![
        Phase {
            name: "create".to_owned(),
            action: Action::Create {
                rate: Some(o.rate),
                groups: all.clone(),
            },
            until: Until::AllReady,
            timeout: paced(n),
            composites: Vec::new(),
        },
        Phase {
            name: "hold".to_owned(),
            action: Action::Hold { duration: hold },
            until: Until::Elapsed,
            timeout: hold + Duration::from_secs(60),
            composites: Vec::new(),
        },
    ];
    for (i, p) in s.phases.iter().enumerate() {
        if let Action::Update { groups, spec, .. } = &p.action {
            let acted: f64 = groups.iter().map(|&g| f64::from(c.groups[g].count)).sum();
            phases.push(Phase {
                name: format!("update-{}", i + 1),
                action: Action::Update {
                    rate: Some(o.rate),
                    groups: groups.clone(),
                    spec: spec.clone(),
                },
                until: p.until,
                timeout: paced(acted),
                composites: Vec::new(),
            });
            phases.push(Phase {
                name: format!("settle-{}", i + 1),
                action: Action::Hold { duration: settle },
                until: Until::Elapsed,
                timeout: settle + Duration::from_secs(60),
                composites: Vec::new(),
            });
        }
    }
    phases.push(Phase {
        name: "delete".to_owned(),
        action: Action::Delete {
            rate: Some(o.rate),
            groups: all,
        },
        until: Until::AllGone,
        timeout: paced(n),
        composites: Vec::new(),
    });
    c.phases = phases;
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse;

    #[test]
    fn a_sample_keeps_a_few_healthy_resources_and_paces_their_phases() {
        let s = parse(
            "apiVersion: harness/v1\nname: t\nprovider: {maxReconcileRate: 10, pollInterval: 1m, pollJitterPercent: 20}\nresources:\n  - {name: b, kind: Bucket, count: 100, faults: [{percent: 10, error: AccessDenied}]}\n  - {name: r, kind: Record, count: 2}\nphases:\n  - {name: create, action: create}\n  - {name: hold, action: hold, duration: 1h}\n  - {name: tag, action: update, groups: [b], spec: {tags: {a: b}}}\n  - {name: delete, action: delete}\nassertions:\n  - {check: throttles}\n",
            "t.yaml",
        )
        .expect("valid");
        let c = sample(&s, SampleOptions::default());
        assert_eq!((c.groups[0].count, c.groups[1].count), (5, 2));
        assert!(c.groups[0].faults.is_empty() && c.assertions.is_empty());
        let names: Vec<&str> = c.phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["create", "hold", "update-3", "settle-3", "delete"]);
        // 3 polls of 1 m with 20 % jitter, and a second.
        assert_eq!(
            c.phases[1].action,
            Action::Hold {
                duration: Duration::from_secs(217)
            }
        );
        assert!(matches!(
            c.phases[2].action,
            Action::Update {
                rate: Some(1.0),
                ..
            }
        ));
        assert_eq!(
            c.phases[3].action,
            Action::Hold {
                duration: Duration::from_secs(30)
            }
        );
    }
}
