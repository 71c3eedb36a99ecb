//! XRs reconciled in core's order against mock-apiserver, with the built-in function in
//! process: ten XRs of three composed resources each become Ready, and deleting them
//! leaves nothing.

use std::sync::Arc;
use std::time::Duration;

use composer::api::{CompositeResourceDefinition, LABEL_COMPOSITION_NAME, TYPE_VALID_PIPELINE};
use composer::composite::{
    Composer, DEFAULT_MAX_CONCURRENT_RECONCILES, FINALIZER, LABEL_COMPOSITE,
    RECONCILE_REQUESTED_AT_ANNOTATION, Realtime, Reconciler, Requeue, RequeueSettings, Watched,
    start, watch, watch_revisions,
};
use composer::function::builtin::{API_VERSION, KIND, Resources};
use composer::function::{Functions, InProcessRunner};
use composer::xcrd::for_composite_resource;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
};
use kube::core::GroupVersionKind;
use limiter::controller::Request;
use limiter::crossplane::circuit::BreakerConfig;
use mock_apiserver::{ApiServer, Config};
use serde_json::{Value, json};
use tokio::time::Instant;

const XRS: usize = 10;
const N: usize = 3;

fn open_crd(group: &str, kind: &str, plural: &str, scope: &str) -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": plural},
            "scope": scope,
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                }}}}],
        },
    }))
    .unwrap()
}

fn xrd() -> CompositeResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.crossplane.io/v2",
        "kind": "CompositeResourceDefinition",
        "metadata": {"name": "xwidgets.example.org"},
        "spec": {
            "group": "example.org",
            "names": {"kind": "XWidget", "plural": "xwidgets"},
            "versions": [{"name": "v1", "referenceable": true, "served": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"region": {"type": "string"}}},
                }}}}],
        },
    }))
    .unwrap()
}

fn resource(group: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, "v1", kind), plural)
}

fn pipeline() -> Value {
    json!([{"step": "compose", "functionRef": {"name": "resources"}, "input": {
        "apiVersion": API_VERSION, "kind": KIND, "ttl": "60s",
        "resources": [{"name": "widget", "count": N,
            "base": {"apiVersion": "test.example.org/v1", "kind": "Widget"},
            "patches": [{"fromFieldPath": "spec.region", "toFieldPath": "spec.region"}]}],
    }}])
}

