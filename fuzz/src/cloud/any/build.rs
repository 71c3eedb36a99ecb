//! An [`AnyRequest`] as an HTTP request: the path, the query, the body, and the
//! credentials, SigV4-signed with the cloud's keys where the input asks for it.

use bytes::Bytes;
use http_body_util::Full;

use super::{Admin, AnyRequest, Auth, Body, Query, SigV4, Target};
use crate::cloud::input::AccountRef;
use crate::cloud::{ACCOUNTS, Now, access_key, config_yaml};
use crate::sign::{Signer, sign_request, system_time};

impl SigV4 {
    /// Signs `request` as the input says (aws-sigv4; a request it cannot sign goes as it
    /// is).
    fn apply<B>(&self, request: &mut http::Request<B>, body: &[u8], now: Now) {
        let (id, secret) = access_key(self.key);
        let at = if self.current {
            now.0
        } else {
            jiff::Timestamp::from_second(1_000_000_000).unwrap_or(now.0)
        };
        let signer = Signer {
            access_key: id,
            secret,
            region: self.region.as_str(),
            service: self.service.as_str(),
            time: system_time(at),
            presigned: self.presigned,
            unsigned_payload: self.unsigned_payload,
            tamper: !self.valid,
        };
        sign_request(request, body, &signer);
    }
}

impl AnyRequest {
    /// The HTTP request, or `None` if its parts do not make one.
    pub(in crate::cloud) fn build(&self, now: Now) -> Option<http::Request<Full<Bytes>>> {
        let path = self.path();
        let pairs: Vec<(String, String)> = match &self.query {
            Query::Pairs(p) => p
                .iter()
                .map(|(k, v)| (k.as_str().to_owned(), v.as_str().to_owned()))
                .collect(),
            Query::None | Query::Raw(_) => Vec::new(),
        };
        let mut headers: Vec<(String, String)> = vec![("host".into(), "localhost".into())];
        let (body, content_type, amz_target) = self.body_bytes();
        if let Some(ct) = content_type {
            headers.push(("content-type".into(), ct.to_owned()));
        }
        if let Some(t) = amz_target {
            headers.push(("x-amz-target".into(), t));
        }
        let authorization = match &self.auth {
            Auth::None => None,
            Auth::Bearer(i) => {
                let token = ACCOUNTS
                    .get(usize::from(*i) % (ACCOUNTS.len() + 1))
                    .map_or("t-nobody", |a| a.token);
                Some(format!("Bearer {token}"))
            }
            Auth::BearerRaw(t) => Some(format!("Bearer {}", t.0)),
            Auth::Raw(t) => Some(t.0.clone()),
            Auth::SigV4(_) => None,
        };
        let query = match &self.query {
            Query::Raw(t) => Some(t.0.clone()),
            _ if pairs.is_empty() => None,
            _ => Some(
                pairs
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join("&"),
            ),
        };
        let uri = match query {
            Some(q) => format!("{path}?{q}"),
            None => path,
        };
        let mut builder = http::Request::builder()
            .method(http::Method::from_bytes(self.method.as_str().as_bytes()).ok()?)
            .uri(uri);
        for (k, v) in &headers {
            builder = builder.header(k.as_str(), v.as_str());
        }
        if let Some(a) = authorization {
            builder = builder.header("authorization", a);
        }
        for (k, v) in &self.headers {
            builder = builder.header(k.as_str(), v.0.as_str());
        }
        let mut request = builder.body(Full::new(Bytes::from(body.clone()))).ok()?;
        if let Auth::SigV4(s) = &self.auth {
            s.apply(&mut request, &body, now);
        }
        Some(request)
    }

    fn path(&self) -> String {
        match &self.target {
            Target::Api {
                account,
                collection,
                name,
            } => {
                let account = match account {
                    AccountRef::Known(i) => ACCOUNTS[usize::from(*i) % ACCOUNTS.len()].name,
                    AccountRef::Other(w) => w.as_str(),
                };
                match name {
                    Some(n) => format!(
                        "/v1/accounts/{account}/{}/{}",
                        collection.as_str(),
                        n.as_str()
                    ),
                    None => format!("/v1/accounts/{account}/{}", collection.as_str()),
                }
            }
            Target::Admin(a) => match a {
                Admin::Calls => mock_cloud::admin::CALLS_PATH,
                Admin::Summary => mock_cloud::admin::SUMMARY_PATH,
                Admin::Inventory => mock_cloud::admin::INVENTORY_PATH,
                Admin::Faults => mock_cloud::admin::FAULTS_PATH,
                Admin::Reset => mock_cloud::admin::RESET_PATH,
                Admin::Config => mock_cloud::admin::CONFIG_PATH,
                Admin::Unknown => "/admin/v1/nothing",
            }
            .to_owned(),
            Target::Metrics => "/metrics".to_owned(),
            Target::Root => "/".to_owned(),
            Target::S3 { bucket, key } => match key {
                Some(k) => format!("/{}/{}", bucket.as_str(), k.as_str()),
                None => format!("/{}", bucket.as_str()),
            },
            Target::Raw(t) => t.0.clone(),
        }
    }

    /// The body, its content type, and an `X-Amz-Target`.
    fn body_bytes(&self) -> (Vec<u8>, Option<&'static str>, Option<String>) {
        const JSON: Option<&str> = Some("application/json");
        match &self.body {
            Body::Empty => (Vec::new(), None, None),
            Body::Raw(b) => (b.clone(), None, None),
            Body::Resource { name, spec, extra } => {
                let mut object = serde_json::Map::new();
                if let Some(n) = name {
                    object.insert("name".into(), n.as_str().into());
                }
                if let Some(spec) = spec.value() {
                    object.insert("spec".into(), spec);
                }
                if let Some((k, v)) = extra {
                    object.insert(k.as_str().to_owned(), v.value());
                }
                (
                    serde_json::Value::Object(object).to_string().into_bytes(),
                    JSON,
                    None,
                )
            }
            Body::Json(j) | Body::Faults(j) => (j.value().to_string().into_bytes(), JSON, None),
            Body::Form { action, pairs } => {
                let mut form = format!("Action={}", action.as_str());
                for (k, v) in pairs {
                    form.push_str(&format!("&{}={}", k.as_str(), v.as_str()));
                }
                (
                    form.into_bytes(),
                    Some("application/x-www-form-urlencoded; charset=utf-8"),
                    None,
                )
            }
            Body::DynamoDb { operation, body } => (
                body.value().to_string().into_bytes(),
                Some("application/x-amz-json-1.0"),
                Some(format!("DynamoDB_20120810.{}", operation.as_str())),
            ),
            Body::Xml(x) => {
                let mut out = String::new();
                x.write(&mut out);
                (out.into_bytes(), Some("application/xml"), None)
            }
            Body::Config { setup, aws, tail } => {
                let mut yaml = config_yaml(*setup, *aws);
                yaml.push_str(&tail.0);
                (yaml.into_bytes(), Some("application/yaml"), None)
            }
        }
    }
}
