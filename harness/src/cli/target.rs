//! Where `run` and `calibrate` happen: the cluster options of the command line, and the
//! target they and the scenario choose.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;
use harness::run;
use harness::run::target::cluster;
use harness::scenario::{self, TimeMode};

/// Where a cluster run finds the cluster, the provider and mock-cloud; by default none (the
/// embedded stack or the scenario's own target, as for a sweep's points).
#[derive(Debug, Default, Args)]
#[group(id = "cluster-target")]
#[command(next_help_heading = "Cluster runs")]
pub struct ClusterArgs {
    /// Run against the cluster of this kubeconfig instead of the embedded stack.
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// The kubeconfig context [default: its current context].
    #[arg(long, value_name = "NAME", requires = "kubeconfig")]
    context: Option<String>,
    /// mock-cloud's base URL, reachable from here (e.g. a port-forward:
    /// http://127.0.0.1:18080). Required with --kubeconfig.
    #[arg(long, value_name = "URL", requires = "kubeconfig")]
    cloud_url: Option<String>,
    /// mock-cloud's base URL as the provider reaches it (in a cluster, its Service: e.g.
    /// http://mock-cloud.loadtest-system:8080), which replaces {{cloudUrl}} in the
    /// scenario's objects (a ProviderConfig's endpoint) [default: --cloud-url].
    #[arg(long, value_name = "URL", requires = "kubeconfig")]
    provider_cloud_url: Option<String>,
    /// The provider's /metrics URL, reachable from here (e.g.
    /// http://127.0.0.1:18081/metrics): the run checks the provider's settings against the
    /// scenario's and cross-checks its counters against the cloud's journal.
    #[arg(long, value_name = "URL", requires = "kubeconfig")]
    provider_metrics_url: Option<String>,
    /// The provider's Deployment, rolled by restart phases; its namespace gets the
    /// credential Secrets.
    #[arg(
        long,
        value_name = "NAMESPACE/NAME",
        default_value = cluster::DEFAULT_PROVIDER_DEPLOYMENT,
        value_parser = cluster::parse_deployment)]
    provider_deployment: (String, String),
    /// The provider's container in the Deployment, whose args are checked against the
    /// scenario's profile [default: the first container].
    #[arg(long, value_name = "NAME", requires = "kubeconfig")]
    provider_container: Option<String>,
    /// The ServiceAccount the provider's pods run as (the one the FlowSchema of
    /// --api-requests-from flowschema selects: `harness flowschema` prints it for any); the
    /// run refuses a Deployment that runs as another.
    #[arg(long, value_name = "NAME", requires = "kubeconfig")]
    provider_service_account: Option<String>,
    /// Leave the resources, namespace, Secrets and ProviderConfigs the run created.
    #[arg(long, requires = "kubeconfig")]
    keep: bool,
    /// Where to read the provider's API-server requests (every group, by verb and
    /// resource): `journal`, mock-apiserver's (exact; the provider told apart by its
    /// User-Agent); `flowschema`, the FlowSchema loadtest-provider's series (its
    /// ServiceAccount's requests, and the server's 429s and queueing of them);
    /// `metrics`, apiserver_request_total minus the harness's own (other clients' count
    /// too, so a count past its bound is UNMEASURED). `auto` takes the first the server
    /// offers, in that order.
    #[arg(long, value_enum, default_value_t, value_name = "SOURCE")]
    api_requests_from: run::source::ApiSource,
    /// How often the API server's journal or /metrics is read, e.g. 1s or 200ms. A
    /// metrics source dates each read's increase at the read, so a window's count is exact
    /// to one interval; a real API server's /metrics is megabytes, so keep it at a second
    /// or more there.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = scrape_interval, requires = "kubeconfig")]
    api_scrape_interval: std::time::Duration,
    /// Start even when the provider's Deployment args differ from the scenario's settings.
    /// Without it a cluster run reads the container's args (this workspace's provider's
    /// flags, or the profile's `flags` family) and refuses with exit 2 naming each flag
    /// that differs, since the budget is predicted from the scenario's settings.
    #[arg(long, requires = "kubeconfig")]
    no_settings_check: bool,
    /// Crossplane core's profile (`flags: crossplane-core`), for a scenario with XR groups
    /// on the process target: core runs as a child process from its `command`, with the
    /// scenario's `core` settings appended as core's flags, against mock-apiserver
    /// (scenarios/profiles/composer.yaml runs this workspace's composer;
    /// scenarios/profiles/crossplane-core.yaml shows `crossplane core start`; what core
    /// needs from the API server is in docs/core-process.md).
    #[arg(long, value_name = "FILE", help_heading = "Crossplane core")]
    core_profile: Option<PathBuf>,
    /// Crossplane core's Deployment in the cluster, for a scenario with XR groups: its
    /// container's args must give the scenario's `core` settings (`harness core-args`
    /// prints them), unless --no-settings-check.
    #[arg(
        long,
        value_name = "NAMESPACE/NAME",
        default_value = run::target::cluster_core::DEFAULT_CORE_DEPLOYMENT,
        value_parser = cluster::parse_deployment,
        help_heading = "Crossplane core")]
    core_deployment: (String, String),
    /// Core's container in its Deployment [default: the first container].
    #[arg(
        long,
        value_name = "NAME",
        requires = "kubeconfig",
        help_heading = "Crossplane core"
    )]
    core_container: Option<String>,
    /// Core's /metrics URL, reachable from here (e.g. a port-forward to core's metrics
    /// port: http://127.0.0.1:18082/metrics): its function calls and latency, over the run
    /// and per phase. Without it `functionCalls` is UNMEASURED on the cluster target.
    #[arg(
        long,
        value_name = "URL",
        requires = "kubeconfig",
        help_heading = "Crossplane core"
    )]
    core_metrics_url: Option<String>,
    /// The start of the User-Agent of core's requests, which the API server's journal
    /// counts as core's (Crossplane's client sends `crossplane/VERSION (OS/ARCH) …`).
    #[arg(
        long,
        value_name = "PREFIX",
        default_value = run::core::cluster::DEFAULT_CORE_USER_AGENT,
        requires = "kubeconfig",
        help_heading = "Crossplane core")]
    core_user_agent: String,
}

