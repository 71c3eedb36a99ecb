//! The cluster target: a kubeconfig's API server, the provider deployed there (restarted by
//! rolling its Deployment), and mock-cloud reached at a URL through its admin API.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::runtime::wait::await_condition;
use mock_cloud::admin::Client as CloudClient;
use serde_json::json;
use tokio::time::Instant;

use super::remote_cloud::RemoteCloud;
use super::{Target, TargetInfo, TargetSources};
use crate::run::clock::RunClock;
use crate::run::cloud;
use crate::run::core::cluster::{ClusterCore, CoreOptions};
use crate::run::error::{FlagDiff, RunError};
use crate::run::own::{self, OwnRequests};
use crate::run::remote::Remote;
use crate::run::source::api::{ApiRequests, ApiSource};
use crate::run::source::memory::MemoryProbe;
use crate::run::source::provider_metrics::{ProviderMetricsSource, Tally};
use crate::scenario::Scenario;

/// The default `--provider-deployment` (what `ci/manifests` deploys).
pub const DEFAULT_PROVIDER_DEPLOYMENT: &str = "loadtest-system/provider";

/// Where a cluster run finds what it measures.
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    /// The kubeconfig file.
    pub kubeconfig: PathBuf,
    /// Its context to use (default: the current one).
    pub context: Option<String>,
    /// mock-cloud's base URL, reachable from here.
    pub cloud_url: String,
    /// mock-cloud's base URL as the provider reaches it: `{{cloudUrl}}` in scenario
    /// objects.
    pub provider_cloud_url: String,
    /// The provider's `/metrics` URL, if reachable from here.
    pub provider_metrics_url: Option<String>,
    /// The provider's Deployment: namespace and name. Its namespace also holds the
    /// credential Secrets the harness writes.
    pub provider_deployment: (String, String),
    /// The provider's container in the Deployment whose args are checked against a
    /// profile (default: the first).
    pub provider_container: Option<String>,
    /// The ServiceAccount the provider's pods must run as (the FlowSchema that counts its
    /// API requests selects it), checked when given.
    pub provider_service_account: Option<String>,
    /// Leave what the run created in the cluster.
    pub keep: bool,
    /// Where API requests are read from.
    pub api_source: ApiSource,
    /// How often the API server's journal or metrics are read.
    pub api_scrape_interval: Duration,
    /// Compare the provider's Deployment args with the scenario's settings, and core's
    /// with its `core` settings (`--no-settings-check` turns it off).
    pub settings_check: bool,
    /// Crossplane core in the cluster, for a scenario with XR groups.
    pub core: CoreOptions,
}

/// A `--provider-deployment` value that is not `NAMESPACE/NAME`.
#[derive(Debug, thiserror::Error)]
#[error("expected NAMESPACE/NAME, such as {DEFAULT_PROVIDER_DEPLOYMENT}; got {0:?}")]
pub struct BadDeployment(String);

/// Parses `NAMESPACE/NAME`.
///
/// # Errors
/// Not two non-empty parts.
pub fn parse_deployment(s: &str) -> Result<(String, String), BadDeployment> {
    match s.split_once('/') {
        Some((ns, name)) if !ns.is_empty() && !name.is_empty() && !name.contains('/') => {
            Ok((ns.to_owned(), name.to_owned()))
        }
        _ => Err(BadDeployment(s.to_owned())),
    }
}

/// A cluster and the provider deployed in it.
pub struct Cluster {
    clock: RunClock,
    options: ClusterOptions,
    client: kube::Client,
    cloud: Arc<RemoteCloud>,
    api: Option<ApiRequests>,
    provider: Option<ProviderMetricsSource>,
    /// Crossplane core, when the scenario has XR groups.
    core: Option<ClusterCore>,
    rolls: u32,
    kills: AtomicU32,
    notes: Vec<String>,
}

