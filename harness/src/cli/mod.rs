//! Command-line interface: one variant per subcommand, each `execute`d to an [`Outcome`].

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use harness::result::{RESULT_VERSION, RunResult, Signal};
use harness::run::target::cluster;
use harness::scenario::{self, ScenarioError, TimeMode};
use harness::{compare, predict, report, run};

mod calibrate;
mod git;
mod selfcheck;
mod signals;
mod stdout;

use stdout::{out, outln};

/// Run YAML load scenarios against a rate-limited provider, predict its budget, assert and
/// report.
#[derive(Debug, Parser)]
#[command(
    name = "harness",
    version,
    about,
    after_help = "Exit codes: 0 pass; 1 an assertion failed, a phase timed out or failed (a resync phase\nwhose provider does not implement reconcile requests), or compare found a regression; 2 bad input or setup; 3 compare: the two results cannot be compared (NEW\npartial or failed, OLD partial, different workloads, or missing metrics); 130 interrupted\nby SIGINT (Ctrl-C), 143 by SIGTERM (CI cancelling a job): the partial report is written,\nthen what the run created is cleaned up; 141 standard output closed early (`| head`).\n\nThe budget's formulas and symbols are explained in docs/budget.md."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
// Parsed once per process: the size of `Run`'s options costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a scenario, measure at the source, assert, and write the reports.
    ///
    /// Three targets:
    ///
    /// - embedded (the default): mock-apiserver, mock-cloud and this workspace's provider
    ///   with the scenario's settings, in this process, on no sockets; the only target that
    ///   runs in virtual time.
    ///
    /// - process (--process, or the scenario's `target: process`): your own provider binary.
    ///   mock-apiserver and mock-cloud run in this process on loopback ports; the provider
    ///   runs as a child process from the profile's `command` ({{kubeconfig}} and {{cloudUrl}}
    ///   filled in), its logs in the output directory; restart phases send it SIGTERM and
    ///   start it again, kill phases SIGKILL. No cluster, no Deployment. A scenario with XR
    ///   groups runs Crossplane core as a child process too, from --core-profile (a profile
    ///   of family crossplane-core: the composer, or `crossplane core start`) with the
    ///   scenario's `core` settings appended as core's flags; docs/core-process.md says what
    ///   core needs from the API server and what is measured.
    ///
    /// - cluster (--kubeconfig): the provider already deployed there (see ci/manifests),
    ///   mock-cloud reachable at --cloud-url (the harness gives it the scenario's cloud
    ///   section through its admin API, which starts it afresh). With a profile whose
    ///   settings come from `flags`, the Deployment's container args are read and must agree
    ///   with it (exit 2 naming each flag).
    Run {
        /// The scenario file.
        scenario: PathBuf,
        /// Where to write result.json, junit.xml and report.html [default: out/SCENARIO-NAME].
        /// A directory that holds an earlier result is overwritten, with a warning.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Override a value of the scenario for this run, e.g. provider.maxReconcileRate=20,
        /// resources.bucket.count=500 or phases.hold.duration=30s (repeatable; a later one
        /// wins). The value is YAML and meets the same checks as in the file; the result
        /// records every override. Paths: provider.maxReconcileRate, provider.rateLimitModel,
        /// provider.pollInterval, provider.pollJitterPercent, provider.minPollInterval,
        /// provider.pollJitterSizing, provider.scopedBuckets, provider.backoffBase,
        /// provider.backoffMax, provider.errorRequeue, provider.observeOnlyAbsent,
        /// provider.eventClient, provider.reconcileRequests, resources.NAME.count,
        /// composites.NAME.count (an XR group's), phases.NAME.duration, phases.NAME.timeout,
        /// assertions.CHECK.window (every
        /// assertion of that check), profile.file (another profile file, relative to the
        /// scenario: the same workload with another provider version), seed, time.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<scenario::Set>,
        /// Run in virtual time: the embedded stack on tokio's paused clock, which jumps to
        /// the next timer whenever every task waits, so hours pass in seconds and two runs
        /// with the same seed write the same result.json (apart from its wall-time fields).
        /// The scenario's `time: virtual` does the same; this flag wins over `time: real`.
        /// A cluster and a provider process keep real time: not with --kubeconfig or
        /// --process.
        #[arg(long)]
        virtual_time: bool,
        /// Run the process target: the scenario profile's provider `command` as a child
        /// process against mock-apiserver and mock-cloud on loopback.
        #[arg(long, conflicts_with = "kubeconfig")]
        process: bool,
        /// A check whose formula does not cover the scenario (UNMODELED: an interaction
        /// the model does not predict, with its reason in the verdict's note) fails the run
        /// instead of being reported apart.
        #[arg(long)]
        strict: bool,
        #[command(flatten)]
        cluster: ClusterArgs,
    },
    /// Measure a provider's cloud calls per reconcile, by kind, path and operation, on a
    /// small sample of a scenario, and write them as a calibration file that a profile
    /// names (`calibration: FILE`) so the budget uses them.
    ///
    /// The sample: each group cut to --sample resources without its faults, created at
    /// --rate per second (so that reconciles do not overlap), held for --polls polls of the
    /// longest poll interval, updated as the scenario's update phases update them, and
    /// deleted. Each reconcile is told apart by the provider's status write that ends it
    /// (mock-apiserver's journal dates them: the embedded stack, --process, or a cluster
    /// whose API server is a mock-apiserver); its calls are split into Connect's (STS) and
    /// its path: create, first observe, steady observe, update, delete. The reports go to
    /// --out beside calibration.yaml; docs/budget.md §10 says how the budget uses it.
    Calibrate {
        /// The scenario file.
        scenario: PathBuf,
        /// Where to write calibration.yaml and the run's reports [default:
        /// out/SCENARIO-NAME-calibration].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Override a value of the scenario, as for `run` (repeatable).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<scenario::Set>,
        /// Resources per group in the sample (a group with fewer keeps its count).
        #[arg(long, default_value_t = 5, value_name = "N")]
        sample: u32,
        /// Polls each resource is held for.
        #[arg(long, default_value_t = 3, value_name = "K")]
        polls: u32,
        /// Resources created, updated and deleted per second.
        #[arg(long, default_value_t = 1.0, value_name = "PER_SECOND")]
        rate: f64,
        /// Run the sample in virtual time (embedded stack only), as `run --virtual-time`.
        #[arg(long)]
        virtual_time: bool,
        /// Run the sample on the process target, as `run --process`.
        #[arg(long, conflicts_with = "kubeconfig")]
        process: bool,
        #[command(flatten)]
        cluster: ClusterArgs,
    },
    /// Print the provider flags that match a scenario's settings, to deploy the provider a
    /// cluster run measures (ci/kind/run.sh patches the Deployment with them): this
    /// workspace's provider's flags, or with a profile whose settings come from `flags`,
    /// the flags of that dialect (settings the dialect has no flag for are left out).
    ProviderArgs {
        /// The scenario file.
        scenario: PathBuf,
        /// Override a value of the scenario, as for `run` (repeatable).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<scenario::Set>,
        /// Print a JSON array instead of one flag a line.
        #[arg(long)]
        json: bool,
    },
    /// Print Crossplane core's flags (family crossplane-core) that match a scenario's `core`
    /// section, to start or deploy the core a run measures. With --kubeconfig, read core's
    /// Deployment there instead and check its container's args against them: exit 2 naming
    /// each flag that differs (docs/core-process.md).
    CoreArgs {
        /// The scenario file.
        scenario: PathBuf,
        /// Override a value of the scenario, as for `run` (repeatable).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<scenario::Set>,
        /// Print a JSON array instead of one flag a line.
        #[arg(long)]
        json: bool,
        /// Check core's Deployment in the cluster of this kubeconfig.
        #[arg(long, value_name = "FILE")]
        kubeconfig: Option<PathBuf>,
        /// The kubeconfig context [default: its current context].
        #[arg(long, value_name = "NAME", requires = "kubeconfig")]
        context: Option<String>,
        /// Core's Deployment.
        #[arg(
            long,
            value_name = "NAMESPACE/NAME",
            default_value = run::target::cluster_core::DEFAULT_CORE_DEPLOYMENT,
            value_parser = cluster::parse_deployment)]
        core_deployment: (String, String),
        /// Core's container in the Deployment [default: the first container].
        #[arg(long, value_name = "NAME", requires = "kubeconfig")]
        core_container: Option<String>,
    },
    /// Parse and check a scenario; errors give file:line:column and what was expected. It
    /// also prints how long the scenario is expected to take.
    Validate {
        /// The scenario file.
        scenario: PathBuf,
        /// Override a value of the scenario, as for `run` (repeatable).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<scenario::Set>,
    },
    /// The budget of a scenario, with formulas and inputs, and its expected duration,
    /// without running it. Symbols and tags ([P] [D] [A] [S] §n) are explained in
    /// docs/budget.md.
    Predict {
        /// The scenario file.
        scenario: PathBuf,
        /// Override a value of the scenario, as for `run` (repeatable).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<scenario::Set>,
        /// Print the predictions as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print the FlowSchema that sets the provider's API requests apart in the API server's
    /// metrics (what --api-requests-from metrics reads) for the ServiceAccount its pods run
    /// as: `harness flowschema --service-account crossplane-system/provider-aws-s3 |
    /// kubectl apply -f -`. A cluster run refuses (exit 2) a FlowSchema that selects
    /// another ServiceAccount than the provider Deployment's pods.
    Flowschema {
        /// The provider's ServiceAccount.
        #[arg(
            long,
            value_name = "NAMESPACE/NAME",
            default_value = "loadtest-system/provider",
            value_parser = cluster::parse_deployment)]
        service_account: (String, String),
    },
    /// Print the JSON Schema of scenario files.
    Schema,
    /// Compare two results (A/B before an upgrade): exit 1 on a regression, 3 when the two
    /// cannot be compared (NEW partial or failed, OLD partial, different workloads, or a
    /// metric only one run has). The provider settings may differ; the header shows both.
    Compare {
        /// The baseline result.json.
        old: PathBuf,
        /// The candidate result.json.
        new: PathBuf,
        /// Largest allowed rise of any metric, in percent.
        #[arg(long, default_value_t = 10.0, value_name = "PCT")]
        max_regression: f64,
    },
    /// Check the budget model against the provider: draw N random scenarios from the
    /// scenario generator (every feature and their mixes, kept small: at most 300 resources
    /// a group, P up to 10m, holds up to 30m), run each on the embedded stack in virtual
    /// time as `run` does, and count every assertion's verdict by check and by the kind of
    /// its limit.
    ///
    /// The kind comes from docs/budget.md's tag of the formula behind the limit (the
    /// verdict's `kind` in result.json): hard ([P], proved: must never be exceeded),
    /// derived ([D], exact under its stated assumptions), approximation ([A], an expected
    /// value or a statistical tolerance: the limit already holds its stated tolerance), or
    /// given (the scenario's own limit, such as an audit's 0).
    ///
    /// The table has one line per check and kind: scenarios where the check applied, its
    /// verdicts, PASS, FAIL, UNMODELED (the model says it does not cover the case, §11),
    /// INCOMPLETE (within its limit, but its phase did not complete), and `within`, PASS ÷
    /// (PASS + FAIL): for an approximation, the share within its stated tolerance. Then the
    /// totals per kind, and every verdict past its limit with its seed.
    ///
    /// Every scenario with a FAIL, or that timed out or could not run, is kept in --out as
    /// seed-N.yaml (run it again with `harness run`) beside seed-N/ with its result.json and
    /// reports; the table is written to --out's selfcheck.json. Exit 0 when no hard bound
    /// was exceeded and every scenario ran; 1 when a hard bound was exceeded or a scenario
    /// timed out or could not run; 2 on bad usage.
    Selfcheck {
        /// Scenarios to draw.
        #[arg(short = 'n', long = "count", default_value_t = 200, value_name = "N")]
        count: u64,
        /// The first scenario's seed; scenario i is drawn with SEED + i, so `--seed S -n 1`
        /// draws scenario S again.
        #[arg(long, default_value_t = harness::selfcheck::DEFAULT_SEED)]
        seed: u64,
        /// Where to keep the failing scenarios and selfcheck.json.
        #[arg(long, value_name = "DIR", default_value = "target/selfcheck")]
        out: PathBuf,
        /// Scenarios run at once, each on a thread of its own.
        #[arg(long, default_value_t = 1, value_name = "N")]
        jobs: usize,
        /// Wall time one scenario may take: past it, the run is stopped as an interrupted
        /// one, and what it ran is evaluated and counted.
        #[arg(long, default_value_t = 300, value_name = "SECONDS")]
        timeout: u64,
        /// How the table is printed; the JSON is what --out's selfcheck.json holds.
        #[arg(long, value_enum, default_value_t)]
        format: selfcheck::Format,
    },
    /// Render the table, JUnit XML and HTML report of a result.json again.
    Report {
        /// The result.json.
        result: PathBuf,
        /// Where to write junit.xml and report.html.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

/// Where a cluster run finds the cluster, the provider and mock-cloud.
#[derive(Debug, Args)]
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
enum Where {
    Embedded,
    /// With Crossplane core's profile for a scenario with XR groups.
    Process(Option<Box<scenario::profile::core::CoreProfile>>),
    Cluster(Box<run::ClusterOptions>),
}

impl ClusterArgs {
    /// Where `s` runs; `flag` says whether its virtual time came from --virtual-time,
    /// `process` whether --process was given.
    fn target(self, s: &harness::scenario::Scenario, flag: bool, process: bool) -> Result<Where> {
        let process = process || s.target == scenario::Target::Process;
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
            if self.kubeconfig.is_some() || s.target == scenario::Target::Cluster {
                bail!(
                    "scenario {} has XR groups (`composites`), which run on the embedded stack, or on the process target with --core-profile: a cluster's core is not measured yet (leave out --kubeconfig)",
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

/// How a command ended when it did not fail to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Pass,
    /// Exit 1: an assertion or a regression failed.
    Fail,
    /// Exit 3: `compare` was given two results that cannot be compared.
    NotComparable,
    /// Exit 130 (SIGINT) or 143 (SIGTERM): interrupted; a partial report was written.
    Interrupted(Signal),
}

impl Outcome {
    /// The process exit code.
    pub fn exit_code(self) -> ExitCode {
        match self {
            Outcome::Pass => ExitCode::SUCCESS,
            Outcome::Fail => ExitCode::from(1),
            Outcome::NotComparable => ExitCode::from(3),
            Outcome::Interrupted(Signal::Sigint) => ExitCode::from(130),
            Outcome::Interrupted(Signal::Sigterm) => ExitCode::from(143),
        }
    }
}

impl Command {
    /// Runs the command.
    pub fn execute(self) -> Result<Outcome> {
        match self {
            Command::Run {
                scenario,
                out,
                sets,
                virtual_time,
                process,
                strict,
                cluster,
            } => run_cmd(
                &scenario,
                out,
                &sets,
                (virtual_time, process, strict),
                cluster,
            ),
            Command::Calibrate {
                scenario,
                out,
                sets,
                sample,
                polls,
                rate,
                virtual_time,
                process,
                cluster,
            } => calibrate::calibrate_cmd(calibrate::CalibrateArgs {
                scenario,
                out,
                sets,
                sample: harness::calibrate::SampleOptions {
                    per_group: sample,
                    polls,
                    rate,
                },
                virtual_time,
                process,
                cluster,
            }),
            Command::ProviderArgs {
                scenario,
                sets,
                json,
            } => provider_args(&scenario, &sets, json),
            Command::CoreArgs {
                scenario,
                sets,
                json,
                kubeconfig,
                context,
                core_deployment,
                core_container,
            } => core_args(
                &scenario,
                &sets,
                json,
                kubeconfig.map(|k| (k, context, core_deployment, core_container)),
            ),
            Command::Validate { scenario, sets } => validate(&scenario, &sets),
            Command::Predict {
                scenario,
                sets,
                json,
            } => predict_cmd(&scenario, &sets, json),
            Command::Flowschema {
                service_account: (namespace, name),
            } => {
                out!("{}", run::flow_schema::manifest(&namespace, &name))?;
                Ok(Outcome::Pass)
            }
            Command::Schema => {
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&scenario::json_schema())?
                )?;
                Ok(Outcome::Pass)
            }
            Command::Compare {
                old,
                new,
                max_regression,
            } => compare_cmd(&old, &new, max_regression),
            Command::Report { result, out } => report_cmd(&result, &out),
            Command::Selfcheck {
                count,
                seed,
                out,
                jobs,
                timeout,
                format,
            } => selfcheck::selfcheck_cmd(selfcheck::SelfcheckArgs {
                count,
                seed,
                out,
                jobs,
                timeout: std::time::Duration::from_secs(timeout),
                format,
            }),
        }
    }
}

/// The scenario at `path` with `--set`s applied.
fn load_with(path: &Path, sets: &[scenario::Set]) -> Result<harness::scenario::Scenario> {
    Ok(scenario::load_with(path, sets)?)
}

fn provider_args(path: &Path, sets: &[scenario::Set], json: bool) -> Result<Outcome> {
    let s = load_with(path, sets)?;
    // Without a profile's family, this workspace's provider, whose flags name the settings.
    let dialect = s.profile.as_ref().and_then(|p| p.flags);
    let written = scenario::flags::write(
        dialect.unwrap_or(scenario::flags::Dialect::Loadtest),
        &s.settings,
    );
    let flags: Vec<String> = written
        .into_iter()
        .map(|(flag, value)| format!("--{flag}={value}"))
        .collect();
    if json {
        outln!("{}", serde_json::to_string(&flags)?)?;
    } else {
        for f in flags {
            outln!("{f}")?;
        }
    }
    Ok(Outcome::Pass)
}

/// Where `harness core-args --kubeconfig` finds core's Deployment: the kubeconfig, its
/// context, the Deployment and its container.
type CoreCluster = (PathBuf, Option<String>, (String, String), Option<String>);

/// `harness core-args`: core's flags for the scenario's `core` section, or the check of
/// core's Deployment against them.
fn core_args(
    path: &Path,
    sets: &[scenario::Set],
    json: bool,
    cluster: Option<CoreCluster>,
) -> Result<Outcome> {
    let s = load_with(path, sets)?;
    let want = &s.composites.core;
    let Some((kubeconfig, context, (ns, name), container)) = cluster else {
        let flags = scenario::core_flags::args(want);
        if json {
            outln!("{}", serde_json::to_string(&flags)?)?;
        } else {
            for f in flags {
                outln!("{f}")?;
            }
        }
        return Ok(Outcome::Pass);
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let note = runtime.block_on(async {
        let config = kube::Config::from_custom_kubeconfig(
            kube::config::Kubeconfig::read_from(&kubeconfig)
                .with_context(|| format!("cannot read {}", kubeconfig.display()))?,
            &kube::config::KubeConfigOptions {
                context,
                ..Default::default()
            },
        )
        .await
        .with_context(|| format!("cannot use {}", kubeconfig.display()))?;
        let client = kube::Client::try_from(config).context("cannot build a client")?;
        let d = kube::Api::<k8s_openapi::api::apps::v1::Deployment>::namespaced(client, &ns)
            .get(&name)
            .await
            .with_context(|| format!("cannot read core's Deployment {ns}/{name}"))?;
        let note = run::target::cluster_core::check_core_deployment(
            want,
            &format!("{ns}/{name}"),
            &d,
            container.as_deref(),
        )?;
        anyhow::Ok(note)
    })?;
    outln!("{note}")?;
    Ok(Outcome::Pass)
}

/// Installs the tracing subscriber for a run (`RUST_LOG`, default `warn`).
fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .try_init();
}

fn run_cmd(
    path: &Path,
    out: Option<PathBuf>,
    sets: &[scenario::Set],
    (virtual_time, process, strict): (bool, bool, bool),
    cluster: ClusterArgs,
) -> Result<Outcome> {
    init_tracing();
    let mut s = load_with(path, sets)?;
    if virtual_time {
        s.time = TimeMode::Virtual;
    }
    let target = cluster.target(&s, virtual_time, process)?;
    let out = out.unwrap_or_else(|| PathBuf::from("out").join(&s.name));
    let (r, interrupted) = execute(&s, target, &out, strict)?;
    out!("{}", report::assertion_table(&r))?;
    outln!("reports: {}", out.display())?;
    Ok(match interrupted {
        Some(signal) => Outcome::Interrupted(signal),
        None if r.passed() => Outcome::Pass,
        None => Outcome::Fail,
    })
}

/// Runs `s` on `target` and writes result.json, junit.xml and report.html into `out`; the
/// result, and the signal that interrupted the run if one did.
fn execute(
    s: &harness::scenario::Scenario,
    target: Where,
    out: &Path,
    strict: bool,
) -> Result<(RunResult, Option<Signal>)> {
    warn_if_used(out);
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let progress = run::Progress::auto().virtual_time(s.time == TimeMode::Virtual);
    let on = match &target {
        Where::Embedded if s.time == TimeMode::Virtual => {
            "the embedded stack in virtual time".to_owned()
        }
        Where::Embedded => "the embedded stack".to_owned(),
        Where::Process(None) => {
            "the process target (the profile's provider on loopback)".to_owned()
        }
        Where::Process(Some(_)) => {
            "the process target (the profile's provider and Crossplane core on loopback)".to_owned()
        }
        Where::Cluster(c) => format!("the cluster of {}", c.kubeconfig.display()),
    };
    let plan = predict::plan(s);
    progress.line(format_args!(
        "running {} ({} resources, {} phases, about {}) on {on}; reports go to {}",
        s.name,
        s.total_resources(),
        s.phases.len(),
        report::human_duration(plan.expected_duration(s).total),
        out.display()
    ));
    let output = run_on(s, target, out, &progress, signals::next)?;
    let mut r = output.result;
    if strict {
        r.make_strict();
    }
    r.run.commit = git::commit();
    write(out, "result.json", serde_json::to_string_pretty(&r)?)?;
    write_reports(out, &r)?;
    Ok((r, output.interrupted))
}

/// Runs `s` on `target` on a runtime of its own (virtual time on a paused clock) until its
/// phases are done or an `interrupt()` completes: the run path of `run`, which `selfcheck`
/// shares. `out` is where the process target writes the provider's logs.
fn run_on<F: Future<Output = Signal>>(
    s: &harness::scenario::Scenario,
    target: Where,
    out: &Path,
    progress: &run::Progress,
    interrupt: impl FnMut() -> F,
) -> Result<run::RunOutput> {
    let runtime = run::time::runtime(s.time).context("cannot start the async runtime")?;
    let output = runtime.block_on(async {
        match target {
            Where::Embedded => run::run::<run::Embedded, _>(s, (), progress, interrupt).await,
            Where::Process(core) => {
                let options = run::ProcessOptions {
                    out: out.to_path_buf(),
                    core: core.map(|c| *c),
                };
                run::run::<run::Process, _>(s, options, progress, interrupt).await
            }
            Where::Cluster(options) => {
                run::run::<run::Cluster, _>(s, *options, progress, interrupt).await
            }
        }
    })?;
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    Ok(output)
}

fn write(dir: &Path, name: &str, text: String) -> Result<()> {
    let p = dir.join(name);
    std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))
}

