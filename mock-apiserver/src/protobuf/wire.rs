//! The pieces every message shares: the `message!` macro that declares a message once for
//! prost (the wire) and serde (its JSON form), and the types whose JSON form is not a
//! plain object (times, quantities, int-or-string, maps, raw JSON).
//!
//! # Semantics
//! Every field is proto2 `optional` for prost, so a decoded message remembers exactly
//! which fields were on the wire and re-encodes to the same length: a body whose
//! re-encoding is shorter carried fields these messages do not know, and is refused rather
//! than silently cut. A field Go declares without a pointer (`req`) is always written by
//! Go; [`GoShape::fill_go_defaults`] adds those before encoding, so an answer has the
//! fields, in the order, that the real server's has. In JSON a `req` field that holds its
//! zero value is omitted (Go's `omitempty`); an `opt` field (a Go pointer) is written
//! whenever it is set.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// What a message knows about its Go original.
pub trait GoShape {
    /// Sets every field Go always writes (a non-pointer field) that is unset, in this
    /// message and the messages it holds.
    fn fill_go_defaults(&mut self);

    /// Whether the value is left out of JSON although set (a zero time, which Go writes as
    /// `null`).
    fn omit_in_json(&self) -> bool {
        false
    }
}

/// Whether an optional `req` field is unset or holds its zero value (Go's `omitempty`).
pub fn is_empty<T: Default + PartialEq>(value: &Option<T>) -> bool {
    value.as_ref().is_none_or(|v| *v == T::default())
}

/// Whether a message field is unset or its value is left out of JSON.
pub fn is_absent<T: GoShape>(value: &Option<T>) -> bool {
    value.as_ref().is_none_or(GoShape::omit_in_json)
}

/// Deserializes a value that may be JSON `null` (Go reads `null` as the zero value).
pub fn nullable<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Option::<T>::deserialize(deserializer).map(Option::unwrap_or_default)
}

/// The Rust type of a protobuf scalar.
macro_rules! scalar {
    (string) => {
        String
    };
    (int32) => {
        i32
    };
    (int64) => {
        i64
    };
    (bool) => {
        bool
    };
}
pub(crate) use scalar;

