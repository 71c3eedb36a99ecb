//! Field sets of values: what a value sets (`typed/tofieldset.go`) and what changed
//! between two values (`typed/compare.go`), both of structured-merge-diff.

use std::collections::BTreeMap;

use serde_json::Value;

use super::path::{PathElement, Scalar};
use super::set::FieldSet;
use super::shape::{ListKind, Shape};

/// A value that does not fit its schema's merge rules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// An item of an associative list lacks a key field that has no default.
    #[error(
        "{path}: element {index}: associative list with keys has an element that omits key field {key:?} (and doesn't have default value)"
    )]
    MissingKey {
        /// The list.
        path: String,
        /// The item's index.
        index: usize,
        /// The key field.
        key: String,
    },
    /// Two items of a set or associative list have the same name.
    #[error("{path}: duplicate entries for key {element}")]
    Duplicate {
        /// The list.
        path: String,
        /// The repeated item's path element.
        element: String,
    },
}

fn path_text(path: &[PathElement]) -> String {
    super::path::Path(path).to_string()
}

/// The path element naming item `index` of a granular list.
pub fn item_element(
    list: ListKind<'_>,
    shape: &Shape<'_>,
    item: &Value,
    index: usize,
    path: &[PathElement],
) -> Result<PathElement, ShapeError> {
    match list {
        ListKind::Set => Ok(PathElement::Value(Scalar(item.clone()))),
        ListKind::Map(keys) => {
            let mut fields = Vec::with_capacity(keys.len());
            for key in keys {
                let value = item
                    .get(key)
                    .or_else(|| shape.key_default(key))
                    .ok_or_else(|| ShapeError::MissingKey {
                        path: path_text(path),
                        index,
                        key: key.clone(),
                    })?;
                fields.push((key.clone(), Scalar(value.clone())));
            }
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(PathElement::Key(fields))
        }
        ListKind::Atomic => Ok(PathElement::Index(index)),
    }
}

/// The items of a granular list by path element, in order. A repeated element is an
/// error in an apply configuration; in a stored or written object (`AllowDuplicates`)
/// the first of them stands for all.
pub fn index_items<'v>(
    list: ListKind<'_>,
    shape: &Shape<'_>,
    items: &'v [Value],
    path: &[PathElement],
    allow_duplicates: bool,
) -> Result<Vec<(PathElement, &'v Value)>, ShapeError> {
    let mut seen = BTreeMap::new();
    let mut out = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let element = item_element(list, shape, item, index, path)?;
        if seen.insert(element.clone(), ()).is_some() {
            if allow_duplicates {
                continue;
            }
            return Err(ShapeError::Duplicate {
                path: path_text(path),
                element: element.to_string(),
            });
        }
        out.push((element, item));
    }
    Ok(out)
}

/// Whether a value here is owned and replaced whole.
pub fn is_leaf(value: &Value, shape: &Shape<'_>) -> bool {
    match value {
        Value::Object(_) => shape.atomic_map(),
        Value::Array(_) => shape.list() == ListKind::Atomic,
        _ => true,
    }
}

/// The paths `value` sets (`ToFieldSet`).
///
/// # Semantics
/// A scalar, an atomic list or map, a list item, a map entry that is not a declared
/// struct field, and a struct field that is `null` or an empty object are members; a
/// struct field with content is only the prefix of its members.
pub fn to_field_set(value: &Value, shape: Shape<'_>) -> Result<FieldSet, ShapeError> {
    let mut set = FieldSet::default();
    let mut path = Vec::new();
    collect(value, shape, &mut path, &mut set)?;
    Ok(set)
}

