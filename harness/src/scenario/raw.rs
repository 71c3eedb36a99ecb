//! First stage: the scenario file as written. Unknown fields are rejected; values that need
//! checking keep their location ([`Spanned`]) so the second stage can point at them.
//!
//! Field documentation here is the documentation of the file format: `harness schema` turns
//! it into the JSON Schema's descriptions.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

pub use super::words::{DurationText, GO_DURATION_PATTERN, JitterSizingName, ModelName};

/// A scenario file.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "harness scenario")]
pub struct RawScenario {
    /// Format version; must be `harness/v1`.
    #[schemars(with = "String")]
    pub api_version: Spanned<String>,
    /// Short name, used in reports and output file names: 1-63 of a-z, 0-9 and `-`.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// One or two sentences: what the scenario shows.
    #[serde(default)]
    pub description: Option<String>,
    /// Seed of every random draw (mock-cloud latency and errors, jitter in predictions).
    /// Default 1.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Where it runs: `embedded` (default: the in-process stack, no cluster), `cluster`
    /// (a kubeconfig and a reachable mock cloud, given on the command line) or `process`
    /// (the profile's provider command against mock-apiserver and mock-cloud on loopback).
    #[serde(default)]
    #[schemars(with = "Option<Target>")]
    pub target: Option<Spanned<Target>>,
    /// How time passes: `real` (default) or `virtual`, the embedded stack on a paused clock
    /// that jumps to the next timer whenever every task waits (hours in seconds, the same
    /// result for a seed). `harness run --virtual-time` sets it for one run. A cluster keeps
    /// real time.
    #[serde(default)]
    #[schemars(with = "Option<TimeMode>")]
    pub time: Option<Spanned<TimeMode>>,
    /// The provider's rate-limit settings (`limiter::crossplane::Settings`).
    #[serde(default)]
    pub provider: RawProvider,
    /// A provider the harness does not control: its settings (written out or read from its
    /// command line), its kinds, and how the `process` target starts it. With a profile,
    /// the `provider` section stays empty.
    #[serde(default)]
    #[schemars(with = "Option<crate::scenario::profile::raw::RawProfile>")]
    pub profile: Option<Spanned<crate::scenario::profile::raw::RawProfile>>,
    /// Inputs of the budget prediction that the settings do not give.
    #[serde(default)]
    pub prediction: RawPrediction,
    /// The mock cloud: accounts, quotas, latency, errors, provisioning times.
    #[serde(default)]
    pub cloud: RawCloud,
    /// Objects the harness creates before the resources and deletes after them, in this
    /// order (ProviderConfigs, ClusterProviderConfigs, Secrets): whole objects with
    /// `apiVersion`, `kind` and `metadata.name`, the placeholders `{{scenario}}` in any
    /// string. Namespaced ones default to the run's namespace, `harness-<scenario>`.
    #[serde(default)]
    #[schemars(with = "Vec<serde_json::Value>")]
    pub objects: Vec<Spanned<serde_json::Value>>,
    /// Cloud calls per reconcile, per kind and path (the budget's c, docs/budget.md §10).
    /// Required for every kind with `apiVersion`; the short kinds default to observe 1,
    /// create, update and delete 1 each (c_max = 2).
    #[serde(default)]
    pub calls: Vec<RawCalls>,
    /// Named groups of resources to create (at least one, or one XR group in
    /// `composites`).
    #[serde(default)]
    pub resources: Vec<RawGroup>,
    /// Crossplane core's settings, for scenarios with `composites`: its flags, as the
    /// composer takes them (core's names).
    #[serde(default)]
    #[schemars(with = "Option<super::raw_composite::RawCore>")]
    pub core: Option<Spanned<super::raw_composite::RawCore>>,
    /// Groups of composite resources (XRs): each XR is composed by its Composition's
    /// pipeline (XRDs, Compositions and Functions are in `objects`) into managed resources
    /// the provider reconciles.
    #[serde(default)]
    pub composites: Vec<super::raw_composite::RawXrGroup>,
    /// What happens, in order (at least one).
    pub phases: Vec<RawPhase>,
    /// What must hold at the end.
    #[serde(default)]
    pub assertions: Vec<RawAssertion>,
}