/// The harness's client for the cluster: its `User-Agent`, and its requests to the
/// provider's group counted into `own`; and the kubeconfig's configuration it was built
/// from.
async fn client(
    options: &ClusterOptions,
    own: &OwnRequests,
) -> Result<(kube::Client, kube::Config), RunError> {
    own::kube_client(&options.kubeconfig, options.context.clone(), own).await
}

fn deployments(client: &kube::Client, namespace: &str) -> Api<Deployment> {
    Api::namespaced(client.clone(), namespace)
}

/// Whether a Deployment's rollout of `generation` is complete. A Deployment without a
/// `status` (an API server with no controllers, such as mock-apiserver) counts as rolled.
fn rolled_out(d: Option<&Deployment>, generation: i64) -> bool {
    let Some(d) = d else {
        return false;
    };
    let Some(status) = &d.status else {
        return true;
    };
    let wanted = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    status.observed_generation.unwrap_or(0) >= generation
        && status.updated_replicas.unwrap_or(0) == wanted
        && status.replicas.unwrap_or(0) == wanted
        && status.available_replicas.unwrap_or(0) == wanted
}

impl Cluster {
    /// A handle on its cloud, for [`super::any::AnyCloud`].
    pub(super) fn shared_cloud(&self) -> Arc<RemoteCloud> {
        Arc::clone(&self.cloud)
    }

    /// Rolls the provider's Deployment, as `kubectl rollout restart` does, and waits (until
    /// `deadline`) for the rollout to finish.
    async fn roll(&self, deadline: Instant) -> Result<(), RunError> {
        let (ns, name) = &self.options.provider_deployment;
        let api = deployments(&self.client, ns);
        let now = self.clock.wall_now().to_string();
        let patch = json!({"spec": {"template": {"metadata": {"annotations": {"harness.loadtest/restartedAt": now}}}}});
        let rolled = api
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|source| RunError::Kube {
                what: format!("roll the provider's Deployment {ns}/{name}"),
                source,
            })?;
        let generation = rolled.metadata.generation.unwrap_or(0);
        let done = await_condition(api, name, move |d: Option<&Deployment>| {
            rolled_out(d, generation)
        });
        if tokio::time::timeout_at(deadline, done).await.is_err() {
            tracing::warn!(
                namespace = ns,
                name,
                "the provider's rollout did not finish in time"
            );
        }
        Ok(())
    }
}

/// The label selector of a Deployment's pods (`spec.selector.matchLabels`, in key order).
fn pod_selector(d: &Deployment) -> Option<String> {
    let labels = d.spec.as_ref()?.selector.match_labels.as_ref()?;
    (!labels.is_empty()).then(|| {
        labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    })
}

/// Deletes every pod of the Deployment `namespace/name` with grace period 0; returns how
/// many.
async fn kill_pods(client: &kube::Client, namespace: &str, name: &str) -> Result<usize, RunError> {
    let kube_err = |what: String| move |source| RunError::Kube { what, source };
    let d = deployments(client, namespace)
        .get(name)
        .await
        .map_err(kube_err(format!(
            "read the provider's Deployment {namespace}/{name}"
        )))?;
    let Some(selector) = pod_selector(&d) else {
        tracing::warn!(
            namespace,
            name,
            "the provider's Deployment has no matchLabels: no pod to kill"
        );
        return Ok(0);
    };
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let list = pods
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(kube_err(format!("list the provider's pods ({selector})")))?;
    let now = DeleteParams {
        grace_period_seconds: Some(0),
        ..DeleteParams::default()
    };
    let mut killed = 0;
    for pod in list.items {
        let Some(pod_name) = pod.metadata.name else {
            continue;
        };
        match pods.delete(&pod_name, &now).await {
            Ok(_) => killed += 1,
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(source) => {
                return Err(RunError::Kube {
                    what: format!("delete the provider's pod {namespace}/{pod_name}"),
                    source,
                });
            }
        }
    }
    Ok(killed)
}

