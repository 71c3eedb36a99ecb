//! Tolerances for a windowed maximum (budget.md §3.5): the union bound with Poisson tails
//! (rigorous) and Naus's scan approximation (close).

/// Poisson(ψ) pmf and cdf tables, computed in log space so large means do not underflow.
struct Poisson {
    pmf: Vec<f64>,
    cdf: Vec<f64>,
}

fn ln_factorial(n: usize) -> f64 {
    if n < 64 {
        return (2..=n).map(|i| (i as f64).ln()).sum();
    }
    let x = n as f64 + 1.0;
    // Stirling series for ln Γ(x).
    (x - 0.5) * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI).ln() + 1.0 / (12.0 * x)
        - 1.0 / (360.0 * x.powi(3))
        + 1.0 / (1260.0 * x.powi(5))
}

impl Poisson {
    fn new(psi: f64, upto: usize) -> Poisson {
        let mut pmf = Vec::with_capacity(upto + 1);
        for i in 0..=upto {
            let lp = if psi > 0.0 {
                -psi + i as f64 * psi.ln() - ln_factorial(i)
            } else if i == 0 {
                0.0
            } else {
                f64::NEG_INFINITY
            };
            pmf.push(lp.exp());
        }
        let mut cdf = Vec::with_capacity(upto + 1);
        let mut acc = 0.0;
        for p in &pmf {
            acc += p;
            cdf.push(acc.min(1.0));
        }
        Poisson { pmf, cdf }
    }

    fn p(&self, i: i64) -> f64 {
        if i < 0 {
            0.0
        } else {
            self.pmf.get(i as usize).copied().unwrap_or(0.0)
        }
    }

    fn f(&self, i: i64) -> f64 {
        if i < 0 {
            0.0
        } else {
            self.cdf.get(i as usize).copied().unwrap_or(1.0)
        }
    }
}

/// P(Poisson(ψ) ≥ k).
#[must_use]
pub fn poisson_tail(psi: f64, k: u64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    // Sum the tail directly from k upward: accurate where 1 − cdf would cancel.
    let psi = if psi.is_nan() { 0.0 } else { psi.min(MAX_MEAN) };
    let ln_psi = psi.max(f64::MIN_POSITIVE).ln();
    if (k as f64) <= psi {
        // Below the mean the tail is 1 − P(X < k): sum that head downward from k − 1, where
        // its terms are largest, until they no longer count.
        let mut head = 0.0;
        for i in (0..k).rev().take(100_001) {
            let term = (-psi + i as f64 * ln_psi - ln_factorial(i as usize)).exp();
            head += term;
            if term < head * 1e-16 {
                break;
            }
        }
        return (1.0 - head).clamp(0.0, 1.0);
    }
    let k = k as usize;
    let mut sum = 0.0;
    let mut i = k;
    loop {
        let lp = -psi + i as f64 * ln_psi - ln_factorial(i);
        let term = lp.exp();
        sum += term;
        if (i as f64 > psi && term < sum * 1e-16)
            || i > k + 100_000
            || (sum == 0.0 && i as f64 > psi)
        {
            break;
        }
        i += 1;
    }
    sum.min(1.0)
}

fn search_upper(psi: f64) -> u64 {
    (psi + 12.0 * psi.sqrt() + 60.0).ceil() as u64
}

