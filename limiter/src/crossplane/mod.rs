//! Crossplane's rate limits: the settings a provider derives from `--max-reconcile-rate`, the
//! global limiter middleware, poll intervals with jitter, the per-resource annotations, and
//! Crossplane core's XR circuit breaker ([`circuit`]).
//!
//! [`Settings`] is the one config type: the provider runs with it and the harness predicts
//! budgets from it.
//!
//! ```
//! use std::num::NonZeroU32;
//! use limiter::crossplane::{RateLimitModel, Settings};
//!
//! let s = Settings::new(NonZeroU32::new(10).unwrap());
//! assert_eq!(s.model, RateLimitModel::Crossplane);
//! let api = s.api_client_limit().unwrap();
//! assert_eq!((api.qps, api.burst), (50.0, 100));
//! assert_eq!(s.global_bucket(), Some((10.0, 100)));
//! assert_eq!(s.workers_per_controller(), 10);
//! ```
//!
//! # Settings of today's providers
//!
//! | setting | flag | default (ours) | today's providers |
//! |---|---|---|---|
//! | global buckets per scope | `--scoped-buckets` | off: one bucket R/10R shared by every controller | crossplane-runtime v2 providers: one bucket for cluster-scoped controllers and one for namespaced (`*.m.*`) ones, so both scopes together reach 2R/s with burst 20R |
//! | annotation floor | `--min-poll-interval` | 1s | 0 (none): upjet's template never calls `WithMinPollInterval` |
//! | failure backoff | `--backoff-base`, `--backoff-max` | the model's: 1s doubling to 60s | SAP's flags of the same names; upjet's ProviderConfig `reconciliationPolicy.exponentialFailureRateLimiter.{baseDelay,maxDelay}` |
//! | poll jitter | `--poll-jitter-percent`, `--poll-jitter-sizing` | 10 % of each resource's own interval | upjet: `--poll-jitter-percent 5 --poll-jitter-sizing poll-interval`, one absolute `j = Duration(float64(P) * 0.05)` for every resource |
//! | API client limiters | `--event-client` | shared: one QPS 5R / burst 10R bucket for every request | controller-runtime providers: one bucket per REST client (the manager's, the event recorder's, leader election's), each 5R/10R |
//! | reconcile requests | `--reconcile-requests` | honour: the token is recorded in `status.lastHandledReconcileAt` | only types that implement `Get/SetLastHandledReconcileAt`; provider-template's do not |
//!
//! ```
//! use std::num::NonZeroU32;
//! use std::time::Duration;
//! use limiter::crossplane::{Jitter, JitterSizing, Settings};
//!
//! // provider-upjet-aws v2's main: R = 100, poll 10m, jitter 5 % of P, no floor, two buckets.
//! let upjet = Settings::new(NonZeroU32::new(100).unwrap())
//!     .poll_interval(Duration::from_secs(600))
//!     .poll_jitter_percent(5)
//!     .poll_jitter_sizing(JitterSizing::PollInterval)
//!     .min_poll_interval(Duration::ZERO)
//!     .scoped_buckets(true);
//! assert_eq!(upjet.jitter(), Jitter::Fixed(Duration::from_secs(30)));
//! assert_eq!(upjet.global_budget(2), Some((200.0, 2000)));
//! assert_eq!(upjet.global_budget(1), Some((100.0, 1000)));
//! ```

pub mod circuit;
mod clients;
mod error_paths;
mod middleware;
mod poll;
mod request;
mod runtime;

use std::num::NonZeroU32;
use std::time::Duration;

pub use clients::EventClient;
pub use error_paths::{ErrorRequeue, ObserveOnlyAbsent, UnknownMode};
pub use middleware::{GlobalRateLimited, MiddlewareStats};
pub use poll::{
    EffectivePoll, Jitter, POLL_INTERVAL_ANNOTATION, PollAnnotationError, effective_poll_interval,
    jittered,
};
pub use request::{
    RECONCILE_REQUESTED_AT_ANNOTATION, ReconcileRequests, pending_reconcile_request,
};
pub use runtime::ProviderRuntime;
use strum::{Display, EnumString, IntoStaticStr};

use crate::clock::Clock;
use crate::workqueue::{Bucket, ItemExponential};

/// Per-item backoff of Crossplane controllers: 1s doubling to 60s.
pub const PER_ITEM_BASE: Duration = Duration::from_secs(1);
/// Cap of the per-item backoff.
pub const PER_ITEM_MAX: Duration = Duration::from_secs(60);

