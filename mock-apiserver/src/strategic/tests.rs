use super::*;
use serde_json::json;

fn patched(kind: &str, original: Value, patch: Value) -> Value {
    let mut doc = original;
    apply(kind, &mut doc, &patch).unwrap();
    doc
}

#[test]
fn finalizers_merge_and_a_new_one_goes_first() {
    // patch.go mergeSlice + mergeSortedSlice: an item the stored list does not hold
    // has no stored index, so it is taken before the stored items.
    let doc = patched(
        "ConfigMap",
        json!({"metadata": {"finalizers": ["a"]}}),
        json!({"metadata": {"finalizers": ["b"]}}),
    );
    assert_eq!(doc["metadata"]["finalizers"], json!(["b", "a"]));
    let again = patched("ConfigMap", doc, json!({"metadata": {"finalizers": ["a"]}}));
    assert_eq!(again["metadata"]["finalizers"], json!(["b", "a"]));
}

#[test]
fn containers_merge_by_name_and_env_by_name() {
    // New items go first, as in the kubectl patch task of the Kubernetes docs, where a
    // patched-in container is listed before the existing one.
    let original = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}]},
    ]}}}});
    let doc = patched(
        "Deployment",
        original,
        json!({"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "app:2", "env": [{"name": "B", "value": "2"}]},
            {"name": "sidecar", "image": "proxy"},
        ]}}}}),
    );
    assert_eq!(
        doc["spec"]["template"]["spec"]["containers"],
        json!([
            {"name": "app", "image": "app:2", "env": [{"name": "B", "value": "2"}, {"name": "A", "value": "1"}]},
            {"name": "sidecar", "image": "proxy"},
        ])
    );
}

#[test]
fn directives_delete_replace_retain_and_delete_from_primitive_lists() {
    let original = json!({
        "metadata": {
            "finalizers": ["a", "b", "c"],
            "ownerReferences": [{"uid": "1", "name": "x"}, {"uid": "2", "name": "y"}],
            "labels": {"k": "v", "l": "w"},
        },
        "spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}},
    });
    let doc = patched(
        "Deployment",
        original,
        json!({
            "metadata": {
                "$deleteFromPrimitiveList/finalizers": ["b"],
                "ownerReferences": [{"$patch": "delete", "uid": "1"}],
                "labels": {"$patch": "replace", "only": "this"},
                "$setElementOrder/finalizers": ["a", "c"],
            },
            "spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}},
        }),
    );
    assert_eq!(doc["metadata"]["finalizers"], json!(["a", "c"]));
    assert_eq!(
        doc["metadata"]["ownerReferences"],
        json!([{"uid": "2", "name": "y"}])
    );
    assert_eq!(doc["metadata"]["labels"], json!({"only": "this"}));
    assert_eq!(doc["spec"]["strategy"], json!({"type": "Recreate"}));
}

#[test]
fn set_element_order_puts_the_merged_list_in_its_order() {
    // The listed items in the directive's order, a server-only item merged in where
    // the stored order puts it (mergeSortedSlice: b, stored before c, goes first).
    let doc = patched(
        "ConfigMap",
        json!({"metadata": {"finalizers": ["a", "b", "c"]}}),
        json!({"metadata": {"$setElementOrder/finalizers": ["c", "a"]}}),
    );
    assert_eq!(doc["metadata"]["finalizers"], json!(["b", "c", "a"]));
    let doc = patched(
        "Pod",
        json!({"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]}}),
        json!({"spec": {
            "$setElementOrder/containers": [{"name": "b"}, {"name": "new"}, {"name": "a"}],
            "containers": [{"name": "new", "image": "2"}, {"name": "a", "image": "2"}],
        }}),
    );
    assert_eq!(
        doc["spec"]["containers"],
        json!([
            {"name": "b", "image": "1"},
            {"name": "new", "image": "2"},
            {"name": "a", "image": "2"}
        ])
    );
    let doc = patched(
        "ConfigMap",
        json!({}),
        json!({"metadata": {"$setElementOrder/finalizers": ["y", "x"], "finalizers": ["y", "x"]}}),
    );
    assert_eq!(doc["metadata"]["finalizers"], json!(["y", "x"]));
}

#[test]
fn a_patch_list_out_of_its_set_element_order_is_an_error() {
    let mut doc = json!({"metadata": {"finalizers": ["a"]}});
    assert!(matches!(
        apply(
            "ConfigMap",
            &mut doc,
            &json!({"metadata": {"$setElementOrder/finalizers": ["x", "y"], "finalizers": ["y", "x"]}})
        ),
        Err(StrategicError::SetElementOrderMismatch(..))
    ));
    assert_eq!(
        apply(
            "ConfigMap",
            &mut doc,
            &json!({"metadata": {"$setElementOrder/finalizers": "x"}})
        ),
        Err(StrategicError::SetElementOrder)
    );
    assert_eq!(doc, json!({"metadata": {"finalizers": ["a"]}}), "unchanged");
}

#[test]
fn untagged_lists_are_replaced_and_null_deletes() {
    let doc = patched(
        "Pod",
        json!({"spec": {"tolerations": [{"key": "a"}], "nodeName": "n"}}),
        json!({"spec": {"tolerations": [{"key": "b"}], "nodeName": null}}),
    );
    assert_eq!(doc, json!({"spec": {"tolerations": [{"key": "b"}]}}));
}

#[test]
fn malformed_directives_are_errors() {
    let mut doc = json!({"metadata": {"labels": {}}});
    assert_eq!(
        apply(
            "ConfigMap",
            &mut doc,
            &json!({"metadata": {"$retainKeys": "x"}})
        ),
        Err(StrategicError::RetainKeys)
    );
    assert!(matches!(
        apply(
            "ConfigMap",
            &mut doc,
            &json!({"metadata": {"labels": {"$patch": "merge"}}})
        ),
        Err(StrategicError::PatchType(..))
    ));
    assert!(matches!(
        apply(
            "Pod",
            &mut json!({"spec": {"containers": [{"name": "a"}]}}),
            &json!({"spec": {"containers": [{"image": "x"}]}})
        ),
        Err(StrategicError::NoMergeKey(..))
    ));
}
