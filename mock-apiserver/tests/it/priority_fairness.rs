//! API Priority and Fairness through the HTTP service: the classification headers, the
//! plain-text 429 after a wait in a queue, `system:masters` exempt, the metrics, and
//! kube-rs retrying the 429 after its `Retry-After`. Follows
//! `k8s.io/apiserver/pkg/server/filters/priority-and-fairness.go`.

use std::time::Duration;

use bytes::Bytes;
use futures::channel::mpsc;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use kube::api::{Api, ListParams};
use mock_apiserver::{ApiServer, Config, FlowControl, PriorityAndFairness};
use tower::ServiceExt;

use crate::support::{Bucket, Socket, server_with_buckets};

type Body = http_body_util::combinators::UnsyncBoxBody<Bytes, std::convert::Infallible>;

fn empty() -> Body {
    Full::new(Bytes::new()).boxed_unsync()
}

/// A request whose body never ends while `_sender` lives: it holds its seat, as a slow
/// upload does.
fn slow_create(
    path: &str,
) -> (
    http::Request<Body>,
    mpsc::Sender<Result<Frame<Bytes>, std::convert::Infallible>>,
) {
    let (sender, receiver) = mpsc::channel(1);
    let request = http::Request::post(path)
        .header("content-type", "application/json")
        .body(StreamBody::new(receiver).boxed_unsync())
        .unwrap();
    (request, sender)
}

/// global-default (anonymous users) has one seat of 10: ceil(10 × 20 ÷ 245).
fn one_seat_for_anonymous() -> Config {
    Config::default().with_flow_control(FlowControl::PriorityAndFairness(
        PriorityAndFairness::default()
            .with_server_concurrency_limit(10)
            .with_request_wait_limit(Duration::from_secs(15)),
    ))
}

async fn text(response: http::Response<mock_apiserver::ResponseBody>) -> String {
    String::from_utf8(
        response
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec(),
    )
    .unwrap()
}

/// The server's `/metrics` page.
async fn metrics_page(server: &ApiServer) -> String {
    text(
        server
            .service()
            .oneshot(http::Request::get("/metrics").body(empty()).unwrap())
            .await
            .unwrap(),
    )
    .await
}