/// `--api-scrape-interval`: a Go duration of at least 10 ms.
fn scrape_interval(text: &str) -> std::result::Result<std::time::Duration, String> {
    let d = limiter::go::GoDuration::parse(text)
        .map_err(|e| format!("{e}, expected a duration such as 1s or 200ms"))?
        .to_std();
    if d < std::time::Duration::from_millis(10) {
        return Err(format!("{text} is below 10ms, expected a longer interval"));
    }
    Ok(d)
}

/// Where a run happens, as the command line says.
pub(super) enum Where {
    Embedded,
    /// With Crossplane core's profile for a scenario with XR groups.
    Process(Option<Box<scenario::profile::core::CoreProfile>>),
    Cluster(Box<run::ClusterOptions>),
}

impl ClusterArgs {
    /// Where `s` runs; `flag` says whether its virtual time came from --virtual-time,
    /// `process` whether --process was given.
    pub(super) fn target(
        self,
        s: &harness::scenario::Scenario,
        flag: bool,
        process: bool,
    ) -> Result<Where> {
        let process = process || s.target == scenario::Target::Process;
        if !s.composites.any()
            && let Some(flag) = [
                self.core_metrics_url.as_ref().map(|_| "--core-metrics-url"),
                self.core_container.as_ref().map(|_| "--core-container"),
            ]
            .into_iter()
            .flatten()
            .next()
        {
            bail!(
                "{flag} is for Crossplane core, which runs a scenario's XR groups, and scenario {} has none (`composites`)",
                s.name
            );
        }
        let core = match &self.core_profile {
            Some(_) if !s.composites.any() => bail!(
                "--core-profile runs Crossplane core for XR groups, and scenario {} has none (`composites`)",
                s.name
            ),
            Some(_) if !process => bail!(
                "--core-profile runs Crossplane core as a process beside the provider's: add --process"
            ),
            Some(path) => Some(scenario::profile::core::load(path)?),
            None => None,
        };
        if s.composites.any() {
            if self.kubeconfig.is_some()
                && let Some(why) = run::core::process::unsupported(s)
            {
                bail!(
                    "scenario {}: {why} (on the cluster target, core runs in the cluster)",
                    s.name
                );
            }
            if process && core.is_none() {
                bail!(
                    "scenario {} has XR groups (`composites`): on the process target Crossplane core runs as a process too, from --core-profile FILE (scenarios/profiles/composer.yaml runs this workspace's composer), or leave out --process to run the composer embedded",
                    s.name
                );
            }
            let remote =
                s.composites.functions.iter().find(|f| {
                    matches!(f.runtime, scenario::composite::FunctionRuntime::Address(_))
                });
            if let (Some(f), TimeMode::Virtual) = (remote, s.time) {
                bail!(
                    "Function {} is served over gRPC at an address, which keeps real time: a run in virtual time calls only the built-in function (run in real time{})",
                    f.name,
                    if flag {
                        " without --virtual-time"
                    } else {
                        " with --set time=real"
                    }
                );
            }
        }
        if s.time == TimeMode::Virtual {
            let asked = if flag {
                "--virtual-time".to_owned()
            } else {
                format!("scenario {}'s `time: virtual`", s.name)
            };
            if process {
                bail!(
                    "{asked} cannot run on the process target: virtual time runs the embedded stack on a paused clock, and a provider in another process keeps real time (run in real time{}, or leave out --process to run this workspace's provider embedded)",
                    if flag { "" } else { " with --set time=real" }
                );
            }
            let why = "virtual time runs the embedded stack on a paused clock, and a cluster's API server, provider and mock-cloud keep real time";
            if self.kubeconfig.is_some() {
                bail!(
                    "{asked} cannot run with --kubeconfig: {why} (leave out --kubeconfig, or run in real time{})",
                    if flag { "" } else { " with --set time=real" }
                );
            }
            if s.target == scenario::Target::Cluster {
                bail!(
                    "{asked} cannot run scenario {}, which has `target: cluster`: {why}",
                    s.name
                );
            }
        }
        if process {
            if self.kubeconfig.is_some() {
                bail!(
                    "scenario {} has `target: process`: leave out --kubeconfig",
                    s.name
                );
            }
            if s.profile.as_ref().is_none_or(|p| p.process.is_none()) {
                bail!(
                    "the process target runs the provider from the scenario's `profile.command`, and scenario {} has none (scenarios/README.md, \"Budget your own provider\")",
                    s.name
                );
            }
            return Ok(Where::Process(core.map(Box::new)));
        }
        match (self.kubeconfig, self.cloud_url) {
            (Some(kubeconfig), Some(cloud_url)) => {
                Ok(Where::Cluster(Box::new(run::ClusterOptions {
                    kubeconfig,
                    context: self.context,
                    provider_cloud_url: self
                        .provider_cloud_url
                        .unwrap_or_else(|| cloud_url.clone()),
                    cloud_url,
                    provider_metrics_url: self.provider_metrics_url,
                    provider_deployment: self.provider_deployment,
                    provider_container: self.provider_container,
                    provider_service_account: self.provider_service_account,
                    keep: self.keep,
                    api_source: self.api_requests_from,
                    settings_check: !self.no_settings_check,
                    api_scrape_interval: self.api_scrape_interval,
                    core: run::core::cluster::CoreOptions {
                        deployment: self.core_deployment,
                        container: self.core_container,
                        metrics_url: self.core_metrics_url,
                        user_agent: self.core_user_agent,
                    },
                })))
            }
            (Some(_), None) => bail!(
                "--kubeconfig needs --cloud-url: mock-cloud's URL as reachable from here (kubectl port-forward -n loadtest-system svc/mock-cloud 18080:8080)"
            ),
            (None, _) if s.target == scenario::Target::Cluster => bail!(
                "scenario {} has `target: cluster`: give --kubeconfig and --cloud-url",
                s.name
            ),
            (None, _) if s.profile.is_some() => bail!(
                "scenario {} has a profile, which describes a provider the harness does not build: run it with --process (the profile's command) or --kubeconfig (the provider deployed in a cluster)",
                s.name
            ),
            // Refused here, before the run announces itself, rather than by the stack.
            (None, _) => match run::target::embedded::missing_feature(s) {
                Some(e) => Err(e.into()),
                None => Ok(Where::Embedded),
            },
        }
    }
}