/// crossplane-runtime's `ratelimiter.NewGlobal(rps)`: one bucket of rate `rps` and burst
/// `10·rps`, shared by every controller given it, on tokio's clock.
///
/// Any `rps` is accepted, as in Go (`rps` is an `int`): `rps ≤ 0` gives a burst below one, so
/// every `when` returns `InfDuration` and nothing ever gets through.
#[must_use]
pub fn new_global(rps: i64) -> Bucket {
    new_global_with_clock(rps, Clock::tokio())
}

/// [`new_global`] on `clock`.
#[must_use]
pub fn new_global_with_clock(rps: i64, clock: Clock) -> Bucket {
    Bucket::with_clock(rps as f64, rps.wrapping_mul(10), clock)
}

/// crossplane-runtime's `ratelimiter.NewController()`: per-item exponential, 1s to 60s.
#[must_use]
pub fn new_controller<T: Eq + std::hash::Hash + Clone>() -> ItemExponential<T> {
    ItemExponential::new(PER_ITEM_BASE, PER_ITEM_MAX)
}

/// A client-side limit on Kubernetes API requests: client-go's `rest.Config` `QPS` and
/// `Burst`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClientLimit {
    /// Requests per second; a Go `float32`, exactly. Negative disables client-go's limiting,
    /// and zero means client-go's default of 5.
    pub qps: f32,
    /// Burst; a Go `int`. Zero means client-go's default of 10.
    pub burst: i64,
}

/// crossplane-runtime's `ratelimiter.LimitRESTConfig(cfg, rps)`: QPS `float32(rps·5)` and
/// burst `rps·10`, computed in Go's 64-bit `int` (wrapping).
///
/// Any `rps` is accepted, as in Go: `-2` gives QPS −10 and burst −20.
#[must_use]
pub fn limit_rest_config(rps: i64) -> ClientLimit {
    ClientLimit {
        qps: rps.wrapping_mul(5) as f32,
        burst: rps.wrapping_mul(10),
    }
}

/// The scope of a controller's kind, which picks its global bucket when buckets are per scope
/// ([`Settings::scoped_buckets`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// A cluster-scoped kind (v2 providers' legacy groups, such as `s3.aws.upbound.io`).
    Cluster,
    /// A namespaced kind (v2 providers' `*.m.*` groups, such as `s3.aws.m.upbound.io`).
    Namespaced,
}

impl Scope {
    /// Both scopes, cluster first.
    pub const ALL: [Scope; 2] = [Scope::Cluster, Scope::Namespaced];
}

/// How the poll jitter's percentage is turned into a duration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, IntoStaticStr, EnumString, Display)]
#[strum(serialize_all = "kebab-case", parse_err_ty = UnknownJitterSizing, parse_err_fn = unknown_jitter_sizing)]
pub enum JitterSizing {
    /// Ours: the percentage of each resource's own effective interval ([`Jitter::Proportional`]),
    /// so a requeue is never zero.
    #[default]
    PerResource,
    /// upjet's and provider-kubernetes's mains: `Duration(float64(P) * (pct / 100))` of the
    /// provider's `--poll-interval` P, the same absolute jitter for every resource
    /// ([`Jitter::Fixed`]); an annotated interval at or below it can stop polling.
    PollInterval,
}

impl JitterSizing {
    /// Both sizings, in documentation order.
    pub const ALL: [JitterSizing; 2] = [JitterSizing::PerResource, JitterSizing::PollInterval];

    /// The flag value (`per-resource`, `poll-interval`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A jitter sizing that is not one of the two.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown poll jitter sizing {0:?} (expected per-resource or poll-interval)")]
pub struct UnknownJitterSizing(pub String);

fn unknown_jitter_sizing(name: &str) -> UnknownJitterSizing {
    UnknownJitterSizing(name.to_owned())
}

/// Per-item failure backoff: `base` doubling per failure up to `max` (client-go's
/// `ItemExponentialFailureRateLimiter`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FailureBackoff {
    /// First delay.
    pub base: Duration,
    /// Cap.
    pub max: Duration,
}

