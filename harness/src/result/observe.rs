//! What a run observed, as plain data. The runner adapts mock-cloud's journal, the API
//! server's journal and the watches into these types; nothing here knows where they came from.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::model::RunInfo;
use crate::measure::{CloudResource, CustomResource};

/// A cloud call's operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CallAction {
    /// Create.
    Create,
    /// Get (Observe).
    Get,
    /// Update.
    Update,
    /// Delete.
    Delete,
    /// List.
    List,
}

impl CallAction {
    /// Lowercase name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            CallAction::Create => "create",
            CallAction::Get => "get",
            CallAction::Update => "update",
            CallAction::Delete => "delete",
            CallAction::List => "list",
        }
    }
}

/// One call at the mock cloud (a journal entry).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloudCall {
    /// Arrival, µs since the run started.
    pub at_us: u64,
    /// Account.
    pub account: String,
    /// Operation.
    pub action: CallAction,
    /// The operation as the cloud's journal names it, `service:Operation`
    /// (`s3:HeadBucket`, `sts:AssumeRole`; the generic API's `generic:get`, …). Shared
    /// between the calls of one operation.
    #[serde(default, with = "super::shared_str")]
    pub op: Arc<str>,
    /// The resource's cloud name.
    pub name: String,
    /// Status returned.
    pub status: u16,
    /// Rejected by a quota (429).
    pub throttled: bool,
    /// The error answer's retry hint, as the run time (µs) before which a client that
    /// honours it makes no call for the resource: the answer's time (arrival plus latency)
    /// plus the hint. `None`: no hint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_not_before_us: Option<u64>,
}

/// One request at the API server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiRequest {
    /// Arrival, µs since the run started.
    pub at_us: u64,
    /// Verb (get, list, watch, create, update, patch, delete, deletecollection,
    /// discovery).
    pub verb: String,
    /// The resource, `PLURAL[.GROUP][/SUBRESOURCE]`, or the path of a request that names
    /// none (discovery); `None` where the source does not say.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "super::shared_str::option"
    )]
    pub resource: Option<Arc<str>>,
    /// Made by the provider (not by the harness).
    pub from_provider: bool,
    /// For the provider's writes (update, patch) of a custom resource, its status or the
    /// object itself: the object, as [`object_key`] names it; `None` for every other request
    /// and where the API server does not say (metrics). A managed reconciler ends each
    /// reconcile with a status write, and a reconcile of a deleted resource with its
    /// finalizer's removal, which is how calls are told apart by reconcile
    /// ([`crate::measure::per_reconcile`]).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "super::shared_str::option"
    )]
    pub object: Option<Arc<str>>,
    /// `object` names a write of the object itself, not of its status.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub main_write: bool,
    /// For a request dated at a read of the server's counters (`at_us` is when that read
    /// ended): when the read before it began, µs since the run started. The server
    /// answered it after that, so it was sent no earlier than that less the longest
    /// request (`run.api_longest_request_s`). `None`: `at_us` is its own time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_from_us: Option<u64>,
}

/// The key of an object in [`ApiRequest::object`]: `plural.group/name`.
#[must_use]
pub fn object_key(plural: &str, group: &str, name: &str) -> String {
    format!("{plural}.{group}/{name}")
}

/// A phase as it ran.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseSpan {
    /// Phase name.
    pub name: String,
    /// Start, µs since the run started.
    pub start_us: u64,
    /// End (its `until` met, or the timeout), µs.
    pub end_us: u64,
    /// Whether `until` was met before the timeout.
    pub completed: bool,
    /// Why it ended early without its `until`, when the harness could tell (the run then
    /// went on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<super::PhaseFailure>,
}

impl PhaseSpan {
    /// Phase `name`, run from `start_us` to `end_us` with its `until` met.
    #[must_use]
    pub fn complete(name: &str, start_us: u64, end_us: u64) -> PhaseSpan {
        PhaseSpan {
            name: name.to_owned(),
            start_us,
            end_us,
            completed: true,
            failure: None,
        }
    }
}

