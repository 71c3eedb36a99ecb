//! Protobuf bodies, as client-go's clientsets send them: built with k8s-pb (an encoder we
//! did not write) in-process, and with kubectl (a real Go client) over a socket.

use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use k8s_pb::api::coordination::v1 as coordination;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use mock_apiserver::{ApiServer, Config};
use prost::Message;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tower::ServiceExt;

use crate::kubectl::{BOUND, Kubectl};

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
/// What client-go's clientsets send as Accept.
const CLIENT_GO_ACCEPT: &str = "application/vnd.kubernetes.protobuf, */*";
const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/default/leases";

fn envelope(api_version: &str, kind: &str, message: &impl Message) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(message.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    [b"k8s\0".to_vec(), unknown.encode_to_vec()].concat()
}

fn open<M: Message + Default>(body: &[u8], kind: &str) -> M {
    let unknown = Unknown::decode(body.strip_prefix(b"k8s\0").expect("the k8s magic")).unwrap();
    assert_eq!(unknown.type_meta.unwrap().kind.as_deref(), Some(kind));
    M::decode(unknown.raw.unwrap().as_slice()).unwrap()
}

async fn call(
    server: &ApiServer,
    method: Method,
    uri: &str,
    accept: &str,
    body: Vec<u8>,
) -> (StatusCode, String, Bytes) {
    let mut request = Request::builder().method(method).uri(uri);
    if !body.is_empty() {
        request = request.header("content-type", PROTOBUF);
    }
    if !accept.is_empty() {
        request = request.header("accept", accept);
    }
    let request = request.body(Full::new(Bytes::from(body))).unwrap();
    let response = server.service().oneshot(request).await.unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, content_type, body)
}

/// A Lease as client-go's leader election writes it: every Go value field on the wire.
fn lease(holder: &str, resource_version: &str) -> coordination::Lease {
    coordination::Lease {
        metadata: Some(meta::ObjectMeta {
            name: Some("provider-leader".into()),
            generate_name: Some(String::new()),
            namespace: Some("default".into()),
            self_link: Some(String::new()),
            uid: Some(String::new()),
            resource_version: Some(resource_version.into()),
            generation: Some(0),
            creation_timestamp: Some(meta::Time::default()),
            ..Default::default()
        }),
        spec: Some(coordination::LeaseSpec {
            holder_identity: Some(holder.into()),
            lease_duration_seconds: Some(137),
            acquire_time: Some(meta::MicroTime {
                seconds: Some(1_795_000_000),
                nanos: Some(250_000_000),
            }),
            renew_time: Some(meta::MicroTime {
                seconds: Some(1_795_000_000),
                nanos: Some(250_000_000),
            }),
            lease_transitions: Some(0),
            ..Default::default()
        }),
    }
}

