//! Steady state (budget.md §3): expected rate, saturation, the count in a window (the
//! echoes of a wave are in [`super::echo`]).

use limiter::crossplane::RateLimitModel;

use super::params::Params;

/// `count` resources of one controller polling every `interval` seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PollClass {
    /// P_i (s).
    pub interval: f64,
    /// How many.
    pub count: f64,
    /// Which controller (kind) polls them.
    pub controller: usize,
}

/// The steady state of a population.
#[derive(Clone, Debug, PartialEq)]
pub struct Steady {
    /// Σ 1/(P_i + L̄): the demand without waiting.
    pub demand: f64,
    /// Whether the server (bucket or workers) is the bottleneck.
    pub saturated: bool,
    /// λ = Σ 1/μ_i, reconciles (= poll calls) per second.
    pub rate: f64,
    /// V: the wait every resource gets (bucket models; the largest per-controller wait for
    /// worker models).
    pub wait: f64,
    /// Flagged keys at any instant in the `crossplane` model (0 otherwise).
    pub flagged: f64,
    /// The long-run band (docs/budget.md §3.2) Σ1/(P_i + j_i), Σ1/(P_i − j_i).
    pub band: (f64, f64),
    /// Mean and variance of the count in a window of W (Poisson-binomial, §3.4).
    pub window_mean: f64,
    /// Variance of the count in a window.
    pub window_var: f64,
    /// Mean cycle μ (count-weighted harmonic: N/λ).
    pub period: f64,
}