/// Where a scenario runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Target {
    /// mock-apiserver, mock-cloud and the provider in the harness's process, on loopback.
    Embedded,
    /// A cluster from a kubeconfig, the provider deployed there, mock-cloud at a URL.
    Cluster,
    /// mock-apiserver and mock-cloud in the harness's process on loopback, and the
    /// profile's provider command run as a child process.
    Process,
}

/// How time passes in a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum TimeMode {
    /// The wall clock: a 1-hour hold takes an hour.
    #[default]
    Real,
    /// tokio's paused clock: the embedded stack only, no sockets, deterministic for a seed.
    Virtual,
}

/// Provider flags, as the provider's command line names them.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawProvider {
    /// `--max-reconcile-rate`, R (≥ 1). Default 10.
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(min = 1))]
    pub max_reconcile_rate: Option<Spanned<u32>>,
    /// `--rate-limit-model`. Default `crossplane`.
    #[serde(default)]
    #[schemars(with = "Option<ModelName>")]
    pub rate_limit_model: Option<Spanned<ModelName>>,
    /// `--poll-interval`, a Go duration (`1m`, `30s`). Default `1m`.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub poll_interval: Option<Spanned<String>>,
    /// `--poll-jitter-percent`: jitter as a share (below 100) of what `pollJitterSizing`
    /// names. Default 10; upjet's providers use 5.
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(max = 99))]
    pub poll_jitter_percent: Option<Spanned<u32>>,
    /// `--poll-jitter-sizing`: `per-resource` (a share of each resource's own interval, the
    /// default) or `poll-interval` (a share of `pollInterval`, the same absolute jitter for
    /// every resource, as upjet's providers compute it).
    #[serde(default)]
    #[schemars(with = "Option<JitterSizingName>")]
    pub poll_jitter_sizing: Option<Spanned<JitterSizingName>>,
    /// `--min-poll-interval`: floor of the `crossplane.io/poll-interval` annotation; `0s` means
    /// none, as in upjet's providers. Default `1s`.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub min_poll_interval: Option<Spanned<String>>,
    /// `--scoped-buckets`: one global bucket per scope (cluster-scoped, namespaced `*.m.*`), as
    /// crossplane-runtime v2 providers run, instead of one shared bucket. Default false.
    #[serde(default)]
    #[schemars(with = "Option<bool>")]
    pub scoped_buckets: Option<Spanned<bool>>,
    /// `--backoff-base`: first delay of the per-item failure backoff, a Go duration > 0.
    /// Default: the model's (`1s`; `5ms` for controller-runtime).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub backoff_base: Option<Spanned<String>>,
    /// `--backoff-max`: cap of the per-item failure backoff, ≥ `backoffBase`. Default: the
    /// model's (`60s`; `1000s` for controller-runtime).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub backoff_max: Option<Spanned<String>>,
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

/// The mock cloud.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawCloud {
    /// Accounts; resources name theirs. Default: one account `default`.
    #[serde(default)]
    pub accounts: Vec<RawAccount>,
    /// Quotas of every account (an account can override them class by class). Classes left
    /// out have no quota.
    #[serde(default)]
    pub quotas: RawQuotas,
    /// Latency of one call, per action class. Default: none.
    #[serde(default)]
    pub latency: RawClasses<RawLatency>,
    /// Share of calls failed with an error status, per action class. Default: none.
    #[serde(default)]
    pub errors: RawClasses<RawErrors>,
    /// Asynchronous provisioning times.
    #[serde(default)]
    pub provisioning: RawProvisioning,
}

/// A cloud account.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawAccount {
    /// The account's name: 1-64 of a-z A-Z 0-9 - _ .
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// Overrides of the cloud-wide quotas, class by class.
    #[serde(default)]
    pub quotas: RawQuotas,
}

/// Token-bucket quotas per action class (read = get, list = list, mutate = create and
/// update, delete = delete).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawQuotas {
    /// Gets.
    #[serde(default)]
    pub read: Option<RawBucket>,
    /// Lists.
    #[serde(default)]
    pub list: Option<RawBucket>,
    /// Creates and updates.
    #[serde(default)]
    pub mutate: Option<RawBucket>,
    /// Deletes.
    #[serde(default)]
    pub delete: Option<RawBucket>,
}

