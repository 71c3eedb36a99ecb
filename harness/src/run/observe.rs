//! Observations from what the driver did and what the sources report: the one place that
//! joins them. Inventory and the custom resources at the end are read here too, through
//! the target.

use kube::api::{Api, DynamicObject, ListParams};
use provider::crd::EXTERNAL_NAME_ANNOTATION;

use super::clock::{Micros, RunClock};
use super::driver::Log;
use super::objects::{kind_info, kind_of_collection, namespace, scenario_kinds};
use super::source::watches::SeenMap;
use super::source::{ApiReport, CloudReport, ProviderReport};
use super::target::{CloudControl, TargetInfo};
use crate::measure::{CloudResource, CustomResource};
use crate::result::{Dropped, Observations, ResourceTimes, RunInfo, Signal, StopCause, Stopped};
use crate::scenario::Scenario;

/// What every source reported at the end of a run.
pub struct Reports {
    /// The cloud journal.
    pub cloud: CloudReport,
    /// The API requests.
    pub api: ApiReport,
    /// The provider's counters.
    pub provider: ProviderReport,
    /// The watches.
    pub seen: SeenMap,
}

/// Facts about the target for the result.
pub struct TargetFacts {
    /// Where the run happened.
    pub info: TargetInfo,
    /// How many times the provider was started or rolled.
    pub provider_starts: u32,
    /// Notes on how it was measured.
    pub notes: Vec<String>,
}

fn resources(log: &Log, seen: &SeenMap) -> Vec<ResourceTimes> {
    log.records
        .values()
        .map(|r| {
            let s = seen.get(&(r.kind.clone(), r.name.clone()));
            ResourceTimes {
                name: r.name.clone(),
                group: r.group.clone(),
                created_in: r.created_in.clone(),
                created_us: r.created_us,
                ready_us: s.and_then(|s| s.ready_us),
                deleted_us: r.deleted_us,
                gone_us: s.and_then(|s| s.gone_us),
                external_name: s.and_then(|s| s.external_name.clone()),
                expected_poll_s: r.expected_poll_s,
            }
        })
        .collect()
}

/// The cloud's live resources at the end.
pub async fn inventory(cloud: &impl CloudControl) -> Vec<CloudResource> {
    match cloud.inventory().await {
        Ok(items) => items
            .into_iter()
            .map(|r| CloudResource {
                account: r.account,
                kind: kind_of_collection(r.collection).unwrap_or("?").to_owned(),
                name: r.name,
                owner: None,
            })
            .collect(),
        Err(e) => {
            tracing::error!(error = %e, "cannot read the cloud's inventory");
            Vec::new()
        }
    }
}

/// The managed resources left in the run's namespace at the end.
pub async fn custom_resources(client: &kube::Client, s: &Scenario) -> Vec<CustomResource> {
    let ns = namespace(s);
    let mut out = Vec::new();
    for kind in scenario_kinds(s).into_iter().map(kind_info) {
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &kind.resource);
        match api.list(&ListParams::default()).await {
            Ok(list) => out.extend(list.items.into_iter().map(|o| {
                CustomResource {
                    kind: kind.name.to_owned(),
                    external_name: o
                        .metadata
                        .annotations
                        .as_ref()
                        .and_then(|a| a.get(EXTERNAL_NAME_ANNOTATION))
                        .cloned(),
                    name: o.metadata.name.unwrap_or_default(),
                }
            })),
            Err(e) => {
                tracing::warn!(error = %e, kind = kind.name, "cannot list custom resources for the audit");
            }
        }
    }
    out
}

/// The result's description of the run.
fn run_info(target: TargetFacts, reports: &Reports, clock: &RunClock) -> RunInfo {
    let notes = target
        .notes
        .iter()
        .chain(&reports.api.notes)
        .chain(&reports.provider.notes)
        .cloned()
        .collect();
    RunInfo {
        harness: env!("CARGO_PKG_VERSION").to_owned(),
        target: target.info,
        api_requests_measured_by: reports.api.measure.describe().to_owned(),
        dropped: Dropped {
            api: reports.api.dropped,
            cloud: reports.cloud.dropped,
        },
        provider_starts: target.provider_starts,
        notes,
        started_at: Some(
            clock
                .wall_start()
                .strftime("%Y-%m-%dT%H:%M:%SZ")
                .to_string(),
        ),
        commit: None,
    }
}

/// Everything the run observed. `interrupted` (the signal) marks the result partial, as do
/// a journal that could not be read or dropped entries, and a phase that did not complete;
/// the last phase the log has is where the run stopped.
#[must_use]
pub fn observations(
    log: &Log,
    reports: Reports,
    target: TargetFacts,
    inventory: Vec<CloudResource>,
    custom_resources: Vec<CustomResource>,
    (clock, duration): (&RunClock, Micros),
    interrupted: Option<Signal>,
) -> Observations {
    if reports.api.dropped > 0 || reports.cloud.dropped > 0 {
        tracing::warn!(
            api_dropped = reports.api.dropped,
            cloud_dropped = reports.cloud.dropped,
            "journal entries were dropped: the result is partial"
        );
    }
    let stopped = log.spans.iter().find(|p| !p.completed).map(|p| Stopped {
        phase: p.name.clone(),
        cause: interrupted.map_or(StopCause::TimedOut, StopCause::Interrupted),
    });
    let partial = interrupted.is_some()
        || reports.cloud.failed
        || reports.api.dropped > 0
        || reports.cloud.dropped > 0
        || log.spans.iter().any(|p| !p.completed);
    let run = run_info(target, &reports, clock);
    Observations {
        duration_us: duration.0,
        phases: log.spans.clone(),
        resources: resources(log, &reports.seen),
        cloud_calls: reports.cloud.calls,
        api_requests: reports.api.requests,
        inventory,
        custom_resources,
        provider_metrics: reports.provider.metrics,
        run,
        partial,
        stopped,
    }
}
