//! Pruning: dropping the fields a structural schema does not declare
//! (`pruning.PruneWithOptions` of apiextensions-apiserver).

use serde_json::Value;

use super::Structural;

/// The fields of `metadata` an `ObjectMeta` has; others are unknown.
const OBJECT_META: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

impl Structural {
    /// Drops every field of a custom resource (`object`, the whole resource) that the
    /// schema does not declare, and returns the dropped paths (`spec.foo`,
    /// `spec.list[0].bar`), sorted.
    pub fn prune(&self, object: &mut Value) -> Vec<String> {
        let mut pruned = Vec::new();
        if let Value::Object(map) = object {
            let mut drop = Vec::new();
            for (key, value) in map.iter_mut() {
                match key.as_str() {
                    "apiVersion" | "kind" => {}
                    "metadata" => prune_metadata(value, "metadata", &mut pruned),
                    _ => match self.child(key) {
                        Some(schema) => schema.prune_at(value, &mut key.clone(), &mut pruned),
                        None if self.preserve_unknown => {}
                        None => drop.push(key.clone()),
                    },
                }
            }
            for key in drop {
                map.remove(&key);
                pruned.push(key);
            }
        }
        pruned.sort();
        pruned
    }

    /// The schema of an object's field `key`: its property, else `additionalProperties`.
    pub(super) fn child(&self, key: &str) -> Option<&Structural> {
        self.properties
            .get(key)
            .or(self.additional_properties.as_deref())
    }

    /// `path` is one buffer grown and cut back around each child.
    fn prune_at(&self, value: &mut Value, path: &mut String, pruned: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                let mut drop = Vec::new();
                for (key, child) in map.iter_mut() {
                    let len = path.len();
                    path.push('.');
                    path.push_str(key);
                    if self.embedded_resource && matches!(key.as_str(), "apiVersion" | "kind") {
                    } else if self.embedded_resource && key == "metadata" {
                        prune_metadata(child, path, pruned);
                    } else if let Some(schema) = self.child(key) {
                        if child.is_object() || child.is_array() {
                            schema.prune_at(child, path, pruned);
                        }
                    } else if !self.preserve_unknown {
                        drop.push(key.clone());
                    }
                    path.truncate(len);
                }
                for key in drop {
                    map.remove(&key);
                    pruned.push(format!("{path}.{key}"));
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    if !(item.is_object() || item.is_array()) {
                        continue;
                    }
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    match &self.items {
                        Some(schema) => schema.prune_at(item, path, pruned),
                        None if self.preserve_unknown => {}
                        None => prune_all(item, path, pruned),
                    }
                    path.truncate(len);
                }
            }
            _ => {}
        }
    }
}

/// Everything under a node without a schema is unknown.
fn prune_all(value: &mut Value, path: &str, pruned: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            pruned.extend(map.keys().map(|k| format!("{path}.{k}")));
            map.clear();
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                prune_all(item, &format!("{path}[{i}]"), pruned);
            }
        }
        _ => {}
    }
}

fn prune_metadata(value: &mut Value, path: &str, pruned: &mut Vec<String>) {
    if let Value::Object(map) = value {
        let unknown: Vec<String> = map
            .keys()
            .filter(|k| !OBJECT_META.contains(&k.as_str()))
            .cloned()
            .collect();
        for key in unknown {
            map.remove(&key);
            pruned.push(format!("{path}.{key}"));
        }
    }
}