/// A token bucket: `burst` tokens, refilled at `perSecond`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawBucket {
    /// Bucket size b (≥ 1).
    #[schemars(with = "f64")]
    pub burst: Spanned<f64>,
    /// Refill r per second (> 0; may be fractional).
    #[schemars(with = "f64")]
    pub per_second: Spanned<f64>,
}

/// A value per action class.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    rename_all = "camelCase",
    bound(deserialize = "T: Deserialize<'de>")
)]
pub struct RawClasses<T> {
    /// Gets.
    #[serde(default)]
    pub read: Option<T>,
    /// Lists.
    #[serde(default)]
    pub list: Option<T>,
    /// Creates and updates.
    #[serde(default)]
    pub mutate: Option<T>,
    /// Deletes.
    #[serde(default)]
    pub delete: Option<T>,
}

impl<T> Default for RawClasses<T> {
    fn default() -> Self {
        RawClasses {
            read: None,
            list: None,
            mutate: None,
            delete: None,
        }
    }
}

/// A latency distribution: exactly one of `fixed`, `uniform`, `lognormal`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawLatency {
    /// Always this long (a Go duration).
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub fixed: Option<Spanned<String>>,
    /// Uniform between two durations.
    #[serde(default)]
    pub uniform: Option<RawUniform>,
    /// Log-normal with a median and a shape σ.
    #[serde(default)]
    pub lognormal: Option<RawLognormal>,
}

/// Uniform latency.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawUniform {
    /// Shortest.
    #[schemars(with = "DurationText")]
    pub min: Spanned<String>,
    /// Longest (≥ min).
    #[schemars(with = "DurationText")]
    pub max: Spanned<String>,
}

/// Log-normal latency.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawLognormal {
    /// Median.
    #[schemars(with = "DurationText")]
    pub median: Spanned<String>,
    /// Shape σ (≥ 0).
    #[schemars(with = "f64")]
    pub sigma: Spanned<f64>,
}

/// Injected errors for one action class.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawErrors {
    /// Share of calls failed, in [0, 1].
    #[schemars(with = "f64")]
    pub rate: Spanned<f64>,
    /// 500 or 503 (default 503).
    #[serde(default)]
    #[schemars(with = "Option<u16>")]
    pub status: Option<Spanned<u16>>,
}

/// Asynchronous provisioning in the mock cloud.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawProvisioning {
    /// How long a new Database stays `creating` (T_p). Default `5s`.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub database_create: Option<Spanned<String>>,
    /// How long a deleted Database stays `deleting`. Default `3s`.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub database_delete: Option<Spanned<String>>,
}

