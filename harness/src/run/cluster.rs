//! What a cluster run needs besides the cloud and the API counts: the kube client from a
//! kubeconfig, the provider's Deployment (restarted by rolling it), and the provider's own
//! metrics, scraped over HTTP with counter resets (pod restarts) accounted for.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::api::{Api, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::client::{Body, ClientBuilder};
use serde_json::json;
use tokio::time::Instant;

use super::RunError;
use super::api::{HARNESS_USER_AGENT, OwnRequests};
use super::collect::{counter_increase, label_value, prometheus_counter, prometheus_samples};
use super::remote::Remote;
use crate::result::ProviderMetrics;

/// Where a cluster run finds what it measures.
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    /// The kubeconfig file.
    pub kubeconfig: PathBuf,
    /// Its context to use (default: the current one).
    pub context: Option<String>,
    /// mock-cloud's base URL, reachable from here.
    pub cloud_url: String,
    /// The provider's `/metrics` URL, if reachable from here.
    pub provider_metrics_url: Option<String>,
    /// The provider's Deployment: namespace and name. Its namespace also holds the
    /// credential Secrets the harness writes.
    pub provider_deployment: (String, String),
    /// Leave what the run created in the cluster.
    pub keep: bool,
    /// Where API requests are read from.
    pub api_source: super::api::ApiSource,
}

/// The provider's flags for `settings`, as (flag, value) pairs; the same names label the
/// provider's `provider_settings` metric (with `_` for `-`).
#[must_use]
pub fn provider_flags(settings: &limiter::crossplane::Settings) -> Vec<(&'static str, String)> {
    let go = |d| limiter::go::GoDuration::from_std(d).to_string();
    vec![
        (
            "max-reconcile-rate",
            settings.max_reconcile_rate.to_string(),
        ),
        ("rate-limit-model", settings.model.to_string()),
        ("poll-interval", go(settings.poll_interval)),
        (
            "poll-jitter-percent",
            settings.poll_jitter_percent.to_string(),
        ),
        ("min-poll-interval", go(settings.min_poll_interval)),
    ]
}

/// Checks the provider's `provider_settings` metric against the scenario's settings.
/// `Ok(false)` when the provider does not report its settings.
///
/// # Errors
/// A sentence naming every flag that differs.
pub fn check_settings(
    metrics: &str,
    settings: &limiter::crossplane::Settings,
) -> Result<bool, String> {
    let Some((labels, _)) = prometheus_samples(metrics, "provider_settings").next() else {
        return Ok(false);
    };
    let differ: Vec<String> = provider_flags(settings)
        .into_iter()
        .filter_map(|(flag, want)| {
            let have = label_value(labels, &flag.replace('-', "_"))?;
            (have != want).then(|| format!("--{flag}={have} (the scenario says {want})"))
        })
        .collect();
    if differ.is_empty() {
        Ok(true)
    } else {
        Err(format!(
            "the deployed provider runs with {}; the budget is predicted from the scenario, so deploy the provider with `harness provider-args SCENARIO` (ci/kind/run.sh does) or change the scenario",
            differ.join(", ")
        ))
    }
}

/// The default `--provider-deployment` (what `ci/manifests` deploys).
pub const DEFAULT_PROVIDER_DEPLOYMENT: &str = "loadtest-system/provider";

/// Parses `NAMESPACE/NAME`.
///
/// # Errors
/// Not two non-empty parts.
pub fn parse_deployment(s: &str) -> Result<(String, String), String> {
    match s.split_once('/') {
        Some((ns, name)) if !ns.is_empty() && !name.is_empty() && !name.contains('/') => {
            Ok((ns.to_owned(), name.to_owned()))
        }
        _ => Err(format!(
            "expected NAMESPACE/NAME, such as {DEFAULT_PROVIDER_DEPLOYMENT}; got {s:?}"
        )),
    }
}

