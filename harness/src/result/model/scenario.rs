//! The scenario and its provider settings, as run.

use serde::{Deserialize, Serialize};

/// The provider settings, as run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SettingsInfo {
    /// R.
    pub max_reconcile_rate: u32,
    /// Model.
    pub rate_limit_model: String,
    /// P (s).
    pub poll_interval_s: f64,
    /// Jitter percent.
    pub poll_jitter_percent: u32,
    /// P_min (s).
    pub min_poll_interval_s: f64,
}

/// The scenario, as run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioInfo {
    /// Name.
    pub name: String,
    /// File.
    pub file: String,
    /// Description.
    pub description: String,
    /// Resources.
    pub resources: u64,
    /// Provider settings.
    pub settings: SettingsInfo,
    /// The `--set PATH=VALUE` overrides the run was made with, in order.
    #[serde(default)]
    pub overrides: Vec<String>,
    /// The phases the scenario plans, in order, as `name (action)`.
    #[serde(default)]
    pub phases: Vec<String>,
    /// What the provider is put through, apart from its settings: resource groups, phases,
    /// cloud and assertions, one line each. Two runs compare only when these agree.
    #[serde(default)]
    pub workload: Vec<String>,
    /// The provider's settings and what follows from them (the API client's limits, SDK
    /// attempts), one `name: value` line each: what `compare` reports as changed.
    #[serde(default)]
    pub setting_lines: Vec<String>,
}
