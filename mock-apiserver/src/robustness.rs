//! Property tests: the parsers that see client input never panic, whatever the input.

mod properties {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use crate::{clock, jsonpath, patch, protobuf, query, route, selector};

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "[a-z/~0-9-]{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map("[a-z]{1,3}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn operation() -> impl Strategy<Value = Value> {
        (
            prop::sample::select(vec!["add", "remove", "replace", "move", "copy", "test", "bogus"]),
            "(/[a-z0-9~-]{0,3}){0,3}",
            "(/[a-z0-9~-]{0,3}){0,3}",
            json_value(),
        )
            .prop_map(|(op, path, from, value)| json!({"op": op, "path": path, "from": from, "value": value}))
    }

    proptest! {
        #[test]
        fn selectors_never_panic_and_parsed_ones_evaluate(text in "\\PC{0,40}") {
            if let Ok(labels) = selector::LabelSelector::parse(&text) {
                let _ = labels.matches(|_| None);
                let _ = labels.matches(|_| Some("x"));
            }
            if let Ok(fields) = selector::FieldSelector::parse(&text) {
                let _ = fields.matches(|_| None);
            }
        }

        #[test]
        fn queries_paths_and_timestamps_never_panic(text in "\\PC{0,60}") {
            let _ = query::Query::parse(&text);
            let _ = route::parse(&text);
            let _ = clock::parse_rfc3339(&text);
            let _ = jsonpath::evaluate(&json!({"a": [{"b": 1}]}), &text);
        }

        #[test]
        fn json_patches_never_panic(mut doc in json_value(), ops in prop::collection::vec(operation(), 0..6)) {
            let _ = patch::json_patch(&mut doc, &Value::from(ops));
        }

        #[test]
        fn merge_patches_are_idempotent(mut doc in json_value(), patch in json_value()) {
            patch::merge_patch(&mut doc, &patch);
            let once = doc.clone();
            patch::merge_patch(&mut doc, &patch);
            prop_assert_eq!(doc, once);
        }

        #[test]
        fn protobuf_bodies_never_panic(mut bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            prop_assert!(protobuf::decode(&bytes).is_err(), "no magic, no object");
            bytes.splice(0..0, b"k8s\0".iter().copied());
            if let Ok(object) = protobuf::decode(&bytes) {
                prop_assert!(object["apiVersion"].is_string() && object["kind"].is_string());
            }
        }
    }
}
