//! The numbers every formula reads, derived from [`Settings`] (the provider's own config type)
//! and the scenario's prediction inputs.

use std::time::Duration;

use limiter::crossplane::{Jitter, RateLimitModel, Settings};

use crate::scenario::clients::{self, ClientLimiter, ClientLimits};
use crate::scenario::{ApiCosts, PredictionInputs};

/// Which work queue the model runs on (budget.md §0 "Queue kind").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueKind {
    /// client-go's rate-limiting queue (stale copies exist).
    Classic,
    /// controller-runtime's priority queue (one entry per key).
    Priority,
}

/// budget.md §0's symbols for one provider configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// The model.
    pub model: RateLimitModel,
    /// The global budget's rate: R with one shared bucket, s·R with one bucket per scope
    /// (`--scoped-buckets`) and s scopes with work (budget.md §0 "Scoped buckets").
    pub r: f64,
    /// The global budget's burst: 10R, or 10·s·R with scoped buckets.
    pub b: f64,
    /// R as `--max-reconcile-rate` gives it: the API client's QPS 5R and burst 10R scale
    /// with it whatever the buckets are (one client per process).
    pub r_flag: f64,
    /// The API client's QPS: 5R, or what a provider profile gives.
    pub client_qps: f64,
    /// The API client's burst: 10R, or what a provider profile gives.
    pub client_burst: f64,
    /// The client-side limiters every API request passes one of (n_c, with b_i and q_i,
    /// docs/budget.md §2.5): one shared (two with a separate event client) with `client_qps`
    /// and `client_burst`; the plan puts a provider profile's in their place.
    pub client_limiters: Vec<ClientLimiter>,
    /// s: global buckets the phase's resources draw on (1 with one shared bucket).
    pub scopes: u32,
    /// k: controllers with work.
    pub k: u32,
    /// w: workers per controller.
    pub w: f64,
    /// L̄ (s).
    pub l: f64,
    /// L_min (s).
    pub l_min: f64,
    /// L_max (s); also Δ.
    pub l_max: f64,
    /// c_max: the most cloud calls one reconcile of a kind in use makes (docs/budget.md §10;
    /// 2 for the sample kinds).
    pub c_max: f64,
    /// c_poll: the most cloud calls a poll (Connect + Observe) of a kind in use makes (1 for
    /// the sample kinds).
    pub c_poll: f64,
    /// a_r.
    pub api: ApiCosts,
    /// e_create = 1.
    pub self_event: bool,
    /// The queue.
    pub queue: QueueKind,
    /// Poll jitter as a share of each interval (j_i = share·P_i).
    pub jitter_share: f64,
    /// The provider's jitter sizing: a share of each interval, or one absolute j for every
    /// resource (upjet's `--poll-jitter-sizing poll-interval`).
    pub jitter: Jitter,
    /// Per-item failure backoff (base, max) in seconds: `--backoff-base`/`--backoff-max` or
    /// the model's 1 s … 60 s.
    pub backoff: (f64, f64),
    /// a: attempts of each cloud call (the SDK's retries) where the cloud may throttle or
    /// fail calls, else 1 (§10.3).
    pub attempts: f64,
}

/// b_max: the longest an AWS SDK waits before a retry (standard and adaptive modes), s.
pub const SDK_MAX_BACKOFF_S: f64 = 20.0;

impl Params {
    /// From the provider's settings, `k` controllers with work, `scopes` scopes with work
    /// (1 or 2; it matters only with scoped buckets) and the prediction inputs. The queue
    /// follows the model as `limiter::crossplane::ProviderRuntime` builds it.
    #[must_use]
    pub fn new(settings: &Settings, k: u32, scopes: u32, inputs: &PredictionInputs) -> Params {
        let r = f64::from(settings.rate());
        let backoff = settings.failure_backoff();
        let client = inputs.client.unwrap_or(ClientLimits {
            qps: 5.0 * r,
            burst: 10.0 * r,
        });
        let mut p = Params {
            model: settings.model,
            r,
            b: 10.0 * r,
            r_flag: r,
            client_qps: client.qps,
            client_burst: client.burst,
            client_limiters: clients::of_event_client(client, settings.event_client),
            scopes: 1,
            k: k.max(1),
            w: settings.workers_per_controller() as f64,
            l: inputs.reconcile.as_secs_f64(),
            l_min: inputs.min_reconcile.as_secs_f64(),
            l_max: inputs.max_reconcile.as_secs_f64(),
            c_max: 2.0,
            c_poll: 1.0,
            api: inputs.api,
            self_event: inputs.self_event,
            queue: match settings.model {
                RateLimitModel::ControllerRuntime => QueueKind::Classic,
                _ => QueueKind::Priority,
            },
            jitter_share: f64::from(settings.poll_jitter_percent) / 100.0,
            jitter: settings.jitter(),
            backoff: (backoff.base.as_secs_f64(), backoff.max.as_secs_f64()),
            attempts: 1.0,
        };
        if settings.scoped_buckets {
            p = p.with_scopes(scopes);
        }
        p
    }

