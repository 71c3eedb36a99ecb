//! The command line: raw flags ([`Cli`]) and their validated form ([`RunConfig`]).

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use limiter::crossplane::{RateLimitModel, Settings, SettingsError};
use limiter::go::GoDuration;

/// A Crossplane-style provider for the mock cloud: reconciles Bucket, Database and Record
/// resources (group mockcloud.example.org) against the cloud's API, rate limited like a
/// provider built on crossplane-runtime.
///
/// Exit codes: 0 after a clean shutdown (SIGTERM or Ctrl-C), 1 if the provider failed while
/// running, 2 for bad flags or a setup that cannot start.
#[derive(Debug, Parser)]
#[command(name = "provider", version, about, long_about)]
pub struct Cli {
    /// Run the provider (default) or print the CRDs.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Flags of the provider itself.
    #[command(flatten)]
    pub run: RunArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the CustomResourceDefinitions as YAML (ProviderConfig, Bucket, Database,
    /// Record), or write one file per CRD into a directory.
    Crds {
        /// Write `<group>_<plural>.yaml` files into this directory instead of printing.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

/// The provider's flags.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Global reconcile rate R per second, shared by all three controllers. Also sets the
    /// workers per controller (R) and the Kubernetes client limit (QPS 5R, burst 10R).
    #[arg(long, env = "PROVIDER_MAX_RECONCILE_RATE", default_value_t = NonZeroU32::new(10).expect("non-zero"))]
    pub max_reconcile_rate: NonZeroU32,
    /// How the rate is enforced: crossplane (crossplane-runtime's middleware), in-queue
    /// (the same bucket taken when the queue hands an item out), controller-runtime
    /// (client-go defaults: no global budget, 1 worker, no client limit) or concurrency-only
    /// (R workers, no global bucket).
    #[arg(long, env = "PROVIDER_RATE_LIMIT_MODEL", default_value = "crossplane")]
    pub rate_limit_model: RateLimitModel,
    /// Poll interval P of a resource that is up to date (Go duration: 30s, 1m, 1h30m).
    #[arg(long, env = "PROVIDER_POLL_INTERVAL", default_value = "1m", value_parser = parse_duration)]
    pub poll_interval: Duration,
    /// Jitter of each poll, as a percentage of the resource's own interval (0 to 99): the
    /// requeue lands uniformly in [P - j, P + j).
    #[arg(long, env = "PROVIDER_POLL_JITTER_PERCENT", default_value_t = 10)]
    pub poll_jitter_percent: u32,
    /// Floor for the per-resource `crossplane.io/poll-interval` annotation.
    #[arg(long, env = "PROVIDER_MIN_POLL_INTERVAL", default_value = "1s", value_parser = parse_duration)]
    pub min_poll_interval: Duration,
    /// Base URL of the cloud API, such as http://127.0.0.1:8081.
    #[arg(long, env = "PROVIDER_CLOUD_ENDPOINT", value_name = "URL")]
    pub cloud_endpoint: Option<String>,
    /// Timeout of one cloud call (Go duration).
    #[arg(long, env = "PROVIDER_CLOUD_TIMEOUT", default_value = "60s", value_parser = parse_duration)]
    pub cloud_timeout: Duration,
    /// Kubeconfig file. Without it: in-cluster config, else the KUBECONFIG variable, else
    /// ~/.kube/config.
    #[arg(long, env = "PROVIDER_KUBECONFIG", value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Watch managed resources in this namespace only (default: all namespaces).
    /// ProviderConfigs are cluster-scoped.
    #[arg(long, env = "PROVIDER_NAMESPACE")]
    pub namespace: Option<String>,
    /// Read credential Secrets from this namespace only (default: all namespaces), so the
    /// provider's RBAC can be a Role there. A ProviderConfig whose secretRef names another
    /// namespace then fails to connect, with the reason in its Synced condition.
    #[arg(long, env = "PROVIDER_SECRET_NAMESPACE")]
    pub secret_namespace: Option<String>,
    /// Address for the Prometheus /metrics endpoint; `off` disables it.
    #[arg(long, env = "PROVIDER_METRICS_ADDR", default_value = "127.0.0.1:8080")]
    pub metrics_addr: String,
    /// After SIGTERM, how long in-flight reconciles may take to finish (Go duration).
    #[arg(long, env = "PROVIDER_SHUTDOWN_TIMEOUT", default_value = "30s", value_parser = parse_duration)]
    pub shutdown_timeout: Duration,
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let d = GoDuration::parse(s).map_err(|e| e.to_string())?;
    if d < GoDuration::ZERO {
        return Err(format!("{s:?} is negative"));
    }
    Ok(d.to_std())
}

/// The validated flags of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    /// The rate-limit settings.
    pub settings: Settings,
    /// The cloud API's base URL.
    pub cloud_endpoint: String,
    /// Timeout per cloud call.
    pub cloud_timeout: Duration,
    /// Kubeconfig file.
    pub kubeconfig: Option<PathBuf>,
    /// Namespace filter.
    pub namespace: Option<String>,
    /// Namespace of credential Secrets.
    pub secret_namespace: Option<String>,
    /// Metrics address, if enabled.
    pub metrics_addr: Option<SocketAddr>,
    /// Shutdown bound.
    pub shutdown_timeout: Duration,
}

/// Flags that cannot run.
#[derive(Debug, thiserror::Error)]
pub enum FlagError {
    /// `--cloud-endpoint` is required to run.
    #[error("--cloud-endpoint is required (for example http://127.0.0.1:8081)")]
    MissingCloudEndpoint,
    /// The endpoint is not an http URL.
    #[error("--cloud-endpoint {0:?} must be an http:// URL")]
    BadCloudEndpoint(String),
    /// The metrics address does not parse.
    #[error("--metrics-addr {0:?} is not host:port or off")]
    BadMetricsAddr(String),
    /// The settings are inconsistent.
    #[error("invalid rate-limit settings")]
    Settings(#[from] SettingsError),
}

impl RunArgs {
    /// Validates the flags.
    ///
    /// # Errors
    /// See [`FlagError`].
    pub fn validate(&self) -> Result<RunConfig, FlagError> {
        let settings = Settings::new(self.max_reconcile_rate)
            .model(self.rate_limit_model)
            .poll_interval(self.poll_interval)
            .poll_jitter_percent(self.poll_jitter_percent)
            .min_poll_interval(self.min_poll_interval);
        settings.validate()?;
        let cloud_endpoint = self
            .cloud_endpoint
            .clone()
            .ok_or(FlagError::MissingCloudEndpoint)?;
        if !cloud_endpoint.starts_with("http://") || cloud_endpoint.parse::<http::Uri>().is_err() {
            return Err(FlagError::BadCloudEndpoint(cloud_endpoint));
        }
        let metrics_addr = match self.metrics_addr.as_str() {
            "off" | "" => None,
            addr => Some(
                addr.parse::<SocketAddr>()
                    .map_err(|_| FlagError::BadMetricsAddr(addr.to_owned()))?,
            ),
        };
        Ok(RunConfig {
            settings,
            cloud_endpoint,
            cloud_timeout: self.cloud_timeout,
            kubeconfig: self.kubeconfig.clone(),
            namespace: self.namespace.clone(),
            secret_namespace: self.secret_namespace.clone(),
            metrics_addr,
            shutdown_timeout: self.shutdown_timeout,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("provider").chain(args.iter().copied())).unwrap()
    }

    #[test]
    fn the_defaults_are_crossplanes() {
        let config = parse(&["--cloud-endpoint", "http://127.0.0.1:1"])
            .run
            .validate()
            .unwrap();
        assert_eq!(config.settings, Settings::default());
        assert_eq!(config.metrics_addr, Some("127.0.0.1:8080".parse().unwrap()));
    }

    #[test]
    fn flags_become_settings() {
        let config = parse(&[
            "--cloud-endpoint",
            "http://x:1",
            "--max-reconcile-rate",
            "3",
            "--rate-limit-model",
            "in-queue",
            "--poll-interval",
            "1m30s",
            "--poll-jitter-percent",
            "5",
            "--min-poll-interval",
            "500ms",
            "--metrics-addr",
            "off",
        ])
        .run
        .validate()
        .unwrap();
        assert_eq!(config.settings.rate(), 3);
        assert_eq!(config.settings.model, RateLimitModel::InQueue);
        assert_eq!(config.settings.poll_interval, Duration::from_secs(90));
        assert_eq!(
            config.settings.min_poll_interval,
            Duration::from_millis(500)
        );
        assert_eq!(config.metrics_addr, None);
    }

    #[test]
    fn bad_flags_are_refused_with_a_hint() {
        assert!(matches!(
            parse(&[]).run.validate(),
            Err(FlagError::MissingCloudEndpoint)
        ));
        let err = parse(&[
            "--cloud-endpoint",
            "https://x",
            "--poll-jitter-percent",
            "10",
        ])
        .run
        .validate();
        assert!(matches!(err, Err(FlagError::BadCloudEndpoint(_))));
        assert!(Cli::try_parse_from(["provider", "--rate-limit-model", "fast"]).is_err());
        assert!(Cli::try_parse_from(["provider", "--poll-interval", "soon"]).is_err());
    }

    #[test]
    fn help_explains_every_flag() {
        let mut command = Cli::command();
        command.build();
        for arg in command.get_arguments() {
            if ["help", "version"].contains(&arg.get_id().as_str()) {
                continue;
            }
            assert!(arg.get_help().is_some(), "--{} has no help", arg.get_id());
        }
    }
}