/// A named group of resources of one kind.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawGroup {
    /// Group name, unique: 1-63 of a-z, 0-9 and `-`.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// The kind: one of the sample provider's short kinds (`Bucket`, `Database`, `Record`)
    /// without `apiVersion`, or with `apiVersion` any kind the API server serves (the
    /// embedded target serves the provider's CRDs: the AWS flavour's
    /// `s3.aws.m.loadtest.dev/v1beta1` `Bucket` and the like).
    #[schemars(with = "String")]
    pub kind: Spanned<String>,
    /// `group/version` of `kind` (`s3.aws.m.loadtest.dev/v1beta1`). Plural and scope come
    /// from the CRDs the target serves.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub api_version: Option<Spanned<String>>,
    /// Namespace of the group's objects, for namespaced kinds with `apiVersion` (default:
    /// the run's, `harness-<scenario>`). Cluster-scoped kinds take none.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub namespace: Option<Spanned<String>>,
    /// The whole object beyond `spec.forProvider` (which `spec` gives), with the
    /// placeholders in any string: `metadata.labels`, `metadata.annotations`, and `spec`
    /// fields such as `providerConfigRef`, `managementPolicies`, `writeConnectionSecretToRef`.
    /// The rendered object must pass the kind's schema.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Value>")]
    pub template: Option<Spanned<serde_json::Value>>,
    /// The conditions that make a resource Ready for the harness. Default: `Ready` and
    /// `Synced` both `True` for kinds with `apiVersion`; `Ready` `True` for the short kinds.
    #[serde(default)]
    #[schemars(with = "Option<Vec<RawCondition>>")]
    pub ready: Option<Spanned<Vec<RawCondition>>>,
    /// How many (≥ 1).
    #[schemars(with = "u32", range(min = 1))]
    pub count: Spanned<u32>,
    /// Cloud account of the group. Default: the first account.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub account: Option<Spanned<String>>,
    /// Name of resource `index` (0-based). Placeholders: `{{index}}`, `{{group}}`,
    /// `{{scenario}}`. Default `{{group}}-{{index}}`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub name_pattern: Option<Spanned<String>>,
    /// The custom resource's `spec.forProvider`, with the same placeholders in any string.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Value>")]
    pub spec: Option<Spanned<serde_json::Value>>,
    /// Annotations for shares of the group. Shares are consecutive index ranges in list
    /// order (the first share gets the lowest indexes) and may not add up past 100 %.
    #[serde(default)]
    pub annotations: Vec<RawAnnotationShare>,
    /// Per-resource cloud faults for shares of the group: each share is a consecutive
    /// index range counted down from the group's highest index, in list order (then
    /// `drift`'s share below them); together they may not pass 100 %.
    #[serde(default)]
    pub faults: Vec<RawFaultShare>,
    /// A share of the group whose cloud resource drifts on every read (one field differs
    /// from the desired value), so every reconcile updates it.
    #[serde(default)]
    pub drift: Option<RawDriftShare>,
    /// `spec.managementPolicies` of every resource of the group (crossplane's; `[Observe]`
    /// observes only: the harness then creates nothing in the cloud for them).
    #[serde(default)]
    #[schemars(with = "Option<Vec<PolicyName>>")]
    pub management_policies: Option<Spanned<Vec<PolicyName>>>,
}

/// A status condition a Ready resource has.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawCondition {
    /// Condition type (`Ready`, `Synced`).
    #[serde(rename = "type")]
    pub type_: String,
    /// Its status (default `True`).
    #[serde(default)]
    pub status: Option<String>,
}

/// Cloud calls per reconcile of one kind, by path (docs/budget.md §10), as the provider
/// documents them (the AWS flavour's table is in `provider/README.md`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawCalls {
    /// The kind, as a resource group names it.
    #[schemars(with = "String")]
    pub kind: Spanned<String>,
    /// Its `apiVersion` (none for the short kinds).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub api_version: Option<Spanned<String>>,
    /// Calls of an Observe of an existing resource (a poll).
    #[schemars(with = "u32")]
    pub observe: Spanned<u32>,
    /// Calls of a Create.
    #[schemars(with = "u32")]
    pub create: Spanned<u32>,
    /// Calls of an Update.
    #[schemars(with = "u32")]
    pub update: Spanned<u32>,
    /// Calls of a Delete.
    #[schemars(with = "u32")]
    pub delete: Spanned<u32>,
    /// Calls of a Connect (STS), made by every reconcile before its Observe. Default 0.
    #[serde(default)]
    #[schemars(with = "Option<u32>")]
    pub connect: Option<Spanned<u32>>,
    /// The most calls of each operation (`service:Operation`, such as
    /// `s3:GetBucketTagging`) one reconcile makes, per path (`connect`, `create`,
    /// `firstObserve`, `observe`, `update`, `delete`, `deleting`), as `harness calibrate`
    /// writes them: they give the budget per operation and per service.
    #[serde(default)]
    #[schemars(with = "Option<BTreeMap<String, BTreeMap<String, f64>>>")]
    pub operations: Option<Spanned<BTreeMap<String, BTreeMap<String, f64>>>>,
    /// What a calibration measured per path (the same path names), the sample behind each
    /// figure: `callsPerReconcile` checks a run against it.
    #[serde(default)]
    #[schemars(with = "Option<BTreeMap<String, RawMeasured>>")]
    pub measured: Option<Spanned<BTreeMap<String, RawMeasured>>>,
}

/// Calls per reconcile of one path as a calibration measured them (connect's calls apart).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawMeasured {
    /// Reconciles in the sample.
    pub reconciles: u64,
    /// Mean calls per reconcile.
    pub mean: f64,
    /// Fewest.
    pub min: u64,
    /// Most.
    pub max: u64,
    /// Standard deviation.
    pub sd: f64,
}

