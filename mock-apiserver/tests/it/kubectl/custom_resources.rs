//! kubectl and custom resources: a CRD applied, established and deleted; apply, get,
//! describe, annotate, label, patch, watch, wait and delete of its objects.

use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::{Resource, ResourceExt};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

use super::{BOUND, Kubectl};
use crate::support::bucket;

const B1: &str =
    "apiVersion: example.org/v1alpha1\nkind: Bucket\nmetadata:\n  name: b1\nspec:\n  region: eu\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_applies_a_crd_and_then_applies_gets_and_describes_custom_resources() {
    let k = Kubectl::start().await.with_crd().await;
    let (ok, out, err) = k.run_with_input(&["apply", "-f", "-"], B1).await;
    assert!(
        ok && out.contains("bucket.example.org/b1 created"),
        "{out}{err}"
    );
    let (ok, out, err) = k
        .run_with_input(&["apply", "-f", "-"], &B1.replace("eu", "us"))
        .await;
    assert!(
        ok && out.contains("bucket.example.org/b1 configured"),
        "{out}{err}"
    );

    let table = k.ok(&["get", "buckets"]).await;
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["NAME", "READY", "REGION", "AGE"],
        "printer columns come from the CRD"
    );
    assert!(table.lines().nth(1).unwrap().starts_with("b1"), "{table}");
    assert!(
        k.ok(&["get", "bk"]).await.contains("us"),
        "short names work"
    );

    let yaml = k.ok(&["get", "bucket", "b1", "-o", "yaml"]).await;
    assert!(
        yaml.contains("region: us") && yaml.contains("resourceVersion:"),
        "{yaml}"
    );

    let b1 = k.buckets().get("b1").await.unwrap();
    let recorder = Recorder::new(
        k.client(),
        Reporter {
            controller: "provider".into(),
            instance: None,
        },
    );
    let event = Event {
        type_: EventType::Warning,
        reason: "QuotaExceeded".into(),
        note: Some("the cloud said no".into()),
        action: "Create".into(),
        secondary: None,
    };
    recorder.publish(&event, &b1.object_ref(&())).await.unwrap();
    let described = k.ok(&["describe", "bucket", "b1"]).await;
    assert!(
        described.contains("Name:") && described.contains("b1"),
        "{described}"
    );
    assert!(
        described.contains("QuotaExceeded") && described.contains("the cloud said no"),
        "{described}"
    );

    let (ok, out, err) = k
        .run_with_input(
            &["apply", "--server-side", "-f", "-"],
            &B1.replace("eu", "ap"),
        )
        .await;
    assert!(ok && out.contains("serverside-applied"), "{out}{err}");
    assert_eq!(k.buckets().get("b1").await.unwrap().spec.region, "ap");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_annotates_labels_and_merge_patches_but_strategic_patches_of_custom_resources_fail()
{
    let k = Kubectl::start().await.with_crd().await;
    k.buckets()
        .create(&PostParams::default(), &bucket("b1", "eu"))
        .await
        .unwrap();
    k.ok(&[
        "annotate",
        "bucket",
        "b1",
        "crossplane.io/poll-interval=10s",
    ])
    .await;
    k.ok(&["label", "bucket", "b1", "tier=gold"]).await;
    k.ok(&[
        "patch",
        "bucket",
        "b1",
        "--type=merge",
        "-p",
        r#"{"spec":{"region":"us"}}"#,
    ])
    .await;
    let b1 = k.buckets().get("b1").await.unwrap();
    assert_eq!(b1.annotations()["crossplane.io/poll-interval"], "10s");
    assert_eq!(b1.labels()["tier"], "gold");
    assert_eq!(b1.spec.region, "us");
    assert_eq!(
        k.ok(&["get", "buckets", "-l", "tier=gold", "-o", "name"])
            .await
            .trim(),
        "bucket.example.org/b1"
    );

    let (ok, _, err) = k
        .run(&["patch", "bucket", "b1", "-p", r#"{"spec":{"region":"ap"}}"#])
        .await;
    assert!(
        !ok && err.contains("not supported"),
        "strategic merge is refused: {err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_watch_prints_the_current_rows_and_then_changes() {
    let k = Kubectl::start().await.with_crd().await;
    k.buckets()
        .create(&PostParams::default(), &bucket("b1", "eu"))
        .await
        .unwrap();
    let mut child = k
        .command(&["get", "buckets", "-w", "--request-timeout=20s"])
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next_line = async || {
        tokio::time::timeout(BOUND, lines.next_line())
            .await
            .expect("a line in time")
            .unwrap()
    };
    assert!(next_line().await.unwrap().starts_with("NAME"));
    assert!(next_line().await.unwrap().contains("eu"));
    k.buckets()
        .patch(
            "b1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"region": "ap"}})),
        )
        .await
        .unwrap();
    let changed = next_line().await.unwrap();
    assert!(
        changed.starts_with("b1") && changed.contains("ap"),
        "{changed}"
    );
    child.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_wait_sees_a_ready_condition_written_through_status() {
    let k = Kubectl::start().await.with_crd().await;
    let b1 = k
        .buckets()
        .create(&PostParams::default(), &bucket("b1", "eu"))
        .await
        .unwrap();
    let waiter = k
        .command(&[
            "wait",
            "--for=condition=Ready",
            "bucket/b1",
            "--timeout=50s",
        ])
        .spawn()
        .unwrap();
    k.wait_for_watch().await;
    let status = json!({"status": {"conditions": [
        {"type": "Ready", "status": "True", "observedGeneration": b1.metadata.generation}
    ]}});
    k.buckets()
        .patch_status("b1", &PatchParams::default(), &Patch::Merge(status))
        .await
        .unwrap();
    let output = tokio::time::timeout(BOUND, waiter.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("condition met"),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        k.ok(&["get", "buckets"])
            .await
            .lines()
            .nth(1)
            .unwrap()
            .contains("True"),
        "READY column shows it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_delete_removes_objects_and_waits_for_finalizers_to_be_released() {
    let k = Kubectl::start().await.with_crd().await;
    k.buckets()
        .create(&PostParams::default(), &bucket("plain", "eu"))
        .await
        .unwrap();
    let out = k.ok(&["delete", "bucket", "plain"]).await;
    assert!(out.contains("deleted"), "{out}");
    assert!(k.buckets().get_opt("plain").await.unwrap().is_none());

    let mut held = bucket("held", "eu");
    held.metadata.finalizers = Some(vec!["example.org/cleanup".into()]);
    k.buckets()
        .create(&PostParams::default(), &held)
        .await
        .unwrap();
    k.ok(&["delete", "bucket", "held", "--wait=false"]).await;
    let marked = k.buckets().get("held").await.unwrap();
    assert!(marked.metadata.deletion_timestamp.is_some());

    let deleter = k
        .command(&["delete", "bucket", "held", "--timeout=50s"])
        .spawn()
        .unwrap();
    k.wait_for_watch().await;
    k.buckets()
        .patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    let output = tokio::time::timeout(BOUND, deleter.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(k.buckets().get_opt("held").await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crd_applied_with_kubectl_is_established_and_deleting_it_removes_the_kind() {
    let k = Kubectl::start().await.with_crd().await;
    k.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/buckets.example.org",
        "--timeout=30s",
    ])
    .await;
    k.buckets()
        .create(&PostParams::default(), &bucket("b1", "eu"))
        .await
        .unwrap();
    let crd = k.dir.join("crd.yaml");
    k.ok(&["delete", "-f", crd.to_str().unwrap()]).await;
    assert_eq!(
        k.server.object_count("example.org", "v1alpha1", "buckets"),
        0
    );
    let fresh_cache = k.dir.join("cache-after-delete");
    let (ok, _, err) = k
        .run(&[
            "--cache-dir",
            fresh_cache.to_str().unwrap(),
            "get",
            "buckets",
        ])
        .await;
    assert!(
        !ok && err.contains("the server doesn't have a resource type"),
        "{err}"
    );
}
