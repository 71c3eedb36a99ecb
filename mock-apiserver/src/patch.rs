//! Patch application: JSON merge patch (RFC 7386) and JSON patch (RFC 6902) through the
//! `json-patch` crate, with the real API server's `test`-of-`null` rule, and the cleanup of
//! strategic-merge directives.

use json_patch::jsonptr::PointerBuf;
use json_patch::{PatchErrorKind, PatchOperation};
use serde_json::Value;

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
    json_patch::merge(target, patch);
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

/// One decoded operation: one of RFC 6902's, or a `test` of `null` (or of no value), which
/// the real server treats apart.
enum Step {
    Op(PatchOperation),
    NullTest(PointerBuf),
}

/// Decodes every operation first, so a malformed one is reported before anything applies.
fn decode(patch: &Value) -> Result<Vec<Step>, PatchError> {
    let ops = patch.as_array().ok_or(PatchError::NotAList)?;
    ops.iter()
        .enumerate()
        .map(|(index, op)| {
            let bad = |problem: String| PatchError::BadOperation { index, problem };
            let null_test = op["op"] == "test" && op.get("value").is_none_or(Value::is_null);
            if null_test {
                let path = serde_json::from_value(op["path"].clone())
                    .map_err(|e| bad(format!("bad \"path\": {e}")))?;
                return Ok(Step::NullTest(path));
            }
            serde_json::from_value(op.clone())
                .map(Step::Op)
                .map_err(|e| bad(e.to_string()))
        })
        .collect()
}

/// The real server's `test` of `null` (evanphx/json-patch's `test`): the parent must
/// exist; then a missing member, or a member that is `null`, passes.
fn null_test(target: &Value, path: &PointerBuf, index: usize) -> Result<(), PatchError> {
    let failed = || PatchError::TestFailed {
        index,
        path: path.to_string(),
    };
    let Some((parent, last)) = path.split_back() else {
        // The whole document is never null.
        return Err(failed());
    };
    match target.pointer(parent.as_str()) {
        Some(Value::Object(map)) => match map.get(last.decoded().as_ref()) {
            None | Some(Value::Null) => Ok(()),
            Some(_) => Err(failed()),
        },
        Some(Value::Array(items)) => match last.decoded().parse::<usize>() {
            Ok(i) if i < items.len() => items[i].is_null().then_some(()).ok_or_else(failed),
            _ => Err(PatchError::MissingPath {
                index,
                path: path.to_string(),
            }),
        },
        _ => Err(PatchError::MissingPath {
            index,
            path: path.to_string(),
        }),
    }
}

/// Applies an RFC 6902 JSON patch with the `json-patch` crate.
///
/// # Semantics
/// As in the real API server (evanphx/json-patch), a `test` whose value is `null` (or
/// absent) passes when the member does not exist or is `null`, provided its parent
/// exists; kube's finalizer helper relies on it. Those tests are checked here, between
/// the other operations, which the crate applies. The patch is applied to `target` in
/// place; on error `target` may be partly patched, so callers apply it to a copy.
pub fn json_patch(target: &mut Value, patch: &Value) -> Result<(), PatchError> {
    for (index, step) in decode(patch)?.into_iter().enumerate() {
        match step {
            Step::NullTest(path) => null_test(target, &path, index)?,
            Step::Op(op) => {
                let path = op.path().to_string();
                json_patch::patch_unsafe(target, std::slice::from_ref(&op)).map_err(|e| match e
                    .kind
                {
                    PatchErrorKind::TestFailed => PatchError::TestFailed { index, path },
                    _ => PatchError::MissingPath { index, path },
                })?;
            }
        }
    }
    Ok(())
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
    fn a_null_test_passes_on_a_null_member_and_fails_without_a_parent() {
        let mut doc = json!({"a": {"b": null}, "l": [null, 1]});
        for path in ["/a/b", "/a/c", "/l/0"] {
            json_patch(
                &mut doc,
                &json!([{"op": "test", "path": path, "value": null}]),
            )
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        }
        json_patch(&mut doc, &json!([{"op": "test", "path": "/a/c"}])).unwrap();
        assert!(matches!(
            json_patch(
                &mut doc,
                &json!([{"op": "test", "path": "/x/y", "value": null}])
            ),
            Err(PatchError::MissingPath { index: 0, .. })
        ));
        assert!(matches!(
            json_patch(
                &mut doc,
                &json!([{"op": "test", "path": "/l/1", "value": null}])
            ),
            Err(PatchError::TestFailed { .. })
        ));
        // The test sees the document as the operations before it left it.
        let steps = json!([
            {"op": "add", "path": "/a/c", "value": 1},
            {"op": "test", "path": "/a/c", "value": null},
        ]);
        assert!(matches!(
            json_patch(&mut doc, &steps),
            Err(PatchError::TestFailed { index: 1, .. })
        ));
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
