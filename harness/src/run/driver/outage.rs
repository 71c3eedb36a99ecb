//! `cloudOutage`: every cloud call fails with the phase's status for its duration, set on
//! the cloud's clock; the phase lasts as long.

use std::time::Duration;

use super::fault::set_faults;
use super::phase::PhaseAction;
use super::state::State;
use crate::run::target::CloudControl;
use crate::scenario::Phase;

/// An outage of the whole cloud.
pub struct Outage {
    /// How long.
    pub duration: Duration,
    /// The status every call gets.
    pub status: u16,
}

impl PhaseAction for Outage {
    async fn act(&self, _state: &mut State<'_>, _phase: &Phase, cloud: &impl CloudControl) {
        let mut faults = cloud.faults();
        let from = cloud.elapsed();
        faults.outages.push(mock_cloud::Outage {
            start: from,
            end: from + self.duration,
            status: self.status,
        });
        set_faults(cloud, faults).await;
        tokio::time::sleep(self.duration).await;
    }
}
