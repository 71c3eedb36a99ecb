//! The echo of a wave in the holds after it (docs/budget.md §3.6): how far the busiest
//! window rises above the stationary count in each poll cycle after a creation, restart or
//! re-sync wave, how many cycles until the jitter has dephased it, and the tolerance of the
//! hold's windowed maximum with the echo in it.
//!
//! # The model
//!
//! A resource of the wave whose last wave reconcile came at phase s polls again at
//! s + k·μ + S_k in its k-th cycle, μ = P_i + L̄ its mean cycle and S_k the sum of k
//! independent uniforms on [−j_i, j_i] (its jitter draws; the spread of L only smooths
//! further). On the circle of one period the density of the wave's phases after k cycles
//! is the wave's profile convolved k times with the uniform, so its m-th Fourier
//! coefficient is a_m·sinc(2πm·j/μ)^k, a_m the wave profile's. A window of W averages the
//! density over W, which multiplies the m-th coefficient by sinc(πm·W/μ). The mean count
//! of the class's n resources in the busiest window of W in cycle k is therefore at most
//!
//! ```text
//! n·W/μ · (1 + ripple_k),   ripple_k = 2 Σ_{m≥1} |a_m|·|sinc(2πm·j/μ)|^k·|sinc(πm·W/μ)|
//! ```
//!
//! and never more than n·(⌊W/(P_i − j_i)⌋ + 1), what the resources can make in W at all.
//! Two bounds are taken, the smaller kept. Every profile is a mixture of instants, and the
//! busiest window of a mixture holds no more than all of it at the busiest window of one
//! instant's kernel, which (the kernel being symmetric and unimodal) is the window centred
//! on its peak: ripple_k ≤ 2 Σ_m sinc(2πm·j/μ)^k·sinc(πm·W/μ), signed terms, for any wave.
//! With the wave's profile taken as a share b₀/N at its start (the first second's starts)
//! and the rest spread evenly over its drain D, |a_m| ≤ b₀/N + (1 − b₀/N)·|sinc(πm·D/μ)|
//! and the absolute sum above applies: smaller for a wave spread over much of a period.
//! Each series is summed to [`MAX_HARMONICS`] terms and its tail bounded from above by
//! the absolute terms' envelope.
//!
//! The hold's tolerance is a union bound (§3.5) over grid windows of W + δ whose means
//! differ: the windows of cycle k have at most the mean of cycle k, the least k of a
//! resource in a window starting at τ being ⌊τ/(μ + j)⌋.

use super::scan;

/// How many harmonics the ripple sums before it bounds the rest of the series.
pub const MAX_HARMONICS: usize = 1_000;

/// The ripple below which a class counts as dephased (§3.6: "cycles to 10 % ripple").
pub const DEPHASED: f64 = 0.1;

/// A poll class the wave locked in phase.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EchoClass {
    /// Resources of the wave in the class.
    pub n: f64,
    /// P_i (s).
    pub interval: f64,
    /// Their mean cycle μ = P_i + L̄ (s).
    pub mu: f64,
    /// j_i (s).
    pub jitter: f64,
}

/// The wave's shape: `burst`, the share of its resources at its start; the rest spread
/// evenly over `spread` seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WaveShape {
    /// D (s).
    pub spread: f64,
    /// b₀/N, in [0, 1].
    pub burst: f64,
}

fn sinc(x: f64) -> f64 {
    if x.abs() < 1e-12 { 1.0 } else { x.sin() / x }
}

/// ripple_k of `class` for windows of `w` at cycle `k` ≥ 1 (module docs): how far above its
/// stationary mean n·W/μ the class's busiest window of cycle k may be, as a share of it.
/// Infinite when the jitter cannot dephase it (j = 0, or a jitter too small for
/// [`MAX_HARMONICS`] harmonics to reach where the series falls).
#[must_use]
pub fn ripple(class: &EchoClass, shape: &WaveShape, k: f64, w: f64) -> f64 {
    let (mu, j) = (class.mu, class.jitter);
    if !(j > 0.0 && mu > 0.0 && w > 0.0 && k >= 1.0 && mu.is_finite()) {
        return f64::INFINITY;
    }
    let pi = std::f64::consts::PI;
    // Envelopes: |sinc(2πmj/μ)| ≤ c1/m, |sinc(πmW/μ)| ≤ c2/m.
    let (c1, c2) = (mu / (2.0 * pi * j), mu / (pi * w));
    let burst = shape.burst.clamp(0.0, 1.0);
    // Two sums: `signed`, the wave as one instant (the window centred on the peak of the
    // kernel, which bounds every profile); `profile`, the absolute terms with the profile's
    // |a_m|.
    let (mut signed, mut profile) = (0.0, 0.0);
    let mut m = 0usize;
    while m < MAX_HARMONICS {
        m += 1;
        let mf = m as f64;
        let a = (burst + (1.0 - burst) * sinc(pi * mf * shape.spread / mu).abs()).min(1.0);
        let s = sinc(2.0 * pi * mf * j / mu).powf(k);
        let win = sinc(pi * mf * w / mu);
        signed += s * win;
        profile += a * s.abs() * win.abs();
        if mf >= c1.max(c2) && tail(c1, c2, k, mf) <= 1e-4 * profile.max(1e-3) {
            break;
        }
    }
    let mf = m as f64;
    if mf < c1 {
        return f64::INFINITY;
    }
    let rest = tail(c1, c2, k, mf);
    2.0 * (signed.max(0.0) + rest).min(profile + rest)
}

