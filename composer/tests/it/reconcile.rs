//! XRs reconciled in core's order against mock-apiserver, with the built-in function in
//! process: ten XRs of three composed resources each become Ready, and deleting them
//! leaves nothing.

use std::sync::Arc;
use std::time::Duration;

use composer::composite::{
    Cache, DEFAULT_MAX_CONCURRENT_RECONCILES, FINALIZER, LABEL_COMPOSITE,
    RECONCILE_REQUESTED_AT_ANNOTATION, Realtime, ReconcileError, Reconciler, Requeue,
    RequeueSettings, start,
};
use composer::function::builtin::Resources;
use composer::function::{Functions, InProcessRunner};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use limiter::controller::Request;
use limiter::crossplane::circuit::BreakerConfig;
use mock_apiserver::Verb;
use serde_json::json;
use tokio::time::Instant;

use crate::fixture::{
    Cluster, Running, cached_widgets, is_true, realtime, reconciler, widget_resource,
    widgets_cluster, widgets_pipeline, xr, xr_resource,
};

const XRS: usize = 10;
const N: usize = 3;

/// The API server with Crossplane's kinds, the XR kind, a Composition of three Widgets with
/// a valid revision, and a reconciler of its XRs showing `breaker`.
async fn stack(breaker: &Arc<Realtime>) -> (Cluster, Reconciler) {
    let cluster = widgets_cluster(N).await;
    let functions = Functions::new().with("resources", InProcessRunner::new(Resources));
    let reconciler = reconciler(&cluster, functions, RequeueSettings::default(), breaker);
    (cluster, reconciler)
}

/// A second on, every XR has its `N` Widgets; the provider's part then marks them all Ready.
async fn compose_then_mark_ready(cluster: &Cluster) {
    tokio::time::sleep(Duration::from_secs(1)).await;
    let widgets = cluster.api(&widget_resource());
    let all = widgets.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(all.len(), XRS * N);
    cluster.mark_ready(&widget_resource()).await;
}

/// Every XR is Ready.
async fn assert_all_ready(cluster: &Cluster) {
    for i in 0..XRS {
        let xr = cluster.get(&xr_resource(), &format!("xr-{i}")).await;
        assert!(is_true(&xr, "Ready"), "xr-{i}: {:?}", xr.data["status"]);
    }
}