#[tokio::test(start_paused = true)]
async fn a_request_waits_in_its_queue_then_gets_a_plain_text_429_while_system_masters_passes() {
    let server = server_with_buckets(one_seat_for_anonymous());
    let service = server.service();
    let path = "/api/v1/namespaces/default/configmaps";

    let (slow, _uploading) = slow_create(path);
    let holder = tokio::spawn(service.clone().oneshot(slow));
    tokio::task::yield_now().await;

    let waiting = tokio::spawn(
        service
            .clone()
            .oneshot(http::Request::get(path).body(empty()).unwrap()),
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    let metrics = metrics_page(&server).await;
    assert!(
        metrics.contains("apiserver_flowcontrol_current_inqueue_requests{flow_schema=\"global-default\",priority_level=\"global-default\"} 1\n"),
        "the list waits in a queue: {metrics}"
    );

    // system:masters, impersonated, is exempt: served at once.
    let admin = service
        .clone()
        .oneshot(
            http::Request::get(path)
                .header("impersonate-user", "admin")
                .header("impersonate-group", "system:masters")
                .body(empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(admin.status(), 200);
    let exempt_pl = admin.headers()["x-kubernetes-pf-prioritylevel-uid"].clone();

    tokio::time::sleep(Duration::from_secs(15)).await;
    let refused = waiting.await.unwrap().unwrap();
    assert_eq!(refused.status(), 429);
    let headers = refused.headers().clone();
    assert_eq!(headers["content-type"], "text/plain; charset=utf-8");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(headers["retry-after"], "1");
    let global_default_pl = headers["x-kubernetes-pf-prioritylevel-uid"].clone();
    assert_ne!(global_default_pl, exempt_pl);
    assert_eq!(
        headers["x-kubernetes-pf-flowschema-uid"]
            .to_str()
            .unwrap()
            .len(),
        36,
        "a uid"
    );
    assert_eq!(
        text(refused).await,
        "Too many requests, please try again later.\n"
    );
    holder.abort();

    let metrics = metrics_page(&server).await;
    for line in [
        "apiserver_flowcontrol_rejected_requests_total{flow_schema=\"global-default\",priority_level=\"global-default\",reason=\"time-out\"} 1\n",
        "apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"exempt\",priority_level=\"exempt\"} 1\n",
        "apiserver_flowcontrol_current_inqueue_requests{flow_schema=\"global-default\",priority_level=\"global-default\"} 0\n",
        // It waited the whole 15 s.
        "apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute=\"false\",flow_schema=\"global-default\",priority_level=\"global-default\",le=\"10\"} 0\n",
        "apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute=\"false\",flow_schema=\"global-default\",priority_level=\"global-default\",le=\"15\"} 1\n",
        "apiserver_flowcontrol_request_wait_duration_seconds_sum{execute=\"false\",flow_schema=\"global-default\",priority_level=\"global-default\"} 15\n",
        // The refused list is in apiserver_request_total with its 429, as
        // RecordDroppedRequest counts it.
        "code=\"429\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"configmaps\",scope=\"namespace\",subresource=\"\",verb=\"LIST\",version=\"v1\"} 1\n",
    ] {
        assert!(metrics.contains(line), "{line} in {metrics}");
    }
}

#[tokio::test(start_paused = true)]
async fn impersonated_service_accounts_are_workload_low_and_get_the_classification_headers() {
    let server = server_with_buckets(
        Config::default().with_flow_control(FlowControl::priority_and_fairness()),
    );
    let service = server.service();
    let answer = |user: Option<&str>| {
        let mut request =
            http::Request::get("/apis/example.org/v1alpha1/namespaces/default/buckets");
        if let Some(user) = user {
            request = request.header("impersonate-user", user);
        }
        service.clone().oneshot(request.body(empty()).unwrap())
    };
    let sa = answer(Some("system:serviceaccount:crossplane-system:provider"))
        .await
        .unwrap();
    let anonymous = answer(None).await.unwrap();
    assert_eq!(
        (sa.status().as_u16(), anonymous.status().as_u16()),
        (200, 200)
    );
    assert_ne!(
        sa.headers()["x-kubernetes-pf-flowschema-uid"],
        anonymous.headers()["x-kubernetes-pf-flowschema-uid"]
    );
    let metrics = metrics_page(&server).await;
    assert!(metrics.contains("apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"service-accounts\",priority_level=\"workload-low\"} 1\n"), "{metrics}");
    assert!(metrics.contains("apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"global-default\",priority_level=\"global-default\"} 1\n"), "{metrics}");
    let bad = service
        .clone()
        .oneshot(
            http::Request::get("/api/v1/namespaces")
                .header("impersonate-group", "system:masters")
                .body(empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(bad.status(), 400, "groups without a user");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_retries_the_429_after_its_retry_after_and_succeeds() {
    // Real time: kube's retry waits the Retry-After second.
    let config = Config::default().with_flow_control(FlowControl::PriorityAndFairness(
        PriorityAndFairness::default()
            .with_server_concurrency_limit(10)
            .with_request_wait_limit(Duration::from_millis(100)),
    ));
    let server = server_with_buckets(config);
    let socket = Socket::start(server.clone()).await;
    let (slow, uploading) = slow_create("/api/v1/namespaces/default/configmaps");
    let holder = tokio::spawn(server.service().oneshot(slow));
    tokio::time::sleep(Duration::from_millis(50)).await;
    let release = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        drop(uploading);
    });
    let buckets: Api<Bucket> = Api::default_namespaced(socket.client().await);
    let listed = buckets
        .list(&ListParams::default())
        .await
        .expect("retried until served");
    assert!(listed.items.is_empty());
    release.await.unwrap();
    let _ = holder.await;
    let lists: Vec<u16> = server
        .journal()
        .since(0)
        .iter()
        .filter(|e| &*e.resource == "buckets")
        .map(|e| e.status)
        .collect();
    assert_eq!(
        lists,
        [429, 200],
        "refused once after its wait, then served"
    );
}
