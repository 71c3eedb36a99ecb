//! The CRD of an XR kind, generated from its XRD as core generates it.
//!
//! Follows crossplane-runtime's `pkg/xcrd/crd.go` (`ForCompositeResource`,
//! `genCrdVersion`), which core's definition controller
//! (crossplane/crossplane `internal/controller/apiextensions/definition/reconciler.go`) applies
//! for each XRD.
//!
//! # Semantics
//! - The CRD is named as the XRD, has its group, names (plus the `composite` category) and
//!   scope, its labels (merged with `spec.metadata.labels`) and `spec.metadata.annotations`,
//!   and the XRD as its controller owner.
//! - Each version is served as the XRD says, stored when referenceable, and gets the
//!   status subresource (and scale when the XRD asks). Its schema starts from
//!   [`schemas::base_props`]; the XRD schema's description and `x-kubernetes-validations`
//!   go to the root; `metadata.name` is limited to 63 characters (or the XRD's own smaller
//!   limit), since an XR's name is a label value on what it composes; the XRD's `spec` and
//!   `status` properties, required fields, validations and `oneOf` are merged in, and then
//!   core's own `spec.crossplane` and `status` fields are written over them.
//! - The printer columns are the XRD's, then SYNCED, READY, COMPOSITION,
//!   COMPOSITIONREVISION and AGE.

pub mod schemas;

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionSpec, CustomResourceDefinitionVersion,
    CustomResourceSubresourceStatus, CustomResourceSubresources, CustomResourceValidation,
    JSONSchemaProps,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::api::{
    ApiError, CompositeResourceDefinition, CompositeResourceDefinitionVersion, Scope,
};

/// The category every XR CRD joins (`CategoryComposite`).
pub const CATEGORY_COMPOSITE: &str = "composite";

/// The longest XR name: it is used as a label value.
const MAX_COMPOSITE_NAME_LENGTH: i64 = 63;

