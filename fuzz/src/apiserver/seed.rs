//! Seeds of the `apiserver_requests` target: sessions written as the bytes that
//! `arbitrary` decodes into them, so that fuzzing starts from requests that reach deep
//! paths (server-side apply with managed fields and conflicts, strategic merge patch
//! directives) rather than waiting for random bytes to spell them.
//!
//! [`Encode`] is the inverse of the derived `Arbitrary` decoding for the input types
//! (arbitrary 1.x: integers little-endian, an enum's variant from a `u32` as
//! `(u32 × variants) >> 32`, a collection's items each after a byte whose low bit says one
//! more follows, a vocabulary word as a ratio byte then its index). Text that is not a
//! vocabulary word cannot be written (its length would come from the end of the input),
//! so seeds use vocabulary words only; the variants holding free text are refused.
//!
//! The seeds are checked in as files under `fuzz/seeds/apiserver_requests/`;
//! `corpus write-seeds apiserver_requests` writes them from [`seeds`], and the fuzz
//! crate's tests check that the files are what [`seeds`] encodes and that each decodes
//! back to its session.

use serde_json::Value;

use super::input::{
    Accept, At, Encoding, Endpoint, FromPath, Json, Name, Namespace, Object, Op, Operation, Param,
    Patch, Request, Session, Word,
};
use super::query::{FieldOp, LabelOp, LabelSelector, Requirement};
use crate::pick::{Pick, Vocabulary};

/// Where the seed files are, from the workspace root.
pub const DIR: &str = "fuzz/seeds/apiserver_requests";

/// Writes every seed of [`seeds`] as `DIR/NAME` under `root`, the workspace root, and
/// removes any other file there; returns the paths written.
///
/// # Errors
/// If the directory or a file cannot be written.
pub fn write(root: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let dir = root.join(DIR);
    std::fs::create_dir_all(&dir)?;
    let seeds = seeds();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        let known = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| seeds.iter().any(|(name, _)| *name == n));
        if !known && path.is_file() {
            std::fs::remove_file(&path)?;
        }
    }
    let mut written = Vec::new();
    for (name, session) in &seeds {
        let path = dir.join(name);
        std::fs::write(&path, encode(session))?;
        written.push(path);
    }
    Ok(written)
}

/// What a type writes so that `arbitrary` decodes it back.
pub trait Encode {
    /// Appends the bytes that decode into `self`.
    ///
    /// # Panics
    /// For free text (not a word of its vocabulary), which no byte string decodes into
    /// at a known place.
    fn encode(&self, out: &mut Vec<u8>);
}

/// The bytes `Session::arbitrary_take_rest` decodes into `session`.
#[must_use]
pub fn encode(session: &Session) -> Vec<u8> {
    let mut out = Vec::new();
    session.encode(&mut out);
    out
}

/// Variant `index` of an enum of `count` variants: the `u32` whose
/// `(u32 × count) >> 32` is `index`.
fn variant(out: &mut Vec<u8>, index: u32, count: u32) {
    assert!(index < count, "variant {index} of {count}");
    let value = (u64::from(index) << 32).div_ceil(u64::from(count));
    let value = u32::try_from(value).expect("a variant's u32");
    debug_assert_eq!(
        (u64::from(value) * u64::from(count)) >> 32,
        u64::from(index)
    );
    out.extend_from_slice(&value.to_le_bytes());
}

impl Encode for u8 {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(*self);
    }
}

impl Encode for u16 {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl Encode for i32 {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl Encode for i64 {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl Encode for u64 {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl Encode for f64 {
    fn encode(&self, out: &mut Vec<u8>) {
        self.to_bits().encode(out);
    }
}

impl Encode for bool {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
}

impl<T: Encode> Encode for Option<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        self.is_some().encode(out);
        if let Some(t) = self {
            t.encode(out);
        }
    }
}

impl<T: Encode> Encode for Vec<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        for item in self {
            true.encode(out);
            item.encode(out);
        }
        false.encode(out);
    }
}

impl<A: Encode, B: Encode> Encode for (A, B) {
    fn encode(&self, out: &mut Vec<u8>) {
        self.0.encode(out);
        self.1.encode(out);
    }
}

impl<A: Encode, B: Encode, C: Encode> Encode for (A, B, C) {
    fn encode(&self, out: &mut Vec<u8>) {
        self.0.encode(out);
        self.1.encode(out);
        self.2.encode(out);
    }
}

