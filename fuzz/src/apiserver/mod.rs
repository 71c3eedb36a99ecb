//! The `apiserver_requests` target: mock-apiserver's request handling, in-process through
//! its tower Service (`ApiServer::service`, what `serve` puts on a socket): path and query
//! parsing, label and field selectors, list paging, watches, the four patch types
//! (JSON, merge, strategic merge, server-side apply), YAML and protobuf bodies, Tables,
//! discovery, OpenAPI and the journal.
//!
//! Input: a structured session ([`Session`]): optional flow control, optionally a CRD,
//! and up to [`MAX_REQUESTS`] requests, with virtual time passing between them.
//!
//! Asserts: no panic; every request gets an answer; every answer but a watch's reads to
//! the end (a watch is read for [`WATCH_READ`] of virtual time, then dropped); no 5xx
//! but the ones the real API server gives for an object its field manager or strategic
//! merge patch cannot type ([`UPSTREAM_500`]); every JSON error is a `Status` whose
//! `code` is the HTTP status.

mod body;
mod build;
mod input;
mod query;
mod words;

use std::num::{NonZeroU32, NonZeroUsize};
use std::time::Duration;

use arbitrary::{Arbitrary, Unstructured};
use http_body_util::BodyExt;
use mock_apiserver::{ApiServer, Config, FlowControl, Verb};
use tower::ServiceExt;

pub use input::{Request, Session};

/// The most requests one input sends.
pub const MAX_REQUESTS: usize = 24;

/// How long an answer may take in virtual time.
const ANSWER_WITHIN: Duration = Duration::from_secs(3600);

/// How long a watch's stream is read in virtual time before it is dropped.
pub const WATCH_READ: Duration = Duration::from_secs(5);

/// The CRD a session can start with: the sample provider's `Bucket`.
const BUCKETS_CRD: &str =
    include_str!("../../../ci/manifests/crds/mockcloud.example.org_buckets.yaml");

/// Runs one input.
///
/// # Panics
/// When mock-apiserver breaks a promise (see the module's docs).
pub fn check(data: &[u8]) {
    let Ok(session) = Session::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    crate::runtime().block_on(run(session));
}

async fn run(session: Session) {
    let mut config = Config::default().with_journal_capacity(64);
    if let Some((qps, burst, in_flight)) = session.flow_control {
        let mut fc = FlowControl::new(
            NonZeroU32::new(u32::from(qps)).unwrap_or(NonZeroU32::MIN),
            NonZeroU32::new(u32::from(burst)).unwrap_or(NonZeroU32::MIN),
        );
        if let Some(max) = in_flight.and_then(|n| NonZeroUsize::new(usize::from(n))) {
            fc = fc.with_max_in_flight(max);
        }
        config = config.with_flow_control(fc);
    }
    let server = ApiServer::new(config);
    if session.crd {
        server
            .load_crd_yaml(BUCKETS_CRD)
            .expect("the buckets CRD loads");
    }
    for request in session.requests.iter().take(MAX_REQUESTS) {
        tokio::time::sleep(Duration::from_millis(u64::from(request.wait_ms))).await;
        let Some(http_request) = request.build() else {
            continue;
        };
        let uri = http_request.uri().clone();
        let described = format!("{} {uri}", http_request.method());
        let verb = Verb::of(http_request.method(), uri.path(), uri.query().unwrap_or(""));
        let response = tokio::time::timeout(ANSWER_WITHIN, server.service().oneshot(http_request))
            .await
            .unwrap_or_else(|_| panic!("no answer to {described}"))
            .unwrap_or_else(|never| match never {});
        let status = response.status().as_u16();
        let json = response
            .headers()
            .get("content-type")
            .is_some_and(|ct| ct.as_bytes().starts_with(b"application/json"));
        let read = if verb == Verb::Watch && status < 300 {
            WATCH_READ
        } else {
            ANSWER_WITHIN
        };
        let body = match tokio::time::timeout(read, response.into_body().collect()).await {
            Ok(body) => body
                .unwrap_or_else(|e| panic!("the body of {described} breaks off: {e}"))
                .to_bytes(),
            Err(_) if verb == Verb::Watch => continue,
            Err(_) => panic!("the body of {described} does not end"),
        };
        if status >= 400 && json && !body.is_empty() {
            let value: serde_json::Value = serde_json::from_slice(&body).unwrap_or_else(|e| {
                panic!("{described}: {status} with a body that is not JSON ({e})")
            });
            assert_eq!(value["kind"], "Status", "{described}: {status} {value}");
            assert_eq!(value["code"], status, "{described}: {status} {value}");
            if status >= 500 {
                let message = value["message"].as_str().unwrap_or_default();
                assert!(
                    status == 500 && UPSTREAM_500.iter().any(|p| message.starts_with(p)),
                    "{described}: {status} {value}"
                );
            }
        } else {
            assert!(status < 500, "{described}: {status}");
        }
    }
}

/// The 500s the real API server answers too, for input its field manager or strategic
/// merge patch cannot type (`managedfields/internal/structuredmerge.go`, and errors
/// `interpretStrategicMergePatchError` passes through): the only 5xx allowed.
pub const UPSTREAM_500: [&str; 3] = ["failed to create typed ", "map: ", "unknown patch type: "];
