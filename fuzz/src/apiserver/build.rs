//! A generated [`Request`] as an HTTP request: the path with its segments
//! percent-encoded, the query form-encoded, the body in the content type's shape.

use bytes::Bytes;
use http::Method as M;
use http_body_util::Full;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use super::body::{self, PathInfo};
use super::input::{
    Accept, AnyRequest, At, ContentType, Encoding, Endpoint, Method, Name, Op, Param, Patch,
    RESOURCES, Request, Target, Word,
};
use super::query::query;

/// What a path segment keeps as it is; the rest is percent-encoded.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

const JSON: &str = "application/json";

/// An HTTP request's parts, before they are checked.
struct Parts {
    method: M,
    path: String,
    /// Pairs to form-encode, then raw text to append.
    query: (Vec<(String, String)>, String),
    content_type: Option<String>,
    accept: Option<String>,
    body: Vec<u8>,
}

impl Parts {
    fn new(method: M, path: String, params: &[Param]) -> Parts {
        Parts {
            method,
            path,
            query: query(params),
            content_type: None,
            accept: None,
            body: Vec::new(),
        }
    }

    fn with_body(mut self, content_type: &str, body: Vec<u8>) -> Parts {
        self.content_type = Some(content_type.to_owned());
        self.body = body;
        self
    }

    fn with_pair(mut self, key: &str, value: &str) -> Parts {
        self.query.0.insert(0, (key.to_owned(), value.to_owned()));
        self
    }
}

impl Request {
    /// The HTTP request, or `None` if its parts do not make one (a raw path that is no
    /// URI: hyper would have refused it before the service saw it).
    #[must_use]
    pub fn build(&self) -> Option<http::Request<Full<Bytes>>> {
        let p = self.op.parts();
        let mut form = form_urlencoded::Serializer::new(String::new());
        for (k, v) in &p.query.0 {
            form.append_pair(k, v);
        }
        let mut query = form.finish();
        if !p.query.1.is_empty() {
            if !query.is_empty() {
                query.push('&');
            }
            query.push_str(&p.query.1);
        }
        let uri = if query.is_empty() {
            p.path
        } else {
            format!("{}?{query}", p.path)
        };
        let mut builder = http::Request::builder().method(p.method).uri(uri);
        if let Some(ct) = p.content_type {
            builder = builder.header("content-type", ct);
        }
        if let Some(accept) = p.accept {
            builder = builder.header("accept", accept);
        }
        builder.body(Full::new(Bytes::from(p.body))).ok()
    }
}

impl Op {
    fn parts(&self) -> Parts {
        match self {
            Op::Create {
                at,
                object,
                encoding,
                query,
            } => {
                let info = at.info(None);
                let parts = Parts::new(M::POST, at.path(None, None), query);
                match encoding {
                    Encoding::Json => {
                        parts.with_body(JSON, body::object(object, &info).to_string().into_bytes())
                    }
                    Encoding::Yaml => {
                        parts.with_body("application/yaml", body::yaml(object, &info))
                    }
                    Encoding::Protobuf(more) => parts.with_body(
                        "application/vnd.kubernetes.protobuf",
                        body::protobuf(object, more, &info),
                    ),
                }
            }
            Op::Get {
                at,
                name,
                accept,
                query,
            } => {
                let mut parts = Parts::new(M::GET, at.path(Some(name), None), query);
                parts.accept = accept.header().map(str::to_owned);
                parts
            }
            Op::List { at, accept, query } => {
                let mut parts = Parts::new(M::GET, at.path(None, None), query);
                parts.accept = accept.header().map(str::to_owned);
                parts
            }
            Op::Watch { at, query } => {
                Parts::new(M::GET, at.path(None, None), query).with_pair("watch", "true")
            }
            Op::Update {
                at,
                name,
                status,
                object,
                query,
            } => {
                let sub = status.then_some("status");
                let info = at.info(Some(name));
                Parts::new(M::PUT, at.path(Some(name), sub), query)
                    .with_body(JSON, body::object(object, &info).to_string().into_bytes())
            }
            Op::Patch {
                at,
                name,
                status,
                patch,
                query,
            } => {
                let sub = status.then_some("status");
                let info = at.info(Some(name));
                let parts = Parts::new(M::PATCH, at.path(Some(name), sub), query);
                let json = |o| body::object(o, &info).to_string().into_bytes();
                match patch {
                    Patch::Merge(o) => parts.with_body("application/merge-patch+json", json(o)),
                    Patch::Json(ops) => {
                        parts.with_body("application/json-patch+json", body::json_patch(ops))
                    }
                    Patch::StrategicMerge(o) => {
                        parts.with_body("application/strategic-merge-patch+json", json(o))
                    }
                    Patch::Apply { object, anonymous } => {
                        let parts = parts
                            .with_body("application/apply-patch+yaml", body::yaml(object, &info));
                        if *anonymous {
                            parts
                        } else {
                            parts.with_pair("fieldManager", "fuzz")
                        }
                    }
                    Patch::Other(ct, b) => {
                        let mut parts = parts;
                        parts.content_type = ct.header().map(str::to_owned);
                        parts.body = body::any(b, &info);
                        parts
                    }
                }
            }
            Op::Delete {
                at,
                name,
                options,
                query,
            } => {
                let parts = Parts::new(M::DELETE, at.path(Some(name), None), query);
                match options {
                    Some(o) => parts.with_body(JSON, o.value().to_string().into_bytes()),
                    None => parts,
                }
            }
            Op::DeleteCollection { at, query } => Parts::new(M::DELETE, at.path(None, None), query),
            Op::Discovery(e) => Parts::new(M::GET, e.path().to_owned(), &[]),
            Op::Any(a) => a.parts(),
        }
    }
}

