//! A generated call as an HTTP request, signed by aws-sigv4 as the input says.

use bytes::Bytes;
use http_body_util::Full;
use serde_json::{Value, json};

use super::input::{
    Call, DynamoCall, DynamoValue, QueryCall, Request, S3Body, S3Call, S3Method, Word, Xml,
};
use crate::cloud::{ACCOUNTS, Now, access_key};
use crate::pick::Vocabulary;
use crate::sign::{Signer, sign_request, system_time};

/// A request before it is signed.
struct Unsigned {
    method: &'static str,
    path: String,
    query: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// The service whose signing name the credential scope carries.
    service: &'static str,
}

impl Request {
    /// The service whose credential scope the request carries, if it is signed.
    #[must_use]
    pub fn signing_service(&self) -> Option<&str> {
        if self.signing.anonymous {
            return None;
        }
        match (&self.signing.service, &self.call) {
            (_, Call::Admin(_)) => None,
            (Some(other), _) => Some(other.as_str()),
            (None, call) => Some(service_of(call)),
        }
    }

    /// The service it calls (`s3`, `sts`, `ec2`, `dynamodb`), or `admin`.
    #[must_use]
    pub fn service(&self) -> &'static str {
        match &self.call {
            Call::Admin(_) => "admin",
            call => service_of(call),
        }
    }

    /// Whether it is signed as an SDK signs it: with a key the cloud's accounts have,
    /// for its own service, now, untampered.
    #[must_use]
    pub fn signed_well(&self) -> bool {
        let s = &self.signing;
        !matches!(self.call, Call::Admin(_))
            && !s.anonymous
            && s.service.is_none()
            && !s.stale
            && !s.tamper
            && usize::from(s.key) % (ACCOUNTS.len() + 1) < ACCOUNTS.len()
    }

    /// The HTTP request, or `None` if its parts do not make one.
    #[must_use]
    pub fn build(&self, now: Now) -> Option<http::Request<Full<Bytes>>> {
        let u = match &self.call {
            Call::Admin(a) => {
                let (method, path, query, (content_type, body)) = a.request();
                let mut uri = path.to_owned();
                if !query.is_empty() {
                    uri = format!("{uri}?{query}");
                }
                let mut builder = http::Request::builder().method(method).uri(uri);
                if let Some(ct) = content_type {
                    builder = builder.header("content-type", ct);
                }
                return builder.body(Full::new(Bytes::from(body))).ok();
            }
            Call::S3(c) => s3(c),
            Call::Sts(c) => query_call(c, "sts", "2011-06-15"),
            Call::Ec2(c) => query_call(c, "ec2", "2016-11-15"),
            Call::DynamoDb(c) => dynamodb(c),
        };
        let uri = if u.query.is_empty() {
            u.path
        } else {
            format!("{}?{}", u.path, u.query)
        };
        let mut builder = http::Request::builder()
            .method(u.method)
            .uri(uri)
            .header("host", "localhost");
        for (k, v) in &u.headers {
            builder = builder.header(k.as_str(), v.as_str());
        }
        let mut request = builder.body(Full::new(Bytes::from(u.body.clone()))).ok()?;
        if let Some(service) = self.signing_service() {
            let s = &self.signing;
            let (id, secret) = access_key(s.key);
            let at = if s.stale {
                jiff::Timestamp::from_second(1_000_000_000).unwrap_or(now.0)
            } else {
                now.0
            };
            let service = if service.is_empty() {
                u.service
            } else {
                service
            };
            let signer = Signer {
                access_key: id,
                secret,
                region: s.region.as_str(),
                service,
                time: system_time(at),
                presigned: s.presigned,
                unsigned_payload: s.unsigned_payload,
                tamper: s.tamper,
            };
            sign_request(&mut request, &u.body, &signer);
        }
        Some(request)
    }
}

fn service_of(call: &Call) -> &'static str {
    match call {
        Call::S3(_) => "s3",
        Call::Sts(_) => "sts",
        Call::Ec2(_) => "ec2",
        Call::DynamoDb(_) => "dynamodb",
        Call::Admin(_) => "",
    }
}

/// A query string as the SDKs write one: every byte but the unreserved ones
/// percent-encoded, a space as `%20`. (Not `+`: aws-sigv4 reads a `+` in a query as a
/// space, botocore as itself, so no server agrees with both, and no SDK sends one.)
fn query_string(pairs: &[(String, String)]) -> String {
    let pairs: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}={}", component(k), component(v)))
        .collect();
    pairs.join("&")
}

/// A form body (`application/x-www-form-urlencoded`).
fn form(pairs: &[(String, String)]) -> String {
    let mut form = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        form.append_pair(k, v);
    }
    form.finish()
}

