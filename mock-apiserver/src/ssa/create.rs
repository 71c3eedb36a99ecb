//! The field set of a create, written straight into its `fieldsV1` form: what
//! comparing the kind's empty object with the new one and stripping the server-set
//! metadata gives, in one walk of the object (creates are the hot path of a load run).

use serde_json::{Map, Value};

use super::managed::STRIPPED_META;
use super::shape::Shape;
use super::walk::{ShapeError, index_items, is_leaf};

/// The `fieldsV1` of a create of `object`, or `None` when it sets nothing.
///
/// # Semantics
/// Every leaf is a member; every map or list below the root is added itself (`.`) when it
/// has content, and is a plain member when empty, except `spec` and `status` of a
/// built-in kind, which its Go zero value already has; `apiVersion`, `kind` and the
/// server-set metadata are stripped, and `reset` (a top-level field the endpoint never
/// owns) is left out.
pub fn created_fields(
    object: &Value,
    shape: Shape<'_>,
    reset: Option<&str>,
) -> Result<Option<Value>, ShapeError> {
    let Some(map) = object.as_object() else {
        return Ok(None);
    };
    let builtin = matches!(shape, Shape::Schema(_, true));
    let mut out = Map::new();
    for (key, child) in map {
        if matches!(key.as_str(), "apiVersion" | "kind") || Some(key.as_str()) == reset {
            continue;
        }
        let (child_shape, _) = shape.field(key);
        let fields = if key == "metadata" {
            let Some(meta) = child.as_object() else {
                continue;
            };
            let mut inner = Map::new();
            for (name, value) in meta {
                if STRIPPED_META.contains(&name.as_str()) {
                    continue;
                }
                let (value_shape, _) = child_shape.field(name);
                inner.insert(format!("f:{name}"), node(value, value_shape, true)?);
            }
            if inner.is_empty() {
                continue;
            }
            Value::Object(inner)
        } else {
            let in_zero = builtin && matches!(key.as_str(), "spec" | "status") && child.is_object();
            let fields = node(child, child_shape, !in_zero)?;
            if in_zero && fields.as_object().is_some_and(Map::is_empty) {
                continue;
            }
            fields
        };
        out.insert(format!("f:{key}"), fields);
    }
    Ok((!out.is_empty()).then_some(Value::Object(out)))
}

/// The `fieldsV1` below a created value; `added` says whether a non-empty map or list
/// is itself added (`.`).
fn node(value: &Value, shape: Shape<'_>, added: bool) -> Result<Value, ShapeError> {
    if is_leaf(value, &shape) {
        return Ok(Value::Object(Map::new()));
    }
    let mut out = Map::new();
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let (child_shape, _) = shape.field(key);
                out.insert(format!("f:{key}"), node(child, child_shape, true)?);
            }
        }
        Value::Array(items) => {
            let item_shape = shape.item();
            for (element, item) in index_items(shape.list(), &shape, items, &[], true)? {
                out.insert(element.to_fields_v1(), node(item, item_shape, true)?);
            }
        }
        _ => {}
    }
    if added && !out.is_empty() {
        out.insert(".".into(), Value::Object(Map::new()));
    }
    Ok(Value::Object(out))
}
