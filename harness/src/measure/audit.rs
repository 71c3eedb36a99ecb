//! The orphan and duplicate audit: the cloud inventory against the custom resources.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// A resource in the cloud's inventory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloudResource {
    /// Account.
    pub account: String,
    /// Kind (`Bucket`, `Database`, `Record`).
    pub kind: String,
    /// The cloud's name (the external name).
    pub name: String,
    /// The custom resource that created it, from the tag the provider sets, if any.
    pub owner: Option<String>,
}

/// A custom resource at the end of the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CustomResource {
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// `crossplane.io/external-name`, once set.
    pub external_name: Option<String>,
    /// Its Ready condition is True.
    #[serde(default)]
    pub ready: bool,
    /// It has a deletionTimestamp.
    #[serde(default)]
    pub deleting: bool,
    /// `crossplane.io/external-create-pending` is newer than both outcomes
    /// (`external-create-succeeded`, `external-create-failed`): crossplane-runtime's
    /// `ExternalCreateIncomplete`.
    #[serde(default)]
    pub create_incomplete: bool,
    /// Its Synced condition's message when Synced is False (why it fails), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
}

/// What the audit found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Audit {
    /// Cloud resources no custom resource points at (kind/name).
    pub orphans: Vec<String>,
    /// Custom resources with more than one cloud resource (kind/name → count).
    pub duplicates: Vec<(String, u64)>,
    /// Custom resources whose external name is not in the cloud (kind/name).
    pub missing: Vec<String>,
    /// Custom resources with an incomplete create (kind/name).
    #[serde(default)]
    pub stuck: Vec<String>,
    /// Ready custom resources, not being deleted, whose cloud object is gone (kind/name).
    #[serde(default)]
    pub lost: Vec<String>,
}

/// Audits `inventory` against `resources`. A cloud resource belongs to a custom resource if
/// the custom resource's external name is its name (same kind), or its owner tag names it.
#[must_use]
pub fn audit(inventory: &[CloudResource], resources: &[CustomResource]) -> Audit {
    let by_external: BTreeSet<(&str, &str)> = resources
        .iter()
        .filter_map(|r| r.external_name.as_deref().map(|e| (r.kind.as_str(), e)))
        .collect();
    let names: BTreeSet<(&str, &str)> = resources
        .iter()
        .map(|r| (r.kind.as_str(), r.name.as_str()))
        .collect();
    let mut owned: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    let mut out = Audit::default();
    for c in inventory {
        let claimed = by_external.contains(&(c.kind.as_str(), c.name.as_str()));
        let owner = c
            .owner
            .as_deref()
            .filter(|o| names.contains(&(c.kind.as_str(), *o)));
        match (claimed, owner) {
            (_, Some(o)) => *owned.entry((c.kind.as_str(), o)).or_default() += 1,
            (true, None) => {}
            (false, None) => out.orphans.push(format!("{}/{}", c.kind, c.name)),
        }
    }
    out.duplicates = owned
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|((k, n), c)| (format!("{k}/{n}"), c))
        .collect();
    let cloud: BTreeSet<(&str, &str)> = inventory
        .iter()
        .map(|c| (c.kind.as_str(), c.name.as_str()))
        .collect();
    let missing: Vec<&CustomResource> = resources
        .iter()
        .filter(|r| {
            r.external_name
                .as_deref()
                .is_some_and(|e| !cloud.contains(&(r.kind.as_str(), e)))
        })
        .collect();
    let id = |r: &CustomResource| format!("{}/{}", r.kind, r.name);
    out.lost = missing
        .iter()
        .filter(|r| r.ready && !r.deleting)
        .map(|r| id(r))
        .collect();
    out.missing = missing.into_iter().map(id).collect();
    out.stuck = resources
        .iter()
        .filter(|r| r.create_incomplete)
        .map(id)
        .collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cloud(name: &str, owner: Option<&str>) -> CloudResource {
        CloudResource {
            account: "a".into(),
            kind: "Bucket".into(),
            name: name.into(),
            owner: owner.map(Into::into),
        }
    }

    fn cr(name: &str, ext: Option<&str>) -> CustomResource {
        CustomResource {
            kind: "Bucket".into(),
            name: name.into(),
            external_name: ext.map(Into::into),
            ready: false,
            deleting: false,
            create_incomplete: false,
            condition: None,
        }
    }

    #[test]
    fn a_ready_resource_whose_cloud_object_is_gone_is_lost_unless_it_is_being_deleted() {
        let ready = |name: &str, deleting: bool| CustomResource {
            ready: true,
            deleting,
            ..cr(name, Some(name))
        };
        let a = audit(
            &[cloud("b-2", None)],
            &[
                ready("b-0", false),
                ready("b-1", true),
                ready("b-2", false),
                cr("b-3", Some("b-3")),
            ],
        );
        assert_eq!(a.lost, vec!["Bucket/b-0".to_owned()]);
        assert_eq!(
            a.missing.len(),
            3,
            "every missing one is missing, Ready or not"
        );
    }

    #[test]
    fn a_resource_with_an_incomplete_create_is_stuck() {
        let pending = CustomResource {
            create_incomplete: true,
            ..cr("b-0", Some("b-0"))
        };
        let a = audit(&[cloud("b-0", None)], &[pending, cr("b-1", None)]);
        assert_eq!(a.stuck, vec!["Bucket/b-0".to_owned()]);
    }

    #[test]
    fn a_cloud_resource_nobody_claims_is_an_orphan() {
        let a = audit(
            &[cloud("x", None), cloud("y", None)],
            &[cr("b-0", Some("x"))],
        );
        assert_eq!(a.orphans, vec!["Bucket/y".to_owned()]);
        assert!(a.duplicates.is_empty() && a.missing.is_empty());
    }

    #[test]
    fn two_cloud_resources_created_for_one_custom_resource_are_a_duplicate() {
        let a = audit(
            &[cloud("x", Some("b-0")), cloud("x2", Some("b-0"))],
            &[cr("b-0", Some("x"))],
        );
        assert_eq!(a.duplicates, vec![("Bucket/b-0".to_owned(), 2)]);
        assert!(a.orphans.is_empty());
    }

    #[test]
    fn an_external_name_the_cloud_does_not_have_is_missing() {
        let a = audit(&[], &[cr("b-0", Some("gone")), cr("b-1", None)]);
        assert_eq!(a.missing, vec!["Bucket/b-0".to_owned()]);
    }
}