impl<V: Vocabulary> Encode for Pick<V> {
    fn encode(&self, out: &mut Vec<u8>) {
        let index = V::WORDS
            .iter()
            .position(|w| *w == self.as_str())
            .unwrap_or_else(|| panic!("{:?} is not a word of the vocabulary", self.as_str()));
        assert!(
            V::WORDS.len() <= 256 && V::ANY_TEXT_ONE_IN >= 2,
            "a vocabulary's index is one byte"
        );
        // `ratio(1, ANY_TEXT_ONE_IN)`: 1 + byte % n; 1 would be any text.
        out.push(1);
        out.push(u8::try_from(index).expect("checked above"));
    }
}

impl<V: Vocabulary> Encode for crate::pick::Name<V> {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            crate::pick::Name::Few(i) => {
                variant(out, 0, 2);
                i.encode(out);
            }
            crate::pick::Name::Other(w) => {
                variant(out, 1, 2);
                w.encode(out);
            }
        }
    }
}

impl<V: Vocabulary> Encode for crate::json::Json<V> {
    fn encode(&self, out: &mut Vec<u8>) {
        use crate::json::Json as J;
        match self {
            J::Null => variant(out, 0, 7),
            J::Bool(b) => {
                variant(out, 1, 7);
                b.encode(out);
            }
            J::Int(i) => {
                variant(out, 2, 7);
                i.encode(out);
            }
            J::Float(f) => {
                variant(out, 3, 7);
                f.encode(out);
            }
            J::Str(w) => {
                variant(out, 4, 7);
                w.encode(out);
            }
            J::Array(items) => {
                variant(out, 5, 7);
                items.encode(out);
            }
            J::Object(fields) => {
                variant(out, 6, 7);
                fields.encode(out);
            }
        }
    }
}

impl Encode for Session {
    fn encode(&self, out: &mut Vec<u8>) {
        self.flow_control.encode(out);
        self.crd.encode(out);
        // The last field is decoded by `arbitrary_take_rest`: the same items and flags.
        self.requests.encode(out);
    }
}

impl Encode for Request {
    fn encode(&self, out: &mut Vec<u8>) {
        self.wait_ms.encode(out);
        self.op.encode(out);
    }
}

impl Encode for Op {
    fn encode(&self, out: &mut Vec<u8>) {
        const N: u32 = 10;
        match self {
            Op::Create {
                at,
                object,
                encoding,
                query,
            } => {
                variant(out, 0, N);
                at.encode(out);
                object.encode(out);
                encoding.encode(out);
                query.encode(out);
            }
            Op::Get {
                at,
                name,
                accept,
                query,
            } => {
                variant(out, 1, N);
                at.encode(out);
                name.encode(out);
                accept.encode(out);
                query.encode(out);
            }
            Op::List { at, accept, query } => {
                variant(out, 2, N);
                at.encode(out);
                accept.encode(out);
                query.encode(out);
            }
            Op::Watch { at, query } => {
                variant(out, 3, N);
                at.encode(out);
                query.encode(out);
            }
            Op::Update {
                at,
                name,
                status,
                object,
                query,
            } => {
                variant(out, 4, N);
                at.encode(out);
                name.encode(out);
                status.encode(out);
                object.encode(out);
                query.encode(out);
            }
            Op::Patch {
                at,
                name,
                status,
                patch,
                query,
            } => {
                variant(out, 5, N);
                at.encode(out);
                name.encode(out);
                status.encode(out);
                patch.encode(out);
                query.encode(out);
            }
            Op::Delete {
                at,
                name,
                options,
                query,
            } => {
                variant(out, 6, N);
                at.encode(out);
                name.encode(out);
                options.encode(out);
                query.encode(out);
            }
            Op::DeleteCollection { at, query } => {
                variant(out, 7, N);
                at.encode(out);
                query.encode(out);
            }
            Op::Discovery(endpoint) => {
                variant(out, 8, N);
                endpoint.encode(out);
            }
            Op::Any(_) => panic!("requests of any shape hold free text: not encodable"),
        }
    }
}

impl Encode for At {
    fn encode(&self, out: &mut Vec<u8>) {
        self.kind.encode(out);
        self.namespace.encode(out);
    }
}

