//! The command line: raw flags ([`Cli`]) and their validated form ([`RunConfig`]).

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use limiter::crossplane::{
    ErrorRequeue, EventClient, JitterSizing, ObserveOnlyAbsent, RateLimitModel, ReconcileRequests,
    Settings, SettingsError,
};
use limiter::go::GoDuration;

#[cfg(feature = "aws")]
use crate::aws::connect::{CredentialCache, RetryMode};

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
    /// Jitter j of each poll, as a percentage (0 to 99) of what --poll-jitter-sizing names:
    /// the requeue lands uniformly in [P - j, P + j). upjet's providers use 5.
    #[arg(long, env = "PROVIDER_POLL_JITTER_PERCENT", default_value_t = 10)]
    pub poll_jitter_percent: u32,
    /// What the jitter percentage is a share of: per-resource (each resource's own interval,
    /// so a requeue is never zero) or poll-interval (of --poll-interval, the same absolute
    /// jitter for every resource, as upjet's providers compute it; an annotated interval at
    /// or below it can stop polling).
    #[arg(
        long,
        env = "PROVIDER_POLL_JITTER_SIZING",
        default_value = "per-resource"
    )]
    pub poll_jitter_sizing: JitterSizing,
    /// Floor for the per-resource `crossplane.io/poll-interval` annotation; 0 means none, as
    /// in upjet's providers.
    #[arg(long, env = "PROVIDER_MIN_POLL_INTERVAL", default_value = "1s", value_parser = parse_duration)]
    pub min_poll_interval: Duration,
    /// One global bucket per scope (R/s, burst 10R each), as crossplane-runtime v2 providers
    /// run: cluster-scoped controllers share one, namespaced (`*.m.*`) controllers the other,
    /// so a provider with both scopes reaches 2R/s with burst 20R. Off: one shared bucket.
    /// The mock-cloud kinds are namespaced; with the aws feature, the cluster-scoped AWS
    /// Bucket uses the other bucket.
    #[arg(long, env = "PROVIDER_SCOPED_BUCKETS", num_args = 0..=1, default_value_t = false,
          default_missing_value = "true", action = clap::ArgAction::Set, value_name = "BOOL")]
    pub scoped_buckets: bool,
    /// First delay of the per-item failure backoff, doubling per failure (Go duration; default:
    /// the model's, 1s, or 5ms for controller-runtime). Named as in SAP's providers; upjet's
    /// ProviderConfig calls it reconciliationPolicy.exponentialFailureRateLimiter.baseDelay.
    #[arg(long, env = "PROVIDER_BACKOFF_BASE", value_parser = parse_duration)]
    pub backoff_base: Option<Duration>,
    /// Cap of the per-item failure backoff (Go duration; default: the model's, 60s, or 1000s
    /// for controller-runtime); upjet's maxDelay.
    #[arg(long, env = "PROVIDER_BACKOFF_MAX", value_parser = parse_duration)]
    pub backoff_max: Option<Duration>,
    /// How a failed reconcile requeues: backoff (crossplane-runtime: the per-item failure
    /// backoff) or immediate (broken on purpose, as upjet#592 reported: requeue after 1ms,
    /// which resets the backoff, so a failing resource loops as fast as the global bucket
    /// allows; for showing that the harness's hotLoops assertion catches it).
    #[arg(long, env = "PROVIDER_ERROR_REQUEUE", default_value = "backoff")]
    pub error_requeue: ErrorRequeue,
    /// How an observe-only resource (`managementPolicies: [Observe]`) whose cloud resource is
    /// absent requeues: poll (crossplane-runtime v2.4.0, #1088: after the poll interval) or
    /// backoff (before #1088: on the failure backoff).
    #[arg(long, env = "PROVIDER_OBSERVE_ONLY_ABSENT", default_value = "poll")]
    pub observe_only_absent: ObserveOnlyAbsent,
    /// Which client the event recorder writes Events with: shared (the controllers' client,
    /// so every request of the process waits on one QPS 5R / burst 10R bucket) or separate
    /// (a client of its own with a second bucket of the same QPS and burst, as a
    /// controller-runtime provider's event recorder has: its API requests can then reach
    /// twice the one bucket's bound).
    #[arg(long, env = "PROVIDER_EVENT_CLIENT", default_value = "shared")]
    pub event_client: EventClient,
    /// Whether the `crossplane.io/reconcile-requested-at` annotation is tracked: honour
    /// (crossplane-runtime with a type that implements Get/SetLastHandledReconcileAt: a
    /// ReconcileRequestHandled event, and the token recorded in
    /// status.lastHandledReconcileAt) or ignore (a type without them, such as
    /// provider-template's: the annotation's change still brings one reconcile, but nothing
    /// is recorded).
    #[arg(long, env = "PROVIDER_RECONCILE_REQUESTS", default_value = "honour")]
    pub reconcile_requests: ReconcileRequests,
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
    /// crossplane-runtime's creation grace period (its reconciler option
    /// `WithCreationGracePeriod`; Go duration): a resource Observe cannot find this soon after
    /// a successful Create is waited for (requeued on the per-item backoff) rather than
    /// created again, and, when it is being deleted, not yet released. Shorter values suit
    /// test clusters that delete what they have just created.
    #[arg(long, env = "PROVIDER_CREATION_GRACE_PERIOD", default_value = "30s", value_parser = parse_duration)]
    pub creation_grace_period: Duration,
    /// The AWS SDK's own retries of the AWS kinds' calls: standard (3 attempts with
    /// exponential backoff and jitter, and a retry quota of 500 tokens per AWS service, shared
    /// by the provider's clients of it, that a throttled retry spends 5 of, a timeout 10: an
    /// empty quota stops retrying), adaptive
    /// (standard plus a client-side send rate that slows down at the first throttle) or off
    /// (1 attempt: every throttle fails the reconcile, which the per-item backoff retries).
    #[cfg(feature = "aws")]
    #[arg(long, env = "PROVIDER_AWS_RETRY_MODE", default_value = "standard",
          value_name = "MODE", value_parser = parse_choice::<RetryMode>)]
    pub aws_retry_mode: RetryMode,
    /// What the AWS kinds' Connect keeps between reconciles: none (every Connect calls STS
    /// and builds new SDK clients, as upjet's AWS providers did before
    /// provider-upjet-aws#1235), irsa (the web identity exchange is kept until 5 minutes
    /// before it expires, as #1235 does) or all (the final credentials, account ID and
    /// clients, per ProviderConfig, region and Secret content, as #997 asks: no STS call
    /// after the first Connect until the credentials near expiry).
    #[cfg(feature = "aws")]
    #[arg(long, env = "PROVIDER_CREDENTIAL_CACHE", default_value = "none",
          value_name = "POLICY", value_parser = parse_choice::<CredentialCache>)]
    pub credential_cache: CredentialCache,
}

