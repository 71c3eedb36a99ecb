//! Hard upper bounds for any window, per model (budget.md §2).

use limiter::crossplane::RateLimitModel;

use super::formula::{Meaning, Prediction};
use super::params::Params;

/// Lemma 1: ⌊b + r·W⌋ token-bucket starts in any closed window of W seconds.
#[must_use]
pub fn bucket_window(b: f64, r: f64, w: f64) -> f64 {
    (b + r * w + 1e-9).floor()
}

/// Lemma 3, all controllers: Σ_c w·(⌊W/L_min⌋ + 1).
#[must_use]
pub fn worker_cap(p: &Params, w: f64) -> f64 {
    if p.l_min <= 0.0 {
        return f64::INFINITY;
    }
    p.w_tot() * ((w / p.l_min + 1e-9).floor() + 1.0)
}

/// Lemma 5: ⌊(10R + 5R·W)/a⌋ + W_tot.
#[must_use]
pub fn api_coupled(p: &Params, w: f64, a: f64) -> f64 {
    ((p.client_burst + p.client_qps * w) / a + 1e-9).floor() + p.w_tot()
}

/// Excess over the nominal bound the scenario predicts for the `crossplane` model
/// (§2.2): early runs E and the lag Q, with the mechanism in words.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Excess {
    /// E: flagged passes that run before their time-to-act, in the window.
    pub e: f64,
    /// Q: the largest lag of a delayed copy (s).
    pub q: f64,
    /// Mechanism.
    pub mechanism: String,
}

/// Reconciles in any window of W seconds (§2.1–§2.4, summary §2.6).
#[must_use]
pub fn reconciles(p: &Params, w: f64, excess: &Excess) -> Prediction {
    let workers = worker_cap(p, w);
    let base = Prediction::new(
        "reconciles",
        format!("reconciles in any {w}s window"),
        0.0,
        "reconciles",
    )
    .meaning(Meaning::UpperBound)
    .input("R", p.r)
    .input("B", p.b)
    .input("W", w);
    match p.model {
        RateLimitModel::InQueue => {
            let api = api_coupled(p, w, f64::from(p.api.min()));
            let v = bucket_window(p.b, p.r, w).min(workers).min(api);
            Prediction { value: v, ..base }
                .formula("min(⌊B + R·W⌋, Σ_c w·(⌊W/L_min⌋+1), ⌊(10R + 5R·W)/a_min⌋ + W_tot)")
                .input("w", p.w)
                .input("k", f64::from(p.k))
                .input("L_min", p.l_min)
                .input("a_min", f64::from(p.api.min()))
                .source("[P] §2.1")
        }
        RateLimitModel::Crossplane => {
            let v = (bucket_window(p.b, p.r, w + excess.q) + excess.e).min(workers);
            let mut pr = Prediction { value: v, ..base }
                .formula("min(⌊B + R·(W + Q)⌋ + E, Σ_c w·(⌊W/L_min⌋+1))")
                .input("Q", excess.q)
                .input("E", excess.e)
                .input("w", p.w)
                .input("k", f64::from(p.k))
                .input("L_min", p.l_min)
                .source("[D] §2.2");
            if !excess.mechanism.is_empty() {
                pr = pr.note(excess.mechanism.clone());
            }
            pr
        }
        RateLimitModel::ControllerRuntime => Prediction { value: workers, ..base }
            .formula("k·(⌊W/L_min⌋ + 1)")
            .input("k", f64::from(p.k))
            .input("L_min", p.l_min)
            .source("[P] §2.3")
            .note("controller-runtime has no budget: events and RequeueAfter bypass the limiter; only the single worker per controller bounds it"),
        RateLimitModel::ConcurrencyOnly => {
            let api = api_coupled(p, w, f64::from(p.api.min()));
            Prediction { value: workers.min(api), ..base }
                .formula("min(Σ_c R·(⌊W/L_min⌋+1), ⌊(10R + 5R·W)/a_min⌋ + W_tot)")
                .input("k", f64::from(p.k))
                .input("L_min", p.l_min)
                .input("a_min", f64::from(p.api.min()))
                .source("[P] §2.4")
        }
    }
}

/// Cloud calls in any window of W seconds: c_max times the reconcile bound over W + Δ
/// (Lemma 4; §2.6).
#[must_use]
pub fn cloud_calls(p: &Params, w: f64, excess: &Excess) -> Prediction {
    calls_of(p, w, excess, p.c_max, "c_max", "cloud-calls", "cloud calls")
}