/// A share of a group with a per-resource cloud fault: exactly one of `error`,
/// `notFoundAfterCreate`, `slowCreate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawFaultShare {
    /// Share of the group, in percent (0 < percent ≤ 100); rounded to whole resources.
    #[schemars(with = "f64")]
    pub percent: Spanned<f64>,
    /// A lasting error: every Observe (and Create, Update, Delete) of AccessDenied fails
    /// with 403; Conflict fails creates with 409; Validation fails creates and updates
    /// with 400.
    #[serde(default)]
    #[schemars(with = "Option<ErrorName>")]
    pub error: Option<Spanned<ErrorName>>,
    /// The error code the cloud answers (default: the error's own, such as
    /// `AccessDenied`); for example `BucketAlreadyExists`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub code: Option<Spanned<String>>,
    /// With `error`: the error's answers carry this retry hint (`Retry-After`, whole
    /// seconds rounded up), which a provider that honours hints waits out
    /// (`retryAfterHonoured`).
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub retry_after: Option<Spanned<String>>,
    /// Reads answer 404 for this long after the create (eventual consistency).
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub not_found_after_create: Option<Spanned<String>>,
    /// The create leaves the resource `creating` for this long.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub slow_create: Option<Spanned<String>>,
}

/// A share of a group whose cloud resource never converges.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawDriftShare {
    /// Share of the group, in percent (0 < percent ≤ 100); rounded to whole resources.
    #[schemars(with = "f64")]
    pub percent: Spanned<f64>,
    /// The top-level `spec.forProvider` field the cloud reports differently (default: an
    /// extra field `drift`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub field: Option<Spanned<String>>,
}

/// A lasting cloud error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema, serde::Serialize)]
pub enum ErrorName {
    /// 403: a missing permission; every action fails.
    AccessDenied,
    /// 409: the name is taken elsewhere; creates fail.
    Conflict,
    /// 400: the cloud refuses the spec; creates and updates fail.
    Validation,
}

/// A crossplane management policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema, serde::Serialize)]
pub enum PolicyName {
    /// Every action.
    #[serde(rename = "*")]
    All,
    /// Observe the cloud resource.
    Observe,
    /// Create it.
    Create,
    /// Update it.
    Update,
    /// Delete it.
    Delete,
    /// Late-initialize the spec from it.
    LateInitialize,
}

/// Resource kinds the provider manages.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Deserialize,
    JsonSchema,
    serde::Serialize,
)]
pub enum Kind {
    /// An object-storage bucket (synchronous).
    Bucket,
    /// A database (asynchronous: provisioning takes `cloud.provisioning.databaseCreate`).
    Database,
    /// A DNS record (synchronous).
    Record,
}

impl Kind {
    /// The mock-cloud collection the provider's controller of this kind calls.
    #[must_use]
    pub fn collection(self) -> &'static str {
        use provider::crd::CloudKind;
        match self {
            Kind::Bucket => provider::crd::Bucket::COLLECTION,
            Kind::Database => provider::crd::Database::COLLECTION,
            Kind::Record => provider::crd::Record::COLLECTION,
        }
    }

    /// The kind's scope, which picks its global bucket when the provider runs one per scope
    /// (`scopedBuckets`). The sample provider's kinds are all namespaced.
    #[must_use]
    pub fn scope(self) -> limiter::crossplane::Scope {
        match self {
            Kind::Bucket | Kind::Database | Kind::Record => limiter::crossplane::Scope::Namespaced,
        }
    }
}

/// Annotations for a share of a group.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawAnnotationShare {
    /// Share of the group, in percent (0 < percent ≤ 100); rounded to whole resources.
    #[schemars(with = "f64")]
    pub percent: Spanned<f64>,
    /// Annotations to set; values may use the placeholders.
    #[schemars(with = "BTreeMap<String, String>")]
    pub values: Spanned<BTreeMap<String, String>>,
}

