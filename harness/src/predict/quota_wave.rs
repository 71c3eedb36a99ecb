//! A creation wave under cloud quotas, simulated (budget.md §6.3): when the cloud throttles,
//! the provider's per-item backoff decides when each resource tries again, and no closed form
//! says how much of the quota's refill the retry waves waste.
//!
//! # Semantics
//! A deterministic discrete-event model of one account's wave of `n` creates:
//! - resource i arrives at i/r_h (all at 0 without a write rate);
//! - each reconcile starts at its token's time-to-act in the bucket models (x/time/rate
//!   reservation, rate R, burst B, full at the start); in `crossplane` a reconcile that had to
//!   wait was throttled by the middleware, which forgets its failures (§4.3); the other models
//!   start at once (workers are not a limit here);
//! - a reconcile first observes (one read call), then, if the resource was not created yet,
//!   creates it (one mutate call); a successful create's self-event brings the next observe
//!   one reconcile later, and an observe of a created resource makes it Ready;
//! - a call the quota rejects (check-then-commit token buckets, full at the start; a rejected
//!   call takes no token) fails the reconcile: the resource's failure count k rises and it
//!   comes back after L̄ + min(60 s, 2^(k−1) s); a successful create's requeue counts as a
//!   failure too, as crossplane-runtime's `Requeue: true` does;
//! - no jitter anywhere, so equal backoffs retry together: the synchronized waves of §6.3.
//!
//! It does not model the API client, the cloud's latency or workers; the closed forms of §4
//! and §5 cover them, and the plan takes the larger of both.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use limiter::crossplane::RateLimitModel;

use super::params::Params;

/// A quota: burst and refill per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quota {
    /// b_a.
    pub burst: f64,
    /// r_a.
    pub per_second: f64,
}

/// What the simulated wave did.
#[derive(Clone, Debug, PartialEq)]
pub struct WaveOutcome {
    /// Each resource's time to Ready (s), sorted.
    pub ttr: Vec<f64>,
    /// When the last resource became Ready (s from the start of the wave).
    pub last_ready: f64,
    /// Reads the quota rejected.
    pub rejected_reads: u64,
    /// Creates the quota rejected.
    pub rejected_creates: u64,
    /// Where the simulation stopped at its event bound (s), if it did: the resources not
    /// Ready by then are given Ready times at the wave's limiting rate from there on
    /// (min(R/2, r_read/2, r_mutate): two reconciles, two reads and one create each).
    pub truncated_at: Option<f64>,
}

impl WaveOutcome {
    /// The q-quantile of time to Ready (nearest rank); 0 for an empty wave.
    #[must_use]
    pub fn ttr_quantile(&self, q: f64) -> f64 {
        if self.ttr.is_empty() {
            return 0.0;
        }
        let rank = (q * self.ttr.len() as f64).ceil().max(1.0) as usize;
        self.ttr[rank.min(self.ttr.len()) - 1]
    }
}

/// A check-then-commit token bucket, full at the start (the mock cloud's quota).
pub(super) struct Policer {
    pub(super) quota: Quota,
    tokens: f64,
    at: f64,
}

impl Policer {
    pub(super) fn new(quota: Quota) -> Policer {
        Policer {
            quota,
            tokens: quota.burst,
            at: 0.0,
        }
    }

