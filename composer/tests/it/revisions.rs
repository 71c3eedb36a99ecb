//! Core's revision controllers on mock-apiserver, on tokio's paused clock: a Composition
//! gets revision 1, each edit a new revision with the next number, an Automatic XR moves
//! to the newest while a Manual one stays, and an edit back renumbers the old revision.

use std::time::Duration;

use composer::api::{Composition, CompositionRevision, LABEL_COMPOSITION_NAME};
use composer::composite::{
    LABEL_COMPOSITION_HASH, RequeueSettings, composition_hash, run_revision_controllers,
};
use composer::function::builtin::Resources;
use composer::function::{Functions, InProcessRunner};
use kube::ResourceExt;
use kube::api::{Api, ListParams, PostParams};
use limiter::crossplane::circuit::BreakerConfig;
use mock_apiserver::{ApiServer, Config};
use serde_json::json;

use crate::fixture::{
    Cluster, NS, realtime, reconciler, widget_resource, widgets_pipeline, xr, xr_resource, xrd,
};

/// `(name, revision, ValidPipeline status)` of every revision, by number.
async fn revisions(cluster: &Cluster) -> Vec<(String, i64, String)> {
    let mut all: Vec<(String, i64, String)> =
        Api::<CompositionRevision>::all(cluster.client.clone())
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .map(|r| {
                let valid = r
                    .status
                    .as_ref()
                    .and_then(|s| s.conditions.iter().find(|c| c.type_ == "ValidPipeline"))
                    .map(|c| c.status.clone())
                    .unwrap_or_default();
                (r.name_any(), r.spec.revision, valid)
            })
            .collect();
    all.sort_by_key(|r| r.1);
    all
}

/// The XR's revision reference and how many Widgets it composed.
async fn on(cluster: &Cluster, name: &str) -> (String, usize) {
    let x = cluster.api(&xr_resource()).get(name).await.unwrap();
    let widgets = cluster
        .list(&widget_resource())
        .await
        .into_iter()
        .filter(|w| {
            w.labels()
                .get("crossplane.io/composite")
                .map(String::as_str)
                == Some(name)
        })
        .count();
    (
        x.data["spec"]["crossplane"]["compositionRevisionRef"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        widgets,
    )
}

#[tokio::test(start_paused = true)]
async fn each_composition_edit_makes_a_revision_an_automatic_xr_follows_and_a_manual_one_stays() {
    let cluster = Cluster::new(ApiServer::new(Config::default())).await;
    cluster.install_xrd(&xrd()).await;
    let compositions: Api<Composition> = Api::all(cluster.client.clone());
    let mut composition: Composition = serde_json::from_value(json!({
        "apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition",
        "metadata": {"name": "widgets"},
        "spec": {"compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XWidget"},
            "mode": "Pipeline", "pipeline": widgets_pipeline(3, "60s")},
    }))
    .unwrap();
    composition = compositions
        .create(&PostParams::default(), &composition)
        .await
        .unwrap();
    let controllers = tokio::spawn(run_revision_controllers(cluster.client.clone()));
    tokio::time::sleep(Duration::from_secs(1)).await;

    // Revision 1, named and labelled by the Composition's hash, its pipeline valid.
    let first = format!("widgets-{}", &composition_hash(&composition)[..7]);
    assert_eq!(
        revisions(&cluster).await,
        [(first.clone(), 1, "True".to_owned())]
    );
    let r1 = Api::<CompositionRevision>::all(cluster.client.clone())
        .get(&first)
        .await
        .unwrap();
    assert_eq!(r1.labels()[LABEL_COMPOSITION_NAME], "widgets");
    assert_eq!(
        r1.labels()[LABEL_COMPOSITION_HASH],
        composition_hash(&composition)[..63]
    );
    assert_eq!(r1.spec.composition, composition.spec);

    // An Automatic XR (the XRD's default) and a Manual one, both on revision 1.
    let xrs = cluster.api(&xr_resource());
    xrs.create(&PostParams::default(), &xr("auto"))
        .await
        .unwrap();
    let mut manual = xr("manual");
    manual.data["spec"]["crossplane"] = json!({"compositionUpdatePolicy": "Manual"});
    xrs.create(&PostParams::default(), &manual).await.unwrap();
    let functions = Functions::new().with("resources", InProcessRunner::new(Resources));
    let reconciler = reconciler(
        &cluster,
        functions,
        RequeueSettings::default(),
        &realtime(BreakerConfig::default()),
    );
    for name in ["auto", "manual"] {
        reconciler.reconcile(Some(NS), name, 0.5).await.unwrap();
        assert_eq!(on(&cluster, name).await, (first.clone(), 3));
    }

    // An edit: two Widgets instead of three. Revision 2 appears; the Automatic XR moves to
    // it (its third Widget deleted as garbage), the Manual one stays.
    composition = compositions.get("widgets").await.unwrap();
    composition.spec.pipeline[0].input.as_mut().unwrap()["resources"][0]["count"] = json!(2);
    composition = compositions
        .replace("widgets", &PostParams::default(), &composition)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let second = format!("widgets-{}", &composition_hash(&composition)[..7]);
    assert_ne!(second, first);
    assert_eq!(
        revisions(&cluster).await,
        [
            (first.clone(), 1, "True".to_owned()),
            (second.clone(), 2, "True".to_owned())
        ]
    );
    for name in ["auto", "manual"] {
        reconciler.reconcile(Some(NS), name, 0.5).await.unwrap();
    }
    assert_eq!(on(&cluster, "auto").await, (second.clone(), 2));
    assert_eq!(on(&cluster, "manual").await, (first.clone(), 3));

    // Edited back: no new revision; the first, which holds this content, becomes number 3,
    // and the Automatic XR moves back to it.
    composition.spec.pipeline[0].input.as_mut().unwrap()["resources"][0]["count"] = json!(3);
    compositions
        .replace("widgets", &PostParams::default(), &composition)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        revisions(&cluster).await,
        [
            (second.clone(), 2, "True".to_owned()),
            (first.clone(), 3, "True".to_owned())
        ]
    );
    reconciler.reconcile(Some(NS), "auto", 0.5).await.unwrap();
    assert_eq!(on(&cluster, "auto").await, (first.clone(), 3));
    controllers.abort();
}