/// Which rate-limit model a provider runs (`DESIGN.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, IntoStaticStr, EnumString, Display)]
#[strum(serialize_all = "kebab-case", parse_err_ty = UnknownModel, parse_err_fn = unknown_model)]
pub enum RateLimitModel {
    /// crossplane-runtime's middleware: global bucket R/10R taken when an item is popped; a
    /// throttled item goes back with `RequeueAfter`. Priority queue, R workers.
    #[default]
    Crossplane,
    /// Ours: the same bucket taken when a worker takes an item, and waited for in place. No
    /// second trip, no backoff reset; the nominal budget is strict.
    InQueue,
    /// controller-runtime defaults: classic queue, `MaxOf(exp 5ms..1000s, bucket 10/100)` on
    /// rate-limited adds only, 1 worker, no API-client limit.
    ControllerRuntime,
    /// Crossplane core ≥ 2.1: no global bucket, R workers, API client limited.
    ConcurrencyOnly,
}

impl RateLimitModel {
    /// Every model, in documentation order.
    pub const ALL: [RateLimitModel; 4] = [
        RateLimitModel::Crossplane,
        RateLimitModel::InQueue,
        RateLimitModel::ControllerRuntime,
        RateLimitModel::ConcurrencyOnly,
    ];

    /// The flag value (`crossplane`, `in-queue`, `controller-runtime`, `concurrency-only`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A rate-limit model name that is not one of the four.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown rate-limit model {0:?} (expected crossplane, in-queue, controller-runtime or concurrency-only)"
)]
pub struct UnknownModel(pub String);

fn unknown_model(name: &str) -> UnknownModel {
    UnknownModel(name.to_owned())
}

/// A provider's rate-limit settings, and everything derived from them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `--max-reconcile-rate`, R.
    pub max_reconcile_rate: NonZeroU32,
    /// `--rate-limit-model`.
    pub model: RateLimitModel,
    /// `--poll-interval`, P (default 1m).
    pub poll_interval: Duration,
    /// `--poll-jitter-percent` (default 10): jitter as a share of each resource's interval.
    pub poll_jitter_percent: u32,
    /// `--poll-jitter-sizing` (default per-resource): what the jitter percentage is a share of.
    pub poll_jitter_sizing: JitterSizing,
    /// `--min-poll-interval` (default 1s): floor for the per-resource annotation; zero means
    /// none, as in upjet's template.
    pub min_poll_interval: Duration,
    /// `--scoped-buckets` (default off): one global bucket per [`Scope`] instead of one shared
    /// bucket.
    pub scoped_buckets: bool,
    /// `--backoff-base`: first per-item failure delay; `None` keeps the model's.
    pub backoff_base: Option<Duration>,
    /// `--backoff-max`: cap of the per-item failure delay; `None` keeps the model's.
    pub backoff_max: Option<Duration>,
    /// `--error-requeue` (default backoff): how a failed reconcile requeues.
    pub error_requeue: ErrorRequeue,
    /// `--observe-only-absent` (default poll, crossplane-runtime v2.4.0): how an observe-only
    /// resource whose cloud resource is absent requeues.
    pub observe_only_absent: ObserveOnlyAbsent,
    /// `--event-client` (default shared): whether the event recorder has a client, and a
    /// client-side limiter, of its own.
    pub event_client: EventClient,
    /// `--reconcile-requests` (default honour): whether `crossplane.io/reconcile-requested-at`
    /// is announced and recorded in `status.lastHandledReconcileAt`.
    pub reconcile_requests: ReconcileRequests,
}

impl Default for Settings {
    fn default() -> Self {
        Settings::new(NonZeroU32::new(10).expect("10 is not zero"))
    }
}

/// Settings that cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// Jitter of 100% or more can make a requeue zero.
    #[error("poll jitter must be below 100 percent, got {0}")]
    JitterTooLarge(u32),
    /// A zero poll interval.
    #[error("poll interval must be greater than zero")]
    ZeroPollInterval,
    /// A zero failure backoff base never backs off.
    #[error("failure backoff base must be greater than zero")]
    ZeroBackoffBase,
    /// The backoff cap is below its base.
    #[error("failure backoff max {max:?} is below its base {base:?}")]
    BackoffMaxBelowBase {
        /// The effective base.
        base: Duration,
        /// The effective max.
        max: Duration,
    },
}

