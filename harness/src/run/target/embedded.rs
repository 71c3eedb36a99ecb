//! The embedded target: mock-cloud, mock-apiserver (with the provider's CRDs) and the
//! provider, all in this process, over in-memory tower Services (no sockets).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mock_apiserver::ApiServer;
use mock_cloud::{Faults, MockCloud};
use provider::{CloudClient, Provider, ProviderMetrics, ProviderOptions};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tower::ServiceBuilder;

use super::{CallsPage, CloudControl, CloudError, Target, TargetInfo, TargetSources};
use crate::run::clock::{Epoch, RunClock};
use crate::run::cloud;
use crate::run::error::RunError;
use crate::run::objects::scenario_kinds;
use crate::run::own::{self, OwnRequests, ProviderAgent};
use crate::run::source::api::ApiRequests;
use crate::run::source::api_journal::InProcess;
use crate::run::source::memory::MemoryProbe;
use crate::run::source::provider_metrics::{InProcessMetrics, ProviderMetricsSource};
use crate::scenario::{AwsSettings, Scenario};

/// API-server requests kept for the measurements; a run that makes more is reported as
/// partial. At 48 bytes a kept request (mock-apiserver's journal holds each distinct string
/// once), 10 million take 480 MB; `xr-day-2k` makes about 4.5 million.
pub const API_JOURNAL_CAPACITY: usize = 10_000_000;

/// How long the provider gets to finish in-flight reconciles when it stops.
pub const PROVIDER_STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// Base URL the in-process cloud client uses (the host is never resolved).
const CLOUD_URL: &str = "http://mock-cloud.invalid";

struct RunningProvider {
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<provider::RunSummary, provider::ProviderError>>,
}

/// mock-cloud in this process (a clone is a handle on the same cloud).
#[derive(Clone)]
pub struct LocalCloud {
    cloud: MockCloud,
    epoch: Epoch,
}

impl LocalCloud {
    /// `cloud`, whose time zero lies at `epoch` on the run's clock.
    #[must_use]
    pub fn new(cloud: MockCloud, epoch: Epoch) -> LocalCloud {
        LocalCloud { cloud, epoch }
    }

    /// The in-process mock-cloud (tests read its journal).
    #[must_use]
    pub fn mock(&self) -> &MockCloud {
        &self.cloud
    }
}

impl CloudControl for LocalCloud {
    fn epoch(&self) -> Epoch {
        self.epoch
    }

    fn elapsed(&self) -> Duration {
        self.cloud.elapsed()
    }

    fn faults(&self) -> Faults {
        self.cloud.faults()
    }

    async fn set_faults(&self, faults: Faults) -> Result<(), CloudError> {
        self.cloud.set_faults(faults).map_err(CloudError::Rejected)
    }

    async fn next_seq(&self) -> Result<u64, CloudError> {
        Ok(self.cloud.journal_stats().next_seq)
    }

    async fn calls_since(&self, since: u64) -> Result<CallsPage, CloudError> {
        Ok(CallsPage {
            calls: self.cloud.calls_since(since),
            dropped: self.cloud.journal_stats().dropped,
        })
    }

    async fn inventory(&self) -> Result<Vec<mock_cloud::Resource>, CloudError> {
        Ok(self.cloud.inventory())
    }
}

/// The embedded stack.
pub struct Embedded {
    clock: RunClock,
    apiserver: ApiServer,
    api_epoch: Epoch,
    client: kube::Client,
    cloud: LocalCloud,
    metrics: Arc<ProviderMetrics>,
    /// Its readings over the run, across the provider's restarts.
    readings: InProcessMetrics,
    settings: limiter::crossplane::Settings,
    /// The AWS flavour's client settings (used with feature `aws`).
    #[cfg_attr(not(feature = "aws"), allow(dead_code))]
    aws: AwsSettings,
    /// The API resources of the scenario's kinds (the memory probe counts their objects).
    kinds: Vec<(String, String, String)>,
    seed: u64,
    stamps: provider::reconciler::meta::Clock,
    /// The provider's simulated CPU time per reconcile: the scenario's in virtual time.
    reconcile_cost: Duration,
    provider: Mutex<Option<RunningProvider>>,
    starts: AtomicU32,
    /// Crossplane core's XR controllers, for a scenario with XR groups.
    core: Option<crate::run::core::embedded::EmbeddedCore>,
    /// The managed kinds its XRs compose, as the watches name them.
    composed: Vec<String>,
    /// Whether only the provider's `User-Agent` is the provider's (core talks to the
    /// server too).
    exact_agent: bool,
}

