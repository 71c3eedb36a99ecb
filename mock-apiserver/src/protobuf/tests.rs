//! Bodies encoded and decoded by k8s-pb (prost code generated from the Kubernetes .proto
//! files), an encoder independent of ours.

use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::coordination::v1 as coordination;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use prost::Message;
use serde_json::json;

use super::*;

/// A body as client-go writes it: the magic and an Unknown envelope.
fn k8s_body(api_version: &str, kind: &str, message: &impl Message) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(message.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    [MAGIC.to_vec(), unknown.encode_to_vec()].concat()
}

/// The message inside one of our envelopes, read by k8s-pb.
fn k8s_read<M: Message + Default>(body: &[u8], api_version: &str, kind: &str) -> M {
    let unknown = Unknown::decode(body.strip_prefix(MAGIC).expect("magic")).unwrap();
    let type_meta = unknown.type_meta.unwrap();
    assert_eq!(type_meta.api_version.as_deref(), Some(api_version));
    assert_eq!(type_meta.kind.as_deref(), Some(kind));
    M::decode(unknown.raw.unwrap().as_slice()).unwrap()
}

/// ObjectMeta as Go writes it: every value field on the wire, even when empty.
fn go_meta(name: &str, namespace: &str) -> meta::ObjectMeta {
    meta::ObjectMeta {
        name: Some(name.into()),
        generate_name: Some(String::new()),
        namespace: Some(namespace.into()),
        self_link: Some(String::new()),
        uid: Some(String::new()),
        resource_version: Some(String::new()),
        generation: Some(0),
        creation_timestamp: Some(meta::Time::default()),
        labels: [("app".to_owned(), "x".to_owned())].into(),
        ..Default::default()
    }
}

#[test]
fn a_lease_from_client_go_leader_election_decodes_to_its_json() {
    let lease = coordination::Lease {
        metadata: Some(go_meta("provider-leader", "crossplane-system")),
        spec: Some(coordination::LeaseSpec {
            holder_identity: Some("pod-1_8b4f".into()),
            lease_duration_seconds: Some(60),
            acquire_time: Some(meta::MicroTime {
                seconds: Some(1_795_000_000),
                nanos: Some(123_456_000),
            }),
            renew_time: Some(meta::MicroTime {
                seconds: Some(1_795_000_000),
                nanos: Some(123_456_000),
            }),
            lease_transitions: Some(0),
            ..Default::default()
        }),
    };
    let value = decode(&k8s_body("coordination.k8s.io/v1", "Lease", &lease)).unwrap();
    assert_eq!(
        value,
        json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            // Go's empty value fields are left out, as its omitempty does (a zero time
            // too, which Go writes as null).
            "metadata": {"name": "provider-leader", "namespace": "crossplane-system",
                         "labels": {"app": "x"}},
            "spec": {"holderIdentity": "pod-1_8b4f", "leaseDurationSeconds": 60,
                     "acquireTime": "2026-11-18T11:06:40.123456Z",
                     "renewTime": "2026-11-18T11:06:40.123456Z", "leaseTransitions": 0}
        })
    );
}

#[test]
fn a_lease_encodes_to_what_k8s_pb_reads_back() {
    let value = json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "l", "namespace": "default", "resourceVersion": "7",
                     "creationTimestamp": "2026-11-18T11:06:40Z"},
        "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15,
                 "renewTime": "2026-11-18T11:06:40.500000Z"}
    });
    let lease: coordination::Lease =
        k8s_read(&encode(&value).unwrap(), "coordination.k8s.io/v1", "Lease");
    let metadata = lease.metadata.unwrap();
    assert_eq!(metadata.resource_version.as_deref(), Some("7"));
    // Go writes every value field: the ones the JSON left out come back empty.
    assert_eq!(metadata.uid.as_deref(), Some(""));
    assert_eq!(
        metadata.creation_timestamp.unwrap().seconds,
        Some(1_795_000_000)
    );
    let spec = lease.spec.unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some("me"));
    assert_eq!(spec.lease_duration_seconds, Some(15));
    assert_eq!(spec.renew_time.unwrap().nanos, Some(500_000_000));
    // Pointers the JSON does not set stay unset.
    assert_eq!(spec.lease_transitions, None);
    assert_eq!(spec.acquire_time, None);
}

