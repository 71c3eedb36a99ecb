//! Stored objects: serialized once, with the fields lookups need kept beside the bytes.

use bytes::Bytes;
use serde_json::{Map, Value};

/// One stored object: its JSON (as served), the parsed value it was serialized from, and
/// the fields that selectors and the finalizer logic need.
///
/// Keeping the serialized form makes lists and watch fan-out a matter of copying
/// bytes; keeping the value beside it spares every write the parse of the object it
/// changes (a `Value` round-trips through serde_json exactly, so the two always agree).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredObject {
    /// `metadata.namespace`, empty for cluster-scoped objects.
    pub namespace: Box<str>,
    /// `metadata.name`.
    pub name: Box<str>,
    /// `metadata.resourceVersion` as a number.
    pub resource_version: u64,
    /// `metadata.labels`, sorted by key.
    pub labels: Box<[(Box<str>, Box<str>)]>,
    /// The object as served, compact JSON.
    pub json: Bytes,
    /// The object `json` was serialized from.
    value: std::sync::Arc<Value>,
}

impl StoredObject {
    /// Serializes `value` (which must already carry its resourceVersion).
    pub fn from_value(value: &Value, resource_version: u64) -> Self {
        Self::from_owned(value.clone(), resource_version)
    }

    /// Serializes `value` (which must already carry its resourceVersion) and keeps it.
    pub fn from_owned(value: Value, resource_version: u64) -> Self {
        let meta = &value["metadata"];
        let mut labels: Vec<(Box<str>, Box<str>)> = meta["labels"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.as_str().into(), v.as_str().unwrap_or_default().into()))
                    .collect()
            })
            .unwrap_or_default();
        labels.sort();
        Self {
            namespace: meta["namespace"].as_str().unwrap_or_default().into(),
            name: meta["name"].as_str().unwrap_or_default().into(),
            resource_version,
            labels: labels.into_boxed_slice(),
            json: Bytes::from(serde_json::to_vec(&value).unwrap_or_default()),
            value: std::sync::Arc::new(value),
        }
    }

    /// The object as a value (what parsing `json` gives), borrowed.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The object as an owned value (what parsing `json` gives).
    pub fn to_value(&self) -> Value {
        Value::clone(&self.value)
    }

    /// The value of label `key`.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .binary_search_by(|(k, _)| (**k).cmp(key))
            .ok()
            .map(|i| &*self.labels[i].1)
    }
}

/// `value.metadata` as a mutable map, created when missing.
///
/// # Panics
/// Never: the caller has checked `value` is an object.
pub fn metadata_mut(value: &mut Value) -> &mut Map<String, Value> {
    let object = value.as_object_mut().expect("objects are JSON objects");
    let meta = object
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    meta.as_object_mut()
        .expect("metadata was just made an object")
}

/// Drops empty `finalizers`, `labels`, `annotations`, `ownerReferences` and
/// `managedFields`, as the real server's `omitempty` does.
///
/// Without this, `finalizers: []` after a remove would break kube's
/// `test /metadata/finalizers == null` on the next add.
pub fn normalize(value: &mut Value) {
    let meta = metadata_mut(value);
    for key in [
        "finalizers",
        "labels",
        "annotations",
        "ownerReferences",
        "managedFields",
    ] {
        let empty = match meta.get(key) {
            Some(Value::Null) => true,
            Some(Value::Array(a)) => a.is_empty(),
            Some(Value::Object(o)) => o.is_empty(),
            _ => false,
        };
        if empty {
            meta.remove(key);
        }
    }
    meta.remove("selfLink");
}

/// The finalizers of an object, in order.
pub fn finalizers(value: &Value) -> Vec<&str> {
    value["metadata"]["finalizers"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Whether two objects differ outside `metadata` and `status`, i.e. whether the
/// `generation` must move.
pub fn spec_differs(old: &Value, new: &Value) -> bool {
    let (Some(old), Some(new)) = (old.as_object(), new.as_object()) else {
        return old != new;
    };
    let relevant =
        |k: &String| !matches!(k.as_str(), "metadata" | "status" | "apiVersion" | "kind");
    let old_keys = old.keys().filter(|k| relevant(k)).count();
    let new_keys = new.iter().filter(|(k, _)| relevant(k)).count();
    old_keys != new_keys
        || new
            .iter()
            .filter(|(k, _)| relevant(k))
            .any(|(k, v)| old.get(k) != Some(v))
}

/// Reads a dotted field path (`spec.nodeName`, `involvedObject.kind`) as a selector
/// value: strings as they are, numbers and booleans printed, anything else absent.
pub fn field_value(value: &Value, path: &str) -> Option<String> {
    let mut current = value;
    for part in path.split('.') {
        current = current.get(part)?;
    }
    match current {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Whether `name` is a valid DNS subdomain (what most kinds require of names).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !part.starts_with('-')
                && !part.ends_with('-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn labels_are_found_without_parsing_the_object() {
        let value =
            json!({"metadata": {"name": "a", "namespace": "ns", "labels": {"b": "2", "a": "1"}}});
        let stored = StoredObject::from_value(&value, 7);
        assert_eq!(stored.label("a"), Some("1"));
        assert_eq!(stored.label("b"), Some("2"));
        assert_eq!(stored.label("c"), None);
        assert_eq!(stored.to_value(), value);
    }

    #[test]
    fn the_kept_value_is_what_parsing_the_served_json_gives() {
        let value = json!({"metadata": {"name": "a", "resourceVersion": "3"},
            "spec": {"f": 1.5, "big": 18_446_744_073_709_551_615_u64, "neg": -2, "e": 1e300,
                     "s": "é\"\n", "l": [null, true, {}]}});
        let stored = StoredObject::from_value(&value, 3);
        let parsed: Value = serde_json::from_slice(&stored.json).expect("valid JSON");
        assert_eq!(stored.value(), &parsed);
    }

    #[test]
    fn normalize_drops_empty_lists_and_maps_from_metadata() {
        let mut value =
            json!({"metadata": {"name": "a", "finalizers": [], "labels": {}, "annotations": null}});
        normalize(&mut value);
        assert_eq!(value, json!({"metadata": {"name": "a"}}));
    }

    #[test]
    fn only_changes_outside_metadata_and_status_are_spec_changes() {
        let old = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"x": 1}, "status": {"y": 1}});
        let relabelled =
            json!({"metadata": {"labels": {"a": "2"}}, "spec": {"x": 1}, "status": {"y": 2}});
        let respecced = json!({"metadata": {}, "spec": {"x": 2}});
        let with_data = json!({"metadata": {}, "spec": {"x": 1}, "data": {}});
        assert!(!spec_differs(&old, &relabelled));
        assert!(spec_differs(&old, &respecced));
        assert!(spec_differs(&old, &with_data));
    }

    #[test]
    fn names_must_be_dns_subdomains() {
        assert!(valid_name("bucket-1.example"));
        assert!(!valid_name("Bucket"));
        assert!(!valid_name("-a"));
        assert!(!valid_name(""));
    }
}
