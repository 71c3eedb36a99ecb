//! The stack a run drives: the embedded one (mock-cloud, mock-apiserver with the provider's
//! CRDs, and the provider, all in this process) or a cluster (a kubeconfig, the provider
//! deployed there, mock-cloud at a URL), behind one type.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::SystemTime;

use http::HeaderValue;
use mock_apiserver::ApiServer;
use mock_cloud::MockCloud;
use provider::{CloudClient, Provider, ProviderMetrics, ProviderOptions};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tower::ServiceBuilder;

use super::api::{ApiMeasure, ApiPoller, HARNESS_USER_AGENT, OwnRequests, SCRAPE_INTERVAL};
use super::cloud::Cloud;
use super::cluster::{self, ClusterOptions, MetricsTally};
use super::{PROVIDER_STOP_TIMEOUT, RunError};
use crate::result::{self, ApiRequest};
use crate::scenario::Scenario;

/// API-server requests kept for the measurements; a run that makes more is reported as
/// partial (see `collect`).
pub const API_JOURNAL_CAPACITY: usize = 2_000_000;

/// Base URL the in-process cloud client uses (the host is never resolved).
const CLOUD_URL: &str = "http://mock-cloud.invalid";

struct RunningProvider {
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<provider::RunSummary, provider::ProviderError>>,
}

/// The in-process provider and the API server it talks to.
struct Embedded {
    apiserver: ApiServer,
    /// µs between the run's start and the API server's start.
    api_offset_us: u64,
    cloud: MockCloud,
    metrics: Arc<ProviderMetrics>,
    settings: limiter::crossplane::Settings,
    provider: Option<RunningProvider>,
}

/// A cluster's provider and what is read from it.
struct Remote {
    options: ClusterOptions,
    api: ApiPoller,
    metrics: Option<MetricsTally>,
    scraper: Option<JoinHandle<()>>,
}

enum Kind {
    Embedded(Embedded),
    Cluster(Box<Remote>),
}

/// The stack of one run.
pub struct Stack {
    /// When the run started; every timestamp is relative to it.
    pub start: Instant,
    /// The wall clock at `start` (the time base of journals that carry wall times).
    pub start_wall: SystemTime,
    /// The cloud.
    pub cloud: Cloud,
    /// µs between the run's start and the cloud's clock's start.
    pub cloud_offset_us: u64,
    /// How many times the provider was started (embedded) or rolled (cluster).
    pub provider_starts: u32,
    client: kube::Client,
    kind: Kind,
    notes: Vec<String>,
}

impl Stack {
    /// Starts the cloud and the API server (with the provider's CRDs), then the provider.
    ///
    /// # Errors
    /// The cloud section is rejected, or the CRDs do not load.
    pub async fn embedded(s: &Scenario) -> Result<Self, RunError> {
        let start = Instant::now();
        let start_wall = SystemTime::now();
        let local_cloud = Cloud::local(s).map_err(RunError::Cloud)?;
        let cloud = Cloud::Local(local_cloud.clone());
        let cloud_offset_us = start.elapsed().as_micros() as u64;
        let apiserver = ApiServer::new(
            mock_apiserver::Config::default().with_journal_capacity(API_JOURNAL_CAPACITY),
        );
        let api_offset_us = start.elapsed().as_micros() as u64;
        let crds = provider::crd::crds_yaml().map_err(|e| RunError::Crds(e.into()))?;
        apiserver
            .load_crd_yaml(&crds)
            .map_err(|e| RunError::Crds(Box::new(e)))?;
        let service = ServiceBuilder::new()
            .map_request(|mut req: http::Request<kube::client::Body>| {
                req.headers_mut().insert(
                    http::header::USER_AGENT,
                    HeaderValue::from_static(HARNESS_USER_AGENT),
                );
                req
            })
            .service(apiserver.service());
        let client = kube::Client::new(service, "default");
        let mut stack = Stack {
            start,
            start_wall,
            cloud,
            cloud_offset_us,
            provider_starts: 0,
            client,
            kind: Kind::Embedded(Embedded {
                apiserver,
                api_offset_us,
                cloud: local_cloud,
                metrics: Arc::new(ProviderMetrics::new()),
                settings: s.settings.clone(),
                provider: None,
            }),
            notes: Vec::new(),
        };
        stack.start_provider();
        Ok(stack)
    }

