//! `spec.crossplane`: the fields core keeps on a modern XR (crossplane-runtime's
//! `pkg/resource/unstructured/composite/composite.go` reads and writes them there).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::api::UpdatePolicy;

/// An XR's `spec.crossplane`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Machinery {
    /// The selected Composition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub composition_ref: Option<NameRef>,
    /// Labels a Composition must have to be selected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub composition_selector: Option<LabelSelector>,
    /// The selected revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub composition_revision_ref: Option<NameRef>,
    /// Labels an Automatic XR's revision must have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub composition_revision_selector: Option<LabelSelector>,
    /// Automatic or Manual; the CRD defaults it, so it is absent only before defaulting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub composition_update_policy: Option<UpdatePolicy>,
    /// What the XR composed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_refs: Vec<ResourceRef>,
}

/// A reference by name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NameRef {
    /// The name.
    pub name: String,
}

/// `matchLabels`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    /// Labels that must all match.
    #[serde(default)]
    pub match_labels: BTreeMap<String, String>,
}

/// A composed resource the XR references.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRef {
    /// `group/version`.
    pub api_version: String,
    /// The kind.
    pub kind: String,
    /// The name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The namespace, for a Cluster XR's namespaced resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

impl Machinery {
    /// Reads `spec.crossplane` from an XR's JSON; absent fields are `None`.
    ///
    /// # Errors
    /// When a field has the wrong shape (the CRD's schema prevents that on a server).
    pub fn read(xr: &serde_json::Value) -> Result<Self, serde_json::Error> {
        match xr.pointer("/spec/crossplane") {
            Some(value) => serde_json::from_value(value.clone()),
            None => Ok(Self::default()),
        }
    }

    /// Writes this as the XR's `spec.crossplane`, creating `spec` when absent.
    ///
    /// # Panics
    /// When `xr` is not a JSON object, or its `spec` is not one.
    pub fn write(&self, xr: &mut serde_json::Value) {
        let spec = xr
            .as_object_mut()
            .expect("an XR is an object")
            .entry("spec")
            .or_insert_with(|| serde_json::json!({}));
        spec.as_object_mut()
            .expect("an XR's spec is an object")
            .insert(
                "crossplane".to_owned(),
                serde_json::to_value(self).expect("plain data serializes"),
            );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn machinery_reads_and_writes_spec_crossplane_leaving_the_rest() {
        let mut xr = json!({"spec": {"region": "eu", "crossplane": {
            "compositionRef": {"name": "c"},
            "compositionUpdatePolicy": "Manual",
            "resourceRefs": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "a"}],
        }}});
        let mut m = Machinery::read(&xr).unwrap();
        assert_eq!(m.composition_ref, Some(NameRef { name: "c".into() }));
        assert_eq!(m.composition_update_policy, Some(UpdatePolicy::Manual));
        assert_eq!(m.resource_refs[0].name.as_deref(), Some("a"));
        m.composition_revision_ref = Some(NameRef { name: "c-1".into() });
        m.write(&mut xr);
        assert_eq!(xr["spec"]["region"], "eu");
        assert_eq!(
            xr["spec"]["crossplane"]["compositionRevisionRef"]["name"],
            "c-1"
        );
        assert_eq!(Machinery::read(&json!({})).unwrap(), Machinery::default());
    }
}
