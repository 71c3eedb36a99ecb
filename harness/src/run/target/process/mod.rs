//! The process target: mock-apiserver and mock-cloud in this process, served on loopback
//! sockets, and the provider a profile names, run as a child process from its command line
//! (with `{{kubeconfig}}` and `{{cloudUrl}}` rendered). Its standard output and error go to
//! `provider-N.log` in the run's output directory, one file per start.
//!
//! # Semantics
//! - A restart phase sends the provider SIGTERM, waits for it to exit (at most the phase's
//!   deadline, then SIGKILL), and starts the command again.
//! - A kill phase sends SIGKILL at once; the revive starts the command again, as a
//!   Deployment's ReplicaSet would start a new pod.
//! - At the end of the run the provider gets SIGTERM and [`STOP_TIMEOUT`] to exit.
//! - A provider that exits by itself (bad flags, a crash) stops the run within
//!   [`EXIT_POLL`], with its exit status and the end of its log.
//! - The process keeps real time: virtual time is refused.
//! - With the profile's `metricsUrl`, the run waits (at most [`METRICS_TIMEOUT`]) for the
//!   provider's first start to answer there, checks its `provider_settings` when it has
//!   them, and scrapes it every second, summed across restarts as in a cluster, and once
//!   more before each SIGTERM (what a process counts while it drains is not read).
//! - A scenario with XR groups needs Crossplane core as a process too, from a core
//!   profile (`--core-profile`, [`crate::scenario::profile::core`]): the harness installs
//!   Crossplane's kinds and the scenario's Functions, XRDs and Compositions, starts core's
//!   `command` with the scenario's `core` settings appended as core's flags (its output in
//!   `core-1.log`), waits for core's XR CRDs, then starts the provider. Core is not
//!   restarted by the provider's phases; it gets SIGTERM when the run ends, after its
//!   metrics are read ([`crate::run::core::process`]). A core that exits by itself stops
//!   the run as the provider does.

use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mock_apiserver::ApiServer;
use mock_cloud::MockCloud;
use tokio::process::Child;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tower::ServiceBuilder;

use super::embedded::{API_JOURNAL_CAPACITY, LocalCloud};
use super::{ProviderExit, Target, TargetInfo, TargetSources};
use crate::run::clock::RunClock;
use crate::run::cloud;
use crate::run::core::process as core_process;
use crate::run::error::RunError;
use crate::run::objects::scenario_kinds;
use crate::run::own::{self, OwnRequests, ProviderAgent};
use crate::run::remote::Remote;
use crate::run::source::api::ApiRequests;
use crate::run::source::api_journal::InProcess;
use crate::run::source::memory::MemoryProbe;
use crate::run::source::provider_metrics::{ProviderMetricsSource, Tally};
use crate::scenario::Scenario;
use crate::scenario::profile::core::CoreProfile;
use crate::scenario::profile::{ProcessCommand, Rendered};

mod child;
mod crds;
mod crossplane_core;

use child::{Running, bind, exited, free_port, io_error, spawn, terminate};
use crds::{crd_files, crds};
use crossplane_core::{CoreProcess, core_process_of};

/// How long the provider gets to exit after SIGTERM at the end of a run.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(15);

/// How often the run looks whether the provider has exited by itself.
pub const EXIT_POLL: Duration = Duration::from_millis(100);

/// How long the provider's first start has to answer at its `metricsUrl`.
pub const METRICS_TIMEOUT: Duration = Duration::from_secs(60);

/// Where a process run writes the provider's logs and its kubeconfig.
#[derive(Clone, Debug)]
pub struct ProcessOptions {
    /// The run's output directory.
    pub out: PathBuf,
    /// Crossplane core's profile, for a scenario with XR groups.
    pub core: Option<CoreProfile>,
}

