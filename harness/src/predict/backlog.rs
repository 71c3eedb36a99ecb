//! Transients: a backlog of reconciles (budget.md §4), creation to Ready under it (§5), and the
//! `crossplane` model's early runs during re-syncs (§2.2).

use limiter::crossplane::RateLimitModel;

use super::bounds::Excess;
use super::params::{Params, QueueKind};
use super::steady::Steady;

/// A backlog: what arrives, and what each resource costs.
#[derive(Clone, Debug, PartialEq)]
pub struct Backlog {
    /// N_c: resources per controller that take part.
    pub per_controller: Vec<f64>,
    /// m: reconciles per resource until done.
    pub m: f64,
    /// API requests of the first reconcile of a resource.
    pub a_first: f64,
    /// API requests of each later reconcile.
    pub a_next: f64,
    /// The harness's write rate r_h (None: all at once).
    pub arrival_rate: Option<f64>,
}

impl Backlog {
    /// N.
    #[must_use]
    pub fn n(&self) -> f64 {
        self.per_controller.iter().sum()
    }

    /// A_tot: API requests of the whole backlog.
    #[must_use]
    pub fn api_total(&self) -> f64 {
        self.n() * (self.a_first + (self.m - 1.0).max(0.0) * self.a_next)
    }

    fn arrivals(&self) -> f64 {
        self.arrival_rate.map_or(0.0, |r| self.n() / r)
    }
}

/// Splits `n` over `k` controllers as evenly as whole resources allow (the first get one
/// more).
#[must_use]
pub fn split_even(n: u64, k: u32) -> Vec<f64> {
    let k = u64::from(k.max(1));
    (0..k)
        .map(|i| (n / k + u64::from(i < n % k)) as f64)
        .collect()
}

fn worker_drain(p: &Params, b: &Backlog, l: f64) -> f64 {
    b.per_controller
        .iter()
        .map(|nc| ((nc * b.m / p.w).ceil() - 1.0).max(0.0) * l)
        .fold(0.0, f64::max)
}

/// The last start of the backlog, per model (§4.2).
#[must_use]
pub fn last_start(p: &Params, b: &Backlog) -> f64 {
    let n = b.n();
    let v = match p.model {
        RateLimitModel::Crossplane | RateLimitModel::InQueue => ((b.m * n - p.b) / p.r)
            .max(worker_drain(p, b, p.l))
            .max(api_drain(p, b)),
        RateLimitModel::ConcurrencyOnly => {
            worker_drain(p, b, p.l).max((b.api_total() - p.client_burst) / (p.client_qps))
        }
        RateLimitModel::ControllerRuntime => b
            .per_controller
            .iter()
            .map(|nc| (b.m * nc - 1.0).max(0.0) * p.l)
            .fold(0.0, f64::max),
    };
    v.max(b.arrivals()).max(0.0)
}

/// The API client's drain: (A_tot − 10R)/(5R), the time the client limiter (QPS 5R, burst
/// 10R) needs to admit every request of the backlog (§4.5's API term).
#[must_use]
pub fn api_drain(p: &Params, b: &Backlog) -> f64 {
    (b.api_total() - p.client_burst) / (p.client_qps)
}

/// When the API client has admitted the requests of the first `q·N` resources' last
/// reconciles, counted from the start of the wave: every first reconcile is queued before any
/// later one (the later ones are re-added behind the backlog), so
/// (N·a_first + q·N·(m − 1)·a_next − 10R)/(5R) + L̄.
#[must_use]
pub fn api_ready(p: &Params, b: &Backlog, q: f64) -> f64 {
    let n = b.n();
    (n * b.a_first + q * n * (b.m - 1.0).max(0.0) * b.a_next - p.client_burst) / (p.client_qps)
        + p.l
}

/// Reconcile starts in the first `w` seconds of the backlog (§4.2 "first second", §4.4).
/// `a_sync` is what a first reconcile waits for through the API client.
#[must_use]
pub fn first_window(p: &Params, b: &Backlog, w: f64) -> f64 {
    let n = b.n();
    let arrived = b.arrival_rate.map_or(n, |r| (r * w).max(1.0).min(n));
    let workers = super::bounds::worker_cap(p, w);
    let api = super::bounds::api_coupled(p, w, b.a_first.max(1.0));
    let v = match p.model {
        RateLimitModel::Crossplane | RateLimitModel::InQueue => {
            super::bounds::bucket_window(p.b, p.r, w)
                .min(workers)
                .min(api)
        }
        RateLimitModel::ConcurrencyOnly => workers.min(api),
        RateLimitModel::ControllerRuntime => workers,
    };
    v.min(arrived)
}

