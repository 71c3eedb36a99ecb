//! The official Kubernetes Python client (`pip install kubernetes`, which `.ci/run`
//! installs) against the server: schemas, the garbage collector, rollouts.

use std::time::Duration;

use mock_apiserver::{ApiServer, Config};

use crate::kubectl::{BOUND, Kubectl};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_python_client_sees_schemas_garbage_collection_and_rollouts() {
    let server =
        ApiServer::new(Config::default().with_deployment_rollouts(Duration::from_millis(200)));
    let k = Kubectl::start_with(server).await.with_crd().await;
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/it/python/official_client.py"
    );
    let output = tokio::time::timeout(
        BOUND,
        tokio::process::Command::new("python3")
            .arg(script)
            .arg(k.kubeconfig())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the script finishes")
    .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        ["schema ok", "gc ok", "rollout ok"]
    );
}