impl Settings {
    /// Our defaults for `R`: crossplane model, poll 1m, jitter 10% of each resource's interval,
    /// min 1s, one shared bucket, the model's failure backoff.
    #[must_use]
    pub fn new(max_reconcile_rate: NonZeroU32) -> Self {
        Settings {
            max_reconcile_rate,
            model: RateLimitModel::Crossplane,
            poll_interval: Duration::from_secs(60),
            poll_jitter_percent: 10,
            poll_jitter_sizing: JitterSizing::PerResource,
            min_poll_interval: Duration::from_secs(1),
            scoped_buckets: false,
            backoff_base: None,
            backoff_max: None,
            error_requeue: ErrorRequeue::Backoff,
            observe_only_absent: ObserveOnlyAbsent::Poll,
            event_client: EventClient::Shared,
            reconcile_requests: ReconcileRequests::Honour,
        }
    }

    /// With an event client mode.
    #[must_use]
    pub fn event_client(mut self, mode: EventClient) -> Self {
        self.event_client = mode;
        self
    }

    /// With a reconcile-request mode.
    #[must_use]
    pub fn reconcile_requests(mut self, mode: ReconcileRequests) -> Self {
        self.reconcile_requests = mode;
        self
    }

    /// With an error requeue mode.
    #[must_use]
    pub fn error_requeue(mut self, mode: ErrorRequeue) -> Self {
        self.error_requeue = mode;
        self
    }

    /// With an observe-only absent requeue mode.
    #[must_use]
    pub fn observe_only_absent(mut self, mode: ObserveOnlyAbsent) -> Self {
        self.observe_only_absent = mode;
        self
    }

    /// With a jitter sizing.
    #[must_use]
    pub fn poll_jitter_sizing(mut self, sizing: JitterSizing) -> Self {
        self.poll_jitter_sizing = sizing;
        self
    }

    /// With one global bucket per scope (`true`) or one shared bucket.
    #[must_use]
    pub fn scoped_buckets(mut self, on: bool) -> Self {
        self.scoped_buckets = on;
        self
    }

    /// With a failure backoff base (`None`: the model's).
    #[must_use]
    pub fn backoff_base(mut self, d: Option<Duration>) -> Self {
        self.backoff_base = d;
        self
    }

    /// With a failure backoff cap (`None`: the model's).
    #[must_use]
    pub fn backoff_max(mut self, d: Option<Duration>) -> Self {
        self.backoff_max = d;
        self
    }

    /// With a model.
    #[must_use]
    pub fn model(mut self, model: RateLimitModel) -> Self {
        self.model = model;
        self
    }

    /// With a poll interval.
    #[must_use]
    pub fn poll_interval(mut self, p: Duration) -> Self {
        self.poll_interval = p;
        self
    }

    /// With a jitter percentage.
    #[must_use]
    pub fn poll_jitter_percent(mut self, pct: u32) -> Self {
        self.poll_jitter_percent = pct;
        self
    }

    /// With a minimum poll interval.
    #[must_use]
    pub fn min_poll_interval(mut self, d: Duration) -> Self {
        self.min_poll_interval = d;
        self
    }

    /// Checks what the types cannot.
    ///
    /// # Errors
    /// See [`SettingsError`].
    pub fn validate(&self) -> Result<(), SettingsError> {
        if self.poll_jitter_percent >= 100 {
            return Err(SettingsError::JitterTooLarge(self.poll_jitter_percent));
        }
        if self.poll_interval.is_zero() {
            return Err(SettingsError::ZeroPollInterval);
        }
        let b = self.failure_backoff();
        if b.base.is_zero() {
            return Err(SettingsError::ZeroBackoffBase);
        }
        if b.max < b.base {
            return Err(SettingsError::BackoffMaxBelowBase {
                base: b.base,
                max: b.max,
            });
        }
        Ok(())
    }

    /// R as a number.
    #[must_use]
    pub fn rate(&self) -> u32 {
        self.max_reconcile_rate.get()
    }

    /// The Kubernetes API client limit: QPS 5R, burst 10R (`LimitRESTConfig`); none for the
    /// `controller-runtime` model (QPS −1 since v0.21).
    #[must_use]
    pub fn api_client_limit(&self) -> Option<ClientLimit> {
        match self.model {
            RateLimitModel::ControllerRuntime => None,
            _ => Some(limit_rest_config(i64::from(self.rate()))),
        }
    }

    /// The client-side limiters of the provider's Kubernetes requests, each with
    /// [`Settings::api_client_limit`]: one shared by every request, or two with a separate
    /// event client; none for the `controller-runtime` model.
    #[must_use]
    pub fn api_client_limiters(&self) -> usize {
        match self.api_client_limit() {
            Some(_) => self.event_client.limiters(),
            None => 0,
        }
    }

