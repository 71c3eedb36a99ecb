//! First stage: the scenario file as written. Unknown fields are rejected; values that need
//! checking keep their location ([`Spanned`]) so the second stage can point at them.
//!
//! Field documentation here is the documentation of the file format: `harness schema` turns
//! it into the JSON Schema's descriptions. One file per section, as in `validate`; the
//! rate-limit settings a profile shares are declared in [`settings`](super::settings).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

pub use super::words::{DurationText, GO_DURATION_PATTERN, JitterSizingName, ModelName};

mod assertions;
mod calls;
mod cloud;
pub mod composite;
mod faults;
mod phases;
mod provider;
mod resources;
pub mod sweep;

pub use assertions::*;
pub use calls::*;
pub use cloud::*;
pub use faults::*;
pub use phases::*;
pub use provider::*;
pub use resources::*;

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
    #[schemars(with = "Option<crate::profile::raw::RawProfile>")]
    pub profile: Option<Spanned<crate::profile::raw::RawProfile>>,
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
    #[schemars(with = "Option<composite::RawCore>")]
    pub core: Option<Spanned<composite::RawCore>>,
    /// Groups of composite resources (XRs): each XR is composed by its Composition's
    /// pipeline (XRDs, Compositions and Functions are in `objects`) into managed resources
    /// the provider reconciles.
    #[serde(default)]
    pub composites: Vec<composite::RawXrGroup>,
    /// What happens, in order (at least one).
    pub phases: Vec<RawPhase>,
    /// What must hold at the end.
    #[serde(default)]
    pub assertions: Vec<RawAssertion>,
    /// The grid `harness sweep` runs the scenario over, and the SLOs and budgets that pick
    /// its cheapest point (docs/sweep.md). `harness run` runs the scenario as written.
    #[serde(default)]
    pub sweep: Option<sweep::RawSweep>,
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
