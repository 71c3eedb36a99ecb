//! Where a run happens, behind one trait: the [`embedded`] stack in this process, a
//! [`cluster`] reached through a kubeconfig, or a provider [`process`] against the mock
//! servers on loopback ([`remote_cloud`]: mock-cloud through its admin API, as a cluster
//! reaches it). The driver, the sources and the observation
//! code are generic over [`Target`]; only the two implementations know which one they are.

pub mod any;
pub mod cluster;
pub mod cluster_core;
pub mod embedded;
#[cfg(test)]
pub(crate) mod fake;
pub mod process;
pub mod remote_cloud;

use std::future::Future;
use std::time::Duration;

use mock_cloud::Faults;
use tokio::time::Instant;

use super::clock::{Epoch, RunClock};
use super::error::RunError;
use super::source::api::ApiRequests;
use super::source::memory::MemoryProbe;
use super::source::provider_metrics::ProviderMetricsSource;
use crate::scenario::Scenario;

/// What the result says about where a run happened.
pub use crate::result::RunTarget as TargetInfo;

/// The calls in a cloud's journal from some `seq` on.
#[derive(Clone, Debug, Default)]
pub struct CallsPage {
    /// The calls, oldest first.
    pub calls: Vec<mock_cloud::Call>,
    /// How many entries the journal has dropped since it started (full journal).
    pub dropped: u64,
}

/// Why a cloud-control operation failed.
#[derive(Debug, thiserror::Error)]
pub enum CloudError {
    /// The cloud rejected the faults it was given.
    #[error("mock-cloud rejected the faults")]
    Rejected(#[source] mock_cloud::ConfigError),
    /// mock-cloud's admin API could not be used.
    #[error("mock-cloud's admin API failed")]
    Admin(#[source] mock_cloud::admin::ClientError),
}

/// Control of the run's mock-cloud: faults, journal and inventory.
///
/// `async fn` without `Send` bounds: a run is driven on the caller's task (`block_on`),
/// never spawned, so its futures need not be `Send`.
#[allow(async_fn_in_trait)]
pub trait CloudControl {
    /// Where the cloud's time zero (of its journal and its outage windows) lies on the
    /// run's clock.
    fn epoch(&self) -> Epoch;

    /// Time on the cloud's clock now (outage windows are set on it).
    fn elapsed(&self) -> Duration;

    /// The faults in force.
    fn faults(&self) -> Faults;

    /// Replaces the faults in force.
    async fn set_faults(&self, faults: Faults) -> Result<(), CloudError>;

    /// The `seq` the next call will get.
    async fn next_seq(&self) -> Result<u64, CloudError>;

    /// Every journalled call from `since` on.
    async fn calls_since(&self, since: u64) -> Result<CallsPage, CloudError>;

    /// Every live resource in the cloud.
    async fn inventory(&self) -> Result<Vec<mock_cloud::Resource>, CloudError>;
}

/// The provider ended by itself: bad flags, a crash; not a restart, kill or stop of the
/// run's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderExit {
    /// Its exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// What the user reads: which start, its status, and the end of its log.
    pub message: String,
}

/// The measurement sources a target provides beside the ones every run has (the cloud
/// journal and the watches).
pub struct TargetSources {
    /// Where API-server requests are counted.
    pub api: ApiRequests,
    /// The provider's own metrics, when they can be read.
    pub provider: Option<ProviderMetricsSource>,
    /// What memory can be sampled.
    pub memory: MemoryProbe,
}

/// Where a run happens: the API server and its client, the cloud, the provider.
///
/// Generic, with `async fn`s, as kube-runtime's watcher is over its `ApiMode`: the driver
/// and [`run`](crate::run::run) are monomorphised per target, and a fake one unit-tests
/// them on paused time. A program that may run on any target compiles them once, for
/// [`any::AnyTarget`].
#[allow(async_fn_in_trait)]
pub trait Target: Sized {
    /// What the command line gives to start it.
    type Options;
    /// Whether, started with `options`, it can run on tokio's paused clock (every component
    /// in this process).
    fn virtual_time(options: &Self::Options) -> bool;
    /// Its cloud.
    type Cloud: CloudControl;

    /// Brings the target up with the scenario's settings and starts the run's clock at the
    /// moment measurement begins.
    async fn start(scenario: &Scenario, options: Self::Options) -> Result<Self, RunError>;

