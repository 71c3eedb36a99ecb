use std::collections::BTreeMap;

use proptest::prelude::*;
use prost::Message;
use prost_types::value::Kind;
use prost_types::{ListValue, Value};

use super::Struct;
use crate::function::proto::{Resource, RunFunctionRequest, State};

/// Values of every kind, nested up to four deep, with what prost's map encoding leaves out
/// (an empty key, a value with no kind), negative enum numbers (ten bytes), NaN, and
/// strings long enough for two-byte lengths.
fn value() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        Just(None),
        any::<i32>().prop_map(|n| Some(Kind::NullValue(n))),
        any::<f64>().prop_map(|x| Some(Kind::NumberValue(x))),
        ".{0,3}".prop_map(|s| Some(Kind::StringValue(s))),
        "[a-z]{120,140}".prop_map(|s| Some(Kind::StringValue(s))),
        any::<bool>().prop_map(|b| Some(Kind::BoolValue(b))),
    ]
    .prop_map(|kind| Value { kind });
    scalar.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::btree_map(".{0,2}", inner.clone(), 0..6).prop_map(|fields| {
                Value {
                    kind: Some(Kind::StructValue(prost_types::Struct { fields })),
                }
            }),
            prop::collection::vec(inner, 0..6).prop_map(|values| Value {
                kind: Some(Kind::ListValue(ListValue { values })),
            }),
        ]
    })
}

fn structs() -> impl Strategy<Value = prost_types::Struct> {
    prop::collection::btree_map(".{0,3}", value(), 0..8)
        .prop_map(|fields| prost_types::Struct { fields })
}

proptest! {
    #[test]
    fn the_bytes_are_prosts(s in structs()) {
        let ours = Struct(s.clone());
        prop_assert_eq!(ours.encoded_len(), s.encoded_len());
        prop_assert_eq!(ours.encode_to_vec(), s.encode_to_vec());
        // As a field of a message, where prost's derive asks for the length first.
        let mut nested_ours = Vec::new();
        prost::encoding::message::encode(5, &ours, &mut nested_ours);
        let mut nested_prost = Vec::new();
        prost::encoding::message::encode(5, &s, &mut nested_prost);
        prop_assert_eq!(nested_ours, nested_prost);
    }

    #[test]
    fn decoding_reads_what_it_wrote(s in structs()) {
        let bytes = Struct(s.clone()).encode_to_vec();
        let back = Struct::decode(bytes.as_slice()).expect("decodes");
        // NaN is not equal to itself: compare the bytes of the decoded value instead.
        prop_assert_eq!(back.encode_to_vec(), bytes);
    }
}

/// A resource six levels deep, as a request's observed state carries it: the request's bytes
/// are those of the same request with prost's own `Struct`.
#[test]
fn a_request_with_a_deep_resource_encodes_as_prost_would() {
    let leaf = Value {
        kind: Some(Kind::StringValue("eu-west-1".into())),
    };
    let mut value = leaf;
    for level in 0..6 {
        value = Value {
            kind: Some(Kind::StructValue(prost_types::Struct {
                fields: BTreeMap::from([
                    (format!("level{level}"), value),
                    (
                        "n".into(),
                        Value {
                            kind: Some(Kind::NumberValue(f64::from(level))),
                        },
                    ),
                ]),
            })),
        };
    }
    let Some(Kind::StructValue(object)) = value.kind else {
        unreachable!()
    };
    let request = RunFunctionRequest {
        observed: Some(State {
            composite: Some(Resource {
                resource: Some(Struct(object.clone())),
                ..Default::default()
            }),
            resources: BTreeMap::new(),
        }),
        ..Default::default()
    };
    // The same message with prost's Struct, field by field: State (tag 2) holds composite
    // (tag 1), a Resource whose resource is tag 1.
    let mut resource = Vec::new();
    prost::encoding::message::encode(1, &object, &mut resource);
    let mut composite = Vec::new();
    prost::encoding::bytes::encode(1, &resource, &mut composite);
    let mut expected = Vec::new();
    prost::encoding::bytes::encode(2, &composite, &mut expected);
    assert_eq!(request.encode_to_vec(), expected);
}