/// A phase.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawPhase {
    /// Phase name, unique.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// What the phase does.
    #[schemars(with = "ActionName")]
    pub action: Spanned<ActionName>,
    /// create, resync, update, delete: resources per second the harness writes (default:
    /// all at once).
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub rate: Option<Spanned<f64>>,
    /// create, resync, update, delete, cloudFault: the groups acted on (default: all).
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub groups: Option<Vec<Spanned<String>>>,
    /// hold: how long; cloudOutage, cloudLatency, cloudFault: how long the fault lasts (the
    /// phase then waits for its `until`; a cloudFault's earlier faults come back after it);
    /// kill: the window, from the start of `during`, in which the
    /// kills fall (default `1m`).
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub duration: Option<Spanned<String>>,
    /// update: fields merged into each resource's spec (placeholders allowed).
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Value>")]
    pub spec: Option<Spanned<serde_json::Value>>,
    /// cloudLatency: the new latency per class.
    #[serde(default)]
    pub latency: Option<RawClasses<RawLatency>>,
    /// cloudOutage: the status every call gets (500 or 503, default 503).
    #[serde(default)]
    #[schemars(with = "Option<u16>")]
    pub status: Option<Spanned<u16>>,
    /// kill: the phase whose work the kills interrupt (listed before the kill phase).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub during: Option<Spanned<String>>,
    /// kill: how many times the provider is killed (≥ 1, default 1).
    #[serde(default)]
    #[schemars(with = "Option<u32>")]
    pub count: Option<Spanned<u32>>,
    /// cloudFault: the per-resource fault shares each of the phase's groups gets instead of
    /// the ones in force (the same shares as a group's `faults`; none clears them).
    #[serde(default)]
    #[schemars(with = "Option<Vec<RawFaultShare>>")]
    pub faults: Option<Spanned<Vec<RawFaultShare>>>,
    /// cloudFault: the drifting share each of the phase's groups gets instead of the one in
    /// force (as a group's `drift`).
    #[serde(default)]
    pub drift: Option<RawDriftShare>,
    /// When the phase is over: `allReady`, `allHandled` (every forced re-sync seen in
    /// status), `allGone`, or `elapsed` (its duration passed). Default per action: create,
    /// update, restart, cloudOutage, cloudLatency → allReady; resync → allHandled; delete →
    /// allGone; hold, cloudFault, functionFault → elapsed (without a duration it then ends
    /// at once); compositionUpdate → allReady (every XR of the Composition on the new
    /// revision and Ready, its composed resources Ready and synced at their generation).
    #[serde(default)]
    #[schemars(with = "Option<Until>")]
    pub until: Option<Spanned<Until>>,
    /// The longest the phase may take; past it the run fails (exit 2). Default `10m`.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub timeout: Option<Spanned<String>>,
    /// resync: how long after the provider has reconciled a resource it was asked to the
    /// phase waits for the first token in `status.lastHandledReconcileAt` before it stops
    /// with "this provider does not implement reconcile requests". Default `10s`; `0s`
    /// waits for the timeout instead.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub handled_grace: Option<Spanned<String>>,
    /// compositionUpdate: the Composition edited (one in `objects`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub composition: Option<Spanned<String>>,
    /// compositionUpdate: the edit, a JSON Patch (RFC 6902) applied to the Composition as
    /// `kubectl patch --type json` applies it, e.g. `[{op: replace, path:
    /// /spec/pipeline/0/input/resources/0/count, value: 4}]`.
    #[serde(default)]
    #[schemars(with = "Option<Vec<serde_json::Value>>")]
    pub patch: Option<Spanned<serde_json::Value>>,
    /// functionFault: the Function faulted (a built-in one in `objects`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub function: Option<Spanned<String>>,
    /// functionFault: latency added to every call of the function.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub delay: Option<Spanned<String>>,
    /// functionFault: the percent of calls answered with a FATAL result (0 < p ≤ 100),
    /// spread evenly over the calls.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub error_percent: Option<Spanned<f64>>,
    /// functionFault: the function is unreachable: no call reaches it, each waits for
    /// core's deadline.
    #[serde(default)]
    #[schemars(with = "Option<bool>")]
    pub down: Option<Spanned<bool>>,
    /// functionFault: the TTL (`meta.ttl`) every answer of the function carries instead
    /// of its own (`0s`: none).
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub ttl: Option<Spanned<String>>,
}

