//! Legacy discovery documents: `/version`, `/api`, `/apis`, and the resource lists of
//! each group-version.

use serde_json::{Value, json};

use crate::registry::{Registry, ResourceKind};

/// The Kubernetes version the server claims (kubectl's dispatcher picks its binary by
/// the minor version).
pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "gitVersion": "v1.33.0",
        "gitCommit": "mock-apiserver",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

fn address() -> Value {
    json!([{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}])
}

/// `/api`.
pub fn core_versions() -> Value {
    json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": address()})
}

fn group(name: &str, versions: &[String]) -> Value {
    let list: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    json!({"name": name, "versions": list, "preferredVersion": list.first().cloned().unwrap_or(Value::Null)})
}

/// `/apis`.
pub fn groups(registry: &Registry) -> Value {
    let groups: Vec<Value> = registry
        .groups()
        .into_iter()
        .filter(|(name, _)| !name.is_empty())
        .map(|(name, versions)| group(&name, &versions))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/{group}`, or `None` when the group is not served.
pub fn group_document(registry: &Registry, name: &str) -> Option<Value> {
    let (_, versions) = registry
        .groups()
        .into_iter()
        .find(|(g, _)| g == name && !g.is_empty())?;
    let mut document = group(name, &versions);
    document["kind"] = json!("APIGroup");
    document["apiVersion"] = json!("v1");
    Some(document)
}

/// `/api/v1` or `/apis/{group}/{version}`, or `None` when not served.
pub fn resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let kinds = registry.group_version(group, version)?;
    let mut resources = Vec::new();
    for kind in kinds {
        resources.push(resource(kind));
        if kind.status_subresource {
            resources.push(json!({
                "name": format!("{}/status", kind.plural), "singularName": "", "namespaced": kind.namespaced,
                "kind": kind.kind, "verbs": ["get", "patch", "update"],
            }));
        }
    }
    let group_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}),
    )
}

fn resource(kind: &ResourceKind) -> Value {
    let verbs = if kind.plural == "namespaces" && kind.group.is_empty() {
        json!([
            "create", "delete", "get", "list", "patch", "update", "watch"
        ])
    } else {
        json!([
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch"
        ])
    };
    let mut value = json!({
        "name": kind.plural, "singularName": kind.singular, "namespaced": kind.namespaced,
        "kind": kind.kind, "verbs": verbs,
    });
    if !kind.short_names.is_empty() {
        value["shortNames"] = json!(kind.short_names);
    }
    if !kind.categories.is_empty() {
        value["categories"] = json!(kind.categories);
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_core_resource_list_has_status_subresources_and_short_names() {
        let registry = Registry::with_builtins();
        let list = resource_list(&registry, "", "v1").unwrap();
        let names: Vec<&str> = list["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert!(
            names.contains(&"namespaces")
                && names.contains(&"namespaces/status")
                && names.contains(&"secrets")
        );
        assert!(resource_list(&registry, "nope", "v1").is_none());
    }

    #[test]
    fn groups_list_every_named_group_with_a_preferred_version() {
        let registry = Registry::with_builtins();
        let groups = groups(&registry);
        let events = groups["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["name"] == "events.k8s.io")
            .unwrap();
        assert_eq!(
            events["preferredVersion"]["groupVersion"],
            "events.k8s.io/v1"
        );
        assert!(group_document(&registry, "events.k8s.io").is_some());
        assert!(group_document(&registry, "").is_none());
    }
}
