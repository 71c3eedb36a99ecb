//! The exact windowed maximum on 10 million journal entries (goal: under 2 s).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use harness::measure::windowed_max;

/// 10 M sorted timestamps: about 2,800 calls per second for an hour, with a deterministic
/// jitter (a linear congruential generator) so gaps vary.
fn series(n: usize) -> Vec<u64> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut t = 0u64;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            t += (x >> 33) % 720;
            t
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let times = series(10_000_000);
    let mut g = c.benchmark_group("windowed_max");
    g.sample_size(10);
    g.bench_function("10M entries, W = 10 s", |b| {
        b.iter(|| windowed_max(black_box(&times), 10_000_000))
    });
    g.bench_function("10M entries, W = 1 s", |b| {
        b.iter(|| windowed_max(black_box(&times), 1_000_000))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