/// Phase actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ActionName {
    /// Create the groups' resources.
    Create,
    /// Change nothing for `duration`: the steady state.
    Hold,
    /// Stamp `crossplane.io/reconcile-requested-at` on every resource (forced re-sync).
    Resync,
    /// Merge `spec` into every resource's spec.
    Update,
    /// Every cloud call fails with `status` for `duration`.
    CloudOutage,
    /// Cloud latency becomes `latency` for `duration` (or for the rest of the run).
    CloudLatency,
    /// The per-resource faults of `groups` become `faults` and `drift` for `duration` (or
    /// for the rest of the run).
    CloudFault,
    /// Stop the provider and start it again (empty queues, full bucket).
    Restart,
    /// Kill the provider (no graceful shutdown) `count` times during another phase's work,
    /// at moments drawn from the seed, and start a new one each time.
    Kill,
    /// Delete the groups' resources.
    Delete,
    /// Edit a Composition (`composition`, by the JSON Patch `patch`): a new
    /// CompositionRevision, which every XR on the Automatic update policy moves to.
    CompositionUpdate,
    /// For `duration` (or the rest of the run), a built-in `function` answers `delay` later,
    /// with a FATAL result for `errorPercent` of its calls, not at all (`down`), or with
    /// another `ttl`.
    FunctionFault,
}

/// Phase completion conditions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Until {
    /// Every existing resource is Ready.
    AllReady,
    /// Every resource's `status.lastHandledReconcileAt` equals its request.
    AllHandled,
    /// Every deleted resource is gone.
    AllGone,
    /// The phase's duration passed.
    Elapsed,
    /// Every XR's composed resources are Ready, whether or not the XR reads Ready (the
    /// state crossplane/crossplane#7703 leaves XRs in when the breaker drops their last
    /// event); the phase's resources (not XRs) are Ready.
    ComposedReady,
}

/// An assertion.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawAssertion {
    /// Name in reports (default: derived from the check, window and phase).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub name: Option<Spanned<String>>,
    /// What is checked.
    #[schemars(with = "CheckName")]
    pub check: Spanned<CheckName>,
    /// Restrict to one phase (default: the whole run).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub phase: Option<Spanned<String>>,
    /// Restrict to one cloud account (cloudCalls, throttles).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub account: Option<Spanned<String>>,
    /// cloudCalls, apiRequests, steadyRate: window length W (closed windows, every start).
    /// Default `10s`.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub window: Option<Spanned<String>>,
    /// An explicit upper limit instead of the predicted one: calls or requests per window
    /// (cloudCalls, apiRequests, steadyRate), a count (throttles, orphans, duplicates; default
    /// 0 for those).
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub max: Option<Spanned<f64>>,
    /// staleXRs: how long an XR must have been stale (every composed resource Ready, the XR
    /// not) at the end to count (a Go duration; default `1m`).
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub grace: Option<Spanned<String>>,
    /// timeToReady: the limit as a duration instead of the prediction plus tolerance.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub max_duration: Option<Spanned<String>>,
    /// drainEfficiency: lowest acceptable physical-limit / observed drain, in (0, 1].
    /// Default 0.8.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub min: Option<Spanned<f64>>,
    /// timeToReady: the quantile, in (0, 1] (default 0.99).
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub quantile: Option<Spanned<f64>>,
    /// stuck: resources whose create a kill interrupted (the report names them) do not
    /// count; crossplane-runtime leaves each of them stuck by design (default false).
    #[serde(default)]
    #[schemars(with = "Option<bool>")]
    pub allow_interrupted: Option<Spanned<bool>>,
    /// timeToReady: allowed excess over the prediction, in percent (default 25);
    /// pollPeriod: allowed deviation, in percent (default 20).
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub tolerance_percent: Option<Spanned<f64>>,
    /// hotLoops: how many times what a resource's interval allows counts as a hot loop
    /// (default 3).
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub factor: Option<Spanned<f64>>,
    /// operationCalls: the operation (`s3:GetBucketTagging`) or service (`s3`) counted.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub operation: Option<Spanned<String>>,
    /// callsPerReconcile: only this kind (as reports name it, `Bucket.s3.aws.m.loadtest.dev`;
    /// default every kind with a calibration).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub kind: Option<Spanned<String>>,
    /// callsPerReconcile: only this path (`connect`, `create`, `firstObserve`, `observe`,
    /// `update`, `delete`, `deleting`; default every path the calibration measured but
    /// `deleting`, whose reconciles end without a status write, so a span holds as many as
    /// timing makes).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub path: Option<Spanned<String>>,
}

