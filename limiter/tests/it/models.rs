//! The rate-limit models wired by `ProviderRuntime`, under paused time.

use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use limiter::controller::{Action, FnReconciler, Request, SharedReconciler};
use limiter::crossplane::{ProviderRuntime, RateLimitModel, Settings};
use limiter::workqueue::QueueMetrics;
use tokio::time::Instant;

type Starts = Arc<Mutex<Vec<Instant>>>;

fn recording(starts: &Starts, took: Duration) -> SharedReconciler<Request> {
    let starts = Arc::clone(starts);
    Arc::new(FnReconciler(move |_req: Request| {
        let starts = Arc::clone(&starts);
        async move {
            starts.lock().unwrap().push(Instant::now());
            tokio::time::sleep(took).await;
            Ok(Action::done())
        }
    }))
}

fn max_in_window(starts: &[Instant], w: Duration) -> usize {
    let mut s = starts.to_vec();
    s.sort();
    (0..s.len())
        .map(|i| s[i..].iter().take_while(|t| **t <= s[i] + w).count())
        .max()
        .unwrap_or(0)
}

fn settings(model: RateLimitModel, r: u32) -> Settings {
    Settings::new(NonZeroU32::new(r).unwrap()).model(model)
}

#[tokio::test(start_paused = true)]
async fn the_in_queue_model_never_exceeds_burst_plus_rate_times_window() {
    let rt = ProviderRuntime::new(settings(RateLimitModel::InQueue, 2));
    let starts = Starts::default();
    let c = rt.controller(
        "buckets",
        recording(&starts, Duration::from_millis(100)),
        Arc::new(QueueMetrics::default()),
    );
    for i in 0..100 {
        c.queue().add(Request::new("default", format!("b{i:03}")));
    }
    tokio::time::sleep(Duration::from_secs(60)).await;
    let starts = starts.lock().unwrap().clone();
    assert_eq!(starts.len(), 100, "every item reconciled once");
    for w in [0u64, 1, 2, 5, 10, 30] {
        let bound = 20 + 2 * w as usize;
        let seen = max_in_window(&starts, Duration::from_secs(w));
        assert!(seen <= bound, "window {w}s: {seen} > {bound}");
    }
    // The backlog of 100 drains at the physical limit: (100 − 20) / 2 = 40 s.
    let last = *starts.iter().max().unwrap();
    let first = *starts.iter().min().unwrap();
    assert_eq!(last - first, Duration::from_secs(40));
    assert_eq!(c.stats().gate_reservations, 100);
    c.shut_down().await;
}

#[tokio::test(start_paused = true)]
async fn the_crossplane_model_throttles_with_a_second_trip_and_one_token_per_reconcile() {
    let rt = ProviderRuntime::new(settings(RateLimitModel::Crossplane, 1));
    let starts = Starts::default();
    let c = rt.controller(
        "buckets",
        recording(&starts, Duration::ZERO),
        Arc::new(QueueMetrics::default()),
    );
    for i in 0..30 {
        c.queue().add(Request::new("default", format!("b{i:02}")));
    }
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(starts.lock().unwrap().len(), 30);
    let stats = rt.middleware_stats();
    assert_eq!(stats.reservations(), 30, "one token per inner reconcile");
    assert_eq!(
        stats.throttled(),
        20,
        "burst 10 passes, 20 take a second trip"
    );
    assert_eq!(stats.early_runs(), 0);
    // Every throttled pass counts as a requeue_after in controller-runtime's metrics.
    let s = c.stats();
    assert_eq!((s.success, s.requeue_after), (30, 20));
    c.shut_down().await;
}

#[tokio::test(start_paused = true)]
async fn an_event_on_a_throttled_key_runs_early_and_is_counted() {
    let rt = ProviderRuntime::new(settings(RateLimitModel::Crossplane, 1));
    let bucket = rt.global_bucket().unwrap().clone();
    for _ in 0..10 {
        let _ = bucket.reserve();
    }
    let starts = Starts::default();
    let c = rt.controller(
        "buckets",
        recording(&starts, Duration::ZERO),
        Arc::new(QueueMetrics::default()),
    );
    let a = Request::new("default", "a");
    c.queue().add(a.clone());
    tokio::time::sleep(Duration::from_millis(300)).await;
    c.queue().add(a.clone());
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(rt.middleware_stats().early_runs(), 1);
    // On the priority queue the early event absorbs the delayed copy: one inner reconcile.
    assert_eq!(starts.lock().unwrap().len(), 1);
    c.shut_down().await;
}

#[tokio::test(start_paused = true)]
async fn the_concurrency_only_model_is_bounded_by_workers_alone() {
    let rt = ProviderRuntime::new(settings(RateLimitModel::ConcurrencyOnly, 3));
    let starts = Starts::default();
    let c = rt.controller(
        "buckets",
        recording(&starts, Duration::from_secs(1)),
        Arc::new(QueueMetrics::default()),
    );
    for i in 0..9 {
        c.queue().add(Request::new("default", format!("b{i}")));
    }
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(starts.lock().unwrap().len(), 3, "three workers, no bucket");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(starts.lock().unwrap().len(), 9);
    c.shut_down().await;
}
