//! What an `apiserver_requests` input decodes into: a server's setup and the requests
//! sent to it, shaped like what kube-rs and kubectl send (resource paths, list and watch
//! queries, label and field selectors, the four patch types, protobuf bodies).

use arbitrary::Arbitrary;

pub use super::query::Param;
pub use super::words::{ApiVersion, Json, Kind, Name, PatchOp, Word};

/// The resources a path can name: group, version, plural, kind, namespaced.
pub const RESOURCES: &[(&str, &str, &str, &str, bool)] = &[
    ("", "v1", "configmaps", "ConfigMap", true),
    ("", "v1", "secrets", "Secret", true),
    ("", "v1", "namespaces", "Namespace", false),
    ("", "v1", "serviceaccounts", "ServiceAccount", true),
    ("", "v1", "events", "Event", true),
    ("", "v1", "services", "Service", true),
    ("events.k8s.io", "v1", "events", "Event", true),
    ("coordination.k8s.io", "v1", "leases", "Lease", true),
    ("apps", "v1", "deployments", "Deployment", true),
    ("rbac.authorization.k8s.io", "v1", "roles", "Role", true),
    (
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        false,
    ),
    (
        "mockcloud.example.org",
        "v1alpha1",
        "buckets",
        "Bucket",
        true,
    ),
    ("", "v2", "configmaps", "ConfigMap", true),
    ("nothing.example.org", "v1", "things", "Thing", true),
];

/// A namespace: none, one that exists from the start, one that may be created, or any
/// word.
#[derive(Arbitrary, Debug)]
pub enum Namespace {
    /// No namespace segment (all namespaces, or a cluster-scoped kind).
    All,
    Default,
    KubeSystem,
    Made,
    Other(Word),
}

/// A field of an object that can follow the request's path.
#[derive(Arbitrary, Debug)]
pub enum FromPath<T> {
    /// What the path says (nothing if the path says nothing).
    Path,
    /// Left out.
    None,
    /// Given.
    Given(T),
}

/// One input: a server's setup and the requests sent to it, in order.
#[derive(Arbitrary, Debug)]
pub struct Session {
    /// Flow control: QPS, burst and the most requests in flight (none: no flow control).
    pub flow_control: Option<(u8, u8, Option<u8>)>,
    /// Whether the `buckets.mockcloud.example.org` CRD is loaded from the start.
    pub crd: bool,
    /// The requests.
    pub requests: Vec<Request>,
}

/// One request.
pub type Request = crate::timed::Timed<Op>;

/// What a request does: mostly what kube-rs and kubectl send, each shaped as they shape
/// it, sometimes any combination of method, path, query, headers and body.
#[derive(Arbitrary, Debug)]
pub enum Op {
    Create {
        at: At,
        object: Object,
        encoding: Encoding,
        query: Vec<Param>,
    },
    Get {
        at: At,
        name: Name,
        accept: Accept,
        query: Vec<Param>,
    },
    List {
        at: At,
        accept: Accept,
        query: Vec<Param>,
    },
    Watch {
        at: At,
        query: Vec<Param>,
    },
    Update {
        at: At,
        name: Name,
        status: bool,
        object: Object,
        query: Vec<Param>,
    },
    Patch {
        at: At,
        name: Name,
        status: bool,
        patch: Patch,
        query: Vec<Param>,
    },
    Delete {
        at: At,
        name: Name,
        options: Option<Json>,
        query: Vec<Param>,
    },
    DeleteCollection {
        at: At,
        query: Vec<Param>,
    },
    Discovery(Endpoint),
    Any(AnyRequest),
}

/// Where a resource request goes: `RESOURCES[kind % len]`, in a namespace or not.
#[derive(Arbitrary, Debug)]
pub struct At {
    pub kind: u8,
    pub namespace: Namespace,
}

/// How a created object is encoded.
#[derive(Arbitrary, Debug)]
pub enum Encoding {
    Json,
    Yaml,
    /// `k8s\0` protobuf: the object's metadata, and more fields.
    Protobuf(Vec<ProtoField>),
}

/// A patch, in one of the four types or any other content type.
#[derive(Arbitrary, Debug)]
pub enum Patch {
    Merge(Object),
    Json(Vec<Operation>),
    StrategicMerge(Object),
    /// Server-side apply, with `fieldManager` (required) unless `anonymous`.
    Apply {
        object: Object,
        anonymous: bool,
    },
    Other(ContentType, Body),
}

