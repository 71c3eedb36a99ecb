use std::collections::BTreeMap;

use prost::Message;
use prost_types::value::Kind;

use super::*;

fn string_struct(key: &str, value: &str) -> Struct {
    Struct(prost_types::Struct {
        fields: BTreeMap::from([(
            key.to_owned(),
            prost_types::Value {
                kind: Some(Kind::StringValue(value.to_owned())),
            },
        )]),
    })
}

fn small_request() -> RunFunctionRequest {
    RunFunctionRequest {
        meta: Some(RequestMeta {
            tag: "t".into(),
            capabilities: vec![Capability::Capabilities as i32],
        }),
        observed: Some(State {
            composite: Some(Resource {
                ready: Ready::True as i32,
                ..Default::default()
            }),
            resources: BTreeMap::new(),
        }),
        desired: Some(State {
            composite: None,
            resources: BTreeMap::from([(
                "x".to_owned(),
                Resource {
                    ready: Ready::False as i32,
                    ..Default::default()
                },
            )]),
        }),
        input: Some(string_struct("a", "b")),
        credentials: BTreeMap::from([(
            "c".to_owned(),
            Credentials {
                source: Some(credentials::Source::CredentialData(CredentialData {
                    data: BTreeMap::from([("k".to_owned(), b"v".to_vec())]),
                })),
            },
        )]),
        ..Default::default()
    }
}

// Each line is one field, derived by hand from run_function.proto: a key is
// (field number << 3 | wire type), wire type 2 (LEN) for messages, strings, bytes, maps and
// packed repeated enums, 0 (VARINT) for enums; a map entry is a message with the key as
// field 1 and the value as field 2.
#[rustfmt::skip]
const SMALL_REQUEST: &[u8] = &[
    // meta (1): RequestMeta { tag (1) = "t", capabilities (2, packed) = [CAPABILITY_CAPABILITIES = 1] }
    0x0a, 6, 0x0a, 1, b't', 0x12, 1, 1,
    // observed (2): State { composite (1): Resource { ready (3) = READY_TRUE = 1 } }
    0x12, 4, 0x0a, 2, 0x18, 1,
    // desired (3): State { resources (2): { "x": Resource { ready (3) = READY_FALSE = 2 } } }
    0x1a, 9, 0x12, 7, 0x0a, 1, b'x', 0x12, 2, 0x18, 2,
    // input (4): Struct { fields (1): { "a": Value { string_value (3) = "b" } } }
    0x22, 10, 0x0a, 8, 0x0a, 1, b'a', 0x12, 3, 0x1a, 1, b'b',
    // credentials (7): { "c": Credentials { credential_data (1): CredentialData { data (1): { "k": "v" } } } }
    0x3a, 15, 0x0a, 1, b'c', 0x12, 10, 0x0a, 8, 0x0a, 6, 0x0a, 1, b'k', 0x12, 1, b'v',
];

#[test]
fn a_small_request_encodes_to_the_bytes_the_proto_field_numbers_give() {
    assert_eq!(small_request().encode_to_vec(), SMALL_REQUEST);
}

#[test]
fn the_golden_request_bytes_decode_to_the_same_request() {
    assert_eq!(decode_request(SMALL_REQUEST).unwrap(), small_request());
}

#[rustfmt::skip]
const SMALL_RESPONSE: &[u8] = &[
    // meta (1): ResponseMeta { ttl (2): Duration { seconds (1) = 60 } }
    0x0a, 4, 0x12, 2, 0x08, 60,
    // results (3): Result { severity (1) = SEVERITY_FATAL = 1, message (2) = "m", target (4) = TARGET_COMPOSITE = 1 }
    0x1a, 7, 0x08, 1, 0x12, 1, b'm', 0x20, 1,
    // conditions (6): Condition { type (1) = "R", status (2) = STATUS_CONDITION_TRUE = 2, reason (3) = "A" }
    0x32, 8, 0x0a, 1, b'R', 0x10, 2, 0x1a, 1, b'A',
];