    /// The run's clock.
    fn clock(&self) -> RunClock;

    /// A Kubernetes client for the harness's own requests (its `User-Agent` tells them
    /// apart).
    fn client(&self) -> kube::Client;

    /// The cloud.
    fn cloud(&self) -> &Self::Cloud;

    /// Checks, after [`Target::start`] and before the run's first write, that the API
    /// server serves every kind the scenario names ([`crate::run::discovery`]): a cluster,
    /// or a provider's own CRD files, may lack one the scenario's catalogue has.
    ///
    /// # Errors
    /// [`RunError::UnservedKinds`], or discovery failed.
    async fn check_kinds(&self, scenario: &Scenario) -> Result<(), RunError> {
        super::discovery::check_served(&self.client(), scenario).await
    }

    /// mock-cloud's base URL as the provider reaches it, which replaces `{{cloudUrl}}` in
    /// scenario objects (none: the placeholder stays as written).
    fn cloud_url(&self) -> Option<&str> {
        None
    }

    /// The namespace of the credential Secrets the harness writes, if not the run's own
    /// (none: the run's own).
    fn secret_namespace(&self) -> Option<&str> {
        None
    }

    /// Whether what the run created is deleted at the end (no: a target whose stack ends
    /// with the run leaves nothing behind).
    fn cleans_up(&self) -> bool {
        false
    }

    /// The API-request and provider-metrics sources; called once, after [`Target::start`].
    fn take_sources(&mut self) -> TargetSources;

    /// Restarts the provider, waiting at most until `deadline` for it to be back.
    async fn restart_provider(&mut self, deadline: Instant) -> Result<(), RunError>;

    /// Kills the provider with no graceful shutdown (embedded: its tasks aborted; cluster:
    /// its pods deleted with grace period 0) and lets a new one start; waits at most until
    /// `deadline` for the kill to be accepted, not for the new provider.
    async fn kill_provider(&self, deadline: Instant) -> Result<(), RunError>;

    /// After [`Target::kill_provider`]: a new provider starts (embedded: in this process,
    /// on the same API server and cloud; cluster: the ReplicaSet does it by itself).
    async fn revive_provider(&self) -> Result<(), RunError>;

    /// Stops the provider if the run owns it (in-flight work gets its shutdown timeout).
    async fn stop_provider(&mut self);

    /// Completes when the provider ends by itself (see [`ProviderExit`]); never for a target
    /// that cannot tell. The future owns what it needs, so the run awaits it beside a phase
    /// that borrows the target.
    fn provider_exit(&self) -> impl Future<Output = ProviderExit> + 'static {
        std::future::pending()
    }

    /// Stops Crossplane core's composite layer, if the target runs one for the scenario's
    /// XR groups, and reads what it did: the driver's XR `log`, what the watches `seen`.
    /// `None` for a target without one.
    async fn finish_core(
        &mut self,
        _log: &super::core::xrs::XrLog,
        _seen: &super::source::watches::SeenMap,
    ) -> Option<crate::result::core::CoreReport> {
        None
    }

    /// After the run's measurements, when the target [cleans up](Target::cleans_up): deletes
    /// the run's `xrs` still there (each XR's API and name) and what the target created for
    /// Crossplane core, waiting at most until `deadline` for the XRs to go; returns the names
    /// of those still there. Nothing for a target whose core (if any) ends with the run.
    async fn clean_up_core(
        &self,
        _xrs: Vec<(kube::Api<kube::api::DynamicObject>, String)>,
        _deadline: Instant,
    ) -> Vec<String> {
        Vec::new()
    }

    /// What phases read and change of Crossplane core's composite layer while it runs
    /// (its function metrics, breakers and the in-process functions' faults); `None` for a
    /// target without one.
    fn core_probe(&self) -> Option<super::core::embedded::CoreProbe> {
        None
    }

    /// Where a core process's function metrics are read at each phase's start and end;
    /// `None` for a target without one, or whose core gives no `metricsUrl`.
    fn core_metrics(&self) -> Option<super::core::phase_state::CoreMetrics> {
        None
    }

    /// What the result says about the target.
    fn info(&self) -> TargetInfo;

    /// How many times the provider was started (in process) or rolled.
    fn provider_starts(&self) -> u32;

    /// Facts about how the target was measured, for the result's notes.
    fn notes(&self) -> Vec<String>;
}
