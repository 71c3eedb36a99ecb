//! §12's formulas on hand-checkable numbers, the worked example of §12.6, and Lemma 6
//! against `limiter`'s breaker (the code the composer runs).

use std::time::Duration;

use limiter::controller::Request;
use limiter::crossplane::circuit::{Breaker, BreakerConfig, EventSource, EventType};
use tokio::time::Instant;

use super::breaker::{
    creation, creation_span_max, edits_to_open, first_open, first_open_by_windows, replay_reopens,
    resync, revision, revision_tokens,
};
use super::load::{
    creation_function_calls, creation_reconciles, creation_requests, first_reconcile_requests,
    function_calls, function_calls_bound, steady_rate, steady_requests, steady_requests_bound,
};
use super::ready::xr_time_to_ready;
use super::{CloseMode, CoreShape, Step, predict};
use crate::predict::Meaning;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

/// §12.6: 100 XRs of 5 Buckets, two steps (two functions), a 60 s TTL, core's defaults.
fn smoke() -> CoreShape {
    CoreShape::new(100.0, 5.0, vec![Step::new("resources"), Step::new("label")])
}

#[test]
fn the_worked_example_of_section_12_6() {
    let p = predict(&smoke());
    // (60 TTL polls + ρ = 4 resync reconciles) per XR-hour, 7 requests each.
    assert!(close(p.steady_requests_per_hour.value, 44_800.0));
    assert_eq!(p.steady_requests_per_hour.meaning, Meaning::Expected);
    // ⌊3600/54⌋ + 1 = 67 polls and 2·3·(⌊3600/3240⌋ + 1) = 12 resync reconciles.
    assert!(close(p.steady_requests_bound_per_hour.value, 55_300.0));
    let calls: Vec<f64> = p.function_calls_per_hour.iter().map(|c| c.value).collect();
    assert_eq!(calls.len(), 2);
    assert!(calls.iter().all(|c| close(*c, 6_400.0)), "{calls:?}");
    // w_xr = 7 + 2·2·5 = 27; R_c = 1 + 27 + 5·(1 + 6) = 63; a_core = 5 + 7 = 12.
    assert!(close(p.creation_reconciles.value, 63.0));
    assert!(close(
        p.creation_requests.value,
        100.0 * (12.0 + 62.0 * 8.0)
    ));
    assert!(close(p.creation_function_calls[0].value, 6_300.0));
    // c + 2U between 6 + 2·(7 + 4 + 30) = 88 and 6 + 2·(27 + 30) = 120: in a burst
    // (Δt = 0) creation may open the circuit, not surely …
    assert!(close(p.creation_opens.tokens.value, 120.0));
    assert!(close(p.creation_opens.tokens_min.value, 88.0));
    assert!(close(p.creation_opens.may_open.value, 1.0));
    assert!(close(p.creation_opens.opens.value, 0.0));
    // … and the TTL requeue refreshes any XR whose Ready writes were dropped.
    assert!(close(p.creation_opens.stale_xrs.value, 0.0));
    assert!(close(p.creation_opens.stale_for.value, 66.0));
    // Resync: 2·5 = 10 ≤ 100; one Composition edit: 9 ≤ 100.
    assert!(close(p.resync_opens.may_open.value, 0.0));
    assert!(close(p.revision_opens.may_open.value, 0.0));
    assert!(close(p.revision_opens.tokens.value, 9.0));
    // Spread over 20 s or more, creation cannot open it: 120 ≤ 100 + 1·20.
    let spread = CoreShape {
        creation_span: 20.0,
        ..smoke()
    };
    assert!(close(creation(&spread).may_open.value, 0.0));
    assert!(p.all().count() >= 5 + 4 + 3 * 7);
    // Without a TTL: the resyncs alone, 7·100·4 and 100·4; a fast creation may leave all 100
    // XRs stale until the resync, at most 1.1 h.
    let no_ttl = CoreShape {
        ttl: 0.0,
        ..smoke()
    };
    assert!(close(steady_requests(&no_ttl, 3600.0).value, 2_800.0));
    assert!(close(function_calls(&no_ttl, "label", 3600.0).value, 400.0));
    assert!(close(creation(&no_ttl).stale_xrs.value, 100.0));
    assert!(close(creation(&no_ttl).stale_for.value, 3960.0));
}