/// The servers on loopback and the provider's child process.
pub struct Process {
    clock: RunClock,
    apiserver: ApiServer,
    api_epoch: crate::run::clock::Epoch,
    /// How the journal tells the provider's requests apart.
    agent: ProviderAgent,
    client: kube::Client,
    cloud: LocalCloud,
    command: ProcessCommand,
    kubeconfig: PathBuf,
    cloud_url: String,
    logs: PathBuf,
    /// The loopback port `{{metricsPort}}` stands for (0: not used).
    metrics_port: u16,
    /// The provider's metrics, scraped, until the sources are taken.
    provider_metrics: Option<ProviderMetricsSource>,
    /// Their running sum, scraped once more before each stop of the provider.
    tally: Option<Tally>,
    metrics_note: String,
    kinds: Vec<(String, String, String)>,
    /// The running provider; shared with [`Target::provider_exit`]'s future.
    child: Arc<Mutex<Option<Running>>>,
    starts: AtomicU32,
    /// Crossplane core, for a scenario with XR groups.
    core: Option<CoreProcess>,
    _servers: (oneshot::Sender<()>, oneshot::Sender<()>),
}

impl Process {
    /// Starts the provider's command once more; its output goes to `provider-N.log`.
    fn start_provider(&self) -> Result<(), RunError> {
        let n = self.starts.fetch_add(1, Ordering::Relaxed) + 1;
        let kubeconfig = self.kubeconfig.display().to_string();
        let render = |t: &str| ProcessCommand::render(t, self.rendered(&kubeconfig));
        let running = spawn("provider", n, (&self.command, &[]), render, &self.logs)?;
        *self.child.lock().unwrap_or_else(|e| e.into_inner()) = Some(running);
        Ok(())
    }

    fn rendered<'a>(&'a self, kubeconfig: &'a str) -> Rendered<'a> {
        Rendered {
            kubeconfig,
            cloud_url: &self.cloud_url,
            metrics_port: self.metrics_port,
        }
    }

    /// Waits for the provider to answer at `url` (at most [`METRICS_TIMEOUT`]), checks its
    /// settings when it reports them, and starts scraping it.
    async fn connect_metrics(&mut self, s: &Scenario, url: &str) -> Result<(), RunError> {
        let deadline = Instant::now() + METRICS_TIMEOUT;
        let (tally, checked) = loop {
            match Tally::connect(url, Some(&s.settings)).await {
                Ok(connected) => break connected,
                Err(RunError::ProviderMetrics(_)) if Instant::now() < deadline => {
                    self.check_running()?;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => return Err(e),
            }
        };
        self.metrics_note = format!(
            "its metrics were scraped every second from {url}{}",
            if checked {
                "; its provider_settings agree with the scenario's"
            } else {
                ""
            }
        );
        self.tally = Some(tally.clone());
        self.provider_metrics = Some(ProviderMetricsSource::scraped(tally));
        Ok(())
    }

    /// Whether the provider's process still runs.
    ///
    /// # Errors
    /// [`RunError::ProviderExited`], with its exit status and the log that says why.
    fn check_running(&self) -> Result<(), RunError> {
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        let Some(Ok(Some(status))) = child.as_mut().map(|r| r.child.try_wait()) else {
            return Ok(());
        };
        Err(RunError::ProviderExited {
            status: status.to_string(),
            log: self.logs.join(format!(
                "provider-{}.log",
                self.starts.load(Ordering::Relaxed)
            )),
        })
    }

    /// The running provider, taken out of the exit watch's sight: what the run does to it
    /// next is no exit by itself.
    fn take_child(&self) -> Option<Child> {
        self.child
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .map(|r| r.child)
    }
}

impl Target for Process {
    type Options = ProcessOptions;
    fn virtual_time(_: &Self::Options) -> bool {
        false
    }
    type Cloud = LocalCloud;