/// Writes junit.xml and report.html of `r` into `dir`.
fn write_reports(dir: &Path, r: &RunResult) -> Result<()> {
    write(dir, "junit.xml", report::junit(r))?;
    write(dir, "report.html", report::html(r))
}

/// Warns when `out` holds the result of an earlier run, which this run replaces.
fn warn_if_used(out: &Path) {
    let earlier = out.join("result.json");
    let Ok(text) = std::fs::read_to_string(&earlier) else {
        return;
    };
    let when = serde_json::from_str::<RunResult>(&text)
        .ok()
        .and_then(|r| r.run.started_at)
        .map_or_else(String::new, |t| format!(" (started {t})"));
    eprintln!(
        "warning: {} holds an earlier run's reports{when}; this run replaces them (--out DIR writes elsewhere)",
        out.display()
    );
}

fn validate(path: &Path, sets: &[scenario::Set]) -> Result<Outcome> {
    let s = load_with(path, sets)?;
    for w in &s.warnings {
        eprintln!("warning: {}: {}", s.place(w.pos), w.message);
    }
    let plan = predict::plan(&s);
    let xr_groups = &s.composites.groups;
    let xrs = if xr_groups.is_empty() {
        String::new()
    } else {
        format!(
            " and {} in {}",
            counted(xr_groups.iter().map(|g| u64::from(g.count)).sum(), "XR"),
            counted(xr_groups.len() as u64, "XR group")
        )
    };
    outln!(
        "{}: ok: scenario {} with {} in {}{xrs}, {}, {}; expected duration {}",
        s.file,
        s.name,
        counted(s.total_resources(), "resource"),
        counted(s.groups.len() as u64, "group"),
        counted(s.phases.len() as u64, "phase"),
        counted(s.assertions.len() as u64, "assertion"),
        report::human_duration(plan.expected_duration(&s).total)
    )?;
    Ok(Outcome::Pass)
}

