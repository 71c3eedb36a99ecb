//! Why a run could not start or finish: one typed error for the run layer, with each cause
//! kept as its source.

use std::path::PathBuf;

use super::cloud::QuotaError;
use super::remote::RemoteError;

/// Why a run could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Virtual time was asked of a target that keeps real time.
    #[error(
        "virtual time runs the embedded stack on a paused clock; a cluster's API server, provider and cloud keep real time"
    )]
    VirtualTimeTarget,
    /// Virtual time was asked on a runtime that is multi-threaded or whose clock runs.
    #[error(
        "virtual time needs a single-threaded runtime, where tasks run in a fixed order, with its clock paused from the start (run::time::runtime builds one)"
    )]
    VirtualTimeRuntime,
    /// The scenario runs the provider's AWS flavour in process, which this build lacks.
    #[error(
        "the scenario runs the provider's AWS flavour (its kinds, ProviderConfigs or client settings) on the embedded stack, and this harness is built without it: build it with `cargo build --release -p harness --features aws`"
    )]
    NeedsAwsFeature,
    /// The process target was asked for a scenario whose profile has no command.
    #[error(
        "the process target runs the provider from the profile's `command`, and the scenario has none (add `profile: {{command: [...]}}`)"
    )]
    NoProcessCommand,
    /// Something the process target does on this machine failed.
    #[error("cannot {what}")]
    Process {
        /// What the harness was doing.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The process target's provider exited before it answered at its `metricsUrl`.
    #[error("the provider exited ({status}) before it answered at its metricsUrl; {} says why", log.display())]
    ProviderExited {
        /// Its exit status.
        status: String,
        /// Its log.
        log: PathBuf,
    },
    /// The provider's Deployment runs with other flags than the scenario's settings (or
    /// its profile's) say.
    #[error(
        "the provider's Deployment {deployment} runs with {}; the budget is predicted from the scenario's settings, so change them or the Deployment (`harness provider-args SCENARIO` prints the flags that match), or pass --no-settings-check to run against a budget the provider does not follow",
        .differ.iter().map(|d| format!("--{}={} (the scenario says {})", d.flag, d.deployed, d.scenario)).collect::<Vec<_>>().join(", ")
    )]
    DeploymentArgs {
        /// `namespace/name`.
        deployment: String,
        /// Each flag that differs.
        differ: Vec<FlagDiff>,
    },
    /// The provider's pods run as another ServiceAccount than `--provider-service-account`.
    #[error(
        "the provider's Deployment {deployment} runs as ServiceAccount {have:?}, and --provider-service-account says {want:?}"
    )]
    ServiceAccount {
        /// `namespace/name`.
        deployment: String,
        /// Its pod template's ServiceAccount.
        have: String,
        /// The option's.
        want: String,
    },
    /// The provider's Deployment has no container of the given name.
    #[error(
        "the provider's Deployment {deployment} has no container {container:?} (set --provider-container)"
    )]
    NoContainer {
        /// `namespace/name`.
        deployment: String,
        /// The container asked for.
        container: String,
    },
    /// Crossplane core's Deployment runs with other flags than the scenario's `core`
    /// section says.
    #[error(
        "Crossplane core's Deployment {deployment} runs with {}; the budget of core is predicted from the scenario's `core` settings, so change them or the Deployment (`harness core-args SCENARIO` prints the flags that match)",
        .differ.iter().map(|d| format!("--{}={} (the scenario says {})", d.flag, d.deployed, d.scenario)).collect::<Vec<_>>().join(", ")
    )]
    CoreDeploymentArgs {
        /// `namespace/name`.
        deployment: String,
        /// Each flag that differs.
        differ: Vec<FlagDiff>,
    },
    /// A flag of Crossplane core's Deployment does not parse.
    #[error(
        "Crossplane core's Deployment {deployment} has a flag the crossplane-core family cannot read"
    )]
    CoreDeploymentFlag {
        /// `namespace/name`.
        deployment: String,
        /// The flag.
        #[source]
        source: crate::scenario::flags::BadFlag,
    },
    /// Crossplane core's Deployment has no container of the given name.
    #[error(
        "Crossplane core's Deployment {deployment} has no container {container:?} (set --core-container)"
    )]
    CoreNoContainer {
        /// `namespace/name`.
        deployment: String,
        /// The container asked for.
        container: String,
    },
    /// A flag of the provider's Deployment does not parse.
    #[error("the provider's Deployment {deployment} has a flag the profile's dialect cannot read")]
    DeploymentFlag {
        /// `namespace/name`.
        deployment: String,
        /// The flag.
        #[source]
        source: crate::scenario::flags::BadFlag,
    },
    /// The mock cloud rejected the scenario's cloud section.
    #[error("the mock cloud rejected the scenario's cloud settings")]
    Cloud(#[source] mock_cloud::ConfigError),
    /// A quota of the scenario's cloud section that mock-cloud cannot enforce.
    #[error("the scenario's cloud section cannot be given to mock-cloud")]
    CloudQuota(#[source] QuotaError),
    /// The provider's CRDs could not be rendered.
    #[error("cannot render the provider's CustomResourceDefinitions")]
    CrdsRender(#[source] serde_saphyr::SerializeError),
    /// mock-apiserver did not take the provider's CRDs.
    #[error("mock-apiserver rejected the provider's CustomResourceDefinitions")]
    CrdsLoad(#[source] mock_apiserver::LoadError),
    /// Crossplane core's composite layer could not be set up (its kinds, the scenario's
    /// XRDs, Compositions or Functions).
    #[error("cannot start Crossplane core's composite layer: {0}")]
    CoreSetup(String),
    /// A Kubernetes request needed to set the run up failed.
    #[error("cannot {what}")]
    Kube {
        /// What the harness was doing.
        what: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The embedded provider's settings cannot run.
    #[error("the provider cannot run with these settings")]
    Provider(#[source] provider::ProviderError),
    /// The kubeconfig cannot be read or used.
    #[error("cannot use the kubeconfig {}", path.display())]
    Kubeconfig {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The API server of the kubeconfig does not answer.
    #[error("cannot reach the API server of {}", kubeconfig.display())]
    ApiServerUnreachable {
        /// The kubeconfig.
        kubeconfig: PathBuf,
        /// The error.
        #[source]
        source: kube::Error,
    },
    /// The provider's Deployment cannot be read.
    #[error("cannot read the provider's Deployment {namespace}/{name} (set --provider-deployment)")]
    Deployment {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The error.
        #[source]
        source: kube::Error,
    },
    /// mock-cloud's admin API cannot be used.
    #[error("cannot configure mock-cloud")]
    CloudAdmin(#[source] mock_cloud::admin::ClientError),
    /// The provider's metrics cannot be read.
    #[error("cannot read the provider's metrics")]
    ProviderMetrics(#[source] RemoteError),
    /// The deployed provider runs with other settings than the scenario's.
    #[error(transparent)]
    ProviderSettings(#[from] SettingsMismatch),
    /// The FlowSchema that counts the provider's API requests selects other ServiceAccounts
    /// than the provider's pods run as.
    #[error(
        "the FlowSchema {} selects ServiceAccount {}, and the provider's pods run as {provider}: it would count another client's requests, not the provider's; select the provider's with `harness flowschema --service-account {provider} | kubectl apply -f -`",
        super::source::report::PROVIDER_FLOW_SCHEMA,
        if .selects.is_empty() { "none".to_owned() } else { .selects.join(", ") }
    )]
    FlowSchemaSubject {
        /// The ServiceAccounts it selects, `namespace/name`.
        selects: Vec<String>,
        /// The provider's, `namespace/name`.
        provider: String,
    },
    /// The API server does not serve kinds the scenario names.
    #[error(transparent)]
    UnservedKinds(#[from] UnservedKinds),
    /// `--api-requests-from journal`, and the API server has no mock journal.
    #[error("--api-requests-from journal: the API server has no mock journal at /mock/v1/requests")]
    NoApiJournal(#[source] ApiReadError),
    /// `--api-requests-from metrics` or `flowschema`, and the API server's `/metrics`
    /// cannot be read.
    #[error("--api-requests-from metrics: cannot read the API server's /metrics")]
    NoApiMetrics(#[source] ApiReadError),
    /// `--api-requests-from flowschema`, and the server's `/metrics` has no series of the
    /// FlowSchema.
    #[error(
        "--api-requests-from flowschema: the API server's /metrics has no apiserver_flowcontrol_dispatched_requests_total{{flow_schema=\"loadtest-provider\"}}: install the FlowSchema for the provider's ServiceAccount (`harness flowschema --service-account NAMESPACE/NAME | kubectl apply -f -`)"
    )]
    NoFlowSchema,
}

/// A read of the API server's journal or metrics that failed.
#[derive(Debug, thiserror::Error)]
pub enum ApiReadError {
    /// The request failed.
    #[error("the request failed")]
    Request(#[source] kube::Error),
    /// The answer is not a journal page.
    #[error("the answer is not a mock-apiserver journal page")]
    Decode(#[source] serde_json::Error),
    /// The API server has several replicas, each with its own journal, and the harness
    /// reaches them only through one address that answers from any of them.
    #[error(
        "the API server has {0} replicas, each with its own journal, reachable only through the kubeconfig's address (which answers from any one of them): read each replica's address from this machine, or use --api-requests-from metrics"
    )]
    ReplicasUnreachable(usize),
}

/// The provider flags whose deployed values differ from the scenario's.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the deployed provider runs with {}; the budget is predicted from the scenario, so deploy the provider with `harness provider-args SCENARIO` (`cargo xtask kind` does) or change the scenario",
    .differ.iter().map(|d| format!("--{}={} (the scenario says {})", d.flag, d.deployed, d.scenario)).collect::<Vec<_>>().join(", ")
)]
pub struct SettingsMismatch {
    /// Each flag that differs.
    pub differ: Vec<FlagDiff>,
}

/// One provider flag that differs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlagDiff {
    /// The flag, without dashes.
    pub flag: &'static str,
    /// What the provider runs with.
    pub deployed: String,
    /// What the scenario says.
    pub scenario: String,
}

impl From<crate::scenario::flags::Differ> for FlagDiff {
    /// A difference between the deployed command line (`have`) and the scenario's (`want`).
    fn from(d: crate::scenario::flags::Differ) -> Self {
        FlagDiff {
            flag: d.flag,
            deployed: d.have,
            scenario: d.want,
        }
    }
}

/// A kind the scenario names that the API server does not serve ([`super::discovery`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unserved {
    /// Its place in the scenario, `file:line:column`.
    pub place: String,
    /// `group/version`.
    pub api_version: String,
    /// The kind.
    pub kind: String,
    /// Its API group.
    pub group: String,
    /// What the server serves in that group, as `version Kind`.
    pub served: Vec<String>,
}

impl std::fmt::Display for Unserved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: the API server does not serve {} {}, ",
            self.place, self.api_version, self.kind
        )?;
        if self.served.is_empty() {
            write!(
                f,
                "and serves no kind in {}: expected the provider's CustomResourceDefinitions to be installed (the process target serves the profile's `crds`)",
                self.group
            )
        } else {
            write!(
                f,
                "expected one it serves in {}: {}",
                self.group,
                self.served.join(", ")
            )
        }
    }
}

/// The kinds of a scenario that the API server does not serve.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", .kinds.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct UnservedKinds {
    /// Each, in scenario order.
    pub kinds: Vec<Unserved>,
}
