//! The pieces seeds are made of: vocabulary words, JSON, objects at a resource's path,
//! and the requests that create, get, patch and apply them.

use serde_json::Value;

use crate::apiserver::input::{
    Accept, At, Encoding, FromPath, Json, Name, Namespace, Object, Op, Param, Patch, Request,
    Session, Word,
};

/// A vocabulary word.
pub(super) fn w(word: &str) -> Word {
    Word::new(word)
}

/// `value` as the target's JSON (its strings and keys must be vocabulary words; its
/// numbers integers).
pub(super) fn json(value: &Value) -> Json {
    match value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Number(n) => Json::Int(n.as_i64().expect("seed numbers are integers")),
        Value::String(s) => Json::Str(w(s)),
        Value::Array(items) => Json::Array(items.iter().map(json).collect()),
        Value::Object(fields) => {
            Json::Object(fields.iter().map(|(k, v)| (w(k), json(v))).collect())
        }
    }
}

/// An object whose type, name and namespace follow the request's path, with `fields`
/// (a JSON object) at its top level. A `metadata` field replaces the metadata the path
/// gives: it must then name the object itself.
pub(super) fn object(fields: &Value) -> Object {
    Object {
        api_version: FromPath::Path,
        kind: FromPath::Path,
        name: FromPath::Path,
        generate_name: None,
        namespace: FromPath::Path,
        labels: Vec::new(),
        annotations: Vec::new(),
        finalizers: Vec::new(),
        resource_version: None,
        fields: fields
            .as_object()
            .expect("an object's fields")
            .iter()
            .map(|(k, v)| (w(k), json(v)))
            .collect(),
    }
}

/// Where a request goes: `RESOURCES[kind]` in `default`.
pub(super) fn at(kind: u8) -> At {
    At {
        kind,
        namespace: Namespace::Default,
    }
}

pub(super) const CONFIG_MAPS: u8 = 0;
pub(super) const DEPLOYMENTS: u8 = 8;
pub(super) const BUCKETS: u8 = 11;

pub(super) fn request(op: Op) -> Request {
    Request { wait_ms: 1, op }
}

pub(super) fn create(kind: u8, fields: &Value, query: Vec<Param>) -> Request {
    request(Op::Create {
        at: at(kind),
        object: object(fields),
        encoding: Encoding::Json,
        query,
    })
}

pub(super) fn get(kind: u8, name: &str) -> Request {
    request(Op::Get {
        at: at(kind),
        name: Name::Other(w(name)),
        accept: Accept::Json,
        query: Vec::new(),
    })
}

pub(super) fn patch(
    kind: u8,
    name: &str,
    status: bool,
    patch: Patch,
    query: Vec<Param>,
) -> Request {
    request(Op::Patch {
        at: at(kind),
        name: Name::Other(w(name)),
        status,
        patch,
        query,
    })
}

/// A server-side apply by `manager` (the target's own `fuzz` when `None`).
pub(super) fn apply(
    kind: u8,
    name: &str,
    fields: &Value,
    manager: Option<&str>,
    force: bool,
) -> Request {
    let mut query = Vec::new();
    if let Some(m) = manager {
        query.push(Param::FieldManager(w(m)));
    }
    if force {
        query.push(Param::Force(true));
    }
    patch(
        kind,
        name,
        false,
        Patch::Apply {
            object: object(fields),
            anonymous: manager.is_some(),
        },
        query,
    )
}

pub(super) fn strategic(kind: u8, name: &str, fields: &Value) -> Request {
    patch(
        kind,
        name,
        false,
        Patch::StrategicMerge(object(fields)),
        Vec::new(),
    )
}

pub(super) fn session(requests: Vec<Request>) -> Session {
    Session {
        flow_control: None,
        crd: true,
        requests,
    }
}

/// A managedFields entry as a client could send it.
pub(super) fn entry(manager: &str, operation: &str, fields: &Value) -> Value {
    serde_json::json!({"manager": manager, "operation": operation, "apiVersion": "v1",
        "fieldsType": "FieldsV1", "fieldsV1": fields})
}
