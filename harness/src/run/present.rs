//! What exists now, read for an audit: the cloud's inventory and the managed resources in
//! the run's namespace (at the end of a phase, after a kill, and at the end of the run).
//! A leaf of the run layer: the audits source and the end of the run read it.

use kube::api::{Api, DynamicObject, ListParams};
use provider::crd::EXTERNAL_NAME_ANNOTATION;
use provider::reconciler::meta::CreateStamps;

use super::objects::{kind_of_collection, scenario_kinds};
use super::source::watches::has_conditions;
use super::target::CloudControl;
use crate::measure::{CloudResource, CustomResource};
use crate::scenario::Scenario;

/// The cloud's live resources now.
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

/// The message of a Synced=False condition (or its reason without one), if any.
fn failing_condition(data: &serde_json::Value) -> Option<String> {
    let conditions = data.get("status")?.get("conditions")?.as_array()?;
    let synced = conditions
        .iter()
        .find(|c| c.get("type").and_then(serde_json::Value::as_str) == Some("Synced"))?;
    if synced.get("status").and_then(serde_json::Value::as_str) != Some("False") {
        return None;
    }
    synced
        .get("message")
        .or_else(|| synced.get("reason"))
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
}

/// The managed resources of the scenario's kinds (in their namespaces) now.
pub async fn custom_resources(client: &kube::Client, s: &Scenario) -> Vec<CustomResource> {
    let mut out = Vec::new();
    for kind in scenario_kinds(s) {
        let api: Api<DynamicObject> = kind.api(client);
        match api.list(&ListParams::default()).await {
            Ok(list) => out.extend(
                list.items
                    .into_iter()
                    .map(|o| custom_resource(&kind.name, &kind.ready, o)),
            ),
            Err(e) => {
                tracing::warn!(error = %e, kind = kind.name, "cannot list custom resources for the audit");
            }
        }
    }
    out
}

/// What the audit needs of one managed resource: its external name, whether it is Ready
/// and being deleted, and whether its create is incomplete (crossplane-runtime's
/// `ExternalCreateIncomplete`, read with the provider's own code).
fn custom_resource(kind: &str, ready: &[(String, String)], o: DynamicObject) -> CustomResource {
    let annotations = o.metadata.annotations.unwrap_or_default();
    let ready = has_conditions(&o.data, ready);
    CustomResource {
        kind: kind.to_owned(),
        external_name: annotations.get(EXTERNAL_NAME_ANNOTATION).cloned(),
        name: o.metadata.name.unwrap_or_default(),
        ready,
        deleting: o.metadata.deletion_timestamp.is_some(),
        create_incomplete: CreateStamps::of(&annotations).incomplete(),
        condition: failing_condition(&o.data),
    }
}
