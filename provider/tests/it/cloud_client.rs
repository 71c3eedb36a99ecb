//! The cloud client against wiremock: throttles, server errors, timeouts, bad bodies. It
//! never retries: every test expects exactly one request.

use std::time::Duration;

use provider::{CloudClient, CloudError};
use serde_json::json;
use wiremock::matchers::{body_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const BUCKET: &str = "/v1/accounts/acme/buckets/b";

async fn client(server: &MockServer) -> provider::cloud::AccountClient {
    CloudClient::http(server.uri())
        .with_timeout(Duration::from_millis(200))
        .account("acme", "t0ken")
}

fn resource() -> serde_json::Value {
    json!({"account": "acme", "collection": "buckets", "name": "b", "state": "available",
           "generation": 3, "created_at_us": 0, "spec": {"region": "eu"}})
}

#[tokio::test]
async fn a_429_is_a_throttle_error_with_its_retry_after_and_is_not_retried() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(BUCKET))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "3")
                .set_body_json(
                    json!({"error": {"code": "TooManyRequests", "message": "slow down"}}),
                ),
        )
        .expect(1)
        .mount(&server)
        .await;
    let err = client(&server).await.get("buckets", "b").await.unwrap_err();
    assert!(
        matches!(err, CloudError::Throttled { status: 429, retry_after: Some(d) } if d == Duration::from_secs(3)),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "throttled by the cloud (HTTP 429); retry after 3s"
    );
}

#[tokio::test]
async fn a_503_is_a_throttle_only_with_retry_after() {
    let server = MockServer::start().await;
    Mock::given(method("PUT"))
        .and(path(BUCKET))
        .respond_with(ResponseTemplate::new(503).insert_header("retry-after", "1"))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("DELETE"))
        .and(path(BUCKET))
        .respond_with(ResponseTemplate::new(503).set_body_json(
            json!({"error": {"code": "InjectedFault", "message": "failing on purpose"}}),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let c = client(&server).await;
    let err = c.update("buckets", "b", &json!({})).await.unwrap_err();
    assert!(err.is_throttle(), "{err:?}");
    let err = c.delete("buckets", "b").await.unwrap_err();
    assert!(!err.is_throttle());
    assert_eq!(
        err.to_string(),
        "cloud answered HTTP 503 InjectedFault: failing on purpose"
    );
}

#[tokio::test]
async fn server_errors_without_an_envelope_keep_the_start_of_the_body() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(BUCKET))
        .respond_with(ResponseTemplate::new(500).set_body_string("upstream exploded"))
        .expect(1)
        .mount(&server)
        .await;
    let err = client(&server).await.get("buckets", "b").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "cloud answered HTTP 500 : upstream exploded"
    );
}

#[tokio::test]
async fn a_slow_answer_times_out() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(BUCKET))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(resource())
                .set_delay(Duration::from_secs(2)),
        )
        .expect(1)
        .mount(&server)
        .await;
    let c = CloudClient::http(server.uri()).with_timeout(Duration::from_millis(50));
    let err = c
        .account("acme", "t0ken")
        .get("buckets", "b")
        .await
        .unwrap_err();
    assert!(matches!(err, CloudError::Timeout(_)), "{err:?}");
    let counted = c
        .requests()
        .get_or_create(&provider::cloud::CloudRequestLabels {
            action: "observe".into(),
            code: "timeout".into(),
        })
        .get();
    assert_eq!(counted, 1);
}

#[tokio::test]
async fn a_body_that_is_not_a_resource_is_a_decode_error() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(BUCKET))
        .respond_with(ResponseTemplate::new(200).set_body_string("{\"name\": 42"))
        .expect(1)
        .mount(&server)
        .await;
    let err = client(&server).await.get("buckets", "b").await.unwrap_err();
    assert!(
        matches!(err, CloudError::Decode { status: 200, .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn not_found_is_absence_on_observe_and_success_on_delete() {
    let server = MockServer::start().await;
    Mock::given(path(BUCKET))
        .respond_with(ResponseTemplate::new(404))
        .expect(2)
        .mount(&server)
        .await;
    let c = client(&server).await;
    assert_eq!(c.get("buckets", "b").await.unwrap(), None);
    c.delete("buckets", "b").await.unwrap();
}

#[tokio::test]
async fn a_create_carries_the_token_the_idempotency_key_and_the_spec() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/accounts/acme/buckets"))
        .and(header("authorization", "Bearer t0ken"))
        .and(header("idempotency-key", "uid-1"))
        .and(body_json(json!({"name": "b", "spec": {"region": "eu"}})))
        .respond_with(ResponseTemplate::new(201).set_body_json(resource()))
        .expect(1)
        .mount(&server)
        .await;
    let created = client(&server)
        .await
        .create("buckets", "b", &json!({"region": "eu"}), "uid-1")
        .await
        .unwrap();
    assert_eq!((created.name.as_str(), created.generation), ("b", 3));
    assert!(created.is_available());
}
