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
//! `code` is the HTTP status; every JSON success of a resource request is a `Status` or
//! a valid object or list (`kind`, `apiVersion`, a named object's `managedFields` entries
//! well formed).
//!
//! Seeds ([`seed`]): sessions of server-side applies with managed fields and conflicts,
//! and strategic merge patches with every directive, written as the bytes `arbitrary`
//! decodes into them.

mod body;
mod build;
mod input;
mod query;
pub mod seed;
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
    let _ = answers(data);
}

/// One request of a session and its answer.
#[derive(Debug)]
pub struct Answer {
    /// The method and URI.
    pub request: String,
    /// The HTTP status.
    pub status: u16,
    /// The body, when it is JSON (a watch's stream is not kept).
    pub json: Option<serde_json::Value>,
}

/// Runs one input, as [`check`] does, and returns each request's answer (none when the
/// bytes decode into no session).
///
/// # Panics
/// When mock-apiserver breaks a promise (see the module's docs).
#[must_use]
pub fn answers(data: &[u8]) -> Vec<Answer> {
    let Ok(session) = Session::arbitrary_take_rest(Unstructured::new(data)) else {
        return Vec::new();
    };
    crate::runtime().block_on(run(session))
}

async fn run(session: Session) -> Vec<Answer> {
    let mut answers = Vec::new();
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
        let resource_request = !matches!(
            request.op,
            input::Op::Watch { .. } | input::Op::Discovery(_) | input::Op::Any(_)
        );
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
            Err(_) if verb == Verb::Watch => {
                answers.push(Answer {
                    request: described,
                    status,
                    json: None,
                });
                continue;
            }
            Err(_) => panic!("the body of {described} does not end"),
        };
        let parsed = json && !body.is_empty() && verb != Verb::Watch;
        let value: Option<serde_json::Value> = (parsed && (status >= 400 || resource_request))
            .then(|| {
                serde_json::from_slice(&body).unwrap_or_else(|e| {
                    panic!("{described}: {status} with a body that is not JSON ({e})")
                })
            });
        if let Some(value) = value.as_ref().filter(|_| status >= 400) {
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
        if let Some(value) = value.as_ref().filter(|_| status < 300 && resource_request) {
            valid_answer(&described, value);
        }
        answers.push(Answer {
            request: described,
            status,
            json: value,
        });
    }
    answers
}

/// Asserts that a resource request's JSON success is a `Status`, a list of objects or
/// an object: `kind` and `apiVersion` set, an object named, its `managedFields` entries
/// as `ValidateManagedFields` requires them (a manager, `Apply` or `Update`,
/// `FieldsV1`).
fn valid_answer(described: &str, value: &serde_json::Value) {
    let kind = value["kind"].as_str().unwrap_or_default();
    assert!(
        !kind.is_empty() && value["apiVersion"].is_string(),
        "{described}: an answer without kind or apiVersion: {value}"
    );
    if kind == "Status" || kind == "Table" {
        return;
    }
    if kind.ends_with("List") {
        let items = value["items"].as_array();
        assert!(
            items.is_some(),
            "{described}: a list without items: {value}"
        );
        for item in items.into_iter().flatten() {
            valid_object(described, item);
        }
        return;
    }
    valid_object(described, value);
}

fn valid_object(described: &str, object: &serde_json::Value) {
    let metadata = &object["metadata"];
    assert!(
        metadata["name"].as_str().is_some_and(|n| !n.is_empty()),
        "{described}: an object without a name: {object}"
    );
    for entry in metadata["managedFields"].as_array().into_iter().flatten() {
        let operation = entry["operation"].as_str();
        assert!(
            entry["manager"].is_string()
                && matches!(operation, Some("Apply" | "Update"))
                && entry["fieldsType"] == "FieldsV1"
                && entry["fieldsV1"].is_object(),
            "{described}: a managedFields entry the apiserver would refuse: {entry}"
        );
    }
}

/// The 500s the real API server answers too, for input its field manager or strategic
/// merge patch cannot type (`managedfields/internal/structuredmerge.go`, and errors
/// `interpretStrategicMergePatchError` passes through, among them `normalizeElementOrder`'s
/// for a `$setElementOrder` list the patch's items do not follow): the only 5xx allowed.
pub const UPSTREAM_500: [&str; 4] = [
    "failed to create typed ",
    "map: ",
    "unknown patch type: ",
    "The order in patch list:",
];