    /// The same provider with its global budget drawn from `scopes` scoped buckets (1 or 2):
    /// rate s·R, burst 10·s·R. Only meaningful with `--scoped-buckets`.
    #[must_use]
    pub fn with_scopes(mut self, scopes: u32) -> Params {
        let s = scopes.clamp(1, 2);
        self.scopes = s;
        self.r = f64::from(s) * self.r_flag;
        self.b = 10.0 * self.r;
        self
    }

    /// j_i (s): the jitter half-width of a resource polled every `interval` seconds.
    #[must_use]
    pub fn jitter_of(&self, interval: f64) -> f64 {
        match self.jitter {
            Jitter::Proportional(_) => self.jitter_share * interval,
            Jitter::Fixed(_) => self
                .jitter
                .for_interval(Duration::from_secs_f64(interval.max(0.0)))
                .as_secs_f64(),
        }
    }

    /// The long-run poll rate band of `count` resources polled every `interval` seconds:
    /// (count/(P + j), count/(P − j)), with P − j kept above 1 ms (an absolute jitter at or
    /// above P can requeue at zero).
    #[must_use]
    pub fn poll_band(&self, count: f64, interval: f64) -> (f64, f64) {
        match self.jitter {
            Jitter::Proportional(_) => (
                count / (interval * (1.0 + self.jitter_share)),
                count / (interval * (1.0 - self.jitter_share)),
            ),
            Jitter::Fixed(_) => {
                let j = self.jitter_of(interval);
                (count / (interval + j), count / (interval - j).max(1e-3))
            }
        }
    }

    /// d_k (s): the k-th consecutive failure's delay, base·2^(k−1) capped at max.
    #[must_use]
    pub fn backoff_delay(&self, k: u32) -> f64 {
        let (base, max) = self.backoff;
        (base * 2f64.powi(k.clamp(1, 64) as i32 - 1)).min(max)
    }

    /// Failures before the backoff reaches its cap, and the time they take: 6 and
    /// 1 + 2 + … + 32 = 63 s for 1 s … 60 s.
    #[must_use]
    pub fn backoff_escalation(&self) -> (u32, f64) {
        let (mut k, mut t) = (1, 0.0);
        while k < 64 && self.backoff_delay(k) < self.backoff.1 {
            t += self.backoff_delay(k);
            k += 1;
        }
        (k - 1, t)
    }

    /// W_tot = k·w.
    #[must_use]
    pub fn w_tot(&self) -> f64 {
        f64::from(self.k) * self.w
    }

    /// Whether a global token bucket limits reconciles.
    #[must_use]
    pub fn has_bucket(&self) -> bool {
        matches!(
            self.model,
            RateLimitModel::Crossplane | RateLimitModel::InQueue
        )
    }

    /// Whether one API-client limiter (QPS 5R, burst 10R) gates every request.
    #[must_use]
    pub fn has_api_limit(&self) -> bool {
        self.model != RateLimitModel::ControllerRuntime
    }

    /// The time a reconcile's retried calls spread beyond Δ: (a − 1)·b_max (§10.3).
    #[must_use]
    pub fn retry_spread(&self) -> f64 {
        (self.attempts - 1.0).max(0.0) * SDK_MAX_BACKOFF_S
    }

    /// Δ: spread from a reconcile's start to its calls (≤ L_max, Lemma 4).
    #[must_use]
    pub fn delta(&self) -> f64 {
        self.l_max
    }
}

