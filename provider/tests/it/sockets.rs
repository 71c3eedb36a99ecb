//! The provider as its binary runs it: mock-apiserver and mock-cloud on 127.0.0.1 sockets,
//! the Kubernetes client from a kubeconfig, the cloud over HTTP, /metrics served. Real time.

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, PostParams};
use limiter::crossplane::{EventClient, Settings};
use provider::crd::{Bucket, Database, Record};
use provider::kube_client::{KubeStackLayer, clients_from_kubeconfig};
use provider::{CloudClient, Provider, ProviderMetrics, ProviderOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::stack::{bucket, database, is_ready, open_cloud, record};

async fn get_text(addr: std::net::SocketAddr, path: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).await.unwrap();
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_provider_runs_against_both_mocks_over_real_sockets() {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };

    let api = mock_apiserver::ApiServer::default();
    api.load_crd_yaml(&provider::crd::crds_yaml().unwrap())
        .unwrap();
    let api_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let api_url = format!("http://{}", api_listener.local_addr().unwrap());
    let api_host = api_url.trim_start_matches("http://").to_owned();
    let api_server = tokio::spawn(mock_apiserver::serve(
        api_listener,
        api.clone(),
        stopped(stop_rx.clone()),
    ));

    let cloud = mock_cloud::MockCloud::new(
        open_cloud().with_provisioning(Duration::from_millis(200), Duration::from_millis(200)),
    )
    .unwrap();
    let cloud_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let cloud_url = format!("http://{}", cloud_listener.local_addr().unwrap());
    let cloud_server = tokio::spawn(mock_cloud::serve(
        cloud_listener,
        cloud.clone(),
        stopped(stop_rx.clone()),
    ));

    let dir = std::env::temp_dir().join(format!("provider-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    mock_apiserver::write_kubeconfig(&kubeconfig, &api_url).unwrap();

    // Events through a client of their own, as a controller-runtime provider writes them.
    let settings = Settings::default()
        .poll_interval(Duration::from_secs(1))
        .event_client(EventClient::Separate);
    let metrics = Arc::new(ProviderMetrics::new());
    let layer = KubeStackLayer::new(&settings, metrics.kube_requests().clone());
    let clients = clients_from_kubeconfig(Some(&kubeconfig), &layer)
        .await
        .unwrap();
    assert!(clients.events.is_some());
    let kube = clients.main;
    let test_client = kube.clone();
    let options = ProviderOptions {
        settings,
        kube,
        event_kube: clients.events,
        cloud: CloudClient::http(&cloud_url).with_requests(metrics.cloud_requests().clone()),
        namespace: Some("default".into()),
        // Credentials read from one namespace, as ci/manifests deploys the provider.
        secret_namespace: Some("default".into()),
        shutdown_timeout: Duration::from_secs(5),
        metrics: Arc::clone(&metrics),
        seed: None,
        clock: None,
        reconcile_cost: Duration::ZERO,
        creation_grace: provider::reconciler::meta::CREATION_GRACE,
        #[cfg(feature = "aws")]
        aws: provider::aws::AwsOptions::default(),
    };
    let metrics_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let metrics_addr = metrics_listener.local_addr().unwrap();
    let metrics_server = tokio::spawn(provider::metrics_server::serve_metrics(
        metrics_listener,
        Arc::clone(&metrics),
        stopped(stop_rx.clone()),
    ));
    let running = tokio::spawn(Provider::new(options).run(stopped(stop_rx.clone())));

    crate::stack::provider_config_objects(&test_client, "default", "default").await;
    let pp = PostParams::default();
    Api::<Bucket>::default_namespaced(test_client.clone())
        .create(&pp, &bucket("s-bucket"))
        .await
        .unwrap();
    Api::<Database>::default_namespaced(test_client.clone())
        .create(&pp, &database("s-db"))
        .await
        .unwrap();
    Api::<Record>::default_namespaced(test_client.clone())
        .create(&pp, &record("s-rec", "TXT"))
        .await
        .unwrap();

    let mut ready = false;
    for _ in 0..150 {
        let b = Api::<Bucket>::default_namespaced(test_client.clone())
            .get("s-bucket")
            .await
            .unwrap();
        let d = Api::<Database>::default_namespaced(test_client.clone())
            .get("s-db")
            .await
            .unwrap();
        let r = Api::<Record>::default_namespaced(test_client.clone())
            .get("s-rec")
            .await
            .unwrap();
        if is_ready(&b) && is_ready(&d) && is_ready(&r) {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        ready,
        "resources did not become Ready over sockets within 15 s"
    );
    assert_eq!(cloud.inventory().len(), 3);

    let text = get_text(metrics_addr, "/metrics").await;
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    for name in [
        "provider_reconciles_total{kind=\"Bucket\",result=\"requeue_after\"}",
        "provider_cloud_requests_total{action=\"create\",code=\"201\"} 3",
        "provider_kube_requests_total{verb=\"PUT\",code=\"200\"}",
        "workqueue_depth{name=\"managed/bucket.mockcloud.example.org\",controller=\"managed/bucket.mockcloud.example.org\"}",
        // The names and labels of controller-runtime and client-go.
        "workqueue_adds_total{name=\"managed/bucket.mockcloud.example.org\",controller=\"managed/bucket.mockcloud.example.org\"}",
        "workqueue_work_duration_seconds_sum{name=\"managed/bucket.mockcloud.example.org\",",
        "controller_runtime_reconcile_total{controller=\"managed/bucket.mockcloud.example.org\",result=\"success\"}",
        "controller_runtime_reconcile_total{controller=\"managed/bucket.mockcloud.example.org\",result=\"requeue_after\"}",
        "controller_runtime_reconcile_total{controller=\"managed/bucket.mockcloud.example.org\",result=\"error\"}",
        "controller_runtime_reconcile_total{controller=\"managed/bucket.mockcloud.example.org\",result=\"requeue\"}",
        "controller_runtime_reconcile_errors_total{controller=\"managed/bucket.mockcloud.example.org\"}",
        "controller_runtime_terminal_reconcile_errors_total{controller=\"managed/bucket.mockcloud.example.org\"}",
        &format!("rest_client_requests_total{{code=\"200\",method=\"GET\",host=\"{api_host}\"}}"),
        &format!("rest_client_requests_total{{code=\"201\",method=\"POST\",host=\"{api_host}\"}}"),
        "limiter_reservations_total",
        "limiter_early_runs_total",
        "provider_settings{max_reconcile_rate=\"10\",rate_limit_model=\"crossplane\",poll_interval=\"1s\",poll_jitter_percent=\"10\",poll_jitter_sizing=\"per-resource\",min_poll_interval=\"1s\",scoped_buckets=\"false\",backoff_base=\"1s\",backoff_max=\"1m0s\",error_requeue=\"backoff\",observe_only_absent=\"poll\",event_client=\"separate\",reconcile_requests=\"honour\"} 1",
    ] {
        assert!(text.contains(name), "/metrics lacks {name}:\n{text}");
    }
    assert!(
        !text.contains("result=\"terminal_error\""),
        "controller-runtime counts a terminal error as an error:\n{text}"
    );

    stop_tx.send(true).unwrap();
    let summary = running.await.unwrap().unwrap();
    assert!(summary.drained);
    metrics_server.await.unwrap();
    api_server.await.unwrap();
    cloud_server.await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