/// The ServiceAccount, `namespace/name`, of the pods of the Deployment `d` in `namespace`.
fn pods_service_account(namespace: &str, d: &Deployment) -> String {
    let name = d
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .and_then(|p| p.service_account_name.clone())
        .unwrap_or_else(|| "default".to_owned());
    format!("{namespace}/{name}")
}

/// Checks the provider's Deployment against the scenario and the options: its
/// ServiceAccount, when `--provider-service-account` is given, and its container's args
/// against the settings the budget is predicted from. The args are read in the profile's
/// flag family (`flags`), or as this workspace's provider's flags (`harness
/// provider-args`) when the scenario has no profile. A profile without `flags` names no
/// flags to read, and `--no-settings-check` skips the comparison: a note says so.
///
/// # Errors
/// Another ServiceAccount, no such container, a flag that does not parse, or flags whose
/// values differ from the scenario's (each named).
pub fn check_deployment(
    s: &Scenario,
    options: &ClusterOptions,
    d: &Deployment,
    notes: &mut Vec<String>,
) -> Result<(), RunError> {
    let (ns, name) = &options.provider_deployment;
    let deployment = format!("{ns}/{name}");
    let pod = d.spec.as_ref().and_then(|s| s.template.spec.as_ref());
    if let Some(want) = &options.provider_service_account {
        let have = pod
            .and_then(|p| p.service_account_name.clone())
            .unwrap_or_else(|| "default".to_owned());
        if &have != want {
            return Err(RunError::ServiceAccount {
                deployment,
                have,
                want: want.clone(),
            });
        }
    }
    if !options.settings_check {
        notes.push(format!(
            "the provider's Deployment {deployment}: its args were not compared with the scenario's settings (--no-settings-check)"
        ));
        return Ok(());
    }
    let (dialect, settings) = match &s.profile {
        None => (crate::scenario::flags::Dialect::Loadtest, &s.settings),
        Some(p) => match p.flags {
            Some(d) => (d, &p.settings),
            None => {
                notes.push(format!(
                    "the provider's Deployment {deployment}: its args were not compared with the profile's settings (the profile names no `flags` family to read them in)"
                ));
                return Ok(());
            }
        },
    };
    let containers = pod.map(|p| p.containers.as_slice()).unwrap_or_default();
    let container = match &options.provider_container {
        Some(c) => containers.iter().find(|x| &x.name == c),
        None => containers.first(),
    };
    let Some(container) = container else {
        return Err(RunError::NoContainer {
            deployment,
            container: options.provider_container.clone().unwrap_or_default(),
        });
    };
    // kingpin and clap read the whole argv after the program: the image's command beyond
    // the program, then the args.
    let args: Vec<String> = container
        .command
        .iter()
        .flatten()
        .skip(1)
        .chain(container.args.iter().flatten())
        .cloned()
        .collect();
    let deployed = crate::scenario::flags::read(dialect, &args).map_err(|source| {
        RunError::DeploymentFlag {
            deployment: deployment.clone(),
            source,
        }
    })?;
    let differ: Vec<FlagDiff> =
        crate::scenario::flags::differ(dialect, &deployed.settings, settings)
            .into_iter()
            .map(FlagDiff::from)
            .collect();
    if !differ.is_empty() {
        return Err(RunError::DeploymentArgs { deployment, differ });
    }
    let whose = if s.profile.is_some() {
        "the profile's"
    } else {
        "the scenario's"
    };
    notes.push(format!(
        "the provider's container {} runs with {whose} settings ({dialect} flags: {})",
        container.name,
        crate::scenario::flags::write(dialect, &deployed.settings)
            .into_iter()
            .map(|(f, v)| format!("--{f}={v}"))
            .collect::<Vec<_>>()
            .join(" "),
        dialect = dialect.as_str(),
    ));
    Ok(())
}