impl Encode for Namespace {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Namespace::All => variant(out, 0, 5),
            Namespace::Default => variant(out, 1, 5),
            Namespace::KubeSystem => variant(out, 2, 5),
            Namespace::Made => variant(out, 3, 5),
            Namespace::Other(w) => {
                variant(out, 4, 5);
                w.encode(out);
            }
        }
    }
}

impl<T: Encode> Encode for FromPath<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            FromPath::Path => variant(out, 0, 3),
            FromPath::None => variant(out, 1, 3),
            FromPath::Given(t) => {
                variant(out, 2, 3);
                t.encode(out);
            }
        }
    }
}

impl Encode for Encoding {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Encoding::Json => variant(out, 0, 3),
            Encoding::Yaml => variant(out, 1, 3),
            Encoding::Protobuf(_) => panic!("protobuf fields hold free bytes: not encodable"),
        }
    }
}

impl Encode for Patch {
    fn encode(&self, out: &mut Vec<u8>) {
        const N: u32 = 5;
        match self {
            Patch::Merge(o) => {
                variant(out, 0, N);
                o.encode(out);
            }
            Patch::Json(ops) => {
                variant(out, 1, N);
                ops.encode(out);
            }
            Patch::StrategicMerge(o) => {
                variant(out, 2, N);
                o.encode(out);
            }
            Patch::Apply { object, anonymous } => {
                variant(out, 3, N);
                object.encode(out);
                anonymous.encode(out);
            }
            Patch::Other(..) => panic!("a patch of any content type holds free bytes"),
        }
    }
}

impl Encode for Accept {
    fn encode(&self, out: &mut Vec<u8>) {
        let index = match self {
            Accept::None => 0,
            Accept::Json => 1,
            Accept::Table => 2,
            Accept::PartialObjectMetadata => 3,
            Accept::Protobuf => 4,
            Accept::Yaml => 5,
            Accept::Other(_) => panic!("an Accept of any text: not encodable"),
        };
        variant(out, index, 7);
    }
}

impl Encode for Endpoint {
    fn encode(&self, out: &mut Vec<u8>) {
        let index = match self {
            Endpoint::Version => 0,
            Endpoint::Healthz => 1,
            Endpoint::Api => 2,
            Endpoint::Apis => 3,
            Endpoint::ApiV1 => 4,
            Endpoint::OpenApi => 5,
            Endpoint::OpenApiCore => 6,
            Endpoint::OpenApiApps => 7,
            Endpoint::Journal => 8,
            Endpoint::Metrics => 9,
        };
        variant(out, index, 10);
    }
}

impl Encode for Object {
    fn encode(&self, out: &mut Vec<u8>) {
        self.api_version.encode(out);
        self.kind.encode(out);
        self.name.encode(out);
        self.generate_name.encode(out);
        self.namespace.encode(out);
        self.labels.encode(out);
        self.annotations.encode(out);
        self.finalizers.encode(out);
        self.resource_version.encode(out);
        self.fields.encode(out);
    }
}

impl Encode for Operation {
    fn encode(&self, out: &mut Vec<u8>) {
        self.op.encode(out);
        self.path.encode(out);
        self.from.encode(out);
        self.value.encode(out);
    }
}

impl Encode for Param {
    fn encode(&self, out: &mut Vec<u8>) {
        const N: u32 = 17;
        match self {
            Param::LabelSelector(s) => {
                variant(out, 0, N);
                s.encode(out);
            }
            Param::FieldSelector(reqs) => {
                variant(out, 1, N);
                reqs.encode(out);
            }
            Param::Watch(w) => {
                variant(out, 2, N);
                w.encode(out);
            }
            Param::ResourceVersion(w) => {
                variant(out, 3, N);
                w.encode(out);
            }
            Param::ResourceVersionMatch(w) => {
                variant(out, 4, N);
                w.encode(out);
            }
            Param::Limit(n) => {
                variant(out, 5, N);
                n.encode(out);
            }
            Param::Continue(_) => panic!("a continue token is free text: not encodable"),
            Param::TimeoutSeconds(n) => {
                variant(out, 7, N);
                n.encode(out);
            }
            Param::AllowWatchBookmarks(b) => {
                variant(out, 8, N);
                b.encode(out);
            }
            Param::SendInitialEvents(b) => {
                variant(out, 9, N);
                b.encode(out);
            }
            Param::DryRun(w) => {
                variant(out, 10, N);
                w.encode(out);
            }
            Param::FieldManager(w) => {
                variant(out, 11, N);
                w.encode(out);
            }
            Param::Force(b) => {
                variant(out, 12, N);
                b.encode(out);
            }
            Param::PropagationPolicy(w) => {
                variant(out, 13, N);
                w.encode(out);
            }
            Param::Since(n) => {
                variant(out, 14, N);
                n.encode(out);
            }
            Param::Other(k, v) => {
                variant(out, 15, N);
                k.encode(out);
                v.encode(out);
            }
            Param::Raw(_) => panic!("raw query text is free text: not encodable"),
        }
    }
}

