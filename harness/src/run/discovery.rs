//! Whether the API server serves every kind the scenario names. Validation resolves kinds
//! against a catalogue (the profile's `kinds`, or the provider's own CRDs); a cluster, or a
//! provider's own CRD files, may lack one, which only the API server can say. Checked by
//! discovery after the target starts and before the run's first write, so that an unserved
//! kind is a setup error (exit 2) naming its place in the scenario, not a create phase that
//! times out with every resource missing.

use std::collections::BTreeMap;

use kube::api::ApiResource;

use super::error::{RunError, Unserved, UnservedKinds};
use super::objects::resource;
use crate::scenario::{Pos, Scenario};

/// Every kind a run of `s` writes, with its place: the groups', then the objects'.
fn named_kinds(s: &Scenario) -> Vec<(ApiResource, Pos)> {
    s.groups
        .iter()
        .map(|g| (resource(&g.kind), g.pos))
        .chain(s.objects.iter().map(|o| (o.kind.resource(), o.pos)))
        .collect()
}

/// What the server serves in `group`, as (version, kind); empty when the group is not
/// served.
async fn served_in(client: &kube::Client, group: &str) -> Result<Vec<(String, String)>, RunError> {
    let kube_err = |what: String| move |source| RunError::Kube { what, source };
    let versions: Vec<String> = if group.is_empty() {
        client
            .list_core_api_versions()
            .await
            .map_err(kube_err("list the API server's core versions".to_owned()))?
            .versions
    } else {
        let groups = client
            .list_api_groups()
            .await
            .map_err(kube_err("list the API server's groups".to_owned()))?;
        groups
            .groups
            .into_iter()
            .find(|g| g.name == group)
            .map(|g| g.versions.into_iter().map(|v| v.group_version).collect())
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for gv in versions {
        let list = if group.is_empty() {
            client.list_core_api_resources(&gv).await
        } else {
            client.list_api_group_resources(&gv).await
        }
        .map_err(kube_err(format!("list the kinds of {gv}")))?;
        let version = gv.rsplit('/').next().unwrap_or_default().to_owned();
        out.extend(
            list.resources
                .into_iter()
                .filter(|r| !r.name.contains('/'))
                .map(|r| (version.clone(), r.kind)),
        );
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The kinds of `named` that `served` (by group) lacks.
fn unserved(
    s: &Scenario,
    named: &[(ApiResource, Pos)],
    served: &BTreeMap<String, Vec<(String, String)>>,
) -> Vec<Unserved> {
    named
        .iter()
        .filter_map(|(r, pos)| {
            let in_group = served.get(&r.group).map(Vec::as_slice).unwrap_or_default();
            let found = in_group
                .iter()
                .any(|(v, k)| *v == r.version && *k == r.kind);
            (!found).then(|| Unserved {
                place: s.place(*pos),
                api_version: r.api_version.clone(),
                kind: r.kind.clone(),
                group: r.group.clone(),
                served: in_group.iter().map(|(v, k)| format!("{v} {k}")).collect(),
            })
        })
        .collect()
}

/// Checks that the API server of `client` serves every kind `s` writes.
///
/// # Errors
/// [`RunError::UnservedKinds`] naming each kind it does not serve, with its place and what
/// the server serves in its group; [`RunError::Kube`] when discovery fails.
pub async fn check_served(client: &kube::Client, s: &Scenario) -> Result<(), RunError> {
    let named = named_kinds(s);
    let mut served: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for (r, _) in &named {
        if !served.contains_key(&r.group) {
            let kinds = served_in(client, &r.group).await?;
            served.insert(r.group.clone(), kinds);
        }
    }
    let kinds = unserved(s, &named, &served);
    if kinds.is_empty() {
        Ok(())
    } else {
        Err(UnservedKinds { kinds }.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCENARIO: &str = "apiVersion: harness/v1
name: t
profile:
  settings: {maxReconcileRate: 5, rateLimitModel: crossplane, pollInterval: 1m, pollJitterPercent: 0, pollJitterSizing: per-resource, minPollInterval: 0s, scopedBuckets: false, backoffBase: 1s, backoffMax: 1m, clientQps: 25, clientBurst: 50}
  kinds:
    - {apiVersion: s3.aws.upbound.io/v1beta1, kind: Bucket, scope: Cluster}
    - {apiVersion: ec2.aws.upbound.io/v1beta1, kind: VPC, scope: Cluster}
calls:
  - {apiVersion: s3.aws.upbound.io/v1beta1, kind: Bucket, observe: 1, create: 1, update: 1, delete: 1}
  - {apiVersion: ec2.aws.upbound.io/v1beta1, kind: VPC, observe: 1, create: 1, update: 1, delete: 1}
resources:
  - {name: bucket, apiVersion: s3.aws.upbound.io/v1beta1, kind: Bucket, count: 1}
  - {name: vpc, apiVersion: ec2.aws.upbound.io/v1beta1, kind: VPC, count: 1}
phases:
  - {name: create, action: create}
";

    #[test]
    fn an_unserved_kind_is_named_at_its_place_with_what_its_group_serves() {
        let s = crate::scenario::parse(SCENARIO, "t.yaml").expect("valid");
        let named = named_kinds(&s);
        let served = BTreeMap::from([
            (
                "s3.aws.upbound.io".to_owned(),
                vec![
                    ("v1beta1".to_owned(), "BucketAcl".to_owned()),
                    ("v1beta2".to_owned(), "Bucket".to_owned()),
                ],
            ),
            ("ec2.aws.upbound.io".to_owned(), Vec::new()),
        ]);
        let e = UnservedKinds {
            kinds: unserved(&s, &named, &served),
        };
        assert_eq!(
            e.to_string(),
            "t.yaml:12:65: the API server does not serve s3.aws.upbound.io/v1beta1 Bucket, expected one it serves in s3.aws.upbound.io: v1beta1 BucketAcl, v1beta2 Bucket\n\
             t.yaml:13:63: the API server does not serve ec2.aws.upbound.io/v1beta1 VPC, and serves no kind in ec2.aws.upbound.io: expected the provider's CustomResourceDefinitions to be installed (the process target serves the profile's `crds`)"
        );
        let served = BTreeMap::from([
            (
                "s3.aws.upbound.io".to_owned(),
                vec![("v1beta1".to_owned(), "Bucket".to_owned())],
            ),
            (
                "ec2.aws.upbound.io".to_owned(),
                vec![("v1beta1".to_owned(), "VPC".to_owned())],
            ),
        ]);
        assert!(unserved(&s, &named, &served).is_empty());
    }
}