/// An upper bound of Σ_{m > M} min(1, c1/m)^k·min(1, c2/m) for M ≥ c1.
fn tail(c1: f64, c2: f64, k: f64, big_m: f64) -> f64 {
    // (c1/m)^k in logs: c1^k alone may overflow.
    let pow = |x: f64| (k * (c1 / x).ln()).exp();
    if big_m >= c2 {
        // Σ_{m>M} (c1/m)^k·c2/m ≤ (c1/M)^k·c2/k.
        return pow(big_m) * c2 / k;
    }
    // Terms up to c2 without the window's factor, then the rest with it.
    let head = if k > 1.0 {
        pow(big_m) * big_m / (k - 1.0)
    } else {
        c1 * ((c2 / big_m).ln() + 1.0 / big_m)
    };
    head + pow(c2) * c2 / k
}

/// Whether the model covers `c` in windows of `w`: a window shorter than the class's
/// shortest poll gap P_i − j_i holds at most one poll of each resource, of one cycle. A
/// longer one holds polls of two cycles, whose kernels the one-cycle ripple does not
/// describe; there the class keeps its stationary mean, and the tolerance says so.
#[must_use]
pub fn covers(c: &EchoClass, w: f64) -> bool {
    w < c.interval - c.jitter
}

/// The most calls class `c` may add above its stationary mean in a window of `w` at cycle
/// `k`: its ripple, capped by what its resources can make in W at all (one poll each);
/// nothing where the model does not cover the class ([`covers`]).
fn excess(c: &EchoClass, shape: &WaveShape, k: f64, w: f64) -> f64 {
    if !covers(c, w) {
        return 0.0;
    }
    let stationary = c.n * w / c.mu;
    let cap = c.n;
    let r = ripple(c, shape, k, w);
    let add = if r.is_finite() {
        stationary * r
    } else {
        f64::INFINITY
    };
    add.min((cap - stationary).max(0.0))
}

/// The echo's part in a hold's windowed maximum.
#[derive(Clone, Debug, PartialEq)]
pub struct EchoTolerance {
    /// The least k with Σ_g P(count_g ≥ k) ≤ α over the hold's grid windows, each with
    /// the echo's mean of its cycle.
    pub k: u64,
    /// The grid step δ that gave it.
    pub delta: f64,
    /// (cycle, mean of the busiest window of W) at cycles 1, 2, 5, 10, 20, 50, … while the
    /// echo is not dephased and the hold lasts: the echo's peak per cycle.
    pub by_cycle: Vec<(u64, f64)>,
    /// Cycles until every class's ripple is at most [`DEPHASED`] (infinite when it never
    /// is).
    pub dephased_cycles: f64,
    /// When that is, seconds after the wave: the slowest class's cycles times its μ.
    pub dephased_after: f64,
    /// Resources of the wave in classes the model does not cover in these windows
    /// ([`covers`]): they keep their stationary mean.
    pub uncovered: f64,
}

/// The mean of the busiest window of `w` at cycle index `k_of(class)` for every class,
/// over the stationary mean `rate·w` of the whole population.
fn mean_at(
    rate: f64,
    classes: &[EchoClass],
    shape: &WaveShape,
    w: f64,
    k_of: impl Fn(&EchoClass) -> f64,
) -> f64 {
    rate * w
        + classes
            .iter()
            .map(|c| excess(c, shape, k_of(c), w))
            .sum::<f64>()
}

