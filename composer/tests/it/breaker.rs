//! An XR with 60 composed resources whose provider writes their status quickly opens its
//! own circuit breaker (crossplane#7108): the composed resources' watch events, read from
//! mock-apiserver's watch, mapped back to the XR through the breaker.

use std::collections::HashMap;
use std::time::Duration;

use composer::api::CompositionRevision;
use composer::composite::{Composer, LABEL_COMPOSITE, Realtime};
use composer::function::builtin::Resources;
use composer::function::{Functions, InProcessRunner};
use futures::{StreamExt, TryStreamExt};
use kube::api::{DynamicObject, ListParams, PostParams, WatchParams};
use kube::core::WatchEvent as KubeEvent;
use limiter::controller::Request;
use limiter::crossplane::circuit::{BreakerConfig, WatchEvent};
use mock_apiserver::{ApiServer, Config};
use serde_json::json;
use tokio::time::Instant;

use crate::fixture::{Cluster, widget_resource, widgets_pipeline, xr_resource, xrd};

const N: usize = 60;

fn revision() -> CompositionRevision {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.crossplane.io/v1", "kind": "CompositionRevision",
        "metadata": {"name": "widgets-1"},
        "spec": {"revision": 1,
            "compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XWidget"},
            "pipeline": widgets_pipeline(N, "60s")},
    }))
    .unwrap()
}

#[tokio::test(start_paused = true)]
async fn an_xr_of_sixty_resources_whose_provider_writes_status_opens_its_own_breaker() {
    let cluster = Cluster::new(ApiServer::new(Config::default())).await;
    cluster.install_xrd(&xrd()).await;
    let client = cluster.client.clone();
    let pp = PostParams::default();
    let xr_resource = xr_resource();
    let xrs = cluster.api(&xr_resource);
    let widgets = cluster.api(&widget_resource());

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
    assert_eq!(cluster.mark_ready(&widget_resource()).await, N);

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
