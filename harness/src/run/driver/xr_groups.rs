//! The XR groups' part of a phase (a composite scenario's): after the action's own writes,
//! the same action on the phase's XR groups (create, resync, update, delete; see
//! [`crate::run::core::xrs`]), and after its `until` is met for the resources, the wait for
//! its XRs.

use super::log::{PhaseEnd, Unmet};
use super::state::State;
use super::wait::Waiting;
use crate::scenario::Phase;

/// The writes of `phase` to its XR groups, paced at its action's rate and counted on the
/// phase's bar.
pub async fn act(state: &mut State<'_>, phase: &Phase, waiting: &Waiting<'_>) {
    let clock = state.clock;
    state
        .xrs
        .act(phase, phase.action.rate(), waiting.bar, || clock.now().0)
        .await;
}

/// After the phase's resources ended it as `end`: when they met its `until`, waits for its
/// XRs to meet it too; a timeout leaves in the log the XRs still pending.
pub async fn wait(
    state: &mut State<'_>,
    phase: &Phase,
    waiting: &Waiting<'_>,
    end: PhaseEnd,
) -> PhaseEnd {
    if end != PhaseEnd::Completed
        || state
            .xrs
            .wait(phase, waiting.watches, (waiting.deadline, waiting.bar))
            .await
    {
        return end;
    }
    let pending = state.xrs.pending(phase, waiting.watches).await;
    state.log.unmet = Some(Unmet {
        until: phase.until,
        of: phase
            .composites
            .iter()
            .map(|&g| state.scenario.composites.groups[g].count as usize)
            .sum(),
        pending,
        composite: true,
    });
    PhaseEnd::TimedOut
}