/// The API server with the XR, Widget, Composition and revision kinds, a Composition of
/// three Widgets with a valid revision, and a reconciler of its XRs.
async fn stack() -> (ApiServer, kube::Client, Reconciler, ApiResource) {
    let server = ApiServer::new(Config::default());
    let client = kube::Client::new(server.service(), "default");
    let crds = Api::<CustomResourceDefinition>::all(client.clone());
    let pp = PostParams::default();
    crds.create(&pp, &for_composite_resource(&xrd()).unwrap())
        .await
        .unwrap();
    crds.create(
        &pp,
        &open_crd("test.example.org", "Widget", "widgets", "Namespaced"),
    )
    .await
    .unwrap();
    crds.create(
        &pp,
        &open_crd(
            "apiextensions.crossplane.io",
            "Composition",
            "compositions",
            "Cluster",
        ),
    )
    .await
    .unwrap();
    crds.create(
        &pp,
        &open_crd(
            "apiextensions.crossplane.io",
            "CompositionRevision",
            "compositionrevisions",
            "Cluster",
        ),
    )
    .await
    .unwrap();

    let compositions: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &resource("apiextensions.crossplane.io", "Composition", "compositions"),
    );
    let composition: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition",
        "metadata": {"name": "widgets"},
        "spec": {"compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XWidget"},
                 "mode": "Pipeline", "pipeline": pipeline()},
    }))
    .unwrap();
    let composition = compositions.create(&pp, &composition).await.unwrap();
    let revisions: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &resource(
            "apiextensions.crossplane.io",
            "CompositionRevision",
            "compositionrevisions",
        ),
    );
    let revision: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "apiextensions.crossplane.io/v1", "kind": "CompositionRevision",
        "metadata": {"name": "widgets-1", "labels": {LABEL_COMPOSITION_NAME: "widgets"},
            "ownerReferences": [{"apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition",
                "name": "widgets", "uid": composition.metadata.uid, "controller": true}]},
        "spec": {"compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XWidget"},
                 "mode": "Pipeline", "pipeline": pipeline(), "revision": 1},
    }))
    .unwrap();
    revisions.create(&pp, &revision).await.unwrap();
    let valid = json!({"status": {"conditions": [{"type": TYPE_VALID_PIPELINE, "status": "True",
        "reason": "ValidPipeline", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}});
    revisions
        .patch_status("widgets-1", &PatchParams::default(), &Patch::Merge(&valid))
        .await
        .unwrap();

    let xr_resource = resource("example.org", "XWidget", "xwidgets");
    let functions = Functions::new().with("resources", InProcessRunner::new(Resources));
    let reconciler = Reconciler::new(
        client.clone(),
        xrd(),
        xr_resource.clone(),
        Composer::new(client.clone(), functions),
        RequeueSettings::default(),
    )
    .with_realtime(Arc::new(Realtime::new(
        "example.org/v1",
        "XWidget",
        BreakerConfig::default(),
    )));
    (server, client, reconciler, xr_resource)
}

#[tokio::test(start_paused = true)]
async fn ten_xrs_of_three_resources_become_ready_and_deleting_them_leaves_nothing() {
    let (_server, client, reconciler, xr_resource) = stack().await;
    let pp = PostParams::default();
    let xrs: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &xr_resource);
    let widgets: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "default",
        &resource("test.example.org", "Widget", "widgets"),
    );
    let names: Vec<String> = (0..XRS).map(|i| format!("xr-{i}")).collect();
    for name in &names {
        let xr: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "example.org/v1", "kind": "XWidget",
            "metadata": {"name": name}, "spec": {"region": "eu-west-1"},
        }))
        .unwrap();
        xrs.create(&pp, &xr).await.unwrap();
        // Realtime on: the pipeline's 60 s TTL, jittered (0.5 is no jitter).
        let requeue = reconciler
            .reconcile(Some("default"), name, 0.5)
            .await
            .unwrap();
        assert_eq!(requeue, Requeue::After(Duration::from_secs(60)));
    }

    let all = widgets.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(all.len(), XRS * N);
    for name in &names {
        let xr = xrs.get(name).await.unwrap();
        assert_eq!(
            xr.metadata.finalizers.as_deref(),
            Some(&[FINALIZER.to_owned()][..])
        );
        assert_eq!(xr.metadata.labels.as_ref().unwrap()[LABEL_COMPOSITE], *name);
        let crossplane = &xr.data["spec"]["crossplane"];
        assert_eq!(crossplane["compositionRef"]["name"], "widgets");
        assert_eq!(crossplane["compositionRevisionRef"]["name"], "widgets-1");
        assert_eq!(crossplane["compositionUpdatePolicy"], "Automatic");
        let owned = all.iter().filter(|w| {
            w.metadata.labels.as_ref().unwrap()[LABEL_COMPOSITE] == *name
                && w.metadata.owner_references.as_ref().unwrap()[0].uid
                    == xr.metadata.uid.clone().unwrap()
        });
        assert_eq!(owned.count(), N);
    }

    // The provider's part: each composed resource reports Ready.
    for w in &all {
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
    // A reconcile request on the first XR.
    let request =
        json!({"metadata": {"annotations": {RECONCILE_REQUESTED_AT_ANNOTATION: "token-1"}}});
    xrs.patch(&names[0], &PatchParams::default(), &Patch::Merge(&request))
        .await
        .unwrap();
    for name in &names {
        reconciler
            .reconcile(Some("default"), name, 0.5)
            .await
            .unwrap();
        let xr = xrs.get(name).await.unwrap();
        let conditions = xr.data["status"]["conditions"].as_array().unwrap();
        let ready = conditions.iter().find(|c| c["type"] == "Ready").unwrap();
        assert_eq!(ready["status"], "True", "{name}: {conditions:?}");
        let responsive = conditions
            .iter()
            .find(|c| c["type"] == "Responsive")
            .unwrap();
        assert_eq!(
            (responsive["status"].as_str(), responsive["reason"].as_str()),
            (Some("True"), Some("WatchCircuitClosed"))
        );
    }
    let first = xrs.get(&names[0]).await.unwrap();
    assert_eq!(first.data["status"]["lastHandledReconcileAt"], "token-1");
    assert!(
        xrs.get(&names[1]).await.unwrap().data["status"]
            .get("lastHandledReconcileAt")
            .is_none()
    );

    // Deleting: the finalizer holds each XR until its reconcile removes it; the API
    // server's garbage collector then removes what it owned.
    for name in &names {
        xrs.delete(name, &DeleteParams::default()).await.unwrap();
        assert!(
            xrs.get_opt(name).await.unwrap().is_some(),
            "held by the finalizer"
        );
        assert_eq!(
            reconciler
                .reconcile(Some("default"), name, 0.5)
                .await
                .unwrap(),
            Requeue::Never
        );
    }
    assert!(
        xrs.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
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
async fn the_xrd_controller_s_workers_reconcile_queued_xrs_until_ready() {
    let (_server, client, reconciler, xr_resource) = stack().await;
    let xrs: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &xr_resource);
    let widgets: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "default",
        &resource("test.example.org", "Widget", "widgets"),
    );
    let controller = start(
        "xwidgets.example.org",
        Arc::new(reconciler),
        DEFAULT_MAX_CONCURRENT_RECONCILES,
    );
    assert_eq!(controller.name(), "composite/xwidgets.example.org");
    for i in 0..XRS {
        let name = format!("xr-{i}");
        let xr: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "example.org/v1", "kind": "XWidget",
            "metadata": {"name": name}, "spec": {"region": "eu-west-1"},
        }))
        .unwrap();
        xrs.create(&PostParams::default(), &xr).await.unwrap();
        controller.queue().add(Request::new("default", name));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let all = widgets.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(all.len(), XRS * N);

    for w in &all {
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
    // No watch feeds the queue yet: the 60 s TTL requeue (jittered ±10 %) brings each XR
    // back.
    tokio::time::sleep(Duration::from_secs(67)).await;
    for i in 0..XRS {
        let xr = xrs.get(&format!("xr-{i}")).await.unwrap();
        let conditions = xr.data["status"]["conditions"].as_array().unwrap().clone();
        let ready = conditions.iter().find(|c| c["type"] == "Ready").unwrap();
        assert_eq!(ready["status"], "True", "xr-{i}: {conditions:?}");
    }
    let stats = controller.stats();
    controller.shut_down().await;
    assert_eq!(stats.total(), 2 * XRS as u64, "{stats:?}");
}

