//! budget.md §3.6 (b): the windowed maximum after a wave, predicted conditionally on when
//! each resource was last polled.
//!
//! After a wave the N resources stay phase-locked to it for many cycles (§3.6), so the
//! stationary count of §3.4 does not describe a hold that starts soon after. Given each
//! resource's last poll call e_i before the hold, its next calls are a renewal process whose
//! law is known exactly while the bucket does not throttle: a call at e is followed by the
//! next at e + L + X, X uniform on [P_i − j_i, P_i + j_i). Each grid window g then holds a
//! Poisson-binomial count with mean m_g and variance v_g = Σ_i p_ig(1 − p_ig), and
//!
//! ```text
//! P(M ≥ k) ≤ Σ_g exp(−x_g² / (2(v_g + x_g/3))),   x_g = k − m_g > 0   (Bernstein + union)
//! ```
//!
//! [`conditional_bound`] returns the least k with that sum ≤ α.
//!
//! # Semantics
//! - Times are seconds on one clock (the run's). The hold is [start, start + duration].
//! - j_i is the provider's own sizing, `Settings::jitter().for_interval(P_i)`: pct·P_i in the
//!   proportional mode (ours), one absolute j in crossplane-runtime's fixed mode
//!   (`WithPollJitterHook`); `jittered` draws P_i + (u − ½)·2j_i, u uniform on [0, 1). In the
//!   fixed mode a P_i ≤ j_i can requeue at zero (no further polls); such a resource's
//!   shortest cycle is then below W + δ and the bound refuses it.
//! - A window of the exact maximum ([`crate::measure::windowed_max`]) is any closed
//!   [t, t + W] with t in the hold; it lies inside a grid window [start + gδ, start + gδ + W + δ]
//!   for g = 0 … G − 1, G = ⌈(T − W)/δ⌉ + 1 (windows that run past the end hold no more than
//!   the last grid window). δ ∈ {W/20, W/10, W/5, W/2}; the smallest k is kept, as §3.5 does.
//! - The reconcile duration L lies in [L_min, L_max]: the n-th next call is modelled with
//!   L_min and each window is widened to the left by n·(L_max − L_min) (Lemma 4), so every
//!   p_ig is an upper bound and the bound stays valid.
//! - The first next call is conditioned on not having happened by `start`: its uniform is
//!   truncated to start there. A resource whose next call was due before `start`
//!   (*overdue*: its last call was not a poll, it failed, or it was throttled) is modelled as
//!   called at `start`, then renewing; a resource with no call before the hold is modelled
//!   as stationary, p = (W + δ)/μ_i per window. Both are counted in [`ConditionalBound`].
//! - Each resource must land at most once in a grid window (W + δ + n·(L_max − L_min) below
//!   its shortest cycle P_i − j_i + L_min), and cycle at most [`MAX_CYCLES`] times in the
//!   hold; otherwise there is no bound ([`NotApplicable`]).

use std::fmt;

/// The most poll cycles of one resource the bound follows through a hold.
pub const MAX_CYCLES: usize = 200;

/// One resource's poll process, as far as the hold is concerned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Renewal {
    /// e_i: its last poll call at or before the hold's start (s); `None` if it has none.
    pub last: Option<f64>,
    /// Whether its next call was due before the hold starts for a reason the renewal model
    /// does not describe (the last call before the hold was not a successful poll).
    pub unsettled: bool,
    /// P_i (s).
    pub poll: f64,
    /// j_i (s): the jitter half-width for this resource.
    pub jitter: f64,
}

/// The hold and the level.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hold {
    /// Its start (s).
    pub start: f64,
    /// T (s).
    pub duration: f64,
    /// W (s).
    pub window: f64,
    /// α.
    pub alpha: f64,
    /// L_min (s).
    pub l_min: f64,
    /// L̄ (s), for stationary resources' mean cycle.
    pub l: f64,
    /// L_max (s).
    pub l_max: f64,
}

