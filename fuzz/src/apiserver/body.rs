//! Request bodies: objects as JSON, YAML and protobuf, JSON patches, and `k8s\0`
//! protobuf envelopes.

use serde_json::{Map, Value, json};

use super::input::{
    Body, FromPath, Namespace, Object, Operation, ProtoField, ProtoValue, Protobuf, Word,
};

/// What a resource path names, for bodies that follow it.
#[derive(Debug, Default, Clone)]
pub struct PathInfo {
    pub api_version: Option<String>,
    pub kind: Option<&'static str>,
    pub namespace: Option<String>,
    pub name: Option<String>,
}

impl<T> FromPath<T> {
    /// The value: the path's (`from_path`), none, or the given one.
    fn pick(&self, from_path: Option<String>, given: impl Fn(&T) -> String) -> Option<String> {
        match self {
            FromPath::Path => from_path,
            FromPath::None => None,
            FromPath::Given(t) => Some(given(t)),
        }
    }
}

fn pairs(p: &[(Word, Word)]) -> Value {
    Value::Object(
        p.iter()
            .map(|(k, v)| (k.as_str().to_owned(), json!(v.as_str())))
            .collect(),
    )
}

/// The object's `apiVersion` and `kind`.
fn type_meta(o: &Object, path: &PathInfo) -> (Option<String>, Option<String>) {
    (
        o.api_version
            .pick(path.api_version.clone(), |v| v.as_str().to_owned()),
        o.kind
            .pick(path.kind.map(str::to_owned), |k| k.as_str().to_owned()),
    )
}

/// The object's name and namespace.
fn place(o: &Object, path: &PathInfo) -> (Option<String>, Option<String>) {
    (
        o.name.pick(path.name.clone(), |n| n.text()),
        o.namespace
            .pick(path.namespace.clone(), |n| Namespace::text(n).to_owned()),
    )
}

/// The object as JSON.
pub fn object(o: &Object, path: &PathInfo) -> Value {
    let (name, namespace) = place(o, path);
    let mut metadata = Map::new();
    let mut put = |key: &str, value: Option<String>| {
        if let Some(v) = value {
            metadata.insert(key.to_owned(), json!(v));
        }
    };
    put("name", name);
    put(
        "generateName",
        o.generate_name.as_ref().map(|w| w.as_str().to_owned()),
    );
    put("namespace", namespace);
    put(
        "resourceVersion",
        o.resource_version.as_ref().map(|w| w.as_str().to_owned()),
    );
    if !o.labels.is_empty() {
        metadata.insert("labels".into(), pairs(&o.labels));
    }
    if !o.annotations.is_empty() {
        metadata.insert("annotations".into(), pairs(&o.annotations));
    }
    if !o.finalizers.is_empty() {
        let list: Vec<&str> = o.finalizers.iter().map(Word::as_str).collect();
        metadata.insert("finalizers".into(), json!(list));
    }
    let mut object = Map::new();
    let (api_version, kind) = type_meta(o, path);
    if let Some(v) = api_version {
        object.insert("apiVersion".into(), json!(v));
    }
    if let Some(k) = kind {
        object.insert("kind".into(), json!(k));
    }
    object.insert("metadata".into(), Value::Object(metadata));
    for (k, v) in &o.fields {
        object.insert(k.as_str().to_owned(), v.value());
    }
    Value::Object(object)
}

/// The object as block YAML.
pub fn yaml(o: &Object, path: &PathInfo) -> Vec<u8> {
    serde_saphyr::to_string(&object(o, path))
        .expect("a JSON value writes as YAML")
        .into_bytes()
}

