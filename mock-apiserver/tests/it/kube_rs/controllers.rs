//! What a controller does through kube-rs: status through its subresource, kube's
//! finalizer helper, and events through kube's Recorder.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Event as CoreEvent;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{Event as FinalizerEvent, finalizer};
use kube::{Resource, ResourceExt};
use mock_apiserver::Config;
use serde_json::json;

use super::api_code;
use crate::support::{
    Bucket, BucketStatus, Condition, bucket, client, create_bucket, server_with_buckets,
};

#[tokio::test(start_paused = true)]
async fn status_changes_only_through_the_status_subresource_and_never_move_the_generation() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    let mut with_status = bucket("b1", "eu");
    with_status.status = Some(BucketStatus {
        conditions: vec![Condition {
            type_: "Ready".into(),
            status: "True".into(),
            observed_generation: None,
        }],
    });
    let created = buckets
        .create(&PostParams::default(), &with_status)
        .await
        .unwrap();
    assert_eq!(created.status, None, "status is dropped on create");

    let ignored = buckets
        .patch(
            "b1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}})),
        )
        .await
        .unwrap();
    assert_eq!(ignored.status, None, "the main resource ignores status");
    assert_eq!(
        ignored.metadata.resource_version, created.metadata.resource_version,
        "an ignored change is a no-op"
    );

    let condition = json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}});
    let patched = buckets
        .patch_status("b1", &PatchParams::default(), &Patch::Merge(condition))
        .await
        .unwrap();
    assert_eq!(
        patched.status.as_ref().unwrap().conditions[0].status,
        "False"
    );
    assert_eq!(patched.metadata.generation, Some(1));

    let mut replaced = patched.clone();
    replaced.status.as_mut().unwrap().conditions[0].status = "True".into();
    replaced.spec.region = "ignored".into();
    let replaced = buckets
        .replace_status("b1", &PostParams::default(), &replaced)
        .await
        .unwrap();
    assert_eq!(replaced.status.unwrap().conditions[0].status, "True");
    assert_eq!(
        replaced.spec.region, "eu",
        "the status subresource ignores spec"
    );

    let ssa = buckets
        .patch_status(
            "b1",
            &PatchParams::apply("ctrl").force(),
            &Patch::Apply(json!({"apiVersion": "example.org/v1alpha1", "kind": "Bucket", "status": {"conditions": [{"type": "Synced", "status": "True"}]}})),
        )
        .await
        .unwrap();
    assert_eq!(ssa.status.unwrap().conditions[0].type_, "Synced");
}

#[tokio::test(start_paused = true)]
async fn kubes_finalizer_helper_adds_runs_cleanup_and_releases_the_object() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    create_bucket(&buckets, "b1", "eu").await;
    let name = "example.org/cleanup";
    let reconcile = |event: FinalizerEvent<Bucket>| async move {
        Ok::<_, std::convert::Infallible>(match event {
            FinalizerEvent::Apply(_) => Action::await_change(),
            FinalizerEvent::Cleanup(_) => Action::await_change(),
        })
    };

    // First pass adds the finalizer with a `test null` + `add` JSON patch.
    finalizer(
        &buckets,
        name,
        Arc::new(buckets.get("b1").await.unwrap()),
        reconcile,
    )
    .await
    .unwrap();
    let with_finalizer = buckets.get("b1").await.unwrap();
    assert_eq!(with_finalizer.finalizers(), [name.to_owned()]);

    // Deleting now only marks the object.
    buckets
        .delete("b1", &DeleteParams::default())
        .await
        .unwrap();
    let deleting = buckets.get("b1").await.unwrap();
    assert!(deleting.metadata.deletion_timestamp.is_some());
    assert_eq!(deleting.metadata.deletion_grace_period_seconds, Some(0));
    let add_more = buckets
        .patch(
            "b1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": [name, "another"]}})),
        )
        .await
        .unwrap_err();
    assert_eq!(
        api_code(add_more).0,
        422,
        "no new finalizers on a deleting object"
    );

    // Cleanup removes the finalizer, which deletes the object.
    finalizer(&buckets, name, Arc::new(deleting), reconcile)
        .await
        .unwrap();
    assert!(buckets.get_opt("b1").await.unwrap().is_none());

    // A later object can take the finalizer again: no empty `finalizers: []` remains.
    create_bucket(&buckets, "b2", "eu").await;
    buckets
        .patch(
            "b2",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": [name]}})),
        )
        .await
        .unwrap();
    let b2 = buckets
        .patch(
            "b2",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    assert!(b2.metadata.finalizers.is_none());
    finalizer(&buckets, name, Arc::new(b2), reconcile)
        .await
        .unwrap();
    assert_eq!(
        buckets.get("b2").await.unwrap().finalizers(),
        [name.to_owned()]
    );
}

#[tokio::test(start_paused = true)]
async fn recorder_events_show_up_in_the_core_event_view_for_describe() {
    let server = server_with_buckets(Config::default());
    let client = client(&server);
    let buckets: Api<Bucket> = Api::default_namespaced(client.clone());
    let b1 = create_bucket(&buckets, "b1", "eu").await;
    let recorder = Recorder::new(
        client.clone(),
        Reporter {
            controller: "provider".into(),
            instance: Some("p-0".into()),
        },
    );
    let event = Event {
        type_: EventType::Normal,
        reason: "Created".into(),
        note: Some("bucket created".into()),
        action: "Create".into(),
        secondary: None,
    };
    let reference = b1.object_ref(&());
    recorder.publish(&event, &reference).await.unwrap();
    recorder.publish(&event, &reference).await.unwrap();

    let core: Api<CoreEvent> = Api::default_namespaced(client);
    let selector = format!(
        "involvedObject.name=b1,involvedObject.kind=Bucket,involvedObject.uid={}",
        b1.uid().unwrap()
    );
    let events = core
        .list(&ListParams::default().fields(&selector))
        .await
        .unwrap();
    assert_eq!(events.items.len(), 1);
    let seen = &events.items[0];
    assert_eq!(seen.message.as_deref(), Some("bucket created"));
    assert_eq!(seen.count, Some(2), "the repeat patched the series");
    assert_eq!(
        seen.source.as_ref().and_then(|s| s.component.as_deref()),
        Some("provider")
    );
}