    /// The global reconcile bucket (rate, burst): R and 10R, for the `crossplane` and `in-queue`
    /// models.
    #[must_use]
    pub fn global_bucket(&self) -> Option<(f64, i64)> {
        match self.model {
            RateLimitModel::Crossplane | RateLimitModel::InQueue => {
                Some((f64::from(self.rate()), i64::from(self.rate()) * 10))
            }
            _ => None,
        }
    }

    /// The global buckets a provider runs: one, or one per scope with `--scoped-buckets`
    /// (none for the models without a bucket).
    #[must_use]
    pub fn global_bucket_count(&self) -> usize {
        match (self.global_bucket(), self.scoped_buckets) {
            (None, _) => 0,
            (Some(_), false) => 1,
            (Some(_), true) => Scope::ALL.len(),
        }
    }

    /// The combined global budget (rate, burst) of a provider whose controllers span
    /// `scopes_in_use` scopes (1 or 2): R and 10R with one shared bucket; with
    /// `--scoped-buckets`, R and 10R per scope in use, so 2R and 20R when both are.
    #[must_use]
    pub fn global_budget(&self, scopes_in_use: usize) -> Option<(f64, i64)> {
        let (rate, burst) = self.global_bucket()?;
        let buckets = if self.scoped_buckets {
            scopes_in_use.clamp(1, Scope::ALL.len())
        } else {
            1
        };
        Some((rate * buckets as f64, burst * buckets as i64))
    }

    /// Workers per controller: R, or 1 for the `controller-runtime` model.
    #[must_use]
    pub fn workers_per_controller(&self) -> usize {
        match self.model {
            RateLimitModel::ControllerRuntime => 1,
            _ => self.rate() as usize,
        }
    }

    /// The model's own per-item backoff (base, max): 1s..60s, or 5ms..1000s for
    /// `controller-runtime`, whatever the flags say.
    #[must_use]
    pub fn per_item_backoff(&self) -> (Duration, Duration) {
        match self.model {
            RateLimitModel::ControllerRuntime => {
                (Duration::from_millis(5), Duration::from_secs(1000))
            }
            _ => (PER_ITEM_BASE, PER_ITEM_MAX),
        }
    }

    /// The per-item failure backoff the controllers run: `--backoff-base` and `--backoff-max`
    /// where given, else the model's ([`Settings::per_item_backoff`]).
    ///
    /// This is the provider-wide value. In upjet providers a ProviderConfig's
    /// `spec.reconciliationPolicy.exponentialFailureRateLimiter` wins over it: pass that to
    /// [`ProviderRuntime::controller_with_backoff`] instead.
    #[must_use]
    pub fn failure_backoff(&self) -> FailureBackoff {
        let (base, max) = self.per_item_backoff();
        FailureBackoff {
            base: self.backoff_base.unwrap_or(base),
            max: self.backoff_max.unwrap_or(max),
        }
    }

    /// The poll jitter: a share of each resource's own interval ([`JitterSizing::PerResource`]),
    /// or `Duration(float64(P) * (pct / 100))` of `--poll-interval` for every resource
    /// ([`JitterSizing::PollInterval`], as upjet's and provider-kubernetes's mains compute it).
    #[must_use]
    pub fn jitter(&self) -> Jitter {
        match self.poll_jitter_sizing {
            JitterSizing::PerResource => Jitter::Proportional(self.poll_jitter_percent),
            JitterSizing::PollInterval => {
                let share = f64::from(self.poll_jitter_percent) / 100.0;
                let nanos = self.poll_interval.as_nanos() as f64 * share;
                Jitter::Fixed(Duration::from_nanos(nanos as u64))
            }
        }
    }

