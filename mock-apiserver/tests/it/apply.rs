//! Server-side apply through kube-rs's `Patch::Apply`: field ownership, conflicts,
//! forced applies, pruning, list types, `/status`, and the composer pattern. Each test
//! names the Kubernetes source whose behaviour it asserts
//! (`k8s.io/apimachinery/pkg/util/managedfields/internal` and
//! `sigs.k8s.io/structured-merge-diff`).

use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use mock_apiserver::{ApiServer, Config};
use serde_json::{Value, json};

use crate::support::{Bucket, client, server_with_buckets};

fn apply_body(spec: Value) -> Value {
    json!({"apiVersion": "example.org/v1alpha1", "kind": "Bucket", "metadata": {"name": "b1"}, "spec": spec})
}

async fn apply(
    api: &Api<Bucket>,
    manager: &str,
    spec: Value,
    force: bool,
) -> Result<Bucket, kube::Error> {
    let mut params = PatchParams::apply(manager);
    params.force = force;
    api.patch("b1", &params, &Patch::Apply(apply_body(spec)))
        .await
}

/// `(manager, operation, subresource, fieldsV1)` of each managedFields entry, in order.
fn owners(object: &impl serde::Serialize) -> Vec<(String, String, String, Value)> {
    let value = serde_json::to_value(object).unwrap();
    value["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|e| {
            (
                e["manager"].as_str().unwrap_or_default().to_owned(),
                e["operation"].as_str().unwrap_or_default().to_owned(),
                e["subresource"].as_str().unwrap_or_default().to_owned(),
                e["fieldsV1"].clone(),
            )
        })
        .collect()
}

fn conflict(error: kube::Error) -> kube::core::Status {
    match error {
        kube::Error::Api(status) => *status,
        other => panic!("expected a 409, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn two_managers_applying_one_field_conflict_until_one_forces() {
    // conflict.go (NewConflictError, getConflictMessage) and merge/update.go (Updater.update).
    let server = server_with_buckets(Config::default());
    let api: Api<Bucket> = Api::default_namespaced(client(&server));
    apply(&api, "m1", json!({"region": "eu", "size": 1}), false)
        .await
        .unwrap();

    let refused = conflict(
        apply(&api, "m2", json!({"region": "us"}), false)
            .await
            .unwrap_err(),
    );
    assert_eq!(refused.code, 409);
    assert_eq!(refused.reason, "Conflict");
    assert_eq!(
        refused.message,
        "Apply failed with 1 conflict: conflict with \"m1\": .spec.region"
    );
    let raw = serde_json::to_value(&refused).unwrap();
    assert_eq!(
        raw["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "message": "conflict with \"m1\"", "field": ".spec.region"}])
    );
    assert_eq!(api.get("b1").await.unwrap().spec.region, "eu");

    // The same value is co-owned, not a conflict. The object did not change, so m2's
    // new entry has no time (managedfieldsupdater.go sets it only on a change) and sorts
    // first (managedfields.go sortEncodedManagedFields: no time counts as 0).
    let shared = apply(&api, "m2", json!({"region": "eu"}), false)
        .await
        .unwrap();
    let entries = owners(&shared);
    assert_eq!(
        entries.iter().map(|o| o.0.as_str()).collect::<Vec<_>>(),
        ["m2", "m1"]
    );
    assert_eq!(entries[0].3, json!({"f:spec": {"f:region": {}}}));
    assert!(shared.metadata.managed_fields.unwrap()[0].time.is_none());

    // Forced, m2 takes the field: m1 keeps only size.
    let forced = apply(&api, "m2", json!({"region": "us"}), true)
        .await
        .unwrap();
    assert_eq!(forced.spec.region, "us");
    let owners = owners(&forced);
    assert_eq!(owners[0].0, "m1");
    assert_eq!(owners[0].3, json!({"f:spec": {"f:size": {}}}));
    assert_eq!(owners[1].0, "m2");
    assert_eq!(owners[1].3, json!({"f:spec": {"f:region": {}}}));
}

