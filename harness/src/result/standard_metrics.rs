//! The standard metrics of a provider, as plain data: each controller's reconciles, errors
//! and work queue, and its API requests by code, method and host, as controller-runtime and
//! client-go export them. A leaf: [`super::observe`] and [`super::model`] hold them,
//! [`super::provider_check`] checks and reports them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One controller's standard metrics over the run (controller-runtime's `controller` label,
/// client-go's work-queue `name`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ControllerMetrics {
    /// The controller.
    pub controller: String,
    /// `controller_runtime_reconcile_total` by `result` (`success`, `error`, `requeue`,
    /// `requeue_after`); empty when not exported.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub reconciles: BTreeMap<String, u64>,
    /// `controller_runtime_reconcile_errors_total`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconcile_errors: Option<u64>,
    /// `workqueue_adds_total`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_adds: Option<u64>,
    /// The largest `workqueue_depth` read (summed over priorities): every scrape when
    /// scraped, once at the end in process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth_max: Option<f64>,
}

impl ControllerMetrics {
    /// Every reconcile it counted, when it counts them.
    #[must_use]
    pub fn reconciles_total(&self) -> Option<u64> {
        (!self.reconciles.is_empty()).then(|| self.reconciles.values().sum())
    }
}

/// `rest_client_requests_total` of one label set, over the run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestRequests {
    /// HTTP status, or `<error>`.
    pub code: String,
    /// HTTP method.
    pub method: String,
    /// The API server's `host:port`.
    pub host: String,
    /// Requests.
    pub count: u64,
}

/// The provider's count of its API-server requests beside the API server's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiRequestsCheck {
    /// `rest_client_requests_total` over the run.
    pub provider: u64,
    /// The provider's requests as the run measured them at the API server
    /// (`run.api_requests_measured_by`).
    pub api_server: u64,
    /// The provider's count by code, method and host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by: Vec<RestRequests>,
}
