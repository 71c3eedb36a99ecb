//! The cluster target: its deployment names, its kill (pods deleted with grace 0) and its
//! rollout check.

use super::*;

#[test]
fn deployments_are_namespace_slash_name() {
    assert_eq!(
        parse_deployment("loadtest-system/provider").unwrap(),
        ("loadtest-system".to_owned(), "provider".to_owned())
    );
    for bad in ["provider", "/provider", "ns/", "a/b/c"] {
        assert!(parse_deployment(bad).is_err(), "{bad}");
    }
}

/// A client whose server answers from `answer` and records each request as
/// `METHOD path?query body`.
fn recording(
    answer: fn(&http::Method, &str) -> serde_json::Value,
) -> (kube::Client, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use http_body_util::BodyExt;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&seen);
    let service = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let log = std::sync::Arc::clone(&log);
        async move {
            let method = req.method().clone();
            let uri = req.uri().to_string();
            let body = req.into_body().collect().await.expect("a body").to_bytes();
            log.lock()
                .unwrap()
                .push(format!("{method} {uri} {}", String::from_utf8_lossy(&body)));
            let path = uri.split('?').next().unwrap_or_default().to_owned();
            let out = serde_json::to_vec(&answer(&method, &path)).unwrap();
            Ok::<_, std::convert::Infallible>(
                http::Response::builder()
                    .header("content-type", "application/json")
                    .body(kube::client::Body::from(out))
                    .unwrap(),
            )
        }
    });
    (kube::Client::new(service, "default"), seen)
}

#[tokio::test]
async fn a_kill_deletes_each_provider_pod_with_grace_period_zero() {
    let (client, seen) = recording(|method, path| match (method.as_str(), path) {
        ("GET", "/apis/apps/v1/namespaces/ns/deployments/provider") => json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "provider", "namespace": "ns"},
            "spec": {"selector": {"matchLabels": {"app": "provider", "tier": "x"}}, "template": {}}
        }),
        ("GET", "/api/v1/namespaces/ns/pods") => json!({
            "apiVersion": "v1", "kind": "PodList", "metadata": {},
            "items": [{"metadata": {"name": "provider-a"}}, {"metadata": {"name": "provider-b"}}]
        }),
        ("DELETE", p) => json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": p.rsplit('/').next().unwrap()}
        }),
        other => panic!("unexpected request {other:?}"),
    });
    assert_eq!(kill_pods(&client, "ns", "provider").await.unwrap(), 2);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 4, "{seen:#?}");
    assert!(
        seen[1]
            .starts_with("GET /api/v1/namespaces/ns/pods?&labelSelector=app%3Dprovider%2Ctier%3Dx"),
        "{}",
        seen[1]
    );
    for (line, pod) in seen[2..].iter().zip(["provider-a", "provider-b"]) {
        let (head, body) = line.split_once(' ').unwrap().1.split_once(' ').unwrap();
        assert_eq!(head, format!("/api/v1/namespaces/ns/pods/{pod}?"));
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["gracePeriodSeconds"], 0, "{line}");
        assert!(line.starts_with("DELETE "), "{line}");
    }
}

#[test]
fn a_rollout_is_done_when_every_replica_is_updated_and_available() {
    let mut d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "p", "generation": 2},
        "spec": {"replicas": 1, "selector": {}, "template": {}},
        "status": {"observedGeneration": 2, "replicas": 2, "updatedReplicas": 1, "availableReplicas": 1}
    }))
    .unwrap();
    assert!(!rolled_out(Some(&d), 2), "the old pod is still there");
    d.status.as_mut().unwrap().replicas = Some(1);
    assert!(rolled_out(Some(&d), 2));
    assert!(
        !rolled_out(Some(&d), 3),
        "a newer generation is not observed yet"
    );
    d.status = None;
    assert!(
        rolled_out(Some(&d), 3),
        "no controller writes status: nothing to wait for"
    );
    assert!(!rolled_out(None, 1));
}
