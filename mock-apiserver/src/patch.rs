//! Patch application: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and the
//! cleanup of strategic-merge directives.

use serde_json::{Map, Value};

/// A JSON patch that could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The patch document is not an array of operations.
    #[error("the patch is not a list of operations")]
    NotAList,
    /// An operation is malformed or unknown.
    #[error("operation {index} is invalid: {problem}")]
    BadOperation {
        /// Index of the operation in the patch.
        index: usize,
        /// What is wrong.
        problem: String,
    },
    /// A path does not exist in the document.
    #[error("operation {index}: path {path:?} does not exist")]
    MissingPath {
        /// Index of the operation in the patch.
        index: usize,
        /// The path.
        path: String,
    },
    /// A `test` operation failed.
    #[error("testing value {path} failed")]
    TestFailed {
        /// Index of the operation in the patch.
        index: usize,
        /// The path tested.
        path: String,
    },
}

/// Applies an RFC 7386 merge patch: objects merge recursively, `null` deletes, anything
/// else replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let target = target.as_object_mut().expect("just made an object");
    for (key, value) in patch {
        if value.is_null() {
            target.remove(key);
        } else {
            merge_patch(target.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

/// Removes strategic-merge-patch directives (`$patch`, `$setElementOrder/…`,
/// `$retainKeys`, `$deleteFromPrimitiveList/…`) so the rest can be applied as a merge
/// patch.
pub fn strip_strategic_directives(patch: &mut Value) {
    match patch {
        Value::Object(map) => {
            map.retain(|k, _| !k.starts_with('$'));
            map.values_mut().for_each(strip_strategic_directives);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_strategic_directives),
        _ => {}
    }
}

/// Applies an RFC 6902 JSON patch.
///
/// # Semantics
/// As in the real API server (evanphx/json-patch), a `test` whose value is `null`
/// passes when the path does not exist; kube's finalizer helper relies on it. The
/// patch is applied to `target` in place; on error `target` may be partly patched,
/// so callers apply it to a copy.
pub fn json_patch(target: &mut Value, patch: &Value) -> Result<(), PatchError> {
    let ops = patch.as_array().ok_or(PatchError::NotAList)?;
    for (index, op) in ops.iter().enumerate() {
        let bad = |problem: &str| PatchError::BadOperation {
            index,
            problem: problem.to_owned(),
        };
        let name = op["op"].as_str().ok_or_else(|| bad("missing \"op\""))?;
        let path = op["path"].as_str().ok_or_else(|| bad("missing \"path\""))?;
        let value = || {
            op.get("value")
                .cloned()
                .ok_or_else(|| bad("missing \"value\""))
        };
        let from = || op["from"].as_str().ok_or_else(|| bad("missing \"from\""));
        let missing = |path: &str| PatchError::MissingPath {
            index,
            path: path.to_owned(),
        };
        match name {
            "add" => add(target, path, value()?).map_err(|()| missing(path))?,
            "remove" => {
                remove(target, path).ok_or_else(|| missing(path))?;
            }
            "replace" => {
                let slot = target.pointer_mut(path).ok_or_else(|| missing(path))?;
                *slot = value()?;
            }
            "move" => {
                let from = from()?;
                let moved = remove(target, from).ok_or_else(|| missing(from))?;
                add(target, path, moved).map_err(|()| missing(path))?;
            }
            "copy" => {
                let from = from()?;
                let copied = target.pointer(from).cloned().ok_or_else(|| missing(from))?;
                add(target, path, copied).map_err(|()| missing(path))?;
            }
            "test" => {
                let expected = op.get("value").cloned().unwrap_or(Value::Null);
                let passes = match target.pointer(path) {
                    Some(actual) => *actual == expected,
                    None => expected.is_null(),
                };
                if !passes {
                    return Err(PatchError::TestFailed {
                        index,
                        path: path.to_owned(),
                    });
                }
            }
            _ => return Err(bad("unknown operation")),
        }
    }
    Ok(())
}

fn split_parent(path: &str) -> Option<(&str, String)> {
    let (parent, last) = path.rsplit_once('/')?;
    Some((parent, last.replace("~1", "/").replace("~0", "~")))
}

fn add(target: &mut Value, path: &str, value: Value) -> Result<(), ()> {
    if path.is_empty() {
        *target = value;
        return Ok(());
    }
    let (parent, key) = split_parent(path).ok_or(())?;
    match target.pointer_mut(parent).ok_or(())? {
        Value::Object(map) => {
            map.insert(key, value);
            Ok(())
        }
        Value::Array(items) => {
            let index = if key == "-" {
                items.len()
            } else {
                key.parse::<usize>().map_err(|_| ())?
            };
            if index > items.len() {
                return Err(());
            }
            items.insert(index, value);
            Ok(())
        }
        _ => Err(()),
    }
}

fn remove(target: &mut Value, path: &str) -> Option<Value> {
    let (parent, key) = split_parent(path)?;
    match target.pointer_mut(parent)? {
        Value::Object(map) => map.remove(&key),
        Value::Array(items) => {
            let index = key.parse::<usize>().ok().filter(|&i| i < items.len())?;
            Some(items.remove(index))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_merges_objects_and_null_deletes() {
        let mut doc = json!({"a": {"b": 1, "c": 2}, "d": [1, 2]});
        merge_patch(&mut doc, &json!({"a": {"b": null, "e": 3}, "d": [3]}));
        assert_eq!(doc, json!({"a": {"c": 2, "e": 3}, "d": [3]}));
    }

    #[test]
    fn a_null_test_on_a_missing_path_passes_like_the_real_server() {
        let mut doc = json!({"metadata": {"name": "b1"}});
        let patch = json!([
            {"op": "test", "path": "/metadata/finalizers", "value": null},
            {"op": "add", "path": "/metadata/finalizers", "value": ["f"]},
        ]);
        json_patch(&mut doc, &patch).unwrap();
        assert_eq!(doc["metadata"]["finalizers"], json!(["f"]));
        let again = json_patch(&mut doc, &patch);
        assert!(matches!(
            again,
            Err(PatchError::TestFailed { index: 0, .. })
        ));
    }

    #[test]
    fn every_json_patch_operation_works() {
        let mut doc = json!({"a": [1, 2], "b": {"x~y/z": 1}});
        let patch = json!([
            {"op": "add", "path": "/a/-", "value": 3},
            {"op": "add", "path": "/a/0", "value": 0},
            {"op": "remove", "path": "/a/1"},
            {"op": "replace", "path": "/b/x~0y~1z", "value": 2},
            {"op": "copy", "from": "/b", "path": "/c"},
            {"op": "move", "from": "/c", "path": "/d"},
            {"op": "test", "path": "/a", "value": [0, 2, 3]},
        ]);
        json_patch(&mut doc, &patch).unwrap();
        assert_eq!(
            doc,
            json!({"a": [0, 2, 3], "b": {"x~y/z": 2}, "d": {"x~y/z": 2}})
        );
    }

    #[test]
    fn bad_operations_and_paths_are_errors() {
        let mut doc = json!({});
        assert_eq!(json_patch(&mut doc, &json!({})), Err(PatchError::NotAList));
        assert!(matches!(
            json_patch(&mut doc, &json!([{"op": "jump", "path": "/a"}])),
            Err(PatchError::BadOperation { .. })
        ));
        assert!(matches!(
            json_patch(&mut doc, &json!([{"op": "remove", "path": "/a"}])),
            Err(PatchError::MissingPath { .. })
        ));
    }

    #[test]
    fn strategic_directives_are_dropped() {
        let mut patch = json!({"$setElementOrder/x": [], "data": {"$patch": "replace", "k": "v"}});
        strip_strategic_directives(&mut patch);
        assert_eq!(patch, json!({"data": {"k": "v"}}));
    }
}