fn collect(
    value: &Value,
    shape: Shape<'_>,
    path: &mut Vec<PathElement>,
    set: &mut FieldSet,
) -> Result<(), ShapeError> {
    if is_leaf(value, &shape) {
        set.insert(path);
        return Ok(());
    }
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let (child_shape, declared) = shape.field(key);
                path.push(PathElement::Field(key.clone()));
                collect(child, child_shape, path, set)?;
                let empty = child.is_null() || child.as_object().is_some_and(|m| m.is_empty());
                if empty || !declared {
                    set.insert(path);
                }
                path.pop();
            }
        }
        Value::Array(items) => {
            let list = shape.list();
            let item_shape = shape.item();
            for (element, item) in index_items(list, &shape, items, path, false)? {
                path.push(element);
                collect(item, item_shape, path, set)?;
                set.insert(path);
                path.pop();
            }
        }
        _ => unreachable!("scalars are leaves"),
    }
    Ok(())
}

/// What changed from one value to another (`Comparison`).
#[derive(Debug, Default)]
pub struct Comparison {
    /// Paths set in the new value only.
    pub added: FieldSet,
    /// Paths whose value changed.
    pub modified: FieldSet,
    /// Paths set in the old value only.
    pub removed: FieldSet,
}

/// Compares `old` with `new` (`TypedValue.Compare`), leaving `metadata.managedFields`
/// out as the field manager does.
///
/// # Semantics
/// A leaf (scalar, atomic list or map) is added, removed or modified as a whole; below a
/// granular map or list the entries are compared one by one, and a map or list that
/// appears or disappears is added or removed itself as well as its content.
pub fn compare(old: &Value, new: &Value, shape: Shape<'_>) -> Result<Comparison, ShapeError> {
    let mut out = Comparison::default();
    let mut path = Vec::new();
    compare_at(Some(old), Some(new), shape, &mut path, &mut out)?;
    Ok(out)
}

