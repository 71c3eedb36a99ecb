//! An XR with 60 composed resources whose provider writes their status quickly opens its
//! own circuit breaker (crossplane#7108): the composed resources' watch events, read from
//! mock-apiserver's watch, mapped back to the XR through the breaker.

use std::collections::HashMap;
use std::time::Duration;

use composer::api::{CompositeResourceDefinition, CompositionRevision};
use composer::composite::{Composer, LABEL_COMPOSITE, Realtime};
use composer::function::builtin::{API_VERSION, KIND, Resources};
use composer::function::{Functions, InProcessRunner};
use composer::xcrd::for_composite_resource;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchParams,
};
use kube::core::{GroupVersionKind, WatchEvent as KubeEvent};
use limiter::controller::Request;
use limiter::crossplane::circuit::{BreakerConfig, WatchEvent};
use mock_apiserver::{ApiServer, Config};
use serde_json::json;
use tokio::time::Instant;

const N: usize = 60;

fn xrd() -> CompositeResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.crossplane.io/v2",
        "kind": "CompositeResourceDefinition",
        "metadata": {"name": "xwidgets.example.org"},
        "spec": {"group": "example.org", "names": {"kind": "XWidget", "plural": "xwidgets"},
            "versions": [{"name": "v1", "referenceable": true, "served": true,
                "schema": {"openAPIV3Schema": {"type": "object"}}}]},
    }))
    .unwrap()
}

fn widget_crd() -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.test.example.org"},
        "spec": {"group": "test.example.org", "names": {"kind": "Widget", "plural": "widgets"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]},
    }))
    .unwrap()
}

fn revision() -> CompositionRevision {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.crossplane.io/v1", "kind": "CompositionRevision",
        "metadata": {"name": "widgets-1"},
        "spec": {"revision": 1,
            "compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XWidget"},
            "pipeline": [{"step": "compose", "functionRef": {"name": "resources"}, "input": {
                "apiVersion": API_VERSION, "kind": KIND,
                "resources": [{"name": "widget", "count": N,
                    "base": {"apiVersion": "test.example.org/v1", "kind": "Widget"}}]}}]},
    }))
    .unwrap()
}

#[tokio::test(start_paused = true)]
async fn an_xr_of_sixty_resources_whose_provider_writes_status_opens_its_own_breaker() {
    let server = ApiServer::new(Config::default());
    let client = kube::Client::new(server.service(), "default");
    let crds = Api::<CustomResourceDefinition>::all(client.clone());
    let pp = PostParams::default();
    crds.create(&pp, &for_composite_resource(&xrd()).unwrap())
        .await
        .unwrap();
    crds.create(&pp, &widget_crd()).await.unwrap();
    let xr_resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.org", "v1", "XWidget"),
        "xwidgets",
    );
    let widget_resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("test.example.org", "v1", "Widget"),
        "widgets",
    );
    let xrs: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &xr_resource);
    let widgets: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), "default", &widget_resource);

    let from = widgets
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let mut events = widgets
        .watch(&WatchParams::default(), &from)
        .await
        .unwrap()
        .boxed();

    let xr: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.org/v1", "kind": "XWidget",
        "metadata": {"name": "big", "labels": {LABEL_COMPOSITE: "big"}}, "spec": {},
    }))
    .unwrap();
    let xr = xrs.create(&pp, &xr).await.unwrap();
    let functions = Functions::new().with("resources", InProcessRunner::new(Resources));
    let composer = Composer::new(client.clone(), functions);
    composer
        .compose(
            &xr,
            &xr_resource,
            &revision(),
            Instant::now() + Duration::from_secs(120),
        )
        .await
        .unwrap();
    // The provider: every composed resource's status written at once.
    for w in widgets.list(&ListParams::default()).await.unwrap().items {
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

    // Core's defaults: burst 100, refill 1/s; all within the same instant.
    let realtime = Realtime::new("example.org/v1", "XWidget", BreakerConfig::default());
    let now = Instant::now();
    let target = Request::new("default", "big");
    let mut last: HashMap<String, DynamicObject> = HashMap::new();
    let (mut creates, mut updates, mut kept, mut dropped) = (0, 0, 0, 0);
    while creates + updates < 2 * N {
        let event = tokio::time::timeout(Duration::from_secs(5), events.try_next())
            .await
            .expect("the watch delivers every event")
            .unwrap()
            .expect("the watch stays open");
        let (kind, object) = match event {
            KubeEvent::Added(o) => (WatchEvent::Create, o),
            KubeEvent::Modified(o) => (WatchEvent::Update, o),
            other => panic!("unexpected {other:?}"),
        };
        let name = object.metadata.name.clone().unwrap();
        let handled = realtime.composed(now, kind, last.get(&name), &object);
        if handled.enqueued.contains(&target) {
            kept += 1;
        } else {
            dropped += 1;
        }
        match kind {
            WatchEvent::Create => creates += 1,
            _ => updates += 1,
        }
        last.insert(name, object);
    }
    assert_eq!((creates, updates), (N, N));
    // 60 creates cost 60 tokens; 20 updates the other 40; the 21st opens the circuit and
    // is still kept; the remaining 39 are dropped.
    assert_eq!((kept, dropped), (N + 21, N - 21));
    let responsive = realtime.responsive(now, &target);
    assert!(!responsive.status);
    assert_eq!(responsive.reason, "WatchCircuitOpen");
    assert!(
        responsive
            .message
            .starts_with("Too many watch events from Widget/"),
        "{}",
        responsive.message
    );
}