impl Target for Cluster {
    type Options = ClusterOptions;
    fn virtual_time(_: &Self::Options) -> bool {
        false
    }
    type Cloud = RemoteCloud;

    /// Connects to the cluster: the kubeconfig, the provider's Deployment, the provider's
    /// metrics if their URL is given (its settings are checked against the scenario's),
    /// then starts the clock, the API-request source and mock-cloud (given the scenario's
    /// cloud, which starts it afresh).
    async fn start(s: &Scenario, options: ClusterOptions) -> Result<Self, RunError> {
        let own = OwnRequests::default();
        let (client, config) = client(&options, &own).await?;
        client
            .apiserver_version()
            .await
            .map_err(|source| RunError::ApiServerUnreachable {
                kubeconfig: options.kubeconfig.clone(),
                source,
            })?;
        let (ns, name) = &options.provider_deployment;
        let deployment =
            deployments(&client, ns)
                .get(name)
                .await
                .map_err(|source| RunError::Deployment {
                    namespace: ns.clone(),
                    name: name.clone(),
                    source,
                })?;
        let mut notes = Vec::new();
        check_deployment(s, &options, &deployment, &mut notes)?;
        if options.api_source != ApiSource::Journal {
            crate::run::flow_schema::check(&client, &pods_service_account(ns, &deployment)).await?;
        }
        let tally = match &options.provider_metrics_url {
            Some(url) => {
                let settings = options.settings_check.then_some(&s.settings);
                let (tally, checked) = Tally::connect(url, settings).await?;
                if !checked && options.settings_check {
                    notes.push(
                        "the provider does not report provider_settings: its settings were not checked against the scenario"
                            .to_owned(),
                    );
                }
                Some(tally)
            }
            None => {
                notes.push(
                    "provider metrics not read (no --provider-metrics-url): the settings it runs with (provider_settings) were not read, only its Deployment's args"
                        .to_owned(),
                );
                None
            }
        };
        let core = if s.composites.any() {
            let core_options = options.core.clone();
            Some(
                ClusterCore::start(&client, s, core_options, options.settings_check, &mut notes)
                    .await?,
            )
        } else {
            None
        };
        let clock = RunClock::start();
        let agent = crate::run::own::ProviderAgent::of(s);
        let replicas = crate::run::replicas::Replicas::find(&client, &config, &own).await;
        let api = ApiRequests::probe(
            &replicas,
            clock,
            (own, agent),
            (options.api_source, options.api_scrape_interval),
        )
        .await?;
        let config = cloud::config(s).map_err(RunError::CloudQuota)?;
        let cloud_client = CloudClient::new(&options.cloud_url).map_err(RunError::CloudAdmin)?;
        let epoch = cloud_client
            .put_config(&config)
            .await
            .map_err(RunError::CloudAdmin)?;
        // The cloud's time zero as its wall clock gives it (every calls page says it).
        let wall = cloud_client
            .calls(0, Some(0))
            .await
            .map_err(RunError::CloudAdmin)?
            .epoch;
        let (run_epoch, from_middle, walled) =
            clock.epoch_within(epoch.at, epoch.uncertainty, wall);
        #[allow(clippy::cast_precision_loss)]
        let from_middle_ms = from_middle as f64 / 1e3;
        notes.insert(
            0,
            format!(
                "cloud clock offset known to {:.1} ms (the PUT /admin/v1/config round trip); {}",
                epoch.uncertainty.as_secs_f64() * 1e3,
                if walled {
                    format!(
                        "placed by the cloud's wall clock, {from_middle_ms:+.1} ms from the round trip's middle, as the API server's journal is"
                    )
                } else {
                    format!(
                        "placed at the round trip's middle: the cloud's wall clock puts it {from_middle_ms:+.1} ms away, outside the round trip"
                    )
                }
            ),
        );
        let cloud = Arc::new(RemoteCloud::new(
            cloud_client,
            run_epoch,
            clock.instant_of(run_epoch),
            config.faults,
        ));
        Ok(Cluster {
            clock,
            options,
            client,
            cloud,
            api: Some(api),
            provider: tally.map(ProviderMetricsSource::scraped),
            core,
            rolls: 1,
            kills: AtomicU32::new(0),
            notes,
        })
    }

