//! `compositionUpdate` and `functionFault`: core's own phases. The XR driver makes their
//! writes (a Composition patched, a function's fault switched on and off: see
//! [`crate::run::core::phases`]) as the XR groups' part of the phase; the resources wait
//! for the phase's `until` as in any other.

use super::frame::write_then_wait;
use super::log::PhaseEnd;
use super::phase::{PhaseAction, Step};
use super::state::State;
use crate::run::error::RunError;
use crate::run::source::hook::PhaseHook;
use crate::run::target::{CloudControl, Target};
use crate::scenario::Phase;

/// A phase of core's: nothing of the resources' is written.
pub struct CorePhase;

impl PhaseAction for CorePhase {
    async fn run<T: Target, H: PhaseHook>(
        &self,
        step: Step<'_, '_, T, H>,
    ) -> Result<PhaseEnd, RunError> {
        write_then_wait(self, step).await
    }

    async fn act(&self, _state: &mut State<'_>, _phase: &Phase, _cloud: &impl CloudControl) {}
}
