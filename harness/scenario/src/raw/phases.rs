//! The `phases` section: what happens, in order.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::{DurationText, RawClasses, RawDriftShare, RawFaultShare, RawLatency};

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