/// The harness's client for the cluster: its `User-Agent`, and its requests to the
/// provider's group counted into `own`.
///
/// # Errors
/// The kubeconfig cannot be read or used.
pub async fn client(options: &ClusterOptions, own: &OwnRequests) -> Result<kube::Client, RunError> {
    let what = |e: &dyn std::fmt::Display| {
        RunError::Setup(format!(
            "cannot use the kubeconfig {}: {e}",
            options.kubeconfig.display()
        ))
    };
    let kubeconfig =
        kube::config::Kubeconfig::read_from(&options.kubeconfig).map_err(|e| what(&e))?;
    let config = kube::Config::from_custom_kubeconfig(
        kubeconfig,
        &kube::config::KubeConfigOptions {
            context: options.context.clone(),
            ..Default::default()
        },
    )
    .await
    .map_err(|e| what(&e))?;
    let own = own.clone();
    let layer = tower::util::MapRequestLayer::new(move |mut req: http::Request<Body>| {
        own.count(&req);
        req.headers_mut().insert(
            http::header::USER_AGENT,
            http::HeaderValue::from_static(HARNESS_USER_AGENT),
        );
        req
    });
    Ok(ClientBuilder::try_from(config)
        .map_err(|e| what(&e))?
        .with_layer(&layer)
        .build())
}

fn deployments(client: &kube::Client, namespace: &str) -> Api<DynamicObject> {
    let ar = kube::api::ApiResource::from_gvk(&GroupVersionKind::gvk("apps", "v1", "Deployment"));
    Api::namespaced_with(client.clone(), namespace, &ar)
}

/// Checks the provider's Deployment exists.
///
/// # Errors
/// It does not, or cannot be read.
pub async fn check_deployment(
    client: &kube::Client,
    (ns, name): &(String, String),
) -> Result<(), RunError> {
    deployments(client, ns)
        .get(name)
        .await
        .map(|_| ())
        .map_err(|e| {
            RunError::Setup(format!(
                "cannot read the provider's Deployment {ns}/{name} (set --provider-deployment): {e}"
            ))
        })
}

/// Rolls the provider's Deployment, as `kubectl rollout restart` does, and waits (until
/// `deadline`) for the rollout to finish. A Deployment without a `status` (an API server
/// with no controllers, such as mock-apiserver) is not waited for.
///
/// # Errors
/// The patch failed.
pub async fn roll(
    client: &kube::Client,
    (ns, name): &(String, String),
    deadline: Instant,
) -> Result<(), RunError> {
    let api = deployments(client, ns);
    let now = k8s_openapi::jiff::Timestamp::now().to_string();
    let patch = json!({"spec": {"template": {"metadata": {"annotations": {"harness.loadtest/restartedAt": now}}}}});
    let rolled = api
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|source| RunError::Kube {
            what: format!("roll the provider's Deployment {ns}/{name}"),
            source,
        })?;
    let generation = rolled.metadata.generation.unwrap_or(0);
    while Instant::now() < deadline {
        let Ok(d) = api.get(name).await else {
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        };
        let Some(status) = d.data.get("status").filter(|s| !s.is_null()) else {
            return Ok(());
        };
        let field = |k: &str| {
            status
                .get(k)
                .and_then(serde_json::Value::as_i64)
                .unwrap_or(0)
        };
        let wanted = d
            .data
            .pointer("/spec/replicas")
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(1);
        if field("observedGeneration") >= generation
            && field("updatedReplicas") == wanted
            && field("replicas") == wanted
            && field("availableReplicas") == wanted
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Ok(())
}

/// The provider's counters, summed over scrapes so that a counter reset (a new pod) loses
/// only what the old pod counted after its last scrape.
#[derive(Clone)]
pub struct MetricsTally {
    remote: Remote,
    path: String,
    state: Arc<Mutex<TallyState>>,
}

#[derive(Default)]
struct TallyState {
    last: BTreeMap<&'static str, u64>,
    total: BTreeMap<&'static str, u64>,
    scrapes: u64,
    failures: u64,
}