#[tokio::test(start_paused = true)]
async fn ten_xrs_of_three_resources_become_ready_and_deleting_them_leaves_nothing() {
    let (cluster, reconciler) = stack(&realtime(BreakerConfig::default())).await;
    let xrs = cluster.api(&xr_resource());
    let widgets = cluster.api(&widget_resource());
    let names: Vec<String> = (0..XRS).map(|i| format!("xr-{i}")).collect();
    for name in &names {
        xrs.create(&PostParams::default(), &xr(name)).await.unwrap();
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
    assert_eq!(cluster.mark_ready(&widget_resource()).await, XRS * N);
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
        assert!(is_true(&xr, "Ready"), "{name}: {:?}", xr.data["status"]);
        let conditions = xr.data["status"]["conditions"].as_array().unwrap();
        let responsive = conditions
            .iter()
            .find(|c| c["type"] == "Responsive")
            .unwrap();
        assert_eq!(
            (responsive["status"].as_str(), responsive["reason"].as_str()),
            (Some("True"), Some("WatchCircuitClosed"))
        );
    }
    // Core sets the token on the XR it holds, but a compose's status apply loads the API
    // server's answer into that XR, so a reconcile that composes does not keep the token
    // (`errors.rs`' tests show the failure path, which does).
    for name in &names[..2] {
        assert!(
            xrs.get(name).await.unwrap().data["status"]
                .get("lastHandledReconcileAt")
                .is_none()
        );
    }

    // Deleting: the finalizer holds each XR until its reconcile removes it; the API
    // server's garbage collector then removes what it owned. Core's reconcile then writes
    // the status of an XR that is gone, and returns that NotFound (the next reconcile
    // finds nothing).
    for name in &names {
        xrs.delete(name, &DeleteParams::default()).await.unwrap();
        assert!(
            xrs.get_opt(name).await.unwrap().is_some(),
            "held by the finalizer"
        );
        let gone = reconciler.reconcile(Some("default"), name, 0.5).await;
        assert!(
            matches!(&gone, Err(ReconcileError::Api { action, source: kube::Error::Api(s) })
                if *action == "update composite resource status" && s.code == 404),
            "{gone:?}"
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
    let (cluster, reconciler) = stack(&realtime(BreakerConfig::default())).await;
    let xrs = cluster.api(&xr_resource());
    let controller = start(
        "xwidgets.example.org",
        Arc::new(reconciler),
        DEFAULT_MAX_CONCURRENT_RECONCILES,
    );
    assert_eq!(controller.name(), "composite/xwidgets.example.org");
    for i in 0..XRS {
        let name = format!("xr-{i}");
        xrs.create(&PostParams::default(), &xr(&name))
            .await
            .unwrap();
        controller.queue().add(Request::new("default", name));
    }
    compose_then_mark_ready(&cluster).await;
    // No watch feeds the queue yet: the 60 s TTL requeue (jittered ±10 %) brings each XR
    // back.
    tokio::time::sleep(Duration::from_secs(67)).await;
    assert_all_ready(&cluster).await;
    let stats = controller.stats();
    controller.shut_down().await;
    assert_eq!(stats.total(), 2 * XRS as u64, "{stats:?}");
}

#[tokio::test(start_paused = true)]
async fn with_watches_status_writes_make_xrs_ready_and_a_new_revision_moves_them_before_any_ttl() {
    let breaker = realtime(BreakerConfig::default());
    let (cluster, reconciler) = stack(&breaker).await;
    let xrs = cluster.api(&xr_resource());
    // The XR, Widget and revision watches feed the queue: no manual adds.
    let running = Running::start(
        &cluster,
        reconciler,
        Arc::clone(&breaker),
        &[widget_resource()],
    );
    for i in 0..XRS {
        xrs.create(&PostParams::default(), &xr(&format!("xr-{i}")))
            .await
            .unwrap();
    }
    compose_then_mark_ready(&cluster).await;
    // Well before the 60 s TTL: the composed resources' Update events bring the XRs back.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_all_ready(&cluster).await;
    for i in 0..XRS {
        // Three creates and three updates per XR, plus its own events: far below 100.
        assert!(
            running
                .realtime
                .responsive(Instant::now(), &Request::new("default", format!("xr-{i}")))
                .status
        );
    }

    // A new revision of the Composition: its events fan out to every Automatic XR, which
    // moves to it (crossplane#7114's fan-out).
    cluster
        .revision("widgets", 2, &widgets_pipeline(N, "60s"))
        .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    for i in 0..XRS {
        let xr = xrs.get(&format!("xr-{i}")).await.unwrap();
        assert_eq!(
            xr.data["spec"]["crossplane"]["compositionRevisionRef"]["name"], "widgets-2",
            "xr-{i}"
        );
    }
    let stats = running.stop().await;
    assert!(stats.total() > 2 * XRS as u64, "{stats:?}");
}

/// `(verb, resource)` of each request since `from`.
fn requests(cluster: &Cluster, from: u64) -> Vec<(Verb, String)> {
    cluster
        .server
        .journal()
        .since(from)
        .into_iter()
        .map(|e| (e.verb, e.resource.to_string()))
        .collect()
}

fn count(requests: &[(Verb, String)], verb: Verb, resource: &str) -> usize {
    requests
        .iter()
        .filter(|(v, r)| *v == verb && r == resource)
        .count()
}

#[tokio::test(start_paused = true)]
async fn a_steady_reconcile_reads_composed_resources_from_the_cache_and_writes_status_only_when_it_changed()
 {
    let breaker = realtime(BreakerConfig::default());
    let cluster = widgets_cluster(N).await;
    let cache = Cache::new();
    // The XWidget, Composition, revision and Widget watches keep the cache, started once as
    // the controller starts them; nothing drains their queue, so every reconcile here is
    // the test's.
    let (reconciler, watches) = cached_widgets(&cluster, &breaker, &cache);
    let xrs = cluster.api(&xr_resource());
    xrs.create(&PostParams::default(), &xr("xr-0"))
        .await
        .unwrap();
    // The reconciles read the XR from the cache: let its watch deliver it (core reconciles
    // an XR on that very event).
    tokio::time::sleep(Duration::from_secs(1)).await;
    let reconcile = || async {
        let from = cluster.server.journal().last_seq();
        reconciler
            .reconcile(Some("default"), "xr-0", 0.5)
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_secs(1)).await;
        requests(&cluster, from)
    };

    // The first: the finalizer, Composition, revision and label Updates, the applies, and a
    // status Update (Synced and Ready are new). Each XR Update's answer replaced the XR
    // held, as in core, dropping the Responsive condition marked before them; the second
    // reconcile marks it again, a change, so it writes the status too.
    let first = reconcile().await;
    assert_eq!(count(&first, Verb::Patch, "widgets"), N);
    assert_eq!(
        count(&first, Verb::Update, "xwidgets/status"),
        1,
        "{first:#?}"
    );
    let types = |xr: &kube::api::DynamicObject| -> Vec<String> {
        xr.data["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["type"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(types(&xrs.get("xr-0").await.unwrap()), ["Synced", "Ready"]);
    let second = reconcile().await;
    assert_eq!(
        count(&second, Verb::Update, "xwidgets/status"),
        1,
        "{second:#?}"
    );
    assert_eq!(
        types(&xrs.get("xr-0").await.unwrap()),
        ["Synced", "Ready", "Responsive"]
    );
    // Nothing changed since: N+2 applies, no status Update, and no read at all: the XR,
    // the Composition, its revision and every Widget come from the watches' cache, as in
    // core.
    let steady = reconcile().await;
    assert_eq!(count(&steady, Verb::Patch, "widgets"), N);
    assert_eq!(count(&steady, Verb::Patch, "xwidgets"), 1);
    assert_eq!(count(&steady, Verb::Patch, "xwidgets/status"), 1);
    assert_eq!(
        count(&steady, Verb::Update, "xwidgets/status"),
        0,
        "{steady:#?}"
    );
    assert_eq!(count(&steady, Verb::Get, "widgets"), 0, "{steady:#?}");
    assert_eq!(steady.len(), N + 2, "{steady:#?}");

    // The provider makes the Widgets Ready: the next reconcile's Ready changes, one
    // status Update; the one after changes nothing again.
    cluster.mark_ready(&widget_resource()).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let changed = reconcile().await;
    assert_eq!(
        count(&changed, Verb::Update, "xwidgets/status"),
        1,
        "{changed:#?}"
    );
    assert_eq!(count(&changed, Verb::Get, "widgets"), 0);
    assert!(is_true(&xrs.get("xr-0").await.unwrap(), "Ready"));
    for _ in 0..3 {
        let steady = reconcile().await;
        assert_eq!(
            count(&steady, Verb::Update, "xwidgets/status"),
            0,
            "{steady:#?}"
        );
        assert_eq!(steady.len(), N + 2, "{steady:#?}");
    }
    for watch in watches {
        watch.abort();
    }
}