fn deployment() -> apps::Deployment {
    let container = core::Container {
        name: Some("app".into()),
        image: Some("nginx:1.27".into()),
        ports: vec![core::ContainerPort {
            container_port: Some(80),
            protocol: Some("TCP".into()),
            ..Default::default()
        }],
        resources: Some(core::ResourceRequirements {
            limits: [(
                "memory".to_owned(),
                Quantity {
                    string: Some("128Mi".into()),
                },
            )]
            .into(),
            ..Default::default()
        }),
        readiness_probe: Some(core::Probe {
            handler: Some(core::ProbeHandler {
                http_get: Some(core::HttpGetAction {
                    path: Some("/healthz".into()),
                    port: Some(IntOrString {
                        r#type: Some(1),
                        int_val: Some(0),
                        str_val: Some("http".into()),
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            period_seconds: Some(5),
            ..Default::default()
        }),
        volume_mounts: vec![core::VolumeMount {
            name: Some("config".into()),
            mount_path: Some("/etc/app".into()),
            ..Default::default()
        }],
        ..Default::default()
    };
    let volume = core::Volume {
        name: Some("config".into()),
        volume_source: Some(core::VolumeSource {
            config_map: Some(core::ConfigMapVolumeSource {
                local_object_reference: Some(core::LocalObjectReference {
                    name: Some("app-config".into()),
                }),
                default_mode: Some(0o644),
                ..Default::default()
            }),
            ..Default::default()
        }),
    };
    apps::Deployment {
        metadata: Some(go_meta("web", "default")),
        spec: Some(apps::DeploymentSpec {
            replicas: Some(0),
            selector: Some(meta::LabelSelector {
                match_labels: [("app".to_owned(), "web".to_owned())].into(),
                ..Default::default()
            }),
            template: Some(core::PodTemplateSpec {
                metadata: Some(meta::ObjectMeta {
                    labels: [("app".to_owned(), "web".to_owned())].into(),
                    ..Default::default()
                }),
                spec: Some(core::PodSpec {
                    containers: vec![container],
                    volumes: vec![volume],
                    ..Default::default()
                }),
            }),
            strategy: Some(apps::DeploymentStrategy {
                r#type: Some("RollingUpdate".into()),
                rolling_update: Some(apps::RollingUpdateDeployment {
                    max_surge: Some(IntOrString {
                        r#type: Some(0),
                        int_val: Some(1),
                        str_val: Some(String::new()),
                    }),
                    ..Default::default()
                }),
            }),
            ..Default::default()
        }),
        status: None,
    }
}

#[test]
fn a_deployment_keeps_embedded_structs_quantities_and_int_or_strings() {
    let body = k8s_body("apps/v1", "Deployment", &deployment());
    let value = decode(&body).unwrap();
    let spec = &value["spec"];
    assert_eq!(spec["replicas"], 0, "a pointer set to zero stays");
    assert_eq!(spec["strategy"]["rollingUpdate"]["maxSurge"], 1);
    let pod = &spec["template"]["spec"];
    assert_eq!(
        pod["volumes"][0],
        json!({"name": "config", "configMap": {"name": "app-config", "defaultMode": 420}})
    );
    let container = &pod["containers"][0];
    assert_eq!(container["resources"]["limits"]["memory"], "128Mi");
    assert_eq!(container["readinessProbe"]["httpGet"]["port"], "http");
    assert_eq!(container["readinessProbe"]["periodSeconds"], 5);
    assert_eq!(
        container["ports"][0],
        json!({"containerPort": 80, "protocol": "TCP"})
    );

    // And back: our encoding of that JSON reads as the same object, in k8s-pb too.
    let encoded = encode(&value).unwrap();
    assert_eq!(decode(&encoded).unwrap(), value);
    let again: apps::Deployment = k8s_read(&encoded, "apps/v1", "Deployment");
    let spec = again.spec.unwrap();
    assert_eq!(spec.replicas, Some(0));
    let pod = spec.template.unwrap().spec.unwrap();
    let config_map = pod.volumes[0]
        .volume_source
        .clone()
        .unwrap()
        .config_map
        .unwrap();
    assert_eq!(
        config_map.local_object_reference.unwrap().name.as_deref(),
        Some("app-config")
    );
    let probe = pod.containers[0].readiness_probe.clone().unwrap();
    let port = probe.handler.unwrap().http_get.unwrap().port.unwrap();
    assert_eq!(
        (port.r#type, port.str_val.as_deref()),
        (Some(1), Some("http"))
    );
}

#[test]
fn bodies_with_unknown_fields_are_refused_not_cut() {
    let mut raw = core::ConfigMap {
        metadata: Some(go_meta("c", "default")),
        ..Default::default()
    }
    .encode_to_vec();
    // Field 99, a varint: something a newer Kubernetes might send.
    raw.extend_from_slice(&[0x98, 0x06, 0x01]);
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some("v1".into()),
            kind: Some("ConfigMap".into()),
        }),
        raw: Some(raw),
        ..Default::default()
    };
    let body = [MAGIC.to_vec(), unknown.encode_to_vec()].concat();
    assert!(matches!(
        decode(&body),
        Err(ProtobufError::UnknownFields { .. })
    ));
    let value = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                       "futureField": {"x": 1}});
    assert!(matches!(
        encode(&value),
        Err(ProtobufError::NotRepresentable { .. })
    ));
    assert!(matches!(decode(b"nope"), Err(ProtobufError::NoMagic)));
    assert!(matches!(
        decode(b"k8s\0\x0a\x05ab"),
        Err(ProtobufError::Malformed(_))
    ));
    let crd = json!({"apiVersion": "example.org/v1", "kind": "Bucket"});
    assert!(matches!(
        encode(&crd),
        Err(ProtobufError::Unsupported { .. })
    ));
}

#[test]
fn lists_and_watch_frames_read_as_client_go_reads_them() {
    let items = [
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"},
               "data": {"k": "YWJj"}, "type": "Opaque"}),
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "b"}}),
    ];
    let body = encode_list(
        "v1",
        "Secret",
        &json!({"resourceVersion": "12", "continue": "t"}),
        &items,
    )
    .unwrap();
    let list: core::SecretList = k8s_read(&body, "v1", "SecretList");
    assert_eq!(list.metadata.unwrap().r#continue.as_deref(), Some("t"));
    assert_eq!(list.items.len(), 2);
    assert_eq!(list.items[0].data["k"], b"abc");
    assert_eq!(list.items[0].r#type.as_deref(), Some("Opaque"));

    let object = encode(&items[1]).unwrap();
    let frame = watch_frame("ADDED", &object);
    let len = u32::from_be_bytes(frame[..4].try_into().unwrap()) as usize;
    assert_eq!(len, frame.len() - 4);
    let event = meta::WatchEvent::decode(&frame[4..]).unwrap();
    assert_eq!(event.r#type.as_deref(), Some("ADDED"));
    let raw = event.object.unwrap().raw.unwrap();
    let secret: core::Secret = k8s_read(&raw, "v1", "Secret");
    assert_eq!(secret.metadata.unwrap().name.as_deref(), Some("b"));
}

#[test]
fn delete_options_and_statuses_cross_the_wire() {
    let options = meta::DeleteOptions {
        propagation_policy: Some("Foreground".into()),
        preconditions: Some(meta::Preconditions {
            uid: Some("u-1".into()),
            resource_version: None,
        }),
        dry_run: vec!["All".into()],
        ..Default::default()
    };
    let value = decode_delete_options(&k8s_body(
        "coordination.k8s.io/v1",
        "DeleteOptions",
        &options,
    ))
    .unwrap();
    assert_eq!(
        value,
        json!({"propagationPolicy": "Foreground", "preconditions": {"uid": "u-1"},
               "dryRun": ["All"]})
    );
    let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "message": "leases.coordination.k8s.io \"l\" not found",
        "reason": "NotFound", "details": {"name": "l", "group": "coordination.k8s.io",
        "kind": "leases"}, "code": 404});
    let read: meta::Status = k8s_read(&encode(&status).unwrap(), "v1", "Status");
    assert_eq!(read.code, Some(404));
    assert_eq!(read.reason.as_deref(), Some("NotFound"));
    assert_eq!(read.details.unwrap().kind.as_deref(), Some("leases"));
}
