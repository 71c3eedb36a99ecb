//! Deployments roll out when the server runs its minimal Deployment controller.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::Api;
use mock_apiserver::{ApiServer, Config};

use crate::kubectl::Kubectl;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_rollout_status_finishes_after_a_create_and_a_restart() {
    let server =
        ApiServer::new(Config::default().with_deployment_rollouts(Duration::from_millis(300)));
    let k = Kubectl::start_with(server).await;
    k.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx:1.27",
        "--replicas=2",
    ])
    .await;
    let out = k
        .ok(&["rollout", "status", "deployment/web", "--timeout=30s"])
        .await;
    assert!(
        out.contains("deployment \"web\" successfully rolled out"),
        "{out}"
    );
    let deployments: Api<Deployment> = Api::default_namespaced(k.client());
    let status = deployments.get("web").await.unwrap().status.unwrap();
    assert_eq!(status.observed_generation, Some(1));
    assert_eq!(
        (
            status.replicas,
            status.updated_replicas,
            status.ready_replicas,
            status.available_replicas
        ),
        (Some(2), Some(2), Some(2), Some(2))
    );
    let conditions = status.conditions.unwrap();
    assert!(
        conditions
            .iter()
            .any(|c| c.type_ == "Available" && c.status == "True")
    );
    assert!(
        conditions
            .iter()
            .any(|c| c.type_ == "Progressing"
                && c.reason.as_deref() == Some("NewReplicaSetAvailable"))
    );

    k.ok(&["rollout", "restart", "deployment/web"]).await;
    let out = k
        .ok(&["rollout", "status", "deployment/web", "--timeout=30s"])
        .await;
    assert!(out.contains("successfully rolled out"), "{out}");
    let status = deployments.get("web").await.unwrap().status.unwrap();
    assert_eq!(status.observed_generation, Some(2));
}

#[tokio::test(start_paused = true)]
async fn a_rollout_is_rolling_at_once_and_done_after_the_delay() {
    let server = ApiServer::new(Config::default().with_deployment_rollouts(Duration::from_secs(5)));
    let deployments: Api<Deployment> =
        Api::default_namespaced(kube::Client::new(server.service(), "default"));
    let deployment: Deployment = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "app"},
        "spec": {"selector": {"matchLabels": {"app": "a"}},
                 "template": {"metadata": {"labels": {"app": "a"}},
                              "spec": {"containers": [{"name": "c", "image": "i"}]}}}
    }))
    .unwrap();
    deployments
        .create(&Default::default(), &deployment)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    let rolling = deployments.get("app").await.unwrap().status.unwrap();
    assert_eq!(rolling.observed_generation, Some(1));
    assert_eq!(rolling.updated_replicas, Some(0));
    tokio::time::sleep(Duration::from_secs(5)).await;
    let done = deployments.get("app").await.unwrap().status.unwrap();
    assert_eq!(
        done.updated_replicas,
        Some(1),
        "spec.replicas defaults to 1"
    );
    assert_eq!(done.available_replicas, Some(1));
}
