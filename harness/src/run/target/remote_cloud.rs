//! mock-cloud reached at a URL through its admin API: the cloud control of a run whose
//! provider is not in this process (a cluster's).

use std::time::Duration;

use mock_cloud::Faults;
use mock_cloud::admin::Client as CloudClient;
use tokio::time::Instant;

use super::{CallsPage, CloudControl, CloudError};
use crate::run::clock::Epoch;

/// mock-cloud over HTTP.
pub struct RemoteCloud {
    client: CloudClient,
    epoch: Epoch,
    /// When the cloud's clock started, on this process's clock.
    started: Instant,
    /// The faults the harness last set (there is no endpoint to read them back).
    faults: std::sync::Mutex<Faults>,
}

impl RemoteCloud {
    /// mock-cloud through `client`, whose clock started at `started` (on this process's
    /// clock; `epoch` on the run's) with `faults` in force.
    #[must_use]
    pub fn new(client: CloudClient, epoch: Epoch, started: Instant, faults: Faults) -> Self {
        RemoteCloud {
            client,
            epoch,
            started,
            faults: std::sync::Mutex::new(faults),
        }
    }
}

impl CloudControl for RemoteCloud {
    fn epoch(&self) -> Epoch {
        self.epoch
    }

    fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    fn faults(&self) -> Faults {
        self.faults
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    async fn set_faults(&self, faults: Faults) -> Result<(), CloudError> {
        self.client
            .put_faults(&faults)
            .await
            .map_err(CloudError::Admin)?;
        *self.faults.lock().unwrap_or_else(|e| e.into_inner()) = faults;
        Ok(())
    }

    async fn next_seq(&self) -> Result<u64, CloudError> {
        self.client.next_seq().await.map_err(CloudError::Admin)
    }

    async fn calls_since(&self, since: u64) -> Result<CallsPage, CloudError> {
        let page = self
            .client
            .all_calls_since(since)
            .await
            .map_err(CloudError::Admin)?;
        Ok(CallsPage {
            calls: page.calls,
            dropped: page.dropped,
        })
    }

    async fn inventory(&self) -> Result<Vec<mock_cloud::Resource>, CloudError> {
        Ok(self
            .client
            .inventory()
            .await
            .map_err(CloudError::Admin)?
            .resources)
    }
}
