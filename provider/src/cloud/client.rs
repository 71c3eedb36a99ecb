//! The mock-cloud client: JSON over HTTP/1.1 through any tower `Service`.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use serde::Deserialize;
use serde_json::{Value, json};
use tower::util::BoxCloneSyncService;
use tower::{BoxError, Service, ServiceExt};

use super::error::CloudError;
use super::unreachable::UnreachableLog;

/// The most body bytes read from an answer.
const MAX_ANSWER: usize = 1 << 20;

/// Labels of `provider_cloud_requests_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CloudRequestLabels {
    /// `observe`, `create`, `update` or `delete`.
    pub action: String,
    /// The HTTP status, or `timeout`, `transport`.
    pub code: String,
}

/// Cloud requests by action and outcome.
pub type CloudRequests = Family<CloudRequestLabels, Counter>;

type Transport =
    BoxCloneSyncService<Request<Full<Bytes>>, Response<BoxBody<Bytes, BoxError>>, BoxError>;

/// A cloud client: a base URL, a transport, a timeout per call, and a counter of calls.
/// Clones share the transport and the counter.
///
/// # Semantics
/// The client never retries. A 429, or a 503 with `Retry-After`, is
/// [`CloudError::Throttled`]; the reconciler reports it, and the work queue's per-item
/// backoff paces the next try.
#[derive(Clone)]
pub struct CloudClient {
    transport: Transport,
    base: String,
    timeout: Duration,
    requests: CloudRequests,
    unreachable: UnreachableLog,
}

impl std::fmt::Debug for CloudClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloudClient")
            .field("base", &self.base)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// The default time a cloud call may take: crossplane-runtime's external-call timeout.
pub const DEFAULT_CLOUD_TIMEOUT: Duration = Duration::from_secs(60);

impl CloudClient {
    /// A client sending to `base_url` (such as `http://127.0.0.1:8080`; in-process any
    /// `http://host` does) through `service`: `mock_cloud::MockCloud` in-process, or a hyper
    /// client over sockets ([`CloudClient::http`]).
    pub fn new<S, B>(service: S, base_url: impl Into<String>) -> Self
    where
        S: Service<Request<Full<Bytes>>, Response = Response<B>> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
        B: http_body::Body<Data = Bytes> + Send + Sync + 'static,
        B::Error: Into<BoxError>,
    {
        let transport = service
            .map_response(|r: Response<B>| r.map(|b| b.map_err(Into::into).boxed()))
            .map_err(Into::into);
        CloudClient {
            transport: BoxCloneSyncService::new(transport),
            base: base_url.into().trim_end_matches('/').to_owned(),
            timeout: DEFAULT_CLOUD_TIMEOUT,
            requests: CloudRequests::default(),
            unreachable: UnreachableLog::default(),
        }
    }

    /// A client over plain HTTP/1.1 sockets (hyper-util's pooled client).
    #[must_use]
    pub fn http(base_url: impl Into<String>) -> Self {
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build_http::<Full<Bytes>>();
        CloudClient::new(client, base_url)
    }

    /// With a timeout per call (default [`DEFAULT_CLOUD_TIMEOUT`]).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Counts calls into `requests` (shared with the provider's metrics).
    #[must_use]
    pub fn with_requests(mut self, requests: CloudRequests) -> Self {
        self.requests = requests;
        self
    }

    /// The call counter.
    #[must_use]
    pub fn requests(&self) -> &CloudRequests {
        &self.requests
    }

    /// The client for one account, authenticating with `token`.
    #[must_use]
    pub fn account(&self, account: &str, token: &str) -> AccountClient {
        AccountClient {
            client: self.clone(),
            account: account.to_owned(),
            token: token.to_owned(),
        }
    }

    async fn send(
        &self,
        action: &'static str,
        request: Request<Full<Bytes>>,
    ) -> Result<(StatusCode, http::HeaderMap, Bytes), CloudError> {
        let transport = self.transport.clone();
        // Boxed with an explicit `Send` so that callers' futures stay `Send` in generic code
        // (the boxed-error conversions otherwise trip rustc's higher-ranked inference).
        let exchange: Pin<Box<dyn Future<Output = Result<Exchange, CloudError>> + Send>> =
            Box::pin(exchange(transport, request));
        let result = tokio::time::timeout(self.timeout, exchange)
            .await
            .unwrap_or(Err(CloudError::Timeout(self.timeout)));
        let code = match &result {
            Ok((status, _, _)) => status.as_u16().to_string(),
            Err(e) => e.code_label(),
        };
        if let Err(e @ (CloudError::Transport(_) | CloudError::Timeout(_))) = &result {
            self.unreachable.failed(&self.base, e);
        }
        self.requests
            .get_or_create(&CloudRequestLabels {
                action: action.to_owned(),
                code,
            })
            .inc();
        result
    }
}

type Exchange = (StatusCode, http::HeaderMap, Bytes);

async fn exchange(
    transport: Transport,
    request: Request<Full<Bytes>>,
) -> Result<Exchange, CloudError> {
    let response = transport
        .oneshot(request)
        .await
        .map_err(CloudError::Transport)?;
    let (parts, mut body) = response.into_parts();
    let mut read = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(CloudError::Transport)?;
        if let Ok(data) = frame.into_data() {
            if read.len() + data.len() > MAX_ANSWER {
                return Err(CloudError::Transport(
                    format!("answer larger than {MAX_ANSWER} bytes").into(),
                ));
            }
            read.extend_from_slice(&data);
        }
    }
    Ok((parts.status, parts.headers, Bytes::from(read)))
}

