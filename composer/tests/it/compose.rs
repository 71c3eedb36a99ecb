//! One XR composed against mock-apiserver with the built-in function in process: the
//! composed resources, their owner and label, readiness, the requests of a steady-state
//! compose, and garbage collection by the server when the XR goes.

use std::time::Duration;

use composer::api::CompositionRevision;
use composer::composite::{Composer, LABEL_COMPOSITE};
use composer::function::builtin::Resources;
use composer::function::{Functions, InProcessRunner};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use mock_apiserver::{ApiServer, Config, Verb};
use serde_json::json;
use tokio::time::Instant;

use crate::fixture::{Cluster, widget_resource, widgets_pipeline, xr_resource, xrd};

const N: usize = 3;

fn revision() -> CompositionRevision {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.crossplane.io/v1",
        "kind": "CompositionRevision",
        "metadata": {"name": "widgets-1"},
        "spec": {
            "revision": 1,
            "compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XWidget"},
            "pipeline": widgets_pipeline(N, "60s"),
        },
    }))
    .unwrap()
}

async fn setup() -> (ApiServer, kube::Client, Composer) {
    let cluster = Cluster::new(ApiServer::new(Config::default())).await;
    cluster.install_xrd(&xrd()).await;
    let functions = Functions::new().with("resources", InProcessRunner::new(Resources));
    let composer = Composer::new(cluster.client.clone(), functions);
    (cluster.server, cluster.client, composer)
}

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(120)
}

#[tokio::test(start_paused = true)]
async fn an_xr_is_composed_becomes_ready_and_a_steady_compose_applies_n_plus_two() {
    let (server, client, composer) = setup().await;
    let xrs: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &xr_resource());
    let widgets: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), "default", &widget_resource());
    let xr: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.org/v1", "kind": "XWidget",
        "metadata": {"name": "one", "labels": {LABEL_COMPOSITE: "one"}},
        "spec": {"region": "eu-west-1"},
    }))
    .unwrap();
    let xr = xrs.create(&PostParams::default(), &xr).await.unwrap();

    let first = composer
        .compose(&xr, &xr_resource(), &revision(), deadline())
        .await
        .unwrap();
    assert_eq!(first.outcome.waiting, N, "nothing is ready yet");
    assert_eq!(first.ttl, Some(Duration::from_secs(60)));
    let composed = widgets.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(composed.len(), N);
    for w in &composed {
        assert!(w.metadata.name.as_deref().unwrap().starts_with("one-"));
        assert_eq!(w.metadata.labels.as_ref().unwrap()[LABEL_COMPOSITE], "one");
        let owner = &w.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.uid.as_str()),
            ("XWidget", xr.metadata.uid.as_deref().unwrap())
        );
        assert_eq!(owner.controller, Some(true));
        assert_eq!(w.data["spec"]["region"], "eu-west-1");
    }
    let xr = xrs.get("one").await.unwrap();
    assert_eq!(
        xr.data["spec"]["crossplane"]["resourceRefs"]
            .as_array()
            .unwrap()
            .len(),
        N
    );
    assert_eq!(xr.data["status"]["conditions"][1]["reason"], "Creating");

    // The provider's part: every widget Ready.
    for w in &composed {
        let ready = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        widgets
            .patch_status(
                w.metadata.name.as_deref().unwrap(),
                &PatchParams::default(),
                &Patch::Merge(&ready),
            )
            .await
            .unwrap();
    }
    let second = composer
        .compose(&xr, &xr_resource(), &revision(), deadline())
        .await
        .unwrap();
    assert_eq!(second.outcome.waiting, 0);
    let xr = xrs.get("one").await.unwrap();
    let ready = &xr.data["status"]["conditions"][1];
    assert_eq!(
        (ready["type"].as_str(), ready["status"].as_str()),
        (Some("Ready"), Some("True"))
    );

    // A steady-state compose: N reads and N+2 server-side applies, nothing else.
    let before = server.journal().last_seq();
    let steady = composer
        .compose(&xr, &xr_resource(), &revision(), deadline())
        .await
        .unwrap();
    assert_eq!(steady.outcome.waiting, 0);
    let requests = server.journal().since(before);
    let count = |verb: Verb| requests.iter().filter(|e| e.verb == verb).count();
    assert_eq!(count(Verb::Patch), N + 2, "{requests:#?}");
    assert_eq!(count(Verb::Get), N);
    assert_eq!(requests.len(), 2 * N + 2);
    assert_eq!(
        widgets
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        N
    );

    // Deleting the XR leaves nothing: its composed resources are owned by it.
    xrs.delete("one", &DeleteParams::foreground())
        .await
        .unwrap();
    assert!(xrs.get_opt("one").await.unwrap().is_none());
    assert!(
        widgets
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

#[tokio::test(start_paused = true)]
async fn a_resource_no_longer_desired_is_deleted_as_garbage() {
    let (_server, client, composer) = setup().await;
    let xrs: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &xr_resource());
    let widgets: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), "default", &widget_resource());
    let xr: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.org/v1", "kind": "XWidget",
        "metadata": {"name": "two", "labels": {LABEL_COMPOSITE: "two"}},
        "spec": {},
    }))
    .unwrap();
    let xr = xrs.create(&PostParams::default(), &xr).await.unwrap();
    composer
        .compose(&xr, &xr_resource(), &revision(), deadline())
        .await
        .unwrap();

    let mut fewer = revision();
    fewer.spec.composition.pipeline[0].input.as_mut().unwrap()["resources"][0]["count"] = json!(1);
    let xr = xrs.get("two").await.unwrap();
    let composed = composer
        .compose(&xr, &xr_resource(), &fewer, deadline())
        .await
        .unwrap();
    assert_eq!(composed.deleted, N - 1);
    assert_eq!(
        widgets
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        1
    );
    let xr = xrs.get("two").await.unwrap();
    assert_eq!(
        xr.data["spec"]["crossplane"]["resourceRefs"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