fn bisect(mut f: impl FnMut(f64) -> f64, target: f64, mut hi: f64) -> f64 {
    // f decreasing in V; find V with f(V) = target.
    // Bounded: 2^1100 s overflows to infinity long before, and no finite f stays above its
    // target at V = ∞.
    let mut lo = 0.0;
    for _ in 0..1100 {
        if f(hi) <= target || !hi.is_finite() {
            break;
        }
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// §3.2–§3.4 for `classes` and a window of `w` seconds.
#[must_use]
pub fn steady(p: &Params, classes: &[PollClass], w: f64) -> Steady {
    let l = p.l;
    let demand: f64 = classes.iter().map(|c| c.count / (c.interval + l)).sum();
    let mut waits = vec![0.0; classes.len()];
    let mut saturated = false;
    if p.has_bucket() {
        if demand > p.r {
            saturated = true;
            let v = bisect(
                |v| classes.iter().map(|c| c.count / (c.interval + l + v)).sum(),
                p.r,
                1.0,
            );
            waits.iter_mut().for_each(|x| *x = v);
        }
    } else {
        // Workers are the server: per controller Σ L̄/(P_i + L̄ + V_c) = w (Little's law).
        let controllers = classes
            .iter()
            .map(|c| c.controller)
            .max()
            .map_or(0, |m| m + 1);
        for ctl in 0..controllers {
            let busy = |v: f64| -> f64 {
                classes
                    .iter()
                    .filter(|c| c.controller == ctl)
                    .map(|c| c.count * l / (c.interval + l + v))
                    .sum()
            };
            if busy(0.0) > p.w {
                saturated = true;
                let v = bisect(busy, p.w, 1.0);
                for (i, c) in classes.iter().enumerate() {
                    if c.controller == ctl {
                        waits[i] = v;
                    }
                }
            }
        }
    }
    let mut rate: f64 = classes
        .iter()
        .zip(&waits)
        .map(|(c, v)| c.count / (c.interval + l + v))
        .sum();
    if p.model == RateLimitModel::ConcurrencyOnly {
        // Polls wait for their status write through the API client (§2.4): ≤ 5R/a_poll.
        let cap = p.client_qps / f64::from(p.api.poll.max(1));
        if rate > cap {
            saturated = true;
            rate = cap;
        }
    }
    let wait = waits.iter().copied().fold(0.0, f64::max);
    let flagged = if p.model == RateLimitModel::Crossplane && saturated {
        classes
            .iter()
            .map(|c| c.count * wait / (c.interval + l + wait))
            .sum()
    } else {
        0.0
    };
    let band = classes
        .iter()
        .map(|c| p.poll_band(c.count, c.interval))
        .fold((0.0, 0.0), |(lo, hi), (a, b)| (lo + a, hi + b));
    let (mut mean, mut var) = (0.0, 0.0);
    for (c, v) in classes.iter().zip(&waits) {
        let pi = (w / (c.interval + l + v)).min(1.0);
        mean += c.count * w / (c.interval + l + v);
        var += c.count * pi * (1.0 - pi);
    }
    let n: f64 = classes.iter().map(|c| c.count).sum();
    Steady {
        demand,
        saturated,
        rate,
        wait,
        flagged,
        band,
        window_mean: mean,
        window_var: var,
        period: if rate > 0.0 { n / rate } else { f64::INFINITY },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(r: f64) -> Params {
        crate::predict::params::test_params(RateLimitModel::Crossplane, r)
    }

    fn one(n: f64, p: f64) -> Vec<PollClass> {
        (0..3)
            .map(|c| PollClass {
                interval: p,
                count: n / 3.0,
                controller: c,
            })
            .collect()
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// budget.md §7.2: (R, N, P, demand, saturated, rate, band low, band high, period,
    /// flagged, 10 s mean, 10 s sd).
    #[test]
    fn steady_state_matches_the_worked_example_of_section_7_2() {
        #[rustfmt::skip]
        let rows = [
            (10.0,  1000.0,  60.0,  16.65, true,  10.0,  15.15, 18.52, 100.0,  400.0,  None),
            (10.0,  1000.0,  600.0, 1.67,  false, 1.67,  1.52,  1.85,  600.0,  0.0,    Some((16.7, 4.0))),
            (10.0,  10000.0, 60.0,  166.5, true,  10.0,  151.5, 185.2, 1000.0, 9400.0, None),
            (10.0,  10000.0, 600.0, 16.67, true,  10.0,  15.15, 18.52, 1000.0, 4000.0, None),
            (100.0, 1000.0,  60.0,  16.65, false, 16.65, 15.15, 18.52, 60.05,  0.0,    Some((166.5, 11.8))),
            (100.0, 1000.0,  600.0, 1.67,  false, 1.67,  1.52,  1.85,  600.0,  0.0,    Some((16.7, 4.0))),
            (100.0, 10000.0, 60.0,  166.5, true,  100.0, 151.5, 185.2, 100.0,  3995.0, None),
            (100.0, 10000.0, 600.0, 16.67, false, 16.67, 15.15, 18.52, 600.0,  0.0,    Some((166.7, 12.8))),
        ];
        for (r, n, poll, demand, sat, rate, lo, hi, period, flagged, window) in rows {
            let s = steady(&params(r), &one(n, poll), 10.0);
            let at = format!("R={r} N={n} P={poll}");
            assert!(
                close(s.demand, demand, 0.01 + demand * 0.002),
                "{at}: demand {}",
                s.demand
            );
            assert_eq!(s.saturated, sat, "{at}");
            assert!(close(s.rate, rate, 0.01), "{at}: rate {}", s.rate);
            assert!(
                close(s.band.0, lo, 0.01 + lo * 0.002) && close(s.band.1, hi, 0.01 + hi * 0.002),
                "{at}: band {:?}",
                s.band
            );
            assert!(close(s.period, period, 0.06), "{at}: period {}", s.period);
            assert!(
                close(s.flagged, flagged, 0.6),
                "{at}: flagged {}",
                s.flagged
            );
            if let Some((m, sd)) = window {
                assert!(
                    close(s.window_mean, m, 0.06),
                    "{at}: mean {}",
                    s.window_mean
                );
                assert!(
                    close(s.window_var.sqrt(), sd, 0.06),
                    "{at}: sd {}",
                    s.window_var.sqrt()
                );
            }
        }
    }

    #[test]
    fn mixed_intervals_share_one_wait_when_the_bucket_saturates() {
        // §3.3: 8,000 at 60 s + 2,000 at 10 s, R = 100 → periods 115.3 s and 65.3 s.
        let classes = [
            PollClass {
                interval: 60.0,
                count: 8000.0,
                controller: 0,
            },
            PollClass {
                interval: 10.0,
                count: 2000.0,
                controller: 1,
            },
        ];
        let s = steady(&params(100.0), &classes, 10.0);
        assert!(close(60.0 + 0.05 + s.wait, 115.3, 0.05), "{}", s.wait);
        assert!(close(10.0 + 0.05 + s.wait, 65.3, 0.05));
    }
}
