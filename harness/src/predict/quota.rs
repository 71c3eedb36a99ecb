//! Cloud quotas (budget.md §6): the no-throttle condition and the overload formulas.

use limiter::crossplane::RateLimitModel;

use super::params::Params;

/// §6.1's verdict for one class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ThrottleVerdict {
    /// c·B ≤ b and c·R ≤ r: no 429 ever (in-queue; crossplane only if E = Q = 0).
    Impossible,
    /// Only the rate condition holds: 429s after idle periods, not sustained.
    PossibleInBursts,
    /// The provider's rate exceeds the refill: sustained 429s.
    SustainedOverload,
}

impl ThrottleVerdict {
    /// Words for reports.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ThrottleVerdict::Impossible => "429s impossible",
            ThrottleVerdict::PossibleInBursts => "429s possible in bursts",
            ThrottleVerdict::SustainedOverload => "sustained overload",
        }
    }
}

/// §6.1: class-a calls are (c·B', c·R)-constrained where B' = min(N, B) (a burst cannot be
/// larger than the resources there are).
#[must_use]
pub fn no_throttle(
    c: f64,
    burst: f64,
    rate: f64,
    quota_burst: f64,
    quota_rate: f64,
) -> ThrottleVerdict {
    if c * rate > quota_rate {
        ThrottleVerdict::SustainedOverload
    } else if c * burst > quota_burst {
        ThrottleVerdict::PossibleInBursts
    } else {
        ThrottleVerdict::Impossible
    }
}

/// D̄(q) = L + q·P + Σ_{k≥1} q·(1 − q)^k·d_k, with d_k = min(max, base·2^(k−1)) the
/// provider's failure backoff (1 s … 60 s unless `--backoff-base`/`--backoff-max` or a
/// ProviderConfig's reconciliationPolicy say otherwise).
#[must_use]
pub fn mean_cycle(p: &Params, l: f64, poll: f64, q: f64) -> f64 {
    let mut s = l + q * poll;
    let mut miss = 1.0;
    for k in 1..2000 {
        miss *= 1.0 - q;
        s += q * miss * p.backoff_delay(k);
        if miss < 1e-15 {
            break;
        }
    }
    if q <= 0.0 { f64::INFINITY } else { s }
}