/// Any request: any method, path, query, content type, accept and body.
#[derive(Arbitrary, Debug)]
pub struct AnyRequest {
    /// The method.
    pub method: Method,
    /// What it addresses.
    pub target: Target,
    /// Its query.
    pub query: Vec<Param>,
    /// Its `Content-Type`.
    pub content_type: ContentType,
    /// Its `Accept`.
    pub accept: Accept,
    /// Its body.
    pub body: Body,
}

/// An HTTP method.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
    Head,
    Options,
}

/// What an [`AnyRequest`] addresses.
#[derive(Arbitrary, Debug)]
pub enum Target {
    /// A resource path, an object, a subresource.
    Resource {
        at: At,
        name: Option<Name>,
        subresource: Option<Word>,
    },
    /// The legacy watch path: `/api/v1/watch/...`.
    WatchPath(At),
    /// A discovery or server endpoint.
    Endpoint(Endpoint),
    /// `/apis/{group}` or `/apis/{group}/{version}` of any group.
    Group { group: Word, version: Option<Word> },
    /// Any path.
    Raw(String),
}

/// The server's own endpoints.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Endpoint {
    Version,
    Healthz,
    Api,
    Apis,
    ApiV1,
    OpenApi,
    OpenApiCore,
    OpenApiApps,
    Journal,
    Metrics,
}

/// A `Content-Type`.
#[derive(Arbitrary, Debug)]
pub enum ContentType {
    None,
    Json,
    Yaml,
    Protobuf,
    MergePatch,
    JsonPatch,
    StrategicMergePatch,
    ApplyPatch,
    Other(Word),
}

/// An `Accept`.
#[derive(Arbitrary, Debug)]
pub enum Accept {
    None,
    Json,
    Table,
    PartialObjectMetadata,
    Protobuf,
    Yaml,
    Other(String),
}

/// A request body.
#[derive(Arbitrary, Debug)]
pub enum Body {
    Empty,
    Object(Object),
    JsonPatch(Vec<Operation>),
    Json(Json),
    Protobuf(Protobuf),
    Raw(Vec<u8>),
}

/// A Kubernetes object.
#[derive(Arbitrary, Debug)]
pub struct Object {
    pub api_version: FromPath<ApiVersion>,
    pub kind: FromPath<Kind>,
    pub name: FromPath<Name>,
    pub generate_name: Option<Word>,
    pub namespace: FromPath<Namespace>,
    pub labels: Vec<(Word, Word)>,
    pub annotations: Vec<(Word, Word)>,
    pub finalizers: Vec<Word>,
    pub resource_version: Option<Word>,
    pub fields: Vec<(Word, Json)>,
}

/// One JSON patch operation.
#[derive(Arbitrary, Debug)]
pub struct Operation {
    pub op: PatchOp,
    pub path: Vec<Word>,
    pub from: Option<Vec<Word>>,
    pub value: Option<Json>,
}

/// A `k8s\0` protobuf body: a `runtime.Unknown` envelope around an object's fields.
#[derive(Arbitrary, Debug)]
pub struct Protobuf {
    pub api_version: FromPath<ApiVersion>,
    pub kind: FromPath<Kind>,
    pub object: Vec<ProtoField>,
    /// Whether the `k8s\0` magic is left out.
    pub no_magic: bool,
}

/// A protobuf field.
#[derive(Arbitrary, Debug)]
pub struct ProtoField {
    pub number: u8,
    pub value: ProtoValue,
}

/// A protobuf field's value, by wire type.
#[derive(Arbitrary, Debug)]
pub enum ProtoValue {
    Varint(u64),
    Text(Word),
    Bytes(Vec<u8>),
    Message(Vec<ProtoField>),
    /// A map entry: key (field 1) and value (field 2).
    Entry(Word, Word),
    Fixed32(u32),
    Fixed64(u64),
    /// Bytes written after the tag as they are (a truncated or malformed field).
    Raw(Vec<u8>),
}

impl Namespace {
    /// The namespace.
    #[must_use]
    pub fn text(&self) -> &str {
        match self {
            Namespace::All => "",
            Namespace::Default => "default",
            Namespace::KubeSystem => "kube-system",
            Namespace::Made => "n0",
            Namespace::Other(w) => w.as_str(),
        }
    }
}
