//! Global buckets per scope (`--scoped-buckets`): a cluster-scoped and a namespaced controller
//! at R = 10 drain at 20/s with burst 200 together, on a virtual clock.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use limiter::clock::{Clock, VirtualClock};
use limiter::controller::Request;
use limiter::crossplane::{ProviderRuntime, RateLimitModel, Scope, Settings};
use limiter::workqueue::QueueMetrics;

use crate::support::{Starts, recording};

/// Start offsets of the reconciles of 300 items in each scope over 10 virtual seconds.
async fn two_scopes(model: RateLimitModel, scoped: bool) -> Vec<Duration> {
    let virtual_clock = VirtualClock::new();
    let _driver = virtual_clock.auto_advance();
    let clock = Clock::from(&virtual_clock);
    let settings = Settings::new(NonZeroU32::new(10).unwrap())
        .model(model)
        .scoped_buckets(scoped);
    let rt = ProviderRuntime::with_clock(settings, clock.clone());
    let starts = Starts::default();
    let origin = clock.now();
    let controllers: Vec<_> = Scope::ALL
        .into_iter()
        .map(|scope| {
            let name = match scope {
                Scope::Cluster => "managed/bucket.s3.aws.loadtest.dev",
                Scope::Namespaced => "managed/bucket.s3.aws.m.loadtest.dev",
            };
            let c = rt.controller_in(
                scope,
                name,
                recording(&starts, clock.clone()),
                Arc::new(QueueMetrics::default()),
            );
            for i in 0..300 {
                c.queue().add(Request::new("default", format!("b{i:03}")));
            }
            c
        })
        .collect();
    clock.sleep(Duration::from_secs(10)).await;
    for c in controllers {
        c.shut_down().await;
    }
    let mut offsets: Vec<Duration> = starts.lock().unwrap().iter().map(|t| *t - origin).collect();
    offsets.sort();
    offsets
}

fn started_by(offsets: &[Duration], t: Duration) -> usize {
    offsets.iter().filter(|o| **o <= t).count()
}

#[tokio::test(start_paused = true)]
async fn two_scopes_at_r_10_drain_at_20_per_second_after_a_burst_of_200() {
    let offsets = two_scopes(RateLimitModel::InQueue, true).await;
    assert_eq!(
        started_by(&offsets, Duration::ZERO),
        200,
        "burst 10R per scope"
    );
    // One token per 100ms in each bucket: two starts at each tick.
    assert_eq!(started_by(&offsets, Duration::from_millis(100)), 202);
    assert_eq!(started_by(&offsets, Duration::from_secs(5)), 300);
    assert_eq!(started_by(&offsets, Duration::from_secs(10)), 400);
    let drained = started_by(&offsets, Duration::from_secs(10)) - 200;
    assert_eq!(drained as f64 / 10.0, 20.0, "per second after the burst");
}

#[tokio::test(start_paused = true)]
async fn one_shared_bucket_keeps_two_scopes_at_r_and_burst_10r() {
    let offsets = two_scopes(RateLimitModel::InQueue, false).await;
    assert_eq!(started_by(&offsets, Duration::ZERO), 100);
    assert_eq!(started_by(&offsets, Duration::from_secs(10)), 200);
}

#[tokio::test(start_paused = true)]
async fn the_crossplane_middleware_takes_each_scopes_token_from_its_own_bucket() {
    let scoped = two_scopes(RateLimitModel::Crossplane, true).await;
    let shared = two_scopes(RateLimitModel::Crossplane, false).await;
    // The middleware may run a flagged item early, never more than the buckets hold: by 10s
    // at most 20R + 2R·10s = 400 (200 shared), and the second bucket is really used.
    let (scoped, shared) = (
        started_by(&scoped, Duration::from_secs(10)),
        started_by(&shared, Duration::from_secs(10)),
    );
    assert!(scoped <= 400 && scoped > 300, "scoped: {scoped}");
    assert!(shared <= 200 && shared > 150, "shared: {shared}");
}