/// §6.2 steady overload: the mean-field fixed point. Returns (attempts/s, accepted/s,
/// rejected/s, effective poll period N/r_a when overloaded).
#[must_use]
pub fn steady_overload(p: &Params, n: f64, poll: f64, quota_rate: f64) -> (f64, f64, f64, f64) {
    let r_eff = match p.model {
        RateLimitModel::Crossplane | RateLimitModel::InQueue => p.r,
        _ => p.w_tot() / p.l.max(1e-3),
    };
    let f = |lambda: f64| {
        let q = (quota_rate / lambda).min(1.0);
        r_eff.min(n / mean_cycle(p, p.l, poll, q))
    };
    let (mut lo, mut hi) = (1e-9, r_eff.max(n / (poll + p.l)));
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > mid {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let lambda = 0.5 * (lo + hi);
    let accepted = lambda.min(quota_rate);
    let rejected = (lambda - quota_rate).max(0.0);
    let period = if rejected > 0.0 {
        n / quota_rate
    } else {
        n / lambda
    };
    (lambda, accepted, rejected, period)
}

/// §6.3: rejected creates in a creation wave of `n` under a mutate quota (b_m, r_m), and the
/// physical convergence time max((N − b_m)/r_m, (2N − B)/R).
#[must_use]
pub fn creation_under_quota(p: &Params, n: f64, b_m: f64, r_m: f64) -> (f64, f64) {
    let t_phys = ((n - b_m) / r_m).max((2.0 * n - p.b) / p.r).max(0.0);
    let rejected = match p.model {
        RateLimitModel::InQueue => in_queue_rejected(p, n, b_m, r_m),
        _ => (p.r - 2.0 * r_m).max(0.0) * (n - b_m).max(0.0) / r_m,
    };
    (rejected, t_phys)
}

/// `in-queue`: min(T_e·R, K_e·n(0)) + ∫_{T_e}^{∞} (min(R, n(t)/(d_max + L)) − r_m)⁺ dt with
/// n(t) = n(0) − r_m·t. The integral starts once the backoff has escalated to its cap d_max
/// after K_e failures taking T_e (1 s … 60 s: K_e = 6, T_e = 1 + 2 + … + 32 = 63 s); that is
/// the reading that reproduces §7.6's 5,887 and 129,470.
fn in_queue_rejected(p: &Params, n: f64, b_m: f64, r_m: f64) -> f64 {
    let n0 = (n - b_m).max(0.0);
    let (k_e, t_e) = p.backoff_escalation();
    let d_max = p.backoff.1;
    let head = (t_e * p.r).min(f64::from(k_e) * n0);
    let end = n0 / r_m;
    let steps = 20_000;
    let dt = (end - t_e).max(0.0) / f64::from(steps);
    let mut tail = 0.0;
    for i in 0..steps {
        let t = t_e + (f64::from(i) + 0.5) * dt;
        let left = n0 - r_m * t;
        tail += ((p.r).min(left / (d_max + p.l)) - r_m).max(0.0) * dt;
    }
    head + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::predict::params::test_params as params;

    /// budget.md §7.6 (read 100/20, mutate 50/5).
    #[test]
    fn creation_under_a_mutate_quota_matches_the_worked_example_of_section_7_6() {
        // (R, N, T_conv, crossplane rejected, in-queue rejected)
        let rows = [
            (10.0, 1000.0, 190.0, 0.0, None),
            (10.0, 10000.0, 1990.0, 0.0, None),
            (100.0, 1000.0, 190.0, 17100.0, Some(5887.0)),
            (100.0, 10000.0, 1990.0, 179_100.0, Some(129_470.0)),
        ];
        for (r, n, t, xp, iq) in rows {
            let (rej, conv) =
                creation_under_quota(&params(RateLimitModel::Crossplane, r), n, 50.0, 5.0);
            assert_eq!(conv, t, "R={r} N={n}");
            assert_eq!(rej, xp, "R={r} N={n}");
            assert_eq!(
                no_throttle(1.0, (10.0 * r).min(n), r, 50.0, 5.0),
                ThrottleVerdict::SustainedOverload
            );
            if let Some(iq) = iq {
                let (rej, _) =
                    creation_under_quota(&params(RateLimitModel::InQueue, r), n, 50.0, 5.0);
                assert!((rej - iq).abs() <= 6.0, "R={r} N={n}: {rej}");
            }
        }
    }

    #[test]
    fn steady_reads_match_the_worked_example_of_section_7_6() {
        // (R, N, P, attempts, accepted, rejected)
        let rows = [
            (10.0, 1000.0, 60.0, 10.0, 10.0, 0.0),
            (10.0, 10000.0, 60.0, 10.0, 10.0, 0.0),
            (100.0, 1000.0, 60.0, 16.65, 16.65, 0.0),
            (100.0, 10000.0, 60.0, 100.0, 20.0, 80.0),
            (10.0, 1000.0, 600.0, 1.67, 1.67, 0.0),
            (100.0, 10000.0, 600.0, 16.67, 16.67, 0.0),
        ];
        for (r, n, poll, att, acc, rej) in rows {
            let (a, ac, rj, period) =
                steady_overload(&params(RateLimitModel::Crossplane, r), n, poll, 20.0);
            let at = format!("R={r} N={n} P={poll}");
            assert!(
                (a - att).abs() < 0.01 && (ac - acc).abs() < 0.01 && (rj - rej).abs() < 0.01,
                "{at}: {a} {ac} {rj}"
            );
            if rej > 0.0 {
                assert!((period - 500.0).abs() < 1e-6, "{at}: {period}");
            }
        }
    }

    #[test]
    fn the_first_burst_check_is_met_with_equality_at_r_10_and_fails_at_r_100() {
        assert_eq!(
            no_throttle(1.0, 100.0, 10.0, 100.0, 20.0),
            ThrottleVerdict::Impossible
        );
        assert_eq!(
            no_throttle(1.0, 1000.0, 100.0, 100.0, 20.0),
            ThrottleVerdict::SustainedOverload
        );
        assert_eq!(
            no_throttle(1.0, 1000.0, 10.0, 100.0, 20.0),
            ThrottleVerdict::PossibleInBursts
        );
    }
}