    /// Starts the clock, mock-cloud and mock-apiserver (with the profile's CRDs) on loopback
    /// ports, writes the kubeconfig into the output directory, then starts the provider.
    async fn start(s: &Scenario, options: ProcessOptions) -> Result<Self, RunError> {
        let command = s
            .profile
            .as_ref()
            .and_then(|p| p.process.clone())
            .ok_or(RunError::NoProcessCommand)?;
        std::fs::create_dir_all(&options.out)
            .map_err(io_error(format!("create {}", options.out.display())))?;
        let core_profile = match (s.composites.any(), options.core) {
            (false, _) => None,
            (true, None) => {
                return Err(RunError::CoreSetup(
                    "the scenario has XR groups, and on the process target Crossplane core runs as a process too: give its profile with --core-profile FILE (scenarios/profiles/composer.yaml runs this workspace's composer; docs/core-process.md)".to_owned(),
                ));
            }
            (true, Some(p)) => Some(p),
        };
        let clock = RunClock::start();
        let config = cloud::config(s).map_err(RunError::CloudQuota)?;
        let local = MockCloud::new(config).map_err(RunError::Cloud)?;
        let cloud_epoch = clock.epoch_at(local.started_at(), Duration::ZERO);
        let apiserver = ApiServer::new(
            mock_apiserver::Config::default()
                .with_journal_capacity(API_JOURNAL_CAPACITY)
                .with_seed(s.seed)
                .with_epoch(clock.wall_start_second())
                .with_deployment_rollouts(Duration::from_secs(1)),
        );
        let api_epoch = clock.epoch_at(apiserver.started_at(), Duration::ZERO);
        for text in crds(s, &command)? {
            apiserver.load_crd_yaml(&text).map_err(RunError::CrdsLoad)?;
        }
        let core = match core_profile {
            Some(profile) => Some(core_process_of(s, profile)?),
            None => None,
        };
        if let Some(core) = &core {
            for text in crd_files(&core.command.crds)? {
                apiserver.load_crd_yaml(&text).map_err(RunError::CrdsLoad)?;
            }
        }
        let (api_listener, api_url) = bind().await?;
        let (cloud_listener, cloud_url) = bind().await?;
        let (stop_api, api_stopped) = oneshot::channel::<()>();
        let (stop_cloud, cloud_stopped) = oneshot::channel::<()>();
        tokio::spawn(mock_apiserver::serve(
            api_listener,
            apiserver.clone(),
            async {
                let _ = api_stopped.await;
            },
        ));
        tokio::spawn(mock_cloud::serve(cloud_listener, local.clone(), async {
            let _ = cloud_stopped.await;
        }));
        let kubeconfig = options.out.join("kubeconfig");
        mock_apiserver::write_kubeconfig(&kubeconfig, &api_url)
            .map_err(io_error(format!("write {}", kubeconfig.display())))?;
        let kubeconfig = std::path::absolute(&kubeconfig).unwrap_or(kubeconfig);
        let metrics_port = if command.uses_metrics_port() {
            free_port().await?
        } else {
            0
        };
        let service = ServiceBuilder::new()
            .layer(own::layer(OwnRequests::default()))
            .service(apiserver.service());
        let mut target = Process {
            clock,
            api_epoch,
            agent: ProviderAgent::of(s),
            client: kube::Client::new(service, "default"),
            cloud: LocalCloud::new(local, cloud_epoch),
            apiserver,
            command,
            kubeconfig,
            cloud_url,
            logs: options.out,
            metrics_port,
            provider_metrics: None,
            tally: None,
            metrics_note: "its own metrics were not read (the profile has no metricsUrl)"
                .to_owned(),
            kinds: scenario_kinds(s)
                .into_iter()
                .map(|k| (k.resource.group, k.resource.version, k.resource.plural))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
            child: Arc::new(Mutex::new(None)),
            starts: AtomicU32::new(0),
            core,
            _servers: (stop_api, stop_cloud),
        };
        if let Some(core) = &mut target.core
            && core.command.uses_metrics_port()
        {
            core.metrics_port = free_port().await?;
        }
        if let Some(core) = &mut target.core
            && let Some(url) = core.command.metrics_url.clone()
        {
            let url = ProcessCommand::render(
                &url,
                Rendered {
                    kubeconfig: "",
                    cloud_url: &target.cloud_url,
                    metrics_port: core.metrics_port,
                },
            );
            let (remote, path) = Remote::for_url(&url).map_err(|e| {
                RunError::CoreSetup(format!("core's metricsUrl {url} cannot be used: {e}"))
            })?;
            core.metrics = Some((remote, path, url));
        }
        target.start_core(s).await?;
        target.start_provider()?;
        if let Some(url) = target.command.metrics_url.clone() {
            let kubeconfig = target.kubeconfig.display().to_string();
            let url = ProcessCommand::render(&url, target.rendered(&kubeconfig));
            target.connect_metrics(s, &url).await?;
        }
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

    fn cloud_url(&self) -> Option<&str> {
        Some(&self.cloud_url)
    }

    fn take_sources(&mut self) -> TargetSources {
        TargetSources {
            api: ApiRequests::InProcess(InProcess::start(
                self.apiserver.clone(),
                self.api_epoch,
                self.agent.clone(),
            )),
            provider: self.provider_metrics.take(),
            memory: MemoryProbe::InProcess {
                cloud: self.cloud.mock().clone(),
                apiserver: self.apiserver.clone(),
                kinds: self.kinds.clone(),
            },
        }
    }

    async fn restart_provider(&mut self, deadline: Instant) -> Result<(), RunError> {
        // What the process counted since the last scrape, before it exits.
        if let Some(t) = &self.tally {
            t.scrape().await;
        }
        if let Some(child) = self.take_child() {
            terminate(child, deadline).await;
        }
        self.start_provider()
    }

    /// SIGKILL, and waits for the exit.
    async fn kill_provider(&self, _deadline: Instant) -> Result<(), RunError> {
        if let Some(mut child) = self.take_child() {
            let _ = child.kill().await;
        }
        Ok(())
    }

    async fn revive_provider(&self) -> Result<(), RunError> {
        self.start_provider()
    }

    async fn stop_provider(&mut self) {
        if let Some(t) = &self.tally {
            t.last_scrape().await;
        }
        if let Some(child) = self.take_child() {
            terminate(child, Instant::now() + STOP_TIMEOUT).await;
        }
    }

    fn provider_exit(&self) -> impl Future<Output = ProviderExit> + 'static {
        let slot = Arc::clone(&self.child);
        let core = self.core.as_ref().map(|c| Arc::clone(&c.child));
        async move {
            loop {
                if let Some(exit) = exited(&slot) {
                    return exit;
                }
                if let Some(exit) = core.as_deref().and_then(exited) {
                    return exit;
                }
                tokio::time::sleep(EXIT_POLL).await;
            }
        }
    }

