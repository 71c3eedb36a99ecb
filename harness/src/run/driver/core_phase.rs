//! `compositionUpdate` and `functionFault`: core's own phases. The XR driver makes their
//! writes (a Composition patched, a function's fault switched on and off: see
//! [`crate::run::core::phases`]) as the XR groups' part of the phase; the resources wait
//! for the phase's `until` as in any other.

use super::phase::PhaseAction;
use super::state::State;
use crate::run::target::CloudControl;
use crate::scenario::Phase;

/// A phase of core's: nothing of the resources' is written.
pub struct CorePhase;

impl PhaseAction for CorePhase {
    async fn act(&self, _state: &mut State<'_>, _phase: &Phase, _cloud: &impl CloudControl) {}
}
