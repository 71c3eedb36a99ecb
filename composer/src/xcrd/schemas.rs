//! The schema pieces core adds to every XR CRD, after crossplane-runtime's
//! `pkg/xcrd/schemas.go` (`BaseProps`, `CompositeResourceSpecProps`,
//! `CompositeResourceStatusProps`, `CompositeResourcePrinterColumns`) for modern (v2) XRs:
//! the machinery fields nest under `spec.crossplane`; legacy XRs' claim and connection
//! secret fields are not generated.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, JSON, JSONSchemaProps, JSONSchemaPropsOrArray,
    JSONSchemaPropsOrBool,
};

use crate::api::{Scope, UpdatePolicy};

fn typed(type_: &str) -> JSONSchemaProps {
    JSONSchemaProps {
        type_: Some(type_.to_owned()),
        ..Default::default()
    }
}

fn object(
    properties: impl IntoIterator<Item = (&'static str, JSONSchemaProps)>,
) -> JSONSchemaProps {
    JSONSchemaProps {
        type_: Some("object".to_owned()),
        properties: Some(
            properties
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        ),
        ..Default::default()
    }
}

fn required(mut props: JSONSchemaProps, fields: &[&str]) -> JSONSchemaProps {
    props.required = Some(fields.iter().map(|&f| f.to_owned()).collect());
    props
}

/// The schema every generated CRD starts from: `apiVersion`, `kind`, `metadata`, and empty
/// `spec` (required) and `status` objects.
#[must_use]
pub fn base_props() -> JSONSchemaProps {
    required(
        object([
            ("apiVersion", typed("string")),
            ("kind", typed("string")),
            ("metadata", typed("object")),
            ("spec", object([])),
            ("status", object([])),
        ]),
        &["spec"],
    )
}

fn name_ref() -> JSONSchemaProps {
    required(object([("name", typed("string"))]), &["name"])
}

fn match_labels() -> JSONSchemaProps {
    let mut labels = typed("object");
    labels.additional_properties = Some(JSONSchemaPropsOrBool::Schema(Box::new(typed("string"))));
    required(object([("matchLabels", labels)]), &["matchLabels"])
}

/// `spec.crossplane`: how core reconciles the XR. A Namespaced XR's `resourceRefs` carry no
/// namespace (it composes only in its own).
#[must_use]
pub fn spec_props(scope: Scope, default_policy: UpdatePolicy) -> BTreeMap<String, JSONSchemaProps> {
    let mut policy = typed("string");
    policy.enum_ = Some(vec![JSON("Automatic".into()), JSON("Manual".into())]);
    policy.default = Some(JSON(default_policy.as_str().into()));

    let mut reference = vec![
        ("apiVersion", typed("string")),
        ("name", typed("string")),
        ("kind", typed("string")),
    ];
    if scope == Scope::Cluster {
        reference.push(("namespace", typed("string")));
    }
    let mut refs = typed("array");
    refs.items = Some(JSONSchemaPropsOrArray::Schema(Box::new(required(
        object(reference),
        &["apiVersion", "kind"],
    ))));
    // Controllers replace the whole array.
    refs.x_kubernetes_list_type = Some("atomic".to_owned());

    let mut crossplane = object([
        ("compositionRef", name_ref()),
        ("compositionSelector", match_labels()),
        ("compositionRevisionRef", name_ref()),
        ("compositionRevisionSelector", match_labels()),
        ("compositionUpdatePolicy", policy),
        ("resourceRefs", refs),
    ]);
    crossplane.description =
        Some("Configures how Crossplane will reconcile this composite resource".to_owned());
    BTreeMap::from([("crossplane".to_owned(), crossplane)])
}

/// `status.conditions`, a list map keyed by type, and `status.lastHandledReconcileAt`.
///
/// `lastHandledReconcileAt` is an addition: crossplane-runtime's generator does not declare
/// it, so on a real cluster the token core writes there is pruned unless the XRD's own
/// schema declares the field. It is declared here so the token is kept and can be asserted.
#[must_use]
pub fn status_props() -> BTreeMap<String, JSONSchemaProps> {
    let mut time = typed("string");
    time.format = Some("date-time".to_owned());
    let mut generation = typed("integer");
    generation.format = Some("int64".to_owned());
    let condition = required(
        object([
            ("lastTransitionTime", time),
            ("message", typed("string")),
            ("reason", typed("string")),
            ("status", typed("string")),
            ("type", typed("string")),
            ("observedGeneration", generation),
        ]),
        &["lastTransitionTime", "reason", "status", "type"],
    );
    let mut conditions = typed("array");
    conditions.description = Some("Conditions of the resource.".to_owned());
    conditions.x_kubernetes_list_map_keys = Some(vec!["type".to_owned()]);
    conditions.x_kubernetes_list_type = Some("map".to_owned());
    conditions.items = Some(JSONSchemaPropsOrArray::Schema(Box::new(condition)));
    BTreeMap::from([
        ("conditions".to_owned(), conditions),
        ("lastHandledReconcileAt".to_owned(), typed("string")),
    ])
}

/// SYNCED, READY, COMPOSITION, COMPOSITIONREVISION (wide) and AGE.
#[must_use]
pub fn printer_columns() -> Vec<CustomResourceColumnDefinition> {
    let column = |name: &str, type_: &str, path: &str, priority: Option<i32>| {
        CustomResourceColumnDefinition {
            name: name.to_owned(),
            type_: type_.to_owned(),
            json_path: path.to_owned(),
            priority,
            ..Default::default()
        }
    };
    vec![
        column(
            "SYNCED",
            "string",
            ".status.conditions[?(@.type=='Synced')].status",
            None,
        ),
        column(
            "READY",
            "string",
            ".status.conditions[?(@.type=='Ready')].status",
            None,
        ),
        column(
            "COMPOSITION",
            "string",
            ".spec.crossplane.compositionRef.name",
            None,
        ),
        column(
            "COMPOSITIONREVISION",
            "string",
            ".spec.crossplane.compositionRevisionRef.name",
            Some(1),
        ),
        column("AGE", "date", ".metadata.creationTimestamp", None),
    ]
}