/// `1 group`, `2 groups`.
fn counted(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn predict_cmd(path: &Path, sets: &[scenario::Set], json: bool) -> Result<Outcome> {
    let s = load_with(path, sets)?;
    let plan = predict::plan(&s);
    if json {
        let all: Vec<_> = plan.all().collect();
        outln!("{}", serde_json::to_string_pretty(&all)?)?;
    } else {
        out!("{}", report::plan_listing(&s, &plan))?;
    }
    Ok(Outcome::Pass)
}

fn read_result(path: &Path) -> Result<RunResult> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read result {}", path.display()))?;
    let r: RunResult = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a harness result", path.display()))?;
    if r.version != RESULT_VERSION {
        bail!(
            "{} has result version {}, this harness reads version {RESULT_VERSION}",
            path.display(),
            r.version
        );
    }
    Ok(r)
}

fn compare_cmd(old: &Path, new: &Path, pct: f64) -> Result<Outcome> {
    if pct.is_nan() || pct < 0.0 {
        bail!("--max-regression must be a percentage ≥ 0, got {pct}");
    }
    let c = compare::compare(&read_result(old)?, &read_result(new)?, pct);
    out!("{}", compare::render(&c))?;
    Ok(if !c.comparable() {
        Outcome::NotComparable
    } else if c.regressions().next().is_some() {
        Outcome::Fail
    } else {
        Outcome::Pass
    })
}