    fn clock(&self) -> RunClock {
        self.clock
    }

    fn client(&self) -> kube::Client {
        self.client.clone()
    }

    fn cloud(&self) -> &RemoteCloud {
        &self.cloud
    }

    fn secret_namespace(&self) -> Option<&str> {
        Some(&self.options.provider_deployment.0)
    }

    fn cloud_url(&self) -> Option<&str> {
        Some(&self.options.provider_cloud_url)
    }

    fn cleans_up(&self) -> bool {
        !self.options.keep
    }

    fn take_sources(&mut self) -> TargetSources {
        TargetSources {
            api: self.api.take().unwrap_or(ApiRequests::None),
            provider: self.provider.take(),
            memory: self
                .options
                .provider_metrics_url
                .as_deref()
                .and_then(|url| Remote::for_url(url).ok())
                .map_or(MemoryProbe::None, |(remote, path)| MemoryProbe::Scraped {
                    remote: Box::new(remote),
                    path,
                }),
        }
    }

    async fn restart_provider(&mut self, deadline: Instant) -> Result<(), RunError> {
        self.roll(deadline).await?;
        self.rolls += 1;
        Ok(())
    }

    /// Deletes the provider's pods (the Deployment's selector) with grace period 0: the
    /// kubelet kills the containers at once, with no SIGTERM handling, and the ReplicaSet
    /// starts a new pod.
    async fn kill_provider(&self, deadline: Instant) -> Result<(), RunError> {
        let (ns, name) = &self.options.provider_deployment;
        let kill = kill_pods(&self.client, ns, name);
        match tokio::time::timeout_at(deadline, kill).await {
            Ok(Ok(n)) => {
                tracing::info!(namespace = ns, name, pods = n, "killed the provider's pods");
                self.kills.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Ok(Err(e)) => Err(e),
            Err(_) => {
                tracing::warn!(
                    namespace = ns,
                    name,
                    "killing the provider's pods did not finish in time"
                );
                Ok(())
            }
        }
    }

    /// The Deployment's ReplicaSet starts a new pod by itself.
    async fn revive_provider(&self) -> Result<(), RunError> {
        Ok(())
    }

    /// A cluster's provider keeps running.
    async fn stop_provider(&mut self) {}

    fn core_metrics(&self) -> Option<crate::run::core::phase_state::CoreMetrics> {
        self.core.as_ref()?.metrics()
    }

    /// Reads what core did ([`ClusterCore::report`]); core keeps running.
    async fn finish_core(
        &mut self,
        log: &crate::run::core::xrs::XrLog,
        seen: &crate::run::source::watches::SeenMap,
    ) -> Option<crate::result::core::CoreReport> {
        let core = self.core.as_ref()?;
        Some(core.report(&self.client, self.clock, (log, seen)).await)
    }

    async fn clean_up_core(
        &self,
        xrs: Vec<(Api<kube::api::DynamicObject>, String)>,
        deadline: Instant,
    ) -> Vec<String> {
        match &self.core {
            Some(core) => core.clean_up(&self.client, xrs, deadline).await,
            None => Vec::new(),
        }
    }

    fn info(&self) -> TargetInfo {
        let (ns, name) = &self.options.provider_deployment;
        TargetInfo::Cluster {
            kubeconfig: self.options.kubeconfig.display().to_string(),
            cloud_url: self.options.cloud_url.clone(),
            provider_deployment: format!("{ns}/{name}"),
        }
    }

    fn provider_starts(&self) -> u32 {
        self.rolls + self.kills.load(Ordering::Relaxed)
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}

#[cfg(test)]
#[path = "cluster_tests.rs"]
mod tests;