/// One term of the physical limit.
#[derive(Clone, Debug, PartialEq)]
pub struct LimitTerm {
    /// What binds (`tokens`, `workers`, `API client`, `quota account/class`, `harness writes`).
    pub name: String,
    /// The time it alone needs (s).
    pub seconds: f64,
}

/// A cloud-quota constraint on a backlog: C_a calls of class a against (b_a, r_a).
#[derive(Clone, Debug, PartialEq)]
pub struct QuotaNeed {
    /// `account/class`.
    pub name: String,
    /// C_a.
    pub calls: f64,
    /// b_a.
    pub burst: f64,
    /// r_a.
    pub per_second: f64,
}

/// D_phys of §4.5: the largest of the lower bounds, plus L_min; with every term.
#[must_use]
pub fn physical_limit(p: &Params, b: &Backlog, quotas: &[QuotaNeed]) -> (f64, Vec<LimitTerm>) {
    let n = b.n();
    let mut terms = Vec::new();
    if p.has_bucket() {
        terms.push(LimitTerm {
            name: "tokens".into(),
            seconds: (b.m * n - p.b) / p.r,
        });
    }
    terms.push(LimitTerm {
        name: "workers".into(),
        seconds: worker_drain(p, b, p.l_min),
    });
    if p.has_api_limit() {
        terms.push(LimitTerm {
            name: "API client".into(),
            seconds: (b.api_total() - p.client_burst) / (p.client_qps),
        });
    }
    for q in quotas {
        terms.push(LimitTerm {
            name: format!("quota {}", q.name),
            seconds: (q.calls - q.burst) / q.per_second,
        });
    }
    if b.arrival_rate.is_some() {
        terms.push(LimitTerm {
            name: "harness writes".into(),
            seconds: b.arrivals(),
        });
    }
    let worst = terms.iter().map(|t| t.seconds).fold(0.0, f64::max);
    (worst + p.l_min, terms)
}

/// Reconciles a created resource needs under a backlog (§5.2): 2 for synchronous resources,
/// one more per round whose observe comes before provisioning ends (poll requeue).
#[must_use]
pub fn reconciles_per_create(p: &Params, n: f64, provisioning: f64, poll: f64) -> f64 {
    if provisioning <= 0.0 {
        return 2.0;
    }
    let round = n / effective_rate(p);
    let first = round.max(first_observe(p));
    2.0 + ((provisioning - first).max(0.0) / round.max(poll + p.l)).ceil()
}

/// The rate at which a backlog is served: R (bucket), 5R/a_create (API-coupled), k/L (one
/// worker per controller).
#[must_use]
pub fn effective_rate(p: &Params) -> f64 {
    match p.model {
        RateLimitModel::Crossplane | RateLimitModel::InQueue => p.r,
        RateLimitModel::ConcurrencyOnly => p.client_qps / f64::from(p.api.create.max(1)),
        RateLimitModel::ControllerRuntime => f64::from(p.k) / p.l.max(1e-3),
    }
}

/// τ_1: when the first observe after a create comes without contention (§5.1): at once with a
/// self-event on the priority queue, else after the 1 s `Requeue`.
#[must_use]
pub fn first_observe(p: &Params) -> f64 {
    if p.self_event && p.queue == QueueKind::Priority {
        p.l
    } else {
        1.0 + p.l
    }
}

/// Time to Ready without contention (§5.1, poll requeue while provisioning):
/// τ_1 + K·(P + L̄) + L̄, K = ⌈(T_p − τ_1)/(P + L̄)⌉⁺.
#[must_use]
pub fn ttr_unloaded(p: &Params, provisioning: f64, poll: f64) -> f64 {
    let t1 = first_observe(p);
    let mu = poll + p.l;
    let k = ((provisioning - t1).max(0.0) / mu).ceil();
    t1 + k * mu + p.l
}

/// The q-quantile of a mix of unloaded times to Ready: `mix` holds (τ, how many) pairs, such
/// as [`ttr_unloaded`] of each group and poll class of a wave. The smallest τ below which at
/// least a fraction q of the resources lie; 0 for an empty mix.
#[must_use]
pub fn unloaded_quantile(mix: &[(f64, f64)], q: f64) -> f64 {
    let mut sorted: Vec<(f64, f64)> = mix.iter().copied().filter(|(_, n)| *n > 0.0).collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = sorted.iter().map(|(_, n)| n).sum();
    let mut seen = 0.0;
    for (tau, n) in &sorted {
        seen += n;
        if seen >= q * total - 1e-9 {
            return *tau;
        }
    }
    sorted.last().map_or(0.0, |(tau, _)| *tau)
}