/// Declares a message: `field: LABEL KIND = TAG "jsonName";` where LABEL is `opt` (kept
/// whenever set, as a Go pointer is), `req` (a Go value with `omitempty`: always on Go's
/// wire, left out of JSON at its zero value) or `rep`, and KIND is a scalar (`string`,
/// `int32`, `int64`, `bool`), `(Message)`, or `map(Entry)`; `field: inline (Message) = TAG;`
/// is a Go embedded struct, whose fields JSON writes in the outer object.
macro_rules! message {
    ($(#[$meta:meta])* $name:ident { $($body:tt)* }) => {
        $crate::protobuf::wire::message!(@munch [$(#[$meta])* $name] [] [] $($body)*);
    };
    (@munch [$(#[$meta:meta])* $name:ident] [$($fields:tt)*] [$($fill:tt)*]) => {
        $(#[$meta])*
        #[derive(Clone, PartialEq, ::prost::Message, ::serde::Serialize, ::serde::Deserialize)]
        pub struct $name { $($fields)* }

        impl $crate::protobuf::wire::GoShape for $name {
            fn fill_go_defaults(&mut self) {
                $($crate::protobuf::wire::fill!(self $fill);)*
            }
        }
    };
    (@munch $head:tt [$($fields:tt)*] [$($fill:tt)*]
        $f:ident : opt $k:ident = $t:tt $j:tt; $($rest:tt)*) => {
        $crate::protobuf::wire::message!(@munch $head [$($fields)*
            #[prost($k, optional, tag = $t)]
            #[serde(rename = $j, default, skip_serializing_if = "Option::is_none")]
            pub $f: Option<$crate::protobuf::wire::scalar!($k)>,
        ] [$($fill)*] $($rest)*);
    };
    (@munch $head:tt [$($fields:tt)*] [$($fill:tt)*]
        $f:ident : req $k:ident = $t:tt $j:tt; $($rest:tt)*) => {
        $crate::protobuf::wire::message!(@munch $head [$($fields)*
            #[prost($k, optional, tag = $t)]
            #[serde(rename = $j, default, skip_serializing_if = "crate::protobuf::wire::is_empty")]
            pub $f: Option<$crate::protobuf::wire::scalar!($k)>,
        ] [$($fill)* (scalar $f)] $($rest)*);
    };
    (@munch $head:tt [$($fields:tt)*] [$($fill:tt)*]
        $f:ident : rep string = $t:tt $j:tt; $($rest:tt)*) => {
        $crate::protobuf::wire::message!(@munch $head [$($fields)*
            #[prost(string, repeated, tag = $t)]
            #[serde(rename = $j, default, deserialize_with = "crate::protobuf::wire::nullable",
                skip_serializing_if = "Vec::is_empty")]
            pub $f: Vec<String>,
        ] [$($fill)*] $($rest)*);
    };
    (@munch $head:tt [$($fields:tt)*] [$($fill:tt)*]
        $f:ident : rep $k:ident = $t:tt $j:tt; $($rest:tt)*) => {
        $crate::protobuf::wire::message!(@munch $head [$($fields)*
            #[prost($k, repeated, packed = "false", tag = $t)]
            #[serde(rename = $j, default, deserialize_with = "crate::protobuf::wire::nullable",
                skip_serializing_if = "Vec::is_empty")]
            pub $f: Vec<$crate::protobuf::wire::scalar!($k)>,
        ] [$($fill)*] $($rest)*);
    };
    (@munch $head:tt [$($fields:tt)*] [$($fill:tt)*]
        $f:ident : opt ($m:ty) = $t:tt $j:tt; $($rest:tt)*) => {
        $crate::protobuf::wire::message!(@munch $head [$($fields)*
            #[prost(message, optional, tag = $t)]
            #[serde(rename = $j, default, skip_serializing_if = "crate::protobuf::wire::is_absent")]
            pub $f: Option<$m>,
        ] [$($fill)* (opt $f)] $($rest)*);
    };
    (@munch $head:tt [$($fields:tt)*] [$($fill:tt)*]
        $f:ident : req ($m:ty) = $t:tt $j:tt; $($rest:tt)*) => {
        $crate::protobuf::wire::message!(@munch $head [$($fields)*
            #[prost(message, optional, tag = $t)]
            #[serde(rename = $j, default, skip_serializing_if = "crate::protobuf::wire::is_absent")]
            pub $f: Option<$m>,
        ] [$($fill)* (req $f)] $($rest)*);
    };
    (@munch $head:tt [$($fields:tt)*] [$($fill:tt)*]
        $f:ident : rep ($m:ty) = $t:tt $j:tt; $($rest:tt)*) => {
        $crate::protobuf::wire::message!(@munch $head [$($fields)*
            #[prost(message, repeated, tag = $t)]
            #[serde(rename = $j, default, deserialize_with = "crate::protobuf::wire::nullable",
                skip_serializing_if = "Vec::is_empty")]
            pub $f: Vec<$m>,
        ] [$($fill)* (rep $f)] $($rest)*);
    };
    (@munch $head:tt [$($fields:tt)*] [$($fill:tt)*]
        $f:ident : inline ($m:ty) = $t:tt; $($rest:tt)*) => {
        $crate::protobuf::wire::message!(@munch $head [$($fields)*
            #[prost(message, optional, tag = $t)]
            #[serde(flatten)]
            pub $f: Option<$m>,
        ] [$($fill)* (req $f)] $($rest)*);
    };
    (@munch $head:tt [$($fields:tt)*] [$($fill:tt)*]
        $f:ident : map ($m:ty) = $t:tt $j:tt; $($rest:tt)*) => {
        $crate::protobuf::wire::message!(@munch $head [$($fields)*
            #[prost(message, repeated, tag = $t)]
            #[serde(rename = $j, default, with = "crate::protobuf::wire::entries",
                skip_serializing_if = "Vec::is_empty")]
            pub $f: Vec<$m>,
        ] [$($fill)* (rep $f)] $($rest)*);
    };
}
pub(crate) use message;

/// One step of [`GoShape::fill_go_defaults`] for a field declared with [`message!`].
macro_rules! fill {
    ($s:ident (scalar $f:ident)) => {
        $s.$f.get_or_insert_with(Default::default);
    };
    ($s:ident (opt $f:ident)) => {
        if let Some(m) = &mut $s.$f {
            $crate::protobuf::wire::GoShape::fill_go_defaults(m);
        }
    };
    ($s:ident (req $f:ident)) => {
        $crate::protobuf::wire::GoShape::fill_go_defaults(
            $s.$f.get_or_insert_with(Default::default),
        );
    };
    ($s:ident (rep $f:ident)) => {
        for m in &mut $s.$f {
            $crate::protobuf::wire::GoShape::fill_go_defaults(m);
        }
    };
}
pub(crate) use fill;

/// A map entry: protobuf writes a `map<string, V>` as repeated `{key = 1; value = 2}`
/// messages, JSON as an object.
pub trait MapEntry: Default {
    /// The value's JSON form.
    type Value: Serialize + DeserializeOwned;
    /// The key.
    fn key(&self) -> &str;
    /// The value, as JSON sees it.
    fn value(&self) -> Self::Value;
    /// An entry.
    fn new(key: String, value: Self::Value) -> Self;
}

/// Serde for `Vec<MapEntry>` as a JSON object (keys sorted, as Go writes maps).
pub mod entries {
    use super::*;