/// Cycles until `c`'s ripple is at most [`DEPHASED`]: an exponential search, then a
/// bisection (at most 100 evaluations); infinite past 2⁴⁰ cycles.
fn dephasing(c: &EchoClass, shape: &WaveShape, w: f64) -> f64 {
    let done = |k: f64| ripple(c, shape, k, w) <= DEPHASED;
    if done(1.0) {
        return 1.0;
    }
    let mut hi = 2.0;
    while !done(hi) {
        hi *= 2.0;
        if hi > 2f64.powi(40) {
            return f64::INFINITY;
        }
    }
    let mut lo = hi / 2.0;
    while hi - lo > 1.0 {
        let mid = ((lo + hi) / 2.0).floor();
        if done(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The tolerance of the windowed maximum of a hold of `t` seconds that starts at a wave
/// (module docs): `rate` the whole population's stationary rate λ, `classes` the wave's
/// resources by poll class. The windows of cycle k get the mean of cycle k; the union
/// runs over blocks of time doubling from the fastest class's μ, and the windows after
/// every class has dephased to 0.1 % keep the stationary mean. At most about 64 blocks,
/// each with one ripple per class and δ.
#[must_use]
pub fn tolerance(
    rate: f64,
    classes: &[EchoClass],
    shape: &WaveShape,
    w: f64,
    t: f64,
    alpha: f64,
) -> EchoTolerance {
    let classes: Vec<EchoClass> = classes
        .iter()
        .copied()
        .filter(|c| c.n > 0.0 && c.mu.is_finite() && c.mu > 0.0)
        .collect();
    let dephasings: Vec<(f64, f64)> = classes
        .iter()
        .filter(|c| covers(c, w))
        .map(|c| {
            let k = dephasing(c, shape, w);
            (k, k * c.mu)
        })
        .collect();
    let dephased_cycles = dephasings.iter().map(|d| d.0).fold(0.0, f64::max);
    let dephased_after = dephasings.iter().map(|d| d.1).fold(0.0, f64::max);
    let mut by_cycle = Vec::new();
    for k in [1u64, 2, 5, 10, 20, 50, 100, 200, 500, 1000] {
        let slowest = classes.iter().map(|c| c.mu).fold(0.0, f64::max);
        if k > 1 && (k as f64 > dephased_cycles || (k - 1) as f64 * slowest > t) {
            break;
        }
        by_cycle.push((k, mean_at(rate, &classes, shape, w, |_| k as f64)));
    }
    let fastest = classes
        .iter()
        .map(|c| c.mu)
        .fold(f64::INFINITY, f64::min)
        .max(w);
    let (k, delta) = [20.0, 10.0, 5.0, 2.0]
        .into_iter()
        .map(|div| {
            let delta = w / div;
            let ww = w + delta;
            let windows = |from: f64, to: f64| ((to - from).max(0.0) / delta).ceil();
            let mut blocks = Vec::new();
            let mut from = 0.0;
            loop {
                let k_of = |c: &EchoClass| (from / (c.mu + c.jitter)).floor().max(1.0);
                let mean = mean_at(rate, &classes, shape, ww, k_of);
                // The means fall block by block: once within 0.1 % of the stationary one,
                // or after 64 blocks, the rest of the hold keeps the current mean.
                let settled = mean <= rate * ww * 1.001 || blocks.len() == 63;
                let next = if from > 0.0 { 2.0 * from } else { fastest };
                let end = if settled { t } else { next.min(t) };
                blocks.push((windows(from, end).max(1.0), mean));
                if end >= t {
                    break;
                }
                from = end;
            }
            (scan::union_tolerance_blocks(&blocks, alpha), delta)
        })
        .min_by(|a, b| a.0.cmp(&b.0))
        .unwrap_or((0, w));
    let uncovered = classes
        .iter()
        .filter(|c| !covers(c, w + delta))
        .map(|c| c.n)
        .sum();
    EchoTolerance {
        k,
        delta,
        by_cycle,
        dephased_cycles,
        dephased_after,
        uncovered,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHARP: WaveShape = WaveShape {
        spread: 0.0,
        burst: 1.0,
    };

    fn class(n: f64, p: f64, pct: f64) -> EchoClass {
        EchoClass {
            n,
            interval: p,
            mu: p + 0.05,
            jitter: p * pct,
        }
    }

    /// The first echo of a wave at one instant is its uniform kernel: n/(2j) per second, so
    /// a window of W ≤ 2j holds n·W/(2j), μ/(2j) times the stationary n·W/μ.
    #[test]
    fn the_first_echo_of_an_instant_is_the_jitters_uniform() {
        let c = class(1000.0, 60.0, 0.1);
        for w in [1.0, 5.0, 10.0] {
            let got = 1.0 + ripple(&c, &SHARP, 1.0, w);
            let want = c.mu / (2.0 * c.jitter);
            assert!((got - want).abs() < 0.02 * want, "W={w}: {got} vs {want}");
        }
        // No jitter: it never dephases.
        assert!(ripple(&class(1000.0, 60.0, 0.0), &SHARP, 5.0, 10.0).is_infinite());
    }

    /// A deterministic check against a Monte Carlo of the model: n resources at one phase,
    /// each cycle adding an independent uniform of ±j; the busiest window of cycle k holds
    /// no more than predicted, and not much less.
    #[test]
    fn the_ripple_bounds_a_monte_carlo_of_the_jittered_cycles() {
        let c = class(20_000.0, 60.0, 0.1);
        let w = 10.0;
        let mut seed = 7u64;
        let mut uniform = || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for k in [1usize, 3, 10, 30] {
            let mut t: Vec<f64> = (0..c.n as usize)
                .map(|_| {
                    (0..k)
                        .map(|_| c.mu + (2.0 * uniform() - 1.0) * c.jitter)
                        .sum::<f64>()
                })
                .collect();
            t.sort_by(f64::total_cmp);
            let mut hi = 0;
            let mut busiest = 0usize;
            for lo in 0..t.len() {
                while hi < t.len() && t[hi] <= t[lo] + w {
                    hi += 1;
                }
                busiest = busiest.max(hi - lo);
            }
            let predicted = c.n * w / c.mu * (1.0 + ripple(&c, &SHARP, k as f64, w));
            // The sample's busiest window is its mean's plus a few standard deviations.
            let slack = 4.0 * predicted.sqrt();
            assert!(
                busiest as f64 <= predicted + slack,
                "k={k}: observed {busiest}, predicted {predicted:.0}"
            );
            assert!(
                busiest as f64 >= 0.85 * predicted - slack,
                "k={k}: observed {busiest}, predicted {predicted:.0}: too loose"
            );
        }
    }

    /// A wave spread over a whole period has no echo to speak of; one at an instant has.
    /// The tolerance falls towards the stationary union bound as the jitter widens.
    #[test]
    fn the_tolerance_follows_the_echo() {
        let rate = 1000.0 / 60.05;
        let (union, _) = scan::union_tolerance(rate, 10.0, 3600.0, 0.001);
        let sharp = tolerance(
            rate,
            &[class(1000.0, 60.0, 0.1)],
            &SHARP,
            10.0,
            3600.0,
            0.001,
        );
        assert!(sharp.k > 3 * union, "{} vs {union}", sharp.k);
        assert_eq!(sharp.by_cycle[0].0, 1);
        assert!((40.0..=50.0).contains(&sharp.dephased_cycles), "{sharp:?}");
        let spread = WaveShape {
            spread: 60.0,
            burst: 0.0,
        };
        let flat = tolerance(
            rate,
            &[class(1000.0, 60.0, 0.1)],
            &spread,
            10.0,
            3600.0,
            0.001,
        );
        assert!(flat.k <= union + 2, "{} vs {union}", flat.k);
        let wide = tolerance(
            rate,
            &[class(1000.0, 60.0, 0.5)],
            &SHARP,
            10.0,
            3600.0,
            0.001,
        );
        assert!(wide.k < sharp.k, "{} vs {}", wide.k, sharp.k);
        // A window as long as a poll gap: not covered, the stationary mean stands.
        let long = tolerance(
            rate,
            &[class(1000.0, 60.0, 0.1)],
            &SHARP,
            60.0,
            3600.0,
            0.001,
        );
        assert_eq!(long.uncovered, 1000.0);
        let g = (3600.0 / long.delta).ceil();
        assert_eq!(
            long.k,
            scan::union_tolerance_blocks(&[(g, rate * (60.0 + long.delta))], 0.001)
        );
    }

    /// Every input answers at once with a finite tolerance.
    #[test]
    fn degenerate_inputs_answer() {
        for (p, pct, w, t) in [
            (1.0, 0.99, 1.0, 86_400.0),
            (86_400.0, 0.01, 1.0, 86_400.0),
            (60.0, 1e-7, 10.0, 3600.0),
            (60.0, 0.1, 10.0, 0.0),
        ] {
            let e = tolerance(1.0, &[class(100_000.0, p, pct)], &SHARP, w, t, 0.001);
            assert!(e.k > 0, "{p} {pct} {w} {t}: {e:?}");
        }
    }
}