/// The least k in `lo..=hi` with `exceeds(k)` false, for `exceeds` falling in k (true,
/// then false); `hi` when it never turns false there. At most 64 evaluations.
fn least_k(lo: u64, hi: u64, mut exceeds: impl FnMut(u64) -> bool) -> u64 {
    let (mut lo, mut hi) = (lo, hi.max(lo));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if exceeds(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The largest mean the tolerances take (10⁸ calls in a window): beyond it a count is
/// no longer a number anyone budgets, and the tail sums would take seconds.
pub const MAX_MEAN: f64 = 1e8;

/// The union-bound tolerance: the least k with G·P(Poisson(λ(W + δ)) ≥ k) ≤ α,
/// G = ⌈(T − W)/δ⌉ + 1, minimised over δ ∈ {W/20, W/10, W/5, W/2}. Returns (k, δ).
///
/// # Semantics
///
/// Bounded for every input: the search over k is a bisection between the mean and
/// the far tail ψ + 12√ψ + 60, doubled (at most 64 tail sums), a mean that is not finite or above
/// [`MAX_MEAN`] is taken as [`MAX_MEAN`], and a window of 0 s or less is 0 calls.
#[must_use]
pub fn union_tolerance(rate: f64, w: f64, t: f64, alpha: f64) -> (u64, f64) {
    if w.is_nan() || w <= 0.0 || rate.is_nan() || rate <= 0.0 {
        return (0, w.max(0.0));
    }
    [20.0, 10.0, 5.0, 2.0]
        .into_iter()
        .map(|div| {
            let delta = w / div;
            let g = ((t - w).max(0.0) / delta).ceil() + 1.0;
            let psi = (rate * (w + delta)).min(MAX_MEAN);
            let lo = psi.floor() as u64 + 1;
            let k = least_k(lo, search_upper(psi) * 2, |k| {
                g * poisson_tail(psi, k) > alpha
            });
            (k, delta)
        })
        .min_by(|a, b| a.0.cmp(&b.0))
        .unwrap_or((0, w))
}

/// The union-bound tolerance over windows whose means differ: `blocks` holds (G_b, ψ_b),
/// G_b grid windows each of mean at most ψ_b; the least k with Σ_b G_b·P(Poisson(ψ_b) ≥ k)
/// ≤ α. Bounded as [`union_tolerance`] is: a bisection of at most 64 steps, each one tail
/// sum per block.
#[must_use]
pub fn union_tolerance_blocks(blocks: &[(f64, f64)], alpha: f64) -> u64 {
    let blocks: Vec<(f64, f64)> = blocks
        .iter()
        .filter(|(g, psi)| *g > 0.0 && psi.is_finite() && *psi > 0.0)
        .map(|&(g, psi)| (g, psi.min(MAX_MEAN)))
        .collect();
    let Some(top) = blocks.iter().map(|b| b.1).reduce(f64::max) else {
        return 0;
    };
    let lo = top.floor() as u64 + 1;
    least_k(lo, search_upper(top) * 2, |k| {
        blocks
            .iter()
            .map(|&(g, psi)| g * poisson_tail(psi, k))
            .sum::<f64>()
            > alpha
    })
}

/// Naus (1982): P(M ≥ k) for the maximum M of a Poisson process of rate λ over windows of
/// W in a run of T.
#[must_use]
pub fn naus_exceed(rate: f64, w: f64, t: f64, k: u64) -> f64 {
    let psi = rate * w;
    let k = k as i64;
    let po = Poisson::new(psi, (2 * k + 4) as usize);
    let (p, f) = (|i| po.p(i), |i| po.f(i));
    let kf = k as f64;
    let q2 = f(k - 1).powi(2) - (kf - 1.0) * p(k) * p(k - 2) - (kf - 1.0 - psi) * p(k) * f(k - 3);
    let a1 = 2.0 * p(k) * f(k - 1) * ((kf - 1.0) * f(k - 2) - psi * f(k - 3));
    let a2 = 0.5
        * p(k).powi(2)
        * ((kf - 1.0) * (kf - 2.0) * f(k - 3) - 2.0 * (kf - 2.0) * psi * f(k - 4)
            + psi * psi * f(k - 5));
    let a3: f64 = (1..k).map(|r| p(2 * k - r) * f(r - 1).powi(2)).sum();
    let a4: f64 = (2..k)
        .map(|r| p(2 * k - r) * p(r) * ((r as f64 - 1.0) * f(r - 2) - psi * f(r - 3)))
        .sum();
    let q3 = f(k - 1).powi(3) - a1 + a2 + a3 - a4;
    let l = t / w;
    let below = q2 * (q3 / q2).powf(l - 2.0);
    (1.0 - below).clamp(0.0, 1.0)
}

/// The largest window mean Naus's tables are built for: they hold 2k + 5 terms.
const NAUS_MAX_MEAN: f64 = 1e5;

/// Naus's tolerance: the least k with P(M ≥ k) ≤ α, searched by bisection between the
/// mean and twice the far tail ψ + 12√ψ + 60 (at most 64 evaluations); 0 for an empty window or rate.
/// Above a window mean of 10⁵ the union bound stands in (it is the larger of the two).
#[must_use]
pub fn naus_tolerance(rate: f64, w: f64, t: f64, alpha: f64) -> u64 {
    if w.is_nan() || w <= 0.0 || rate.is_nan() || rate <= 0.0 {
        return 0;
    }
    if rate * w > NAUS_MAX_MEAN {
        return union_tolerance(rate, w, t, alpha).0;
    }
    let psi = (rate * w).min(MAX_MEAN);
    let lo = psi.floor() as u64 + 1;
    least_k(lo, search_upper(psi) * 2, |k| {
        naus_exceed(rate, w, t, k) > alpha
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_tail_is_right_for_small_and_large_means() {
        // P(Poisson(1) ≥ 2) = 1 − 2/e.
        assert!((poisson_tail(1.0, 2) - (1.0 - 2.0 / std::f64::consts::E)).abs() < 1e-12);
        // A mean of 2,000 does not underflow; the median is near the mean.
        let t = poisson_tail(2000.0, 2000);
        assert!(t > 0.49 && t < 0.51, "{t}");
    }

    /// budget.md §7.2 "tolerance: p99.9 of 10-s max over 1 h, Naus / union" (W = 10 s,
    /// T = 1 h, α = 0.001), and §3.5's Poisson-process check.
    #[test]
    fn tolerances_match_the_worked_examples_of_section_7_2() {
        let cases = [
            (1000.0 / 600.05, 42, 44),
            (1000.0 / 60.05, 238, 248),
            (10000.0 / 600.05, 238, 248),
        ];
        for (rate, naus, union) in cases {
            assert_eq!(
                naus_tolerance(rate, 10.0, 3600.0, 0.001),
                naus,
                "naus at λ={rate}"
            );
            assert_eq!(
                union_tolerance(rate, 10.0, 3600.0, 0.001).0,
                union,
                "union at λ={rate}"
            );
        }
    }

    /// A mean past what any window holds, an infinite or NaN rate, or an empty window give
    /// an answer at once, never a loop without end.
    #[test]
    fn tolerances_answer_for_every_mean_including_degenerate_ones() {
        for rate in [f64::INFINITY, f64::NAN, 1e12, 0.0, -1.0, 1e-9] {
            for w in [0.0, 1.0, 10.0] {
                let (u, _) = union_tolerance(rate, w, 86_400.0, 0.001);
                let n = naus_tolerance(rate, w, 86_400.0, 0.001);
                assert!(n <= u.max(n), "rate {rate} w {w}");
                if rate.is_nan() || rate <= 0.0 || w == 0.0 {
                    assert_eq!((u, n), (0, 0), "rate {rate} w {w}");
                } else {
                    assert!(
                        u as f64 >= (rate * w).min(MAX_MEAN),
                        "rate {rate} w {w}: {u}"
                    );
                }
            }
        }
        assert_eq!(poisson_tail(1e12, 5), 1.0);
        assert_eq!(poisson_tail(1.0, 1_000_000), 0.0);
    }

    #[test]
    fn naus_probability_falls_as_k_rises() {
        let a = naus_exceed(16.65, 10.0, 3600.0, 200);
        let b = naus_exceed(16.65, 10.0, 3600.0, 240);
        assert!(a > b && b < 0.001 && a > 0.5, "{a} {b}");
    }
}
