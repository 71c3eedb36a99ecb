use super::*;
use crate::result::observe::CloudCall;

/// 100 Buckets at P = 1m, the first 20 annotated to poll every 10 s, held 10 minutes.
const YAML: &str = "apiVersion: harness/v1\nname: own\nprovider: {maxReconcileRate: 100, pollInterval: 1m}\nresources:\n  - name: b\n    kind: Bucket\n    count: 100\n    annotations: [{percent: 20, values: {crossplane.io/poll-interval: 10s}}]\nphases:\n  - {name: create, action: create}\n  - {name: hold, action: hold, duration: 10m}\nassertions:\n  - {check: pollPeriod, phase: hold}\n";

/// Every resource polled at exactly its own interval plus L̄ (50 ms) through the hold.
fn observations(s: &Scenario) -> Observations {
    let (start, end) = (1_000_000u64, 601_000_000u64);
    let mut calls = Vec::new();
    for g in &s.groups {
        for i in 0..g.count {
            let every = g.poll_interval_of(i, &s.settings, &s.name).as_secs_f64() + 0.05;
            let mut t = start as f64 + f64::from(i) * 1e4;
            while t < end as f64 {
                calls.push(get(t, g.resource_name(i, &s.name)));
                t += every * 1e6;
            }
        }
    }
    Observations::create_then_hold(calls, start, end)
}

/// A successful generic read of `name` at `t_us`.
pub(super) fn get(t_us: f64, name: String) -> CloudCall {
    CloudCall {
        at_us: t_us as u64,
        account: "default".into(),
        action: CallAction::Get,
        op: "generic:get".into(),
        name,
        status: 200,
        throttled: false,
        retry_not_before_us: None,
    }
}

#[test]
fn each_resource_is_held_to_its_own_poll_interval() {
    let s = crate::scenario::parse(YAML, "own.yaml").expect("valid");
    let plan = crate::predict::plan(&s);
    let obs = observations(&s);
    let own = OwnIntervals::of(&s);
    let v = poll_period_verdict(
        Subject {
            s: &s,
            plan: &plan,
            obs: &obs,
            a: &s.assertions[0],
            own: &own,
            range: (1_000_000, 601_000_000),
            phase: Some("hold"),
        },
        20.0,
    );
    assert!(v.pass, "{v:?}");
    // Every resource at its own interval: no deviation, though the mean period (about
    // 50 s) is far from the flag's 60 s.
    assert!(v.margin > 19.9, "{v:?}");
    assert!(v.observed < 0.1, "{v:?}");
    let note = v.note.as_deref().unwrap_or_default();
    let periods: Vec<f64> = note
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(periods.len(), 2, "{note}");
    assert!((periods[0] - periods[1]).abs() < 0.1, "{note}");
    assert!(periods[0] < 55.0, "{note}");
    assert!(v.inputs.contains("own intervals=2"), "{}", v.inputs);
}