impl Embedded {
    /// The in-process API server (tests read its journal).
    #[must_use]
    pub fn apiserver(&self) -> &ApiServer {
        &self.apiserver
    }

    /// Starts a provider with the scenario's settings (the metrics and the stamp clock carry
    /// over; each start draws from its own seed, derived from the scenario's).
    fn start_provider(&self) {
        let start = self.starts.fetch_add(1, Ordering::Relaxed);
        if start > 0 {
            self.readings.carry();
        }
        let cloud = CloudClient::new(self.cloud.cloud.clone(), CLOUD_URL);
        let options = ProviderOptions::from_service(
            self.settings.clone(),
            self.apiserver.service(),
            cloud,
            Arc::clone(&self.metrics),
        )
        .shutdown_timeout(PROVIDER_STOP_TIMEOUT)
        .seed(provider_seed(self.seed, start))
        .clock(self.stamps)
        .reconcile_cost(self.reconcile_cost);
        #[cfg(feature = "aws")]
        let options = options.aws(aws_options(self.aws, &self.cloud.cloud));
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(Provider::new(options).run(async move {
            let _ = stopped.await;
        }));
        *self.running() = Some(RunningProvider { stop, task });
    }

    fn running(&self) -> std::sync::MutexGuard<'_, Option<RunningProvider>> {
        self.provider.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The AWS flavour's options: the scenario's flags, and the SDK clients on mock-cloud in
/// process.
#[cfg(feature = "aws")]
fn aws_options(s: AwsSettings, cloud: &MockCloud) -> provider::aws::AwsOptions {
    use crate::scenario::raw::{AwsRetryModeName, CredentialCacheName};
    use provider::aws::connect::{CredentialCache, RetryMode};
    provider::aws::AwsOptions {
        retry_mode: match s.retry_mode {
            AwsRetryModeName::Standard => RetryMode::Standard,
            AwsRetryModeName::Adaptive => RetryMode::Adaptive,
            AwsRetryModeName::Off => RetryMode::Off,
        },
        credential_cache: match s.credential_cache {
            CredentialCacheName::None => CredentialCache::None,
            CredentialCacheName::Irsa => CredentialCache::Irsa,
            CredentialCacheName::All => CredentialCache::All,
        },
        http: Some(provider::aws::transport::in_process(cloud.clone())),
    }
}

/// Why this build cannot run `s` on the embedded stack: the AWS flavour needs feature
/// `aws`.
#[must_use]
pub fn missing_feature(s: &Scenario) -> Option<RunError> {
    missing_feature_of(s, cfg!(feature = "aws"))
}

fn missing_feature_of(s: &Scenario, aws: bool) -> Option<RunError> {
    (s.uses_aws() && !aws).then_some(RunError::NeedsAwsFeature)
}

/// The seed of the provider's `start`-th start (from 0) in a run seeded with `seed`:
/// SplitMix64's output function of the pair, so restarts draw differently from each other.
/// (The generator's first output from state `x` is that function of `x + φ`, where φ is its
/// increment, the golden-ratio constant.)
fn provider_seed(seed: u64, start: u32) -> u64 {
    const PHI: u64 = 0x9E37_79B9_7F4A_7C15;
    let pair = seed ^ u64::from(start).wrapping_add(1).wrapping_mul(PHI);
    rand_xoshiro::rand_core::Rng::next_u64(&mut crate::rng::seeded(pair.wrapping_sub(PHI)))
}

impl Target for Embedded {
    type Options = ();
    fn virtual_time(_: &Self::Options) -> bool {
        true
    }
    type Cloud = LocalCloud;

