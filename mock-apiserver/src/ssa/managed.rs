//! `metadata.managedFields`: decoding, encoding and sorting the entries, as the
//! apiserver's `managedfields/internal/managedfields.go` does.

use serde_json::{Value, json};

use super::set::FieldSet;

/// Apply or Update.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    /// A server-side apply.
    Apply,
    /// Any other write (create, update, patch).
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Self::Apply => "Apply",
            Self::Update => "Update",
        }
    }
}

/// One `ManagedFieldsEntry`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `manager`.
    pub manager: String,
    /// `operation`.
    pub operation: Operation,
    /// `apiVersion` the fields were written in.
    pub api_version: String,
    /// `subresource`, empty for the main resource.
    pub subresource: String,
    /// `time`, RFC 3339.
    pub time: Option<String>,
    /// `fieldsV1`.
    pub fields: FieldSet,
}

impl Entry {
    /// Whether `self` and `other` are the same manager (`BuildManagerIdentifier`: the
    /// apiVersion counts for updaters only).
    pub fn same_manager(&self, other: &Entry) -> bool {
        self.manager == other.manager
            && self.operation == other.operation
            && self.subresource == other.subresource
            && (self.operation == Operation::Apply || self.api_version == other.api_version)
    }

    /// `printManager` of `conflict.go`: `"m"`, `"m" with subresource "status"`, and
    /// `using <apiVersion>` for updaters.
    pub fn describe(&self) -> String {
        let mut text = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            text.push_str(&format!(" with subresource {:?}", self.subresource));
        }
        if self.operation == Operation::Update {
            text.push_str(&format!(" using {}", self.api_version));
        }
        text
    }

    fn to_json(&self) -> Value {
        let mut entry = json!({
            "manager": self.manager,
            "operation": self.operation.as_str(),
            "apiVersion": self.api_version,
        });
        if let Some(time) = &self.time {
            entry["time"] = json!(time);
        }
        entry["fieldsType"] = json!("FieldsV1");
        entry["fieldsV1"] = self.fields.to_fields_v1();
        if !self.subresource.is_empty() {
            entry["subresource"] = json!(self.subresource);
        }
        entry
    }

    fn from_json(value: &Value) -> Option<Entry> {
        let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default();
        let operation = match text("operation") {
            "Apply" => Operation::Apply,
            "Update" => Operation::Update,
            _ => return None,
        };
        let fields = match value.get("fieldsV1") {
            None | Some(Value::Null) => FieldSet::default(),
            Some(fields) => FieldSet::from_fields_v1(fields)?,
        };
        Some(Entry {
            manager: text("manager").to_owned(),
            operation,
            api_version: text("apiVersion").to_owned(),
            subresource: text("subresource").to_owned(),
            time: value.get("time").and_then(Value::as_str).map(str::to_owned),
            fields,
        })
    }
}

/// The entries of `object`'s `metadata.managedFields`: `None` when there are none or
/// they do not decode (the apiserver then starts afresh, as `DecodeManagedFields` callers
/// do).
pub fn decode(object: &Value) -> Option<Vec<Entry>> {
    decode_list(&object["metadata"]["managedFields"])
}

/// The entries of a `managedFields` list, as [`decode`].
pub fn decode_list(list: &Value) -> Option<Vec<Entry>> {
    let entries = list.as_array()?;
    if entries.is_empty() {
        return None;
    }
    entries.iter().map(Entry::from_json).collect()
}

/// Writes `entries` into `object`'s metadata sorted as `sortEncodedManagedFields` sorts
/// them (operation, time, manager, apiVersion, subresource), dropping empty ones.
pub fn encode(object: &mut Value, mut entries: Vec<Entry>) {
    entries.retain(|e| !e.fields.is_empty());
    entries.sort_by(|a, b| {
        (
            a.operation,
            &a.time,
            &a.manager,
            &a.api_version,
            &a.subresource,
        )
            .cmp(&(
                b.operation,
                &b.time,
                &b.manager,
                &b.api_version,
                &b.subresource,
            ))
    });
    let meta = crate::object::metadata_mut(object);
    if entries.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert(
            "managedFields".into(),
            Value::Array(entries.iter().map(Entry::to_json).collect()),
        );
    }
}

/// Metadata the field manager never records (`stripmeta.go`).
pub(super) const STRIPPED_META: [&str; 9] = [
    "name",
    "namespace",
    "creationTimestamp",
    "selfLink",
    "uid",
    "clusterName",
    "generation",
    "managedFields",
    "resourceVersion",
];

/// What `stripmeta.go` takes out of every manager's set: `apiVersion`, `kind`,
/// `metadata` itself and the metadata the server sets.
pub fn strip(fields: &mut FieldSet) {
    use super::path::PathElement::Field;
    for top in ["apiVersion", "kind", "metadata"] {
        fields.remove_member(&Field(top.into()));
    }
    let mut meta = FieldSet::default();
    for name in STRIPPED_META {
        meta.insert(&[Field("metadata".into()), Field(name.into())]);
    }
    *fields = fields.difference(&meta);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_sort_apply_first_then_by_time_and_manager() {
        let mut object = json!({"metadata": {}});
        let entry = |manager: &str, operation, time: &str| {
            let mut fields = FieldSet::default();
            fields.insert(&[super::super::path::PathElement::Field("spec".into())]);
            Entry {
                manager: manager.into(),
                operation,
                api_version: "v1".into(),
                subresource: String::new(),
                time: Some(time.into()),
                fields,
            }
        };
        encode(
            &mut object,
            vec![
                entry("b", Operation::Update, "2026-01-01T00:00:00Z"),
                entry("z", Operation::Apply, "2026-01-02T00:00:00Z"),
                entry("a", Operation::Update, "2026-01-01T00:00:00Z"),
            ],
        );
        let managers: Vec<&str> = object["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(managers, ["z", "a", "b"]);
        let decoded = decode(&object).unwrap();
        assert_eq!(decoded[0].describe(), "\"z\"");
        assert_eq!(decoded[1].describe(), "\"a\" using v1");
    }
}
