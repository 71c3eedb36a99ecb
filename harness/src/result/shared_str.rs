//! Serde for `Arc<str>` (one allocation shared by many values, such as a cloud operation's
//! name across its calls), as a plain string, without serde's `rc` feature.

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serializer};

/// Writes the string.
///
/// # Errors
/// The serializer's.
pub fn serialize<S: Serializer>(value: &Arc<str>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(value)
}

/// Reads a string.
///
/// # Errors
/// The deserializer's.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<str>, D::Error> {
    String::deserialize(d).map(Arc::from)
}

/// The same for `Option<Arc<str>>`.
pub mod option {
    use std::sync::Arc;

    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the string, or null.
    ///
    /// # Errors
    /// The serializer's.
    pub fn serialize<S: Serializer>(value: &Option<Arc<str>>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(v) => s.serialize_some(&**v),
            None => s.serialize_none(),
        }
    }

    /// Reads a string or null.
    ///
    /// # Errors
    /// The deserializer's.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Arc<str>>, D::Error> {
        Option::<String>::deserialize(d).map(|o| o.map(Arc::from))
    }
}
