//! A generated [`Request`] as an HTTP request: generic API calls with their bearer
//! tokens, admin calls (`admin.rs`), requests of any shape (`any/build.rs`).

use bytes::Bytes;
use http_body_util::Full;

use serde_json::{Value, json};

use super::ACCOUNTS;
use super::input::{AccountRef, At, Credential, ListParam, Op, Request};

/// Where the cloud's clock stands, for `X-Amz-Date`.
#[derive(Debug, Clone, Copy)]
pub struct Now(pub jiff::Timestamp);

impl Request {
    /// The HTTP request, or `None` if its parts do not make one (an invalid method, URI or
    /// header: hyper would have refused it before the service saw it).
    #[must_use]
    pub fn build(&self, now: Now) -> Option<http::Request<Full<Bytes>>> {
        let json = |v: Value| (Some("application/json"), v.to_string().into_bytes());
        let (method, path, query, auth, (content_type, body)) = match &self.op {
            Op::Any(a) => return a.build(now),
            Op::Create {
                at,
                name,
                spec,
                extra,
            } => {
                let mut object = serde_json::Map::new();
                if let Some(n) = name {
                    object.insert("name".into(), n.text().into());
                }
                if let Some(spec) = spec.value() {
                    object.insert("spec".into(), spec);
                }
                if let Some((k, v)) = extra {
                    object.insert(k.as_str().to_owned(), v.value());
                }
                (
                    "POST",
                    at.path(None),
                    String::new(),
                    at.auth(),
                    json(object.into()),
                )
            }
            Op::Get { at, name } => (
                "GET",
                at.path(Some(&name.text())),
                String::new(),
                at.auth(),
                (None, Vec::new()),
            ),
            Op::List { at, query } => {
                let mut form = form_urlencoded::Serializer::new(String::new());
                for (param, value) in query {
                    let key = match param {
                        ListParam::Limit => "limit",
                        ListParam::PageToken => "page_token",
                        ListParam::Other => "other",
                    };
                    form.append_pair(key, value.as_str());
                }
                (
                    "GET",
                    at.path(None),
                    form.finish(),
                    at.auth(),
                    (None, Vec::new()),
                )
            }
            Op::Update { at, name, spec } => {
                let body = spec
                    .value()
                    .map_or_else(|| json!({}), |s| json!({"spec": s}));
                (
                    "PUT",
                    at.path(Some(&name.text())),
                    String::new(),
                    at.auth(),
                    json(body),
                )
            }
            Op::Delete { at, name } => (
                "DELETE",
                at.path(Some(&name.text())),
                String::new(),
                at.auth(),
                (None, Vec::new()),
            ),
            Op::Admin(a) => {
                let (method, path, query, body) = a.request();
                (method, path.to_owned(), query, None, body)
            }
        };
        let uri = if query.is_empty() {
            path
        } else {
            format!("{path}?{query}")
        };
        let mut builder = http::Request::builder().method(method).uri(uri);
        if let Some(ct) = content_type {
            builder = builder.header("content-type", ct);
        }
        if let Some(a) = auth {
            builder = builder.header("authorization", a);
        }
        builder.body(Full::new(Bytes::from(body))).ok()
    }
}

impl At {
    /// `/v1/accounts/{account}/{collection}[/{name}]`, the name percent-encoded.
    fn path(&self, name: Option<&str>) -> String {
        let account = match &self.account {
            AccountRef::Known(i) => ACCOUNTS[usize::from(*i) % ACCOUNTS.len()].name,
            AccountRef::Other(w) => w.as_str(),
        };
        let mut path = format!("/v1/accounts/{account}/{}", self.collection.as_str());
        if let Some(n) = name {
            path.push('/');
            path.extend(percent_encoding::utf8_percent_encode(
                n,
                percent_encoding::NON_ALPHANUMERIC,
            ));
        }
        path
    }

    /// The `Authorization` header.
    fn auth(&self) -> Option<String> {
        let token = match &self.credential {
            Credential::Own => match &self.account {
                AccountRef::Known(i) => ACCOUNTS[usize::from(*i) % ACCOUNTS.len()].token,
                AccountRef::Other(_) => ACCOUNTS[0].token,
            },
            Credential::Other(i) => ACCOUNTS
                .get(usize::from(*i) % (ACCOUNTS.len() + 1))
                .map_or("t-nobody", |a| a.token),
            Credential::None => return None,
            Credential::Raw(t) => return Some(t.0.clone()),
        };
        Some(format!("Bearer {token}"))
    }
}
