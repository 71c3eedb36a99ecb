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
    // Each object's status writes, and its own writes (finalizer removals once deleted).
    let mut writes: HashMap<&str, Vec<(u64, bool)>> = HashMap::new();
    for r in &obs.api_requests {
        if let Some(object) = &r.object {
            writes
                .entry(object)
                .or_default()
                .push((r.at_us, r.main_write));
        }
    }
    if writes.values().flatten().all(|&(_, main)| main) {
        return None;
    }
    // Each group's kind: its object keys' plural and group, and its label in reports.
    let kinds: HashMap<&str, (String, String, String)> = s
        .groups
        .iter()
        .map(|g| {
            let (plural, group) = g.kind.plural_and_group();
            (
                g.name.as_str(),
                (plural, group.to_owned(), g.kind.to_string()),
            )
        })
        .collect();
    let resources: Vec<Resource<'_>> = obs
        .resources
        .iter()
        .filter_map(|r| {
            let (plural, group, label) = kinds.get(r.group.as_str())?;
            // A reconcile ends with its status write; once the resource is deleted, also
            // with an attempt to remove its finalizer (a conflict requeues it without a
            // status write, so the next reconcile's calls would join it).
            let deleted = r.deleted_us.unwrap_or(u64::MAX);
            let mut kept: Vec<(u64, bool)> = writes
                .get(object_key(plural, group, &r.name).as_str())
                .into_iter()
                .flatten()
                .filter(|&&(at, main)| !main || at > deleted)
                .copied()
                .collect();
            kept.sort_unstable();
            // The finalizer's removal that let it go ends its last reconcile already.
            let removed = kept.last().is_some_and(|&(_, main)| main);
            let mut ends: Vec<u64> = kept.iter().map(|&(at, _)| at).collect();
            if !removed {
                ends.extend(r.gone_us);
            }
            Some(Resource {
                kind: label,
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
            throttled: c.throttled || c.status == 429,
        })
        .collect();
    Some(per_reconcile(&calls, &resources, &CONNECT_SERVICES))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::measure::per_reconcile::Path;
    use crate::result::{ApiRequest, CallAction, CloudCall, ResourceTimes};
    use crate::scenario::parse;

    fn call(at_us: u64, op: &str) -> CloudCall {
        CloudCall {
            at_us,
            account: "default".into(),
            action: CallAction::Get,
            op: Arc::from(op),
            name: "b-0".into(),
            status: 200,
            throttled: false,
            retry_not_before_us: None,
        }
    }

    fn write(at_us: u64, status: bool) -> ApiRequest {
        ApiRequest {
            at_us,
            verb: "update".into(),
            resource: None,
            from_provider: true,
            object: Some(Arc::from(object_key(
                "buckets",
                "mockcloud.example.org",
                "b-0",
            ))),
            main_write: !status,
            sent_from_us: None,
        }
    }

    /// A deleted resource whose first finalizer removal conflicted: each attempt ends a
    /// reconcile, so the second observe is its own, and the removal that let it go ends
    /// the last (its disappearance a moment later adds no empty reconcile).
    #[test]
    fn each_finalizer_removal_ends_a_reconcile_of_a_deleted_resource() {
        let s = parse(
            "apiVersion: harness/v1\nname: t\nprovider: {maxReconcileRate: 10}\nresources:\n  - {name: b, kind: Bucket, count: 1}\nphases:\n  - {name: c, action: create}\n",
            "t.yaml",
        )
        .expect("valid");
        let obs = Observations {
            cloud_calls: vec![
                call(100, "s3:HeadBucket"),
                call(110, "s3:CreateBucket"),
                call(300, "s3:HeadBucket"),
                call(1_100, "s3:HeadBucket"),
                call(1_110, "s3:DeleteBucket"),
                call(1_300, "s3:HeadBucket"),
                call(1_500, "s3:HeadBucket"),
            ],
            api_requests: vec![
                write(120, false), // the create's annotation: not an end before deletion
                write(150, true),
                write(350, true),
                write(1_150, true),
                write(1_350, false), // conflict
                write(1_550, false), // removed
            ],
            resources: vec![ResourceTimes {
                name: "b-0".into(),
                group: "b".into(),
                created_in: "c".into(),
                created_us: 0,
                ready_us: Some(350),
                deleted_us: Some(1_000),
                gone_us: Some(1_600),
                external_name: Some("b-0".into()),
                expected_poll_s: 10.0,
            }],
            ..Observations::default()
        };
        let per = calls_per_reconcile(&s, &obs).expect("status writes dated");
        let kind = &per.kinds[0];
        assert_eq!(kind.empty, 0, "{kind:?}");
        let deleting = kind.path(Path::Deleting).expect("deleting reconciles");
        assert_eq!((deleting.reconciles, deleting.max), (2, 1), "{deleting:?}");
        assert_eq!(kind.path(Path::Create).unwrap().mean, 2.0);
        assert_eq!(kind.path(Path::Delete).unwrap().mean, 2.0);
    }
}