    /// Writes the entries as an object.
    pub fn serialize<E: MapEntry, S: Serializer>(
        entries: &[E],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let map: BTreeMap<&str, E::Value> = entries.iter().map(|e| (e.key(), e.value())).collect();
        map.serialize(serializer)
    }

    /// Reads an object (or `null`) into entries, sorted by key.
    pub fn deserialize<'de, E: MapEntry, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<E>, D::Error> {
        let map: Option<BTreeMap<String, Option<E::Value>>> = Option::deserialize(deserializer)?;
        Ok(map
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| E::new(k, v)))
            .collect())
    }
}

/// `map<string, string>` entry.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StringEntry {
    #[prost(string, optional, tag = 1)]
    key: Option<String>,
    #[prost(string, optional, tag = 2)]
    value: Option<String>,
}

impl MapEntry for StringEntry {
    type Value = String;
    fn key(&self) -> &str {
        self.key.as_deref().unwrap_or_default()
    }
    fn value(&self) -> String {
        self.value.clone().unwrap_or_default()
    }
    fn new(key: String, value: String) -> Self {
        Self {
            key: Some(key),
            value: Some(value),
        }
    }
}

impl GoShape for StringEntry {
    fn fill_go_defaults(&mut self) {
        self.key.get_or_insert_with(String::new);
        self.value.get_or_insert_with(String::new);
    }
}

/// `map<string, bytes>` entry; the JSON value is base64.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BytesEntry {
    #[prost(string, optional, tag = 1)]
    key: Option<String>,
    #[prost(bytes = "vec", optional, tag = 2)]
    value: Option<Vec<u8>>,
}

impl MapEntry for BytesEntry {
    type Value = Base64;
    fn key(&self) -> &str {
        self.key.as_deref().unwrap_or_default()
    }
    fn value(&self) -> Base64 {
        Base64(self.value.clone().unwrap_or_default())
    }
    fn new(key: String, value: Base64) -> Self {
        Self {
            key: Some(key),
            value: Some(value.0),
        }
    }
}

impl GoShape for BytesEntry {
    fn fill_go_defaults(&mut self) {
        self.key.get_or_insert_with(String::new);
        self.value.get_or_insert_with(Vec::new);
    }
}

/// `map<string, Quantity>` entry (a `ResourceList`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct QuantityEntry {
    #[prost(string, optional, tag = 1)]
    key: Option<String>,
    #[prost(message, optional, tag = 2)]
    value: Option<Quantity>,
}

impl MapEntry for QuantityEntry {
    type Value = Quantity;
    fn key(&self) -> &str {
        self.key.as_deref().unwrap_or_default()
    }
    fn value(&self) -> Quantity {
        self.value.clone().unwrap_or_default()
    }
    fn new(key: String, value: Quantity) -> Self {
        Self {
            key: Some(key),
            value: Some(value),
        }
    }
}

impl GoShape for QuantityEntry {
    fn fill_go_defaults(&mut self) {
        self.key.get_or_insert_with(String::new);
        self.value
            .get_or_insert_with(Default::default)
            .fill_go_defaults();
    }
}

/// Bytes whose JSON form is standard base64 (Go's `[]byte`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Base64(pub Vec<u8>);

impl Serialize for Base64 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use base64::Engine as _;
        serializer.serialize_str(&base64::engine::general_purpose::STANDARD.encode(&self.0))
    }
}

impl<'de> Deserialize<'de> for Base64 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use base64::Engine as _;
        let text = String::deserialize(deserializer)?;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map(Base64)
            .map_err(serde::de::Error::custom)
    }
}

macro_rules! time_type {
    ($(#[$meta:meta])* $name:ident, $digits:expr) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, prost::Message)]
        pub struct $name {
            #[prost(int64, optional, tag = 1)]
            seconds: Option<i64>,
            #[prost(int32, optional, tag = 2)]
            nanos: Option<i32>,
        }

        impl $name {
            fn is_zero(&self) -> bool {
                self.seconds.unwrap_or(0) == 0 && self.nanos.unwrap_or(0) == 0
            }

            fn timestamp(&self) -> Option<Timestamp> {
                Timestamp::new(self.seconds.unwrap_or(0), self.nanos.unwrap_or(0)).ok()
            }
        }

        impl GoShape for $name {
            /// Go writes a zero time as an empty message, any other with both fields.
            fn fill_go_defaults(&mut self) {
                if self.is_zero() {
                    *self = Self::default();
                } else {
                    self.seconds.get_or_insert(0);
                    self.nanos.get_or_insert(0);
                }
            }

            fn omit_in_json(&self) -> bool {
                self.is_zero()
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self.timestamp() {
                    Some(t) if !self.is_zero() => {
                        let t = if $digits == 0 {
                            Timestamp::from_second(t.as_second()).unwrap_or(t)
                        } else {
                            t
                        };
                        serializer.serialize_str(&format!("{:.*}", $digits, t))
                    }
                    _ => serializer.serialize_none(),
                }
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let Some(text) = Option::<String>::deserialize(deserializer)? else {
                    return Ok(Self::default());
                };
                let t: Timestamp = text.parse().map_err(serde::de::Error::custom)?;
                Ok(Self {
                    seconds: Some(t.as_second()),
                    nanos: Some(t.subsec_nanosecond()),
                })
            }
        }
    };
}

time_type!(
    /// `metav1.Time`: RFC 3339 in whole seconds in JSON.
    Time,
    0
);
time_type!(
    /// `metav1.MicroTime`: RFC 3339 with six fractional digits in JSON.
    MicroTime,
    6
);

/// `resource.Quantity`: a string in JSON (a number is read as its text).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Quantity {
    #[prost(string, optional, tag = 1)]
    string: Option<String>,
}

