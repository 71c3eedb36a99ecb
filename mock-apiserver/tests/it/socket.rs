//! The server on a loopback socket: kube over TCP, the journal over HTTP, flow control
//! and graceful shutdown. These run in real time.

use std::num::{NonZeroU32, NonZeroUsize};

use futures::StreamExt;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::rt::TokioExecutor;
use kube::api::{Api, WatchEvent, WatchParams};
use mock_apiserver::{Config, FlowControl, JOURNAL_PATH, JournalPage, Verb, X_EPOCH};
use serde_json::Value;

use crate::support::{Bucket, Socket, count, create_bucket, server_with_buckets};

async fn get(url: &str, user_agent: &str) -> (u16, http::HeaderMap, Value) {
    let client = HttpClient::builder(TokioExecutor::new()).build_http::<Empty<bytes::Bytes>>();
    let request = http::Request::get(url)
        .header("user-agent", user_agent)
        .body(Empty::new())
        .unwrap();
    let response = client.request(request).await.unwrap();
    let (parts, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    (
        parts.status.as_u16(),
        parts.headers,
        serde_json::from_slice(&body).unwrap_or(Value::Null),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_works_over_a_loopback_socket_from_a_written_kubeconfig() {
    let server = server_with_buckets(Config::default());
    let socket = Socket::start(server.clone()).await;
    let buckets: Api<Bucket> = Api::default_namespaced(socket.client().await);
    for i in 0..20 {
        create_bucket(&buckets, &format!("b{i}"), "eu").await;
    }
    assert_eq!(count(&buckets).await, 20);
    assert_eq!(
        server.object_count("example.org", "v1alpha1", "buckets"),
        20
    );
    socket.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_journal_is_served_over_http_with_counts_per_user_agent() {
    let server = server_with_buckets(Config::default());
    let socket = Socket::start(server.clone()).await;
    let list = format!(
        "{}/apis/example.org/v1alpha1/namespaces/default/buckets",
        socket.url()
    );
    let seq = server.journal().last_seq();
    for _ in 0..3 {
        assert_eq!(get(&list, "harness/1.0").await.0, 200);
    }
    assert_eq!(get(&format!("{list}/missing"), "provider/1.0").await.0, 404);
    let (code, headers, journal) = get(
        &format!("{}{JOURNAL_PATH}?since={seq}", socket.url()),
        "reader",
    )
    .await;
    assert_eq!(code, 200);
    let epoch = server.epoch().to_string();
    assert_eq!(
        journal["epoch"], epoch,
        "the page publishes the server's epoch"
    );
    assert_eq!(headers[X_EPOCH], epoch.as_str());
    let page: JournalPage = serde_json::from_value(journal.clone()).unwrap();
    assert!(
        page.entries.windows(2).all(|w| w[0].at_us <= w[1].at_us),
        "times are microseconds since the epoch, in arrival order"
    );
    assert_eq!(page.entries[0].verb, Verb::List);
    let entries = journal["entries"].as_array().unwrap();
    assert_eq!(
        entries.len(),
        4,
        "journal reads are not journaled themselves"
    );
    assert_eq!(entries[0]["verb"], "list");
    assert_eq!(entries[3]["status"], 404);
    assert_eq!(entries[3]["name"], "missing");
    assert_eq!(journal["countsByUserAgent"]["harness/1.0"], 3);
    assert_eq!(journal["countsByUserAgent"]["provider/1.0"], 1);
    assert_eq!(journal["lastSeq"], seq + 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flow_control_answers_429_with_retry_after_beyond_the_burst() {
    let flow = FlowControl::new(NonZeroU32::new(1).unwrap(), NonZeroU32::new(3).unwrap())
        .with_max_in_flight(NonZeroUsize::new(100).unwrap());
    let server = server_with_buckets(Config::default().with_flow_control(flow));
    let socket = Socket::start(server.clone()).await;
    let url = format!("{}/api/v1/namespaces", socket.url());
    let mut codes = Vec::new();
    let mut throttled = None;
    for _ in 0..5 {
        let (code, headers, body) = get(&url, "burst").await;
        codes.push(code);
        if code == 429 {
            throttled = Some((headers, body));
        }
    }
    assert_eq!(&codes[..3], [200, 200, 200], "the burst is admitted");
    assert!(
        codes[3..].contains(&429),
        "then requests are throttled: {codes:?}"
    );
    let (headers, body) = throttled.unwrap();
    assert_eq!(headers["retry-after"], "1");
    assert_eq!(body["reason"], "TooManyRequests");
    assert_eq!(body["details"]["retryAfterSeconds"], 1);
    assert!(
        server.journal().since(0).iter().any(|e| e.status == 429),
        "throttled requests are journaled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubes_default_client_retries_throttled_requests_transparently() {
    let flow = FlowControl::new(NonZeroU32::new(2).unwrap(), NonZeroU32::new(1).unwrap());
    let server = server_with_buckets(Config::default().with_flow_control(flow));
    let socket = Socket::start(server.clone()).await;
    let buckets: Api<Bucket> = Api::default_namespaced(socket.client().await);
    for i in 0..3 {
        create_bucket(&buckets, &format!("b{i}"), "eu").await;
    }
    assert_eq!(server.object_count("example.org", "v1alpha1", "buckets"), 3);
    assert!(
        server.journal().since(0).iter().any(|e| e.status == 429),
        "some creates were throttled and retried"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutting_the_socket_down_ends_open_watches_cleanly() {
    let server = server_with_buckets(Config::default());
    let socket = Socket::start(server.clone()).await;
    let buckets: Api<Bucket> = Api::default_namespaced(socket.client().await);
    let mut stream = buckets
        .watch(&WatchParams::default().timeout(290), "0")
        .await
        .unwrap()
        .boxed();
    create_bucket(&buckets, "b1", "eu").await;
    match stream.next().await {
        Some(Ok(WatchEvent::Added(b))) => assert_eq!(b.metadata.name.as_deref(), Some("b1")),
        other => panic!("expected ADDED, got {other:?}"),
    }
    socket.shutdown().await;
    let rest: Vec<_> = stream.collect().await;
    assert!(
        rest.iter().all(Result::is_ok),
        "the stream ended without errors: {rest:?}"
    );
    // The server itself still works in-process.
    let in_process: Api<Bucket> =
        Api::default_namespaced(kube::Client::new(server.service(), "default"));
    assert_eq!(count(&in_process).await, 1);
}