/// The conditional tolerance and what it was computed from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConditionalBound {
    /// The least k with P(M ≥ k) ≤ α.
    pub k: u64,
    /// The grid step δ that gave it.
    pub delta: f64,
    /// G, grid windows.
    pub windows: usize,
    /// The largest m_g, and its window's variance v_g.
    pub busiest_mean: f64,
    /// v_g of the busiest window.
    pub busiest_var: f64,
    /// Where the busiest grid window starts, seconds after the hold's start.
    pub busiest_at: f64,
    /// Resources conditioned on their last poll.
    pub conditioned: usize,
    /// Resources modelled as called at the start (overdue or unsettled).
    pub overdue: usize,
    /// Resources with no call before the hold, modelled as stationary.
    pub stationary: usize,
    /// The most cycles any resource was followed through the hold.
    pub cycles: usize,
}

/// Why the renewal model cannot give a bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotApplicable {
    /// A resource may land twice in one grid window.
    TwicePerWindow,
    /// A resource cycles more than [`MAX_CYCLES`] times in the hold.
    TooManyCycles,
    /// The hold is shorter than one window, or the inputs are not finite and positive.
    Degenerate,
}

impl fmt::Display for NotApplicable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NotApplicable::TwicePerWindow => {
                "a resource's shortest cycle P_i − j_i + L_min is within W + δ, so it can land twice in a window"
            }
            NotApplicable::TooManyCycles => "a resource cycles too often in the hold to follow",
            NotApplicable::Degenerate => "the hold or its inputs are degenerate",
        })
    }
}

/// Ψ_m(z) = ∫ F_m, the integrated CDF of the Irwin–Hall sum of m uniforms on [0, 1), and
/// F_m itself, tabulated on [0, m] at step 1/[`IrwinHall::STEPS`]. Built by
/// F_{m+1}(z) = Ψ_m(z) − Ψ_m(z − 1) and trapezoidal integration.
struct IrwinHall {
    psi: Vec<Vec<f64>>,
    cdf: Vec<Vec<f64>>,
}

impl IrwinHall {
    const STEPS: usize = 128;

    fn new() -> IrwinHall {
        let h = 1.0 / Self::STEPS as f64;
        // m = 1: F(z) = z, Ψ(z) = z²/2 on [0, 1].
        let cdf1: Vec<f64> = (0..=Self::STEPS).map(|i| i as f64 * h).collect();
        let psi1: Vec<f64> = cdf1.iter().map(|z| z * z / 2.0).collect();
        IrwinHall {
            psi: vec![Vec::new(), psi1],
            cdf: vec![Vec::new(), cdf1],
        }
    }

    fn ensure(&mut self, m: usize) {
        let h = 1.0 / Self::STEPS as f64;
        while self.psi.len() <= m {
            let prev = self.psi.len() - 1;
            let n = (prev + 1) * Self::STEPS;
            let mut cdf = Vec::with_capacity(n + 1);
            for i in 0..=n {
                let z = i as f64 * h;
                cdf.push((self.psi_at(prev, z) - self.psi_at(prev, z - 1.0)).clamp(0.0, 1.0));
            }
            let mut psi = Vec::with_capacity(n + 1);
            let mut acc = 0.0;
            psi.push(0.0);
            for i in 1..=n {
                acc += 0.5 * (cdf[i - 1] + cdf[i]) * h;
                psi.push(acc);
            }
            self.cdf.push(cdf);
            self.psi.push(psi);
        }
    }

    fn lookup(table: &[f64], z: f64) -> f64 {
        let x = z * Self::STEPS as f64;
        let i = (x.floor() as usize).min(table.len() - 2);
        let f = x - i as f64;
        table[i] * (1.0 - f) + table[i + 1] * f
    }

    /// Ψ_m(z); Ψ_0(z) = max(z, 0).
    fn psi_at(&self, m: usize, z: f64) -> f64 {
        let mf = m as f64;
        if z <= 0.0 {
            0.0
        } else if z >= mf {
            z - mf / 2.0
        } else {
            Self::lookup(&self.psi[m], z)
        }
    }

    /// F_m(z); F_0 is the step at 0.
    fn cdf_at(&self, m: usize, z: f64) -> f64 {
        if z < 0.0 {
            0.0
        } else if z >= m as f64 {
            1.0
        } else {
            Self::lookup(&self.cdf[m], z)
        }
    }
}

