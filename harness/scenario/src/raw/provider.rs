//! The `provider` and `prediction` sections: the provider's rate-limit settings (the nine
//! that a profile shares declared in [`settings`](crate::settings)) and the
//! prediction's inputs the settings do not give.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::DurationText;

crate::settings::rate_section! {
    /// Provider flags, as the provider's command line names them: the rate-limit settings,
    /// then the flags of this workspace's provider.
    #[derive(Debug, Default, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct RawProvider {
        /// `--error-requeue`: `backoff` (crossplane-runtime, the default) or `immediate`, a
        /// deliberately broken provider that requeues every failure at once (upjet#592), for
        /// showing that `hotLoops` catches it.
        #[serde(default)]
        #[schemars(with = "Option<ErrorRequeueName>")]
        pub error_requeue: Option<Spanned<ErrorRequeueName>>,
        /// `--aws-retry-mode` of the provider's AWS flavour: the SDK's `standard` (default),
        /// `adaptive` or `off`. Embedded runs need the harness built with feature `aws`.
        #[serde(default)]
        #[schemars(with = "Option<AwsRetryModeName>")]
        pub aws_retry_mode: Option<Spanned<AwsRetryModeName>>,
        /// `--credential-cache` of the AWS flavour: `none` (default), `irsa` or `all`.
        #[serde(default)]
        #[schemars(with = "Option<CredentialCacheName>")]
        pub credential_cache: Option<Spanned<CredentialCacheName>>,
        /// `--observe-only-absent`: how an observe-only resource whose cloud resource is absent
        /// requeues: `poll` (crossplane-runtime v2.4.0, #1088; the default) or `backoff` (before).
        #[serde(default)]
        #[schemars(with = "Option<ObserveOnlyAbsentName>")]
        pub observe_only_absent: Option<Spanned<ObserveOnlyAbsentName>>,
        /// `--event-client`: `shared` (the default: one client limiter for every request) or
        /// `separate` (Events through a client with a bucket of its own, as a controller-runtime
        /// provider's; the API bound sums both, docs/budget.md §2.5).
        #[serde(default)]
        #[schemars(with = "Option<EventClientName>")]
        pub event_client: Option<Spanned<EventClientName>>,
        /// `--reconcile-requests`: `honour` (the default: the token of
        /// `crossplane.io/reconcile-requested-at` is recorded in `status.lastHandledReconcileAt`)
        /// or `ignore` (never recorded, as for a type without Get/SetLastHandledReconcileAt).
        #[serde(default)]
        #[schemars(with = "Option<ReconcileRequestsName>")]
        pub reconcile_requests: Option<Spanned<ReconcileRequestsName>>,
    }
}

/// The AWS SDK's retry mode (`provider::aws::connect::RetryMode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AwsRetryModeName {
    /// 3 attempts, a 500-token retry quota.
    #[default]
    Standard,
    /// Standard plus client-side pacing.
    Adaptive,
    /// One attempt.
    Off,
}

/// What the AWS flavour keeps between Connects (`provider::aws::connect::CredentialCache`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CredentialCacheName {
    /// Nothing: every Connect calls STS.
    #[default]
    None,
    /// The web identity exchange.
    Irsa,
    /// Clients and credentials.
    All,
}

/// How a failed reconcile requeues (`limiter::crossplane::ErrorRequeue`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorRequeueName {
    /// On the per-item failure backoff.
    Backoff,
    /// At once (broken on purpose).
    Immediate,
}

/// How an observe-only absent resource requeues (`limiter::crossplane::ObserveOnlyAbsent`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ObserveOnlyAbsentName {
    /// After the poll interval (v2.4.0).
    Poll,
    /// On the failure backoff (before #1088).
    Backoff,
}

/// Which client writes Events (`limiter::crossplane::EventClient`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EventClientName {
    /// The controllers' client.
    Shared,
    /// A client with a bucket of its own.
    Separate,
}

/// Whether reconcile requests are tracked (`limiter::crossplane::ReconcileRequests`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReconcileRequestsName {
    /// Recorded in `status.lastHandledReconcileAt`.
    Honour,
    /// Never recorded.
    Ignore,
}

/// Prediction inputs (docs/budget.md §0) that are properties of the provider's code and the
/// environment rather than of its flags.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawPrediction {
    /// Mean reconcile duration L̄, pop to done. Default `50ms`.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub reconcile_duration: Option<Spanned<String>>,
    /// Shortest reconcile L_min (worker bounds). Default: the mean.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub min_reconcile_duration: Option<Spanned<String>>,
    /// Longest reconcile L_max; also the spread Δ between a reconcile's start and its cloud
    /// calls (they happen while it runs). Default: the mean.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub max_reconcile_duration: Option<Spanned<String>>,
    /// CPU time of one reconcile (the provider's work and the API server's and cloud's
    /// handling of its requests, without the cloud's configured latency), measured once in
    /// real time: a real run reports it as `reconcile CPU` (from the provider's reconcile
    /// durations minus the cloud latency in them). In virtual time, where work takes no
    /// time, the provider sleeps this long in every reconcile, so reconciles last as they
    /// would in real time; `0s` makes them instantaneous. Default `300us`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub reconcile_cpu: Option<Spanned<String>>,
    /// a: attempts a cloud SDK makes of one call (the first and its retries) when the cloud
    /// throttles or fails it: 3 for the AWS SDKs' standard and adaptive retry modes. Enters
    /// the cloud-call bounds of a scenario whose cloud may answer with a throttle or a
    /// server error (quotas, injected errors, outages; docs/budget.md §10.3). Default: 3
    /// for the provider's AWS flavour (1 with `provider.awsRetryMode: off`), else 1.
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(min = 1))]
    pub sdk_attempts: Option<Spanned<u32>>,
    /// Whether a create's annotation write comes back as a watch event that passes the
    /// provider's filter (e_create = 1). Default true.
    #[serde(default)]
    pub self_event: Option<bool>,
    /// Level α of the statistical tolerances (§3.5). Default 0.001.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub alpha: Option<Spanned<f64>>,
    /// API requests per reconcile type, as the provider documents them. Defaults are
    /// crossplane-runtime v2.4.0's (§0): poll 1, resync 2, create 5, observe 1, update 2,
    /// delete 2, error 2, beforeCreate 2.
    #[serde(default)]
    pub api_per_reconcile: RawApiCosts,
}

/// API requests per reconcile type (a_r of budget.md §0). Each optional.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct RawApiCosts {
    /// A poll of an up-to-date resource.
    pub poll: Option<u32>,
    /// A reconcile forced by `crossplane.io/reconcile-requested-at`.
    pub resync: Option<u32>,
    /// A create reconcile (finalizer, create-pending, create-succeeded, Event, status).
    pub create: Option<u32>,
    /// The observe after a create.
    pub observe: Option<u32>,
    /// An update reconcile.
    pub update: Option<u32>,
    /// A delete reconcile.
    pub delete: Option<u32>,
    /// A failed reconcile (status, Event).
    pub error: Option<u32>,
    /// Requests that must complete before the Create call (a_pre).
    pub before_create: Option<u32>,
}
