//! Phases: what happens, in order.

use std::time::Duration;

use super::{Classes, Latency};
use crate::faults::FaultShare;
use crate::raw::Until;

/// A phase.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    /// Name.
    pub name: String,
    /// What it does.
    pub action: Action,
    /// When it is over.
    pub until: Until,
    /// The longest it may take.
    pub timeout: Duration,
    /// The XR groups a create, resync, update or delete phase acts on (indexes into
    /// [`Scenario::composites`](super::Scenario::composites)' groups), beside its resource groups.
    pub composites: Vec<usize>,
}

/// What a phase does. Group lists are indexes into [`Scenario::groups`](super::Scenario::groups).
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Create resources at a rate (None: all at once).
    Create {
        /// Resources per second.
        rate: Option<f64>,
        /// Groups.
        groups: Vec<usize>,
    },
    /// The steady state.
    Hold {
        /// How long.
        duration: Duration,
    },
    /// Forced re-sync by annotation.
    Resync {
        /// Resources per second.
        rate: Option<f64>,
        /// Groups.
        groups: Vec<usize>,
        /// How long after the first reconcile of a requested resource the phase waits for a
        /// recorded token before it stops with a verdict (None: until its timeout).
        handled_grace: Option<Duration>,
    },
    /// Spec update.
    Update {
        /// Resources per second.
        rate: Option<f64>,
        /// Groups.
        groups: Vec<usize>,
        /// Merged into each spec.
        spec: serde_json::Value,
    },
    /// Every cloud call fails.
    CloudOutage {
        /// How long.
        duration: Duration,
        /// Status.
        status: u16,
    },
    /// The cloud's latency changes.
    CloudLatency {
        /// New latency per class (classes left out keep theirs).
        latency: Classes<Latency>,
        /// How long (None: the rest of the run).
        duration: Option<Duration>,
    },
    /// The per-resource faults of some groups change.
    CloudFault {
        /// Per group acted on: its index and the fault shares it gets instead of those in
        /// force.
        faults: Vec<(usize, Vec<FaultShare>)>,
        /// How long (None: the rest of the run, or until another cloudFault).
        duration: Option<Duration>,
    },
    /// Provider restart.
    Restart,
    /// The provider killed (no graceful shutdown) during another phase's work.
    Kill {
        /// Index of the phase whose work the kills interrupt.
        during: usize,
        /// How many kills.
        count: u32,
        /// The window, from the start of `during`, the kills fall in.
        window: Duration,
    },
    /// Delete resources.
    Delete {
        /// Resources per second.
        rate: Option<f64>,
        /// Groups.
        groups: Vec<usize>,
    },
    /// A Composition edited: a new CompositionRevision, which the XR groups of the phase
    /// (those the Composition composes) move to.
    CompositionUpdate(Box<crate::composite::CompositionEdit>),
    /// A built-in function's answers faulted.
    FunctionFault {
        /// The Function.
        function: String,
        /// What changes.
        fault: crate::composite::FunctionFault,
        /// How long (None: the rest of the run).
        duration: Option<Duration>,
    },
}

impl Action {
    /// The action's name as written in scenarios.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Action::Create { .. } => "create",
            Action::Hold { .. } => "hold",
            Action::Resync { .. } => "resync",
            Action::Update { .. } => "update",
            Action::CloudOutage { .. } => "cloudOutage",
            Action::CloudLatency { .. } => "cloudLatency",
            Action::CloudFault { .. } => "cloudFault",
            Action::Restart => "restart",
            Action::Kill { .. } => "kill",
            Action::Delete { .. } => "delete",
            Action::CompositionUpdate(_) => "compositionUpdate",
            Action::FunctionFault { .. } => "functionFault",
        }
    }

    /// The groups acted on, for actions that have them.
    #[must_use]
    pub fn groups(&self) -> Option<&[usize]> {
        match self {
            Action::Create { groups, .. }
            | Action::Resync { groups, .. }
            | Action::Update { groups, .. }
            | Action::Delete { groups, .. } => Some(groups),
            _ => None,
        }
    }

    /// The harness's write rate, for actions that have one.
    #[must_use]
    pub fn rate(&self) -> Option<f64> {
        match self {
            Action::Create { rate, .. }
            | Action::Resync { rate, .. }
            | Action::Update { rate, .. }
            | Action::Delete { rate, .. } => *rate,
            _ => None,
        }
    }
}
