//! Command-line interface: one variant per subcommand, each `execute`d to an [`Outcome`].

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};
use harness::result::Signal;
use harness::run;
use harness::run::target::cluster;
use harness::scenario::{self, ScenarioError};

mod calibrate;
mod execute;
mod git;
mod inspect;
mod results;
mod selfcheck;
mod signals;
mod stdout;
mod sweep;
mod sweep_job;
mod target;

use execute::run_cmd;
use inspect::{core_args, predict_cmd, provider_args, validate};
use results::{compare_cmd, report_cmd};
use stdout::{out, outln};
use target::ClusterArgs;

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
        /// provider.eventClient, provider.reconcileRequests, provider.credentialCache,
        /// resources.NAME.count,
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
    /// cluster run measures (`cargo xtask kind` patches the Deployment with them): this
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
    /// Run a scenario over a grid of settings and pick the cheapest that meets an SLO.
    ///
    /// Each point of the grid (the product of the --vary axes and the file's `sweep.vary`)
    /// is a normal run with its own output directory, OUT/points/NNN, run by a process of
    /// this binary (`harness sweep … --point NNN`), --jobs at once, in virtual time where
    /// the target allows it. The sweep predicts and measures four costs (peak cloud calls
    /// per window, steady calls per hour, peak API requests, throttles) and four benefits
    /// (time to Ready of the creation wave, the realised poll period, drift detection
    /// latency, drain time after a restart) at every point, and writes sweep.json,
    /// sweep.txt (the table printed here) and sweep.html (each cost against each benefit,
    /// predicted as a line and measured as marks, the budget and the SLO as lines). The
    /// cheapest point that meets every --slo and --budget on its measured figures is
    /// named, or, when none does, the constraint that binds. docs/sweep.md describes each
    /// figure and the choice. Exit 0 when a point is chosen and every point ran; 1 when
    /// none meets the constraints or a point wrote no complete result (the others are
    /// reported); 2 on bad input.
    Sweep(sweep::SweepArgs),
    /// Render the table, JUnit XML and HTML report of a result.json again.
    Report {
        /// The result.json.
        result: PathBuf,
        /// Where to write junit.xml and report.html.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
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
            Command::Sweep(args) => sweep::sweep_cmd(args),
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
        Some(run::RunError::NeedsAwsFeature)
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
