//! The official Kubernetes Python client (`pip install kubernetes`, which `.ci/run`
//! installs) against the server: schemas, the garbage collector, rollouts, and
//! server-side apply with field ownership. A missing `python3` or `kubernetes` package
//! fails these tests: they never skip.

use std::time::Duration;

use mock_apiserver::{ApiServer, Config};

use crate::kubectl::{BOUND, Kubectl};

/// Runs `tests/it/python/{script}` with the server's kubeconfig; returns its output
/// lines, after asserting it succeeded.
async fn run_script(k: &Kubectl, script: &str) -> Vec<String> {
    let script = format!("{}/tests/it/python/{script}", env!("CARGO_MANIFEST_DIR"));
    let output = tokio::time::timeout(
        BOUND,
        tokio::process::Command::new("python3")
            .arg(&script)
            .arg(k.kubeconfig())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the script finishes")
    .unwrap_or_else(|e| panic!("python3 runs {script}: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{script}:\n{stdout}\n{stderr}");
    stdout.lines().map(str::to_owned).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_python_client_sees_schemas_garbage_collection_and_rollouts() {
    let server =
        ApiServer::new(Config::default().with_deployment_rollouts(Duration::from_millis(200)));
    let k = Kubectl::start_with(server).await.with_crd().await;
    assert_eq!(
        run_script(&k, "official_client.py").await,
        ["schema ok", "gc ok", "rollout ok"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_python_client_applies_server_side_conflicts_until_forced_and_reads_owners() {
    // DynamicClient.server_side_apply: PATCH with application/apply-patch+yaml,
    // fieldManager and force. The 409's message and causes are conflict.go's.
    let k = Kubectl::start().await.with_crd().await;
    assert_eq!(
        run_script(&k, "server_side_apply.py").await,
        ["custom resource apply ok", "config map apply ok"]
    );
    // What the script left, as kube-rs reads it: both managers' Apply entries.
    let bucket = k.buckets().get("applied").await.unwrap();
    let managers: Vec<(String, String)> = bucket
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .map(|e| {
            (
                e.manager.unwrap_or_default(),
                e.operation.unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        managers,
        [
            ("manager-a".to_owned(), "Apply".to_owned()),
            ("manager-b".to_owned(), "Apply".to_owned())
        ]
    );
    assert_eq!(bucket.spec.region, "us");
}