    /// Starts the clock, the cloud and the API server (with the provider's CRDs), then the
    /// provider. The API server and the provider stamp objects on one time line, from the
    /// run's start in whole seconds, and draw uids and jitter from the scenario's seed.
    async fn start(s: &Scenario, (): ()) -> Result<Self, RunError> {
        if let Some(e) = missing_feature(s) {
            return Err(e);
        }
        let clock = RunClock::start();
        let config = cloud::config(s).map_err(RunError::CloudQuota)?;
        let local = MockCloud::new(config).map_err(RunError::Cloud)?;
        let cloud_epoch = clock.epoch_at(local.started_at(), Duration::ZERO);
        let stamp_epoch = clock.wall_start_second();
        // Deployments roll out (a status one second after each change), as on a cluster.
        let apiserver = ApiServer::new(
            mock_apiserver::Config::default()
                .with_journal_capacity(API_JOURNAL_CAPACITY)
                .with_seed(s.seed)
                .with_epoch(stamp_epoch)
                .with_deployment_rollouts(Duration::from_secs(1)),
        );
        let api_epoch = clock.epoch_at(apiserver.started_at(), Duration::ZERO);
        let stamps = provider::reconciler::meta::Clock::at(stamp_epoch, apiserver.started_at());
        let crds = provider::crd::crds_yaml().map_err(RunError::CrdsRender)?;
        apiserver.load_crd_yaml(&crds).map_err(RunError::CrdsLoad)?;
        let service = ServiceBuilder::new()
            .layer(own::layer(OwnRequests::default()))
            .service(apiserver.service());
        let client = kube::Client::new(service, "default");
        let core = if s.composites.any() {
            Some(crate::run::core::embedded::EmbeddedCore::start(&apiserver, s).await?)
        } else {
            None
        };
        let metrics = Arc::new(ProviderMetrics::new());
        let target = Embedded {
            clock,
            apiserver,
            api_epoch,
            client,
            cloud: LocalCloud {
                cloud: local,
                epoch: cloud_epoch,
            },
            readings: InProcessMetrics::new(Arc::clone(&metrics)),
            metrics,
            settings: s.settings.clone(),
            aws: s.aws,
            kinds: scenario_kinds(s)
                .into_iter()
                .map(|k| (k.resource.group, k.resource.version, k.resource.plural))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
            seed: s.seed,
            stamps,
            reconcile_cost: s.simulated_reconcile_cpu(),
            provider: Mutex::new(None),
            starts: AtomicU32::new(0),
            exact_agent: core.is_some(),
            core,
            composed: crate::run::objects::composed_kinds(s)
                .into_iter()
                .map(|k| k.name)
                .collect(),
        };
        target.start_provider();
        Ok(target)
    }

    fn clock(&self) -> RunClock {
        self.clock
    }

    fn client(&self) -> kube::Client {
        self.client.clone()
    }

    fn cloud(&self) -> &LocalCloud {
        &self.cloud
    }

    /// The AWS flavour's in-process transport reaches mock-cloud whatever the host.
    fn cloud_url(&self) -> Option<&str> {
        Some(CLOUD_URL)
    }

    /// Nothing to check: it serves the provider's CRDs, the catalogue validation resolved
    /// the scenario's kinds against.
    async fn check_kinds(&self, _scenario: &Scenario) -> Result<(), RunError> {
        Ok(())
    }

    fn take_sources(&mut self) -> TargetSources {
        TargetSources {
            // The harness's own server: every request but the harness's is the provider's.
            api: ApiRequests::InProcess(InProcess::start(
                self.apiserver.clone(),
                self.api_epoch,
                if self.exact_agent {
                    ProviderAgent::Prefix(provider::kube_client::USER_AGENT_PREFIX.to_owned())
                } else {
                    ProviderAgent::NotHarness
                },
            )),
            provider: Some(ProviderMetricsSource::InProcess(self.readings.clone())),
            memory: MemoryProbe::InProcess {
                cloud: self.cloud.cloud.clone(),
                apiserver: self.apiserver.clone(),
                kinds: self.kinds.clone(),
            },
        }
    }

    async fn restart_provider(&mut self, _deadline: Instant) -> Result<(), RunError> {
        self.stop_provider().await;
        self.start_provider();
        Ok(())
    }

