//! An [`AnyRequest`] as an HTTP request: the path, the query, the body, and the
//! credentials, SigV4-signed with the cloud's keys where the input asks for it.

use bytes::Bytes;
use http_body_util::Full;

use super::{Admin, AnyRequest, Auth, Body, Query, SigV4, Target};
use crate::cloud::input::AccountRef;
use crate::cloud::{ACCOUNTS, Now, config_yaml};
use crate::sigv4;

/// Characters that need no escaping in a path or a query (SigV4's unreserved set).
fn unreserved(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

impl AnyRequest {
    /// The HTTP request, or `None` if its parts do not make one.
    pub(in crate::cloud) fn build(&self, now: Now) -> Option<http::Request<Full<Bytes>>> {
        let path = self.path();
        let mut pairs: Vec<(String, String)> = match &self.query {
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
            Auth::SigV4(s) => self.sign(s, now, &path, &body, &mut pairs, &mut headers)?,
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
        builder.body(Full::new(Bytes::from(body))).ok()
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

    /// Signs the request: adds the SigV4 query pairs (presigned) or headers, and returns
    /// the `Authorization` value (none when presigned).
    fn sign(
        &self,
        s: &SigV4,
        now: Now,
        path: &str,
        body: &[u8],
        pairs: &mut Vec<(String, String)>,
        headers: &mut Vec<(String, String)>,
    ) -> Option<Option<String>> {
        let (id, secret) = ACCOUNTS
            .get(usize::from(s.key) % (ACCOUNTS.len() + 1))
            .map_or(("AKIAFUZZNOBODY000003", "s-nobody"), |a| {
                (a.access_key, a.secret)
            });
        let at = if s.current {
            now.0
        } else {
            jiff::Timestamp::from_second(1_000_000_000).ok()?
        };
        let amz_date = at.strftime("%Y%m%dT%H%M%SZ").to_string();
        let payload_hash = if s.unsigned_payload {
            "UNSIGNED-PAYLOAD".to_owned()
        } else {
            sigv4::sha256_hex(body)
        };
        let service = s.service.as_str();
        if service == "s3" {
            headers.push(("x-amz-content-sha256".into(), payload_hash.clone()));
        }
        let region = if unreserved(s.region.as_str()) {
            s.region.as_str()
        } else {
            "us-east-1"
        };
        let key = sigv4::Key { id, secret };
        if s.presigned {
            let scope = format!("{}/{region}/{service}/aws4_request", amz_date.get(..8)?);
            pairs.extend([
                ("X-Amz-Algorithm".into(), "AWS4-HMAC-SHA256".into()),
                (
                    "X-Amz-Credential".into(),
                    format!("{id}%2F{}", scope.replace('/', "%2F")),
                ),
                ("X-Amz-Date".into(), amz_date.clone()),
                ("X-Amz-Expires".into(), "900".into()),
                ("X-Amz-SignedHeaders".into(), "host".into()),
            ]);
            let host = [("host".to_owned(), "localhost".to_owned())];
            let signing = sigv4::Signing {
                method: self.method.as_str(),
                path,
                query: pairs,
                headers: &host,
                payload_hash: "UNSIGNED-PAYLOAD".into(),
                amz_date: &amz_date,
                region,
                service,
            };
            let signature = sigv4::signature(&signing, key);
            let signature = if s.valid { signature } else { "0".repeat(64) };
            pairs.push(("X-Amz-Signature".into(), signature));
            Some(None)
        } else {
            headers.push(("x-amz-date".into(), amz_date.clone()));
            let signing = sigv4::Signing {
                method: self.method.as_str(),
                path,
                query: pairs,
                headers,
                payload_hash,
                amz_date: &amz_date,
                region,
                service,
            };
            let mut auth = sigv4::authorization(&signing, key);
            if !s.valid {
                auth.truncate(auth.len() - 64);
                auth.push_str(&"0".repeat(64));
            }
            Some(Some(auth))
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
