//! `hold`: the steady state, for its duration; nothing is written.

use std::time::Duration;

use super::frame::write_then_wait;
use super::log::PhaseEnd;
use super::phase::{PhaseAction, Step};
use super::state::State;
use crate::run::error::RunError;
use crate::run::source::hook::PhaseHook;
use crate::run::target::{CloudControl, Target};
use crate::scenario::Phase;

/// Waits `duration`, then for the phase's `until`.
pub struct Hold {
    /// How long.
    pub duration: Duration,
}

impl PhaseAction for Hold {
    async fn run<T: Target, H: PhaseHook>(
        &self,
        step: Step<'_, '_, T, H>,
    ) -> Result<PhaseEnd, RunError> {
        write_then_wait(self, step).await
    }

    async fn act(&self, _state: &mut State<'_>, _phase: &Phase, _cloud: &impl CloudControl) {
        tokio::time::sleep(self.duration).await;
    }
}
