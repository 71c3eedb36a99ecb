//! [`Provider`]: the three managed controllers of one process, sharing one global bucket,
//! one Kubernetes client and one cloud client.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use http::{Request as HttpRequest, Response};
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use kube::runtime::reflector;
use limiter::controller::{Controller, Request};
use limiter::crossplane::{ProviderRuntime, Settings};
use parking_lot::Mutex;
use tokio::task::JoinSet;
use tower::{BoxError, Service};

use crate::cloud::CloudClient;
use crate::crd::{Bucket, Database, ProviderConfig, Record};
use crate::events::EventSink;
use crate::kube_client::{KubeStackLayer, limited_clients};
use crate::metrics::{Controllers, ProviderMetrics, RuntimeState};
use crate::reconciler::meta::{CREATION_GRACE, Clock};
use crate::reconciler::{CloudConnecter, Context, Draws};
use crate::watch::reflect_only;

/// How long in-flight reconciles get to finish after shutdown starts, by default.
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

/// Everything a [`Provider`] runs with.
pub struct ProviderOptions {
    /// Rate-limit model, `--max-reconcile-rate`, poll interval, jitter, minimum poll.
    pub settings: Settings,
    /// The Kubernetes client, built with [`KubeStackLayer`] so that every request of the
    /// process goes through one QPS limit (see [`crate::kube_client`]).
    pub kube: kube::Client,
    /// The event recorder's own client, with a QPS limit of its own
    /// (`--event-client=separate`, [`crate::kube_client::KubeClients`]); `None`: Events go
    /// through [`ProviderOptions::kube`].
    pub event_kube: Option<kube::Client>,
    /// The cloud client.
    pub cloud: CloudClient,
    /// Watch managed resources in this namespace only (`None`: all namespaces).
    pub namespace: Option<String>,
    /// Read credential Secrets from this namespace only (`None`: all namespaces), so the
    /// provider needs to read Secrets there only.
    pub secret_namespace: Option<String>,
    /// The bound on finishing in-flight reconciles at shutdown.
    pub shutdown_timeout: Duration,
    /// Metrics; the Kubernetes and cloud clients should count into its families.
    pub metrics: Arc<ProviderMetrics>,
    /// The seed of the random draws (poll jitter, retry jitter); `None` seeds them from the
    /// operating system.
    pub seed: Option<u64>,
    /// The wall time that stamps follow; `None` reads it when the provider starts. An
    /// in-process host that restarts the provider passes one clock to every start.
    pub clock: Option<Clock>,
    /// Simulated CPU time per reconcile, slept on tokio's clock before the reconcile's work:
    /// on a paused clock, where work takes no time, a reconcile then lasts as long as in
    /// real time. Zero (the default) adds nothing.
    pub reconcile_cost: Duration,
    /// crossplane-runtime's creation grace period (`managed.WithCreationGracePeriod`): how
    /// long after a successful Create a resource Observe cannot find is waited for rather
    /// than created again, or, while it is being deleted, released. Default 30 s, as there.
    pub creation_grace: Duration,
    /// The AWS flavour's clients: SDK retry mode, credential cache, HTTP client and time.
    #[cfg(feature = "aws")]
    pub aws: crate::aws::AwsOptions,
}

impl std::fmt::Debug for ProviderOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderOptions")
            .field("settings", &self.settings)
            .field("namespace", &self.namespace)
            .field("secret_namespace", &self.secret_namespace)
            .field("shutdown_timeout", &self.shutdown_timeout)
            .field("seed", &self.seed)
            .field("reconcile_cost", &self.reconcile_cost)
            .field("creation_grace", &self.creation_grace)
            .finish_non_exhaustive()
    }
}