#[tokio::test(start_paused = true)]
async fn with_watches_status_writes_make_xrs_ready_and_a_new_revision_moves_them_before_any_ttl() {
    let (_server, client, reconciler, xr_resource) = stack().await;
    let widget_resource = resource("test.example.org", "Widget", "widgets");
    let xrs: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &xr_resource);
    let widgets: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), "default", &widget_resource);
    let realtime = Arc::new(Realtime::new(
        "example.org/v1",
        "XWidget",
        BreakerConfig::default(),
    ));
    let controller = start(
        "xwidgets.example.org",
        Arc::new(reconciler),
        DEFAULT_MAX_CONCURRENT_RECONCILES,
    );
    let xr_watch = tokio::spawn(watch(
        Api::all_with(client.clone(), &xr_resource),
        Watched::Xr,
        Arc::clone(&realtime),
        controller.queue().clone(),
    ));
    let composed_watch = tokio::spawn(watch(
        Api::all_with(client.clone(), &widget_resource),
        Watched::Composed,
        Arc::clone(&realtime),
        controller.queue().clone(),
    ));

    // The XR watch enqueues each new XR: no manual adds.
    for i in 0..XRS {
        let xr: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "example.org/v1", "kind": "XWidget",
            "metadata": {"name": format!("xr-{i}")}, "spec": {"region": "eu-west-1"},
        }))
        .unwrap();
        xrs.create(&PostParams::default(), &xr).await.unwrap();
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let all = widgets.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(all.len(), XRS * N);

    for w in &all {
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
    // Well before the 60 s TTL: the composed resources' Update events bring the XRs back.
    tokio::time::sleep(Duration::from_secs(2)).await;
    for i in 0..XRS {
        let xr = xrs.get(&format!("xr-{i}")).await.unwrap();
        let conditions = xr.data["status"]["conditions"].as_array().unwrap().clone();
        let ready = conditions.iter().find(|c| c["type"] == "Ready").unwrap();
        assert_eq!(ready["status"], "True", "xr-{i}: {conditions:?}");
        // Three creates and three updates per XR, plus its own events: far below 100.
        assert!(
            realtime
                .responsive(Instant::now(), &Request::new("default", format!("xr-{i}")))
                .status
        );
    }

    // A new revision of the Composition: its events fan out to every Automatic XR, which
    // moves to it (crossplane#7114's fan-out).
    let revisions_watch = tokio::spawn(watch_revisions(
        Api::all(client.clone()),
        Api::all_with(client.clone(), &xr_resource),
        Arc::clone(&realtime),
        controller.queue().clone(),
    ));
    let compositions: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &resource("apiextensions.crossplane.io", "Composition", "compositions"),
    );
    let uid = compositions.get("widgets").await.unwrap().metadata.uid;
    let revisions: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &resource(
            "apiextensions.crossplane.io",
            "CompositionRevision",
            "compositionrevisions",
        ),
    );
    let second: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "apiextensions.crossplane.io/v1", "kind": "CompositionRevision",
        "metadata": {"name": "widgets-2", "labels": {LABEL_COMPOSITION_NAME: "widgets"},
            "ownerReferences": [{"apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition",
                "name": "widgets", "uid": uid, "controller": true}]},
        "spec": {"compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XWidget"},
                 "mode": "Pipeline", "pipeline": pipeline(), "revision": 2},
    }))
    .unwrap();
    revisions
        .create(&PostParams::default(), &second)
        .await
        .unwrap();
    let valid = json!({"status": {"conditions": [{"type": TYPE_VALID_PIPELINE, "status": "True",
        "reason": "ValidPipeline", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}});
    revisions
        .patch_status("widgets-2", &PatchParams::default(), &Patch::Merge(&valid))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    for i in 0..XRS {
        let xr = xrs.get(&format!("xr-{i}")).await.unwrap();
        assert_eq!(
            xr.data["spec"]["crossplane"]["compositionRevisionRef"]["name"], "widgets-2",
            "xr-{i}"
        );
    }
    revisions_watch.abort();
    xr_watch.abort();
    composed_watch.abort();
    let stats = controller.stats();
    controller.shut_down().await;
    assert!(stats.total() > 2 * XRS as u64, "{stats:?}");
}