/// The parameters the predict tests start from: R given, B = 10R, 3 controllers with work,
/// R workers each (one for controller-runtime), L = 50 ms, c_max = 2, self-events on.
#[cfg(test)]
pub(crate) fn test_params(model: RateLimitModel, r: f64) -> Params {
    Params {
        model,
        r,
        b: 10.0 * r,
        r_flag: r,
        client_qps: 5.0 * r,
        client_burst: 10.0 * r,
        client_limiters: clients::of_event_client(
            ClientLimits {
                qps: 5.0 * r,
                burst: 10.0 * r,
            },
            limiter::crossplane::EventClient::Shared,
        ),
        scopes: 1,
        k: 3,
        w: if model == RateLimitModel::ControllerRuntime {
            1.0
        } else {
            r
        },
        l: 0.05,
        l_min: 0.05,
        l_max: 0.05,
        c_max: 2.0,
        c_poll: 1.0,
        api: ApiCosts::default(),
        self_event: true,
        queue: QueueKind::Priority,
        jitter_share: 0.1,
        jitter: Jitter::Proportional(10),
        backoff: (1.0, 60.0),
        attempts: 1.0,
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;
    use std::time::Duration;

    use limiter::crossplane::{JitterSizing, RateLimitModel, Settings};

    use super::*;
    use crate::predict::backlog::{self, Backlog};
    use crate::predict::bounds;

    fn settings(r: u32) -> Settings {
        Settings::new(NonZeroU32::new(r).unwrap()).model(RateLimitModel::InQueue)
    }

    fn creates(n: f64) -> Backlog {
        Backlog {
            per_controller: vec![n / 2.0, n / 2.0],
            m: 1.0,
            a_first: 1.0,
            a_next: 0.0,
            arrival_rate: None,
        }
    }

    #[test]
    fn two_scopes_at_r_10_drain_at_20_per_second_after_a_burst_of_200() {
        let inputs = PredictionInputs::default();
        let p = Params::new(&settings(10).scoped_buckets(true), 2, 2, &inputs);
        assert_eq!((p.r, p.b, p.r_flag, p.scopes), (20.0, 200.0, 10.0, 2));
        // limiter's tests/it/scopes.rs measures the same on paused time: 200 at once, then
        // 20/s, so 400 starts by 10 s.
        assert_eq!(bounds::bucket_window(p.b, p.r, 10.0), 400.0);
        let (limit, terms) = backlog::physical_limit(&p, &creates(1000.0), &[]);
        assert_eq!(terms[0].name, "tokens");
        assert_eq!(terms[0].seconds, (1000.0 - 200.0) / 20.0);
        assert!(limit >= 40.0, "{limit}");
        // The API client stays one limiter at 5R/10R: its bound does not double.
        let one = Params::new(&settings(10), 2, 2, &inputs);
        assert_eq!(
            bounds::api_requests(&p, 10.0, 0).value,
            bounds::api_requests(&one, 10.0, 0).value
        );
    }

    #[test]
    fn scoped_buckets_with_one_scope_in_use_keep_r_and_10r() {
        let inputs = PredictionInputs::default();
        let scoped = Params::new(&settings(10).scoped_buckets(true), 3, 1, &inputs);
        let shared = Params::new(&settings(10), 3, 2, &inputs);
        assert_eq!(scoped.r, 10.0);
        assert_eq!(scoped.b, 100.0);
        assert_eq!(shared.r, 10.0, "one shared bucket whatever the scopes");
        assert_eq!(shared.b, 100.0);
    }

    #[test]
    fn the_failure_backoff_follows_the_flags() {
        let inputs = PredictionInputs::default();
        let default = Params::new(&settings(10), 1, 1, &inputs);
        assert_eq!(default.backoff, (1.0, 60.0));
        assert_eq!(
            (1..=8)
                .map(|k| default.backoff_delay(k))
                .collect::<Vec<_>>(),
            [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]
        );
        assert_eq!(default.backoff_escalation(), (6, 63.0));
        let sap = settings(10)
            .backoff_base(Some(Duration::from_secs(5)))
            .backoff_max(Some(Duration::from_secs(300)));
        let p = Params::new(&sap, 1, 1, &inputs);
        assert_eq!(p.backoff, (5.0, 300.0));
        // 5, 10, 20, 40, 80, 160, then 300.
        assert_eq!(p.backoff_escalation(), (6, 315.0));
        assert_eq!(p.backoff_delay(7), 300.0);
    }

    #[test]
    fn upjets_absolute_jitter_widens_short_intervals_band() {
        let inputs = PredictionInputs::default();
        let upjet = settings(10)
            .poll_interval(Duration::from_secs(600))
            .poll_jitter_percent(5)
            .poll_jitter_sizing(JitterSizing::PollInterval)
            .min_poll_interval(Duration::ZERO);
        let p = Params::new(&upjet, 1, 1, &inputs);
        // j = 30 s for every resource, whatever its own interval.
        assert_eq!(p.jitter_of(600.0), 30.0);
        assert_eq!(p.jitter_of(60.0), 30.0);
        assert_eq!(p.poll_band(100.0, 60.0), (100.0 / 90.0, 100.0 / 30.0));
        // At or under j a requeue can be zero: the band's top is kept finite (P − j ≥ 1 ms).
        assert_eq!(p.poll_band(1.0, 10.0).1, 1000.0);
        let ours = Params::new(&settings(10), 1, 1, &inputs);
        assert_eq!(ours.jitter_of(60.0), 6.0);
        assert_eq!(ours.poll_band(100.0, 60.0), (100.0 / 66.0, 100.0 / 54.0));
    }
}