    pub(super) fn admit(&mut self, t: f64) -> bool {
        let t = t.max(self.at);
        self.tokens = (self.tokens + (t - self.at) * self.quota.per_second).min(self.quota.burst);
        self.at = t;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Simulated events at the most: about a tenth of a second of a release build. A wave that
/// needs more (a hundred thousand resources retrying against a tight quota) is finished by the
/// fluid continuation of [`WaveOutcome::truncated_at`].
const MAX_EVENTS: usize = 2_000_000;

/// Simulates a creation wave of `n` resources against the account's read and mutate quotas
/// (None: unlimited). See the module's semantics.
#[must_use]
pub fn creation_wave(
    p: &Params,
    n: usize,
    arrival_rate: Option<f64>,
    read: Option<Quota>,
    mutate: Option<Quota>,
) -> WaveOutcome {
    let mut read = read.map(Policer::new);
    let mut mutate = mutate.map(Policer::new);
    let bucket_model = matches!(
        p.model,
        RateLimitModel::Crossplane | RateLimitModel::InQueue
    );
    // x/time/rate as the instant the bucket is (or was) empty: Lemma 1's Z.
    let mut empty_at = f64::NEG_INFINITY;
    let arrival = |i: usize| arrival_rate.map_or(0.0, |r| i as f64 / r);
    let mut failures = vec![0u32; n];
    let mut created = vec![false; n];
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    // Times as whole nanoseconds so the heap orders them exactly.
    let key = |t: f64| (t * 1e9).round() as u64;
    for i in 0..n {
        heap.push(Reverse((key(arrival(i)), i)));
    }
    let mut out = WaveOutcome {
        ttr: Vec::with_capacity(n),
        last_ready: 0.0,
        rejected_reads: 0,
        rejected_creates: 0,
        truncated_at: None,
    };
    let mut ready = vec![false; n];
    let mut events = 0;
    while let Some(Reverse((at, i))) = heap.pop() {
        events += 1;
        let t = at as f64 / 1e9;
        if events > MAX_EVENTS {
            out.truncated_at = Some(t);
            break;
        }
        let start = if bucket_model {
            empty_at = empty_at.max(t - p.b / p.r) + 1.0 / p.r;
            if empty_at > t && p.model == RateLimitModel::Crossplane {
                failures[i] = 0;
            }
            t.max(empty_at)
        } else {
            t
        };
        let read_ok = read.as_mut().is_none_or(|q| q.admit(start));
        if !read_ok {
            out.rejected_reads += 1;
        } else if created[i] {
            let at_ready = start + p.l;
            ready[i] = true;
            out.ttr.push(at_ready - arrival(i));
            out.last_ready = out.last_ready.max(at_ready);
            continue;
        } else if mutate.as_mut().is_none_or(|q| q.admit(start)) {
            created[i] = true;
            failures[i] += 1;
            heap.push(Reverse((key(start + 2.0 * p.l), i)));
            continue;
        } else {
            out.rejected_creates += 1;
        }
        failures[i] += 1;
        heap.push(Reverse((
            key(start + p.l + p.backoff_delay(failures[i])),
            i,
        )));
    }
    if let Some(stop) = out.truncated_at {
        let per = |q: Option<&Policer>, per_resource: f64| {
            q.map_or(f64::INFINITY, |q| q.quota.per_second / per_resource)
        };
        let rate = [
            if bucket_model {
                p.r / 2.0
            } else {
                f64::INFINITY
            },
            per(read.as_ref(), 2.0),
            per(mutate.as_ref(), 1.0),
        ]
        .into_iter()
        .fold(f64::INFINITY, f64::min);
        let rate = if rate.is_finite() && rate > 0.0 {
            rate
        } else {
            1.0
        };
        let mut k = 0.0;
        for (i, done) in ready.iter().enumerate() {
            if !done {
                k += 1.0;
                let at_ready = stop.max(arrival(i)) + k / rate + p.l;
                out.ttr.push(at_ready - arrival(i));
                out.last_ready = out.last_ready.max(at_ready);
            }
        }
    }
    out.ttr.sort_by(f64::total_cmp);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::params::Params;
    use crate::scenario::parse;

    fn params(model: &str, r: u32) -> Params {
        let s = parse(
            &format!(
                "apiVersion: harness/v1\nname: t\nprovider: {{maxReconcileRate: {r}, rateLimitModel: {model}}}\nresources:\n  - {{name: b, kind: Bucket, count: 1}}\nphases:\n  - {{name: create, action: create}}\n"
            ),
            "t.yaml",
        )
        .expect("valid");
        Params::new(&s.settings, 3, 1, &s.prediction)
    }

    const MUTATE: Quota = Quota {
        burst: 50.0,
        per_second: 5.0,
    };

    #[test]
    fn without_quotas_every_resource_is_ready_after_two_reconciles() {
        let w = creation_wave(&params("crossplane", 100), 200, None, None, None);
        assert_eq!(w.ttr.len(), 200);
        assert_eq!((w.rejected_reads, w.rejected_creates), (0, 0));
        // Create, then the observe two reconcile lengths later: 3·L̄.
        assert!((w.ttr_quantile(0.99) - 0.15).abs() < 1e-9, "{w:?}");
    }

    /// budget.md §6.3's simulated table (mutate 50/5, reads unlimited): last create, all
    /// Ready and rejected creates, reproduced within a few percent by this model.
    #[test]
    fn the_simulated_rows_of_section_6_3_are_reproduced() {
        // (model, R, N, all Ready (s), rejected creates)
        let rows = [
            ("crossplane", 10, 1000, 240.0, 502.0),
            ("crossplane", 100, 1000, 202.0, 16_558.0),
            ("in-queue", 100, 1000, 626.0, 7_514.0),
        ];
        for (model, r, n, ready, rejected) in rows {
            let w = creation_wave(&params(model, r), n, None, None, Some(MUTATE));
            assert_eq!(w.ttr.len(), n, "{model} R={r}: every resource Ready");
            assert!(
                (w.last_ready - ready).abs() / ready < 0.02,
                "{model} R={r}: all Ready at {} s, §6.3 says {ready}",
                w.last_ready
            );
            assert!(
                (w.rejected_creates as f64 - rejected).abs() / rejected < 0.02,
                "{model} R={r}: {} rejected, §6.3 says {rejected}",
                w.rejected_creates
            );
        }
    }

    #[test]
    fn a_wave_below_the_burst_retries_in_synchronized_waves_and_wastes_the_refill() {
        // over-quota with 200 buckets (R = 100, read 100/20, mutate 50/5): N < B, so the
        // bucket never throttles, failures escalate towards 60 s and the refill between the
        // waves is lost. The physical limit is (N − b_m)/r_m = 30 s; an embedded run took
        // 90.4 s for the create phase.
        let read = Quota {
            burst: 100.0,
            per_second: 20.0,
        };
        let w = creation_wave(
            &params("crossplane", 100),
            200,
            None,
            Some(read),
            Some(MUTATE),
        );
        assert_eq!(w.ttr.len(), 200);
        assert!((85.0..100.0).contains(&w.last_ready), "{}", w.last_ready);
        assert!(w.rejected_reads > 0 && w.rejected_creates > 0, "{w:?}");
    }
}