    fn core_metrics(&self) -> Option<crate::run::core::phase_state::CoreMetrics> {
        let (remote, path, _) = self.core.as_ref()?.metrics.as_ref()?;
        Some(crate::run::core::phase_state::CoreMetrics {
            remote: remote.clone(),
            path: path.clone(),
        })
    }

    /// Reads core's metrics once more, stops it (SIGTERM, [`STOP_TIMEOUT`]) and reads
    /// what it did ([`core_process::report`]).
    async fn finish_core(
        &mut self,
        log: &crate::run::core::xrs::XrLog,
        seen: &crate::run::source::watches::SeenMap,
    ) -> Option<crate::result::core::CoreReport> {
        let core = self.core.as_ref()?;
        let calls = match &core.metrics {
            Some((remote, path, url)) => {
                core_process::read_function_figures(remote, path, url).await
            }
            None => Err(
                "the core profile has no metricsUrl, so core's function metrics were not read"
                    .to_owned(),
            ),
        };
        let child = core
            .child
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .map(|r| r.child);
        if let Some(child) = child {
            terminate(child, Instant::now() + STOP_TIMEOUT).await;
        }
        Some(core_process::report(
            &core.profile.user_agent,
            calls,
            &self.apiserver.journal().since(0),
            (self.api_epoch, self.clock),
            (log, seen, &core.composed),
        ))
    }

    fn info(&self) -> TargetInfo {
        TargetInfo::Process {
            command: std::iter::once(self.command.program.display().to_string())
                .chain(self.command.args.iter().cloned())
                .collect::<Vec<_>>()
                .join(" "),
            cloud_url: self.cloud_url.clone(),
            logs: self.logs.display().to_string(),
        }
    }

    fn provider_starts(&self) -> u32 {
        self.starts.load(Ordering::Relaxed)
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = vec![format!(
            "the provider ran as a child process ({}); its logs are provider-N.log in {}, one per start; {}",
            self.command.program.display(),
            self.logs.display(),
            self.metrics_note
        )];
        if let Some(core) = &self.core {
            notes.push(format!(
                "Crossplane core ran as a child process from the core profile {} ({} {} {}), its log core-1.log; its API requests are the journal's whose User-Agent starts with {:?}; {}",
                core.profile.file,
                core.command.program.display(),
                core.command.args.join(" "),
                core.settings.join(" "),
                core.profile.user_agent,
                match &core.metrics {
                    Some((_, _, url)) => format!("its function calls were read from {url} at the end"),
                    None => "its function calls were not read (the core profile has no metricsUrl)".to_owned(),
                }
            ));
        }
        notes
    }
}
