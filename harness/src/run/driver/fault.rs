//! `cloudFault`: the per-resource faults of some groups change (the shares in force in the
//! phase, which the driver reads from the scenario at the phase's start); with a duration,
//! the per-resource rules before it come back after it. Also how every action that
//! changes the cloud's faults sets them ([`set_faults`]).

use std::time::Duration;

use super::phase::PhaseAction;
use super::state::State;
use crate::run::cloud;
use crate::run::target::CloudControl;
use crate::scenario::Phase;

/// Sets the cloud's faults; a failure is logged (the run goes on, and the cloud's journal
/// shows what really happened).
pub async fn set_faults(cloud: &impl CloudControl, faults: mock_cloud::Faults) {
    if let Err(e) = cloud.set_faults(faults).await {
        tracing::error!(error = %e, "cannot change the cloud's faults");
    }
}

/// A change of the per-resource faults.
pub struct Fault {
    /// How long (`None`: the rest of the run, or until another `cloudFault`).
    pub duration: Option<Duration>,
}

impl PhaseAction for Fault {
    async fn act(&self, state: &mut State<'_>, _phase: &Phase, control: &impl CloudControl) {
        let before = control.faults();
        let mut faults = before.clone();
        faults.resources = cloud::resource_faults_of(state.scenario, &state.in_force);
        set_faults(control, faults).await;
        if let Some(d) = self.duration {
            tokio::time::sleep(d).await;
            // Only the per-resource rules go back: other faults may have changed.
            let mut back = control.faults();
            back.resources = before.resources;
            set_faults(control, back).await;
        }
    }
}
