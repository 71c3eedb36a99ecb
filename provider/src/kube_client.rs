//! The process's Kubernetes clients: every request goes through a client-go-style QPS limit
//! (QPS 5R, burst 10R; none for the `controller-runtime` model) and is counted. By default
//! one client, so one limiter, serves every request; with `--event-client=separate` the
//! event recorder has a client of its own whose bucket has the same QPS and burst, as
//! client-go builds one bucket per REST client of a controller-runtime provider
//! ([`KubeClients`]).
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
use limiter::crossplane::{EventClient, Settings};
use limiter::rate::Limit;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use tower::buffer::Buffer;
use tower::{BoxError, Layer, Service};

/// Requests queued in front of the transport (kube's own `Client::new` uses 1024 too).
const BUFFER: usize = 1024;

/// What every `User-Agent` of this provider starts with: the program's name and a slash,
/// as client-go's `DefaultKubernetesUserAgent` begins.
pub const USER_AGENT_PREFIX: &str = "provider/";

/// The `User-Agent` of the provider's Kubernetes requests, in client-go's convention
/// (`BINARY/VERSION (OS/ARCH) kubernetes/COMMIT`, Go's names for the OS and architecture):
/// `provider/v0.1.0 (linux/amd64) kube-rs`. An API server's journal or audit log tells the
/// provider's requests apart by it.
#[must_use]
pub fn user_agent() -> &'static str {
    static AGENT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        let arch = match std::env::consts::ARCH {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            "x86" => "386",
            other => other,
        };
        format!(
            "{USER_AGENT_PREFIX}v{} ({}/{arch}) kube-rs",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS
        )
    });
    &AGENT
}

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
    /// The limit's QPS and burst, for a second bucket of the same size.
    limit: (f64, NonZeroU32),
    event_client: EventClient,
    host: String,
}

