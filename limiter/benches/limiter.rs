//! Hot paths of the limiter, side by side with `governor` where it has an equivalent.
//!
//! Run: `cargo bench -p limiter --bench limiter`.

use std::hint::black_box;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant as StdInstant};

use criterion::{Criterion, criterion_group, criterion_main};
use governor::{Quota, RateLimiter as Governor};
use limiter::rate::{Limit, Limiter};
use limiter::workqueue::{ItemExponential, Queue, RateLimiter};
use tokio::time::Instant;

fn token_bucket(c: &mut Criterion) {
    let mut g = c.benchmark_group("token_bucket");
    let now = Instant::now();
    let ours = Limiter::new(Limit(1e9), 1_000_000_000);
    g.bench_function("ours_reserve_at", |b| {
        b.iter(|| black_box(ours.reserve_at(black_box(now))));
    });
    let ours = Limiter::new(Limit(1e9), 1_000_000_000);
    g.bench_function("ours_allow_at", |b| {
        b.iter(|| black_box(ours.allow_n_at(black_box(now), 1)));
    });
    let ours = Limiter::new(Limit(1e9), 1_000_000_000);
    g.bench_function("ours_allow_now", |b| b.iter(|| black_box(ours.allow())));
    let quota = Quota::per_second(NonZeroU32::new(1_000_000_000).unwrap())
        .allow_burst(NonZeroU32::new(1_000_000_000).unwrap());
    let gov = Governor::direct(quota);
    g.bench_function("governor_check", |b| b.iter(|| black_box(gov.check())));
    g.finish();
}

fn exponential(c: &mut Criterion) {
    let r = ItemExponential::new(Duration::from_millis(5), Duration::from_secs(1000));
    let items: Vec<String> = (0..1024).map(|i| format!("default/bucket-{i}")).collect();
    let mut i = 0usize;
    c.bench_function("item_exponential_when", |b| {
        b.iter(|| {
            i = (i + 1) & 1023;
            black_box(r.when(&items[i]))
        });
    });
}

fn queue(c: &mut Criterion) {
    let mut g = c.benchmark_group("queue");
    let q: Queue<u64> = Queue::new();
    let mut n = 0u64;
    g.bench_function("add_get_done_uncontended", |b| {
        b.iter(|| {
            n = n.wrapping_add(1);
            q.add(n);
            let x = q.try_get().expect("just added");
            q.done(&x);
        });
    });
    g.bench_function("add_get_done_2_threads", |b| {
        b.iter_custom(|iters| {
            let q: Arc<Queue<u64>> = Arc::new(Queue::new());
            let per_thread = iters.div_ceil(2);
            let start = StdInstant::now();
            let handles: Vec<_> = (0..2u64)
                .map(|t| {
                    let q = Arc::clone(&q);
                    std::thread::spawn(move || {
                        for i in 0..per_thread {
                            q.add(t << 40 | i);
                            if let Some(x) = q.try_get() {
                                q.done(&x);
                            }
                        }
                    })
                })
                .collect();
            for h in handles {
                h.join().expect("bench thread");
            }
            // `iters` triples in all, shared by two threads: wall time per triple of the pair.
            start.elapsed()
        });
    });
    g.finish();
}

/// What reading the time costs: `allow()` reads tokio's clock, which (with tokio's test-util
/// feature, needed for paused time) checks for a paused clock first.
fn clocks(c: &mut Criterion) {
    let mut g = c.benchmark_group("clock");
    g.bench_function("tokio_instant_now", |b| {
        b.iter(|| black_box(Instant::now()))
    });
    g.bench_function("std_instant_now", |b| {
        b.iter(|| black_box(StdInstant::now()))
    });
    g.finish();
}

criterion_group!(benches, token_bucket, exponential, queue, clocks);
criterion_main!(benches);
