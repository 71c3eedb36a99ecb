//! A CRD that serves a kind with an open `spec` and `status`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::json;

/// A CRD of `kind` (`plural`, in `group`, served and stored at `version`, `scope`
/// `Cluster` or `Namespaced`) whose `spec` and `status` keep every field, with the status
/// subresource: what a stack without Crossplane's own CRDs serves Crossplane's kinds with,
/// the composer validating those objects itself.
///
/// # Panics
/// Never: the object is a CRD by construction.
#[must_use]
pub fn open_crd(
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
    scope: &str,
) -> CustomResourceDefinition {
    let open = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": plural},
            "scope": scope,
            "versions": [{"name": version, "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": open, "status": open}}}}],
        },
    }))
    .expect("a CRD")
}

/// Open CRDs of Crossplane's kinds the composer reads (`CompositeResourceDefinition`,
/// `Composition`, `CompositionRevision` and `Function`): what an API server without
/// Crossplane installed needs before the composer starts (`composer --print-crds`).
#[must_use]
pub fn crossplane_crds() -> [CustomResourceDefinition; 4] {
    let x = super::APIEXTENSIONS_GROUP;
    let crd = |group, version, kind, plural| open_crd(group, version, kind, plural, "Cluster");
    [
        crd(
            x,
            "v2",
            "CompositeResourceDefinition",
            "compositeresourcedefinitions",
        ),
        crd(x, "v1", "Composition", "compositions"),
        crd(x, "v1", "CompositionRevision", "compositionrevisions"),
        crd(super::PKG_GROUP, "v1", "Function", "functions"),
    ]
}
