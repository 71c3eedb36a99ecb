//! The embedded stack: mock-cloud, mock-apiserver with the provider's CRDs, and the provider,
//! all in this process, talking through in-process tower services.

use std::sync::Arc;

use http::HeaderValue;
use mock_apiserver::ApiServer;
use mock_cloud::{AccountConfig, Class, Config, ErrorRate, Faults, MockCloud, Quotas, Rate};
use provider::{CloudClient, Provider, ProviderMetrics, ProviderOptions};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tower::ServiceBuilder;

use super::{PROVIDER_STOP_TIMEOUT, RunError};
use crate::scenario::{ActionClass, Latency, Scenario};

/// The `User-Agent` of the harness's own Kubernetes requests; every other request at the API
/// server is the provider's.
pub const HARNESS_USER_AGENT: &str = "harness";

/// API-server requests kept for the measurements; a run that makes more is reported as
/// partial (see `collect`).
pub const API_JOURNAL_CAPACITY: usize = 2_000_000;

/// Base URL the in-process cloud client uses (the host is never resolved).
const CLOUD_URL: &str = "http://mock-cloud.invalid";

struct RunningProvider {
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<provider::RunSummary, provider::ProviderError>>,
}

/// mock-apiserver, mock-cloud and a provider that can be restarted.
pub struct EmbeddedStack {
    /// When the run started; every timestamp is relative to it.
    pub start: Instant,
    /// The API server.
    pub apiserver: ApiServer,
    /// The cloud.
    pub cloud: MockCloud,
    /// µs between the run's start and the cloud's start.
    pub cloud_offset_us: u64,
    /// µs between the run's start and the API server's start.
    pub api_offset_us: u64,
    /// The provider's metrics, kept across restarts.
    pub metrics: Arc<ProviderMetrics>,
    /// How many times the provider was started.
    pub provider_starts: u32,
    settings: limiter::crossplane::Settings,
    provider: Option<RunningProvider>,
}

pub(crate) fn cloud_token(account: &str) -> String {
    format!("token-{account}")
}

pub(crate) fn mock_cloud_class(c: ActionClass) -> Class {
    match c {
        ActionClass::Read => Class::Read,
        ActionClass::List => Class::List,
        ActionClass::Mutate => Class::Mutate,
        ActionClass::Delete => Class::Delete,
    }
}

pub(crate) fn cloud_latency(l: &Latency) -> mock_cloud::Latency {
    match *l {
        Latency::Fixed(d) => mock_cloud::Latency::Fixed(d),
        Latency::Uniform { min, max } => mock_cloud::Latency::Uniform { min, max },
        Latency::Lognormal { median, sigma } => mock_cloud::Latency::LogNormal { median, sigma },
    }
}

/// The scenario's cloud section as mock-cloud's configuration.
pub(crate) fn cloud_config(s: &Scenario) -> Config {
    let p = &s.cloud.provisioning;
    let mut config = Config::empty().with_provisioning(p.database_create, p.database_delete);
    for account in &s.cloud.accounts {
        let mut quotas = Quotas::unlimited();
        for c in ActionClass::ALL {
            if let Some(q) = account.quotas.get(c) {
                let burst = q.burst.round().max(1.0) as u32;
                quotas =
                    quotas.with_class(mock_cloud_class(c), Some(Rate::new(burst, q.per_second)));
            }
        }
        config = config.with_account(
            AccountConfig::new(&account.name)
                .with_token(cloud_token(&account.name))
                .with_quotas(quotas),
        );
    }
    let mut faults = Faults::none().with_seed(s.seed);
    for c in ActionClass::ALL {
        if let Some(l) = s.cloud.latency.get(c) {
            faults = faults.with_latency(mock_cloud_class(c), cloud_latency(l));
        }
        if let Some(e) = s.cloud.errors.get(c) {
            faults = faults.with_errors(
                mock_cloud_class(c),
                ErrorRate {
                    probability: e.rate,
                    status: e.status,
                },
            );
        }
    }
    config.with_faults(faults)
}

impl EmbeddedStack {
    /// Starts the cloud and the API server (with the provider's CRDs), then the provider.
    ///
    /// # Errors
    /// The cloud section is rejected, or the CRDs do not load.
    pub async fn start(s: &Scenario) -> Result<Self, RunError> {
        let start = Instant::now();
        let cloud = MockCloud::new(cloud_config(s)).map_err(RunError::Cloud)?;
        let cloud_offset_us = start.elapsed().as_micros() as u64;
        let apiserver = ApiServer::new(
            mock_apiserver::Config::default().with_journal_capacity(API_JOURNAL_CAPACITY),
        );
        let api_offset_us = start.elapsed().as_micros() as u64;
        let crds = provider::crd::crds_yaml().map_err(|e| RunError::Crds(e.into()))?;
        apiserver
            .load_crd_yaml(&crds)
            .map_err(|e| RunError::Crds(Box::new(e)))?;
        let mut stack = EmbeddedStack {
            start,
            apiserver,
            cloud,
            cloud_offset_us,
            api_offset_us,
            metrics: Arc::new(ProviderMetrics::new()),
            provider_starts: 0,
            settings: s.settings.clone(),
            provider: None,
        };
        stack.start_provider();
        Ok(stack)
    }

    /// A Kubernetes client for the harness's own requests (its `User-Agent` tells them apart).
    #[must_use]
    pub fn client(&self) -> kube::Client {
        let service = ServiceBuilder::new()
            .map_request(|mut req: http::Request<kube::client::Body>| {
                req.headers_mut().insert(
                    http::header::USER_AGENT,
                    HeaderValue::from_static(HARNESS_USER_AGENT),
                );
                req
            })
            .service(self.apiserver.service());
        kube::Client::new(service, "default")
    }

    /// Microseconds since the run started.
    #[must_use]
    pub fn now_us(&self) -> u64 {
        self.start.elapsed().as_micros() as u64
    }

    /// Starts a provider with the scenario's settings (the metrics carry over).
    pub fn start_provider(&mut self) {
        let cloud = CloudClient::new(self.cloud.clone(), CLOUD_URL);
        let options = ProviderOptions::from_service(
            self.settings.clone(),
            self.apiserver.service(),
            cloud,
            Arc::clone(&self.metrics),
        )
        .shutdown_timeout(PROVIDER_STOP_TIMEOUT);
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(Provider::new(options).run(async move {
            let _ = stopped.await;
        }));
        self.provider = Some(RunningProvider { stop, task });
        self.provider_starts += 1;
    }

    /// Stops the provider (in-flight reconciles get [`PROVIDER_STOP_TIMEOUT`]).
    pub async fn stop_provider(&mut self) {
        if let Some(p) = self.provider.take() {
            let _ = p.stop.send(());
            match p.task.await {
                Ok(Ok(summary)) if !summary.drained => {
                    tracing::warn!("the provider stopped with reconciles still in flight");
                }
                Ok(Err(e)) => tracing::error!(error = %e, "the provider failed"),
                Err(e) => tracing::error!(error = %e, "the provider task failed"),
                Ok(Ok(_)) => {}
            }
        }
    }

    /// Stops the provider and starts it again, as a pod restart would.
    pub async fn restart_provider(&mut self) {
        self.stop_provider().await;
        self.start_provider();
    }
}
