//! Writes through kube-rs: create, get, replace and delete, conflicts, merge, JSON, apply
//! and strategic-merge patches, no-op writes, and Secrets' string data.

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use mock_apiserver::Config;
use serde_json::json;

use super::api_code;
use crate::support::{Bucket, bucket, client, create_bucket, server_with_buckets};

#[tokio::test(start_paused = true)]
async fn create_get_list_replace_and_delete_round_trip_through_kube() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));

    let created = create_bucket(&buckets, "b1", "eu").await;
    assert_eq!(created.metadata.generation, Some(1));
    assert!(created.metadata.uid.is_some() && created.metadata.creation_timestamp.is_some());

    let fetched = buckets.get("b1").await.unwrap();
    assert_eq!(fetched.spec.region, "eu");

    let list = buckets.list(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    assert_eq!(
        list.metadata.resource_version,
        Some(server.resource_version().to_string())
    );

    let mut changed = fetched.clone();
    changed.spec.region = "us".into();
    let replaced = buckets
        .replace("b1", &PostParams::default(), &changed)
        .await
        .unwrap();
    assert_eq!(replaced.spec.region, "us");
    assert_eq!(replaced.metadata.generation, Some(2));

    buckets
        .delete("b1", &DeleteParams::default())
        .await
        .unwrap();
    assert!(buckets.get_opt("b1").await.unwrap().is_none());
    assert_eq!(api_code(buckets.get("b1").await.unwrap_err()).0, 404);
}

#[tokio::test(start_paused = true)]
async fn creating_twice_is_already_exists_and_a_stale_replace_is_a_conflict() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    let created = create_bucket(&buckets, "b1", "eu").await;
    let again = buckets
        .create(&PostParams::default(), &bucket("b1", "eu"))
        .await
        .unwrap_err();
    assert_eq!(api_code(again), (409, "AlreadyExists".into()));

    buckets
        .patch(
            "b1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"region": "us"}})),
        )
        .await
        .unwrap();
    let mut stale = created;
    stale.spec.region = "ap".into();
    let conflict = buckets
        .replace("b1", &PostParams::default(), &stale)
        .await
        .unwrap_err();
    assert_eq!(api_code(conflict), (409, "Conflict".into()));
}

#[tokio::test(start_paused = true)]
async fn merge_json_and_apply_patches_all_work_and_strategic_merge_on_a_custom_resource_is_415() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));

    // Server-side apply creates when absent.
    let ssa = PatchParams::apply("test").force();
    let applied = buckets
        .patch("b1", &ssa, &Patch::Apply(json!({"apiVersion": "example.org/v1alpha1", "kind": "Bucket", "spec": {"region": "eu"}})))
        .await
        .unwrap();
    assert_eq!(applied.spec.region, "eu");

    let merged = buckets
        .patch(
            "b1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 5}})),
        )
        .await
        .unwrap();
    assert_eq!(merged.spec.size, Some(5));

    let ops: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/spec/size", "value": 5},
        {"op": "replace", "path": "/spec/region", "value": "us"},
        {"op": "remove", "path": "/spec/size"}
    ]))
    .unwrap();
    let patched = buckets
        .patch("b1", &PatchParams::default(), &Patch::Json::<()>(ops))
        .await
        .unwrap();
    assert_eq!(
        (patched.spec.region.as_str(), patched.spec.size),
        ("us", None)
    );

    let reapplied = buckets
        .patch("b1", &ssa, &Patch::Apply(json!({"apiVersion": "example.org/v1alpha1", "kind": "Bucket", "spec": {"region": "ap"}})))
        .await
        .unwrap();
    assert_eq!(reapplied.spec.region, "ap");

    let strategic = buckets
        .patch(
            "b1",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"region": "x"}})),
        )
        .await;
    assert_eq!(
        api_code(strategic.unwrap_err()),
        (415, "UnsupportedMediaType".into())
    );

    let configmaps: Api<ConfigMap> = Api::default_namespaced(client(&server));
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("c".into());
    configmaps
        .create(&PostParams::default(), &cm)
        .await
        .unwrap();
    let cm = configmaps
        .patch(
            "c",
            &PatchParams::default(),
            &Patch::Strategic(json!({"data": {"k": "v"}})),
        )
        .await
        .unwrap();
    assert_eq!(cm.data.unwrap()["k"], "v");
}

#[tokio::test(start_paused = true)]
async fn a_no_op_write_keeps_the_resource_version() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    let created = create_bucket(&buckets, "b1", "eu").await;
    let ssa = PatchParams::apply("ctrl").force();
    let body =
        json!({"apiVersion": "example.org/v1alpha1", "kind": "Bucket", "spec": {"region": "eu"}});
    // The first apply of the same value is not a no-op: ctrl joins managedFields.
    let first = buckets
        .patch("b1", &ssa, &Patch::Apply(&body))
        .await
        .unwrap();
    assert_ne!(
        first.metadata.resource_version,
        created.metadata.resource_version
    );
    let again = buckets
        .patch("b1", &ssa, &Patch::Apply(&body))
        .await
        .unwrap();
    assert_eq!(
        again.metadata.resource_version,
        first.metadata.resource_version
    );
    let created = first;
    let relabel = buckets
        .patch(
            "b1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"a": "b"}}})),
        )
        .await
        .unwrap();
    assert_ne!(
        relabel.metadata.resource_version,
        created.metadata.resource_version
    );
    assert_eq!(relabel.metadata.generation, Some(1), "labels are not spec");
}

#[tokio::test(start_paused = true)]
async fn a_strategic_merge_patch_merges_tagged_lists_and_records_its_manager() {
    // strategicpatch/patch.go with ObjectMeta's `patchStrategy:"merge"` finalizers.
    let server = server_with_buckets(Config::default());
    let configmaps: Api<ConfigMap> = Api::default_namespaced(client(&server));
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("c".into());
    cm.metadata.finalizers = Some(vec!["example.org/a".into()]);
    configmaps
        .create(&PostParams::default(), &cm)
        .await
        .unwrap();
    let params = PatchParams {
        field_manager: Some("finalizer-adder".into()),
        ..PatchParams::default()
    };
    let patched = configmaps
        .patch(
            "c",
            &params,
            &Patch::Strategic(json!({"metadata": {"finalizers": ["example.org/b"]}})),
        )
        .await
        .unwrap();
    assert_eq!(
        patched.metadata.finalizers,
        Some(vec!["example.org/b".into(), "example.org/a".into()])
    );
    let owners: Vec<String> = patched
        .metadata
        .managed_fields
        .unwrap()
        .into_iter()
        .filter_map(|e| e.manager)
        .collect();
    assert!(owners.contains(&"finalizer-adder".to_owned()), "{owners:?}");
    let removed = configmaps
        .patch(
            "c",
            &params,
            &Patch::Strategic(
                json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.org/a"]}}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        removed.metadata.finalizers,
        Some(vec!["example.org/b".into()])
    );
}

#[tokio::test(start_paused = true)]
async fn secrets_store_string_data_as_base64_data() {
    let server = server_with_buckets(Config::default());
    let secrets: Api<Secret> = Api::default_namespaced(client(&server));
    let mut secret = Secret::default();
    secret.metadata.name = Some("token".into());
    secret.string_data = Some([("token".to_owned(), "s3cr3t".to_owned())].into());
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let read = secrets.get("token").await.unwrap();
    assert_eq!(read.data.unwrap()["token"].0, b"s3cr3t");
    assert_eq!(read.type_.as_deref(), Some("Opaque"));
}
