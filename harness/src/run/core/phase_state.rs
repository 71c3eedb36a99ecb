//! What core's phases keep between their steps (`run::core::phases` runs them; the XR
//! driver holds this state).

use std::collections::BTreeMap;

use super::embedded::CoreProbe;

/// Core's counters at one instant.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    pub(super) calls: BTreeMap<String, u64>,
    pub(super) reached: BTreeMap<String, u64>,
    pub(super) failed: BTreeMap<String, u64>,
    pub(super) deadline: u64,
    pub(super) opens: u64,
    pub(super) dropped: u64,
    pub(super) reconciles: u64,
    pub(super) errors: u64,
    pub(super) latency: crate::result::core::FunctionLatency,
}

/// A phase under way: what was read at its start.
#[derive(Debug)]
pub struct OpenPhase {
    pub(super) phase: String,
    pub(super) action: String,
    pub(super) start_us: u64,
    pub(super) before: Counters,
    /// compositionUpdate: each composed resource's generation at the start.
    pub(super) generations: Option<BTreeMap<(String, String), i64>>,
    pub(super) cloud_seq: Option<u64>,
}

/// A core process's `/metrics`, where its function counters are read at a phase's start
/// and end.
#[derive(Clone, Debug)]
pub struct CoreMetrics {
    /// The client of its metrics address.
    pub remote: crate::run::remote::Remote,
    /// The path of its metrics.
    pub path: String,
}

/// What core's phases keep between their steps.
#[derive(Default)]
pub struct CorePhases {
    pub(super) probe: Option<CoreProbe>,
    pub(super) metrics: Option<CoreMetrics>,
    pub(super) open: Option<OpenPhase>,
    /// The revision each compositionUpdate phase's XRs move to, by phase.
    pub(super) revisions: BTreeMap<String, String>,
}