/// Calls of one operation or service in any window of W seconds: `c` (its most calls per
/// reconcile, `symbol`) times the reconcile bound over W + Δ (§10.2), with the SDK's
/// attempts a and their spread (a − 1)·b_max where the cloud may throttle (§10.3).
#[must_use]
pub fn calls_of(
    p: &Params,
    w: f64,
    excess: &Excess,
    c: f64,
    symbol: &str,
    id: &str,
    what: &str,
) -> Prediction {
    let d = p.delta() + p.retry_spread();
    let inner = reconciles(p, w + d, excess);
    let value = p.attempts * c * inner.value;
    let mut out = Prediction::new(id, format!("{what} in any {w}s window"), value, "calls")
        .meaning(Meaning::UpperBound)
        .input(symbol, c)
        .input("Δ", p.delta())
        .source(&inner.source);
    out.formula = if p.attempts > 1.0 {
        out = out
            .input("a", p.attempts)
            .input("b_max", super::params::SDK_MAX_BACKOFF_S);
        format!(
            "a · {symbol} · [{}] with W → W + Δ + (a − 1)·b_max (§10.3)",
            inner.formula
        )
    } else {
        format!("{symbol} · [{}] with W → W + Δ", inner.formula)
    };
    for i in inner.inputs {
        out = out.input(&i.name, if i.name == "W" { w } else { i.value });
    }
    out.note = inner.note;
    out
}

/// Watch (re)starts in a window: k at start, then about k per 290 s watch timeout (§2.5 (1)).
#[must_use]
pub fn watch_starts(p: &Params, w: f64) -> f64 {
    f64::from(p.k) * ((w / 290.0).floor() + 1.0)
}

/// API-server requests of the provider in any window of W seconds (§2.5), when `starts`
/// provider starts (restarts) can fall inside one window. Every request passes one of the
/// provider's client limiters (n_c buckets, b_i and q_i), so the bound sums Lemma 1 over
/// them. Each start brings new limiter instances with full bursts and its own watch starts
/// (§2.5 (3), "several limiter instances"); a limiter's old and new instance act in turn,
/// so its refill term q_i·W stays.
#[must_use]
pub fn api_requests(p: &Params, w: f64, starts: u32) -> Prediction {
    let instances = 1.0 + f64::from(starts);
    let watches = instances * watch_starts(p, w);
    let base = Prediction::new(
        "api-requests",
        format!("API requests in any {w}s window"),
        0.0,
        "requests",
    )
    .meaning(Meaning::UpperBound)
    .input("R", p.r_flag)
    .input("W", w);
    if !p.has_api_limit() {
        let a_max = [
            p.api.create,
            p.api.update,
            p.api.delete,
            p.api.resync,
            p.api.error,
        ]
        .into_iter()
        .max()
        .unwrap_or(1);
        let v = f64::from(a_max) * worker_cap(p, w) + watches;
        return Prediction { value: v, ..base }
            .formula("a_max · k·(⌊W/L_min⌋ + 1) + watch starts")
            .input("a_max", f64::from(a_max))
            .input("k", f64::from(p.k))
            .input("L_min", p.l_min)
            .source("[P] §2.3")
            .note(
                "controller-runtime: no client limit (QPS −1); bounded only through its workers",
            );
    }
    if p.client_limiters.len() > 1 {
        return several_limiters(p, w, starts, base);
    }
    let (qps, burst) = p
        .client_limiters
        .first()
        .map_or((p.client_qps, p.client_burst), |l| {
            (l.limits.qps, l.limits.burst)
        });
    let out = if starts > 0 {
        let v = (burst * instances + qps * w + 1e-9).floor() + watches;
        Prediction { value: v, ..base }
            .formula("⌊10R·(1 + s) + 5R·(W + Δ_net)⌋ + (1 + s)·k·(⌊W/290s⌋ + 1)")
            .input("s", f64::from(starts))
            .input("Δ_net", 0.0)
            .input("k", f64::from(p.k))
            .source("[P] §2.5 (3)")
            .note("a provider restart in the window: the new process's limiter starts with a full burst and its own watches")
    } else {
        let v = (burst + qps * w + 1e-9).floor() + watches;
        Prediction { value: v, ..base }
            .formula("⌊10R + 5R·(W + Δ_net)⌋ + watch starts k·(⌊W/290s⌋ + 1)")
            .input("Δ_net", 0.0)
            .input("k", f64::from(p.k))
            .source("[P] §2.5")
            .note("one limiter instance for every request; Δ_net = 0 on loopback")
    };
    // A profile's client limits other than LimitRESTConfig's 5R and 10R: the formula names
    // them.
    let custom = qps != 5.0 * p.r_flag || burst != 10.0 * p.r_flag;
    if custom {
        let formula = out.formula.replace("10R", "burst").replace("5R", "QPS");
        out.formula(formula).input("QPS", qps).input("burst", burst)
    } else {
        out
    }
}

