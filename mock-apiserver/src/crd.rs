//! CustomResourceDefinitions: turning a CRD object into served kinds.

use serde_json::{Value, json};

use std::sync::Arc;

use crate::registry::{PrinterColumn, ResourceKind, Schema, View};
use crate::schema::Structural;

/// A CRD that cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {detail}")]
pub struct CrdError {
    /// The offending field.
    pub field: &'static str,
    /// What is wrong.
    pub detail: String,
}

/// A parsed CRD: its group, plural and one kind per served version.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    /// `spec.group`.
    pub group: String,
    /// `spec.names.plural`.
    pub plural: String,
    /// The served versions, the storage version first.
    pub kinds: Vec<ResourceKind>,
    /// The `spec.names` block, echoed as `status.acceptedNames`.
    pub names: Value,
    /// The storage version.
    pub storage_version: String,
}

fn required<'a>(value: &'a Value, pointer: &str, field: &'static str) -> Result<&'a str, CrdError> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| CrdError {
            field,
            detail: "Required value".into(),
        })
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Reads a `apiextensions.k8s.io/v1` CustomResourceDefinition.
pub fn parse(crd: &Value) -> Result<Definition, CrdError> {
    let group = required(crd, "/spec/group", "spec.group")?.to_owned();
    let plural = required(crd, "/spec/names/plural", "spec.names.plural")?.to_owned();
    let kind = required(crd, "/spec/names/kind", "spec.names.kind")?.to_owned();
    let name = crd["metadata"]["name"].as_str().unwrap_or_default();
    if name != format!("{plural}.{group}") {
        return Err(CrdError {
            field: "metadata.name",
            detail: format!("Invalid value: {name:?}: must be spec.names.plural+\".\"+spec.group"),
        });
    }
    let namespaced = match crd["spec"]["scope"].as_str() {
        Some("Namespaced") => true,
        Some("Cluster") => false,
        _ => {
            return Err(CrdError {
                field: "spec.scope",
                detail: "Unsupported value: must be Namespaced or Cluster".into(),
            });
        }
    };
    let names = &crd["spec"]["names"];
    let singular = names["singular"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map_or_else(|| kind.to_ascii_lowercase(), str::to_owned);
    let versions = crd["spec"]["versions"]
        .as_array()
        .filter(|v| !v.is_empty())
        .ok_or_else(|| CrdError {
            field: "spec.versions",
            detail: "Required value: must have exactly one version marked as storage version"
                .into(),
        })?;
    let mut kinds = Vec::new();
    let mut storage_version = None;
    for version in versions {
        let version_name = required(version, "/name", "spec.versions[].name")?.to_owned();
        if version["storage"].as_bool() == Some(true) {
            if storage_version.is_some() {
                return Err(CrdError {
                    field: "spec.versions",
                    detail:
                        "Invalid value: must have exactly one version marked as storage version"
                            .into(),
                });
            }
            storage_version = Some(version_name.clone());
        }
        if version["served"].as_bool() == Some(false) {
            continue;
        }
        let printer_columns = version["additionalPrinterColumns"]
            .as_array()
            .map(|columns| {
                columns
                    .iter()
                    .map(|c| PrinterColumn {
                        name: c["name"].as_str().unwrap_or_default().to_owned(),
                        type_: c["type"].as_str().unwrap_or("string").to_owned(),
                        json_path: c["jsonPath"].as_str().unwrap_or_default().to_owned(),
                        priority: c["priority"].as_i64().unwrap_or(0),
                        description: c["description"].as_str().unwrap_or_default().to_owned(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        kinds.push(ResourceKind {
            group: group.clone(),
            version: version_name,
            plural: plural.clone(),
            singular: singular.clone(),
            kind: kind.clone(),
            namespaced,
            short_names: strings(&names["shortNames"]),
            categories: strings(&names["categories"]),
            status_subresource: version["subresources"].get("status").is_some(),
            custom: true,
            field_labels: Vec::new(),
            printer_columns,
            structural: match version["schema"].get("openAPIV3Schema") {
                Some(schema) => Some(Schema(Arc::new(Structural::compile(schema).map_err(
                    |e| CrdError {
                        field: "spec.versions[].schema.openAPIV3Schema",
                        detail: e.to_string(),
                    },
                )?))),
                None => None,
            },
            schema: version["schema"].get("openAPIV3Schema").cloned(),
            view: View::Plain,
        });
    }
    let storage_version = storage_version.ok_or_else(|| CrdError {
        field: "spec.versions",
        detail: "Invalid value: must have exactly one version marked as storage version".into(),
    })?;
    kinds.sort_by_key(|k| k.version != storage_version);
    Ok(Definition {
        group,
        plural,
        kinds,
        names: names.clone(),
        storage_version,
    })
}

/// The status a real server reports once a CRD is served.
pub fn status(definition: &Definition) -> Value {
    let condition = |type_: &str, reason: &str, message: &str| json!({"type": type_, "status": "True", "reason": reason, "message": message});
    json!({
        "acceptedNames": definition.names,
        "conditions": [
            condition("NamesAccepted", "NoConflicts", "no conflicts found"),
            condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
        ],
        "storedVersions": [definition.storage_version],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd() -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "buckets.example.org"},
            "spec": {
                "group": "example.org",
                "scope": "Namespaced",
                "names": {"plural": "buckets", "singular": "bucket", "kind": "Bucket", "shortNames": ["bk"]},
                "versions": [{
                    "name": "v1alpha1", "served": true, "storage": true,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                    "additionalPrinterColumns": [{"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"}]
                }]
            }
        })
    }

    #[test]
    fn a_crd_becomes_a_served_kind_with_columns_and_status() {
        let definition = parse(&crd()).unwrap();
        let kind = &definition.kinds[0];
        assert_eq!(
            (
                kind.group.as_str(),
                kind.version.as_str(),
                kind.kind.as_str()
            ),
            ("example.org", "v1alpha1", "Bucket")
        );
        assert!(kind.status_subresource && kind.custom && kind.namespaced);
        assert_eq!(kind.short_names, ["bk"]);
        assert_eq!(kind.printer_columns[0].name, "Ready");
        assert_eq!(status(&definition)["conditions"][1]["type"], "Established");
    }

    #[test]
    fn a_crd_without_a_storage_version_or_with_a_wrong_name_is_refused() {
        let mut no_storage = crd();
        no_storage["spec"]["versions"][0]["storage"] = json!(false);
        assert_eq!(parse(&no_storage).unwrap_err().field, "spec.versions");
        let mut misnamed = crd();
        misnamed["metadata"]["name"] = json!("other.example.org");
        assert_eq!(parse(&misnamed).unwrap_err().field, "metadata.name");
    }
}
