//! The garbage collector through kubectl's `delete --cascade=...` and kube-rs, and its
//! modes: immediate, asynchronous (as kube-controller-manager's) and none (envtest).

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DeleteParams, PostParams};
use mock_apiserver::{ApiServer, Config, GarbageCollection};
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

/// A server collecting as `mode` says, with a ConfigMap `owner` that owns a Secret
/// `dependent` (`blockOwnerDeletion: true`).
async fn owner_and_dependent(mode: GarbageCollection) -> (Api<ConfigMap>, Api<Secret>) {
    let server = ApiServer::new(Config::default().with_garbage_collection(mode));
    let client = crate::support::client(&server);
    let configmaps: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let secrets: Api<Secret> = Api::default_namespaced(client);
    let owner = configmaps
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "owner"}})).unwrap(),
        )
        .await
        .unwrap();
    secrets
        .create(
            &PostParams::default(),
            &serde_json::from_value(
                json!({"metadata": {"name": "dependent", "ownerReferences": [{
                "apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                "uid": owner.metadata.uid.unwrap(), "controller": true,
                "blockOwnerDeletion": true}]}}),
            )
            .unwrap(),
        )
        .await
        .unwrap();
    (configmaps, secrets)
}

const DELAY: Duration = Duration::from_secs(2);

#[tokio::test(start_paused = true)]
async fn immediate_collection_removes_dependents_inside_the_delete() {
    let (configmaps, secrets) = owner_and_dependent(GarbageCollection::Immediate).await;
    configmaps
        .delete("owner", &DeleteParams::background())
        .await
        .unwrap();
    assert!(secrets.get_opt("dependent").await.unwrap().is_none());
}

#[tokio::test(start_paused = true)]
async fn async_collection_removes_dependents_after_the_delay() {
    // pkg/controller/garbagecollector: the collector sees the owner's deletion through
    // its informers and deletes dependents later, outside the DELETE request.
    let (configmaps, secrets) =
        owner_and_dependent(GarbageCollection::Async { delay: DELAY }).await;
    configmaps
        .delete("owner", &DeleteParams::background())
        .await
        .unwrap();
    assert!(configmaps.get_opt("owner").await.unwrap().is_none());
    tokio::time::sleep(DELAY - Duration::from_millis(1)).await;
    assert!(secrets.get_opt("dependent").await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(2)).await;
    assert!(secrets.get_opt("dependent").await.unwrap().is_none());
}

#[tokio::test(start_paused = true)]
async fn without_a_collector_dependents_stay_with_their_dangling_references() {
    let (configmaps, secrets) = owner_and_dependent(GarbageCollection::None).await;
    configmaps
        .delete("owner", &DeleteParams::background())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(3600)).await;
    let dependent = secrets.get("dependent").await.unwrap();
    assert_eq!(dependent.metadata.owner_references.unwrap().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn an_async_foreground_delete_holds_the_owner_until_the_collector_removed_its_dependents() {
    // registry/generic/registry/store.go adds foregroundDeletion; the collector
    // (garbagecollector.go, processDeletingDependentsItem) deletes the dependents and
    // then removes the finalizer.
    let (configmaps, secrets) =
        owner_and_dependent(GarbageCollection::Async { delay: DELAY }).await;
    let answered = configmaps
        .delete("owner", &DeleteParams::foreground())
        .await
        .unwrap();
    let owner = answered.left().expect("the owner waits");
    assert_eq!(
        owner.metadata.finalizers,
        Some(vec!["foregroundDeletion".to_owned()])
    );
    assert!(owner.metadata.deletion_timestamp.is_some());
    assert!(secrets.get_opt("dependent").await.unwrap().is_some());
    tokio::time::sleep(DELAY - Duration::from_millis(1)).await;
    assert!(configmaps.get_opt("owner").await.unwrap().is_some());
    assert!(secrets.get_opt("dependent").await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(2)).await;
    assert!(secrets.get_opt("dependent").await.unwrap().is_none());
    assert!(configmaps.get_opt("owner").await.unwrap().is_none());
}

#[tokio::test(start_paused = true)]
async fn an_async_foreground_owner_goes_one_delay_after_a_finalized_dependent_goes() {
    let (configmaps, secrets) =
        owner_and_dependent(GarbageCollection::Async { delay: DELAY }).await;
    let mut dependent = secrets.get("dependent").await.unwrap();
    dependent.metadata.finalizers = Some(vec!["example.org/cleanup".into()]);
    secrets
        .replace("dependent", &PostParams::default(), &dependent)
        .await
        .unwrap();
    configmaps
        .delete("owner", &DeleteParams::foreground())
        .await
        .unwrap();
    tokio::time::sleep(DELAY + Duration::from_millis(1)).await;
    let dependent = secrets.get("dependent").await.unwrap();
    assert!(dependent.metadata.deletion_timestamp.is_some(), "deleting");
    assert!(configmaps.get_opt("owner").await.unwrap().is_some());
    let release = json!({"metadata": {"finalizers": null}});
    secrets
        .patch(
            "dependent",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(release),
        )
        .await
        .unwrap();
    assert!(secrets.get_opt("dependent").await.unwrap().is_none());
    tokio::time::sleep(DELAY - Duration::from_millis(1)).await;
    assert!(configmaps.get_opt("owner").await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(2)).await;
    assert!(configmaps.get_opt("owner").await.unwrap().is_none());
}

#[tokio::test(start_paused = true)]
async fn without_a_collector_a_foreground_delete_waits_for_ever() {
    let (configmaps, secrets) = owner_and_dependent(GarbageCollection::None).await;
    configmaps
        .delete("owner", &DeleteParams::foreground())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(3600)).await;
    let owner = configmaps.get("owner").await.unwrap();
    assert_eq!(
        owner.metadata.finalizers,
        Some(vec!["foregroundDeletion".to_owned()])
    );
    assert!(secrets.get_opt("dependent").await.unwrap().is_some());
}

#[tokio::test(start_paused = true)]
async fn an_async_orphaning_delete_strips_the_references_after_the_delay_then_lets_the_owner_go() {
    let (configmaps, secrets) =
        owner_and_dependent(GarbageCollection::Async { delay: DELAY }).await;
    let answered = configmaps
        .delete("owner", &DeleteParams::orphan())
        .await
        .unwrap();
    let owner = answered.left().expect("the owner waits");
    assert_eq!(owner.metadata.finalizers, Some(vec!["orphan".to_owned()]));
    tokio::time::sleep(DELAY + Duration::from_millis(1)).await;
    assert!(configmaps.get_opt("owner").await.unwrap().is_none());
    let dependent = secrets.get("dependent").await.unwrap();
    assert!(dependent.metadata.owner_references.is_none());
}
