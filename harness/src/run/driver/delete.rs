//! `delete`: the live resources of the groups deleted at the phase's rate, each [`Record`]
//! marked with when its delete was accepted.
//!
//! [`Record`]: super::log::Record

use kube::api::DeleteParams;

use super::phase::PhaseAction;
use super::state::State;
use crate::run::target::CloudControl;
use crate::scenario::Phase;

/// Deletes the resources of `groups`.
pub struct Delete<'a> {
    /// Resources per second (all at once without).
    pub rate: Option<f64>,
    /// The groups.
    pub groups: &'a [usize],
}

impl PhaseAction for Delete<'_> {
    async fn act(&self, state: &mut State<'_>, _phase: &Phase, _cloud: &impl CloudControl) {
        let s = state.scenario;
        let live = state.live(&state.targets(Some(self.groups)));
        let done = state
            .paced(&live, self.rate, |g, i| {
                let api = state.api(g);
                let name = s.groups[g].resource_name(i, &s.name);
                async move { api.delete(&name, &DeleteParams::default()).await.is_ok() }
            })
            .await;
        for (k, at, ok) in done {
            if ok && let Some(r) = state.log.records.get_mut(&k) {
                r.deleted_us = Some(at);
            }
        }
    }
}