impl Encode for LabelSelector {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            LabelSelector::Requirements(r) => {
                variant(out, 0, 2);
                r.encode(out);
            }
            LabelSelector::Raw(_) => panic!("a raw selector is free text: not encodable"),
        }
    }
}

impl Encode for Requirement {
    fn encode(&self, out: &mut Vec<u8>) {
        self.key.encode(out);
        self.op.encode(out);
        self.values.encode(out);
    }
}

impl Encode for LabelOp {
    fn encode(&self, out: &mut Vec<u8>) {
        variant(out, *self as u32, 9);
    }
}

impl Encode for FieldOp {
    fn encode(&self, out: &mut Vec<u8>) {
        variant(out, *self as u32, 3);
    }
}

// Building seeds.

/// A vocabulary word.
fn w(word: &str) -> Word {
    Word::new(word)
}

/// `value` as the target's JSON (its strings and keys must be vocabulary words; its
/// numbers integers).
fn json(value: &Value) -> Json {
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
fn object(fields: &Value) -> Object {
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
fn at(kind: u8) -> At {
    At {
        kind,
        namespace: Namespace::Default,
    }
}

const CONFIG_MAPS: u8 = 0;
const DEPLOYMENTS: u8 = 8;
const BUCKETS: u8 = 11;

fn request(op: Op) -> Request {
    Request { wait_ms: 1, op }
}

fn create(kind: u8, fields: &Value, query: Vec<Param>) -> Request {
    request(Op::Create {
        at: at(kind),
        object: object(fields),
        encoding: Encoding::Json,
        query,
    })
}

fn get(kind: u8, name: &str) -> Request {
    request(Op::Get {
        at: at(kind),
        name: Name::Other(w(name)),
        accept: Accept::Json,
        query: Vec::new(),
    })
}

fn patch(kind: u8, name: &str, status: bool, patch: Patch, query: Vec<Param>) -> Request {
    request(Op::Patch {
        at: at(kind),
        name: Name::Other(w(name)),
        status,
        patch,
        query,
    })
}

/// A server-side apply by `manager` (the target's own `fuzz` when `None`).
fn apply(kind: u8, name: &str, fields: &Value, manager: Option<&str>, force: bool) -> Request {
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

fn strategic(kind: u8, name: &str, fields: &Value) -> Request {
    patch(
        kind,
        name,
        false,
        Patch::StrategicMerge(object(fields)),
        Vec::new(),
    )
}

fn session(requests: Vec<Request>) -> Session {
    Session {
        flow_control: None,
        crd: true,
        requests,
    }
}

/// A managedFields entry as a client could send it.
fn entry(manager: &str, operation: &str, fields: &Value) -> Value {
    serde_json::json!({"manager": manager, "operation": operation, "apiVersion": "v1",
        "fieldsType": "FieldsV1", "fieldsV1": fields})
}

/// The seeds, by file name.
#[must_use]
pub fn seeds() -> Vec<(&'static str, Session)> {
    use serde_json::json;
    let bucket = |region: &str| json!({"spec": {"forProvider": {"region": region}}});
    let deployment = json!({
        "metadata": {"name": "web", "finalizers": ["a.b/c", "finalizer.example.org"]},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [
                    {"name": "web", "image": "x", "env": [{"name": "a", "value": "1"}, {"name": "b", "value": "0"}]},
                    {"name": "db", "image": "x"},
                ]},
            },
        },
    });
    vec![
        (
            "apply-conflict-force",
            // Two managers applying one field of a custom resource: the second is
            // refused (409) until it forces; the first then stops applying a field; an
            // apply on /status.
            session(vec![
                apply(BUCKETS, "b1", &bucket("us-east-1"), None, false),
                apply(BUCKETS, "b1", &bucket("eu-west-1"), Some("web"), false),
                apply(BUCKETS, "b1", &bucket("eu-west-1"), Some("web"), true),
                get(BUCKETS, "b1"),
                apply(
                    BUCKETS,
                    "b1",
                    &json!({"spec": {"forProvider": {"region": "eu-west-1", "storageClass": "x"}}}),
                    Some("web"),
                    false,
                ),
                apply(
                    BUCKETS,
                    "b1",
                    &json!({"spec": {"forProvider": {"region": "eu-west-1"}}}),
                    Some("web"),
                    false,
                ),
                patch(
                    BUCKETS,
                    "b1",
                    true,
                    Patch::Apply {
                        object: object(&json!({"status": {"conditions": [
                            {"type": "Ready", "status": "true"}]}})),
                        anonymous: true,
                    },
                    vec![Param::FieldManager(w("db"))],
                ),
                apply(BUCKETS, "b1", &bucket("us-east-1"), None, false),
                get(BUCKETS, "b1"),
            ]),
        ),
        (
            "apply-managed-fields",
            // Managed fields given by clients: an apply carrying them (refused), an
            // update and a merge patch replacing them, an empty list clearing them, and
            // an Update manager's field an apply then conflicts with.
            session(vec![
                create(
                    CONFIG_MAPS,
                    &json!({"metadata": {"name": "cm1"}, "data": {"x": "1", "app": "web"}}),
                    vec![Param::FieldManager(w("web"))],
                ),
                apply(
                    CONFIG_MAPS,
                    "cm1",
                    &json!({"metadata": {"name": "cm1"}, "data": {"x": "10"}}),
                    None,
                    false,
                ),
                apply(
                    CONFIG_MAPS,
                    "cm1",
                    &json!({"metadata": {"name": "cm1", "managedFields": [
                        entry("db", "Apply", &json!({"f:data": {"f:x": {}}}))]},
                        "data": {"x": "10"}}),
                    None,
                    true,
                ),
                request(Op::Update {
                    at: at(CONFIG_MAPS),
                    name: Name::Other(w("cm1")),
                    status: false,
                    object: object(&json!({
                        "metadata": {"name": "cm1", "namespace": "default", "managedFields": [
                            entry("db", "Update", &json!({"f:data": {"f:x": {}, "f:app": {}}})),
                            entry("team", "Apply", &json!({"f:data": {"f:app": {}}}))]},
                        "data": {"x": "1", "app": "db"},
                    })),
                    query: Vec::new(),
                }),
                apply(
                    CONFIG_MAPS,
                    "cm1",
                    &json!({"data": {"app": "tier"}}),
                    Some("team"),
                    false,
                ),
                apply(
                    CONFIG_MAPS,
                    "cm1",
                    &json!({"data": {"x": "10"}}),
                    None,
                    false,
                ),
                patch(
                    CONFIG_MAPS,
                    "cm1",
                    false,
                    Patch::Merge(object(
                        &json!({"metadata": {"name": "cm1", "managedFields": []}}),
                    )),
                    Vec::new(),
                ),
                patch(
                    CONFIG_MAPS,
                    "cm1",
                    false,
                    Patch::Merge(object(
                        &json!({"metadata": {"name": "cm1", "managedFields": [
                        {"manager": "x", "operation": "delete", "fieldsV1": {"f:spec": 1}}]}}),
                    )),
                    Vec::new(),
                ),
                apply(
                    CONFIG_MAPS,
                    "cm1",
                    &json!({"data": {"x": "10"}}),
                    None,
                    true,
                ),
                get(CONFIG_MAPS, "cm1"),
            ]),
        ),
        (
            "strategic-directives",
            // A Deployment patched with every strategic merge directive: element order,
            // deletions from a primitive list, `$patch: delete|replace|merge`,
            // `$retainKeys`, and malformed ones.
            session(vec![
                create(DEPLOYMENTS, &deployment, Vec::new()),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"metadata": {
                        "$setElementOrder/finalizers": ["finalizer.example.org", "a.b/c", "x"],
                        "finalizers": ["x"]}}),
                ),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.b/c"]}}),
                ),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"spec": {"template": {"spec": {
                        "$setElementOrder/containers": [{"name": "db"}, {"name": "web"}],
                        "containers": [{"name": "web", "$setElementOrder/env": [{"name": "b"}, {"name": "a"}],
                            "env": [{"name": "a", "$patch": "delete"}]}]}}}}),
                ),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
                ),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"spec": {"template": {"spec": {"containers": [
                        {"name": "db", "$patch": "delete"}]}}}}),
                ),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"spec": {"template": {"spec": {
                        "$patch": "replace", "containers": [{"name": "web", "image": "x"}]}}}}),
                ),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"spec": {"template": {"spec": {"containers": [
                        {"name": "web", "$patch": "merge"}, {"$patch": "delete"}]}}}}),
                ),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"metadata": {"$setElementOrder/finalizers": "x",
                        "$deleteFromPrimitiveList/finalizers": {"x": 1}},
                        "spec": {"strategy": {"$retainKeys": "type"}}}),
                ),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"spec": {"template": {"spec": {
                        "$setElementOrder/containers": [{"name": "x"}],
                        "containers": [{"name": "web"}, {"name": "db"}]}}}}),
                ),
                get(DEPLOYMENTS, "web"),
                strategic(DEPLOYMENTS, "web", &json!({"$patch": "delete"})),
                strategic(CONFIG_MAPS, "cm1", &json!({"$patch": "replace"})),
            ]),
        ),
        (
            "apply-built-in-lists",
            // Server-side apply of a Deployment by two managers: containers merge by
            // name, the second manager's container is its own, its change of the
            // first's image conflicts, forced it takes it; then a strategic merge patch
            // of the applied object (an Update manager beside the appliers).
            session(vec![
                apply(DEPLOYMENTS, "web", &deployment, None, false),
                apply(
                    DEPLOYMENTS,
                    "web",
                    &json!({"metadata": {"name": "web"}, "spec": {"template": {"spec": {"containers": [
                        {"name": "tier", "image": "x"}]}}}}),
                    Some("team"),
                    false,
                ),
                apply(
                    DEPLOYMENTS,
                    "web",
                    &json!({"metadata": {"name": "web"}, "spec": {"template": {"spec": {"containers": [
                        {"name": "web", "image": "db"}]}}}}),
                    Some("team"),
                    false,
                ),
                apply(
                    DEPLOYMENTS,
                    "web",
                    &json!({"metadata": {"name": "web"}, "spec": {"template": {"spec": {"containers": [
                        {"name": "web", "image": "db"}]}}}}),
                    Some("team"),
                    true,
                ),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"metadata": {"$setElementOrder/finalizers": ["a.b/c"], "finalizers": ["a.b/c"]},
                        "spec": {"template": {"spec": {"containers": [{"name": "web", "$patch": "delete"}]}}}}),
                ),
                apply(DEPLOYMENTS, "web", &deployment, None, false),
                get(DEPLOYMENTS, "web"),
            ]),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use arbitrary::{Arbitrary, Unstructured};

    use super::*;

    #[test]
    fn every_variant_index_decodes_back() {
        for count in 1..=17u32 {
            for index in 0..count {
                let mut out = Vec::new();
                variant(&mut out, index, count);
                let value = u32::arbitrary(&mut Unstructured::new(&out)).unwrap();
                assert_eq!(
                    (u64::from(value) * u64::from(count)) >> 32,
                    u64::from(index)
                );
            }
        }
    }

    #[test]
    fn a_session_decodes_into_what_was_encoded() {
        for (name, session) in seeds() {
            let bytes = encode(&session);
            let decoded = Session::arbitrary_take_rest(Unstructured::new(&bytes)).unwrap();
            assert_eq!(format!("{decoded:?}"), format!("{session:?}"), "{name}");
        }
    }

    #[test]
    fn the_kinds_are_the_resources_they_name() {
        use super::super::input::RESOURCES;
        assert_eq!(RESOURCES[usize::from(CONFIG_MAPS)].2, "configmaps");
        assert_eq!(RESOURCES[usize::from(DEPLOYMENTS)].2, "deployments");
        assert_eq!(RESOURCES[usize::from(BUCKETS)].2, "buckets");
    }

    #[test]
    fn words_outside_the_vocabulary_are_refused() {
        let refused =
            std::panic::catch_unwind(|| Word::new("not a word here").encode(&mut Vec::new()));
        assert!(refused.is_err());
    }
}