/// [`api_requests`] with n_c > 1 client limiters: Σ_i ⌊b_i·(1 + s) + q_i·W⌋ plus the watch
/// starts, with the one-limiter bound of the first limiter in the note for comparison.
fn several_limiters(p: &Params, w: f64, starts: u32, base: Prediction) -> Prediction {
    let instances = 1.0 + f64::from(starts);
    let watches = instances * watch_starts(p, w);
    let each = |b: f64, q: f64| (b * instances + q * w + 1e-9).floor();
    let sum: f64 = p
        .client_limiters
        .iter()
        .map(|l| each(l.limits.burst, l.limits.qps))
        .sum();
    let (b_sum, q_sum) = p.client_limiters.iter().fold((0.0, 0.0), |(b, q), l| {
        (b + l.limits.burst, q + l.limits.qps)
    });
    let first = &p.client_limiters[0].limits;
    let one = each(first.burst, first.qps) + watches;
    let limiters: Vec<String> = p
        .client_limiters
        .iter()
        .map(|l| {
            format!(
                "{} (QPS {}, burst {})",
                l.name,
                super::fmt_num(l.limits.qps),
                super::fmt_num(l.limits.burst)
            )
        })
        .collect();
    let note = format!(
        "{} client limiters, a bucket each: {}; one limiter for every request would allow {}",
        p.client_limiters.len(),
        limiters.join(", "),
        super::fmt_num(one)
    );
    let out = Prediction {
        value: sum + watches,
        ..base
    }
    .input("n_c", p.client_limiters.len() as f64)
    .input("Σ b_i", b_sum)
    .input("Σ q_i", q_sum);
    if starts > 0 {
        out.formula("Σ_i ⌊b_i·(1 + s) + q_i·(W + Δ_net)⌋ + (1 + s)·k·(⌊W/290s⌋ + 1)")
            .input("s", f64::from(starts))
            .input("Δ_net", 0.0)
            .input("k", f64::from(p.k))
            .source("[P] §2.5 (3)")
            .note(format!(
                "{note}; a provider restart in the window: the new process's limiters start with full bursts and its own watches"
            ))
    } else {
        out.formula("Σ_i ⌊b_i + q_i·(W + Δ_net)⌋ + watch starts k·(⌊W/290s⌋ + 1)")
            .input("Δ_net", 0.0)
            .input("k", f64::from(p.k))
            .source("[P] §2.5")
            .note(note)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) use crate::predict::params::test_params as params;

    /// budget.md §7.1, every row: (R, W, reconciles, calls, API, worker cap, CR cap).
    const TABLE_7_1: [(f64, f64, f64, f64, f64, f64, f64); 6] = [
        (10.0, 1.0, 110.0, 220.0, 150.0, 630.0, 63.0),
        (10.0, 10.0, 200.0, 400.0, 600.0, 6030.0, 603.0),
        (10.0, 60.0, 700.0, 1400.0, 3100.0, 36030.0, 3603.0),
        (100.0, 1.0, 1100.0, 2200.0, 1500.0, 6300.0, 63.0),
        (100.0, 10.0, 2000.0, 4000.0, 6000.0, 60300.0, 603.0),
        (100.0, 60.0, 7000.0, 14000.0, 31000.0, 360300.0, 3603.0),
    ];

    #[test]
    fn hard_bounds_match_the_worked_example_of_section_7_1() {
        for (r, w, rec, calls, api, cap, cr) in TABLE_7_1 {
            let p = params(RateLimitModel::Crossplane, r);
            assert_eq!(bucket_window(p.b, p.r, w), rec, "R={r} W={w}");
            assert_eq!(p.c_max * bucket_window(p.b, p.r, w), calls);
            assert_eq!((10.0 * r + 5.0 * r * w).floor(), api);
            assert_eq!(worker_cap(&p, w), cap);
            let c = params(RateLimitModel::ControllerRuntime, r);
            assert_eq!(reconciles(&c, w, &Excess::default()).value, cr);
        }
    }

    #[test]
    fn in_queue_reconcile_bound_is_the_nominal_bucket_bound() {
        for (r, w, rec, ..) in TABLE_7_1 {
            let p = params(RateLimitModel::InQueue, r);
            assert_eq!(reconciles(&p, w, &Excess::default()).value, rec);
        }
    }

    #[test]
    fn concurrency_only_is_bound_by_the_api_client_as_in_section_7_1() {
        let cases = [
            (10.0, 1.0, 180.0),
            (10.0, 10.0, 630.0),
            (10.0, 60.0, 3130.0),
            (100.0, 1.0, 1800.0),
            (100.0, 10.0, 6300.0),
            (100.0, 60.0, 31300.0),
        ];
        for (r, w, v) in cases {
            let mut p = params(RateLimitModel::ConcurrencyOnly, r);
            p.api.poll = 1;
            assert_eq!(
                reconciles(&p, w, &Excess::default()).value,
                v,
                "R={r} W={w}"
            );
        }
    }

    #[test]
    fn crossplane_bound_adds_the_predicted_excess_and_keeps_its_mechanism() {
        let p = params(RateLimitModel::Crossplane, 10.0);
        let e = Excess {
            e: 300.0,
            q: 0.0,
            mechanism: "flagged keys released by the re-sync".into(),
        };
        let pr = reconciles(&p, 10.0, &e);
        assert_eq!(pr.value, 500.0);
        assert_eq!(
            pr.note.as_deref(),
            Some("flagged keys released by the re-sync")
        );
    }

    #[test]
    fn cloud_call_bound_widens_the_window_by_the_call_spread() {
        let mut p = params(RateLimitModel::InQueue, 10.0);
        p.l_max = 1.0;
        let pr = cloud_calls(&p, 10.0, &Excess::default());
        assert_eq!(pr.value, 2.0 * 210.0);
        assert_eq!(pr.get("W"), Some(10.0));
        assert_eq!(pr.get("Δ"), Some(1.0));
    }

    #[test]
    fn api_bound_adds_watch_starts() {
        let p = params(RateLimitModel::Crossplane, 10.0);
        assert_eq!(api_requests(&p, 1.0, 0).value, 150.0 + 3.0);
        assert_eq!(api_requests(&p, 300.0, 0).value, 100.0 + 15000.0 + 6.0);
    }

    #[test]
    fn the_api_bound_sums_lemma_1_over_the_client_limiters() {
        use crate::scenario::clients::{ClientLimiter, ClientLimits, per_rest_client};
        let mut p = params(RateLimitModel::Crossplane, 10.0);
        let r10 = ClientLimits {
            qps: 50.0,
            burst: 100.0,
        };
        p.client_limiters = per_rest_client(r10, false);
        // The real provider's run: the Bucket client used 150 and Events 25 in one second,
        // 175 against one limiter's 150 + 3; two buckets allow 300 + 3.
        let pr = api_requests(&p, 1.0, 0);
        assert_eq!(pr.value, 150.0 + 150.0 + 3.0);
        assert_eq!(pr.get("n_c"), Some(2.0));
        assert_eq!(pr.source, "[P] §2.5");
        let note = pr.note.as_deref().unwrap();
        assert!(
            note.contains("manager (QPS 50, burst 100), events"),
            "{note}"
        );
        assert!(note.ends_with("would allow 153"), "{note}");
        // A limiter of its own size, and a restart: each instance's burst doubles.
        p.client_limiters.push(ClientLimiter::new(
            "leader-election",
            ClientLimits {
                qps: 2.0,
                burst: 3.0,
            },
        ));
        assert_eq!(api_requests(&p, 1.0, 0).value, 300.0 + 5.0 + 3.0);
        assert_eq!(
            api_requests(&p, 1.0, 1).value,
            2.0 * 250.0 + (6.0 + 2.0) + 6.0
        );
    }

    #[test]
    fn a_restart_in_the_window_adds_a_second_instances_burst_and_watches() {
        let p = params(RateLimitModel::Crossplane, 10.0);
        // Old instance: up to its burst 10R plus refill; new instance: a fresh 10R burst;
        // the refill 5R·W is shared in time; each instance starts k watches.
        assert_eq!(api_requests(&p, 1.0, 1).value, 200.0 + 50.0 + 6.0);
        assert_eq!(api_requests(&p, 1.0, 1).get("s"), Some(1.0));
    }
}
