//! Cloud calls from mock-cloud's journal: the ground truth of every budget. Read once, at
//! the end, through the target's cloud control, and placed on the run's clock by the
//! cloud's epoch.

use crate::result::{CallAction, CloudCall};
use crate::run::target::CloudControl;

use super::report::CloudReport;

fn call_action(a: mock_cloud::Action) -> CallAction {
    match a {
        mock_cloud::Action::Create => CallAction::Create,
        mock_cloud::Action::Get => CallAction::Get,
        mock_cloud::Action::Update => CallAction::Update,
        mock_cloud::Action::Delete => CallAction::Delete,
        mock_cloud::Action::List => CallAction::List,
    }
}

/// The cloud's journal from the start of the run.
pub struct CloudJournal {
    from: u64,
}

impl CloudJournal {
    /// Counts calls from now on (the cloud starts afresh with the run: from `seq` 0).
    #[must_use]
    pub fn start() -> CloudJournal {
        CloudJournal { from: 0 }
    }

    /// Every call since the start; calls that matched no API action are left out.
    pub async fn finish(self, cloud: &impl CloudControl) -> CloudReport {
        let page = match cloud.calls_since(self.from).await {
            Ok(page) => page,
            Err(e) => {
                tracing::error!(error = %e, "cannot read the cloud's journal");
                return CloudReport {
                    failed: true,
                    ..CloudReport::default()
                };
            }
        };
        let epoch = cloud.epoch();
        let calls = page
            .calls
            .into_iter()
            .filter_map(|c| {
                // Before the run's start only by the epoch's error: keep it, at 0.
                let at_us = epoch.to_run(c.at_us).map_or(0, |t| t.0);
                let retry_not_before_us = (c.retry_after_ms > 0)
                    .then(|| at_us + u64::from(c.latency_us) + u64::from(c.retry_after_ms) * 1000);
                Some(CloudCall {
                    at_us,
                    account: c.account,
                    action: call_action(c.action?),
                    name: c.name,
                    status: c.status,
                    throttled: c.throttled,
                    retry_not_before_us,
                })
            })
            .collect();
        CloudReport {
            calls,
            dropped: page.dropped,
            failed: false,
            epoch_uncertainty: epoch.uncertainty,
        }
    }
}
