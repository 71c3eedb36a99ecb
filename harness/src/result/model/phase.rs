//! Per-phase measurements and the run's per-second series.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::measure::LatencySummary;

/// A peak windowed count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    /// W (s).
    pub window_s: f64,
    /// Most calls in any closed window of W.
    pub count: u64,
    /// Where that window starts (s).
    pub start_s: f64,
}

/// One phase's measurements.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    /// Name.
    pub name: String,
    /// Action.
    pub action: String,
    /// Start (s).
    pub start_s: f64,
    /// End (s).
    pub end_s: f64,
    /// `until` met in time.
    pub completed: bool,
    /// Cloud calls by action (create, get, update, delete, list).
    pub calls: BTreeMap<String, u64>,
    /// Cloud calls by the journal's operation (`s3:HeadBucket`, `generic:get`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub operations: BTreeMap<String, u64>,
    /// Throttled calls.
    pub throttles: u64,
    /// Provider API requests.
    pub api_requests: u64,
    /// Peak windowed cloud calls.
    pub peaks: Vec<Peak>,
    /// Time to Ready of resources created in the phase.
    pub ttr: Option<LatencySummary>,
    /// Expected cloud calls per second (the band's low edge).
    #[serde(with = "crate::float")]
    pub expected_per_s: f64,
    /// Hard bound on cloud calls in any 1 s (the band's high edge).
    #[serde(with = "crate::float")]
    pub bound_per_s: f64,
    /// Expected cloud calls per second over the phase: the steady polls plus the backlog's
    /// calls spread over the phase's expected length (NaN when unknown).
    #[serde(default = "crate::float::nan", with = "crate::float")]
    pub expected_calls_per_s: f64,
    /// Hard bound on the provider's API requests in any 1 s (NaN when unknown).
    #[serde(default = "crate::float::nan", with = "crate::float")]
    pub api_bound_per_s: f64,
    /// The formula of that bound, as the plan computed it (the HTML chart's caption names
    /// the formula that drew its line).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_bound_formula: String,
    /// Why it ended early without its `until` (the phase failed; the run went on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<crate::result::PhaseFailure>,
}

/// Per-second series over the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// Bin width (s).
    pub bin_s: f64,
    /// Cloud calls per bin.
    pub cloud_calls: Vec<u32>,
    /// Throttled calls per bin.
    pub throttles: Vec<u32>,
    /// Provider API requests per bin.
    pub api_requests: Vec<u32>,
}
