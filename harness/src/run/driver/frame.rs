//! How most phases run: the action's writes, the XR groups' writes, then the wait for the
//! phase's `until` (and its XRs'); or, when kills are scheduled into the phase, the writes
//! and the wait beside the kill loop, then the wait again.

use super::kill;
use super::log::PhaseEnd;
use super::phase::{PhaseAction, Step};
use super::xr_groups;
use crate::run::error::RunError;
use crate::run::source::hook::PhaseHook;
use crate::run::target::Target;

/// Runs `action`'s phase: see the module. A phase that times out leaves in the log what it
/// was still waiting for.
///
/// # Errors
/// The provider could not be killed or started again.
pub async fn write_then_wait<A: PhaseAction + ?Sized, T: Target, H: PhaseHook>(
    action: &A,
    step: Step<'_, '_, T, H>,
) -> Result<PhaseEnd, RunError> {
    let kills = kill::schedule(step.state.scenario, step.index);
    let waiting = step.waiting();
    let Step {
        state,
        phase,
        target,
        hook,
        ..
    } = step;
    let end = if kills.is_empty() {
        let cloud = target.cloud();
        action.act(state, phase, cloud).await;
        xr_groups::act(state, phase).await;
        let early = action.early_end(state, phase, &waiting, cloud).await;
        let end = state.wait_until(&waiting, early, cloud).await;
        // Then the XRs of the phase (none outside create, resync, update, delete).
        xr_groups::wait(state, phase, &waiting, end).await
    } else {
        kill::beside(action, state, phase, (&*target, hook), &waiting, &kills).await?
    };
    if end == PhaseEnd::TimedOut && state.log.unmet.is_none() {
        state.log.unmet = Some(state.unmet(phase.until, waiting.targets, waiting.watches));
    }
    Ok(end)
}
