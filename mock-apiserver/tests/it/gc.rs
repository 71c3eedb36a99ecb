//! The garbage collector through kubectl's `delete --cascade=...` and kube-rs.

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

use crate::kubectl::Kubectl;

/// Creates a ConfigMap `owner` and a Secret `name` it owns (as crossplane-runtime owns a
/// connection Secret: `controller` and `blockOwnerDeletion`).
async fn owned_secret(k: &Kubectl, owner: &str, name: &str) {
    let configmaps: Api<ConfigMap> = Api::default_namespaced(k.client());
    let created = configmaps
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": owner}})).unwrap(),
        )
        .await
        .unwrap();
    let secrets: Api<Secret> = Api::default_namespaced(k.client());
    secrets
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": name, "ownerReferences": [{
                "apiVersion": "v1", "kind": "ConfigMap", "name": owner,
                "uid": created.metadata.uid.unwrap(), "controller": true,
                "blockOwnerDeletion": true}]}, "data": {"password": "czNjcjN0"}}))
            .unwrap(),
        )
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_delete_cascades_in_the_background_the_foreground_or_orphans() {
    let k = Kubectl::start().await;
    let secrets: Api<Secret> = Api::default_namespaced(k.client());
    owned_secret(&k, "bucket-a", "bucket-a-connection").await;
    owned_secret(&k, "bucket-b", "bucket-b-connection").await;
    owned_secret(&k, "bucket-c", "bucket-c-connection").await;

    k.ok(&["delete", "configmap", "bucket-a"]).await;
    assert!(
        secrets
            .get_opt("bucket-a-connection")
            .await
            .unwrap()
            .is_none()
    );

    let out = k
        .ok(&["delete", "configmap", "bucket-b", "--cascade=foreground"])
        .await;
    assert!(out.contains("deleted"), "{out}");
    assert!(
        secrets
            .get_opt("bucket-b-connection")
            .await
            .unwrap()
            .is_none()
    );

    k.ok(&["delete", "configmap", "bucket-c", "--cascade=orphan"])
        .await;
    let orphan = secrets.get("bucket-c-connection").await.unwrap();
    assert!(orphan.metadata.owner_references.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreground_delete_holds_the_owner_until_a_blocking_dependent_is_gone() {
    let k = Kubectl::start().await;
    owned_secret(&k, "owner", "held").await;
    let secrets: Api<Secret> = Api::default_namespaced(k.client());
    let mut held = secrets.get("held").await.unwrap();
    held.metadata.finalizers = Some(vec!["example.org/cleanup".into()]);
    secrets
        .replace("held", &PostParams::default(), &held)
        .await
        .unwrap();
    let configmaps: Api<ConfigMap> = Api::default_namespaced(k.client());
    let deleting = configmaps
        .delete("owner", &DeleteParams::foreground())
        .await
        .unwrap()
        .left()
        .expect("the owner waits for its dependents");
    assert_eq!(
        deleting.metadata.finalizers,
        Some(vec!["foregroundDeletion".into()])
    );
    assert!(
        secrets
            .get("held")
            .await
            .unwrap()
            .metadata
            .deletion_timestamp
            .is_some()
    );
    assert!(configmaps.get_opt("owner").await.unwrap().is_some());
    let mut held = secrets.get("held").await.unwrap();
    held.metadata.finalizers = None;
    secrets
        .replace("held", &PostParams::default(), &held)
        .await
        .unwrap();
    assert!(configmaps.get_opt("owner").await.unwrap().is_none());
}