impl ProviderOptions {
    /// Options for an in-process provider: a Kubernetes client over `kube_service` (for
    /// example `mock_apiserver::ApiServer::service()`) limited and counted as the settings
    /// say (with a second one for Events when they ask for a separate event client), and
    /// `cloud` counting into `metrics`. Pass the same `metrics` to a restarted
    /// provider to keep its counters.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub fn from_service<S, B>(
        settings: Settings,
        kube_service: S,
        cloud: CloudClient,
        metrics: Arc<ProviderMetrics>,
    ) -> Self
    where
        S: Service<HttpRequest<kube::client::Body>, Response = Response<B>> + Send + 'static,
        S::Future: Send + 'static,
        S::Error: Into<BoxError> + Send + Sync,
        B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let layer = KubeStackLayer::new(&settings, metrics.kube_requests().clone());
        let clients = limited_clients(kube_service, "default", &layer);
        let cloud = cloud.with_requests(metrics.cloud_requests().clone());
        ProviderOptions {
            settings,
            kube: clients.main,
            event_kube: clients.events,
            cloud,
            namespace: None,
            secret_namespace: None,
            shutdown_timeout: DEFAULT_SHUTDOWN_TIMEOUT,
            metrics,
            seed: None,
            clock: None,
            reconcile_cost: Duration::ZERO,
            creation_grace: CREATION_GRACE,
            #[cfg(feature = "aws")]
            aws: crate::aws::AwsOptions::default(),
        }
    }

    /// Only this namespace.
    #[must_use]
    pub fn namespace(mut self, namespace: Option<String>) -> Self {
        self.namespace = namespace;
        self
    }

    /// Credential Secrets from this namespace only.
    #[must_use]
    pub fn secret_namespace(mut self, namespace: Option<String>) -> Self {
        self.secret_namespace = namespace;
        self
    }

    /// With a shutdown bound.
    #[must_use]
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// Random draws repeatable for `seed`.
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Stamps on `clock`'s time line.
    #[must_use]
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Simulated CPU time per reconcile (see [`ProviderOptions::reconcile_cost`]).
    #[must_use]
    pub fn reconcile_cost(mut self, cost: Duration) -> Self {
        self.reconcile_cost = cost;
        self
    }

    /// The AWS flavour's client options.
    #[cfg(feature = "aws")]
    #[must_use]
    pub fn aws(mut self, aws: crate::aws::AwsOptions) -> Self {
        self.aws = aws;
        self
    }
}

