//! Our hand-written messages against the protobuf code crossplane-function-sdk-python
//! generated from the same proto: every field, both ways, byte for byte.

use std::collections::BTreeMap;
use std::process::Command;

use composer::function::proto::{
    Capability, Condition, CredentialData, Credentials, MatchLabels, Ready, Requirements, Resource,
    ResourceSelector, Resources, ResponseMeta, Result as FnResult, RunFunctionRequest,
    RunFunctionResponse, Schema, SchemaSelector, Severity, State, Status, Target, credentials,
    resource_selector,
};
use composer::function::value::to_struct;
use composer::function::{decode_request, decode_response};
use prost::Message;
use serde_json::{Value, json};

use crate::python::sdk_installed;
use crate::support::object;

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/functions/encode_messages.py"
);

fn s(v: Value) -> composer::function::proto::Struct {
    to_struct(&object(v))
}

fn resource(v: Value, ready: Ready) -> Resource {
    Resource {
        resource: Some(s(v)),
        connection_details: BTreeMap::from([("password".to_owned(), vec![0, 255])]),
        ready: ready as i32,
    }
}

/// The request `encode_messages.py` builds.
fn request() -> RunFunctionRequest {
    RunFunctionRequest {
        meta: Some(composer::function::proto::RequestMeta {
            tag: "tag".into(),
            capabilities: composer::function::pipeline::CAPABILITIES
                .iter()
                .map(|c| *c as i32)
                .collect(),
        }),
        observed: Some(State {
            composite: Some(resource(
                json!({"kind": "XR", "spec": {"n": 3, "on": true, "list": ["a", null]}}),
                Ready::Unspecified,
            )),
            resources: BTreeMap::from([(
                "a".to_owned(),
                resource(json!({"kind": "A"}), Ready::True),
            )]),
        }),
        desired: Some(State {
            composite: None,
            resources: BTreeMap::from([(
                "b".to_owned(),
                resource(json!({"kind": "B"}), Ready::False),
            )]),
        }),
        input: Some(s(json!({"apiVersion": "x/v1", "ratio": 0.5}))),
        context: Some(s(json!({"k": "v"}))),
        extra_resources: BTreeMap::from([(
            "old".to_owned(),
            Resources {
                items: vec![resource(json!({"kind": "O"}), Ready::True)],
            },
        )]),
        credentials: BTreeMap::from([(
            "c".to_owned(),
            Credentials {
                source: Some(credentials::Source::CredentialData(CredentialData {
                    data: BTreeMap::from([("key".to_owned(), b"secret".to_vec())]),
                })),
            },
        )]),
        required_resources: BTreeMap::from([(
            "r".to_owned(),
            Resources {
                items: vec![resource(json!({"kind": "R"}), Ready::False)],
            },
        )]),
        required_schemas: BTreeMap::from([(
            "s".to_owned(),
            Schema {
                openapi_v3: Some(s(json!({"type": "object"}))),
            },
        )]),
    }
}

/// The response `encode_messages.py` builds.
fn response() -> RunFunctionResponse {
    let result = |severity: Severity,
                  message: &str,
                  reason: Option<&str>,
                  target: Option<Target>| FnResult {
        severity: severity as i32,
        message: message.into(),
        reason: reason.map(Into::into),
        target: target.map(|t| t as i32),
    };
    RunFunctionResponse {
        meta: Some(ResponseMeta {
            tag: "tag".into(),
            ttl: Some(prost_types::Duration {
                seconds: 90,
                nanos: 5,
            }),
        }),
        desired: Some(State {
            composite: None,
            resources: BTreeMap::from([(
                "b".to_owned(),
                resource(json!({"kind": "B"}), Ready::True),
            )]),
        }),
        results: vec![
            result(
                Severity::Fatal,
                "m",
                Some("Why"),
                Some(Target::CompositeAndClaim),
            ),
            result(Severity::Warning, "w", None, None),
            result(Severity::Normal, "n", None, Some(Target::Composite)),
        ],
        context: Some(s(json!({"k": "v"}))),
        requirements: Some(Requirements {
            extra_resources: BTreeMap::from([(
                "e".to_owned(),
                ResourceSelector {
                    api_version: "v1".into(),
                    kind: "ConfigMap".into(),
                    r#match: Some(resource_selector::Match::MatchName("cm".into())),
                    namespace: None,
                },
            )]),
            resources: BTreeMap::from([(
                "l".to_owned(),
                ResourceSelector {
                    api_version: "v1".into(),
                    kind: "Secret".into(),
                    r#match: Some(resource_selector::Match::MatchLabels(MatchLabels {
                        labels: BTreeMap::from([("app".to_owned(), "x".to_owned())]),
                    })),
                    namespace: Some("ns".into()),
                },
            )]),
            schemas: BTreeMap::from([(
                "s".to_owned(),
                SchemaSelector {
                    api_version: "example.org/v1".into(),
                    kind: "XR".into(),
                },
            )]),
        }),
        conditions: vec![
            Condition {
                r#type: "DatabaseReady".into(),
                status: Status::ConditionFalse as i32,
                reason: "Creating".into(),
                message: Some("wait".into()),
                target: Some(Target::Composite as i32),
            },
            Condition {
                r#type: "Other".into(),
                status: Status::ConditionUnknown as i32,
                reason: "R".into(),
                message: None,
                target: None,
            },
        ],
        output: Some(s(json!({"out": [1, 2]}))),
    }
}

fn hex(line: &str) -> Vec<u8> {
    (0..line.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&line[i..i + 2], 16).expect("hex"))
        .collect()
}

#[test]
fn every_field_matches_the_python_sdks_generated_code_both_ways() {
    if !sdk_installed() {
        return;
    }
    let output = Command::new("python3")
        .arg(SCRIPT)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    let [request_hex, response_hex, empty_hex] = stdout.lines().collect::<Vec<_>>()[..] else {
        panic!("{stdout}")
    };

    let python_request = hex(request_hex);
    assert_eq!(decode_request(&python_request).unwrap(), request());
    assert_eq!(
        request().encode_to_vec(),
        python_request,
        "our encoding equals protobuf's deterministic one"
    );

    let python_response = hex(response_hex);
    assert_eq!(decode_response(&python_response).unwrap(), response());
    assert_eq!(response().encode_to_vec(), python_response);

    // A map entry whose message value is empty: protobuf writes the value's key and a zero
    // length (`12 00`), prost leaves the value out. Both decode to the same message.
    let python_empty = hex(empty_hex);
    let empty = RunFunctionRequest {
        required_schemas: BTreeMap::from([("none".to_owned(), Schema { openapi_v3: None })]),
        ..Default::default()
    };
    assert_eq!(
        python_empty,
        [0x4a, 8, 0x0a, 4, b'n', b'o', b'n', b'e', 0x12, 0]
    );
    assert_eq!(decode_request(&python_empty).unwrap(), empty);
    assert_eq!(
        empty.encode_to_vec(),
        [0x4a, 6, 0x0a, 4, b'n', b'o', b'n', b'e']
    );
    assert_eq!(decode_request(&empty.encode_to_vec()).unwrap(), empty);

    // The capabilities are core's, in its order.
    assert_eq!(request().meta.unwrap().capabilities.len(), 5);
    assert_eq!(Capability::RequiredSchemas as i32, 5);
}
