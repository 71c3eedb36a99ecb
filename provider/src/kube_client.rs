//! The process's one Kubernetes client: every request goes through one client-go-style QPS
//! limit (QPS 5R, burst 10R; none for the `controller-runtime` model) and is counted.
//!
//! # How kube's own retry counts
//! A client built from a kubeconfig ([`from_kubeconfig`]) keeps kube's default retry policy
//! (429, 503 and 504, honouring an integer `Retry-After`, up to 15 retries). That retry sits
//! *below* our layer: a logical request takes one token and is counted once in
//! `provider_kube_requests_total` and in `rest_client_requests_total`, however many
//! attempts the server forced. The API server sees every attempt, so a throttling server
//! observes more requests than 5R/s, and more than `rest_client_requests_total` says
//! (client-go counts each attempt there). A client built with [`limited_client`] over an
//! in-process service has no retry at all.
//!
//! # client-go's name for the count
//! `rest_client_requests_total{code, method, host}` is what client-go (through
//! controller-runtime's registry) exports for every request, so a harness reads the same
//! name from any provider: `method` is the HTTP method (a watch is a `GET`), `code` the
//! status or `<error>` when no response came, `host` the API server's `host:port` (the
//! kubeconfig's server), or `in-process` for a client over an in-process service.

use std::future::Future;
use std::num::NonZeroU32;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::{Request, Response};
use kube::client::{Body, ClientBuilder};
use limiter::client_qps::{ClientQps, ClientQpsLayer};
use limiter::crossplane::Settings;
use limiter::rate::Limit;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use tower::buffer::Buffer;
use tower::{BoxError, Layer, Service};

/// Requests queued in front of the transport (kube's own `Client::new` uses 1024 too).
const BUFFER: usize = 1024;

/// Labels of `provider_kube_requests_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KubeRequestLabels {
    /// `GET`, `WATCH` (a GET with `watch=true`), `POST`, `PUT`, `PATCH` or `DELETE`.
    pub verb: String,
    /// The HTTP status, or `error` when no response came.
    pub code: String,
}

/// Labels of `rest_client_requests_total`, as client-go's `RequestResult` metric has them.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RestRequestLabels {
    /// The HTTP status, or `<error>` when no response came.
    pub code: String,
    /// The HTTP method (`GET` for a watch too).
    pub method: String,
    /// The API server's `host:port`, or `in-process`.
    pub host: String,
}

/// The `host` label of a client over an in-process service.
pub const IN_PROCESS_HOST: &str = "in-process";

/// Kubernetes requests, counted twice over: by verb and status in our own name
/// (`provider_kube_requests_total`), and by status, method and host in client-go's
/// (`rest_client_requests_total`). Clones count into the same families.
#[derive(Clone, Debug, Default)]
pub struct KubeRequests {
    by_verb: Family<KubeRequestLabels, Counter>,
    rest: Family<RestRequestLabels, Counter>,
}

impl KubeRequests {
    /// `provider_kube_requests_total`.
    #[must_use]
    pub fn by_verb(&self) -> &Family<KubeRequestLabels, Counter> {
        &self.by_verb
    }

    /// `rest_client_requests_total`.
    #[must_use]
    pub fn rest(&self) -> &Family<RestRequestLabels, Counter> {
        &self.rest
    }

    /// Counts one request of `method` (`watch`: its query asks for a watch) to `host` that
    /// ended with `code` (`None`: no response).
    fn count(&self, method: &http::Method, watch: bool, host: &str, code: Option<u16>) {
        let verb = if watch {
            "WATCH".to_owned()
        } else {
            method.as_str().to_owned()
        };
        let (ours, theirs) = match code {
            Some(c) => (c.to_string(), c.to_string()),
            None => ("error".to_owned(), "<error>".to_owned()),
        };
        self.by_verb
            .get_or_create(&KubeRequestLabels { verb, code: ours })
            .inc();
        self.rest
            .get_or_create(&RestRequestLabels {
                code: theirs,
                method: method.as_str().to_owned(),
                host: host.to_owned(),
            })
            .inc();
    }
}

/// The layer that makes a transport the provider's client stack: a buffer (so the stack is
/// `Clone`), a request counter, and the QPS limit.
#[derive(Clone, Debug)]
pub struct KubeStackLayer {
    qps: ClientQpsLayer,
    requests: KubeRequests,
    host: String,
}

