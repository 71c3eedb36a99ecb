use super::*;
use crate::registry::Registry;
use serde_json::{Value, json};

fn setup() -> (Store, Arc<ResourceKind>, Arc<ResourceKind>) {
    let store = Store::new(Clock::new(), WatchHistory::Fixed(4), 64, 1);
    let registry = Registry::with_builtins();
    let ns = registry.get("", "v1", "namespaces").unwrap();
    let cm = registry.get("", "v1", "configmaps").unwrap();
    create_default_namespace(&store, &ns);
    (store, ns, cm)
}

fn cm(name: &str) -> Value {
    json!({"metadata": {"name": name, "labels": {"app": "x"}}, "data": {"k": "v"}})
}

/// Deletes `default/name`, with no preconditions and background propagation.
fn delete(store: &Store, kind: &ResourceKind, name: &str) -> Result<Arc<StoredObject>, ApiError> {
    store.delete(
        kind,
        "default",
        name,
        &Preconditions::default(),
        false,
        Propagation::Background,
    )
}

#[test]
fn creates_stamp_metadata_and_bump_the_global_resource_version() {
    let (store, _, kind) = setup();
    let before = store.resource_version();
    let written = store
        .create(&kind, "default", cm("a"), WriteOptions::default())
        .unwrap();
    let value = written.object.to_value();
    assert_eq!(written.object.resource_version, before + 1);
    assert_eq!(
        value["metadata"]["resourceVersion"],
        (before + 1).to_string()
    );
    assert_eq!(value["metadata"]["generation"], 1);
    assert_eq!(value["kind"], "ConfigMap");
    assert_eq!(value["metadata"]["uid"].as_str().unwrap().len(), 36);
    let again = store.create(&kind, "default", cm("a"), WriteOptions::default());
    assert!(matches!(again, Err(ApiError::AlreadyExists { .. })));
}

#[test]
fn creating_in_a_missing_namespace_is_not_found() {
    let (store, _, kind) = setup();
    let err = store
        .create(&kind, "nowhere", cm("a"), WriteOptions::default())
        .unwrap_err();
    assert_eq!(err.code(), 404);
}

#[test]
fn a_no_op_update_keeps_the_resource_version_and_emits_nothing() {
    let (store, _, kind) = setup();
    store
        .create(&kind, "default", cm("a"), WriteOptions::default())
        .unwrap();
    let rv = store.resource_version();
    let mut watch = store.watch(&kind, Some(rv));
    let written = store
        .update(
            &kind,
            "default",
            "a",
            Subresource::Main,
            WriteOptions::default(),
            |old| Ok(old.unwrap().clone()),
        )
        .unwrap();
    assert_eq!(written.object.resource_version, rv);
    assert_eq!(store.resource_version(), rv);
    assert!(watch.receiver.try_recv().is_err());
}

#[test]
fn a_created_builtin_with_a_status_subresource_starts_with_an_empty_status() {
    let (store, _, _) = setup();
    let deployments = Registry::with_builtins()
        .get("apps", "v1", "deployments")
        .unwrap();
    let body = json!({"metadata": {"name": "web"}, "spec": {"replicas": 1},
            "status": {"replicas": 7}});
    let created = store
        .create(&deployments, "default", body, WriteOptions::default())
        .unwrap();
    assert_eq!(created.object.to_value()["status"], json!({}));
}

#[test]
fn a_status_write_that_repeats_the_stored_status_is_a_no_op_whatever_else_its_body_says() {
    let (store, _, kind) = setup();
    let mut body = cm("a");
    body["status"] = json!({"phase": "Ready"});
    store
        .create(&kind, "default", body, WriteOptions::default())
        .unwrap();
    let rv = store.resource_version();
    let mut watch = store.watch(&kind, Some(rv));
    let status_write = |status: Value| {
        store.update(
            &kind,
            "default",
            "a",
            Subresource::Status,
            WriteOptions::default(),
            move |old| {
                let mut v = old.unwrap().clone();
                v["data"]["k"] = json!("ignored by a status write");
                v["status"] = status;
                Ok(v)
            },
        )
    };
    let same = status_write(json!({"phase": "Ready"})).unwrap();
    assert_eq!(same.object.resource_version, rv);
    assert_eq!(same.object.to_value()["data"]["k"], "v");
    assert!(watch.receiver.try_recv().is_err());
    let changed = status_write(json!({"phase": "Failed"})).unwrap();
    assert_eq!(changed.object.resource_version, rv + 1);
    let value = changed.object.to_value();
    assert_eq!(value["status"]["phase"], "Failed");
    assert_eq!(value["data"]["k"], "v", "a status write keeps the rest");
}