fn small_response() -> RunFunctionResponse {
    RunFunctionResponse {
        meta: Some(ResponseMeta {
            tag: String::new(),
            ttl: Some(prost_types::Duration {
                seconds: 60,
                nanos: 0,
            }),
        }),
        results: vec![Result {
            severity: Severity::Fatal as i32,
            message: "m".into(),
            reason: None,
            target: Some(Target::Composite as i32),
        }],
        conditions: vec![Condition {
            r#type: "R".into(),
            status: Status::ConditionTrue as i32,
            reason: "A".into(),
            message: None,
            target: None,
        }],
        ..Default::default()
    }
}

#[test]
fn a_small_response_encodes_to_the_bytes_the_proto_field_numbers_give() {
    assert_eq!(small_response().encode_to_vec(), SMALL_RESPONSE);
    assert_eq!(decode_response(SMALL_RESPONSE).unwrap(), small_response());
}

#[test]
fn a_full_response_survives_an_encode_decode_round_trip() {
    let response = RunFunctionResponse {
        meta: Some(ResponseMeta {
            tag: "tag".into(),
            ttl: Some(prost_types::Duration {
                seconds: 30,
                nanos: 5,
            }),
        }),
        desired: Some(State {
            composite: Some(Resource {
                resource: Some(string_struct("kind", "XBucket")),
                connection_details: BTreeMap::from([("password".into(), vec![0, 255])]),
                ready: Ready::Unspecified as i32,
            }),
            resources: BTreeMap::from([(
                "bucket-0".into(),
                Resource {
                    ready: Ready::True as i32,
                    ..Default::default()
                },
            )]),
        }),
        results: small_response().results,
        context: Some(string_struct("k", "v")),
        requirements: Some(Requirements {
            extra_resources: BTreeMap::new(),
            resources: BTreeMap::from([
                (
                    "by-name".into(),
                    ResourceSelector {
                        api_version: "v1".into(),
                        kind: "ConfigMap".into(),
                        r#match: Some(resource_selector::Match::MatchName("cm".into())),
                        namespace: Some("default".into()),
                    },
                ),
                (
                    "by-labels".into(),
                    ResourceSelector {
                        api_version: "v1".into(),
                        kind: "Secret".into(),
                        r#match: Some(resource_selector::Match::MatchLabels(MatchLabels {
                            labels: BTreeMap::from([("app".into(), "x".into())]),
                        })),
                        namespace: None,
                    },
                ),
            ]),
            schemas: BTreeMap::from([(
                "s".into(),
                SchemaSelector {
                    api_version: "example.org/v1".into(),
                    kind: "XBucket".into(),
                },
            )]),
        }),
        conditions: small_response().conditions,
        output: Some(string_struct("out", "put")),
    };
    let bytes = response.encode_to_vec();
    assert_eq!(decode_response(&bytes).unwrap(), response);
}

#[test]
fn a_request_with_schemas_and_required_resources_survives_a_round_trip() {
    let mut request = small_request();
    request.context = Some(string_struct("ctx", "1"));
    request.required_resources = BTreeMap::from([(
        "r".into(),
        Resources {
            items: vec![Resource {
                ready: Ready::True as i32,
                ..Default::default()
            }],
        },
    )]);
    request.extra_resources = request.required_resources.clone();
    request.required_schemas = BTreeMap::from([
        (
            "with".into(),
            Schema {
                openapi_v3: Some(string_struct("type", "object")),
            },
        ),
        ("without".into(), Schema { openapi_v3: None }),
    ]);
    let bytes = request.encode_to_vec();
    assert_eq!(decode_request(&bytes).unwrap(), request);
}

#[test]
fn garbage_bytes_are_a_decode_error_not_a_panic() {
    // A LEN field (1) that claims 100 bytes with 1 left, an invalid wire type (7), and a
    // varint that never ends.
    for garbage in [
        &[0x0a, 100, 0][..],
        &[0x0f][..],
        &[0x08, 0xff, 0xff, 0xff][..],
    ] {
        assert!(decode_response(garbage).is_err(), "{garbage:?} decoded");
    }
}