impl KubeStackLayer {
    /// The stack for `settings` (QPS 5R / burst 10R, or unlimited), counting into
    /// `requests`.
    #[must_use]
    pub fn new(settings: &Settings, requests: KubeRequests) -> Self {
        let qps = match settings.api_client_limit() {
            Some(limit) => ClientQpsLayer::new(
                f64::from(limit.qps),
                u32::try_from(limit.burst)
                    .ok()
                    .and_then(NonZeroU32::new)
                    .unwrap_or(NonZeroU32::MIN),
            ),
            None => ClientQpsLayer::new(Limit::INF.0, NonZeroU32::MIN),
        };
        KubeStackLayer {
            qps,
            requests,
            host: IN_PROCESS_HOST.to_owned(),
        }
    }

    /// The same, counting requests to `host` (`host:port`, the `host` label of
    /// `rest_client_requests_total`); default [`IN_PROCESS_HOST`].
    #[must_use]
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.host = host.into();
        self
    }

    /// The QPS layer (its bucket is shared by every client built from this layer).
    #[must_use]
    pub fn qps(&self) -> &ClientQpsLayer {
        &self.qps
    }
}

impl<S> Layer<S> for KubeStackLayer
where
    S: Service<Request<Body>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError> + Send + Sync,
{
    type Service = ClientQps<CountRequests<Buffer<Request<Body>, S::Future>>>;

    fn layer(&self, inner: S) -> Self::Service {
        let buffered = Buffer::new(inner, BUFFER);
        self.qps.layer(CountRequests {
            inner: buffered,
            requests: self.requests.clone(),
            host: self.host.clone().into(),
        })
    }
}

/// Counts each request by verb and status, and by status, method and host.
#[derive(Clone, Debug)]
pub struct CountRequests<S> {
    inner: S,
    requests: KubeRequests,
    host: std::sync::Arc<str>,
}

impl<S, B> Service<Request<Body>> for CountRequests<S>
where
    S: Service<Request<Body>, Response = Response<B>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let watch = request
            .uri()
            .query()
            .is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"));
        let method = request.method().clone();
        let (requests, host) = (self.requests.clone(), std::sync::Arc::clone(&self.host));
        let future = self.inner.call(request);
        Box::pin(async move {
            let result = future.await;
            let code = result.as_ref().ok().map(|r| r.status().as_u16());
            requests.count(&method, watch, &host, code);
            result
        })
    }
}

/// A client over `service` (for example `mock_apiserver::ApiServer::service()`), limited and
/// counted by `layer`.
///
/// # Panics
/// Outside a tokio runtime (the buffer spawns its worker).
pub fn limited_client<S, B>(
    service: S,
    default_namespace: &str,
    layer: &KubeStackLayer,
) -> kube::Client
where
    S: Service<Request<Body>, Response = Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError> + Send + Sync,
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    ClientBuilder::new(service, default_namespace)
        .with_layer(layer)
        .build()
}

/// Why no client could be built.
#[derive(Debug, thiserror::Error)]
pub enum KubeConfigError {
    /// The kubeconfig could not be read.
    #[error("cannot read kubeconfig {path}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// Neither in-cluster nor `KUBECONFIG` config was found.
    #[error("cannot find a Kubernetes config (in-cluster or KUBECONFIG)")]
    Infer(#[source] kube::config::InferConfigError),
    /// The client could not be built (for example a bad certificate in the kubeconfig).
    #[error("cannot build the Kubernetes client")]
    Build(#[source] kube::Error),
}

/// A client from `--kubeconfig`, or else in-cluster config, or else `KUBECONFIG`, limited
/// and counted by `layer`. kube's default retry stays on (see the module docs).
///
/// # Errors
/// See [`KubeConfigError`].
pub async fn from_kubeconfig(
    path: Option<&std::path::Path>,
    layer: &KubeStackLayer,
) -> Result<kube::Client, KubeConfigError> {
    let config = match path {
        Some(path) => {
            let kubeconfig = kube::config::Kubeconfig::read_from(path).map_err(|source| {
                KubeConfigError::Read {
                    path: path.display().to_string(),
                    source,
                }
            })?;
            kube::Config::from_custom_kubeconfig(
                kubeconfig,
                &kube::config::KubeConfigOptions::default(),
            )
            .await
            .map_err(|source| KubeConfigError::Read {
                path: path.display().to_string(),
                source,
            })?
        }
        None => kube::Config::infer()
            .await
            .map_err(KubeConfigError::Infer)?,
    };
    let host = config
        .cluster_url
        .authority()
        .map_or_else(|| layer.host.clone(), ToString::to_string);
    let builder = ClientBuilder::try_from(config).map_err(KubeConfigError::Build)?;
    Ok(builder.with_layer(&layer.clone().host(host)).build())
}