fn pointer(segments: &[Word]) -> String {
    segments
        .iter()
        .map(|s| format!("/{}", s.as_str().replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// A JSON patch.
pub fn json_patch(ops: &[Operation]) -> Vec<u8> {
    let ops: Vec<Value> = ops
        .iter()
        .map(|op| {
            let mut out = Map::new();
            out.insert("op".into(), json!(op.op.as_str()));
            out.insert("path".into(), json!(pointer(&op.path)));
            if let Some(from) = &op.from {
                out.insert("from".into(), json!(pointer(from)));
            }
            if let Some(v) = &op.value {
                out.insert("value".into(), v.value());
            }
            Value::Object(out)
        })
        .collect();
    Value::Array(ops).to_string().into_bytes()
}

/// Any body, for a request of any shape.
pub fn any(body: &Body, path: &PathInfo) -> Vec<u8> {
    match body {
        Body::Empty => Vec::new(),
        Body::Object(o) => object(o, path).to_string().into_bytes(),
        Body::JsonPatch(ops) => json_patch(ops),
        Body::Json(j) => j.value().to_string().into_bytes(),
        Body::Protobuf(p) => envelope(p, path),
        Body::Raw(b) => b.clone(),
    }
}

/// The object in protobuf: its metadata (the `ObjectMeta` fields kubectl sets) and
/// `more` fields, in a `k8s\0` envelope.
pub fn protobuf(o: &Object, more: &[ProtoField], path: &PathInfo) -> Vec<u8> {
    let (name, namespace) = place(o, path);
    let text = |v: &str| ProtoValue::Text(Word::new(v));
    let mut meta = Vec::new();
    for (number, value) in [
        (1, name),
        (2, o.generate_name.as_ref().map(|w| w.as_str().to_owned())),
        (3, namespace),
    ] {
        if let Some(v) = value {
            field(&mut meta, number, &text(&v));
        }
    }
    for (number, map) in [(11, &o.labels), (12, &o.annotations)] {
        for (k, v) in map {
            field(&mut meta, number, &ProtoValue::Entry(k.clone(), v.clone()));
        }
    }
    for f in &o.finalizers {
        field(&mut meta, 14, &text(f.as_str()));
    }
    let mut raw = Vec::new();
    tag(&mut raw, 1, 2);
    bytes(&mut raw, &meta);
    message(&mut raw, more);
    let (api_version, kind) = type_meta(o, path);
    frame(api_version, kind, &raw, true)
}

/// A `k8s\0` envelope around any fields.
fn envelope(p: &Protobuf, path: &PathInfo) -> Vec<u8> {
    let api_version = p
        .api_version
        .pick(path.api_version.clone(), |v| v.as_str().to_owned());
    let kind = p
        .kind
        .pick(path.kind.map(str::to_owned), |k| k.as_str().to_owned());
    let mut raw = Vec::new();
    message(&mut raw, &p.object);
    frame(api_version, kind, &raw, !p.no_magic)
}

/// The magic (if `magic`), then a `runtime.Unknown`: `typeMeta` (field 1) and `raw`
/// (field 2).
fn frame(api_version: Option<String>, kind: Option<String>, raw: &[u8], magic: bool) -> Vec<u8> {
    let mut type_meta = Vec::new();
    for (number, value) in [(1, api_version), (2, kind)] {
        if let Some(v) = value {
            field(&mut type_meta, number, &ProtoValue::Text(Word::new(v)));
        }
    }
    let mut out = if magic { b"k8s\0".to_vec() } else { Vec::new() };
    tag(&mut out, 1, 2);
    bytes(&mut out, &type_meta);
    tag(&mut out, 2, 2);
    bytes(&mut out, raw);
    out
}

fn message(out: &mut Vec<u8>, fields: &[ProtoField]) {
    for f in fields {
        field(out, u64::from(f.number), &f.value);
    }
}

fn field(out: &mut Vec<u8>, number: u64, value: &ProtoValue) {
    match value {
        ProtoValue::Varint(v) => {
            tag(out, number, 0);
            varint(out, *v);
        }
        ProtoValue::Text(w) => {
            tag(out, number, 2);
            bytes(out, w.as_str().as_bytes());
        }
        ProtoValue::Bytes(b) => {
            tag(out, number, 2);
            bytes(out, b);
        }
        ProtoValue::Message(fields) => {
            let mut inner = Vec::new();
            message(&mut inner, fields);
            tag(out, number, 2);
            bytes(out, &inner);
        }
        ProtoValue::Entry(k, v) => {
            let mut inner = Vec::new();
            field(&mut inner, 1, &ProtoValue::Text(k.clone()));
            field(&mut inner, 2, &ProtoValue::Text(v.clone()));
            tag(out, number, 2);
            bytes(out, &inner);
        }
        ProtoValue::Fixed32(v) => {
            tag(out, number, 5);
            out.extend_from_slice(&v.to_le_bytes());
        }
        ProtoValue::Fixed64(v) => {
            tag(out, number, 1);
            out.extend_from_slice(&v.to_le_bytes());
        }
        ProtoValue::Raw(b) => {
            tag(out, number, 2);
            out.extend_from_slice(b);
        }
    }
}

fn tag(out: &mut Vec<u8>, number: u64, wire: u64) {
    varint(out, (number << 3) | wire);
}

fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}
