//! [`AnyTarget`]: one target type for the three real ones, chosen when the run starts, so
//! that a program that can run on any of them (the `harness` binary) has the run, its
//! driver and its sources compiled once instead of once per target. Each method is one
//! `match` that hands the call to the target chosen; the run's own code is the same.
//!
//! The generic [`run`](crate::run::run) stays for a caller that knows its target (the
//! tests run [`Embedded`] and a fake), which then gets no `match` at all.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use mock_cloud::Faults;
use tokio::time::Instant;

use super::cluster::{Cluster, ClusterOptions};
use super::embedded::{Embedded, LocalCloud};
use super::process::{Process, ProcessOptions};
use super::remote_cloud::RemoteCloud;
use super::{CallsPage, CloudControl, CloudError, ProviderExit, Target, TargetInfo, TargetSources};
use crate::run::clock::{Epoch, RunClock};
use crate::run::core::embedded::CoreProbe;
use crate::run::core::phase_state::CoreMetrics;
use crate::run::core::xrs::XrLog;
use crate::run::error::RunError;
use crate::run::source::watches::SeenMap;
use crate::scenario::Scenario;

/// The target a run goes to, with its options: what [`run_on`](crate::run::run_on) takes,
/// and what an [`AnyTarget`] starts with.
#[derive(Debug)]
pub enum On {
    /// The [`Embedded`] stack, in this process.
    Embedded,
    /// The provider (and core) as processes ([`Process`]).
    Process(ProcessOptions),
    /// A cluster through a kubeconfig ([`Cluster`]).
    Cluster(Box<ClusterOptions>),
}

/// The cloud of an [`AnyTarget`]: mock-cloud in this process, or reached over HTTP.
pub enum AnyCloud {
    /// The embedded stack's, or the process target's (in this process either way).
    Local(LocalCloud),
    /// A cluster's mock-cloud, through its admin API.
    Remote(Arc<RemoteCloud>),
}

/// Hands a call to the cloud in use.
macro_rules! on_cloud {
    ($cloud:expr, $c:ident => $call:expr) => {
        match $cloud {
            AnyCloud::Local($c) => $call,
            AnyCloud::Remote($c) => $call,
        }
    };
}

impl CloudControl for AnyCloud {
    fn epoch(&self) -> Epoch {
        on_cloud!(self, c => c.epoch())
    }

    fn elapsed(&self) -> Duration {
        on_cloud!(self, c => c.elapsed())
    }

    fn faults(&self) -> Faults {
        on_cloud!(self, c => c.faults())
    }

    async fn set_faults(&self, faults: Faults) -> Result<(), CloudError> {
        on_cloud!(self, c => c.set_faults(faults).await)
    }

    async fn next_seq(&self) -> Result<u64, CloudError> {
        on_cloud!(self, c => c.next_seq().await)
    }

    async fn calls_since(&self, since: u64) -> Result<CallsPage, CloudError> {
        on_cloud!(self, c => c.calls_since(since).await)
    }

    async fn inventory(&self) -> Result<Vec<mock_cloud::Resource>, CloudError> {
        on_cloud!(self, c => c.inventory().await)
    }
}

/// One of the three targets, chosen by the [`On`] it starts with.
pub struct AnyTarget {
    target: Chosen,
    /// A handle on the chosen target's cloud (the same cloud).
    cloud: AnyCloud,
}

enum Chosen {
    Embedded(Box<Embedded>),
    Process(Box<Process>),
    Cluster(Box<Cluster>),
}

/// Hands a call to the target in use.
macro_rules! on_target {
    ($target:expr, $t:ident => $call:expr) => {
        match $target {
            Chosen::Embedded($t) => $call,
            Chosen::Process($t) => $call,
            Chosen::Cluster($t) => $call,
        }
    };
}

impl Target for AnyTarget {
    type Options = On;
    type Cloud = AnyCloud;