fn report_cmd(path: &Path, out: &Path) -> Result<Outcome> {
    let r = read_result(path)?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    write_reports(out, &r)?;
    out!("{}", report::assertion_table(&r))?;
    Ok(if r.passed() {
        Outcome::Pass
    } else {
        Outcome::Fail
    })
}

fn hint(err: &anyhow::Error) -> Option<&'static str> {
    if let Some(e) = err.downcast_ref::<ScenarioError>() {
        return Some(match e {
            ScenarioError::Read { .. } => "check the path; shipped scenarios are in scenarios/",
            ScenarioError::Invalid { .. } => {
                "scenarios/README.md documents every field; `harness schema` prints the JSON Schema"
            }
        });
    }
    if err.chain().any(|c| c.is::<serde_json::Error>()) {
        return Some("compare and report read the result.json that `harness run --out DIR` writes");
    }
    // A build without the AWS flavour or its VPC: the error says which build has it; usage
    // is not it.
    if matches!(
        err.downcast_ref::<run::RunError>(),
        Some(run::RunError::NeedsAwsFeature | run::RunError::NeedsAwsVpcFeature)
    ) {
        return None;
    }
    Some("run with --help for usage")
}

/// Prints an error with its "caused by" chain and, unless the error says what to do, a
/// hint; exit 2. Standard output closing (`harness schema | head -1`) is no error: nothing
/// is printed, exit 141.
pub fn report_error(err: &anyhow::Error) -> ExitCode {
    if let Some(code) = stdout::closed_exit(err) {
        return code;
    }
    eprintln!("error: {err}");
    for cause in err.chain().skip(1) {
        eprintln!("  caused by: {cause}");
    }
    if let Some(hint) = hint(err) {
        eprintln!("hint: {hint}");
    }
    ExitCode::from(2)
}