/// A resource as the cloud reports it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct CloudResource {
    /// Name in its account and collection.
    pub name: String,
    /// `creating`, `available` or `deleting`.
    pub state: String,
    /// 1 at creation, +1 on every update.
    pub generation: u64,
    /// The spec as last written.
    #[serde(default)]
    pub spec: Value,
}

impl CloudResource {
    /// Whether the resource is ready for use.
    #[must_use]
    pub fn is_available(&self) -> bool {
        self.state == "available"
    }
}

/// A [`CloudClient`] bound to an account and token: the four calls a managed reconciler
/// makes.
#[derive(Clone, Debug)]
pub struct AccountClient {
    client: CloudClient,
    account: String,
    token: String,
}

impl AccountClient {
    /// The account.
    #[must_use]
    pub fn account(&self) -> &str {
        &self.account
    }

    fn request(
        &self,
        method: Method,
        collection: &str,
        name: Option<&str>,
        body: Option<Value>,
    ) -> Result<http::request::Builder, CloudError> {
        let mut path = format!("/v1/accounts/{}/{collection}", self.account);
        if let Some(name) = name {
            path.push('/');
            path.push_str(name);
        }
        let uri = format!("{}{path}", self.client.base);
        let uri: http::Uri =
            uri.parse()
                .map_err(|e: http::uri::InvalidUri| CloudError::Request {
                    path: path.clone(),
                    source: e.into(),
                })?;
        let mut builder = Request::builder()
            .method(method)
            .uri(uri)
            .header(header::AUTHORIZATION, format!("Bearer {}", self.token))
            .header(header::ACCEPT, "application/json");
        if body.is_some() {
            builder = builder.header(header::CONTENT_TYPE, "application/json");
        }
        Ok(builder)
    }

    async fn call(
        &self,
        action: &'static str,
        builder: http::request::Builder,
        body: Option<Value>,
    ) -> Result<(StatusCode, Bytes), CloudError> {
        let bytes = body.map(|b| Bytes::from(b.to_string())).unwrap_or_default();
        let request = builder
            .body(Full::new(bytes))
            .map_err(|source| CloudError::Request {
                path: String::new(),
                source,
            })?;
        let (status, headers, body) = self.client.send(action, request).await?;
        if status.is_success() || status == StatusCode::NOT_FOUND {
            return Ok((status, body));
        }
        let retry_after = headers
            .get(header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        if status == StatusCode::TOO_MANY_REQUESTS
            || (status == StatusCode::SERVICE_UNAVAILABLE && retry_after.is_some())
        {
            return Err(CloudError::Throttled {
                status: status.as_u16(),
                retry_after,
            });
        }
        Err(api_error(status, &body))
    }

    /// Observe: the resource, or `None` when the cloud has no such resource.
    ///
    /// # Errors
    /// Anything but 200 or 404.
    pub async fn get(
        &self,
        collection: &str,
        name: &str,
    ) -> Result<Option<CloudResource>, CloudError> {
        let builder = self.request(Method::GET, collection, Some(name), None)?;
        let (status, body) = self.call("observe", builder, None).await?;
        if status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        decode(status, &body).map(Some)
    }

    /// Create, with an `Idempotency-Key`: a retry with the same key returns the first
    /// result instead of a second resource.
    ///
    /// # Errors
    /// Anything but 201 (a 404 means the account does not exist).
    pub async fn create(
        &self,
        collection: &str,
        name: &str,
        spec: &Value,
        idempotency_key: &str,
    ) -> Result<CloudResource, CloudError> {
        let body = json!({"name": name, "spec": spec});
        let builder = self
            .request(Method::POST, collection, None, Some(body.clone()))?
            .header("idempotency-key", idempotency_key);
        let (status, body) = self.call("create", builder, Some(body)).await?;
        if status == StatusCode::NOT_FOUND {
            return Err(api_error(status, &body));
        }
        decode(status, &body)
    }

    /// Update the spec.
    ///
    /// # Errors
    /// Anything but 200 (including 404: the resource vanished).
    pub async fn update(
        &self,
        collection: &str,
        name: &str,
        spec: &Value,
    ) -> Result<CloudResource, CloudError> {
        let body = json!({"spec": spec});
        let builder = self.request(Method::PUT, collection, Some(name), Some(body.clone()))?;
        let (status, body) = self.call("update", builder, Some(body)).await?;
        if status == StatusCode::NOT_FOUND {
            return Err(api_error(status, &body));
        }
        decode(status, &body)
    }

    /// Delete; a resource that is already gone counts as deleted.
    ///
    /// # Errors
    /// Anything but 200, 202 or 404.
    pub async fn delete(&self, collection: &str, name: &str) -> Result<(), CloudError> {
        let builder = self.request(Method::DELETE, collection, Some(name), None)?;
        self.call("delete", builder, None).await.map(|_| ())
    }
}

fn decode(status: StatusCode, body: &[u8]) -> Result<CloudResource, CloudError> {
    serde_json::from_slice(body).map_err(|source| CloudError::Decode {
        status: status.as_u16(),
        source,
    })
}

fn api_error(status: StatusCode, body: &[u8]) -> CloudError {
    #[derive(Deserialize)]
    struct Envelope {
        error: Inner,
    }
    #[derive(Deserialize)]
    struct Inner {
        #[serde(default)]
        code: String,
        #[serde(default)]
        message: String,
    }
    match serde_json::from_slice::<Envelope>(body) {
        Ok(e) => CloudError::Api {
            status: status.as_u16(),
            code: e.error.code,
            message: e.error.message,
        },
        Err(_) => {
            let text = String::from_utf8_lossy(body);
            CloudError::Api {
                status: status.as_u16(),
                code: String::new(),
                message: text.chars().take(200).collect(),
            }
        }
    }
}