/// One custom resource's milestones, µs since the run started.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResourceTimes {
    /// Name.
    pub name: String,
    /// Group.
    pub group: String,
    /// The phase that created it.
    pub created_in: String,
    /// When the harness created it.
    pub created_us: u64,
    /// When it first became Ready.
    pub ready_us: Option<u64>,
    /// When the harness deleted it.
    pub deleted_us: Option<u64>,
    /// When it was gone.
    pub gone_us: Option<u64>,
    /// Its cloud name (for poll intervals).
    pub external_name: Option<String>,
    /// Its expected poll interval P_i (s).
    pub expected_poll_s: f64,
}

/// The provider's own metrics over the run: controller-runtime's and client-go's, which every
/// provider built on them exports, and this workspace's provider's extra names. `None` (or
/// empty): the provider does not export the name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProviderMetrics {
    /// `limiter_reservations_total` (to attribute an excess, budget.md §8).
    #[serde(default)]
    pub reservations: Option<u64>,
    /// `limiter_early_runs_total`.
    #[serde(default)]
    pub early_runs: Option<u64>,
    /// Cloud calls the provider says it made (`provider_cloud_requests_total`,
    /// cross-checked against the journal).
    #[serde(default)]
    pub cloud_calls: Option<u64>,
    /// Reconciles timed in `provider_reconcile_cpu_seconds` (its count).
    #[serde(default)]
    pub reconciles: u64,
    /// Their CPU time, µs (its sum).
    #[serde(default)]
    pub reconcile_cpu_us: u64,
    /// Each controller's time spent reconciling, seconds, summed over its workers
    /// (`workqueue_work_duration_seconds_sum` by `name`): over a span, its mean number of
    /// busy workers (Little's law).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub busy_s: BTreeMap<String, f64>,
    /// Each controller's `controller_runtime_*` and `workqueue_*` metrics, by controller.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub controllers: Vec<super::standard_metrics::ControllerMetrics>,
    /// `rest_client_requests_total` by code, method and host; `None`: not exported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rest_requests: Option<Vec<super::standard_metrics::RestRequests>>,
}

/// Everything a run observed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Observations {
    /// Run length, µs.
    pub duration_us: u64,
    /// Phases, in order.
    pub phases: Vec<PhaseSpan>,
    /// Cloud calls, sorted by time.
    pub cloud_calls: Vec<CloudCall>,
    /// API requests, sorted by time.
    pub api_requests: Vec<ApiRequest>,
    /// Custom resources' milestones.
    pub resources: Vec<ResourceTimes>,
    /// The cloud's inventory at the end.
    pub inventory: Vec<CloudResource>,
    /// The custom resources at the end.
    pub custom_resources: Vec<CustomResource>,
    /// The provider's metrics, if scraped.
    pub provider_metrics: Option<ProviderMetrics>,
    /// What ran and how it was measured.
    pub run: RunInfo,
    /// The run was interrupted (Ctrl-C) or a phase timed out.
    pub partial: bool,
    /// Where and why the run stopped early, if it did.
    #[serde(default)]
    pub stopped: Option<super::Stopped>,
    /// The provider's kills, in order.
    #[serde(default)]
    pub kills: Vec<super::Kill>,
    /// The audit at the end of each phase that met its `until`.
    #[serde(default)]
    pub phase_audits: Vec<super::PhaseAudit>,
    /// Memory samples of the run's components.
    #[serde(default)]
    pub memory: Vec<crate::measure::MemorySample>,
}

#[cfg(test)]
impl Observations {
    /// A run of a create until `start` and a hold until `end` (µs) that made `calls`.
    pub(crate) fn create_then_hold(mut calls: Vec<CloudCall>, start: u64, end: u64) -> Self {
        calls.sort_by_key(|c| c.at_us);
        Observations {
            duration_us: end,
            phases: vec![
                PhaseSpan::complete("create", 0, start),
                PhaseSpan::complete("hold", start, end),
            ],
            cloud_calls: calls,
            ..Observations::default()
        }
    }
}