/// Why the provider could not run.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// The settings cannot run.
    #[error("invalid settings")]
    Settings(#[from] limiter::crossplane::SettingsError),
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunSummary {
    /// Every in-flight reconcile finished within the shutdown bound.
    pub drained: bool,
}

/// A provider: watches Buckets, Databases and Records, reconciles them against the cloud.
///
/// Run in-process against mock-apiserver and mock-cloud, stop, and read the metrics:
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use provider::{CloudClient, Provider, ProviderMetrics, ProviderOptions};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let apiserver = mock_apiserver::ApiServer::default();
/// apiserver.load_crd_yaml(&provider::crd::crds_yaml().unwrap()).unwrap();
/// let cloud = mock_cloud::MockCloud::new(mock_cloud::Config::default()).unwrap();
/// let metrics = Arc::new(ProviderMetrics::new());
/// let options = ProviderOptions::from_service(
///     limiter::crossplane::Settings::default(),
///     apiserver.service(),
///     CloudClient::new(cloud, "http://mock-cloud"),
///     Arc::clone(&metrics),
/// );
/// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
/// let running = tokio::spawn(Provider::new(options).run(async { stopped.await.ok(); }));
/// tokio::time::sleep(Duration::from_secs(1)).await;
/// stop.send(()).unwrap();
/// assert!(running.await.unwrap().unwrap().drained);
/// assert!(metrics.encode().unwrap().contains("limiter_reservations_total"));
/// # }
/// ```
pub struct Provider {
    options: ProviderOptions,
}

/// What a killed provider must not leave running: the controllers' workers (the run's
/// shared list holds the controllers, so dropping the run's handle alone would not stop
/// them) and the event writer (a spawned task, which a dropped handle would leave running).
struct KillGuard {
    controllers: Option<Controllers>,
    event_writer: tokio::task::AbortHandle,
}

impl Drop for KillGuard {
    fn drop(&mut self) {
        if let Some(c) = &self.controllers {
            // Dropping a controller drops its workers' JoinSet, which aborts them.
            c.lock().clear();
        }
        self.event_writer.abort();
    }
}

impl Provider {
    /// A provider that starts when [`Provider::run`] is awaited.
    #[must_use]
    pub fn new(options: ProviderOptions) -> Self {
        Provider { options }
    }

    /// The metrics it records into.
    #[must_use]
    pub fn metrics(&self) -> Arc<ProviderMetrics> {
        Arc::clone(&self.options.metrics)
    }

    /// Runs until `shutdown` completes, then stops taking work (watches end, queues shut
    /// down), lets in-flight reconciles finish within the shutdown bound, and returns.
    ///
    /// Dropping the future instead (aborting its task) kills the provider as SIGKILL
    /// would: workers, watches and the event writer are aborted where they stand, and a
    /// reconcile between two requests (say, a Create and its `external-create-succeeded`
    /// write) never makes the second.
    ///
    /// # Errors
    /// Invalid settings.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<RunSummary, ProviderError> {
        self.run_until(Box::pin(shutdown)).await
    }

    /// [`Provider::run`] with its `shutdown` boxed: the one body, compiled once in this
    /// crate. Were it generic over `shutdown`, each crate that runs a provider (the
    /// harness, a doc test) would compile the provider's controllers again.
    async fn run_until(
        self,
        mut shutdown: std::pin::Pin<Box<dyn Future<Output = ()> + Send + '_>>,
    ) -> Result<RunSummary, ProviderError> {
        let options = self.options;
        options.settings.validate()?;
        let runtime = ProviderRuntime::new(options.settings.clone());
        let client = options.kube.clone();
        let clock = options.clock.unwrap_or_default();
        let event_client = options.event_kube.clone().unwrap_or_else(|| client.clone());
        let (events, event_writer) = EventSink::start(event_client, clock);
        // A killed provider (this future dropped where it stands) leaves nothing running.
        let mut on_kill = KillGuard {
            controllers: None,
            event_writer: event_writer.abort_handle(),
        };
        let mut watches = JoinSet::new();

        let (provider_configs, pc_writer) = reflector::store::<ProviderConfig>();
        watches.spawn(reflect_only(
            Api::<ProviderConfig>::all(client.clone()),
            pc_writer,
            "ProviderConfig",
        ));
        let (secrets, secret_writer) = reflector::store::<Secret>();
        let secret_api = match &options.secret_namespace {
            Some(ns) => Api::<Secret>::namespaced(client.clone(), ns),
            None => Api::<Secret>::all(client.clone()),
        };
        watches.spawn(reflect_only(secret_api, secret_writer, "Secret"));

        #[cfg(feature = "aws")]
        let aws_caches = crate::aws::controllers::Caches::watch(&client, &mut watches);

        // Connect reads these caches: fill them before the first reconcile.
        let caches_ready = async {
            let _ = provider_configs.wait_until_ready().await;
            let _ = secrets.wait_until_ready().await;
            #[cfg(feature = "aws")]
            aws_caches.wait_until_ready().await;
        };
        tokio::select! {
            () = caches_ready => {}
            () = &mut shutdown => {
                watches.shutdown().await;
                return Ok(RunSummary { drained: true });
            }
        }

        let ctx = Arc::new(Context {
            client: client.clone(),
            settings: options.settings.clone(),
            events: events.clone(),
            clock,
            draws: Arc::new(options.seed.map_or_else(Draws::from_os, Draws::seeded)),
            reconcile_cost: options.reconcile_cost,
            creation_grace: options.creation_grace,
            reconciles: options.metrics.reconciles().clone(),
            reconcile_cpu: options.metrics.reconcile_cpu().clone(),
        });
        let controllers: Controllers = Arc::new(Mutex::new(Vec::new()));
        on_kill.controllers = Some(Arc::clone(&controllers));
        let mut queues = Vec::new();
        let namespace = options.namespace.as_deref();
        let cloud = Arc::new(CloudConnecter::new(
            options.cloud.clone(),
            provider_configs,
            secrets.clone(),
        ));
        let mut kinds = crate::kinds::Kinds {
            runtime: &runtime,
            ctx: &ctx,
            namespace,
            controllers: &controllers,
            queues: &mut queues,
            watches: &mut watches,
        };
        kinds.start::<Bucket>(cloud.clone());
        kinds.start::<Database>(cloud.clone());
        kinds.start::<Record>(cloud);
        #[cfg(feature = "aws")]
        crate::aws::controllers::start(
            &mut kinds,
            aws_caches,
            secrets,
            &options.aws,
            options.metrics.cloud_requests().clone(),
        );
        drop(ctx);
        let stats = controllers
            .lock()
            .iter()
            .map(|c| (c.name().to_owned(), c.stats_handle()))
            .collect();
        options.metrics.set_runtime(RuntimeState {
            controllers: stats,
            queues,
            middleware: Some(Arc::clone(runtime.middleware_stats())),
            events: Some(Arc::clone(events.counters())),
            settings: Some(options.settings.clone()),
        });
        drop(events);
        tracing::info!(
            model = %options.settings.model,
            rate = options.settings.rate(),
            client_limiters = if options.event_kube.is_some() { 2 } else { 1 },
            reconcile_requests = %options.settings.reconcile_requests,
            "provider started"
        );

        shutdown.await;
        tracing::info!("shutting down: no new work, finishing in-flight reconciles");
        watches.shutdown().await;
        let running: Vec<Controller<Request>> = std::mem::take(&mut *controllers.lock());
        let drain = futures::future::join_all(running.into_iter().map(Controller::shut_down));
        let drained = tokio::time::timeout(options.shutdown_timeout, drain)
            .await
            .is_ok();
        if !drained {
            tracing::warn!(timeout = ?options.shutdown_timeout, "in-flight reconciles did not finish in time; abandoning them");
        }
        // The reconcilers (and their event senders) are gone; give queued events a moment.
        let mut event_writer = event_writer;
        if tokio::time::timeout(Duration::from_secs(1), &mut event_writer)
            .await
            .is_err()
        {
            event_writer.abort();
        }
        tracing::info!(drained, "provider stopped");
        Ok(RunSummary { drained })
    }
}