/// P(U + S_m ≤ x): U uniform on [a, b) (a point when b = a), S_m = m·base + width·Y_m with
/// Y_m Irwin–Hall(m).
fn cdf_after(ih: &IrwinHall, m: usize, (a, b): (f64, f64), base: f64, width: f64, x: f64) -> f64 {
    let y = x - m as f64 * base;
    let point = b - a <= 1e-12;
    if m == 0 || width <= 0.0 {
        return if point {
            f64::from(u8::from(y >= a))
        } else {
            ((y - a) / (b - a)).clamp(0.0, 1.0)
        };
    }
    if point {
        return ih.cdf_at(m, (y - a) / width);
    }
    let v = width * (ih.psi_at(m, (y - a) / width) - ih.psi_at(m, (y - b) / width)) / (b - a);
    v.clamp(0.0, 1.0)
}

/// (m_g, v_g) for every grid window of step `delta`.
fn window_moments(
    ih: &mut IrwinHall,
    resources: &[Renewal],
    hold: &Hold,
    delta: f64,
) -> Result<(Vec<(f64, f64)>, usize), NotApplicable> {
    let (t0, w) = (hold.start, hold.window);
    let end = t0 + hold.duration;
    let g_count = ((hold.duration - w).max(0.0) / delta).ceil() as usize + 1;
    let spread_l = (hold.l_max - hold.l_min).max(0.0);
    let mut moments = vec![(0.0, 0.0); g_count];
    let mut scratch = vec![0.0; g_count];
    let mut most_cycles = 0;
    for r in resources {
        let (lo_x, width) = (r.poll - r.jitter, 2.0 * r.jitter);
        let base = hold.l_min + lo_x;
        let Some(last) = r.last else {
            if w + delta >= base {
                return Err(NotApplicable::TwicePerWindow);
            }
            let p = (w + delta) / (r.poll + hold.l);
            for m in &mut moments {
                m.0 += p;
                m.1 += p * (1.0 - p);
            }
            continue;
        };
        // The first next call: uniform on [lo, hi), truncated at the start.
        let (mut lo, hi) = (last + base, last + base + width);
        let first = if r.unsettled || hi <= t0 {
            (t0, t0)
        } else {
            lo = lo.max(t0);
            (lo, hi)
        };
        let cycles = if first.0 > end {
            0
        } else {
            ((end - first.0) / base).floor() as usize + 1
        };
        if cycles > MAX_CYCLES {
            return Err(NotApplicable::TooManyCycles);
        }
        if cycles > 0 && w + delta + cycles as f64 * spread_l >= base {
            return Err(NotApplicable::TwicePerWindow);
        }
        most_cycles = most_cycles.max(cycles);
        ih.ensure(cycles);
        let (mut g_min, mut g_max) = (usize::MAX, 0);
        for n in 1..=cycles {
            let m = n - 1;
            let widen = n as f64 * spread_l;
            // Support of the n-th call (with L_min), then the windows that can see it.
            let s_lo = first.0 + m as f64 * base;
            let s_hi = first.1 + m as f64 * (base + width) + widen;
            let g_lo = ((s_lo - t0 - w - delta) / delta).floor().max(0.0) as usize;
            let g_hi = (((s_hi - t0) / delta).ceil().max(0.0) as usize).min(g_count - 1);
            for (g, slot) in scratch.iter_mut().enumerate().take(g_hi + 1).skip(g_lo) {
                let u = t0 + g as f64 * delta - widen;
                let v = (t0 + g as f64 * delta + w + delta).min(end);
                let p = cdf_after(ih, m, first, base, width, v)
                    - cdf_after(ih, m, first, base, width, u - 1e-9);
                *slot += p.max(0.0);
            }
            if g_lo <= g_hi {
                g_min = g_min.min(g_lo);
                g_max = g_max.max(g_hi);
            }
        }
        if g_min <= g_max {
            for g in g_min..=g_max {
                let p = scratch[g].min(1.0);
                moments[g].0 += p;
                moments[g].1 += p * (1.0 - p);
                scratch[g] = 0.0;
            }
        }
    }
    Ok((moments, most_cycles))
}

/// Σ_g exp(−x_g²/(2(v_g + x_g/3))), a term of 1 where x_g ≤ 0.
#[must_use]
pub fn bernstein_union(moments: &[(f64, f64)], k: f64) -> f64 {
    moments
        .iter()
        .map(|&(m, v)| {
            let x = k - m;
            if x <= 0.0 {
                1.0
            } else {
                (-x * x / (2.0 * (v + x / 3.0))).exp()
            }
        })
        .sum()
}

