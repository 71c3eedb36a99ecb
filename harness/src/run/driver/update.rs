//! `update`: a merge of the phase's `spec` into every resource's `spec.forProvider`, at the
//! phase's rate.

use serde_json::json;

use super::frame::write_then_wait;
use super::log::PhaseEnd;
use super::phase::{PhaseAction, Step};
use super::state::State;
use crate::run::error::RunError;
use crate::run::source::hook::PhaseHook;
use crate::run::target::{CloudControl, Target};
use crate::scenario::Phase;

/// Updates the resources of `groups`.
pub struct Update<'a> {
    /// Resources per second (all at once without).
    pub rate: Option<f64>,
    /// The groups.
    pub groups: &'a [usize],
    /// Merged into each resource's `spec.forProvider`.
    pub spec: &'a serde_json::Value,
}

impl PhaseAction for Update<'_> {
    async fn run<T: Target, H: PhaseHook>(
        &self,
        step: Step<'_, '_, T, H>,
    ) -> Result<PhaseEnd, RunError> {
        write_then_wait(self, step).await
    }

    async fn act(&self, state: &mut State<'_>, _phase: &Phase, _cloud: &impl CloudControl) {
        let targets = state.targets(Some(self.groups));
        let body = json!({"spec": {"forProvider": self.spec}});
        state.patch_all(&targets, &body, self.rate).await;
    }
}
