//! JSON for floats that may be NaN ("none") or infinite ("no bound"): NaN is `null`, ±∞ are
//! the strings `"inf"` and `"-inf"`; finite values are numbers.

use serde::{Deserialize, Deserializer, Serializer};

/// NaN, the default of a float a document may lack.
#[must_use]
pub fn nan() -> f64 {
    f64::NAN
}

/// Serializes one float.
///
/// # Errors
/// The serializer's.
pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_nan() {
        s.serialize_none()
    } else if v.is_infinite() {
        s.serialize_str(if *v > 0.0 { "inf" } else { "-inf" })
    } else {
        s.serialize_f64(*v)
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Repr {
    Num(f64),
    Text(String),
    Null(()),
}

/// Deserializes one float.
///
/// # Errors
/// A string other than `inf` or `-inf`.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    match Option::<Repr>::deserialize(d)? {
        None | Some(Repr::Null(())) => Ok(f64::NAN),
        Some(Repr::Num(v)) => Ok(v),
        Some(Repr::Text(t)) => match t.as_str() {
            "inf" => Ok(f64::INFINITY),
            "-inf" => Ok(f64::NEG_INFINITY),
            other => Err(serde::de::Error::custom(format!(
                "expected a number, null, \"inf\" or \"-inf\", got {other:?}"
            ))),
        },
    }
}
