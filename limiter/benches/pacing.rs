//! Real-time pacing: a limiter of 7.5 tokens/s with burst 1, waited on in loops for about a
//! minute of wall time, grants 7.5/s within 0.1 %.
//!
//! Every wake-up is late here: 1/7.5 s is 133.333333 ms, tokio's timers tick in whole
//! milliseconds, and the scheduler adds its own delay. The pace holds anyway because a
//! reservation books its token at its exact time to act, not at the moment its waiter woke, so
//! lateness never accumulates. (Booking at the wake-up instant would lose about a millisecond
//! per grant, 0.5 % of the rate.)
//!
//! Run: `cargo bench -p limiter --bench pacing` (a little over a minute). Criterion reports the
//! time per grant and the throughput in grants per second; the line starting with `pacing:`
//! gives the rate measured from the grants' own timestamps and its error against 7.5/s.

use std::time::{Duration, Instant as StdInstant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use limiter::rate::{Limit, Limiter};

const RATE: f64 = 7.5;
const TOLERANCE_PERCENT: f64 = 0.1;

/// Grants seen within samples: intervals between consecutive grants, and their total length.
#[derive(Default)]
struct Grants {
    intervals: u64,
    span: Duration,
}

fn pacing(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime builds");
    let lim = Limiter::new(Limit(RATE), 1);
    let mut grants = Grants::default();
    let mut g = c.benchmark_group("pacing");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(60))
        .throughput(Throughput::Elements(1));
    g.bench_function("wait_7.5_per_second_burst_1", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = StdInstant::now();
                let mut first = None;
                let mut last = start;
                for _ in 0..iters {
                    lim.wait().await.expect("burst 1 covers one token");
                    last = StdInstant::now();
                    first.get_or_insert(last);
                }
                // Only the intervals between this sample's grants: the pause before the sample
                // (criterion's own work) is idle time, not pacing.
                if let Some(first) = first {
                    grants.intervals += iters - 1;
                    grants.span += last - first;
                }
                start.elapsed()
            })
        });
    });
    g.finish();
    if grants.intervals == 0 {
        // `cargo test` runs each benchmark once, for a single grant.
        return;
    }
    let rate = grants.intervals as f64 / grants.span.as_secs_f64();
    let error = (rate / RATE - 1.0) * 100.0;
    println!(
        "pacing: {} grant intervals in {:.3} s of waiting = {rate:.5} grants/s \
         (target {RATE}/s, error {error:+.4} %, {} the {TOLERANCE_PERCENT} % tolerance)",
        grants.intervals,
        grants.span.as_secs_f64(),
        if error.abs() <= TOLERANCE_PERCENT {
            "within"
        } else {
            "OUTSIDE"
        }
    );
}

criterion_group!(benches, pacing);
criterion_main!(benches);