    fn virtual_time(options: &On) -> bool {
        match options {
            On::Embedded => Embedded::virtual_time(&()),
            On::Process(o) => Process::virtual_time(o),
            On::Cluster(o) => Cluster::virtual_time(o),
        }
    }

    async fn start(scenario: &Scenario, options: On) -> Result<Self, RunError> {
        Ok(match options {
            On::Embedded => {
                let t = Embedded::start(scenario, ()).await?;
                AnyTarget {
                    cloud: AnyCloud::Local(t.cloud().clone()),
                    target: Chosen::Embedded(Box::new(t)),
                }
            }
            On::Process(options) => {
                let t = Process::start(scenario, options).await?;
                AnyTarget {
                    cloud: AnyCloud::Local(t.cloud().clone()),
                    target: Chosen::Process(Box::new(t)),
                }
            }
            On::Cluster(options) => {
                let t = Cluster::start(scenario, *options).await?;
                AnyTarget {
                    cloud: AnyCloud::Remote(t.shared_cloud()),
                    target: Chosen::Cluster(Box::new(t)),
                }
            }
        })
    }

    fn clock(&self) -> RunClock {
        on_target!(&self.target, t => t.clock())
    }

    fn client(&self) -> kube::Client {
        on_target!(&self.target, t => t.client())
    }

    fn cloud(&self) -> &AnyCloud {
        &self.cloud
    }

    async fn check_kinds(&self, scenario: &Scenario) -> Result<(), RunError> {
        on_target!(&self.target, t => t.check_kinds(scenario).await)
    }

    fn cloud_url(&self) -> Option<&str> {
        on_target!(&self.target, t => t.cloud_url())
    }

    fn secret_namespace(&self) -> Option<&str> {
        on_target!(&self.target, t => t.secret_namespace())
    }

    fn cleans_up(&self) -> bool {
        on_target!(&self.target, t => t.cleans_up())
    }

    fn take_sources(&mut self) -> TargetSources {
        on_target!(&mut self.target, t => t.take_sources())
    }

    async fn restart_provider(&mut self, deadline: Instant) -> Result<(), RunError> {
        on_target!(&mut self.target, t => t.restart_provider(deadline).await)
    }

    async fn kill_provider(&self, deadline: Instant) -> Result<(), RunError> {
        on_target!(&self.target, t => t.kill_provider(deadline).await)
    }

    async fn revive_provider(&self) -> Result<(), RunError> {
        on_target!(&self.target, t => t.revive_provider().await)
    }

    async fn stop_provider(&mut self) {
        on_target!(&mut self.target, t => t.stop_provider().await);
    }

    fn provider_exit(&self) -> impl Future<Output = ProviderExit> + 'static {
        let exit: Pin<Box<dyn Future<Output = ProviderExit>>> =
            on_target!(&self.target, t => Box::pin(t.provider_exit()));
        exit
    }

    async fn finish_core(
        &mut self,
        log: &XrLog,
        seen: &SeenMap,
    ) -> Option<crate::result::core::CoreReport> {
        on_target!(&mut self.target, t => t.finish_core(log, seen).await)
    }

    async fn clean_up_core(
        &self,
        xrs: Vec<(kube::Api<kube::api::DynamicObject>, String)>,
        deadline: Instant,
    ) -> Vec<String> {
        on_target!(&self.target, t => t.clean_up_core(xrs, deadline).await)
    }

    fn core_probe(&self) -> Option<CoreProbe> {
        on_target!(&self.target, t => t.core_probe())
    }

    fn core_metrics(&self) -> Option<CoreMetrics> {
        on_target!(&self.target, t => t.core_metrics())
    }

    fn info(&self) -> TargetInfo {
        on_target!(&self.target, t => t.info())
    }

    fn provider_starts(&self) -> u32 {
        on_target!(&self.target, t => t.provider_starts())
    }

    fn notes(&self) -> Vec<String> {
        on_target!(&self.target, t => t.notes())
    }
}
