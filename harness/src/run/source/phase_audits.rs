//! The audit at the end of each phase: the cloud's inventory against the managed
//! resources (orphans, duplicates, stuck and lost resources), read when a phase has met its
//! `until`. A source with a phase-end hook ([`PhaseHook`]): started with the run, told at
//! each phase's end, collected after the phases.

use super::hook::PhaseHook;
use crate::measure::audit;
use crate::result::PhaseAudit;
use crate::run::clock::RunClock;
use crate::run::present::{custom_resources, inventory};
use crate::run::target::CloudControl;
use crate::scenario::{Action, Phase, Scenario};

/// The audits of the phases so far.
pub struct PhaseAudits<'s> {
    scenario: &'s Scenario,
    client: kube::Client,
    clock: RunClock,
    audits: Vec<PhaseAudit>,
}

impl<'s> PhaseAudits<'s> {
    /// Audits the phases of `scenario` from now on, listing its managed resources through
    /// `client`.
    #[must_use]
    pub fn start(scenario: &'s Scenario, client: kube::Client, clock: RunClock) -> Self {
        PhaseAudits {
            scenario,
            client,
            clock,
            audits: Vec::new(),
        }
    }

    /// The audit of each phase that met its `until`, in order.
    #[must_use]
    pub fn finish(self) -> Vec<PhaseAudit> {
        self.audits
    }
}

impl PhaseHook for PhaseAudits<'_> {
    async fn phase_end(&mut self, phase: &Phase, met: bool, cloud: &impl CloudControl) {
        // A kill phase's kills fell during the phase they interrupt: audited at its end.
        if !met || matches!(phase.action, Action::Kill { .. }) {
            return;
        }
        let found = audit(
            &inventory(cloud).await,
            &custom_resources(&self.client, self.scenario).await,
        );
        self.audits.push(PhaseAudit {
            phase: phase.name.clone(),
            at_us: self.clock.now().0,
            audit: found,
        });
    }
}
