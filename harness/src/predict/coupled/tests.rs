use super::*;
use crate::predict::error_paths::backoff_attempts;

fn cfg(r: f64, t: f64, windows: &[f64]) -> Config {
    Config {
        bucket: (r, 10.0 * r),
        backoff: (1.0, 60.0),
        workers: r as usize,
        controllers: 1,
        reconcile: 0.05,
        quotas: vec![(None, None)],
        duration: t,
        windows: windows.to_vec(),
    }
}

fn class(label: &str, n: usize, interval: f64, behaviour: Behaviour) -> Class {
    Class {
        label: label.into(),
        n,
        interval,
        jitter: interval / 10.0,
        behaviour,
        reads: 1,
        account: 0,
        controller: 0,
    }
}

#[test]
fn a_failing_share_under_a_bucket_with_room_follows_the_backoff_to_its_cap() {
    let out = simulate(
        &cfg(100.0, 3600.0, &[600.0]),
        &[
            class("b/poll-60", 190, 60.0, Behaviour::Healthy),
            class("b/AccessDenied", 10, 60.0, Behaviour::FailObserve),
        ],
    );
    let f = out.class("b/AccessDenied").expect("class");
    // At the cap: one reconcile every d_max + L̄.
    assert!((f.reconciles * 60.05 - 1.0).abs() < 0.01, "{f:?}");
    assert_eq!(out.delayed, 0.0);
    // After the warm-up the ramp is over: no window of 10 minutes holds more than A(600).
    assert!(
        f.busiest_calls[0] <= backoff_attempts(600.0, 1.0, 60.0),
        "{f:?}"
    );
    let h = out.class("b/poll-60").expect("class");
    assert!((h.reconciles * 60.05 - 1.0).abs() < 0.02, "{h:?}");
}

/// docs/budget.md §9.1's measurement: 50 observe-only buckets failing on the pre-#1088
/// requeue beside 50 healthy ones, R = 10, P = 10 min: the provider made 714 calls per
/// failing resource-hour in an hour's hold (the ramp at its cap: 60); with 5 failing, 60.
#[test]
fn the_bucket_resets_the_backoff_of_a_large_failing_share_as_measured_on_the_provider() {
    let large = simulate(
        &cfg(10.0, 3600.0, &[600.0]),
        &[
            class("h/poll-600", 50, 600.0, Behaviour::Healthy),
            class("f/observe-only-absent", 50, 600.0, Behaviour::FailObserve),
        ],
    );
    let f = large.class("f/observe-only-absent").expect("class");
    let per_hour = f.calls * 3600.0;
    assert!(
        (per_hour - 714.0).abs() < 0.05 * 714.0,
        "{per_hour} calls per failing resource-hour: {f:?}"
    );
    assert!(large.delayed > 0.0);
    let small = simulate(
        &cfg(10.0, 3600.0, &[600.0]),
        &[
            class("h/poll-600", 95, 600.0, Behaviour::Healthy),
            class("f/observe-only-absent", 5, 600.0, Behaviour::FailObserve),
        ],
    );
    let f = small.class("f/observe-only-absent").expect("class");
    assert!((f.calls * 3600.0 - 60.0).abs() < 2.0, "{f:?}");
}

#[test]
fn a_read_quota_below_the_polls_fails_some_polls_which_retry_on_the_backoff() {
    let mut c = cfg(100.0, 1800.0, &[60.0]);
    c.quotas = vec![(
        Some(Quota {
            burst: 10.0,
            per_second: 4.0,
        }),
        None,
    )];
    let out = simulate(&c, &[class("b/poll-60", 300, 60.0, Behaviour::Healthy)]);
    let h = &out.classes[0];
    // 5 polls a second asked, 4 admitted: the rest are 429s, retried within seconds.
    assert!(out.rejected > 0.5, "{out:?}");
    assert!(h.reconciles * 300.0 > 5.0, "{h:?}");
    // Every admitted read is at most the quota's refill.
    assert!((h.calls - h.rejected) * 300.0 <= 4.0 + 0.1, "{h:?}");
}

#[test]
fn a_hold_of_a_hundred_thousand_resources_stops_at_its_event_bound() {
    let out = simulate(
        &cfg(10.0, 86_400.0, &[10.0, 3600.0]),
        &[class("b/poll-1", 100_000, 1.0, Behaviour::Healthy)],
    );
    assert!(out.truncated_at.is_some());
    assert!(out.calls > 0.0 && out.calls.is_finite());
    assert!(out.busiest_calls.iter().all(|v| v.is_finite()));
}
