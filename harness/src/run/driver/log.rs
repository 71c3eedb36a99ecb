//! What the driver did, as [`super::observe`](crate::run::observe) reads it: the resources
//! it wrote ([`Record`]), each phase's span, the kills, and what a phase that timed out was
//! still waiting for ([`Unmet`]); and how a phase ended ([`PhaseEnd`]). A leaf of the
//! driver: every room writes here.

use std::collections::BTreeMap;

use crate::result::{Kill, PhaseFailure, PhaseSpan};
use crate::run::source::watches::Key;
use crate::scenario::Until;

/// What the harness did to one resource.
#[derive(Clone, Debug)]
pub struct Record {
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Group name.
    pub group: String,
    /// Phase that created it.
    pub created_in: String,
    /// When the harness created it, µs.
    pub created_us: u64,
    /// When the harness deleted it, µs.
    pub deleted_us: Option<u64>,
    /// Its expected poll interval, s.
    pub expected_poll_s: f64,
    /// Create failed (the harness's own request).
    pub create_failed: bool,
}

impl Record {
    /// Created (successfully) and not deleted.
    pub(super) fn is_live(&self) -> bool {
        self.deleted_us.is_none() && !self.create_failed
    }
}

/// How a phase ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PhaseEnd {
    /// Its `until` was met.
    Completed,
    /// It stopped early with a verdict (a resync phase whose provider does not record
    /// reconcile requests): the phase failed, and the run goes on.
    Failed(PhaseFailure),
    /// Its timeout passed first: the run stops.
    TimedOut,
}

impl PhaseEnd {
    /// Whether the run goes on to the next phase.
    #[must_use]
    pub fn run_goes_on(&self) -> bool {
        !matches!(self, PhaseEnd::TimedOut)
    }

    /// A met `until` or a timeout.
    pub(super) fn met(completed: bool) -> PhaseEnd {
        if completed {
            PhaseEnd::Completed
        } else {
            PhaseEnd::TimedOut
        }
    }
}

/// What the driver did: every resource it wrote and every phase's span.
#[derive(Clone, Debug, Default)]
pub struct Log {
    /// Per resource, by (group, index).
    pub records: BTreeMap<(usize, u32), Record>,
    /// Per phase, in order.
    pub spans: Vec<PhaseSpan>,
    /// The provider's kills, in order.
    pub kills: Vec<Kill>,
    /// What a phase that timed out was still waiting for.
    pub unmet: Option<Unmet>,
}

/// The resources a phase that timed out had not seen meet its `until`.
#[derive(Clone, Debug)]
pub struct Unmet {
    /// What it waited for.
    pub until: Until,
    /// How many resources it waited for.
    pub of: usize,
    /// Those still pending, in the order they were created.
    pub pending: Vec<Key>,
    /// They are XRs (their status is Crossplane core's to write), not managed resources.
    pub composite: bool,
}