#[test]
fn steady_polling_is_n_plus_two_applies_per_xr_per_ttl() {
    let s = CoreShape {
        xrs: 3.0,
        sync_interval: f64::INFINITY,
        ..smoke()
    };
    // 3 XRs, 7 requests, every 60 s: 210 in 600 s; at most ⌊600/54⌋ + 1 = 12 each.
    assert!(close(steady_requests(&s, 600.0).value, 210.0));
    assert!(close(
        steady_requests_bound(&s, 600.0).value,
        3.0 * 7.0 * 12.0
    ));
    // Live Secret reads add to each reconcile.
    let secrets = CoreShape {
        secret_reads: 2.0,
        ..s.clone()
    };
    assert!(close(steady_requests(&secrets, 600.0).value, 270.0));
    // Realtime off: the poll interval, whatever the TTL.
    let polled = CoreShape {
        realtime: false,
        ttl: 10.0,
        poll_interval: 120.0,
        ..s.clone()
    };
    assert!(close(steady_requests(&polled, 600.0).value, 105.0));
    // No TTL and no resync: nothing at all.
    let quiet = CoreShape { ttl: 0.0, ..s };
    assert!(close(steady_requests(&quiet, 600.0).value, 0.0));
    assert!(close(steady_requests_bound(&quiet, 600.0).value, 0.0));
}

#[test]
fn the_workers_cap_the_steady_rate() {
    // L = 2·0.5 + 7·0.5 = 4.5 s; 10,000 XRs ask 10,000/64.5 = 155/s; 100 workers give 22.2/s.
    let s = CoreShape {
        xrs: 10_000.0,
        t_fn: 0.5,
        t_apply: 0.5,
        sync_interval: f64::INFINITY,
        ..smoke()
    };
    assert!(close(steady_rate(&s), 100.0 / 4.5));
    let light = CoreShape {
        xrs: 10.0,
        ..s.clone()
    };
    assert!(close(steady_rate(&light), 10.0 / 64.5));
}

#[test]
fn function_calls_are_k_per_step_of_the_function() {
    let s = CoreShape {
        steps: vec![
            Step::new("resources"),
            Step {
                function: "lookup".into(),
                calls: 2.0,
            },
            Step::new("resources"),
        ],
        xrs: 10.0,
        sync_interval: f64::INFINITY,
        ..smoke()
    };
    assert_eq!(s.functions(), ["resources", "lookup"]);
    // 10 XRs every 60 s for an hour: 600 reconciles; 2 calls each of both.
    assert!(close(function_calls(&s, "resources", 3600.0).value, 1200.0));
    assert!(close(function_calls(&s, "lookup", 3600.0).value, 1200.0));
    assert!(close(
        function_calls_bound(&s, "lookup", 3600.0).value,
        10.0 * 2.0 * 67.0
    ));
    assert!(close(
        creation_function_calls(&s, "lookup").value,
        10.0 * 2.0 * 63.0
    ));
}

#[test]
fn creation_fan_in_and_first_reconcile() {
    // The stand-in provider of the composer's tests: one Ready write per resource.
    let s = CoreShape {
        xrs: 3.0,
        provider_writes: 1.0,
        status_changes: 1.0,
        ..smoke()
    };
    // 5 creating applies, the four Updates, the reference and status applies, the status
    // Update: 12.
    assert!(close(first_reconcile_requests(&s), 12.0));
    // w_xr = 7 + 2·5 = 17; 1 + 17 + 5·2 = 28.
    assert!(close(creation_reconciles(&s).value, 28.0));
    assert!(close(
        creation_requests(&s).value,
        3.0 * (12.0 + 27.0 * 8.0)
    ));
    // Its breaker tokens: 6 creates, 7 + 10 XR writes and 5 provider writes: 6 + 2·22 = 50
    // at most; 6 + 2·(7 + 2 + 5) = 34 when one reconcile sees every Ready at once.
    assert!(close(creation(&s).tokens.value, 50.0));
    assert!(close(creation(&s).tokens_min.value, 34.0));
    assert!(close(creation(&s).may_open.value, 0.0));
}

#[test]
fn xr_time_to_ready_adds_the_watch_and_one_reconcile() {
    let s = CoreShape {
        mr_ready: 10.0,
        t_watch: 0.1,
        t_fn: 0.05,
        t_apply: 0.01,
        ..smoke()
    };
    // 10 + 0.1 + 2·0.05 + 7·0.01.
    assert!(close(xr_time_to_ready(&s).value, 10.27));
}

