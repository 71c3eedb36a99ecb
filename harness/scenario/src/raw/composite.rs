//! First stage of the composite layer: Crossplane core's settings (`core`) and XR groups
//! (`composites`), as written. The XRDs, Compositions and Functions themselves are whole
//! objects in the scenario's `objects`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::words::DurationText;

/// Crossplane core's flags (the composer's, which takes core's names), camel-cased.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawCore {
    /// `--max-reconcile-rate` (alias `--max-concurrent-reconciles`): workers per XR
    /// controller (≥ 1). Default 100.
    #[serde(default, alias = "maxConcurrentReconciles")]
    #[schemars(with = "Option<u32>", range(min = 1))]
    pub max_reconcile_rate: Option<Spanned<u32>>,
    /// `--poll-interval`: how often an XR is reconciled when realtime compositions are off.
    /// Default `1m`.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub poll_interval: Option<Spanned<String>>,
    /// `--min-poll-interval`: the floor of an XR's `crossplane.io/poll-interval`. Default
    /// `1s`.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub min_poll_interval: Option<Spanned<String>>,
    /// `--sync-interval`: how often every informer re-delivers every object. Default `1h`.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub sync_interval: Option<Spanned<String>>,
    /// `--enable-realtime-compositions`: reconcile XRs on watch events through the circuit
    /// breaker (false: XRs are polled). Default true.
    #[serde(default)]
    #[schemars(with = "Option<bool>")]
    pub enable_realtime_compositions: Option<Spanned<bool>>,
    /// `--circuit-breaker-burst`: events an XR may receive at once (> 0). Default 100.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub circuit_breaker_burst: Option<Spanned<f64>>,
    /// `--circuit-breaker-refill-rate`: tokens per second the bucket refills (> 0).
    /// Default 1.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub circuit_breaker_refill_rate: Option<Spanned<f64>>,
    /// `--circuit-breaker-cooldown`: how long an open circuit stays open. Default `5m`.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub circuit_breaker_cooldown: Option<Spanned<String>>,
    /// `--circuit-breaker-mode`: `released` (Crossplane's: closed on the first event after
    /// the cooldown, the default) or `eager` (crossplane/crossplane PR #7725: closed as soon
    /// as the cooldown has passed).
    #[serde(default)]
    #[schemars(with = "Option<BreakerModeName>")]
    pub circuit_breaker_mode: Option<Spanned<BreakerModeName>>,
    /// Not a flag of core's: how long each of core's API requests takes (its network and
    /// the API server's work), waited on the run's clock before each request. Default `0s`
    /// (the embedded API server answers at once). With it a reconcile's N + 2 applies take
    /// (N + 2)·requestLatency of core's 2-minute deadline.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub request_latency: Option<Spanned<String>>,
}

/// When an open circuit closes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum BreakerModeName {
    /// On the first event after the cooldown, as Crossplane does.
    #[default]
    Released,
    /// As soon as the cooldown has passed (PR #7725).
    Eager,
}

/// A group of composite resources (XRs) of one kind, composed by one Composition.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawXrGroup {
    /// Group name, unique among resource and XR groups; phases name it in `groups`.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// The XR's `apiVersion` (`group/version`): a version an XRD in `objects` serves.
    #[schemars(with = "String")]
    pub api_version: Spanned<String>,
    /// The XR's kind, as an XRD in `objects` names it.
    #[schemars(with = "String")]
    pub kind: Spanned<String>,
    /// How many XRs.
    #[schemars(with = "u32")]
    pub count: Spanned<u32>,
    /// The Composition (in `objects`) that composes them, set as
    /// `spec.crossplane.compositionRef` (default: the only Composition of the kind).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub composition: Option<Spanned<String>>,
    /// The XR's `spec` (the placeholders `{{index}}`, `{{group}}`, `{{scenario}}` allowed).
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Value>")]
    pub spec: Option<Spanned<serde_json::Value>>,
    /// Each XR's name (placeholders allowed). Default `{{group}}-{{index}}`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub name_pattern: Option<Spanned<String>>,
    /// The conditions a Ready XR has. Default `[{type: Ready}]`.
    #[serde(default)]
    #[schemars(with = "Option<Vec<RawXrCondition>>")]
    pub ready: Option<Spanned<Vec<RawXrCondition>>>,
}

/// A status condition a Ready XR has.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawXrCondition {
    /// Condition type (`Ready`, `Responsive`).
    #[serde(rename = "type")]
    pub type_: String,
    /// Its status (default `True`).
    #[serde(default)]
    pub status: Option<String>,
}
