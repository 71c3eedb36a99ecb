//! What the kills did and what the audit found at each phase's end, as plain data.

use serde::{Deserialize, Serialize};

use crate::measure::Audit;

/// One kill of the provider.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kill {
    /// The kill phase it belongs to.
    pub kill_phase: String,
    /// The phase whose work it interrupted.
    pub during: String,
    /// When, µs since the run started.
    pub at_us: u64,
    /// The resources whose create it interrupted (kind/name): `external-create-pending`
    /// newer than both outcomes right after the kill, before a new provider started.
    /// crossplane-runtime v2.4 stops reconciling each of them (path P5, "cannot determine
    /// creation result") until a human removes the annotation.
    pub interrupted_creates: Vec<String>,
}

/// The audit at the end of a phase that met its `until`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseAudit {
    /// Phase name.
    pub phase: String,
    /// When, µs since the run started.
    pub at_us: u64,
    /// What it found.
    pub audit: Audit,
}