#[tokio::test]
async fn leader_election_creates_updates_and_releases_a_lease_in_protobuf() {
    let server = ApiServer::new(Config::default());
    let body = envelope("coordination.k8s.io/v1", "Lease", &lease("pod-a", ""));
    let (status, content_type, answer) =
        call(&server, Method::POST, LEASES, CLIENT_GO_ACCEPT, body).await;
    assert_eq!(status, StatusCode::CREATED, "{answer:?}");
    assert_eq!(content_type, PROTOBUF);
    let created: coordination::Lease = open(&answer, "Lease");
    let rv = created.metadata.unwrap().resource_version.unwrap();
    assert!(!rv.is_empty());

    // The stored JSON is what a Go server would serve: value fields left out when empty.
    let (_, content_type, json_answer) = call(
        &server,
        Method::GET,
        &format!("{LEASES}/provider-leader"),
        "application/json",
        Vec::new(),
    )
    .await;
    assert_eq!(content_type, "application/json");
    let value: Value = serde_json::from_slice(&json_answer).unwrap();
    assert_eq!(
        value["spec"],
        json!({"holderIdentity": "pod-a", "leaseDurationSeconds": 137,
               "acquireTime": "2026-11-18T11:06:40.250000Z",
               "renewTime": "2026-11-18T11:06:40.250000Z", "leaseTransitions": 0})
    );
    assert!(value["metadata"].get("selfLink").is_none());

    // Renewal: a PUT with the resourceVersion, then a stale one conflicts.
    let body = envelope("coordination.k8s.io/v1", "Lease", &lease("pod-b", &rv));
    let uri = format!("{LEASES}/provider-leader");
    let (status, _, answer) = call(&server, Method::PUT, &uri, CLIENT_GO_ACCEPT, body).await;
    assert_eq!(status, StatusCode::OK);
    let renewed: coordination::Lease = open(&answer, "Lease");
    assert_eq!(
        renewed.spec.unwrap().holder_identity.as_deref(),
        Some("pod-b")
    );
    let body = envelope("coordination.k8s.io/v1", "Lease", &lease("pod-c", &rv));
    let (status, _, _) = call(&server, Method::PUT, &uri, CLIENT_GO_ACCEPT, body).await;
    assert_eq!(status, StatusCode::CONFLICT);

    // A list and a delete with protobuf DeleteOptions.
    let (status, _, answer) = call(&server, Method::GET, LEASES, PROTOBUF, Vec::new()).await;
    assert_eq!(status, StatusCode::OK);
    let list: coordination::LeaseList = open(&answer, "LeaseList");
    assert_eq!(list.items.len(), 1);
    let options = meta::DeleteOptions {
        preconditions: Some(meta::Preconditions {
            uid: Some("not-the-uid".into()),
            resource_version: None,
        }),
        ..Default::default()
    };
    let body = envelope("coordination.k8s.io/v1", "DeleteOptions", &options);
    let (status, _, _) = call(&server, Method::DELETE, &uri, CLIENT_GO_ACCEPT, body).await;
    assert_eq!(status, StatusCode::CONFLICT, "the uid precondition holds");
    let body = envelope(
        "coordination.k8s.io/v1",
        "DeleteOptions",
        &meta::DeleteOptions::default(),
    );
    let (status, _, _) = call(&server, Method::DELETE, &uri, CLIENT_GO_ACCEPT, body).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn custom_resources_answer_protobuf_accepts_in_json_and_refuse_protobuf_bodies() {
    let server = crate::support::server_with_buckets(Config::default());
    let uri = "/apis/example.org/v1alpha1/namespaces/default/buckets";
    let (status, content_type, _) = call(
        &server,
        Method::GET,
        uri,
        "application/vnd.kubernetes.protobuf,application/json",
        Vec::new(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(content_type, "application/json");
    let body = envelope("example.org/v1alpha1", "Bucket", &meta::Status::default());
    let (status, _, _) = call(&server, Method::POST, uri, "", body).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_creates_deployments_and_service_accounts_in_protobuf_and_reads_the_answers() {
    let k = Kubectl::start().await;
    // kubectl's typed create sends protobuf and asks for protobuf back; `-o json` prints
    // the object Go decoded from our answer.
    let out = k
        .ok(&[
            "create",
            "deployment",
            "web",
            "--image=nginx:1.27",
            "--replicas=0",
            "-o",
            "json",
        ])
        .await;
    let printed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(printed["spec"]["replicas"], 0);
    assert_eq!(printed["spec"]["strategy"], json!({}));
    assert_eq!(
        printed["spec"]["template"]["spec"]["containers"][0],
        json!({"name": "nginx", "image": "nginx:1.27", "resources": {}})
    );
    assert!(printed["metadata"]["uid"].is_string());
    let out = k
        .ok(&["create", "serviceaccount", "robot", "-o", "name"])
        .await;
    assert_eq!(out.trim(), "serviceaccount/robot");
    let stored = k
        .server
        .journal()
        .since(0)
        .into_iter()
        .filter(|e| e.verb == mock_apiserver::Verb::Create)
        .count();
    assert_eq!(stored, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_events_watch_reads_protobuf_watch_frames() {
    use kube::runtime::events::{Event, EventType, Recorder, Reporter};
    let k = Kubectl::start().await;
    let mut child = k
        .command(&["events", "-w", "--request-timeout=30s"])
        .spawn()
        .expect("kubectl runs");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    k.wait_for_watch_of("events").await;
    let recorder = Recorder::new(
        k.client(),
        Reporter {
            controller: "protobuf-test".into(),
            instance: None,
        },
    );
    let mut cm = k8s_openapi::api::core::v1::ConfigMap::default();
    cm.metadata.name = Some("watched".into());
    cm.metadata.namespace = Some("default".into());
    let reference = kube::Resource::object_ref(&cm, &());
    recorder
        .publish(
            &Event {
                type_: EventType::Normal,
                reason: "Framed".into(),
                note: Some("sent as a protobuf frame".into()),
                action: "Test".into(),
                secondary: None,
            },
            &reference,
        )
        .await
        .unwrap();
    let line = tokio::time::timeout(BOUND, async {
        loop {
            let line = lines.next_line().await.unwrap().expect("kubectl prints");
            if line.contains("Framed") {
                return line;
            }
        }
    })
    .await
    .expect("the event arrives");
    assert!(line.contains("sent as a protobuf frame"), "{line}");
    child.kill().await.unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
}

#[tokio::test]
async fn a_core_event_from_client_gos_recorder_is_stored_in_the_events_api() {
    use k8s_pb::api::core::v1 as core;
    let server = ApiServer::new(Config::default());
    let event = core::Event {
        metadata: Some(meta::ObjectMeta {
            name: Some("provider-leader.1".into()),
            namespace: Some("default".into()),
            ..Default::default()
        }),
        involved_object: Some(core::ObjectReference {
            kind: Some("Lease".into()),
            namespace: Some("default".into()),
            name: Some("provider-leader".into()),
            api_version: Some("coordination.k8s.io/v1".into()),
            ..Default::default()
        }),
        reason: Some("LeaderElection".into()),
        message: Some("pod-a became leader".into()),
        source: Some(core::EventSource {
            component: Some("provider".into()),
            host: Some(String::new()),
        }),
        count: Some(1),
        r#type: Some("Normal".into()),
        ..Default::default()
    };
    let (status, content_type, answer) = call(
        &server,
        Method::POST,
        "/api/v1/namespaces/default/events",
        CLIENT_GO_ACCEPT,
        envelope("v1", "Event", &event),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answer:?}");
    assert_eq!(content_type, PROTOBUF);
    let created: core::Event = open(&answer, "Event");
    assert_eq!(created.reason.as_deref(), Some("LeaderElection"));
    let (_, _, json_answer) = call(
        &server,
        Method::GET,
        "/apis/events.k8s.io/v1/namespaces/default/events/provider-leader.1",
        "application/json",
        Vec::new(),
    )
    .await;
    let stored: Value = serde_json::from_slice(&json_answer).unwrap();
    assert_eq!(stored["note"], "pod-a became leader");
    assert_eq!(stored["regarding"]["name"], "provider-leader");
}