const COUNTERS: [&str; 3] = [
    "limiter_reservations_total",
    "limiter_early_runs_total",
    "provider_cloud_requests_total",
];

impl MetricsTally {
    /// Scrapes `url` once to take the baseline, and checks the provider runs with
    /// `settings`. Returns whether it could check them (it reports them in
    /// `provider_settings`).
    ///
    /// # Errors
    /// The URL is not usable, the provider's metrics cannot be read, or the provider runs
    /// with other settings.
    pub async fn start(
        url: &str,
        settings: &limiter::crossplane::Settings,
    ) -> Result<(MetricsTally, bool), RunError> {
        let uri: http::Uri = url
            .parse()
            .map_err(|e| RunError::Setup(format!("--provider-metrics-url {url}: {e}")))?;
        let base = format!(
            "{}://{}",
            uri.scheme_str().unwrap_or("http"),
            uri.authority().map_or("", |a| a.as_str())
        );
        let path = uri
            .path_and_query()
            .map_or("/metrics", |p| p.as_str())
            .to_owned();
        let remote = Remote::new(&base)
            .map_err(|e| RunError::Setup(format!("--provider-metrics-url: {e}")))?;
        let tally = MetricsTally {
            remote,
            path,
            state: Arc::default(),
        };
        let text = tally
            .remote
            .get_text(&tally.path)
            .await
            .map_err(|e| RunError::Setup(format!("cannot read the provider's metrics: {e}")))?;
        let checked = check_settings(&text, settings).map_err(RunError::Setup)?;
        let mut s = tally.state.lock().unwrap_or_else(|e| e.into_inner());
        for c in COUNTERS {
            s.last.insert(c, prometheus_counter(&text, c));
        }
        drop(s);
        Ok((tally, checked))
    }

    /// Scrapes once more and adds what grew.
    pub async fn scrape(&self) {
        let text = self.remote.get_text(&self.path).await;
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Ok(text) = text else {
            s.failures += 1;
            return;
        };
        s.scrapes += 1;
        for c in COUNTERS {
            let now = prometheus_counter(&text, c);
            let before = s.last.get(c).copied().unwrap_or(0);
            let grew = counter_increase(before, now);
            *s.total.entry(c).or_default() += grew;
            s.last.insert(c, now);
        }
    }

    /// What the provider counted since the baseline.
    #[must_use]
    pub fn totals(&self) -> ProviderMetrics {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let get = |c: &str| s.total.get(c).copied().unwrap_or(0);
        ProviderMetrics {
            reservations: get(COUNTERS[0]),
            early_runs: get(COUNTERS[1]),
            cloud_calls: get(COUNTERS[2]),
        }
    }

    /// Failed scrapes.
    #[must_use]
    pub fn failures(&self) -> u64 {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .failures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_providers_settings_are_checked_flag_by_flag() {
        let settings = limiter::crossplane::Settings::default()
            .poll_interval(std::time::Duration::from_secs(10));
        let line = |poll: &str| {
            format!(
                "# TYPE provider_settings gauge\nprovider_settings{{max_reconcile_rate=\"10\",rate_limit_model=\"crossplane\",poll_interval=\"{poll}\",poll_jitter_percent=\"10\",min_poll_interval=\"1s\"}} 1\n"
            )
        };
        assert_eq!(check_settings(&line("10s"), &settings), Ok(true));
        let e = check_settings(&line("1m0s"), &settings).unwrap_err();
        assert!(
            e.starts_with(
                "the deployed provider runs with --poll-interval=1m0s (the scenario says 10s)"
            ),
            "{e}"
        );
        assert_eq!(check_settings("other 1\n", &settings), Ok(false));
    }

    #[test]
    fn deployments_are_namespace_slash_name() {
        assert_eq!(
            parse_deployment("loadtest-system/provider").unwrap(),
            ("loadtest-system".to_owned(), "provider".to_owned())
        );
        for bad in ["provider", "/provider", "ns/", "a/b/c"] {
            assert!(parse_deployment(bad).is_err(), "{bad}");
        }
    }
}