#[test]
fn generation_moves_only_on_spec_changes() {
    let (store, _, kind) = setup();
    store
        .create(&kind, "default", cm("a"), WriteOptions::default())
        .unwrap();
    let relabel = edit(&store, &kind, "a", |v| {
        v["metadata"]["labels"]["app"] = json!("y");
    })
    .unwrap();
    assert_eq!(relabel.object.to_value()["metadata"]["generation"], 1);
    let change = edit(&store, &kind, "a", |v| {
        v["data"]["k"] = json!("w");
    })
    .unwrap();
    assert_eq!(change.object.to_value()["metadata"]["generation"], 2);
}

#[test]
fn a_stale_resource_version_is_a_conflict() {
    let (store, _, kind) = setup();
    store
        .create(&kind, "default", cm("a"), WriteOptions::default())
        .unwrap();
    let err = edit(&store, &kind, "a", |v| {
        v["metadata"]["resourceVersion"] = json!("1");
        v["data"]["k"] = json!("w");
    })
    .unwrap_err();
    assert_eq!(err.reason(), "Conflict");
}

#[test]
fn finalizers_hold_a_deletion_until_they_are_removed() {
    let (store, _, kind) = setup();
    let mut body = cm("a");
    body["metadata"]["finalizers"] = json!(["f"]);
    store
        .create(&kind, "default", body, WriteOptions::default())
        .unwrap();
    let marked = delete(&store, &kind, "a").unwrap();
    let value = marked.to_value();
    assert!(value["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(value["metadata"]["deletionGracePeriodSeconds"], 0);
    // Regression: the first deletionTimestamp bumps generation (the apiserver's
    // markAsDeleting), which crossplane's event filter relies on to see a deletion start.
    assert_eq!(value["metadata"]["generation"], 2);
    let again = delete(&store, &kind, "a").unwrap();
    assert_eq!(again.resource_version, marked.resource_version);
    let add = edit(&store, &kind, "a", |v| {
        v["metadata"]["finalizers"] = json!(["f", "g"]);
    });
    assert_eq!(add.unwrap_err().code(), 422);
    edit(&store, &kind, "a", |v| {
        v["metadata"]["finalizers"] = json!([]);
    })
    .unwrap();
    assert_eq!(store.get(&kind, "default", "a").unwrap_err().code(), 404);
}

#[test]
fn watches_resume_from_history_and_expire_when_it_is_gone() {
    let (store, _, kind) = setup();
    let start = store.resource_version();
    let create = |range: std::ops::Range<usize>| {
        for i in range {
            store
                .create(
                    &kind,
                    "default",
                    cm(&format!("c{i}")),
                    WriteOptions::default(),
                )
                .unwrap();
        }
    };
    create(0..3);
    let resumed = store.watch(&kind, Some(start + 1));
    assert_eq!(resumed.initial.len(), 2);
    assert!(resumed.expired.is_none());
    create(3..10);
    assert!(store.watch(&kind, Some(start)).expired.is_some());
    assert_eq!(store.watch(&kind, None).initial.len(), 10);
}

#[test]
fn generate_name_gets_a_random_suffix() {
    let (store, _, kind) = setup();
    let written = store
        .create(
            &kind,
            "default",
            json!({"metadata": {"generateName": "gen-"}}),
            WriteOptions::default(),
        )
        .unwrap();
    assert!(written.object.name.starts_with("gen-"));
    assert_eq!(written.object.name.len(), 9);
}
