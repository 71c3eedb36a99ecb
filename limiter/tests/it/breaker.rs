//! Property tests of the XR circuit breaker: the bucket's bounds, what the counters count, and
//! when a circuit may close.

use std::collections::HashMap;

use limiter::controller::Request;
use limiter::crossplane::circuit::{
    Breaker, BreakerConfig, Decision, Deletion, EventSource, EventType, Mode, Watch, WatchEvent,
    handle,
};
use limiter::go::GoDuration;
use proptest::prelude::*;
use tokio::time::Instant;

const SECOND: i64 = 1_000_000_000;

#[derive(Clone, Debug)]
struct Op {
    gap_ms: u64,
    target: usize,
    event: WatchEvent,
    deletion: Deletion,
    source: usize,
    own: bool,
}

fn op() -> impl Strategy<Value = Op> {
    (
        0u64..20_000,
        0usize..3,
        prop_oneof![
            Just(WatchEvent::Create),
            Just(WatchEvent::Update),
            Just(WatchEvent::Delete),
            Just(WatchEvent::Generic)
        ],
        prop_oneof![
            8 => Just(Deletion::Live),
            1 => Just(Deletion::Marked),
            1 => Just(Deletion::Deleting)
        ],
        0usize..4,
        any::<bool>(),
    )
        .prop_map(|(gap_ms, target, event, deletion, source, own)| Op {
            gap_ms,
            target,
            event,
            deletion,
            source,
            own,
        })
}

fn config() -> impl Strategy<Value = BreakerConfig> {
    (0u32..20, 0.0f64..3.0, 1i64..120, 1i64..60, any::<bool>()).prop_map(
        |(burst, refill, cooldown, half_open, eager)| {
            BreakerConfig::default()
                .burst(f64::from(burst))
                .refill_per_second(refill)
                .cooldown(GoDuration(cooldown * SECOND))
                .half_open_interval(GoDuration(half_open * SECOND))
                .mode(if eager {
                    Mode::EagerClose
                } else {
                    Mode::Released
                })
        },
    )
}

fn target(i: usize) -> Request {
    Request::new("ns", format!("xr-{i}"))
}

proptest! {
    /// The bucket never holds more than its burst, and with a non-negative burst and refill it
    /// never goes below zero: a token is only spent when there is a whole one.
    #[test]
    fn tokens_stay_between_zero_and_the_burst(config in config(), ops in proptest::collection::vec(op(), 1..200)) {
        let mut b = Breaker::new("xrs", config);
        let mut now = Instant::now();
        for op in ops {
            now += std::time::Duration::from_millis(op.gap_ms);
            run(&mut b, now, &op);
            for t in 0..3 {
                if let Some(tokens) = b.stored_tokens(&target(t)) {
                    prop_assert!((0.0..=config.burst).contains(&tokens), "{tokens} outside 0..={}", config.burst);
                }
            }
        }
    }

    /// Every mapping the breaker decided is counted once under its type, a bypassed one not at
    /// all, and a request is enqueued exactly when one of its mappings was kept.
    #[test]
    fn the_counters_count_each_decision_once_and_bypasses_never(config in config(), ops in proptest::collection::vec(op(), 1..200)) {
        let mut b = Breaker::new("xrs", config);
        let mut now = Instant::now();
        let mut counted: HashMap<EventType, u64> = HashMap::new();
        for op in ops {
            now += std::time::Duration::from_millis(op.gap_ms);
            let h = run(&mut b, now, &op);
            for m in &h.mappings {
                if let Decision::Recorded(et) = m.decision {
                    *counted.entry(et).or_default() += 1;
                }
                prop_assert_eq!(m.decision == Decision::Bypassed, op.deletion == Deletion::Deleting
                    || (op.deletion == Deletion::Marked && m.object != limiter::crossplane::circuit::Object::Old));
                prop_assert!(!m.decision.kept() || h.enqueued.contains(&m.target));
            }
            for t in &h.enqueued {
                prop_assert!(h.mappings.iter().any(|m| &m.target == t && m.decision.kept()));
            }
        }
        for et in EventType::ALL {
            prop_assert_eq!(b.metrics().events(et), counted.get(&et).copied().unwrap_or(0));
        }
        prop_assert!(b.metrics().closes <= b.metrics().opens);
    }

    /// A circuit seen opening is never seen closed, with its state still held, before the
    /// cooldown has passed since; and in released mode time alone never closes it.
    #[test]
    fn an_open_circuit_closes_only_after_its_cooldown(config in config(), ops in proptest::collection::vec(op(), 1..200)) {
        let mut b = Breaker::new("xrs", config);
        let mut now = Instant::now();
        let mut opened: HashMap<usize, Instant> = HashMap::new();
        for op in ops {
            now += std::time::Duration::from_millis(op.gap_ms);
            run(&mut b, now, &op);
            for t in 0..3 {
                let held = b.stored_tokens(&target(t)).is_some();
                let open = b.state(now, &target(t)).is_open;
                match (open, opened.get(&t).copied()) {
                    (true, None) => { opened.insert(t, now); }
                    (false, Some(at)) => {
                        opened.remove(&t);
                        if held {
                            prop_assert!(now - at >= config.cooldown.to_std(), "closed {:?} after opening", now - at);
                        }
                    }
                    _ => {}
                }
            }
        }
        let later = now + std::time::Duration::from_secs(3600);
        for t in opened.keys() {
            let open_later = b.state(later, &target(*t)).is_open;
            prop_assert_eq!(open_later, config.mode == Mode::Released);
        }
    }

    /// With the circuit closed and no time passing, an Update costs two tokens and a Create one.
    #[test]
    fn an_update_costs_two_tokens_and_a_create_one(burst in 3u32..100, refill in 0.0f64..5.0) {
        let mut b = Breaker::new("xrs", BreakerConfig::default().burst(f64::from(burst)).refill_per_second(refill));
        let now = Instant::now();
        let src = EventSource::parse("Bucket/ns/b");
        let w = Watch::Maps(vec![target(0)]);
        handle(&mut b, now, WatchEvent::Create, &src, Deletion::Live, &w);
        prop_assert_eq!(b.stored_tokens(&target(0)), Some(f64::from(burst) - 1.0));
        handle(&mut b, now, WatchEvent::Update, &src, Deletion::Live, &w);
        prop_assert_eq!(b.stored_tokens(&target(0)), Some(f64::from(burst) - 3.0));
    }
}

fn run(b: &mut Breaker, now: Instant, op: &Op) -> limiter::crossplane::circuit::Handled {
    let sources = [
        "Bucket/ns/b0",
        "Bucket/ns/b1",
        "Role/r",
        "CompositionRevision/rev",
    ];
    if op.own {
        let xr = EventSource::new("XR", "ns", format!("xr-{}", op.target));
        handle(b, now, op.event, &xr, op.deletion, &Watch::OwnXr)
    } else {
        let src = EventSource::parse(sources[op.source]);
        let targets = (0..=op.target).map(target).collect();
        handle(b, now, op.event, &src, op.deletion, &Watch::Maps(targets))
    }
}
