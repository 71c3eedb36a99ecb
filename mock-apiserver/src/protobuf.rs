//! Decoding the protobuf bodies that kubectl's imperative commands (`kubectl create
//! namespace|configmap|secret|serviceaccount`) send for built-in kinds.
//!
//! The body is the `k8s\0` magic and a `runtime.Unknown` envelope whose `raw` field
//! holds the object. Only the fields those commands set are decoded; the rest of the
//! wire data is skipped.

use serde_json::{Map, Value, json};

use crate::kinds::base64;

/// A body that is not a protobuf object this server can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtobufError {
    /// The bytes are not a valid `k8s\0` envelope.
    #[error("the protobuf body is malformed")]
    Malformed,
    /// The kind has no protobuf schema here.
    #[error("protobuf bodies are not supported for {0}")]
    Unsupported(String),
}

/// How one protobuf field maps to JSON.
#[derive(Debug, Clone, Copy)]
enum Field {
    Str(&'static str),
    Bool(&'static str),
    RepeatedStr(&'static str),
    MapStr(&'static str),
    MapBytes(&'static str),
    Message(&'static str, &'static [(u64, Field)]),
}

const OBJECT_META: &[(u64, Field)] = &[
    (1, Field::Str("name")),
    (2, Field::Str("generateName")),
    (3, Field::Str("namespace")),
    (11, Field::MapStr("labels")),
    (12, Field::MapStr("annotations")),
    (14, Field::RepeatedStr("finalizers")),
];
const CONFIG_MAP: &[(u64, Field)] = &[
    (1, Field::Message("metadata", OBJECT_META)),
    (2, Field::MapStr("data")),
    (3, Field::MapBytes("binaryData")),
    (4, Field::Bool("immutable")),
];
const SECRET: &[(u64, Field)] = &[
    (1, Field::Message("metadata", OBJECT_META)),
    (2, Field::MapBytes("data")),
    (3, Field::Str("type")),
    (4, Field::MapStr("stringData")),
    (5, Field::Bool("immutable")),
];
const NAMESPACE_SPEC: &[(u64, Field)] = &[(1, Field::RepeatedStr("finalizers"))];
const NAMESPACE: &[(u64, Field)] = &[
    (1, Field::Message("metadata", OBJECT_META)),
    (2, Field::Message("spec", NAMESPACE_SPEC)),
];
const SERVICE_ACCOUNT: &[(u64, Field)] = &[
    (1, Field::Message("metadata", OBJECT_META)),
    (3, Field::Bool("automountServiceAccountToken")),
];
const TYPE_META: &[(u64, Field)] = &[(1, Field::Str("apiVersion")), (2, Field::Str("kind"))];

fn schema(api_version: &str, kind: &str) -> Option<&'static [(u64, Field)]> {
    match (api_version, kind) {
        ("v1", "ConfigMap") => Some(CONFIG_MAP),
        ("v1", "Secret") => Some(SECRET),
        ("v1", "Namespace") => Some(NAMESPACE),
        ("v1", "ServiceAccount") => Some(SERVICE_ACCOUNT),
        _ => None,
    }
}

/// Decodes a `k8s\0`-framed protobuf object into its JSON form.
pub fn decode(body: &[u8]) -> Result<Value, ProtobufError> {
    let envelope = body
        .strip_prefix(b"k8s\0")
        .ok_or(ProtobufError::Malformed)?;
    let mut type_meta = Map::new();
    let mut raw: &[u8] = &[];
    for item in Reader(envelope) {
        match item? {
            (1, Wire::Bytes(bytes)) => type_meta = message(bytes, TYPE_META)?,
            (2, Wire::Bytes(bytes)) => raw = bytes,
            _ => {}
        }
    }
    let api_version = type_meta
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let kind = type_meta
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let schema = schema(&api_version, &kind)
        .ok_or_else(|| ProtobufError::Unsupported(format!("{api_version} {kind}")))?;
    let mut object = message(raw, schema)?;
    object.insert("apiVersion".into(), json!(api_version));
    object.insert("kind".into(), json!(kind));
    Ok(Value::Object(object))
}

fn message(bytes: &[u8], schema: &[(u64, Field)]) -> Result<Map<String, Value>, ProtobufError> {
    let mut out = Map::new();
    for item in Reader(bytes) {
        let (number, wire) = item?;
        let Some((_, field)) = schema.iter().find(|(n, _)| *n == number) else {
            continue;
        };
        match (*field, wire) {
            (Field::Str(name), Wire::Bytes(b)) => {
                out.insert(name.into(), json!(text(b)?));
            }
            (Field::Bool(name), Wire::Varint(v)) => {
                out.insert(name.into(), json!(v != 0));
            }
            (Field::RepeatedStr(name), Wire::Bytes(b)) => {
                let list = out.entry(name).or_insert_with(|| json!([]));
                if let Value::Array(items) = list {
                    items.push(json!(text(b)?));
                }
            }
            (Field::MapStr(name) | Field::MapBytes(name), Wire::Bytes(b)) => {
                let entry = message(b, &[(1, Field::Str("k")), (2, Field::Str("v"))]);
                let (key, value) = match (*field, entry) {
                    (Field::MapStr(_), Ok(entry)) => {
                        (entry.get("k").cloned(), entry.get("v").cloned())
                    }
                    _ => map_bytes_entry(b)?,
                };
                let map = out.entry(name).or_insert_with(|| json!({}));
                if let (Some(Value::String(key)), Value::Object(map)) = (key, map) {
                    map.insert(key, value.unwrap_or(json!("")));
                }
            }
            (Field::Message(name, nested), Wire::Bytes(b)) => {
                out.insert(name.into(), Value::Object(message(b, nested)?));
            }
            _ => return Err(ProtobufError::Malformed),
        }
    }
    Ok(out)
}

fn map_bytes_entry(bytes: &[u8]) -> Result<(Option<Value>, Option<Value>), ProtobufError> {
    let (mut key, mut value) = (None, None);
    for item in Reader(bytes) {
        match item? {
            (1, Wire::Bytes(b)) => key = Some(json!(text(b)?)),
            (2, Wire::Bytes(b)) => value = Some(json!(base64(b))),
            _ => {}
        }
    }
    Ok((key, value))
}

fn text(bytes: &[u8]) -> Result<&str, ProtobufError> {
    std::str::from_utf8(bytes).map_err(|_| ProtobufError::Malformed)
}

enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

/// Iterates over the (field number, value) pairs of a protobuf message.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, ProtobufError> {
        let mut value = 0_u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self.0.split_first().ok_or(ProtobufError::Malformed)?;
            self.0 = rest;
            value |= u64::from(byte & 0x7F) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(ProtobufError::Malformed)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ProtobufError> {
        if n > self.0.len() {
            return Err(ProtobufError::Malformed);
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
}

impl<'a> Iterator for Reader<'a> {
    type Item = Result<(u64, Wire<'a>), ProtobufError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.0.is_empty() {
            return None;
        }
        let item = (|| {
            let tag = self.varint()?;
            let wire = match tag & 7 {
                0 => Wire::Varint(self.varint()?),
                1 => {
                    self.take(8)?;
                    Wire::Fixed
                }
                2 => {
                    let len =
                        usize::try_from(self.varint()?).map_err(|_| ProtobufError::Malformed)?;
                    Wire::Bytes(self.take(len)?)
                }
                5 => {
                    self.take(4)?;
                    Wire::Fixed
                }
                _ => return Err(ProtobufError::Malformed),
            };
            Ok((tag >> 3, wire))
        })();
        if item.is_err() {
            self.0 = &[];
        }
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(number: u64, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![(number << 3 | 2) as u8, bytes.len() as u8];
        out.extend_from_slice(bytes);
        out
    }

    fn entry(key: &str, value: &[u8]) -> Vec<u8> {
        [field(1, key.as_bytes()), field(2, value)].concat()
    }

    fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        let type_meta = [field(1, api_version.as_bytes()), field(2, kind.as_bytes())].concat();
        [b"k8s\0".to_vec(), field(1, &type_meta), field(2, raw)].concat()
    }

    #[test]
    fn a_secret_from_kubectl_create_decodes_to_json() {
        let meta = [
            field(1, b"token"),
            field(3, b"default"),
            field(11, &entry("app", b"x")),
        ]
        .concat();
        let raw = [
            field(1, &meta),
            field(2, &entry("token", b"abc")),
            field(3, b"Opaque"),
        ]
        .concat();
        let value = decode(&envelope("v1", "Secret", &raw)).unwrap();
        assert_eq!(
            value,
            json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                   "metadata": {"name": "token", "namespace": "default", "labels": {"app": "x"}},
                   "data": {"token": "YWJj"}})
        );
    }

    #[test]
    fn a_config_map_keeps_its_string_data_and_skips_unknown_fields() {
        let meta = [field(1, b"c"), vec![8 << 3, 0x96, 0x01]].concat();
        let raw = [
            field(1, &meta),
            field(2, &entry("a", b"1")),
            vec![4 << 3, 1],
        ]
        .concat();
        let value = decode(&envelope("v1", "ConfigMap", &raw)).unwrap();
        assert_eq!(value["data"], json!({"a": "1"}));
        assert_eq!(value["immutable"], true);
        assert_eq!(value["metadata"], json!({"name": "c"}));
    }

    #[test]
    fn truncated_or_unknown_bodies_are_errors() {
        assert_eq!(decode(b"nope"), Err(ProtobufError::Malformed));
        assert_eq!(decode(b"k8s\0\x0a\x05ab"), Err(ProtobufError::Malformed));
        assert!(matches!(
            decode(&envelope("apps/v1", "Deployment", &[])),
            Err(ProtobufError::Unsupported(_))
        ));
    }
}