fn compare_at(
    old: Option<&Value>,
    new: Option<&Value>,
    shape: Shape<'_>,
    path: &mut Vec<PathElement>,
    out: &mut Comparison,
) -> Result<(), ShapeError> {
    let granular = |v: Option<&Value>| v.is_none_or(|v| !is_leaf(v, &shape));
    let same_type = match (old, new) {
        (Some(a), Some(b)) => {
            std::mem::discriminant(a) == std::mem::discriminant(b)
                && (a.is_object() || a.is_array())
        }
        _ => true,
    };
    if !(granular(old) && granular(new) && same_type) {
        match (old, new) {
            (None, Some(_)) => out.added.insert(path),
            (Some(_), None) => out.removed.insert(path),
            (Some(a), Some(b)) if a != b => out.modified.insert(path),
            _ => {}
        }
        return Ok(());
    }
    match old.or(new) {
        Some(Value::Object(_)) => {
            let empty = serde_json::Map::new();
            let a = old.and_then(Value::as_object).unwrap_or(&empty);
            let b = new.and_then(Value::as_object).unwrap_or(&empty);
            let in_metadata = matches!(path.as_slice(), [PathElement::Field(f)] if f == "metadata");
            for (key, child) in a {
                if in_metadata && key == "managedFields" {
                    continue;
                }
                let (child_shape, _) = shape.field(key);
                path.push(PathElement::Field(key.clone()));
                compare_at(Some(child), b.get(key), child_shape, path, out)?;
                path.pop();
            }
            for (key, child) in b
                .iter()
                .filter(|(k, _)| !(a.contains_key(*k) || in_metadata && *k == "managedFields"))
            {
                let (child_shape, _) = shape.field(key);
                path.push(PathElement::Field(key.clone()));
                compare_at(None, Some(child), child_shape, path, out)?;
                path.pop();
            }
        }
        Some(Value::Array(_)) => {
            let list = shape.list();
            let item_shape = shape.item();
            let none: Vec<Value> = Vec::new();
            let a = old.and_then(Value::as_array).unwrap_or(&none);
            let b = new.and_then(Value::as_array).unwrap_or(&none);
            let a = index_items(list, &shape, a, path, true)?;
            let b = index_items(list, &shape, b, path, true)?;
            let b_by: BTreeMap<&PathElement, &Value> = b.iter().map(|(e, v)| (e, *v)).collect();
            let a_by: BTreeMap<&PathElement, &Value> = a.iter().map(|(e, v)| (e, *v)).collect();
            for (element, item) in &a {
                path.push(element.clone());
                compare_at(
                    Some(item),
                    b_by.get(element).copied(),
                    item_shape,
                    path,
                    out,
                )?;
                path.pop();
            }
            for (element, item) in b.iter().filter(|(e, _)| !a_by.contains_key(e)) {
                path.push(element.clone());
                compare_at(None, Some(item), item_shape, path, out)?;
                path.pop();
            }
        }
        _ => {}
    }
    match (old, new) {
        (None, Some(_)) => out.added.insert(path),
        (Some(_), None) => out.removed.insert(path),
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::schema::Structural;
    use serde_json::json;

    /// A spec with a field of each kind the walk and the merge tell apart: scalars, an
    /// atomic list, a set, a map list keyed by name, a granular and an atomic map.
    pub(in crate::ssa) fn schema() -> Structural {
        Structural::compile(&json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "x": {"type": "string"},
                        "y": {"type": "string"},
                        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                        "ports": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name"],
                            "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}},
                        },
                        "args": {"type": "array", "items": {"type": "string"}},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                        "config": {"type": "object", "x-kubernetes-map-type": "atomic", "properties": {"a": {"type": "string"}}},
                        "empty": {"type": "object"},
                    },
                },
            },
        }))
        .unwrap()
    }

    #[test]
    fn a_field_set_follows_the_schemas_list_and_map_types() {
        let schema = schema();
        let value = json!({
            "apiVersion": "example.org/v1",
            "metadata": {"name": "a", "labels": {"app": "x"}, "finalizers": ["f"]},
            "spec": {
                "x": "1",
                "tags": ["b", "a"],
                "ports": [{"name": "http", "port": 80}],
                "args": ["-v"],
                "labels": {"k": "v"},
                "config": {"a": "b"},
                "empty": {},
            },
        });
        let set = to_field_set(&value, Shape::Root(&schema)).unwrap();
        assert_eq!(
            set.to_fields_v1(),
            json!({
                "f:apiVersion": {},
                "f:metadata": {
                    "f:name": {},
                    "f:labels": {"f:app": {}},
                    "f:finalizers": {"v:\"f\"": {}},
                },
                "f:spec": {
                    "f:x": {},
                    "f:tags": {"v:\"a\"": {}, "v:\"b\"": {}},
                    "f:ports": {"k:{\"name\":\"http\"}": {".": {}, "f:name": {}, "f:port": {}}},
                    "f:args": {},
                    "f:labels": {"f:k": {}},
                    "f:config": {},
                    "f:empty": {},
                },
            })
        );
    }

    #[test]
    fn a_comparison_marks_new_subtrees_as_added_themselves() {
        let schema = schema();
        let old = json!({"spec": {"x": "1", "tags": ["a"]}});
        let new = json!({"spec": {"x": "2", "labels": {"k": "v"}, "tags": ["a", "b"]}});
        let c = compare(&old, &new, Shape::Root(&schema)).unwrap();
        assert_eq!(
            c.added.to_fields_v1(),
            json!({"f:spec": {"f:labels": {".": {}, "f:k": {}}, "f:tags": {"v:\"b\"": {}}}})
        );
        assert_eq!(c.modified.to_fields_v1(), json!({"f:spec": {"f:x": {}}}));
        assert!(c.removed.is_empty());
        let back = compare(&new, &old, Shape::Root(&schema)).unwrap();
        assert_eq!(back.removed, c.added);
    }

    #[test]
    fn a_list_map_item_without_its_key_is_an_error() {
        let schema = schema();
        let value = json!({"spec": {"ports": [{"port": 80}]}});
        let err = to_field_set(&value, Shape::Root(&schema)).unwrap_err();
        assert_eq!(
            err.to_string(),
            ".spec.ports: element 0: associative list with keys has an element that omits key field \"name\" (and doesn't have default value)"
        );
        let twice = json!({"spec": {"tags": ["a", "a"]}});
        assert!(matches!(
            to_field_set(&twice, Shape::Root(&schema)),
            Err(ShapeError::Duplicate { .. })
        ));
    }
}
