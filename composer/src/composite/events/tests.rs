//! The recorder against the mock API server on tokio's paused clock: what client-go's
//! correlator lets through, and how failed writes end.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::Event;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams};
use mock_apiserver::{ApiServer, Verb};
use tower::ServiceExt as _;

use super::*;

fn xr(name: &str) -> DynamicObject {
    let resource = ApiResource {
        group: "example.org".into(),
        version: "v1".into(),
        api_version: "example.org/v1".into(),
        kind: "XBucket".into(),
        plural: "xbuckets".into(),
    };
    let mut xr = DynamicObject::new(name, &resource);
    xr.metadata.uid = Some(format!("uid-{name}"));
    xr
}

fn clock() -> Clock {
    let epoch: Timestamp = "2026-11-24T10:00:00Z".parse().unwrap();
    Clock::at(epoch, tokio::time::Instant::now())
}

/// `(verb, name)` of each request on core/v1 Events since `from`.
fn event_requests(server: &ApiServer, from: u64) -> Vec<(Verb, String)> {
    server
        .journal()
        .since(from)
        .into_iter()
        .filter(|e| e.group.is_empty() && &*e.resource == "events")
        .map(|e| (e.verb, e.name.to_string()))
        .collect()
}

fn count(requests: &[(Verb, String)], verb: Verb) -> usize {
    requests.iter().filter(|(v, _)| *v == verb).count()
}

/// `(reason, message, count)` of the stored events about `name`, by name.
async fn stored(client: &kube::Client, name: &str) -> Vec<(String, String, i32)> {
    let mut all = Api::<Event>::namespaced(client.clone(), "default")
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    all.sort_by_key(|e| e.metadata.name.clone());
    all.into_iter()
        .filter(|e| e.involved_object.name.as_deref() == Some(name))
        .map(|e| {
            (
                e.reason.unwrap_or_default(),
                e.message.unwrap_or_default(),
                e.count.unwrap_or_default(),
            )
        })
        .collect()
}

