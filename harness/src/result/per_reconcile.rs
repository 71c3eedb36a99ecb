//! A run's calls per reconcile: the observations, as [`crate::measure::per_reconcile`]
//! takes them.

use std::collections::HashMap;

use super::observe::{Observations, object_key};
use crate::measure::per_reconcile::{Call, PerReconcile, Resource, per_reconcile};
use crate::scenario::Scenario;

/// The services whose calls are a Connect's: they authenticate the provider, they do not
/// touch the resource.
pub const CONNECT_SERVICES: [&str; 1] = ["sts"];

/// Calls per reconcile by kind, path and operation; `None` when no status write of the
/// provider was dated (the API server offers no journal).
#[must_use]
pub fn calls_per_reconcile(s: &Scenario, obs: &Observations) -> Option<PerReconcile> {
    let mut writes: HashMap<&str, Vec<u64>> = HashMap::new();
    for r in &obs.api_requests {
        if let Some(object) = &r.object {
            writes.entry(object).or_default().push(r.at_us);
        }
    }
    if writes.is_empty() {
        return None;
    }
    let kinds: HashMap<&str, (String, String)> = s
        .groups
        .iter()
        .map(|g| {
            let (plural, group) = g.kind.plural_and_group();
            (g.name.as_str(), (plural, group.to_owned()))
        })
        .collect();
    let labels: HashMap<&str, String> = s
        .groups
        .iter()
        .map(|g| (g.name.as_str(), g.kind.to_string()))
        .collect();
    let resources: Vec<Resource<'_>> = obs
        .resources
        .iter()
        .filter_map(|r| {
            let (plural, group) = kinds.get(r.group.as_str())?;
            let mut ends = writes
                .get(object_key(plural, group, &r.name).as_str())
                .cloned()
                .unwrap_or_default();
            ends.extend(r.gone_us);
            Some(Resource {
                kind: labels.get(r.group.as_str())?,
                cloud_name: r.external_name.as_deref().or(Some(r.name.as_str())),
                ends,
                deleted_us: r.deleted_us,
            })
        })
        .collect();
    let calls: Vec<Call<'_>> = obs
        .cloud_calls
        .iter()
        .map(|c| Call {
            at_us: c.at_us,
            name: &c.name,
            op: &c.op,
        })
        .collect();
    Some(per_reconcile(&calls, &resources, &CONNECT_SERVICES))
}
