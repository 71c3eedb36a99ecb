//! The phase hooks of the measurement sources. A source's life cycle is kube-burner's:
//! started with the run, told at the moments of each phase, collected (`finish`) after the
//! phases. Most sources only start and finish; one that measures at a moment of a phase
//! implements [`PhaseHook`], and the driver calls it: when the phase starts, when the
//! provider has been killed during it (before a new one starts), and when it ends (before
//! its span closes).

use crate::run::target::CloudControl;
use crate::scenario::Phase;

/// What a source does at the moments of each phase.
///
/// `async fn` without `Send` bounds, as the target's: a run is driven on the caller's task.
#[allow(async_fn_in_trait)]
pub trait PhaseHook {
    /// `phase` starts; nothing by default.
    fn phase_start(&mut self, _phase: &Phase) {}

    /// The provider was killed during the phase: the kill is accepted and no new provider
    /// runs yet. Nothing by default.
    async fn provider_killed(&mut self) {}

    /// `phase` has ended; `met` says whether its `until` was met (not a timeout, not a
    /// verdict). What the hook reads counts in the phase: its span closes after it.
    async fn phase_end(&mut self, phase: &Phase, met: bool, cloud: &impl CloudControl);
}