/// The q-quantile of time to Ready in a creation wave of `n` (§5.2): for the bucket models
/// max(τ_unloaded(q), ((m − 1 + q)·N − B)/R + L̄, API client's ready time of the q-th
/// resource, q·N/r_h + τ_unloaded(q)).
///
/// `unloaded` is τ_unloaded(q), the q-quantile of the wave's times to Ready without a queue
/// ([`unloaded_quantile`]). The loaded terms are counted from the start of the wave. A
/// resource's time to Ready is counted from its own creation, so when the harness writes at
/// a rate r_h they are an upper estimate for the later resources.
#[must_use]
pub fn ttr_quantile(p: &Params, b: &Backlog, q: f64, unloaded: f64) -> f64 {
    let n = b.n();
    let loaded = match p.model {
        RateLimitModel::Crossplane | RateLimitModel::InQueue => {
            (((b.m - 1.0 + q) * n - p.b) / p.r + p.l).max(api_ready(p, b, q))
        }
        RateLimitModel::ConcurrencyOnly => {
            (q * n * f64::from(p.api.create) - p.client_burst) / (p.client_qps) + 1.0 + 2.0 * p.l
        }
        RateLimitModel::ControllerRuntime => b
            .per_controller
            .iter()
            .map(|nc| (q * nc * b.m * p.l).max((q * nc - 100.0) / 10.0))
            .fold(0.0, f64::max),
    };
    let arrivals = b.arrival_rate.map_or(0.0, |r| q * n / r);
    unloaded.max(loaded).max(arrivals + unloaded)
}

/// Early runs E in `[0, W]` of a forced re-sync (or any event on every key) of `n` resources
/// in the `crossplane` model (§2.2 table, §7.4), and the predicted reconcile count.
/// `mu` is the poll cycle P̄ + L̄.
#[must_use]
pub fn resync_excess(p: &Params, n: f64, st: &Steady, w: f64, mu: f64) -> (Excess, f64) {
    let nominal = super::bounds::bucket_window(p.b, p.r, w);
    let workers = super::bounds::worker_cap(p, w);
    if p.model != RateLimitModel::Crossplane {
        return (Excess::default(), n.min(nominal).min(workers));
    }
    if st.saturated {
        let e = match p.queue {
            QueueKind::Priority => st.flagged,
            QueueKind::Classic => st.flagged + (n - st.flagged) * w / mu,
        };
        let mech = format!(
            "saturated steady state: {:.0} flagged keys run at once when the event wave reaches them (§2.2, §8 row 3)",
            st.flagged
        );
        (
            Excess {
                e,
                q: 0.0,
                mechanism: mech,
            },
            e.min(workers),
        )
    } else {
        let e = match p.queue {
            QueueKind::Priority => 0.0,
            QueueKind::Classic => {
                let d = (n - p.b) / p.r;
                (n - p.b - p.r * w).max(0.0) * w.min(d).min(mu) / mu
            }
        };
        let mech = if e > 0.0 {
            "stale poll copies on the classic queue run flagged keys early (§2.2 M1.2, §8 row 2)"
                .to_owned()
        } else {
            String::new()
        };
        (
            Excess {
                e,
                q: 0.0,
                mechanism: mech,
            },
            (n.min(nominal) + e).min(workers),
        )
    }
}