#[test]
fn resync_opens_past_fifty_objects_of_one_kind() {
    for (n, opens) in [(50.0, 0.0), (51.0, 1.0)] {
        let s = CoreShape {
            xrs: 1.0,
            composed: n,
            watched_per_kind: n,
            ..smoke()
        };
        let v = resync(&s);
        assert!(close(v.opens.value, opens), "{n}");
        assert!(close(v.stale_xrs.value, 0.0));
        // Released: the cooldown and at most one resync period more.
        let want = if opens > 0.0 { 300.0 + 3960.0 } else { 0.0 };
        assert!(close(v.open_for.value, want), "{}", v.open_for.value);
    }
    let eager = CoreShape {
        composed: 51.0,
        watched_per_kind: 51.0,
        breaker: super::BreakerShape {
            mode: CloseMode::Eager,
            ..Default::default()
        },
        ..smoke()
    };
    assert!(close(resync(&eager).open_for.value, 330.0));
}

#[test]
fn a_replay_reopens_the_creations_circuit_past_forty_nine_objects_of_one_kind() {
    // 2·n_kind + 2 > 100: 49 objects take 100 tokens with the status Update, 50 take 102.
    for (n, reopens) in [(49.0, 0.0), (50.0, 1.0)] {
        let s = CoreShape {
            xrs: 1.0,
            composed: n,
            watched_per_kind: n,
            ..smoke()
        };
        let p = replay_reopens(&s, true);
        assert!(close(p.value, reopens), "{n}");
        assert_eq!(p.meaning, Meaning::Condition);
        // A circuit the creation did not open has nothing to reopen.
        assert!(close(replay_reopens(&s, false).value, 0.0));
    }
    let fifty = CoreShape {
        composed: 50.0,
        watched_per_kind: 50.0,
        ..smoke()
    };
    // Eager: the reconcile after the cooldown closed it before the replay.
    let eager = CoreShape {
        breaker: super::BreakerShape {
            mode: CloseMode::Eager,
            ..Default::default()
        },
        ..fifty.clone()
    };
    assert!(close(replay_reopens(&eager, true).value, 0.0));
    // A replay within the cooldown finds the circuit still open: its events are dropped.
    let early = CoreShape {
        sync_interval: 300.0,
        ..fifty.clone()
    };
    assert!(close(replay_reopens(&early, true).value, 0.0));
    // Against the breaker the composer runs: a circuit opened at 0, the replay's 100
    // mappings at 3,300 s (past the cooldown), then the status Update's 2.
    let (t, src) = (Request::cluster("x"), EventSource::parse("Record/x-0"));
    let t0 = Instant::now();
    let mut b = Breaker::new("c", BreakerConfig::default());
    for _ in 0..101 {
        b.record_event(t0, &t, &src, EventType::Allowed);
    }
    assert_eq!(b.metrics().opens, 1, "the creation's storm opened it");
    let replay = t0 + Duration::from_secs(3300);
    for _ in 0..100 {
        b.record_event(replay, &t, &src, EventType::Dropped);
    }
    assert_eq!((b.metrics().opens, b.metrics().closes), (1, 1));
    for _ in 0..2 {
        b.record_event(replay, &t, &src, EventType::Allowed);
    }
    assert_eq!(b.metrics().opens, 2, "the status Update reopened it");
}

#[test]
fn an_edit_storm_opens_at_the_thirteenth_revision_and_leaves_xrs_behind_without_a_ttl() {
    let s = CoreShape {
        xrs: 10.0,
        composed: 2.0,
        ttl: 0.0,
        edit_interval: 1.0,
        ..smoke()
    };
    assert!(close(revision_tokens(&s), 9.0));
    // ⌊(100 − 1)/(9 − 1)⌋ + 1 = 13.
    assert_eq!(edits_to_open(&s), Some(13.0));
    let v = revision(&s);
    assert!(close(v.opens.value, 1.0));
    assert!(close(v.stale_xrs.value, 10.0));
    assert!(close(v.stale_for.value, 3960.0));
    // Eager: back within the half-open interval; edits a minute apart never open it.
    let eager = CoreShape {
        breaker: super::BreakerShape {
            mode: CloseMode::Eager,
            ..Default::default()
        },
        ..s.clone()
    };
    assert!(close(revision(&eager).stale_xrs.value, 0.0));
    assert!(close(revision(&eager).stale_for.value, 30.0));
    let slow = CoreShape {
        edit_interval: 60.0,
        ..s
    };
    assert_eq!(edits_to_open(&slow), None);
}