    /// A resource's poll interval from its annotation (clamped up to the minimum; an invalid
    /// value falls back to the default and is reported).
    #[must_use]
    pub fn effective_poll(&self, annotation: Option<&str>) -> EffectivePoll {
        effective_poll_interval(annotation, self.poll_interval, self.min_poll_interval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_rest_config_is_five_r_and_ten_r() {
        assert_eq!(
            limit_rest_config(1),
            ClientLimit {
                qps: 5.0,
                burst: 10
            }
        );
        assert_eq!(
            limit_rest_config(100),
            ClientLimit {
                qps: 500.0,
                burst: 1000
            }
        );
    }

    #[test]
    fn limit_rest_config_takes_a_negative_rate_as_go_does() {
        assert_eq!(
            limit_rest_config(-2),
            ClientLimit {
                qps: -10.0,
                burst: -20
            }
        );
    }

    #[test]
    fn new_global_with_a_negative_rate_never_lets_anything_through() {
        use crate::workqueue::RateLimiter;
        let g = new_global(-2);
        assert_eq!(g.limiter().burst(), -20);
        assert_eq!(g.when(&"a"), crate::go::GoDuration::INF);
    }

    #[test]
    fn models_parse_from_their_flag_values() {
        for m in RateLimitModel::ALL {
            assert_eq!(m.as_str().parse::<RateLimitModel>(), Ok(m));
        }
        assert!("fast".parse::<RateLimitModel>().is_err());
    }

    #[test]
    fn a_separate_event_client_is_a_second_limiter_unless_there_is_no_client_limit() {
        let s = Settings::default();
        assert_eq!(s.api_client_limiters(), 1);
        let separate = s.event_client(EventClient::Separate);
        assert_eq!(separate.api_client_limiters(), 2);
        let unlimited = separate.model(RateLimitModel::ControllerRuntime);
        assert_eq!(unlimited.api_client_limiters(), 0);
    }

    #[test]
    fn controller_runtime_model_has_no_budget_and_one_worker() {
        let s = Settings::default().model(RateLimitModel::ControllerRuntime);
        assert_eq!(s.api_client_limit(), None);
        assert_eq!(s.global_bucket(), None);
        assert_eq!(s.workers_per_controller(), 1);
    }

    #[test]
    fn scoped_buckets_double_the_budget_only_when_both_scopes_are_in_use() {
        let shared = Settings::default();
        assert_eq!(shared.global_budget(2), Some((10.0, 100)));
        assert_eq!(shared.global_bucket_count(), 1);
        let scoped = Settings::default().scoped_buckets(true);
        assert_eq!(scoped.global_budget(1), Some((10.0, 100)));
        assert_eq!(scoped.global_budget(2), Some((20.0, 200)));
        assert_eq!(scoped.global_bucket_count(), 2);
        let none = scoped.model(RateLimitModel::ConcurrencyOnly);
        assert_eq!(
            (none.global_budget(2), none.global_bucket_count()),
            (None, 0)
        );
    }

    #[test]
    fn backoff_flags_override_the_models_backoff_and_are_checked() {
        let s = Settings::default();
        assert_eq!(
            s.failure_backoff(),
            FailureBackoff {
                base: PER_ITEM_BASE,
                max: PER_ITEM_MAX
            }
        );
        let s = s.backoff_base(Some(Duration::from_secs(5)));
        assert_eq!(s.failure_backoff().base, Duration::from_secs(5));
        assert_eq!(s.failure_backoff().max, PER_ITEM_MAX);
        assert_eq!(
            s.clone()
                .backoff_max(Some(Duration::from_secs(2)))
                .validate(),
            Err(SettingsError::BackoffMaxBelowBase {
                base: Duration::from_secs(5),
                max: Duration::from_secs(2)
            })
        );
        assert_eq!(
            s.backoff_base(Some(Duration::ZERO)).validate(),
            Err(SettingsError::ZeroBackoffBase)
        );
    }

    #[test]
    fn upjets_jitter_is_five_percent_of_the_poll_interval_for_every_resource() {
        let s = Settings::default()
            .poll_jitter_percent(5)
            .poll_jitter_sizing(JitterSizing::PollInterval);
        // time.Duration(float64(time.Minute) * 0.05)
        assert_eq!(s.jitter(), Jitter::Fixed(Duration::from_secs(3)));
        assert_eq!(
            s.jitter().for_interval(Duration::from_secs(1)),
            Duration::from_secs(3)
        );
        // 5 / 100 is the same double as Go's literal 0.05.
        assert_eq!(5.0_f64 / 100.0, 0.05);
        for m in JitterSizing::ALL {
            assert_eq!(m.as_str().parse::<JitterSizing>(), Ok(m));
        }
        assert!("absolute".parse::<JitterSizing>().is_err());
    }

    #[test]
    fn jitter_of_a_hundred_percent_is_rejected() {
        assert_eq!(
            Settings::default().poll_jitter_percent(100).validate(),
            Err(SettingsError::JitterTooLarge(100))
        );
    }
}
