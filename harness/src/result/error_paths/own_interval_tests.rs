use super::tests::get;
use super::*;

/// 100 Buckets at P = 10m: the first 20 annotated to poll every 5 s, the next 30 every
/// hour; a 10-minute hold, checked in windows of 10 minutes.
const YAML: &str = "apiVersion: harness/v1\nname: own\nprovider: {maxReconcileRate: 100, pollInterval: 10m}\nresources:\n  - name: b\n    kind: Bucket\n    count: 100\n    annotations: [{percent: 20, values: {crossplane.io/poll-interval: 5s}}, {percent: 30, values: {crossplane.io/poll-interval: 1h}}]\nphases:\n  - {name: create, action: create}\n  - {name: hold, action: hold, duration: 10m}\nassertions:\n  - {check: perResourceCalls, phase: hold, window: 10m}\n  - {check: hotLoops, phase: hold, window: 10m}\n";

const HOLD: (u64, u64) = (1_000_000, 601_000_000);

/// Each resource polled at its own interval plus L̄ through the hold, except those
/// `every` gives another period (s).
fn observations(s: &Scenario, every: impl Fn(&str) -> Option<f64>) -> Observations {
    let mut calls = Vec::new();
    for g in &s.groups {
        for i in 0..g.count {
            let name = g.resource_name(i, &s.name);
            let period = every(&name)
                .unwrap_or(g.poll_interval_of(i, &s.settings, &s.name).as_secs_f64() + 0.05);
            let mut t = HOLD.0 as f64 + f64::from(i) * 1e4;
            while t < HOLD.1 as f64 {
                calls.push(get(t, name.clone()));
                t += period * 1e6;
            }
        }
    }
    Observations::create_then_hold(calls, HOLD.0, HOLD.1)
}

fn verdicts(s: &Scenario, obs: &Observations) -> (Verdict, Verdict) {
    let plan = crate::predict::plan(s);
    let own = OwnIntervals::of(s);
    let subject = |a| Subject {
        s,
        plan: &plan,
        obs,
        a,
        own: &own,
        range: HOLD,
        phase: Some("hold"),
    };
    let per = per_resource_calls(subject(&s.assertions[0]), (600.0, None));
    let hot = hot_loops_verdict(subject(&s.assertions[1]), (600.0, 3.0, 0));
    (per, hot)
}

#[test]
fn each_resource_is_held_to_the_limit_of_its_own_interval() {
    let s = crate::scenario::parse(YAML, "own.yaml").expect("valid");
    let name = |i: u32| s.groups[0].resource_name(i, &s.name);
    // Every resource at its own interval: the 5 s share makes 119 calls in 10 minutes,
    // far above what the flag's 10 minutes allow (2·(⌊600/60⌋ + 1) = 22, hot above 66),
    // and within its own (g = 4.5 s: 2·(⌊600/4.5⌋ + 1) = 268, hot above 804).
    let (per, hot) = verdicts(&s, &observations(&s, |_| None));
    assert!(per.pass, "{per:?}");
    assert!(hot.pass && hot.observed == 0.0, "{hot:?}");
    assert!(per.inputs.contains("5s→268"), "{}", per.inputs);
    assert!(
        hot.inputs.contains("5s→804") && hot.inputs.contains("3600s→66"),
        "{}",
        hot.inputs
    );
    let busiest = per.note.as_deref().unwrap_or_default();
    assert!(
        busiest.contains("with 119 calls") && busiest.contains("limit 268"),
        "{busiest}"
    );

    // A resource of the hour share calling every 2 s (300 calls) is a hot loop against
    // its own limit (66), and so is one of the 5 s share calling every 0.5 s (1,200
    // against 804); the other 5 s resources are not named.
    let (slow, fast) = (name(30), name(3));
    let looping = |n: &str| {
        if n == slow {
            Some(2.0)
        } else if n == fast {
            Some(0.5)
        } else {
            None
        }
    };
    let (per, hot) = verdicts(&s, &observations(&s, looping));
    assert!(!per.pass, "{per:?}");
    assert_eq!(hot.observed, 2.0, "{hot:?}");
    let named = hot.note.as_deref().unwrap_or_default();
    assert!(
        named.contains(&format!("{fast} (1200 calls, limit 804)")),
        "{named}"
    );
    assert!(
        named.contains(&format!("{slow} (300 calls, limit 66)")),
        "{named}"
    );
    // The verdict shows the resource furthest over its own limit: the hour one.
    assert_eq!((per.observed, per.limit), (300.0, 22.0), "{per:?}");
}
