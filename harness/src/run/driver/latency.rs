//! `cloudLatency`: the cloud's latency per class of call changes (classes left out keep
//! theirs); with a duration, the latency before it comes back after it.

use std::time::Duration;

use super::fault::set_faults;
use super::phase::PhaseAction;
use super::state::State;
use crate::run::cloud;
use crate::run::target::CloudControl;
use crate::scenario::{ActionClass, Classes, Latency as ClassLatency, Phase};

/// A change of the cloud's latency.
pub struct Latency<'a> {
    /// The new latency per class.
    pub latency: &'a Classes<ClassLatency>,
    /// How long (`None`: the rest of the run).
    pub duration: Option<Duration>,
}

impl PhaseAction for Latency<'_> {
    async fn act(&self, _state: &mut State<'_>, _phase: &Phase, control: &impl CloudControl) {
        let before = control.faults();
        let mut faults = before.clone();
        for c in ActionClass::ALL {
            if let Some(l) = self.latency.get(c) {
                faults.latency.insert(cloud::class(c), cloud::latency(l));
            }
        }
        set_faults(control, faults).await;
        if let Some(d) = self.duration {
            tokio::time::sleep(d).await;
            set_faults(control, before).await;
        }
    }
}
