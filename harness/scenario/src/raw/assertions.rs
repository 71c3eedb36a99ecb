//! The `assertions` section: what must hold at the end.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::DurationText;

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
