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
