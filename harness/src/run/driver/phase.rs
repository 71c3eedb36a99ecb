//! The one trait every phase action is behind, and what an action gets to run its phase
//! ([`Step`]). A leaf of the driver: the rooms implement it, [`super::dispatch`] calls it.

use tokio::time::Instant;

use super::log::PhaseEnd;
use super::state::State;
use super::wait::Waiting;
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
/// [`super::frame::write_then_wait`], which calls their [`PhaseAction::act`] (and
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
    ) -> Result<PhaseEnd, RunError>;

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