#[cfg(feature = "aws")]
fn parse_choice<T>(s: &str) -> Result<T, String>
where
    T: std::str::FromStr<Err = crate::aws::connect::UnknownChoice>,
{
    s.parse()
        .map_err(|e: crate::aws::connect::UnknownChoice| e.to_string())
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
    /// crossplane-runtime's creation grace period.
    pub creation_grace: Duration,
    /// The AWS flavour's client options.
    #[cfg(feature = "aws")]
    pub aws: crate::aws::AwsOptions,
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
            .poll_jitter_sizing(self.poll_jitter_sizing)
            .min_poll_interval(self.min_poll_interval)
            .scoped_buckets(self.scoped_buckets)
            .backoff_base(self.backoff_base)
            .backoff_max(self.backoff_max)
            .error_requeue(self.error_requeue)
            .observe_only_absent(self.observe_only_absent)
            .event_client(self.event_client)
            .reconcile_requests(self.reconcile_requests);
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
            creation_grace: self.creation_grace_period,
            #[cfg(feature = "aws")]
            aws: crate::aws::AwsOptions {
                retry_mode: self.aws_retry_mode,
                credential_cache: self.credential_cache,
                http: None,
            },
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
        assert_eq!(config.creation_grace, Duration::from_secs(30));
        let short = parse(&[
            "--cloud-endpoint",
            "http://127.0.0.1:1",
            "--creation-grace-period=1500ms",
        ]);
        assert_eq!(
            short.run.validate().unwrap().creation_grace,
            Duration::from_millis(1500)
        );
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
    fn the_settings_of_todays_providers_are_flags() {
        let config = parse(&[
            "--cloud-endpoint",
            "http://x:1",
            "--scoped-buckets",
            "--min-poll-interval",
            "0",
            "--backoff-base",
            "2s",
            "--backoff-max",
            "5m",
            "--poll-jitter-percent",
            "5",
            "--poll-jitter-sizing",
            "poll-interval",
        ])
        .run
        .validate()
        .unwrap();
        let s = &config.settings;
        assert!(s.scoped_buckets);
        assert_eq!(s.min_poll_interval, Duration::ZERO);
        assert_eq!(
            (s.failure_backoff().base, s.failure_backoff().max),
            (Duration::from_secs(2), Duration::from_secs(300))
        );
        assert_eq!(s.poll_jitter_sizing, JitterSizing::PollInterval);
        assert_eq!(
            s.jitter(),
            limiter::crossplane::Jitter::Fixed(Duration::from_secs(3))
        );
    }

    #[test]
    fn the_event_client_and_reconcile_requests_default_to_ours_and_take_a_real_providers() {
        let ours = parse(&["--cloud-endpoint", "http://x:1"])
            .run
            .validate()
            .unwrap();
        assert_eq!(ours.settings.event_client, EventClient::Shared);
        assert_eq!(ours.settings.reconcile_requests, ReconcileRequests::Honour);
        let real = parse(&[
            "--cloud-endpoint",
            "http://x:1",
            "--event-client=separate",
            "--reconcile-requests",
            "ignore",
        ])
        .run
        .validate()
        .unwrap();
        assert_eq!(real.settings.event_client, EventClient::Separate);
        assert_eq!(real.settings.api_client_limiters(), 2);
        assert_eq!(real.settings.reconcile_requests, ReconcileRequests::Ignore);
        assert!(Cli::try_parse_from(["provider", "--event-client", "own"]).is_err());
        assert!(Cli::try_parse_from(["provider", "--reconcile-requests", "honor"]).is_err());
    }

    #[test]
    fn a_backoff_max_below_its_base_is_refused() {
        let err = parse(&["--cloud-endpoint", "http://x:1", "--backoff-base", "2m"])
            .run
            .validate();
        assert!(matches!(
            err,
            Err(FlagError::Settings(
                SettingsError::BackoffMaxBelowBase { .. }
            ))
        ));
        assert!(Cli::try_parse_from(["provider", "--poll-jitter-sizing", "fixed"]).is_err());
        assert!(Cli::try_parse_from(["provider", "--scoped-buckets=maybe"]).is_err());
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

    #[cfg(feature = "aws")]
    #[test]
    fn the_aws_flags_pick_the_sdks_retry_mode_and_the_credential_cache() {
        let config = parse(&["--cloud-endpoint", "http://x:1"])
            .run
            .validate()
            .unwrap();
        assert_eq!(config.aws.retry_mode, RetryMode::Standard);
        assert_eq!(config.aws.credential_cache, CredentialCache::None);
        let config = parse(&[
            "--cloud-endpoint",
            "http://x:1",
            "--aws-retry-mode",
            "adaptive",
            "--credential-cache",
            "irsa",
        ])
        .run
        .validate()
        .unwrap();
        assert_eq!(config.aws.retry_mode, RetryMode::Adaptive);
        assert_eq!(config.aws.credential_cache, CredentialCache::Irsa);
        let err = Cli::try_parse_from(["provider", "--aws-retry-mode", "legacy"])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unknown value \"legacy\" (expected one of standard, adaptive, off)"),
            "{err}"
        );
        assert!(Cli::try_parse_from(["provider", "--credential-cache", "some"]).is_err());
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
