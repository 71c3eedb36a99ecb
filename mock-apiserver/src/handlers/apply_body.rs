//! An apply body, read as the API server reads it: YAML (`application/apply-patch+yaml`),
//! of which JSON is a subset. Clients send JSON (kube-rs and client-go marshal the apply
//! configuration to JSON); a JSON object with no repeated key reads the same by either
//! parser, so it is read by the JSON one, many times faster, and anything else (YAML, or
//! JSON with a repeated key, whose handling is the YAML parser's) by the YAML one.

use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Parses the apply body `text`.
///
/// # Errors
/// What the YAML parser says of a body that is not a JSON object with unique keys.
pub(crate) fn parse(text: &str) -> Result<Value, serde_saphyr::Error> {
    if text.trim_start().starts_with('{')
        && let Ok(Unique(value)) = serde_json::from_str::<Unique>(text)
    {
        return Ok(value);
    }
    serde_saphyr::from_str(text)
}

/// A JSON value whose objects repeat no key.
struct Unique(Value);

impl<'de> Deserialize<'de> for Unique {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueVisitor).map(Unique)
    }
}

struct UniqueVisitor;

impl<'de> Visitor<'de> for UniqueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::from(n))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::from(n))
    }

    fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<Value, E> {
        Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number that is not finite"))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Unique(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Unique(value) = map.next_value()?;
            if object.contains_key(&key) {
                return Err(A::Error::custom(format!("the key {key:?} repeats")));
            }
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// JSON values as clients send them: objects, arrays, strings with escapes and
    /// non-ASCII, integers of every size, floats, booleans and null.
    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-1e6f64..1e6).prop_map(|f| Value::from((f * 1000.0).round() / 1000.0)),
            "[ -~]{0,12}".prop_map(Value::String),
            "\\PC{0,8}".prop_map(Value::String),
            Just(Value::String(
                "tab\t\"quote\" back\\slash\nline é ✓ \u{1F600}".to_owned()
            )),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::btree_map("[a-zA-Z0-9./_-]{0,10}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// A JSON object reads the same by the JSON path as by the YAML parser, compact or
        /// pretty.
        #[test]
        fn a_json_object_reads_as_the_yaml_parser_reads_it(
            fields in prop::collection::btree_map("[a-z]{1,8}", json(), 0..6)
        ) {
            let value = Value::Object(fields.into_iter().collect());
            for text in [
                serde_json::to_string(&value).unwrap(),
                serde_json::to_string_pretty(&value).unwrap(),
            ] {
                let yaml: Value = serde_saphyr::from_str(&text).unwrap();
                prop_assert_eq!(&parse(&text).unwrap(), &yaml, "{}", text);
                prop_assert_eq!(&yaml, &value);
            }
        }
    }

    #[test]
    fn a_repeated_key_or_yaml_goes_to_the_yaml_parser() {
        let repeated = r#"{"a": 1, "a": 2}"#;
        assert!(serde_json::from_str::<Unique>(repeated).is_err());
        let yaml: Result<Value, _> = serde_saphyr::from_str(repeated);
        assert_eq!(
            parse(repeated).map_err(|e| e.to_string()),
            yaml.map_err(|e| e.to_string())
        );
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n";
        assert_eq!(
            parse(text).unwrap(),
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
        );
    }
}