    /// Aborts the provider's task at once: its future is dropped where it stands, which
    /// aborts its workers, watches and event writer (an in-flight reconcile stops between two
    /// requests, a queued event is never written).
    async fn kill_provider(&self, _deadline: Instant) -> Result<(), RunError> {
        let running = self.running().take();
        if let Some(p) = running {
            p.task.abort();
            match p.task.await {
                Err(e) if e.is_cancelled() => {}
                Err(e) => tracing::error!(error = %e, "the provider task failed"),
                Ok(Err(e)) => tracing::error!(error = %e, "the provider failed"),
                Ok(Ok(_)) => tracing::warn!("the provider had stopped before it was killed"),
            }
        }
        Ok(())
    }

    /// Starts a new provider on the same API server and cloud, as a restarted pod would.
    async fn revive_provider(&self) -> Result<(), RunError> {
        self.start_provider();
        Ok(())
    }

    /// Stops the in-process provider (in-flight reconciles get [`PROVIDER_STOP_TIMEOUT`]).
    async fn stop_provider(&mut self) {
        let running = self.running().take();
        if let Some(p) = running {
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

    async fn finish_core(
        &mut self,
        log: &crate::run::core::xrs::XrLog,
        seen: &crate::run::source::watches::SeenMap,
    ) -> Option<crate::result::core::CoreReport> {
        let core = self.core.as_mut()?;
        core.stop().await;
        Some(crate::run::core::measure::report(
            core,
            &self.apiserver,
            (self.api_epoch, self.clock),
            (log, seen, &self.composed),
        ))
    }

    fn core_probe(&self) -> Option<crate::run::core::embedded::CoreProbe> {
        self.core
            .as_ref()
            .map(crate::run::core::embedded::EmbeddedCore::probe)
    }

    fn info(&self) -> TargetInfo {
        TargetInfo::Embedded
    }

    fn provider_starts(&self) -> u32 {
        self.starts.load(Ordering::Relaxed)
    }

    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_provider_seed_is_splitmix64s_output_function_of_the_pair() {
        // Seed 0, first start: the pair is φ, whose output is splitmix64's first from 0.
        assert_eq!(super::provider_seed(0, 0), 0xE220_A839_7B1D_CDAF);
        assert_ne!(super::provider_seed(0, 1), super::provider_seed(0, 0));
    }

    use super::*;

    fn scenario(group: &str) -> Scenario {
        let text = format!(
            "apiVersion: harness/v1\nname: f\ncalls:\n  - {{apiVersion: ec2.aws.m.loadtest.dev/v1beta1, kind: VPC, connect: 1, observe: 1, create: 1, update: 2, delete: 1}}\n  - {{apiVersion: dynamodb.aws.m.loadtest.dev/v1beta1, kind: Table, connect: 1, observe: 2, create: 1, update: 2, delete: 1}}\nresources:\n  - {group}\nphases:\n  - {{name: c, action: create}}\nassertions:\n  - {{check: stuck, phase: c}}\n"
        );
        crate::scenario::parse(&text, "f.yaml").expect("valid in every build")
    }

    #[test]
    fn the_aws_flavours_kinds_vpc_included_need_feature_aws() {
        let vpc = scenario(
            "{name: v, apiVersion: ec2.aws.m.loadtest.dev/v1beta1, kind: VPC, count: 1, spec: {region: eu-west-1, cidrBlock: 10.0.0.0/16}}",
        );
        let table = scenario(
            "{name: t, apiVersion: dynamodb.aws.m.loadtest.dev/v1beta1, kind: Table, count: 1, spec: {region: eu-west-1, billingMode: PAY_PER_REQUEST, hashKey: id, attribute: [{name: id, type: S}]}}",
        );
        let sample = scenario("{name: b, kind: Bucket, count: 1}");
        assert!(vpc.uses_aws() && table.uses_aws() && !sample.uses_aws());
        let missing = |s: &Scenario, aws: bool| missing_feature_of(s, aws).map(|e| e.to_string());
        let needs_aws = Some(RunError::NeedsAwsFeature.to_string());
        assert_eq!(missing(&vpc, false), needs_aws);
        assert_eq!(missing(&vpc, true), None);
        assert_eq!(missing(&table, false), needs_aws);
        assert_eq!(missing(&table, true), None);
        assert_eq!(missing(&sample, false), None);
        assert!(
            needs_aws
                .as_deref()
                .is_some_and(|m| m.ends_with("`cargo build --release -p harness --features aws`")),
            "{needs_aws:?}"
        );
    }
}
