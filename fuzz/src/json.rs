//! Small JSON values whose strings and keys come from a vocabulary.

use arbitrary::Arbitrary;

use crate::pick::{Pick, Vocabulary};

/// A JSON value with strings and keys drawn from `V`.
#[derive(Arbitrary, Debug, Clone)]
pub enum Json<V: Vocabulary> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Pick<V>),
    Array(Vec<Json<V>>),
    Object(Vec<(Pick<V>, Json<V>)>),
}

impl<V: Vocabulary> Json<V> {
    /// As a `serde_json::Value` (a non-finite float becomes null).
    #[must_use]
    pub fn value(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::from(*b),
            Json::Int(i) => Value::from(*i),
            Json::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Json::Str(w) => Value::from(w.as_str()),
            Json::Array(items) => Value::Array(items.iter().map(Json::value).collect()),
            Json::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(k, v)| (k.as_str().to_owned(), v.value()))
                    .collect(),
            ),
        }
    }
}
