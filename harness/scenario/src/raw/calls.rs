//! The `calls` section (cloud calls per reconcile) and the calibration file that gives them.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

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
