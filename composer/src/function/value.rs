//! Protobuf's well-known types to and from Rust's: `google.protobuf.Struct` to and from JSON
//! (resources, inputs and contexts travel as `Struct`s and are edited as
//! [`serde_json::Value`]s), and `google.protobuf.Duration` from a `std` duration.
//!
//! # Semantics
//! A `Struct` number is a `f64`, as in protojson: a JSON integer becomes a `f64`, and a
//! `f64` with no fraction within ±2^53 becomes a JSON integer again, so a round trip keeps
//! `3` as `3` (protojson prints it so too). A non-finite number, which JSON cannot hold,
//! becomes `null`.

use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Value};
use serde_json::{Map, Number, Value as Json};

/// The largest integer a `f64` holds exactly, 2^53.
const EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

/// Converts a JSON object to a `Struct`.
#[must_use]
pub fn to_struct(object: &Map<String, Json>) -> super::proto::Struct {
    super::proto::Struct(to_prost_struct(object))
}

fn to_prost_struct(object: &Map<String, Json>) -> Struct {
    Struct {
        fields: object
            .iter()
            .map(|(k, v)| (k.clone(), to_value(v)))
            .collect(),
    }
}

/// Converts a JSON value to a `google.protobuf.Value`.
#[must_use]
pub fn to_value(json: &Json) -> Value {
    let kind = match json {
        Json::Null => Kind::NullValue(0),
        Json::Bool(b) => Kind::BoolValue(*b),
        Json::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or(f64::NAN)),
        Json::String(s) => Kind::StringValue(s.clone()),
        Json::Array(items) => Kind::ListValue(ListValue {
            values: items.iter().map(to_value).collect(),
        }),
        Json::Object(object) => Kind::StructValue(to_prost_struct(object)),
    };
    Value { kind: Some(kind) }
}

/// Converts a `Struct` to a JSON object.
#[must_use]
pub fn from_struct(s: &super::proto::Struct) -> Map<String, Json> {
    from_prost_struct(s)
}

fn from_prost_struct(s: &Struct) -> Map<String, Json> {
    s.fields
        .iter()
        .map(|(k, v)| (k.clone(), from_value(v)))
        .collect()
}

/// Converts a `google.protobuf.Value` to JSON; a value with no kind is `null`.
#[must_use]
pub fn from_value(value: &Value) -> Json {
    match &value.kind {
        None | Some(Kind::NullValue(_)) => Json::Null,
        Some(Kind::BoolValue(b)) => Json::Bool(*b),
        Some(Kind::NumberValue(n)) => number(*n),
        Some(Kind::StringValue(s)) => Json::String(s.clone()),
        Some(Kind::ListValue(list)) => Json::Array(list.values.iter().map(from_value).collect()),
        Some(Kind::StructValue(s)) => Json::Object(from_prost_struct(s)),
    }
}

/// A `google.protobuf.Duration` from a `std` duration (saturating at `i64::MAX` seconds).
#[must_use]
pub fn to_duration(d: std::time::Duration) -> prost_types::Duration {
    prost_types::Duration {
        seconds: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        nanos: i32::try_from(d.subsec_nanos()).unwrap_or(0),
    }
}

#[allow(clippy::cast_possible_truncation)] // checked: integral and within ±2^53
fn number(n: f64) -> Json {
    if n.fract() == 0.0 && n.abs() <= EXACT_INTEGER {
        Json::Number(Number::from(n as i64))
    } else {
        Number::from_f64(n).map_or(Json::Null, Json::Number)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_survives_a_round_trip_through_a_struct() {
        let json = json!({
            "apiVersion": "example.org/v1",
            "spec": {"count": 3, "ratio": 0.5, "on": true, "none": null, "tags": ["a", 1, {"b": []}]},
        });
        let object = json.as_object().unwrap();
        assert_eq!(from_struct(&to_struct(object)), *object);
    }

    #[test]
    fn a_number_is_a_double_on_the_wire() {
        assert_eq!(to_value(&json!(7)).kind, Some(Kind::NumberValue(7.0)));
    }

    #[test]
    fn a_number_that_json_cannot_hold_becomes_null() {
        let nan = Value {
            kind: Some(Kind::NumberValue(f64::NAN)),
        };
        assert_eq!(from_value(&nan), Json::Null);
        let big = Value {
            kind: Some(Kind::NumberValue(1e300)),
        };
        assert_eq!(from_value(&big), json!(1e300));
    }
}
