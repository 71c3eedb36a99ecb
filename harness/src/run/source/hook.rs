//! The phase-end hook of the measurement sources. A source's life cycle is kube-burner's:
//! started with the run, told at the end of each phase, collected (`finish`) after the
//! phases. Most sources only start and finish; one that measures at a phase's end
//! implements [`PhaseHook`], and the driver calls it when the phase's `until` was met or
//! not, before it closes the phase's span.

use crate::run::target::CloudControl;
use crate::scenario::Phase;

/// What a source does at the end of each phase.
///
/// `async fn` without `Send` bounds, as the target's: a run is driven on the caller's task.
#[allow(async_fn_in_trait)]
pub trait PhaseHook {
    /// `phase` has ended; `met` says whether its `until` was met (not a timeout, not a
    /// verdict). What the hook reads counts in the phase: its span closes after it.
    async fn phase_end(&mut self, phase: &Phase, met: bool, cloud: &impl CloudControl);
}
