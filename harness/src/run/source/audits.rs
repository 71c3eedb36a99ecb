//! The audits during the phases, read with the provider's own code: at the end of each
//! phase that met its `until`, the cloud's inventory against the managed resources
//! (orphans, duplicates, stuck and lost resources); after each kill, before a new provider
//! starts, the creates it interrupted (managed resources between
//! `external-create-pending` and its outcome). A source with phase hooks ([`PhaseHook`]):
//! started with the run, told at each phase's moments, collected after the phases.

use std::collections::BTreeSet;

use super::hook::PhaseHook;
use crate::measure::audit;
use crate::result::PhaseAudit;
use crate::run::clock::RunClock;
use crate::run::present::{custom_resources, inventory};
use crate::run::target::CloudControl;
use crate::scenario::{Action, Phase, Scenario};

/// What the audits found.
#[derive(Clone, Debug, Default)]
pub struct AuditReport {
    /// The audit of each phase that met its `until`, in order.
    pub phase_audits: Vec<PhaseAudit>,
    /// Per kill, in order: the creates it interrupted (`kind/name`), less those an earlier
    /// kill already caught and that still carry the same stamp.
    pub interrupted_creates: Vec<Vec<String>>,
}

/// The audits of the phases so far.
pub struct Audits<'s> {
    scenario: &'s Scenario,
    client: kube::Client,
    clock: RunClock,
    report: AuditReport,
    /// The incomplete creates at the phase's last kill (none yet in this phase).
    last_kill: Option<BTreeSet<String>>,
}

impl<'s> Audits<'s> {
    /// Audits the phases of `scenario` from now on, listing its managed resources through
    /// `client`.
    #[must_use]
    pub fn start(scenario: &'s Scenario, client: kube::Client, clock: RunClock) -> Self {
        Audits {
            scenario,
            client,
            clock,
            report: AuditReport::default(),
            last_kill: None,
        }
    }

    /// What they found.
    #[must_use]
    pub fn finish(self) -> AuditReport {
        self.report
    }
}

impl PhaseHook for Audits<'_> {
    fn phase_start(&mut self, _phase: &Phase) {
        self.last_kill = None;
    }

    /// Lists the managed resources whose create is incomplete: the ones the kill caught,
    /// less those the phase's previous kill found incomplete (or, at the phase's first kill,
    /// those any earlier kill caught) that still are.
    async fn provider_killed(&mut self) {
        let known: BTreeSet<String> = match self.last_kill.take() {
            Some(last) => last,
            None => self
                .report
                .interrupted_creates
                .iter()
                .flatten()
                .cloned()
                .collect(),
        };
        let incomplete: BTreeSet<String> = custom_resources(&self.client, self.scenario)
            .await
            .into_iter()
            .filter(|r| r.create_incomplete)
            .map(|r| format!("{}/{}", r.kind, r.name))
            .collect();
        let interrupted = incomplete.difference(&known).cloned().collect();
        self.report.interrupted_creates.push(interrupted);
        self.last_kill = Some(incomplete);
    }

    async fn phase_end(&mut self, phase: &Phase, met: bool, cloud: &impl CloudControl) {
        // A kill phase's kills fell during the phase they interrupt: audited at its end.
        if !met || matches!(phase.action, Action::Kill { .. }) {
            return;
        }
        let found = audit(
            &inventory(cloud).await,
            &custom_resources(&self.client, self.scenario).await,
        );
        self.report.phase_audits.push(PhaseAudit {
            phase: phase.name.clone(),
            at_us: self.clock.now().0,
            audit: found,
        });
    }
}