impl GoShape for Quantity {
    fn fill_go_defaults(&mut self) {
        self.string.get_or_insert_with(String::new);
    }
}

impl Serialize for Quantity {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.string.as_deref().unwrap_or_default())
    }
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = match Value::deserialize(deserializer)? {
            Value::String(s) => s,
            Value::Number(n) => n.to_string(),
            other => {
                return Err(serde::de::Error::custom(format!(
                    "a quantity must be a string or a number, not {other}"
                )));
            }
        };
        Ok(Self { string: Some(text) })
    }
}

/// `intstr.IntOrString`: a number or a string in JSON.
#[derive(Clone, PartialEq, prost::Message)]
pub struct IntOrString {
    #[prost(int64, optional, tag = 1)]
    type_: Option<i64>,
    #[prost(int32, optional, tag = 2)]
    int_val: Option<i32>,
    #[prost(string, optional, tag = 3)]
    str_val: Option<String>,
}

impl GoShape for IntOrString {
    fn fill_go_defaults(&mut self) {
        self.type_.get_or_insert(0);
        self.int_val.get_or_insert(0);
        self.str_val.get_or_insert_with(String::new);
    }
}

impl Serialize for IntOrString {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.type_.unwrap_or(0) == 1 {
            serializer.serialize_str(self.str_val.as_deref().unwrap_or_default())
        } else {
            serializer.serialize_i32(self.int_val.unwrap_or(0))
        }
    }
}

impl<'de> Deserialize<'de> for IntOrString {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(s) => Ok(Self {
                type_: Some(1),
                int_val: Some(0),
                str_val: Some(s),
            }),
            Value::Number(n) => {
                let n = n
                    .as_i64()
                    .and_then(|n| i32::try_from(n).ok())
                    .ok_or_else(|| serde::de::Error::custom("an int-or-string is out of range"))?;
                Ok(Self {
                    type_: Some(0),
                    int_val: Some(n),
                    str_val: Some(String::new()),
                })
            }
            other => Err(serde::de::Error::custom(format!(
                "an int-or-string must be a number or a string, not {other}"
            ))),
        }
    }
}

/// `metav1.FieldsV1`: raw JSON bytes on the wire, the JSON value itself in JSON.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FieldsV1 {
    #[prost(bytes = "vec", optional, tag = 1)]
    raw: Option<Vec<u8>>,
}

impl GoShape for FieldsV1 {
    fn fill_go_defaults(&mut self) {}
}

impl Serialize for FieldsV1 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let raw = self.raw.as_deref().unwrap_or(b"{}");
        let value: Value = serde_json::from_slice(raw).map_err(serde::ser::Error::custom)?;
        value.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for FieldsV1 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let raw = serde_json::to_vec(&value).map_err(serde::de::Error::custom)?;
        Ok(Self { raw: Some(raw) })
    }
}

/// Whether a JSON value is a zero value Go would leave out or read as unset.
fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.values().all(is_zero),
    }
}

/// Whether `back` (an object read into a message and written out again) still has every
/// non-zero value of `original`: a field the message does not know is lost, and so is a
/// value of another shape.
pub fn covers(original: &Value, back: &Value) -> bool {
    match (original, back) {
        (Value::Object(o), Value::Object(b)) => o
            .iter()
            .all(|(k, v)| is_zero(v) || b.get(k).is_some_and(|bv| covers(v, bv))),
        (Value::Object(o), _) => o.values().all(is_zero),
        (Value::Array(o), Value::Array(b)) => {
            o.len() == b.len() && o.iter().zip(b).all(|(ov, bv)| covers(ov, bv))
        }
        (Value::Number(o), Value::Number(b)) => o.as_f64() == b.as_f64(),
        _ if is_zero(original) => true,
        _ => original == back,
    }
}
