//! Per-kind defaulting on writes: what the real server's strategies add.

use serde_json::{Value, json};

use crate::clock::Clock;
use crate::crd;
use crate::registry::ResourceKind;

/// A validation failure: the field and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError(pub &'static str, pub String);

/// Defaults applied when an object is created.
pub fn on_create(kind: &ResourceKind, value: &mut Value, _clock: &Clock) -> Result<(), FieldError> {
    match (kind.group.as_str(), kind.plural.as_str()) {
        ("", "namespaces") => {
            value["status"] = json!({"phase": "Active"});
            Ok(())
        }
        _ => on_update(kind, value),
    }
}

/// Defaults applied on every create and update.
pub fn on_update(kind: &ResourceKind, value: &mut Value) -> Result<(), FieldError> {
    match (kind.group.as_str(), kind.plural.as_str()) {
        ("", "secrets") => {
            fold_string_data(value);
            Ok(())
        }
        ("apiextensions.k8s.io", "customresourcedefinitions") => {
            let definition = crd::parse(value).map_err(|e| FieldError(e.field, e.detail))?;
            value["status"] = crd::status(&definition);
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Moves a Secret's `stringData` into `data`, base64-encoded, and defaults `type`.
fn fold_string_data(value: &mut Value) {
    let Some(object) = value.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(strings)) = object.remove("stringData") {
        let data = object.entry("data").or_insert_with(|| json!({}));
        if !data.is_object() {
            *data = json!({});
        }
        for (key, text) in strings {
            let encoded = base64(text.as_str().unwrap_or_default().as_bytes());
            data[key.as_str()] = json!(encoded);
        }
    }
    object.entry("type").or_insert_with(|| json!("Opaque"));
}

/// Standard base64 with padding (how Go's `encoding/json` writes `[]byte`).
pub fn base64(input: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(input)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    #[test]
    fn base64_pads_like_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"token-1"), "dG9rZW4tMQ==");
    }

    #[test]
    fn secret_string_data_becomes_encoded_data() {
        let kind = Registry::with_builtins().get("", "v1", "secrets").unwrap();
        let mut value = json!({"metadata": {"name": "s"}, "stringData": {"token": "abc"}});
        on_update(&kind, &mut value).unwrap();
        assert_eq!(
            value,
            json!({"metadata": {"name": "s"}, "data": {"token": "YWJj"}, "type": "Opaque"})
        );
    }
}
