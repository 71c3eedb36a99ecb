//! A composite scenario on the cluster target: Crossplane core already runs in the
//! "cluster" (this workspace's composer, started with the flags `harness core-args` gives,
//! its Deployment stored beside the provider's), the user has installed the Function it
//! reads at start, and the run creates the XRD (the composer's XRD watch starts its
//! controller) and the Composition, drives the XRs and reads core's requests from
//! mock-apiserver's journal by core's User-Agent and its function calls from its metrics.

use std::process::Command;
use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};

use super::procs::{Proc, free_port, listening, spawn, wait_for};
use super::{Cluster, deploy};
use crate::bins::binaries;
use crate::core_process::{XR_CHECKS, XR_OBJECTS, count, verdict};

/// The scenario: core_process's objects and XR group, no delete phase (the clean-up
/// deletes the XRs), the provider's settings those its Deployment gives.
fn scenario() -> String {
    format!(
        "apiVersion: harness/v1
name: cluster-core
provider: {{maxReconcileRate: 10, rateLimitModel: crossplane, pollInterval: 5s}}
core: {{maxReconcileRate: 10, pollInterval: 1m, syncInterval: 1h}}
{XR_OBJECTS}{PHASES}{XR_CHECKS}"
    )
}

const PHASES: &str = r"phases:
  - {name: create, action: create, timeout: 90s}
  - {name: hold, action: hold, duration: 3s}
";

fn api(
    client: &kube::Client,
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
) -> Api<DynamicObject> {
    Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural),
    )
}

fn object(value: serde_json::Value) -> DynamicObject {
    serde_json::from_value(value).unwrap()
}

#[test]
fn a_composite_scenario_measures_the_clusters_core_by_its_user_agent_and_metrics() {
    let mut cluster = Cluster::start("cluster-core");
    let path = cluster.dir.join("scenario.yaml");
    std::fs::write(&path, scenario()).unwrap();
    // The flags that give the scenario's core settings, as a user deploys core with them.
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["core-args", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let flags: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    let client = cluster.client.clone();
    cluster.runtime.block_on(async {
        let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
            Api::all(client.clone());
        for crd in harness::run::core::embedded::crossplane_crds() {
            crds.create(&PostParams::default(), &crd).await.unwrap();
        }
        // What the user installed before core started: the Function (the composer reads
        // Functions at start); the run creates the XRD and the Composition.
        let pp = PostParams::default();
        let objects: serde_json::Value = serde_saphyr::from_str(XR_OBJECTS).unwrap();
        for (kind, plural) in [("Function", "functions")] {
            let body = objects["objects"]
                .as_array()
                .unwrap()
                .iter()
                .find(|o| o["kind"] == kind)
                .unwrap()
                .clone();
            let (group, version) = body["apiVersion"].as_str().unwrap().split_once('/').unwrap();
            api(&client, group, version, kind, plural)
                .create(&pp, &object(body.clone()))
                .await
                .unwrap();
        }
        // Core's Deployment, whose args the run checks against the scenario's core settings.
        deploy(
            &client,
            ("crossplane-system", "crossplane"),
            "loadtest/composer:dev",
            None,
            &flags,
        )
        .await;
    });
    let core_metrics = free_port();
    let _core: Proc = spawn(
        Command::new(binaries().join("composer"))
            .arg("--kubeconfig")
            .arg(&cluster.kubeconfig)
            .arg(format!("--metrics-addr=127.0.0.1:{core_metrics}"))
            .args(&flags),
        &cluster.dir.join("composer.log"),
    );
    wait_for("the composer", Duration::from_secs(30), || {
        listening(core_metrics)
    });
    let metrics_url = format!("http://127.0.0.1:{core_metrics}/metrics");
    let result = cluster.run(
        &scenario(),
        &[
            "--core-metrics-url",
            &metrics_url,
            "--core-user-agent",
            "composer/",
        ],
    );
    let log = std::fs::read_to_string(cluster.dir.join("composer.log")).unwrap_or_default();
    let core = &result["core"];
    assert_eq!(core["user_agent"], "composer/", "{core}\n{log}");
    let notes = result["run"]["notes"].to_string();
    assert!(
        notes.contains("core's container crossplane in crossplane-system/crossplane runs with the scenario's core settings"),
        "{notes}"
    );
    assert!(
        notes.contains(
            "already in the cluster, used as they are (the scenario's not applied): Function resources\""
        ),
        "{notes}"
    );
    // Per reconcile that composes: one call of the one step, two Bucket applies, the
    // references' apply and the status apply.
    let calls = core["function_calls"]["resources"]
        .as_u64()
        .expect("core's metrics were read");
    assert!(calls >= 4, "each XR was composed: {core}");
    eprintln!(
        "core in the cluster: {} requests ({} PATCHes changed nothing), {calls} function calls; notes: {notes}",
        core["requests"], core["patches_no_op"]
    );
    assert_eq!(
        count(core, "patch", "buckets.mockcloud.example.org"),
        2 * calls,
        "{core}"
    );
    assert_eq!(
        count(core, "patch", "xbucketsets.example.org"),
        calls,
        "{core}"
    );
    assert_eq!(
        count(core, "patch", "xbucketsets.example.org/status"),
        calls,
        "{core}"
    );
    // Every XR Ready, no later than its slowest Bucket.
    let xrs = core["xrs"].as_array().unwrap();
    assert_eq!(xrs.len(), 4, "{core}");
    for x in xrs {
        let (xr, slowest) = (x["ready_s"].as_f64(), x["slowest_composed_s"].as_f64());
        assert!(xr.is_some() && slowest.is_some() && xr >= slowest, "{x}");
    }
    for check in [
        "coreApiRequests",
        "functionCalls",
        "xrTimeToReady",
        "staleXRs",
    ] {
        assert_eq!(
            verdict(&result, check)["outcome"],
            "pass",
            "{check}: {}",
            verdict(&result, check)
        );
    }
    let breakers = verdict(&result, "breakerOpens");
    assert_eq!(breakers["outcome"], "unmeasured", "{breakers}");
    // The clean-up deleted the XRs, and the XRD and the Composition the run created; the
    // Function the user installed stays.
    cluster.runtime.block_on(async {
        let left = api(&client, "example.org", "v1", "XBucketSet", "xbucketsets")
            .list(&Default::default())
            .await
            .unwrap();
        assert!(left.items.is_empty(), "{:?}", left.items);
        let compositions = api(
            &client,
            "apiextensions.crossplane.io",
            "v1",
            "Composition",
            "compositions",
        );
        assert!(compositions.get_opt("bucketsets").await.unwrap().is_none());
        let xrds = api(
            &client,
            "apiextensions.crossplane.io",
            "v2",
            "CompositeResourceDefinition",
            "compositeresourcedefinitions",
        );
        assert!(
            xrds.get_opt("xbucketsets.example.org")
                .await
                .unwrap()
                .is_none()
        );
        let functions = api(&client, "pkg.crossplane.io", "v1", "Function", "functions");
        assert!(functions.get_opt("resources").await.unwrap().is_some());
    });
}