fn s3(c: &S3Call) -> Unsigned {
    let method = match c.method {
        S3Method::Get => "GET",
        S3Method::Put => "PUT",
        S3Method::Head => "HEAD",
        S3Method::Delete => "DELETE",
        S3Method::Post => "POST",
    };
    let mut path = String::from("/");
    if let Some(b) = &c.bucket {
        path.push_str(&segment(b.as_str()));
        if let Some(k) = &c.key {
            path.push('/');
            let segments: Vec<String> = k.as_str().split('/').map(segment).collect();
            path.push_str(&segments.join("/"));
        }
    }
    let pairs: Vec<(String, String)> = c
        .params
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), v.as_str().to_owned()))
        .collect();
    let mut query = query_string(&pairs);
    if let Some(sub) = &c.subresource {
        let sub = component(sub.as_str());
        query = if query.is_empty() {
            sub
        } else {
            format!("{sub}&{query}")
        };
    }
    let headers = c
        .headers
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), v.as_str().to_owned()))
        .collect();
    let body = match &c.body {
        S3Body::Empty => Vec::new(),
        S3Body::Xml(x) => {
            let mut out = String::new();
            xml(x, &mut out);
            out.into_bytes()
        }
        S3Body::Bytes(b) => b.clone(),
    };
    Unsigned {
        method,
        path,
        query,
        headers,
        body,
        service: "s3",
    }
}

/// The unreserved characters, which no SDK encodes.
const UNRESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A path segment, percent-encoded as the SDKs encode S3 keys: everything but the
/// unreserved characters and `/` (an SDK never sends `%2F`; S3 canonicalizes a path by
/// decoding it, so a `%2F` would be signed as one thing and checked as another).
fn segment(s: &str) -> String {
    const PATH: &percent_encoding::AsciiSet = &UNRESERVED.remove(b'/');
    percent_encoding::utf8_percent_encode(s, PATH).to_string()
}

/// A query string's key or value, percent-encoded as the SDKs encode them.
fn component(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, UNRESERVED).to_string()
}

fn xml(x: &Xml, out: &mut String) {
    match x {
        Xml::Text(w) => out.push_str(w.as_str()),
        Xml::Raw(t) => out.push_str(t),
        Xml::Element { name, children } => {
            out.push_str(&format!("<{}>", name.as_str()));
            for c in children {
                xml(c, out);
            }
            out.push_str(&format!("</{}>", name.as_str()));
        }
    }
}

fn query_call<Ops: Vocabulary>(
    c: &QueryCall<Ops>,
    service: &'static str,
    version: &str,
) -> Unsigned {
    let mut pairs = vec![("Action".to_owned(), c.action.as_str().to_owned())];
    match &c.version {
        None => pairs.push(("Version".to_owned(), version.to_owned())),
        Some(Some(v)) => pairs.push(("Version".to_owned(), v.as_str().to_owned())),
        Some(None) => {}
    }
    pairs.extend(
        c.params
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), v.as_str().to_owned())),
    );
    let (method, query, body, headers) = if c.in_query {
        ("GET", query_string(&pairs), Vec::new(), Vec::new())
    } else {
        let ct = "application/x-www-form-urlencoded; charset=utf-8".to_owned();
        let body = form(&pairs).into_bytes();
        (
            "POST",
            String::new(),
            body,
            vec![("content-type".to_owned(), ct)],
        )
    };
    Unsigned {
        method,
        path: "/".to_owned(),
        query,
        headers,
        body,
        service,
    }
}

fn dynamodb(c: &DynamoCall) -> Unsigned {
    let pairs = |p: &[(Word, Word)], k: &str, v: &str| -> Value {
        Value::Array(
            p.iter()
                .map(|(a, b)| json!({k: a.as_str(), v: b.as_str()}))
                .collect(),
        )
    };
    let object: serde_json::Map<String, Value> = c
        .fields
        .iter()
        .map(|(k, v)| {
            let v = match v {
                DynamoValue::Name(w) => json!(w.as_str()),
                DynamoValue::Attributes(p) => pairs(p, "AttributeName", "AttributeType"),
                DynamoValue::Keys(p) => pairs(p, "AttributeName", "KeyType"),
                DynamoValue::Throughput(r, w) => {
                    json!({"ReadCapacityUnits": r, "WriteCapacityUnits": w})
                }
                DynamoValue::Tags(p) => pairs(p, "Key", "Value"),
                DynamoValue::Strings(s) => json!(s.iter().map(Word::as_str).collect::<Vec<_>>()),
                DynamoValue::Any(j) => j.value(),
            };
            (k.as_str().to_owned(), v)
        })
        .collect();
    let content_type = c
        .content_type
        .as_ref()
        .map_or("application/x-amz-json-1.0", |w| w.as_str());
    Unsigned {
        method: "POST",
        path: "/".to_owned(),
        query: String::new(),
        headers: vec![
            ("content-type".to_owned(), content_type.to_owned()),
            (
                "x-amz-target".to_owned(),
                format!("DynamoDB_20120810.{}", c.operation.as_str()),
            ),
        ],
        body: Value::Object(object).to_string().into_bytes(),
        service: "dynamodb",
    }
}
