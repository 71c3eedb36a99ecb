//! `hold`: the steady state, for its duration; nothing is written.

use std::time::Duration;

use super::phase::PhaseAction;
use super::state::State;
use crate::run::target::CloudControl;
use crate::scenario::Phase;

/// Waits `duration`, then for the phase's `until`.
pub struct Hold {
    /// How long.
    pub duration: Duration,
}

impl PhaseAction for Hold {
    async fn act(&self, _state: &mut State<'_>, _phase: &Phase, _cloud: &impl CloudControl) {
        tokio::time::sleep(self.duration).await;
    }
}
