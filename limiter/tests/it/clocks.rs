//! The two clocks from the outside: a provider runtime on tokio's paused clock (what the
//! provider uses in virtual time) and on a virtual clock (exact to the nanosecond).

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use limiter::clock::{Clock, VirtualClock};
use limiter::controller::Request;
use limiter::crossplane::{ProviderRuntime, RateLimitModel, Settings};
use limiter::workqueue::{DelayingQueue, QueueConfig, QueueMetrics};

use crate::support::{Starts, recording};

/// Start offsets of 40 reconciles through the in-queue gate at R = 3 (burst 30).
async fn in_queue_starts(rt: &ProviderRuntime, clock: &Clock) -> Vec<Duration> {
    let starts = Starts::default();
    let origin = clock.now();
    let c = rt.controller(
        "buckets",
        recording(&starts, clock.clone()),
        Arc::new(QueueMetrics::default()),
    );
    for i in 0..40 {
        c.queue().add(Request::new("default", format!("b{i:02}")));
    }
    clock.sleep(Duration::from_secs(10)).await;
    c.shut_down().await;
    let mut offsets: Vec<Duration> = starts.lock().unwrap().iter().map(|t| *t - origin).collect();
    offsets.sort();
    offsets
}

fn settings() -> Settings {
    Settings::new(NonZeroU32::new(3).unwrap()).model(RateLimitModel::InQueue)
}

#[tokio::test(start_paused = true)]
async fn on_tokios_paused_clock_the_gate_keeps_the_budget_and_wakes_on_millisecond_ticks() {
    let rt = ProviderRuntime::new(settings());
    let offsets = in_queue_starts(&rt, &Clock::tokio()).await;
    assert_eq!(offsets.len(), 40);
    assert_eq!(offsets[29], Duration::ZERO, "the burst of 30 goes at once");
    // Due at 333.333333ms, woken on the next tick; the next is still due at 666.666666ms.
    assert_eq!(offsets[30], Duration::from_millis(334));
    assert_eq!(offsets[31], Duration::from_millis(667));
    assert_eq!(offsets[39], Duration::from_millis(3334));
}

#[tokio::test(start_paused = true)]
async fn the_same_runtime_on_tokios_paused_clock_is_deterministic() {
    let first = in_queue_starts(&ProviderRuntime::new(settings()), &Clock::tokio()).await;
    let second = in_queue_starts(&ProviderRuntime::new(settings()), &Clock::tokio()).await;
    assert_eq!(first, second);
}

#[tokio::test(start_paused = true)]
async fn on_a_virtual_clock_the_gate_starts_reconciles_at_their_exact_nanosecond() {
    let virtual_clock = VirtualClock::new();
    let _driver = virtual_clock.auto_advance();
    let clock = Clock::from(&virtual_clock);
    let rt = ProviderRuntime::with_clock(settings(), clock.clone());
    let offsets = in_queue_starts(&rt, &clock).await;
    assert_eq!(offsets.len(), 40);
    assert_eq!(offsets[29], Duration::ZERO);
    assert_eq!(offsets[30], Duration::from_nanos(333_333_333));
    assert_eq!(offsets[31], Duration::from_nanos(666_666_666));
    assert_eq!(offsets[39], Duration::from_nanos(3_333_333_333));
}

#[tokio::test(start_paused = true)]
async fn a_delaying_queue_on_a_virtual_clock_is_ready_to_the_nanosecond() {
    let virtual_clock = VirtualClock::new();
    let clock = Clock::from(&virtual_clock);
    let q = DelayingQueue::with_config(QueueConfig::default().clock(clock.clone()));
    let start = clock.now();
    q.add_after("a", limiter::go::GoDuration(1_500_001));
    virtual_clock.advance(Duration::from_nanos(1_500_000)).await;
    assert_eq!(q.len(), 0);
    virtual_clock.advance(Duration::from_nanos(1)).await;
    assert_eq!(q.len(), 1);
    assert_eq!(clock.now() - start, Duration::from_nanos(1_500_001));
}