    /// Connects to a cluster: the kubeconfig, the provider's Deployment, mock-cloud (given
    /// the scenario's cloud section, which starts it afresh), the API server's journal or
    /// metrics, and the provider's metrics if their URL is given.
    ///
    /// # Errors
    /// Any of them cannot be reached.
    pub async fn cluster(s: &Scenario, options: &ClusterOptions) -> Result<Self, RunError> {
        let own = OwnRequests::default();
        let client = cluster::client(options, &own).await?;
        client.apiserver_version().await.map_err(|e| {
            RunError::Setup(format!(
                "cannot reach the API server of {}: {e}",
                options.kubeconfig.display()
            ))
        })?;
        cluster::check_deployment(&client, &options.provider_deployment).await?;
        let (metrics, settings_checked) = match &options.provider_metrics_url {
            Some(url) => {
                let (tally, checked) = MetricsTally::start(url, &s.settings).await?;
                (Some(tally), checked)
            }
            None => (None, false),
        };
        let start = Instant::now();
        let start_wall = SystemTime::now();
        let api = ApiPoller::start(client.clone(), start, start_wall, own, options.api_source)
            .await
            .map_err(RunError::Setup)?;
        let cloud = Cloud::remote(s, &options.cloud_url)
            .await
            .map_err(|e| RunError::Setup(format!("cannot configure mock-cloud: {e}")))?;
        let (epoch, uncertainty) = cloud.epoch(start);
        let cloud_offset_us = epoch.saturating_duration_since(start).as_micros() as u64;
        let scraper = metrics.clone().map(|m| {
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(SCRAPE_INTERVAL).await;
                    m.scrape().await;
                }
            })
        });
        let mut notes = vec![format!(
            "cloud clock offset known to {:.1} ms (the PUT /admin/v1/config round trip)",
            uncertainty.as_secs_f64() * 1e3
        )];
        if metrics.is_none() {
            notes.push(
                "provider metrics not read (no --provider-metrics-url); its settings were not checked against the scenario"
                    .to_owned(),
            );
        } else if !settings_checked {
            notes.push(
                "the provider does not report provider_settings: its settings were not checked against the scenario"
                    .to_owned(),
            );
        }
        Ok(Stack {
            start,
            start_wall,
            cloud,
            cloud_offset_us,
            provider_starts: 1,
            client,
            kind: Kind::Cluster(Box::new(Remote {
                options: options.clone(),
                api,
                metrics,
                scraper,
            })),
            notes,
        })
    }

    /// A Kubernetes client for the harness's own requests (its `User-Agent` tells them apart).
    #[must_use]
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// Microseconds since the run started.
    #[must_use]
    pub fn now_us(&self) -> u64 {
        self.start.elapsed().as_micros() as u64
    }

    /// The namespace of the Secrets the harness writes: the run's own namespace when
    /// embedded, the provider's in a cluster (so the provider reads Secrets there only).
    #[must_use]
    pub fn secret_namespace(&self) -> Option<&str> {
        match &self.kind {
            Kind::Embedded(_) => None,
            Kind::Cluster(r) => Some(&r.options.provider_deployment.0),
        }
    }

    /// Whether what the run created should be deleted at the end.
    #[must_use]
    pub fn cleans_up(&self) -> bool {
        matches!(&self.kind, Kind::Cluster(r) if !r.options.keep)
    }

    /// Starts a provider with the scenario's settings (the metrics carry over). In a
    /// cluster the provider is the Deployment's.
    fn start_provider(&mut self) {
        let Kind::Embedded(e) = &mut self.kind else {
            return;
        };
        let cloud = CloudClient::new(e.cloud.clone(), CLOUD_URL);
        let options = ProviderOptions::from_service(
            e.settings.clone(),
            e.apiserver.service(),
            cloud,
            Arc::clone(&e.metrics),
        )
        .shutdown_timeout(PROVIDER_STOP_TIMEOUT);
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(Provider::new(options).run(async move {
            let _ = stopped.await;
        }));
        e.provider = Some(RunningProvider { stop, task });
        self.provider_starts += 1;
    }

    /// Stops the in-process provider (in-flight reconciles get [`PROVIDER_STOP_TIMEOUT`]);
    /// a cluster's provider keeps running.
    pub async fn stop_provider(&mut self) {
        let Kind::Embedded(e) = &mut self.kind else {
            return;
        };
        if let Some(p) = e.provider.take() {
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

    /// Restarts the provider: a new one in process, or a rolled Deployment (waited for
    /// until `deadline`).
    ///
    /// # Errors
    /// The Deployment could not be rolled.
    pub async fn restart_provider(&mut self, deadline: Instant) -> Result<(), RunError> {
        match &self.kind {
            Kind::Embedded(_) => {
                self.stop_provider().await;
                self.start_provider();
            }
            Kind::Cluster(r) => {
                if let Some(m) = &r.metrics {
                    m.scrape().await;
                }
                cluster::roll(&self.client, &r.options.provider_deployment, deadline).await?;
                self.provider_starts += 1;
            }
        }
        Ok(())
    }

    /// The API requests of the run, sorted by time, how they were measured, and how many
    /// the journal dropped.
    pub async fn api_requests(&mut self) -> (Vec<ApiRequest>, ApiMeasure, u64) {
        match &mut self.kind {
            Kind::Embedded(e) => {
                let entries = e.apiserver.journal().since(0);
                let dropped = entries.first().map_or(0, |e| e.seq.saturating_sub(1));
                let requests = entries
                    .into_iter()
                    .map(|entry| ApiRequest {
                        at_us: entry.elapsed.as_micros() as u64 + e.api_offset_us,
                        verb: entry.verb.as_str().to_owned(),
                        from_provider: entry.user_agent != HARNESS_USER_AGENT,
                    })
                    .collect();
                (requests, ApiMeasure::Journal, dropped)
            }
            Kind::Cluster(r) => {
                let measure = r.api.measure();
                let (requests, notes) = r.api.finish().await;
                self.notes.extend(notes);
                (requests, measure, 0)
            }
        }
    }

    /// The provider's own counters, if they can be read.
    pub async fn provider_metrics(&mut self) -> Option<result::ProviderMetrics> {
        match &mut self.kind {
            Kind::Embedded(e) => e.metrics.encode().ok().map(|text| result::ProviderMetrics {
                reservations: super::collect::prometheus_counter(
                    &text,
                    "limiter_reservations_total",
                ),
                early_runs: super::collect::prometheus_counter(&text, "limiter_early_runs_total"),
                cloud_calls: super::collect::prometheus_counter(
                    &text,
                    "provider_cloud_requests_total",
                ),
            }),
            Kind::Cluster(r) => {
                if let Some(s) = r.scraper.take() {
                    s.abort();
                }
                let m = r.metrics.as_ref()?;
                m.scrape().await;
                if m.failures() > 0 {
                    self.notes.push(format!(
                        "{} scrapes of the provider's metrics failed",
                        m.failures()
                    ));
                }
                Some(m.totals())
            }
        }
    }

    /// What the result should say about the target.
    #[must_use]
    pub fn describe(&self) -> BTreeMap<String, String> {
        let mut v = BTreeMap::new();
        match &self.kind {
            Kind::Embedded(_) => {
                v.insert("target".to_owned(), "embedded".to_owned());
            }
            Kind::Cluster(r) => {
                v.insert("target".to_owned(), "cluster".to_owned());
                v.insert(
                    "kubeconfig".to_owned(),
                    r.options.kubeconfig.display().to_string(),
                );
                v.insert("cloud url".to_owned(), r.options.cloud_url.clone());
                let (ns, name) = &r.options.provider_deployment;
                v.insert("provider deployment".to_owned(), format!("{ns}/{name}"));
            }
        }
        for (i, note) in self.notes.iter().enumerate() {
            v.insert(format!("note {}", i + 1), note.clone());
        }
        v
    }
}