#[tokio::test(start_paused = true)]
async fn a_field_its_only_applier_stops_applying_is_removed() {
    // merge/update.go (Updater.prune).
    let server = server_with_buckets(Config::default());
    let api: Api<Bucket> = Api::default_namespaced(client(&server));
    apply(&api, "m1", json!({"region": "eu", "size": 3}), false)
        .await
        .unwrap();
    let dropped = apply(&api, "m1", json!({"region": "eu"}), false)
        .await
        .unwrap();
    assert_eq!(dropped.spec.size, None);
    // A field another manager also owns stays.
    apply(&api, "m1", json!({"region": "eu", "size": 3}), false)
        .await
        .unwrap();
    apply(&api, "m2", json!({"region": "eu", "size": 3}), false)
        .await
        .unwrap();
    let kept = apply(&api, "m1", json!({"region": "eu"}), false)
        .await
        .unwrap();
    assert_eq!(kept.spec.size, Some(3));
}

#[tokio::test(start_paused = true)]
async fn an_update_is_recorded_and_a_later_apply_conflicts_with_it() {
    // managedfieldsupdater.go (Update), conflict.go (printManager of an Update manager).
    let server = server_with_buckets(Config::default());
    let api: Api<Bucket> = Api::default_namespaced(client(&server));
    apply(&api, "m1", json!({"region": "eu"}), false)
        .await
        .unwrap();
    let params = PatchParams {
        field_manager: Some("editor".into()),
        ..PatchParams::default()
    };
    let edited = api
        .patch(
            "b1",
            &params,
            &Patch::Merge(json!({"spec": {"region": "ap"}})),
        )
        .await
        .unwrap();
    // m1 lost its only field, and a manager owning nothing is dropped.
    assert_eq!(
        owners(&edited),
        [(
            "editor".into(),
            "Update".into(),
            String::new(),
            json!({"f:spec": {"f:region": {}}})
        )]
    );
    let refused = conflict(
        apply(&api, "m1", json!({"region": "eu"}), false)
            .await
            .unwrap_err(),
    );
    assert_eq!(
        refused.message,
        "Apply failed with 1 conflict: conflict with \"editor\" using example.org/v1alpha1: .spec.region"
    );
}

#[tokio::test(start_paused = true)]
async fn an_apply_to_status_owns_only_status() {
    // The custom resource status strategy's GetResetFields (apiextensions-apiserver
    // pkg/registry/customresource/strategy.go): spec is not owned through /status.
    let server = server_with_buckets(Config::default());
    let api: Api<Bucket> = Api::default_namespaced(client(&server));
    apply(&api, "composer", json!({"region": "eu"}), false)
        .await
        .unwrap();
    let body = json!({
        "apiVersion": "example.org/v1alpha1",
        "kind": "Bucket",
        "metadata": {"name": "b1"},
        "spec": {"region": "ignored"},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    });
    let written = api
        .patch_status("b1", &PatchParams::apply("provider"), &Patch::Apply(&body))
        .await
        .unwrap();
    assert_eq!(written.spec.region, "eu");
    assert_eq!(written.status.unwrap().conditions[0].type_, "Ready");
    let owners = owners(&api.get("b1").await.unwrap());
    assert_eq!(
        owners[1],
        (
            "provider".into(),
            "Apply".into(),
            "status".into(),
            json!({"f:status": {"f:conditions": {}}})
        )
    );
}