fn segment(w: &str) -> String {
    utf8_percent_encode(w, SEGMENT).to_string()
}

impl At {
    fn resource(&self) -> (&'static str, &'static str, &'static str, &'static str, bool) {
        RESOURCES[usize::from(self.kind) % RESOURCES.len()]
    }

    fn base(&self) -> String {
        let (group, version, ..) = self.resource();
        if group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{group}/{version}")
        }
    }

    /// The namespace segment, where the path has one: always for a namespaced kind, for
    /// every other input of a cluster-scoped one (a path the server must refuse).
    fn namespace(&self) -> Option<&str> {
        let (.., namespaced) = self.resource();
        Some(self.namespace.text())
            .filter(|ns| !ns.is_empty() && (namespaced || self.kind.is_multiple_of(2)))
    }

    /// `BASE[/namespaces/NS]/PLURAL[/NAME[/SUB]]`.
    fn path(&self, name: Option<&Name>, sub: Option<&str>) -> String {
        let (_, _, plural, ..) = self.resource();
        let mut path = self.base();
        if let Some(ns) = self.namespace() {
            path.push_str(&format!("/namespaces/{}", segment(ns)));
        }
        path.push_str(&format!("/{plural}"));
        if let Some(n) = name {
            path.push_str(&format!("/{}", segment(&n.text())));
            if let Some(s) = sub {
                path.push_str(&format!("/{}", segment(s)));
            }
        }
        path
    }

    /// What the path names, for bodies that follow it.
    fn info(&self, name: Option<&Name>) -> PathInfo {
        let (group, version, _, kind, _) = self.resource();
        PathInfo {
            api_version: Some(if group.is_empty() {
                version.to_owned()
            } else {
                format!("{group}/{version}")
            }),
            kind: Some(kind),
            namespace: self.namespace().map(str::to_owned),
            name: name.map(Name::text),
        }
    }
}

impl Endpoint {
    fn path(self) -> &'static str {
        match self {
            Endpoint::Version => "/version",
            Endpoint::Healthz => "/healthz",
            Endpoint::Api => "/api",
            Endpoint::Apis => "/apis",
            Endpoint::ApiV1 => "/api/v1",
            Endpoint::OpenApi => "/openapi/v3",
            Endpoint::OpenApiCore => "/openapi/v3/api/v1",
            Endpoint::OpenApiApps => "/openapi/v3/apis/apps/v1",
            Endpoint::Journal => mock_apiserver::JOURNAL_PATH,
            Endpoint::Metrics => "/metrics",
        }
    }
}

impl AnyRequest {
    fn parts(&self) -> Parts {
        let method = match self.method {
            Method::Get => M::GET,
            Method::Post => M::POST,
            Method::Put => M::PUT,
            Method::Patch => M::PATCH,
            Method::Delete => M::DELETE,
            Method::Head => M::HEAD,
            Method::Options => M::OPTIONS,
        };
        let (path, info) = match &self.target {
            Target::Resource {
                at,
                name,
                subresource,
            } => (
                at.path(name.as_ref(), subresource.as_ref().map(Word::as_str)),
                at.info(name.as_ref()),
            ),
            Target::WatchPath(at) => {
                let (_, _, plural, ..) = at.resource();
                let path = match at.namespace() {
                    Some(ns) => format!("{}/watch/namespaces/{}/{plural}", at.base(), segment(ns)),
                    None => format!("{}/watch/{plural}", at.base()),
                };
                (path, PathInfo::default())
            }
            Target::Endpoint(e) => (e.path().to_owned(), PathInfo::default()),
            Target::Group { group, version } => (
                match version {
                    Some(v) => format!("/apis/{}/{}", segment(group.as_str()), segment(v.as_str())),
                    None => format!("/apis/{}", segment(group.as_str())),
                },
                PathInfo::default(),
            ),
            Target::Raw(p) => (p.clone(), PathInfo::default()),
        };
        let mut parts = Parts::new(method, path, &self.query);
        parts.content_type = self.content_type.header().map(str::to_owned);
        parts.accept = self.accept.header().map(str::to_owned);
        parts.body = body::any(&self.body, &info);
        parts
    }
}

impl ContentType {
    fn header(&self) -> Option<&str> {
        Some(match self {
            ContentType::None => return None,
            ContentType::Json => JSON,
            ContentType::Yaml => "application/yaml",
            ContentType::Protobuf => "application/vnd.kubernetes.protobuf",
            ContentType::MergePatch => "application/merge-patch+json",
            ContentType::JsonPatch => "application/json-patch+json",
            ContentType::StrategicMergePatch => "application/strategic-merge-patch+json",
            ContentType::ApplyPatch => "application/apply-patch+yaml",
            ContentType::Other(w) => w.as_str(),
        })
    }
}

impl Accept {
    fn header(&self) -> Option<&str> {
        Some(match self {
            Accept::None => return None,
            Accept::Json => JSON,
            Accept::Table => "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
            Accept::PartialObjectMetadata => {
                "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
            }
            Accept::Protobuf => "application/vnd.kubernetes.protobuf",
            Accept::Yaml => "application/yaml",
            Accept::Other(t) => t,
        })
    }
}
