//! The minimal OpenAPI v3 that lets `kubectl apply` keep its default (strict)
//! validation: an index of group-versions, and per group-version a `patch` operation
//! for every resource naming its group-version-kind.

use serde_json::{Map, Value, json};

use crate::registry::Registry;

fn path_of(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `/openapi/v3`: every served group-version.
pub fn index(registry: &Registry) -> Value {
    let mut paths = Map::new();
    for (group, versions) in registry.groups() {
        for version in versions {
            let path = path_of(&group, &version);
            let hash = registry
                .group_version(&group, &version)
                .map_or(0, |k| k.len());
            paths.insert(
                path.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash={hash:x}")}),
            );
        }
    }
    json!({"paths": paths})
}

/// `/openapi/v3/{api/v1 | apis/g/v}`, or `None` when not served.
pub fn document(registry: &Registry, path: &str) -> Option<Value> {
    let (group, version) = match path.split('/').collect::<Vec<_>>().as_slice() {
        ["api", version] => (String::new(), (*version).to_owned()),
        ["apis", group, version] => ((*group).to_owned(), (*version).to_owned()),
        _ => return None,
    };
    let kinds = registry.group_version(&group, &version)?;
    let mut paths = Map::new();
    let mut schemas = Map::new();
    for kind in kinds {
        let gvk = json!({"group": group, "version": version, "kind": kind.kind});
        let schema_name = format!(
            "{}.{}.{}",
            if group.is_empty() {
                "io.k8s.api.core"
            } else {
                &group
            },
            version,
            kind.kind
        );
        let operation = json!({
            "operationId": format!("patch{}", kind.kind),
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": gvk,
            "parameters": [
                {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
                {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
                {"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
            ],
            "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema_name}")}}}}},
        });
        let prefix = format!("/{}", path_of(&group, &version));
        let object_path = if kind.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", kind.plural)
        } else {
            format!("{prefix}/{}/{{name}}", kind.plural)
        };
        paths.insert(object_path, json!({"patch": operation}));
        let mut schema = kind.schema.clone().unwrap_or_else(
            || json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
        );
        schema["x-kubernetes-group-version-kind"] = json!([gvk]);
        schemas.insert(schema_name, schema);
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_resource_has_a_patch_operation_naming_its_kind() {
        let registry = Registry::with_builtins();
        assert!(
            index(&registry)["paths"]["api/v1"]["serverRelativeURL"]
                .as_str()
                .unwrap()
                .starts_with("/openapi/v3/api/v1?hash=")
        );
        let doc = document(&registry, "api/v1").unwrap();
        let patch = &doc["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"];
        assert_eq!(
            patch["x-kubernetes-group-version-kind"]["kind"],
            "ConfigMap"
        );
        assert!(
            patch["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == "fieldValidation")
        );
        assert!(document(&registry, "apis/none/v1").is_none());
    }
}