/// The CRD that serves the XRs an XRD defines.
///
/// # Errors
/// [`ApiError::SchemaMissing`] or [`ApiError::SchemaParse`] for a version whose schema is
/// absent or not a schema.
pub fn for_composite_resource(
    xrd: &CompositeResourceDefinition,
) -> Result<CustomResourceDefinition, ApiError> {
    let schemas = xrd.schemas()?;
    let mut names = xrd.spec.names.clone();
    names
        .categories
        .get_or_insert_with(Vec::new)
        .push(CATEGORY_COMPOSITE.to_owned());

    let versions = xrd
        .spec
        .versions
        .iter()
        .zip(schemas)
        .map(|(version, schema)| {
            let mut crdv = version_for(version, schema);
            crdv.additional_printer_columns
                .get_or_insert_with(Vec::new)
                .extend(schemas::printer_columns());
            let root = crdv
                .schema
                .as_mut()
                .and_then(|s| s.open_api_v3_schema.as_mut())
                .expect("version_for always sets a schema");
            properties_mut(root, "spec").extend(schemas::spec_props(
                xrd.spec.scope,
                xrd.spec.default_composition_update_policy,
            ));
            properties_mut(root, "status").extend(schemas::status_props());
            crdv
        })
        .collect();

    let mut labels = xrd.metadata.labels.clone();
    let mut annotations = None;
    if let Some(metadata) = &xrd.spec.metadata {
        if let Some(extra) = &metadata.labels {
            labels
                .get_or_insert_with(BTreeMap::new)
                .extend(extra.clone());
        }
        annotations.clone_from(&metadata.annotations);
    }

    Ok(CustomResourceDefinition {
        metadata: ObjectMeta {
            name: xrd.metadata.name.clone(),
            labels,
            annotations,
            owner_references: Some(vec![OwnerReference {
                api_version: "apiextensions.crossplane.io/v2".to_owned(),
                kind: "CompositeResourceDefinition".to_owned(),
                name: xrd.metadata.name.clone().unwrap_or_default(),
                uid: xrd.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..Default::default()
        },
        spec: CustomResourceDefinitionSpec {
            group: xrd.spec.group.clone(),
            names,
            scope: match xrd.spec.scope {
                Scope::Namespaced => "Namespaced",
                Scope::Cluster => "Cluster",
            }
            .to_owned(),
            versions,
            ..Default::default()
        },
        status: None,
    })
}

/// `genCrdVersion`: one CRD version from an XRD version and its parsed schema.
fn version_for(
    version: &CompositeResourceDefinitionVersion,
    xrd_schema: JSONSchemaProps,
) -> CustomResourceDefinitionVersion {
    let mut root = schemas::base_props();
    root.description = xrd_schema.description.clone();
    root.x_kubernetes_validations = xrd_schema.x_kubernetes_validations.clone();

    let max_length = xrd_schema
        .properties
        .as_ref()
        .and_then(|p| p.get("metadata"))
        .and_then(|m| m.properties.as_ref())
        .and_then(|p| p.get("name"))
        .and_then(|n| n.max_length)
        .map_or(MAX_COMPOSITE_NAME_LENGTH, |old| {
            old.min(MAX_COMPOSITE_NAME_LENGTH)
        });
    let root_properties = root.properties.get_or_insert_with(BTreeMap::new);
    let metadata = root_properties.entry("metadata".to_owned()).or_default();
    metadata.properties = Some(BTreeMap::from([(
        "name".to_owned(),
        JSONSchemaProps {
            type_: Some("string".to_owned()),
            max_length: Some(max_length),
            ..Default::default()
        },
    )]));

    let mut xrd_properties = xrd_schema.properties.unwrap_or_default();
    let x_spec = xrd_properties.remove("spec").unwrap_or_default();
    let spec = root_properties.entry("spec".to_owned()).or_default();
    spec.required = append(spec.required.take(), x_spec.required);
    spec.x_kubernetes_preserve_unknown_fields = x_spec.x_kubernetes_preserve_unknown_fields;
    spec.x_kubernetes_validations = append(
        spec.x_kubernetes_validations.take(),
        x_spec.x_kubernetes_validations,
    );
    spec.one_of = append(spec.one_of.take(), x_spec.one_of);
    spec.description = x_spec.description;
    spec.properties
        .get_or_insert_with(BTreeMap::new)
        .extend(x_spec.properties.unwrap_or_default());

    let x_status = xrd_properties.remove("status").unwrap_or_default();
    let status = root_properties.entry("status".to_owned()).or_default();
    status.required = x_status.required;
    status.x_kubernetes_validations = x_status.x_kubernetes_validations;
    status.description = x_status.description;
    status.one_of = x_status.one_of;
    status
        .properties
        .get_or_insert_with(BTreeMap::new)
        .extend(x_status.properties.unwrap_or_default());

    CustomResourceDefinitionVersion {
        name: version.name.clone(),
        served: version.served,
        storage: version.referenceable,
        deprecated: Some(version.deprecated.unwrap_or(false)),
        deprecation_warning: version.deprecation_warning.clone(),
        additional_printer_columns: Some(version.additional_printer_columns.clone()),
        schema: Some(CustomResourceValidation {
            open_api_v3_schema: Some(root),
        }),
        subresources: Some(CustomResourceSubresources {
            status: Some(CustomResourceSubresourceStatus(serde_json::json!({}))),
            scale: version.subresources.as_ref().and_then(|s| s.scale.clone()),
        }),
        selectable_fields: None,
    }
}

/// Go's `append(a, b...)`: nil when both are empty.
fn append<T>(a: Option<Vec<T>>, b: Option<Vec<T>>) -> Option<Vec<T>> {
    let joined: Vec<T> = a.into_iter().chain(b).flatten().collect();
    (!joined.is_empty()).then_some(joined)
}

fn properties_mut<'a>(
    root: &'a mut JSONSchemaProps,
    name: &str,
) -> &'a mut BTreeMap<String, JSONSchemaProps> {
    root.properties
        .get_or_insert_with(BTreeMap::new)
        .entry(name.to_owned())
        .or_default()
        .properties
        .get_or_insert_with(BTreeMap::new)
}

#[cfg(test)]
mod tests;