#[tokio::test(start_paused = true)]
async fn a_composer_reapplying_the_same_body_while_a_provider_writes_status_changes_nothing() {
    // Crossplane core applies each composed resource every reconcile while the provider
    // updates its status. managedfieldsupdater.go keeps the time of an apply that changed
    // nothing, so the object is unchanged: no resourceVersion, no watch event.
    let server = server_with_buckets(Config::default());
    let api: Api<Bucket> = Api::default_namespaced(client(&server));
    let provider = PatchParams {
        field_manager: Some("provider".into()),
        ..PatchParams::default()
    };
    let compose = || {
        apply(
            &api,
            "apiextensions.crossplane.io/composed",
            json!({"region": "eu"}),
            false,
        )
    };
    for round in 0..5 {
        let applied = compose().await.unwrap();
        let before = server.resource_version();
        for _ in 0..3 {
            let again = compose().await.unwrap();
            assert_eq!(
                again.metadata.resource_version,
                applied.metadata.resource_version
            );
            assert_eq!(
                again.metadata.managed_fields,
                applied.metadata.managed_fields
            );
        }
        assert_eq!(
            server.resource_version(),
            before,
            "no-op applies write nothing"
        );
        let status = json!({"status": {"conditions": [{"type": "Ready", "status": if round % 2 == 0 { "True" } else { "False" }}]}});
        api.patch_status("b1", &provider, &Patch::Merge(&status))
            .await
            .unwrap();
    }
    let last = api.get("b1").await.unwrap();
    let owners = owners(&last);
    assert_eq!(owners.len(), 2);
    assert_eq!(owners[0].0, "apiextensions.crossplane.io/composed");
    assert_eq!(owners[1].0, "provider");
    assert_eq!(owners[1].2, "status");
}

fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.org"},
        "spec": {
            "group": "example.org",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object",
                    "properties": {
                        "ports": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name"],
                            "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}},
                        },
                        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                        "args": {"type": "array", "items": {"type": "string"}},
                    },
                }}}},
            }],
        },
    })
}

#[tokio::test(start_paused = true)]
async fn lists_merge_as_the_structural_schema_declares_them() {
    // typed/merge.go: map lists merge by key, sets by value, and other lists are atomic.
    let server = ApiServer::new(Config::default());
    server.load_crd(widget_crd()).unwrap();
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk("example.org", "v1", "Widget"));
    let api: Api<DynamicObject> = Api::namespaced_with(client(&server), "default", &resource);
    let body = |spec: Value| json!({"apiVersion": "example.org/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec});
    let apply = |manager: &'static str, spec: Value| {
        let api = api.clone();
        let body = body(spec);
        async move {
            api.patch("w", &PatchParams::apply(manager), &Patch::Apply(&body))
                .await
                .unwrap()
        }
    };
    apply(
        "a",
        json!({"ports": [{"name": "http", "port": 80}], "tags": ["x"], "args": ["-a"]}),
    )
    .await;
    let merged = apply(
        "b",
        json!({"ports": [{"name": "dns", "port": 53}], "tags": ["y"]}),
    )
    .await;
    assert_eq!(
        merged.data["spec"],
        json!({
            "ports": [{"name": "http", "port": 80}, {"name": "dns", "port": 53}],
            "tags": ["x", "y"],
            "args": ["-a"],
        })
    );
    assert_eq!(
        owners(&merged)[1].3,
        json!({"f:spec": {
            "f:ports": {"k:{\"name\":\"dns\"}": {".": {}, "f:name": {}, "f:port": {}}},
            "f:tags": {"v:\"y\"": {}},
        }})
    );
    // An atomic list belongs whole to its applier: another value conflicts.
    let refused = api
        .patch(
            "w",
            &PatchParams::apply("b"),
            &Patch::Apply(body(json!({"args": ["-b"]}))),
        )
        .await
        .unwrap_err();
    assert_eq!(
        conflict(refused).message,
        "Apply failed with 1 conflict: conflict with \"a\": .spec.args"
    );
    // Creates are recorded as Update by their manager.
    let created = api
        .create(
            &PostParams {
                field_manager: Some("creator".into()),
                ..PostParams::default()
            },
            &serde_json::from_value(json!({
                "apiVersion": "example.org/v1", "kind": "Widget",
                "metadata": {"name": "w2", "labels": {"app": "x"}}, "spec": {"tags": ["t"]},
            }))
            .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        owners(&created),
        [(
            "creator".into(),
            "Update".into(),
            String::new(),
            json!({
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {".": {}, "f:tags": {".": {}, "v:\"t\"": {}}},
            })
        )]
    );
}