/// The least integer k with [`bernstein_union`] ≤ α.
#[must_use]
pub fn bernstein_tolerance(moments: &[(f64, f64)], alpha: f64) -> u64 {
    let g = moments.len().max(1) as f64;
    let ln = (g / alpha).ln().max(0.0);
    // Each term ≤ α/G at x ≥ ln/3 + √(ln²/9 + 2v·ln): an upper end for the search.
    let hi = moments
        .iter()
        .map(|&(m, v)| m + ln / 3.0 + (ln * ln / 9.0 + 2.0 * v * ln).sqrt())
        .fold(0.0, f64::max)
        .ceil() as u64
        + 1;
    let mut lo = moments.iter().map(|m| m.0).fold(0.0, f64::max).floor() as u64;
    let mut hi = hi.max(lo + 1);
    // Invariant: bound(lo) > α (or lo is below every k), bound(hi) ≤ α.
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if bernstein_union(moments, mid as f64) <= alpha {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    if bernstein_union(moments, lo as f64) <= alpha {
        lo
    } else {
        hi
    }
}

/// §3.6 (b): the least k with P(M ≥ k) ≤ α for the windowed maximum of poll calls in the
/// hold, conditioned on each resource's last call (see the module docs for the model).
///
/// # Errors
/// [`NotApplicable`] when the renewal model cannot be followed through the hold.
pub fn conditional_bound(
    resources: &[Renewal],
    hold: &Hold,
) -> Result<ConditionalBound, NotApplicable> {
    let finite = [hold.start, hold.duration, hold.window, hold.alpha]
        .iter()
        .all(|x| x.is_finite());
    if !finite || hold.window <= 0.0 || hold.duration <= 0.0 || hold.alpha <= 0.0 {
        return Err(NotApplicable::Degenerate);
    }
    let mut ih = IrwinHall::new();
    let mut best: Option<ConditionalBound> = None;
    let mut last_err = NotApplicable::Degenerate;
    for div in [20.0, 10.0, 5.0, 2.0] {
        let delta = hold.window / div;
        let (moments, cycles) = match window_moments(&mut ih, resources, hold, delta) {
            Ok(x) => x,
            Err(e) => {
                last_err = e;
                continue;
            }
        };
        let k = bernstein_tolerance(&moments, hold.alpha);
        if best.is_some_and(|b| b.k <= k) {
            continue;
        }
        let (gi, &(bm, bv)) = moments
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.0.total_cmp(&b.1.0))
            .unwrap_or((0, &(0.0, 0.0)));
        let conditioned = resources.iter().filter(|r| r.last.is_some()).count();
        let overdue = resources
            .iter()
            .filter(|r| {
                r.last.is_some_and(|e| {
                    r.unsettled || e + hold.l_min + r.poll + r.jitter <= hold.start
                })
            })
            .count();
        best = Some(ConditionalBound {
            k,
            delta,
            windows: moments.len(),
            busiest_mean: bm,
            busiest_var: bv,
            busiest_at: gi as f64 * delta,
            conditioned,
            overdue,
            stationary: resources.len() - conditioned,
            cycles,
        });
    }
    best.ok_or(last_err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::windowed_max;

    fn hold(duration: f64, window: f64, alpha: f64) -> Hold {
        Hold {
            start: 0.0,
            duration,
            window,
            alpha,
            l_min: 0.0,
            l: 0.0,
            l_max: 0.0,
        }
    }

    fn resource(last: f64, poll: f64, jitter: f64) -> Renewal {
        Renewal {
            last: Some(last),
            unsettled: false,
            poll,
            jitter,
        }
    }

    /// The same renewal model, simulated: the (1 − α) quantile of the exact windowed max.
    fn monte_carlo(resources: &[Renewal], h: &Hold, runs: usize, seed: u64) -> Vec<u64> {
        let mut rng = crate::rng::seeded(seed);
        let end = h.start + h.duration;
        let mut maxima = Vec::with_capacity(runs);
        for _ in 0..runs {
            let mut times = Vec::new();
            for r in resources {
                let Some(e) = r.last else { continue };
                let (lo, hi) = (
                    e + h.l_min + r.poll - r.jitter,
                    e + h.l_min + r.poll + r.jitter,
                );
                // Conditioned on no call by the start: uniform on the part after it.
                let lo = lo.max(h.start);
                let mut t = lo + (hi - lo) * crate::rng::unit(&mut rng);
                // A gap of at least 1 ms (the requeue the provider rounds a zero to), so an
                // absolute jitter at or above P cannot stall the loop.
                while t <= end {
                    times.push((t * 1e6) as u64);
                    t += (h.l_min + r.poll - r.jitter
                        + 2.0 * r.jitter * crate::rng::unit(&mut rng))
                    .max(1e-3);
                }
            }
            times.sort_unstable();
            maxima.push(windowed_max(&times, (h.window * 1e6) as u64).count);
        }
        maxima.sort_unstable();
        maxima
    }

    fn quantile(sorted: &[u64], q: f64) -> u64 {
        sorted[((sorted.len() as f64 * q).ceil() as usize).min(sorted.len()) - 1]
    }

    #[test]
    fn irwin_hall_tables_match_the_closed_forms() {
        let mut ih = IrwinHall::new();
        ih.ensure(3);
        // F_2(z) = z²/2 on [0, 1], 1 − (2 − z)²/2 on [1, 2].
        for z in [0.25, 0.5, 1.0, 1.5, 1.9] {
            let want = if z <= 1.0 {
                z * z / 2.0
            } else {
                1.0 - (2.0 - z) * (2.0 - z) / 2.0
            };
            assert!((ih.cdf_at(2, z) - want).abs() < 1e-4, "F_2({z})");
        }
        // Symmetry: F_3(1.5) = 1/2; Ψ_m(m) = m/2.
        assert!((ih.cdf_at(3, 1.5) - 0.5).abs() < 1e-4);
        assert!((ih.psi_at(3, 3.0) - 1.5).abs() < 1e-9);
        assert!((ih.psi_at(3, 2.999) - 1.499).abs() < 1e-3);
    }

    #[test]
    fn the_bernstein_tolerance_is_the_least_k_whose_sum_is_at_most_alpha() {
        let moments = vec![(100.0, 20.0); 50];
        let k = bernstein_tolerance(&moments, 0.001);
        assert!(bernstein_union(&moments, k as f64) <= 0.001);
        assert!(bernstein_union(&moments, k as f64 - 1.0) > 0.001);
        assert!(k > 100);
    }

    /// All e_i equal: every resource's next call is uniform on the same 2j, so the count in
    /// a window inside it is binomial(N, W'/2j) with W' the grid window's length.
    #[test]
    fn equal_last_polls_give_binomial_window_counts_of_the_first_echo() {
        let (n, p, j, w) = (1000, 60.0, 6.0, 2.0);
        let rs = vec![resource(0.0, p, j); n];
        let h = Hold {
            start: 1.0,
            ..hold(62.0, w, 0.001)
        };
        let b = conditional_bound(&rs, &h).expect("applies");
        let q = (w + b.delta) / (2.0 * j);
        assert!(
            (b.busiest_mean - n as f64 * q).abs() < 1e-6 * n as f64,
            "{b:?}"
        );
        assert!((b.busiest_var - n as f64 * q * (1.0 - q)).abs() < 1e-3 * n as f64);
        assert_eq!(b.conditioned, n);
        assert_eq!(b.cycles, 1);
        // The least k of the union over the windows inside the echo, by hand.
        let inside = ((2.0 * j - w - b.delta) / b.delta).floor() as usize + 1;
        assert!(b.k as f64 > n as f64 * q);
        assert!(b.windows >= inside);
    }

    /// N resources spread evenly over one cycle: the process is (close to) stationary, so the
    /// busiest mean is near λ(W + δ) and the bound near §3.5's union bound.
    #[test]
    fn evenly_spread_last_polls_give_about_the_stationary_count() {
        let (n, p, j, w) = (1000, 60.0, 6.0, 10.0);
        // Ages at the quantiles of the stationary age law, density P(X > a)/μ (X uniform on
        // [P − j, P + j), μ = P): the forward recurrence times are then exactly stationary.
        let age = |u: f64| {
            let knee = (p - j) / p;
            if u <= knee {
                u * p
            } else {
                let rest = 4.0 * j * p * (1.0 - u);
                p + j - rest.sqrt()
            }
        };
        let rs: Vec<Renewal> = (0..n)
            .map(|i| resource(-age((i as f64 + 0.5) / n as f64), p, j))
            .collect();
        let h = hold(600.0, w, 0.001);
        let b = conditional_bound(&rs, &h).expect("applies");
        let stationary = n as f64 / p * (w + b.delta);
        assert!(
            b.busiest_mean <= stationary * 1.05 && b.busiest_mean >= stationary * 0.95,
            "{b:?} vs {stationary}"
        );
        let (union, _) = crate::predict::scan::union_tolerance(n as f64 / p, w, 600.0, 0.001);
        eprintln!("spread: {b:?}, stationary mean {stationary}, union {union}");
        assert!((b.k as f64) < union as f64 * 1.1, "{} vs {union}", b.k);
    }

    #[test]
    fn the_bound_falls_as_alpha_rises() {
        let rs = vec![resource(0.0, 60.0, 6.0); 500];
        let mut last = u64::MAX;
        for alpha in [1e-6, 1e-4, 1e-3, 1e-2, 0.1, 0.5] {
            let k = conditional_bound(&rs, &hold(120.0, 10.0, alpha))
                .expect("applies")
                .k;
            assert!(k <= last, "α = {alpha}: {k} > {last}");
            last = k;
        }
    }

    #[test]
    fn a_resource_that_can_land_twice_in_a_window_is_refused() {
        let fast = resource(0.0, 5.0, 0.5);
        for r in [fast, Renewal { last: None, ..fast }] {
            assert_eq!(
                conditional_bound(&[r], &hold(60.0, 10.0, 0.001)),
                Err(NotApplicable::TwicePerWindow)
            );
        }
    }

    #[test]
    fn overdue_and_never_polled_resources_are_counted_apart() {
        let mut rs = vec![resource(-100.0, 60.0, 6.0), resource(-30.0, 60.0, 6.0)];
        rs.push(Renewal {
            last: None,
            ..rs[0]
        });
        let b = conditional_bound(&rs, &hold(60.0, 10.0, 0.01)).expect("applies");
        assert_eq!((b.conditioned, b.overdue, b.stationary), (2, 1, 1));
    }

    /// budget.md §3.6's example, conditioned: 1,000 resources reconciled in a burst drained at
    /// B + R·t (R = 100, B = 1,000: all at once), P = 60 s, j = 6 s, W = 10 s, a 2-minute hold
    /// starting 30 s after the burst. The conditional bound against the same renewal model
    /// simulated, and against the unconditional echo tolerance.
    #[test]
    fn the_conditional_bound_covers_a_monte_carlo_of_the_same_model_after_a_burst() {
        let (n, r, b, p, j, w) = (1000usize, 100.0, 1000.0, 60.0, 6.0, 10.0);
        // The burst: the first B at once, the rest at R per second (here none).
        let rs: Vec<Renewal> = (0..n)
            .map(|i| {
                let at = if (i as f64) < b {
                    0.0
                } else {
                    (i as f64 - b) / r
                };
                resource(at, p, j)
            })
            .collect();
        let h = Hold {
            start: 30.0,
            ..hold(120.0, w, 0.001)
        };
        let bound = conditional_bound(&rs, &h).expect("applies");
        let mc = monte_carlo(&rs, &h, 2000, 7);
        let q = quantile(&mc, 1.0 - 0.001);
        assert!(bound.k >= q, "bound {} below simulated p99.9 {q}", bound.k);
        assert!(
            (bound.k as f64) < q as f64 * 1.15,
            "bound {} far above {q}",
            bound.k
        );
        // The unconditional echo tolerance of plan/hold.rs: union bound with Poisson tails at
        // λ_echo = min(N, B + 2jR)/(2j) is far looser.
        let echo = (n as f64).min(b + 2.0 * j * r) / (2.0 * j);
        let (unconditional, _) = crate::predict::scan::union_tolerance(echo, w, 120.0, 0.001);
        eprintln!(
            "burst: conditional k = {} (δ = {}, busiest mean {:.1}, var {:.1}), simulated p99.9 = {q} (max {}), unconditional echo = {unconditional}",
            bound.k,
            bound.delta,
            bound.busiest_mean,
            bound.busiest_var,
            mc[mc.len() - 1]
        );
        assert!(bound.k < unconditional, "{} vs {unconditional}", bound.k);
    }
}