/// The busiest `w` of a creation wave in the `crossplane` model on the classic queue with a
/// self-event (§2.2 table, §7.5): 2·(B + RW) − R·(1 + L̄), at most 2N.
#[must_use]
pub fn creation_classic_self_event(p: &Params, n: f64, w: f64) -> f64 {
    (2.0 * (p.b + p.r * w) - p.r * (1.0 + p.l)).min(2.0 * n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::steady::{PollClass, steady};

    fn params(model: RateLimitModel, r: f64) -> Params {
        Params {
            self_event: false,
            ..crate::predict::params::test_params(model, r)
        }
    }

    fn restart(n: u64, a: f64) -> Backlog {
        Backlog {
            per_controller: split_even(n, 3),
            m: 1.0,
            a_first: a,
            a_next: a,
            arrival_rate: None,
        }
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// budget.md §7.3, every row and model: last start, first second, busiest 10 s, D_phys.
    #[test]
    fn restart_backlogs_match_the_worked_example_of_section_7_3() {
        // (R, N, bucket last, first s, 10 s, CO last, CO first s, CR last, CR first s)
        let rows = [
            (10.0, 1000, 90.0, 110.0, 200.0, 18.0, 180.0, 16.7, 63.0),
            (10.0, 10000, 990.0, 110.0, 200.0, 198.0, 180.0, 166.7, 63.0),
            (100.0, 1000, 0.15, 1000.0, 1000.0, 0.15, 1000.0, 16.7, 63.0),
            (
                100.0, 10000, 90.0, 1100.0, 2000.0, 18.0, 1800.0, 166.7, 63.0,
            ),
        ];
        for (r, n, last, first, ten, co_last, co_first, cr_last, cr_first) in rows {
            let b = restart(n, 1.0);
            let at = format!("R={r} N={n}");
            for model in [RateLimitModel::Crossplane, RateLimitModel::InQueue] {
                let p = params(model, r);
                assert!(
                    close(last_start(&p, &b), last, 1e-6),
                    "{at}: {}",
                    last_start(&p, &b)
                );
                assert_eq!(first_window(&p, &b, 1.0), first, "{at}");
                assert_eq!(first_window(&p, &b, 10.0), ten, "{at}");
                assert!(
                    close(physical_limit(&p, &b, &[]).0, last + 0.05, 1e-6),
                    "{at}"
                );
            }
            let co = params(RateLimitModel::ConcurrencyOnly, r);
            assert!(
                close(last_start(&co, &b), co_last, 1e-6),
                "{at}: {}",
                last_start(&co, &b)
            );
            assert_eq!(first_window(&co, &b, 1.0), co_first, "{at}");
            let cr = params(RateLimitModel::ControllerRuntime, r);
            assert!(
                close(last_start(&cr, &b), cr_last, 0.06),
                "{at}: {}",
                last_start(&cr, &b)
            );
            assert_eq!(first_window(&cr, &b, 1.0), cr_first, "{at}");
        }
    }

    /// budget.md §7.5: drain, TTR first/p50/p99/last, first-second creates, API drain. The
    /// worked example counts tokens only; where the API client binds the quantiles are the
    /// API client's (docs/budget.md §5.2): every create reconcile's 5 requests come before the
    /// first observe, so R = 10, N = 1,000 has nobody Ready before (5,000 − 100)/50 = 98 s,
    /// and R = 100, N = 1,000 none before (5,000 − 1,000)/500 = 8 s.
    #[test]
    fn creation_waves_match_the_worked_example_of_section_7_5() {
        // (R, N, token drain, first, p50, p99, last, first-second creates, API drain)
        let rows = [
            (10.0, 1000, 190.0, 98.05, 140.0, 189.0, 190.0, 60.0, 118.0),
            (
                10.0, 10000, 1990.0, 998.05, 1490.0, 1980.0, 1990.0, 60.0, 1198.0,
            ),
            (100.0, 1000, 10.0, 8.05, 9.05, 10.03, 10.05, 600.0, 10.0),
            (
                100.0, 10000, 190.0, 98.05, 140.0, 189.0, 190.0, 600.0, 118.0,
            ),
        ];
        for (r, n, drain, first, p50, p99, last, creates, api) in rows {
            let p = params(RateLimitModel::InQueue, r);
            let m = reconciles_per_create(&p, n as f64, 0.0, 60.0);
            let b = Backlog {
                per_controller: split_even(n, 3),
                m,
                a_first: 5.0,
                a_next: 1.0,
                arrival_rate: None,
            };
            let at = format!("R={r} N={n}");
            assert!(close(last_start(&p, &b), drain, 1e-6), "{at}");
            let tau = ttr_unloaded(&p, 0.0, 60.0);
            for (q, want) in [(0.0, first), (0.5, p50), (0.99, p99), (1.0, last)] {
                let got = ttr_quantile(&p, &b, q, tau);
                assert!(close(got, want, 0.06), "{at} q={q}: {got}");
            }
            assert_eq!(first_window(&p, &b, 1.0), creates, "{at}");
            let api_drain = (b.api_total() - 10.0 * r) / (5.0 * r);
            assert!(close(api_drain, api, 1e-6), "{at}: {api_drain}");
            let classic = creation_classic_self_event(&p, n as f64, 10.0);
            let want = [389.5, 389.5, 2000.0, 3895.0]
                [rows.iter().position(|x| x.0 == r && x.1 == n).unwrap_or(0)];
            assert!(close(classic, want, 1e-6), "{at}: {classic}");
        }
    }

    #[test]
    fn the_unloaded_time_to_ready_of_a_mix_is_the_quantile_of_its_kinds() {
        // steady-1k: 800 Buckets and Records Ready at the reconcile after the create (2L̄ on
        // the priority queue), 200 Databases at their first poll after provisioning.
        let p = params(RateLimitModel::Crossplane, 100.0);
        let (sync, provisioned) = (ttr_unloaded(&p, 0.0, 60.0), ttr_unloaded(&p, 5.0, 60.0));
        assert!(close(sync, 1.0 + 2.0 * p.l, 1e-9), "{sync}");
        assert!(
            close(provisioned, 1.0 + 60.0 + 3.0 * p.l, 1e-9),
            "{provisioned}"
        );
        let mix = [(provisioned, 200.0), (sync, 800.0)];
        assert_eq!(unloaded_quantile(&mix, 0.5), sync);
        assert_eq!(unloaded_quantile(&mix, 0.8), sync);
        assert_eq!(unloaded_quantile(&mix, 0.81), provisioned);
        assert_eq!(unloaded_quantile(&mix, 0.99), provisioned);
        assert_eq!(unloaded_quantile(&[(sync, 0.0)], 0.5), 0.0);
        assert_eq!(unloaded_quantile(&[], 0.5), 0.0);
    }

    #[test]
    fn slow_provisioning_adds_a_round_of_observes_as_in_section_7_5() {
        // T_p = 150 s, R = 10, N = 1,000, poll mode: m = 3, p50 240 s, p99 289 s.
        let p = params(RateLimitModel::Crossplane, 10.0);
        let m = reconciles_per_create(&p, 1000.0, 150.0, 60.0);
        assert_eq!(m, 3.0);
        let b = Backlog {
            per_controller: split_even(1000, 3),
            m,
            a_first: 5.0,
            a_next: 1.0,
            arrival_rate: None,
        };
        let tau = ttr_unloaded(&p, 150.0, 60.0);
        assert!(close(ttr_quantile(&p, &b, 0.5, tau), 240.0, 0.06));
        assert!(close(ttr_quantile(&p, &b, 0.99, tau), 289.0, 0.06));
    }

    /// budget.md §7.4: forced re-sync of all N, `crossplane` model, predicted reconciles in
    /// [0, 10 s] and [0, 60 s].
    #[test]
    fn resync_early_runs_match_the_worked_example_of_section_7_4() {
        // (R, N, P, queue, W, predicted)
        let rows = [
            (10.0, 1000.0, 60.0, QueueKind::Classic, 10.0, 500.0),
            (10.0, 1000.0, 60.0, QueueKind::Priority, 10.0, 400.0),
            (10.0, 1000.0, 600.0, QueueKind::Classic, 10.0, 213.0),
            (10.0, 1000.0, 600.0, QueueKind::Classic, 60.0, 730.0),
            (10.0, 1000.0, 600.0, QueueKind::Priority, 10.0, 200.0),
            (10.0, 1000.0, 600.0, QueueKind::Priority, 60.0, 700.0),
            (10.0, 10000.0, 60.0, QueueKind::Priority, 10.0, 6030.0),
            (10.0, 10000.0, 600.0, QueueKind::Classic, 10.0, 4100.0),
            (10.0, 10000.0, 600.0, QueueKind::Priority, 10.0, 4000.0),
            (100.0, 1000.0, 60.0, QueueKind::Priority, 10.0, 1000.0),
            (100.0, 10000.0, 60.0, QueueKind::Classic, 10.0, 4995.0),
            (100.0, 10000.0, 60.0, QueueKind::Priority, 10.0, 3995.0),
            (100.0, 10000.0, 600.0, QueueKind::Classic, 10.0, 2133.0),
            (100.0, 10000.0, 600.0, QueueKind::Classic, 60.0, 7300.0),
            (100.0, 10000.0, 600.0, QueueKind::Priority, 60.0, 7000.0),
        ];
        for (r, n, poll, queue, w, want) in rows {
            let mut p = params(RateLimitModel::Crossplane, r);
            p.queue = queue;
            let classes: Vec<_> = (0..3)
                .map(|c| PollClass {
                    interval: poll,
                    count: n / 3.0,
                    controller: c,
                })
                .collect();
            let st = steady(&p, &classes, w);
            let (_, got) = resync_excess(&p, n, &st, w, poll + p.l);
            assert!(
                close(got, want, 1.0),
                "R={r} N={n} P={poll} {queue:?} W={w}: {got}"
            );
        }
    }
}
