//! `update`: a merge of the phase's `spec` into every resource's `spec.forProvider`, at the
//! phase's rate.

use serde_json::json;

use super::phase::PhaseAction;
use super::state::State;
use crate::run::target::CloudControl;
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
    async fn act(&self, state: &mut State<'_>, _phase: &Phase, _cloud: &impl CloudControl) {
        let targets = state.targets(Some(self.groups));
        let body = json!({"spec": {"forProvider": self.spec}});
        state.patch_all(&targets, &body, self.rate).await;
    }
}
