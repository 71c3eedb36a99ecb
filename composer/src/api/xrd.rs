//! `CompositeResourceDefinition`, `apiextensions.crossplane.io/v2`: defines an XR kind.
//!
//! Follows crossplane/crossplane's `apis/apiextensions/v2/xrd_types.go`: the fields a
//! modern (v2) XR needs. Claims (`claimNames`), conversion webhooks and connection secret
//! keys are left out: v2 XRs have no claims, and the reconciler here writes no connection
//! secrets.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinitionNames, CustomResourceSubresourceScale,
    JSONSchemaProps,
};
use kube::CustomResource;
use serde::{Deserialize, Serialize};

use super::ApiError;

/// The specification of an XRD.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[kube(
    group = "apiextensions.crossplane.io",
    version = "v2",
    kind = "CompositeResourceDefinition",
    plural = "compositeresourcedefinitions",
    shortname = "xrd",
    schema = "disabled"
)]
#[serde(rename_all = "camelCase")]
pub struct CompositeResourceDefinitionSpec {
    /// The API group of the defined XR.
    pub group: String,
    /// The defined XR's kind, plural and so on, as a CRD's.
    pub names: CustomResourceDefinitionNames,
    /// Namespaced (the default) or Cluster.
    #[serde(default)]
    pub scope: Scope,
    /// The Composition an XR without one gets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_composition_ref: Option<CompositionRef>,
    /// The Composition every XR gets, whatever it asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enforced_composition_ref: Option<CompositionRef>,
    /// The update policy of XRs that name none (the XRD's CRD defaults it to Automatic).
    #[serde(default)]
    pub default_composition_update_policy: UpdatePolicy,
    /// The versions of the XR kind.
    pub versions: Vec<CompositeResourceDefinitionVersion>,
    /// Labels and annotations for the generated CRD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<SpecMetadata>,
}

/// Whether XRs of a kind live in a namespace (core's `CompositeResourceScope`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Scope {
    /// XRs live in a namespace and compose resources in it (the default).
    #[default]
    Namespaced,
    /// XRs are cluster-scoped.
    Cluster,
}

/// Whether an XR follows its Composition's newest revision (core's `UpdatePolicy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum UpdatePolicy {
    /// Move to each new revision (the default).
    #[default]
    Automatic,
    /// Stay on the revision the XR names.
    Manual,
}

impl UpdatePolicy {
    /// The name the API uses.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Automatic => "Automatic",
            Self::Manual => "Manual",
        }
    }
}

/// A reference to a Composition by name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompositionRef {
    /// The Composition's name.
    pub name: String,
}

/// Labels and annotations an XRD gives its CRD.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecMetadata {
    /// Labels added to the CRD's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// The CRD's annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// One version of the XR kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompositeResourceDefinitionVersion {
    /// The version's name, e.g. `v1alpha1`.
    pub name: String,
    /// Whether Compositions reference this version; exactly one is (it is the storage one).
    pub referenceable: bool,
    /// Whether the API serves it.
    pub served: bool,
    /// Whether it is deprecated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<bool>,
    /// The warning a deprecated version answers with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecation_warning: Option<String>,
    /// The schema of the XR's own fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<CompositeResourceValidation>,
    /// Extra printer columns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_printer_columns: Vec<CustomResourceColumnDefinition>,
    /// Subresources beyond status (only scale).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresources: Option<VersionSubresources>,
}

/// The subresources an XRD version may add.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VersionSubresources {
    /// The scale subresource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<CustomResourceSubresourceScale>,
}

/// A version's schema, kept as written until the CRD is generated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompositeResourceValidation {
    /// The OpenAPI v3 schema, raw (core keeps a `runtime.RawExtension`).
    #[serde(rename = "openAPIV3Schema", default)]
    pub open_api_v3_schema: serde_json::Value,
}

impl CompositeResourceDefinition {
    /// The version Compositions reference (core's `GetCompositeGroupVersionKind` takes the
    /// last referenceable one; [`CompositeResourceDefinition::validate`] insists on one).
    #[must_use]
    pub fn referenceable_version(&self) -> Option<&str> {
        self.spec
            .versions
            .iter()
            .rev()
            .find(|v| v.referenceable)
            .map(|v| v.name.as_str())
    }

    /// The XR kind's `apiVersion`, `group/version` of the referenceable version.
    #[must_use]
    pub fn composite_api_version(&self) -> Option<String> {
        self.referenceable_version()
            .map(|v| format!("{}/{v}", self.spec.group))
    }