/// Assertion checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum CheckName {
    /// Exact windowed maximum of cloud calls ≤ the model's hard bound (plus the predicted
    /// excess for `crossplane`).
    CloudCalls,
    /// Exact windowed maximum of API-server requests ≤ ⌊10R + 5R(W + Δ)⌋ + watch starts.
    ApiRequests,
    /// Windowed maximum of cloud calls in a hold ≤ the statistical tolerance (§3.5).
    SteadyRate,
    /// Throttled (429) cloud calls ≤ max (default 0).
    Throttles,
    /// A time-to-Ready quantile of a create phase ≤ prediction (+ tolerance) or maxDuration.
    TimeToReady,
    /// Cloud resources with no custom resource ≤ max (default 0).
    Orphans,
    /// Custom resources with more than one cloud resource ≤ max (default 0).
    Duplicates,
    /// Physical drain limit / observed drain ≥ min.
    DrainEfficiency,
    /// Resources left with an incomplete create (`external-create-pending` newer than
    /// both outcomes) at the end of a phase ≤ max (default 0).
    Stuck,
    /// Ready resources whose cloud object is gone at the end of a phase ≤ max (default 0).
    Lost,
    /// Memory growth of every sampled component, from the end of the warm-up to the end,
    /// ≤ max percent (default 5).
    MemoryGrowth,
    /// The most calls any one resource makes in a window ≤ the error-path prediction
    /// (docs/budget.md §9.4) or `max`.
    PerResourceCalls,
    /// Resources whose calls in some window pass `factor` × what their interval allows
    /// (§9.4) ≤ max (default 0); the verdict names them.
    HotLoops,
    /// The healthy resources' realised poll period within `tolerancePercent` (default 20)
    /// of the predicted one (P, stretched by failing resources, §9.2).
    PollPeriod,
    /// Calls for a resource made before the retry hint (`Retry-After`) an earlier error
    /// answer for it gave had passed ≤ max (default 0); the verdict names the resources.
    RetryAfterHonoured,
    /// Exact windowed maximum of the calls of one `operation` (or service) ≤ its bound per
    /// operation (docs/budget.md §10.2; needs calls by operation: a calibration) or `max`.
    OperationCalls,
    /// Each kind's mean calls per reconcile, per path, in this run ≤ the most one reconcile
    /// made in the calibration, plus `max` calls (default 0): a provider that makes more
    /// calls per reconcile than it was calibrated with fails.
    CallsPerReconcile,
    /// Exact windowed maximum of Crossplane core's API requests (by its `User-Agent`) ≤
    /// `max`.
    CoreApiRequests,
    /// Core's composition-function calls over the run (every function) ≤ `max`.
    FunctionCalls,
    /// A quantile (`quantile`, default 0.99) of the XRs' times to Ready ≤ `maxDuration`.
    #[serde(rename = "xrTimeToReady")]
    XrTimeToReady,
    /// Circuit-breaker opens over every XR controller ≤ max (default 0).
    BreakerOpens,
    /// XRs left with every composed resource Ready but not Ready themselves, at the end of
    /// the run, ≤ max (default 0).
    #[serde(rename = "staleXRs")]
    StaleXrs,
}

/// A calibration file, as `harness calibrate` writes it (the profile's `calibration`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawCalibration {
    /// The scenario it was calibrated with.
    #[serde(default)]
    pub scenario: Option<String>,
    /// Where the provider ran (`embedded`, `process`, `cluster`).
    #[serde(default)]
    pub target: Option<String>,
    /// Resources per group in the sample.
    #[serde(default)]
    pub sample: Option<u32>,
    /// Polls each resource was held for.
    #[serde(default)]
    pub polls: Option<u32>,
    /// When it was taken (RFC 3339).
    #[serde(default)]
    pub taken_at: Option<String>,
    /// Each kind's calls per reconcile, as a scenario's `calls` entries.
    pub calls: Vec<RawCalls>,
}
