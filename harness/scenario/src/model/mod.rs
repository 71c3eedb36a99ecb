//! Second stage: the validated scenario. Only this reaches `predict` and the runner.
//! One file per section, as in `validate` and `raw`.

mod assertions;
mod cloud;
mod phases;
mod provider;
mod resources;

pub use assertions::*;
pub use cloud::*;
pub use phases::*;
pub use provider::*;
pub use resources::*;

pub use crate::calls::{CALL_PATHS, CallDetail, Calls, Measured, op_matches};

use std::collections::BTreeMap;
use std::time::Duration;

use limiter::crossplane::Settings;

use crate::error::{Pos, Problem};
use crate::faults::FaultShare;
use crate::kinds::{ApiKind, GroupKind};
use crate::raw::{AwsRetryModeName, CredentialCacheName, Target, TimeMode};

/// A validated scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The file it came from, as given.
    pub file: String,
    /// The `--set`s applied to it, in order.
    pub sets: Vec<super::set::Set>,
    /// Its name.
    pub name: String,
    /// What it shows.
    pub description: String,
    /// Seed of random draws.
    pub seed: u64,
    /// Where it runs.
    pub target: Target,
    /// How time passes.
    pub time: TimeMode,
    /// The provider's settings: the same type the provider runs with.
    pub settings: Settings,
    /// Prediction inputs the settings do not give.
    pub prediction: PredictionInputs,
    /// The provider profile, for a provider the harness does not control.
    pub profile: Option<super::profile::Profile>,
    /// The mock cloud.
    pub cloud: Cloud,
    /// The AWS flavour's client settings (embedded runs).
    pub aws: AwsSettings,
    /// Objects created before the resources and deleted after them, in file order.
    pub objects: Vec<SceneObject>,
    /// Cloud calls per reconcile of each kind in the groups, by path.
    pub calls: BTreeMap<GroupKind, Calls>,
    /// What the `calls` entries (or the profile's calibration) say beyond the figures: calls
    /// by operation and the measured samples, per kind that has them.
    pub call_detail: BTreeMap<GroupKind, CallDetail>,
    /// Resource groups, in file order.
    pub groups: Vec<ResourceGroup>,
    /// The composite layer: core's settings, XRDs, Compositions, Functions and XR groups
    /// (empty without `composites`).
    pub composites: super::composite::Composites,
    /// Phases, in order.
    pub phases: Vec<Phase>,
    /// Assertions, in file order.
    pub assertions: Vec<Assertion>,
    /// Things that are allowed but probably not meant (an invalid poll-interval annotation
    /// that falls back to the default, a clamped one).
    pub warnings: Vec<Problem>,
}

impl Scenario {
    /// Whether the cloud may answer a call with a throttle or a server error, which an SDK
    /// retries: an account has a quota, the cloud injects errors, or a phase is an outage.
    #[must_use]
    pub fn retries_possible(&self) -> bool {
        let classes =
            |c: &Classes<ErrorFault>| ActionClass::ALL.iter().any(|&a| c.get(a).is_some());
        classes(&self.cloud.errors)
            || self.cloud.accounts.iter().any(|a| {
                ActionClass::ALL
                    .iter()
                    .any(|&class| a.quotas.get(class).is_some())
            })
            || self
                .phases
                .iter()
                .any(|p| matches!(p.action, Action::CloudOutage { .. }))
    }

    /// Whether the scenario runs the provider's AWS flavour: its kinds, its ProviderConfigs
    /// or its client settings.
    #[must_use]
    pub fn uses_aws(&self) -> bool {
        self.aws.set
            || self.groups.iter().any(|g| g.kind.aws())
            || self.objects.iter().any(|o| o.kind.aws)
    }
}

/// The provider's AWS flavour's client flags (`--aws-retry-mode`, `--credential-cache`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AwsSettings {
    /// The SDK's retry mode.
    pub retry_mode: AwsRetryModeName,
    /// What survives between Connects.
    pub credential_cache: CredentialCacheName,
    /// Whether the scenario set either.
    pub set: bool,
}

/// A scenario-level object (a ProviderConfig, a Secret): rendered, checked against its
/// kind's schema, with its namespace set when namespaced.
#[derive(Clone, Debug)]
pub struct SceneObject {
    /// Its kind.
    pub kind: ApiKind,
    /// The whole object.
    pub body: serde_json::Value,
    /// Where it is in the scenario (a problem found at run time names it).
    pub pos: Pos,
}

impl Scenario {
    /// The CPU time the provider sleeps in each reconcile: `prediction.reconcileCpu` in
    /// virtual time (where work takes no time), zero in real time (where it takes its own).
    #[must_use]
    pub fn simulated_reconcile_cpu(&self) -> Duration {
        match self.time {
            TimeMode::Real => Duration::ZERO,
            TimeMode::Virtual => self.prediction.reconcile_cpu,
        }
    }

    /// Total resources.
    #[must_use]
    pub fn total_resources(&self) -> u64 {
        self.groups.iter().map(|g| u64::from(g.count)).sum()
    }

    /// Where `pos` is, for a reader: `FILE:LINE:COLUMN` or `--set PATH`.
    #[must_use]
    pub fn place(&self, pos: Pos) -> String {
        pos.place(&self.file, &self.sets)
    }

    /// The kills during phase `index`: (kill phase index, count, window).
    #[must_use]
    pub fn kills_during(&self, index: usize) -> Vec<(usize, u32, Duration)> {
        self.phases
            .iter()
            .enumerate()
            .filter_map(|(k, p)| match p.action {
                Action::Kill {
                    during,
                    count,
                    window,
                } if during == index => Some((k, count, window)),
                _ => None,
            })
            .collect()
    }

    /// Kills in the whole scenario.
    #[must_use]
    pub fn total_kills(&self) -> u32 {
        self.phases
            .iter()
            .map(|p| match p.action {
                Action::Kill { count, .. } => count,
                _ => 0,
            })
            .sum()
    }

    /// A phase's index by name.
    #[must_use]
    pub fn phase_index(&self, name: &str) -> Option<usize> {
        self.phases.iter().position(|p| p.name == name)
    }

    /// The fault shares of every group in force during phase `index`: the groups' own, as
    /// the `cloudFault` phases up to and including it replaced them (one with a duration
    /// only for its own phase).
    #[must_use]
    pub fn faults_during(&self, index: usize) -> Vec<Vec<FaultShare>> {
        let mut now: Vec<Vec<FaultShare>> = self.groups.iter().map(|g| g.faults.clone()).collect();
        for (i, phase) in self.phases.iter().enumerate().take(index + 1) {
            if let Action::CloudFault { faults, duration } = &phase.action
                && (duration.is_none() || i == index)
            {
                for (g, shares) in faults {
                    now[*g].clone_from(shares);
                }
            }
        }
        now
    }

    /// The scenario as phase `index` sees it: each group's `faults` are those in force
    /// then ([`Scenario::faults_during`]).
    #[must_use]
    pub fn during(&self, index: usize) -> Scenario {
        let mut s = self.clone();
        for (g, shares) in s.groups.iter_mut().zip(self.faults_during(index)) {
            g.faults = shares;
        }
        s
    }

    /// Whether any phase changes the per-resource faults.
    #[must_use]
    pub fn changes_faults(&self) -> bool {
        self.phases
            .iter()
            .any(|p| matches!(p.action, Action::CloudFault { .. }))
    }
}