    /// The parsed schema of each version, in order.
    ///
    /// # Errors
    /// [`ApiError::SchemaMissing`] for a version without one, [`ApiError::SchemaParse`] for
    /// one that is not an OpenAPI v3 schema (core's `parseSchema` unmarshals it into a
    /// `JSONSchemaProps` the same way).
    pub fn schemas(&self) -> Result<Vec<JSONSchemaProps>, ApiError> {
        let xrd = self.metadata.name.clone().unwrap_or_default();
        self.spec
            .versions
            .iter()
            .map(|version| {
                let Some(schema) = &version.schema else {
                    return Err(ApiError::SchemaMissing {
                        xrd: xrd.clone(),
                        version: version.name.clone(),
                    });
                };
                serde_json::from_value(schema.open_api_v3_schema.clone()).map_err(|source| {
                    ApiError::SchemaParse {
                        xrd: xrd.clone(),
                        version: version.name.clone(),
                        source,
                    }
                })
            })
            .collect()
    }

    /// Checks what the XRD's own CRD validation would refuse and what the CRD generation
    /// needs: the name `<plural>.<group>` (the XR CRD's name, which the API server insists
    /// on), exactly one referenceable version, and a schema per version that parses.
    ///
    /// # Errors
    /// The first problem found.
    pub fn validate(&self) -> Result<(), ApiError> {
        let name = self.metadata.name.as_deref().unwrap_or_default();
        let expected = format!("{}.{}", self.spec.names.plural, self.spec.group);
        if name != expected {
            return Err(ApiError::Name {
                xrd: name.to_owned(),
                expected,
            });
        }
        let found = self
            .spec
            .versions
            .iter()
            .filter(|v| v.referenceable)
            .count();
        if found != 1 {
            return Err(ApiError::Referenceable {
                xrd: self.metadata.name.clone().unwrap_or_default(),
                found,
            });
        }
        self.schemas().map(|_| ())
    }
}

/// An XRD's JSON, for the crate's tests: `xbuckets.example.org`, of `XBucket`s with one
/// referenceable version `v1` whose schema is `schema`.
#[cfg(test)]
pub(crate) fn xbucket_json(schema: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "apiextensions.crossplane.io/v2",
        "kind": "CompositeResourceDefinition",
        "metadata": {"name": "xbuckets.example.org"},
        "spec": {
            "group": "example.org",
            "names": {"kind": "XBucket", "plural": "xbuckets"},
            "versions": [{
                "name": "v1",
                "referenceable": true,
                "served": true,
                "schema": {"openAPIV3Schema": schema},
            }],
        },
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn xrd(schema: serde_json::Value) -> CompositeResourceDefinition {
        serde_json::from_value(xbucket_json(schema)).unwrap()
    }

    #[test]
    fn an_xrd_defaults_to_namespaced_and_automatic() {
        let xrd = xrd(json!({"type": "object"}));
        assert_eq!(xrd.spec.scope, Scope::Namespaced);
        assert_eq!(
            xrd.spec.default_composition_update_policy,
            UpdatePolicy::Automatic
        );
        assert_eq!(
            xrd.composite_api_version().as_deref(),
            Some("example.org/v1")
        );
        xrd.validate().unwrap();
    }

    #[test]
    fn a_schema_that_is_not_a_schema_is_refused_naming_the_version() {
        let xrd = xrd(json!({"type": "object", "properties": {"spec": {"type": 7}}}));
        let error = xrd.validate().unwrap_err();
        assert!(matches!(error, ApiError::SchemaParse { ref version, .. } if version == "v1"));
        assert_eq!(
            error.to_string(),
            r#"XRD "xbuckets.example.org" version "v1": cannot parse validation schema"#
        );
    }

    #[test]
    fn a_version_without_a_schema_is_refused() {
        let mut xrd = xrd(json!({}));
        xrd.spec.versions[0].schema = None;
        assert!(matches!(
            xrd.validate(),
            Err(ApiError::SchemaMissing { .. })
        ));
    }

    #[test]
    fn an_xrd_needs_exactly_one_referenceable_version() {
        let mut xrd = xrd(json!({"type": "object"}));
        xrd.spec.versions[0].referenceable = false;
        assert!(matches!(
            xrd.validate(),
            Err(ApiError::Referenceable { found: 0, .. })
        ));
    }

    #[test]
    fn an_xrd_must_be_named_plural_dot_group() {
        // Found by the composer_inputs fuzz target: the XR CRD takes the XRD's name, and
        // a CRD not named `<plural>.<group>` is refused by the API server.
        let mut xrd = xrd(json!({"type": "object"}));
        assert!(xrd.validate().is_ok());
        xrd.metadata.name = Some("xbucket.example.org".to_owned());
        let error = xrd.validate().unwrap_err();
        assert!(matches!(error, ApiError::Name { .. }));
        assert_eq!(
            error.to_string(),
            r#"XRD "xbucket.example.org": the name must be spec.names.plural+"."+spec.group, "xbuckets.example.org""#
        );
    }
}