impl KubeStackLayer {
    /// The stack for `settings` (QPS 5R / burst 10R, or unlimited), counting into
    /// `requests`.
    #[must_use]
    pub fn new(settings: &Settings, requests: KubeRequests) -> Self {
        let limit = match settings.api_client_limit() {
            Some(limit) => (
                f64::from(limit.qps),
                u32::try_from(limit.burst)
                    .ok()
                    .and_then(NonZeroU32::new)
                    .unwrap_or(NonZeroU32::MIN),
            ),
            None => (Limit::INF.0, NonZeroU32::MIN),
        };
        KubeStackLayer {
            qps: ClientQpsLayer::new(limit.0, limit.1),
            requests,
            limit,
            event_client: settings.event_client,
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

    /// The stack of the event recorder's own client when the settings ask for one
    /// (`--event-client=separate`): the same QPS and burst on a bucket of its own, counting
    /// into the same family. `None` when Events share this stack's bucket.
    #[must_use]
    pub fn event_stack(&self) -> Option<KubeStackLayer> {
        (self.event_client == EventClient::Separate).then(|| KubeStackLayer {
            qps: ClientQpsLayer::new(self.limit.0, self.limit.1),
            ..self.clone()
        })
    }
}

/// The provider's Kubernetes clients.
#[derive(Clone)]
pub struct KubeClients {
    /// The controllers' client: watches, reads and writes of every kind, and Events unless
    /// [`KubeClients::events`] is set.
    pub main: kube::Client,
    /// The event recorder's own client, with its own bucket (`--event-client=separate`).
    pub events: Option<kube::Client>,
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

/// Counts each request by verb and status, and by status, method and host, and gives it
/// the provider's [`user_agent`] unless it has one.
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

    fn call(&mut self, mut request: Request<Body>) -> Self::Future {
        if !request.headers().contains_key(http::header::USER_AGENT) {
            request.headers_mut().insert(
                http::header::USER_AGENT,
                http::HeaderValue::from_static(user_agent()),
            );
        }
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

/// The clients `layer` asks for over `service`: one, or with
/// [`KubeStackLayer::event_stack`] a second for Events over the same transport.
///
/// # Panics
/// Outside a tokio runtime (the buffers spawn their workers).
pub fn limited_clients<S, B>(
    service: S,
    default_namespace: &str,
    layer: &KubeStackLayer,
) -> KubeClients
where
    S: Service<Request<Body>, Response = Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError> + Send + Sync,
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    match layer.event_stack() {
        None => KubeClients {
            main: limited_client(service, default_namespace, layer),
            events: None,
        },
        Some(events) => {
            // One transport, two limited stacks over it.
            let transport = Buffer::new(service, BUFFER);
            KubeClients {
                main: limited_client(transport.clone(), default_namespace, layer),
                events: Some(limited_client(transport, default_namespace, &events)),
            }
        }
    }
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
    let config = config(path).await?;
    client_of(config, layer)
}

/// The clients `layer` asks for ([`limited_clients`]), from `--kubeconfig`, in-cluster
/// config or `KUBECONFIG` as [`from_kubeconfig`] finds it. A separate event client gets its
/// own connections too, as a second client-go clientset would.
///
/// # Errors
/// See [`KubeConfigError`].
pub async fn clients_from_kubeconfig(
    path: Option<&std::path::Path>,
    layer: &KubeStackLayer,
) -> Result<KubeClients, KubeConfigError> {
    let config = config(path).await?;
    let events = match layer.event_stack() {
        Some(events) => Some(client_of(config.clone(), &events)?),
        None => None,
    };
    Ok(KubeClients {
        main: client_of(config, layer)?,
        events,
    })
}

fn client_of(
    config: kube::Config,
    layer: &KubeStackLayer,
) -> Result<kube::Client, KubeConfigError> {
    let host = config
        .cluster_url
        .authority()
        .map_or_else(|| layer.host.clone(), ToString::to_string);
    let builder = ClientBuilder::try_from(config).map_err(KubeConfigError::Build)?;
    Ok(builder.with_layer(&layer.clone().host(host)).build())
}

async fn config(path: Option<&std::path::Path>) -> Result<kube::Config, KubeConfigError> {
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
    Ok(config)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use k8s_openapi::api::core::v1::Namespace;
    use kube::api::Api;
    use tokio::time::Instant;

    use super::*;

    /// Lists namespaces through `client` `n` times.
    async fn list(client: &kube::Client, n: usize) {
        let api: Api<Namespace> = Api::all(client.clone());
        for _ in 0..n {
            api.list(&Default::default()).await.unwrap();
        }
    }

    #[tokio::test]
    async fn every_request_says_it_is_the_provider_in_client_gos_user_agent_convention() {
        let apiserver = mock_apiserver::ApiServer::default();
        let separate = Settings::new(NonZeroU32::MIN).event_client(EventClient::Separate);
        let layer = KubeStackLayer::new(&separate, KubeRequests::default());
        let clients = limited_clients(apiserver.service(), "default", &layer);
        list(&clients.main, 1).await;
        list(clients.events.as_ref().expect("an event client"), 1).await;
        let agents = apiserver.journal().counts_by_user_agent();
        assert_eq!(agents.len(), 1, "{agents:?}");
        let (agent, n) = agents.iter().next().unwrap();
        assert_eq!(*n, 2);
        assert_eq!(agent, user_agent());
        // NAME/VERSION (OS/ARCH) …, with Go's names.
        let (name_version, rest) = agent.split_once(' ').unwrap();
        assert_eq!(
            name_version,
            format!("provider/v{}", env!("CARGO_PKG_VERSION"))
        );
        assert!(rest.starts_with('(') && rest.contains('/'), "{agent}");
        assert!(!agent.contains("x86_64"), "{agent}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_separate_event_client_waits_on_a_bucket_of_its_own_beside_the_controllers_one() {
        // R = 1: QPS 5, burst 10 per bucket.
        let r1 = Settings::new(NonZeroU32::MIN);
        let apiserver = mock_apiserver::ApiServer::default();
        let shared = KubeStackLayer::new(&r1, KubeRequests::default());
        let clients = limited_clients(apiserver.service(), "default", &shared);
        assert!(clients.events.is_none(), "one client for every request");

        let separate = r1.event_client(EventClient::Separate);
        let requests = KubeRequests::default();
        let layer = KubeStackLayer::new(&separate, requests.clone());
        let clients = limited_clients(apiserver.service(), "default", &layer);
        let events = clients.events.expect("a client for Events");
        let start = Instant::now();
        list(&clients.main, 10).await;
        // The controllers' burst is spent; the event client's is whole.
        list(&events, 10).await;
        assert_eq!(start.elapsed(), Duration::ZERO);
        // Each bucket now refills at 5 per second on its own.
        list(&events, 1).await;
        assert_eq!(start.elapsed(), Duration::from_millis(200));
        list(&clients.main, 1).await;
        assert_eq!(start.elapsed(), Duration::from_millis(200));
        let counted: u64 = requests
            .by_verb()
            .get_or_create(&KubeRequestLabels {
                verb: "GET".to_owned(),
                code: "200".to_owned(),
            })
            .get();
        assert_eq!(counted, 22, "both clients count into one family");
    }
}