/// Lets the writer catch up without passing a refill of the spam filter.
async fn settle() {
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[tokio::test(start_paused = true)]
async fn a_burst_is_one_create_and_patches_up_to_the_spam_limit_then_one_per_300_seconds() {
    let server = ApiServer::default();
    let client = kube::Client::new(server.service(), "default");
    let (recorder, _writer) = Recorder::start_with(client.clone(), clock(), DEFAULT_SEED);
    let a = xr("a");
    for _ in 0..30 {
        recorder.warning(&a, REASON_COMPOSE, "cannot compose");
    }
    settle().await;
    let requests = event_requests(&server, 0);
    // The first is created, the next 24 patch its count; the spam filter's burst of 25 per
    // object and type is spent, and the last 5 are skipped (yet counted by the logger).
    assert_eq!(count(&requests, Verb::Create), 1, "{requests:?}");
    assert_eq!(count(&requests, Verb::Patch), 24, "{requests:?}");
    assert_eq!(requests.len(), 25);
    let counters = recorder.counters().unwrap();
    assert_eq!(
        (counters.queued(), counters.skipped(), counters.dropped()),
        (30, 5, 0)
    );
    let reason = REASON_COMPOSE.to_owned();
    assert_eq!(
        stored(&client, "a").await,
        [(reason.clone(), "cannot compose".into(), 25)]
    );
    // Another reason of the same type shares the bucket: skipped too, until a token refills
    // (1/300 per second, client-go's `float32`, a little sooner than 300 s).
    let seq = server.journal().last_seq();
    tokio::time::sleep(Duration::from_secs(298)).await;
    recorder.warning(&a, REASON_COMPOSE, "cannot compose");
    recorder.warning(&a, REASON_SELECT_COMPOSITION, "cannot select");
    settle().await;
    assert_eq!(event_requests(&server, seq), []);
    tokio::time::sleep(Duration::from_secs(1)).await;
    recorder.warning(&a, REASON_COMPOSE, "cannot compose");
    recorder.warning(&a, REASON_COMPOSE, "cannot compose");
    settle().await;
    let requests = event_requests(&server, seq);
    assert_eq!(count(&requests, Verb::Patch), 1, "{requests:?}");
    assert_eq!(requests.len(), 1, "{requests:?}");
    // The count carries every observation, the skipped ones too: 25 + 5 + 1 + 1.
    assert_eq!(
        stored(&client, "a").await,
        [(reason, "cannot compose".into(), 32)]
    );
    assert_eq!((counters.created(), counters.patched()), (1, 25));
    assert_eq!(counters.skipped(), 8);
}

#[tokio::test(start_paused = true)]
async fn the_tenth_distinct_message_of_a_reason_within_600_seconds_is_combined() {
    let server = ApiServer::default();
    let client = kube::Client::new(server.service(), "default");
    let (recorder, _writer) = Recorder::start_with(client.clone(), clock(), DEFAULT_SEED);
    let a = xr("a");
    for i in 0..11 {
        recorder.normal(&a, REASON_COMPOSE, format!("resource {i} is not ready"));
    }
    settle().await;
    let requests = event_requests(&server, 0);
    // Nine events of their own, then the combined event, created and then patched.
    assert_eq!(count(&requests, Verb::Create), 10, "{requests:?}");
    assert_eq!(count(&requests, Verb::Patch), 1, "{requests:?}");
    let events = stored(&client, "a").await;
    assert_eq!(events.len(), 10);
    let reason = REASON_COMPOSE.to_owned();
    for (i, event) in events.iter().take(9).enumerate() {
        assert_eq!(
            event,
            &(reason.clone(), format!("resource {i} is not ready"), 1)
        );
    }
    assert_eq!(
        events[9],
        (
            reason,
            "(combined from similar events): resource 10 is not ready".into(),
            2
        )
    );
    // 600 s after the last of them the group starts over: a new message is its own event.
    tokio::time::sleep(Duration::from_secs(601)).await;
    let seq = server.journal().last_seq();
    recorder.normal(&a, REASON_COMPOSE, "resource 11 is not ready");
    settle().await;
    let requests = event_requests(&server, seq);
    assert_eq!(count(&requests, Verb::Create), 1, "{requests:?}");
    let events = stored(&client, "a").await;
    assert!(
        events
            .iter()
            .any(|(_, m, c)| m == "resource 11 is not ready" && *c == 1)
    );
}

#[tokio::test(start_paused = true)]
async fn two_xrs_have_a_spam_bucket_each() {
    let server = ApiServer::default();
    let client = kube::Client::new(server.service(), "default");
    let (recorder, _writer) = Recorder::start_with(client.clone(), clock(), DEFAULT_SEED);
    for _ in 0..26 {
        recorder.warning(&xr("a"), REASON_COMPOSE, "cannot compose");
        recorder.warning(&xr("b"), REASON_COMPOSE, "cannot compose");
    }
    settle().await;
    let requests = event_requests(&server, 0);
    assert_eq!(count(&requests, Verb::Create), 2, "{requests:?}");
    assert_eq!(count(&requests, Verb::Patch), 48, "{requests:?}");
    for name in ["a", "b"] {
        assert_eq!(
            stored(&client, name).await,
            [(REASON_COMPOSE.to_owned(), "cannot compose".into(), 25)]
        );
    }
    assert_eq!(recorder.counters().unwrap().skipped(), 2);
}

/// A client whose first `fail` requests on events fail in transport and whose PATCHes of
/// events are sent with a media type the API server refuses once `refuse` is set.
fn faulty_client(
    server: &ApiServer,
    fail: Arc<AtomicUsize>,
    refuse: Arc<AtomicUsize>,
) -> kube::Client {
    let inner = server.service();
    let service = tower::service_fn(move |mut request: http::Request<kube::client::Body>| {
        let (inner, fail, refuse) = (inner.clone(), Arc::clone(&fail), Arc::clone(&refuse));
        async move {
            let path = request.uri().path().to_owned();
            if path.starts_with("/api/v1/namespaces/default/events") {
                let failing =
                    fail.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
                if failing.is_ok() {
                    return Err::<_, tower::BoxError>("connection reset".into());
                }
                if request.method() == http::Method::PATCH && refuse.load(Ordering::SeqCst) > 0 {
                    request.headers_mut().insert(
                        http::header::CONTENT_TYPE,
                        http::HeaderValue::from_static("application/x-unknown"),
                    );
                }
            }
            Ok(inner.oneshot(request).await.unwrap_or_else(|e| match e {}))
        }
    });
    kube::Client::new(service, "default")
}

#[tokio::test(start_paused = true)]
async fn failures_are_retried_refusals_are_not_and_a_patch_of_a_deleted_event_creates_it() {
    let server = ApiServer::default();
    let (fail, refuse) = (Arc::new(AtomicUsize::new(2)), Arc::new(AtomicUsize::new(0)));
    let client = faulty_client(&server, Arc::clone(&fail), Arc::clone(&refuse));
    let (recorder, _writer) = Recorder::start_with(client.clone(), clock(), DEFAULT_SEED);
    let counters = Arc::clone(recorder.counters().unwrap());
    let a = xr("a");
    // Two transport failures: retried after a random share of 10 s, then after 10 s.
    recorder.warning(&a, REASON_COMPOSE, "cannot compose");
    settle().await;
    assert_eq!((counters.retries(), counters.created()), (1, 0));
    tokio::time::sleep(Duration::from_secs(20)).await;
    assert_eq!((counters.retries(), counters.created()), (2, 1));
    assert_eq!(fail.load(Ordering::SeqCst), 0);
    // The API server refuses the repeat's PATCH (415): a status error is not retried, and
    // not created either.
    refuse.store(1, Ordering::SeqCst);
    let seq = server.journal().last_seq();
    recorder.warning(&a, REASON_COMPOSE, "cannot compose");
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(counters.rejected(), 1);
    let requests = event_requests(&server, seq);
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(count(&requests, Verb::Patch), 1);
    // The event deleted, the next repeat's PATCH finds nothing and creates it again under
    // its first name, counted on from the logger's count.
    refuse.store(0, Ordering::SeqCst);
    let events = Api::<Event>::namespaced(client.clone(), "default");
    let name = events.list(&ListParams::default()).await.unwrap().items[0]
        .metadata
        .name
        .clone()
        .unwrap();
    events
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
    let seq = server.journal().last_seq();
    recorder.warning(&a, REASON_COMPOSE, "cannot compose");
    settle().await;
    let requests = event_requests(&server, seq);
    assert_eq!(
        requests,
        [(Verb::Patch, name.clone()), (Verb::Create, String::new())]
    );
    let recreated = events.get(&name).await.unwrap();
    assert_eq!(recreated.count, Some(3));
    assert_eq!((counters.created(), counters.patched()), (2, 0));
}
