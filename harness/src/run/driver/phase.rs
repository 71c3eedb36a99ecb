//! The one trait every phase action is behind, what an action gets to run its phase
//! ([`Step`]), and how most phases run (the trait's default `run`): the action's writes, the
//! XR groups' writes, then the wait for the phase's `until`, with the kills scheduled into
//! the phase beside them. The rooms implement it, [`super::dispatch`] calls it.

use std::time::Duration;

use tokio::time::Instant;

use super::kill::{self, KillContext, kill_loop};
use super::log::PhaseEnd;
use super::state::State;
use super::wait::Waiting;
use super::xr_groups;
use crate::run::error::RunError;
use crate::run::handled::NotHandled;
use crate::run::progress::PhaseBar;
use crate::run::source::hook::PhaseHook;
use crate::run::source::watches::Watches;
use crate::run::target::{CloudControl, Target};
use crate::scenario::Phase;

/// One phase as its action runs it: the driver's state and the run around it.
pub struct Step<'a, 's, T, H> {
    /// The driver's state (what it did so far, the faults in force, the XR groups' part).
    pub state: &'a mut State<'s>,
    /// The phase's index in the scenario.
    pub index: usize,
    /// The phase.
    pub phase: &'a Phase,
    /// Where the run happens.
    pub target: &'a mut T,
    /// What the harness's watches saw.
    pub watches: &'a Watches,
    /// The phase's progress.
    pub bar: &'a PhaseBar,
    /// When the phase times out.
    pub deadline: Instant,
    /// The resources of the action's groups (every group's for an action without groups).
    pub targets: &'a [(usize, u32)],
    /// The sources' phase hooks, told of each kill during the phase.
    pub hook: &'a mut H,
}

impl<'a, T, H> Step<'a, '_, T, H> {
    /// What the phase waits for.
    #[must_use]
    pub fn waiting(&self) -> Waiting<'a> {
        Waiting {
            until: self.phase.until,
            targets: self.targets,
            watches: self.watches,
            deadline: self.deadline,
            bar: self.bar,
        }
    }
}

/// A phase action. Most actions write, then wait for their phase's `until`: their `run` is
/// the default, [`write_then_wait`], which calls their [`PhaseAction::act`] (and
/// [`PhaseAction::early_end`]), drives the XR groups' part, and lets the kills scheduled
/// into the phase fall beside it. An action that ends otherwise (a restart waits for the
/// new provider to read every resource; a kill phase counts the kills that fell during
/// another) writes its own `run`.
///
/// `async fn` without `Send` bounds, as [`Target`]'s: a run is driven on the caller's task.
#[allow(async_fn_in_trait)]
pub trait PhaseAction {
    /// Runs the phase to its end (its `until` met, a verdict, or its timeout). The span,
    /// the bar's last state and the sources' phase start and end are the driver's.
    ///
    /// # Errors
    /// The target failed (a provider that could not be restarted or killed); failed writes
    /// are counted, not errors.
    async fn run<T: Target, H: PhaseHook>(
        &self,
        step: Step<'_, '_, T, H>,
    ) -> Result<PhaseEnd, RunError> {
        write_then_wait(self, step).await
    }

    /// The action's writes (or waits, or changes to the cloud's faults), before its phase
    /// waits; none by default.
    async fn act(&self, _state: &mut State<'_>, _phase: &Phase, _cloud: &impl CloudControl) {}

    /// After [`PhaseAction::act`]: what watches for an early end with a verdict while the
    /// phase waits (a resync phase's grace); none by default.
    async fn early_end(
        &self,
        _state: &State<'_>,
        _phase: &Phase,
        _waiting: &Waiting<'_>,
        _cloud: &impl CloudControl,
    ) -> Option<NotHandled> {
        None
    }
}

/// Runs `action`'s phase the way most phases run: the action's writes, the XR groups'
/// writes, then the wait for the phase's `until` (and its XRs'); or, when kills are
/// scheduled into the phase, the writes and the wait beside the kill loop ([`beside`]), then
/// the wait again. A phase that times out leaves in the log what it
/// was still waiting for.
///
/// # Errors
/// The provider could not be killed or started again.
async fn write_then_wait<A: PhaseAction + ?Sized, T: Target, H: PhaseHook>(
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
        xr_groups::act(state, phase, &waiting).await;
        let early = action.early_end(state, phase, &waiting, cloud).await;
        let end = state.wait_until(&waiting, early, cloud).await;
        // Then the XRs of the phase (none outside create, resync, update, delete).
        xr_groups::wait(state, phase, &waiting, end).await
    } else {
        beside(action, state, phase, (&*target, hook), &waiting, &kills).await?
    };
    if end == PhaseEnd::TimedOut && state.log.unmet.is_none() {
        state.log.unmet = Some(state.unmet(phase.until, waiting.targets, waiting.watches));
    }
    Ok(end)
}

/// `action`'s writes, its phase's XR groups' writes and its wait while the kills of `plan`
/// fall (`hook` told of each); then, since kills after the work was done undo it, the wait
/// again, and the wait for the phase's XRs (as a phase without kills waits for them).
///
/// # Errors
/// The target could not kill or start the provider.
async fn beside<A: PhaseAction + ?Sized, T: Target>(
    action: &A,
    state: &mut State<'_>,
    phase: &Phase,
    (target, hook): (&T, &mut impl PhaseHook),
    waiting: &Waiting<'_>,
    plan: &[(usize, Duration)],
) -> Result<PhaseEnd, RunError> {
    let cx = KillContext {
        scenario: state.scenario,
        clock: state.clock,
        during: &phase.name,
    };
    let killing = kill_loop(target, &cx, plan, (Instant::now(), waiting.deadline), hook);
    let cloud = target.cloud();
    let work = async {
        action.act(state, phase, cloud).await;
        xr_groups::act(state, phase, waiting).await;
        state.wait_until(waiting, None, cloud).await
    };
    let (done, _) = tokio::join!(killing, work);
    state.log.kills.extend(done?);
    let end = state.wait_until(waiting, None, cloud).await;
    Ok(xr_groups::wait(state, phase, waiting, end).await)
}