#[test]
fn creation_that_opens_without_a_ttl_leaves_every_xr_stale_until_the_resync() {
    // crossplane#7108/#7703: 60 resources, Synced then Ready written at once.
    let s = CoreShape {
        xrs: 1.0,
        composed: 60.0,
        ttl: 0.0,
        provider_writes: 2.0,
        ..smoke()
    };
    let v = creation(&s);
    assert!(close(v.opens.value, 1.0));
    assert!(close(v.stale_xrs.value, 1.0));
    let off = CoreShape {
        realtime: false,
        ..s
    };
    assert!(close(creation(&off).opens.value, 0.0));
}

#[test]
fn a_provider_that_spreads_the_creation_over_minutes_makes_no_circuit_sure_to_open() {
    // xr-day-2k: 10 Buckets per XR, no TTL; c + 2U between 153 and 225 tokens.
    let day = |mr_ready: f64| CoreShape {
        xrs: 2000.0,
        composed: 10.0,
        ttl: 0.0,
        mr_ready,
        ..smoke()
    };
    // A provider that makes every Bucket Ready at once: every circuit surely opens.
    let burst = creation(&day(0.0));
    assert!(close(burst.tokens_min.value, 153.0));
    assert!(close(burst.opens.value, 1.0));
    // One that needs 786 s for the 20,000 Buckets spreads an XR's 153 tokens over up to
    // 786 s, against 100 + 786: none is sure to open, every one still may.
    let paced = creation(&day(786.0));
    assert!(close(creation_span_max(&day(786.0)), 786.0));
    assert!(close(paced.opens.value, 0.0));
    assert!(close(paced.may_open.value, 1.0));
    // The line is at 53 s: 153 > 100 + 52.9, not > 100 + 53.
    assert!(close(creation(&day(52.9)).opens.value, 1.0));
    assert!(close(creation(&day(53.0)).opens.value, 0.0));
}

/// A deterministic sequence of mapping times: bursts and gaps, sorted.
fn times(seed: u64, n: usize) -> Vec<f64> {
    let mut x = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut t = 0.0;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let r = (x >> 11) as f64 / (1u64 << 53) as f64;
        // Half the mappings at the same instant (an Update's two, a replay), the rest up to
        // 3 s apart.
        if r > 0.5 {
            t += (r - 0.5) * 6.0 + 0.000_123;
        }
        out.push(t);
    }
    out
}

fn limiter_first_open(times: &[f64], burst: f64, refill: f64) -> Option<usize> {
    let mut b = Breaker::new(
        "composite/x",
        BreakerConfig::default()
            .burst(burst)
            .refill_per_second(refill),
    );
    let start = Instant::now();
    let target = Request::new("default", "xr");
    let source = EventSource::new("Widget", "default", "w");
    for (i, &t) in times.iter().enumerate() {
        b.record_event(
            start + Duration::from_secs_f64(t),
            &target,
            &source,
            EventType::Allowed,
        );
        if b.metrics().opens > 0 {
            return Some(i);
        }
    }
    None
}

#[test]
fn lemma_6_the_window_form_is_the_bucket_and_limiter_s_breaker() {
    let mut opened = 0;
    for seed in 0..200 {
        let t = times(seed, 160);
        for (burst, refill) in [(100.0, 1.0), (50.0, 0.5), (20.0, 3.0)] {
            let by_bucket = first_open(&t, burst, refill);
            assert_eq!(
                by_bucket,
                first_open_by_windows(&t, burst, refill),
                "{seed}"
            );
            assert_eq!(by_bucket, limiter_first_open(&t, burst, refill), "{seed}");
            opened += usize::from(by_bucket.is_some());
        }
    }
    // Both outcomes occur: the comparison is not vacuous.
    assert!(opened > 50 && opened < 550, "{opened}");
    // A burst of B + 1 opens on its last; B does not.
    assert_eq!(first_open(&[0.0; 101], 100.0, 1.0), Some(100));
    assert_eq!(first_open(&[0.0; 100], 100.0, 1.0), None);
}
