//! `kill`: the kill phase. Its kills ran during the phase they interrupt
//! ([`super::kill`]); it counts them.

use super::log::PhaseEnd;
use super::phase::{PhaseAction, Step};
use crate::run::error::RunError;
use crate::run::source::hook::PhaseHook;
use crate::run::target::Target;

/// The kill phase: its kills ran during the phase they interrupt; it counts them.
pub(crate) struct KillPhase;

impl PhaseAction for KillPhase {
    async fn run<T: Target, H: PhaseHook>(
        &self,
        step: Step<'_, '_, T, H>,
    ) -> Result<PhaseEnd, RunError> {
        let n = step
            .state
            .log
            .kills
            .iter()
            .filter(|k| k.kill_phase == step.phase.name)
            .count();
        step.bar.set_total(n);
        step.bar.set(n);
        Ok(PhaseEnd::Completed)
    }
}
