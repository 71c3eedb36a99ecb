//! The versioned result document: what `--out` writes as JSON and what every report and
//! `compare` read.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::measure::{Audit, LatencySummary, PollStats};
use crate::predict::{Prediction, fmt_num};
use crate::scenario::TimeMode;

/// The result format's version; bump on any incompatible change.
pub const RESULT_VERSION: u32 = 2;

/// Where a run happened.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum RunTarget {
    /// The embedded stack, in the harness's process.
    #[default]
    Embedded,
    /// A cluster reached through a kubeconfig.
    Cluster {
        /// The kubeconfig file.
        kubeconfig: String,
        /// mock-cloud's URL.
        cloud_url: String,
        /// The provider's Deployment, `namespace/name`.
        provider_deployment: String,
    },
    /// mock-apiserver and mock-cloud on loopback, the provider a child process.
    Process {
        /// The provider's command line, placeholders unrendered.
        command: String,
        /// mock-cloud's URL.
        cloud_url: String,
        /// The directory of the provider's logs.
        logs: String,
    },
}

/// How time passed in a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimeInfo {
    /// `real`, or `virtual`: the embedded stack on tokio's paused clock, where the run's
    /// duration is virtual time.
    pub mode: TimeMode,
    /// The wall time the run took, s (from the target's start to the observations; a
    /// wall-time field, which differs between two runs that are otherwise the same).
    pub wall_s: f64,
    /// In virtual time: the CPU time per reconcile the provider slept
    /// (`prediction.reconcileCpu`), ms.
    #[serde(default)]
    pub reconcile_cpu_simulated_ms: Option<f64>,
    /// The CPU time per reconcile the provider measured (`provider_reconcile_cpu_seconds`:
    /// wall time spent polling a reconcile, the in-process API server's and cloud's
    /// handling of its requests included), ms: what a real run gives
    /// `prediction.reconcileCpu` for virtual runs. A wall-time field.
    #[serde(default)]
    pub reconcile_cpu_measured_ms: Option<f64>,
}

/// Journal entries lost because a journal was full.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dropped {
    /// The API server's request journal.
    pub api: u64,
    /// The cloud's call journal.
    pub cloud: u64,
}

/// Whether the measured API requests are the provider's, all of them and only them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ApiCount {
    /// Every request of the provider and no other client's.
    #[default]
    Exact,
    /// Every request of the provider, and maybe other clients' too (the source cannot tell
    /// them apart): a count within its bound is the provider's within it, one past it is
    /// UNMEASURED.
    MayIncludeOthers,
    /// Only the provider's, and maybe not all of them: a count past its bound fails, one
    /// within it is UNMEASURED.
    MayMissSome,
    /// Neither all of the provider's nor only its (or nothing measured): UNMEASURED.
    Unknown,
}

impl ApiCount {
    /// The count of a source that may both miss some of the provider's requests and
    /// count others'.
    #[must_use]
    pub fn and(self, other: ApiCount) -> ApiCount {
        use ApiCount::{Exact, MayIncludeOthers, MayMissSome, Unknown};
        match (self, other) {
            (Exact, x) | (x, Exact) => x,
            (MayIncludeOthers, MayIncludeOthers) => MayIncludeOthers,
            (MayMissSome, MayMissSome) => MayMissSome,
            _ => Unknown,
        }
    }
}

/// How the API server's priority and fairness held the provider's requests back over the
/// run, from the FlowSchema's `apiserver_flowcontrol_*` series.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerThrottling {
    /// The priority level the FlowSchema puts them in.
    pub priority_level: String,
    /// Requests rejected with 429 (`apiserver_flowcontrol_rejected_requests_total`).
    pub rejected: u64,
    /// Requests that waited in a queue more than 5 ms before they ran or were rejected
    /// (`apiserver_flowcontrol_request_wait_duration_seconds`, above its `0.005` bucket).
    pub queued: u64,
    /// The time all its requests waited, seconds (its sum).
    pub queued_s: f64,
}

impl ServerThrottling {
    /// Whether the server held any request back.
    #[must_use]
    pub fn held_back(&self) -> bool {
        self.rejected > 0 || self.queued > 0
    }
}

/// The provider's API requests of one verb and resource over the run.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ApiRequestCount {
    /// The verb (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection`, `discovery`).
    pub verb: String,
    /// `PLURAL[.GROUP][/SUBRESOURCE]`, the path of a discovery request, or `unknown` where
    /// the source does not say.
    pub resource: String,
    /// How many.
    pub count: u64,
}

/// What ran and how it was measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The harness's version.
    pub harness: String,
    /// Where the run happened.
    pub target: RunTarget,
    /// How API-server requests were measured, in words.
    pub api_requests_measured_by: String,
    /// Whether that count is the provider's, all of it and only it.
    #[serde(default)]
    pub api_count: ApiCount,
    /// For API requests dated at each read of the server's metrics: the longest time
    /// between two reads, seconds. A window's count may be off by the requests of that
    /// long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_read_gap_s: Option<f64>,
    /// How the server's priority and fairness held the provider back, where the
    /// FlowSchema's series say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_server_throttling: Option<ServerThrottling>,
    /// Journal entries dropped; any drop makes the result partial.
    pub dropped: Dropped,
    /// How many times the provider was started or rolled.
    pub provider_starts: u32,
    /// Notes on how the run was measured.
    pub notes: Vec<String>,
    /// Real or virtual time, and the wall time the run took.
    #[serde(default)]
    pub time: TimeInfo,
    /// When the run started (RFC 3339, UTC; a wall-time field).
    #[serde(default)]
    pub started_at: Option<String>,
    /// The git commit of the working directory the harness ran in (`+dirty` when it had
    /// uncommitted changes), if it is a git checkout.
    #[serde(default)]
    pub commit: Option<String>,
}

impl RunInfo {
    /// The facts as labelled rows, for reports.
    #[must_use]
    pub fn rows(&self) -> Vec<(String, String)> {
        let unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".to_owned());
        let mut rows = vec![
            ("harness".to_owned(), self.harness.clone()),
            ("started at".to_owned(), unknown(&self.started_at)),
            (
                "time".to_owned(),
                match self.time.mode {
                    TimeMode::Real => "real".to_owned(),
                    TimeMode::Virtual => format!(
                        "virtual (tokio's paused clock); {} s of wall time",
                        fmt_num(self.time.wall_s)
                    ),
                },
            ),
            ("commit".to_owned(), unknown(&self.commit)),
        ];
        match &self.target {
            RunTarget::Embedded => rows.push(("target".to_owned(), "embedded".to_owned())),
            RunTarget::Cluster {
                kubeconfig,
                cloud_url,
                provider_deployment,
            } => rows.extend([
                ("target".to_owned(), "cluster".to_owned()),
                ("kubeconfig".to_owned(), kubeconfig.clone()),
                ("cloud url".to_owned(), cloud_url.clone()),
                (
                    "provider deployment".to_owned(),
                    provider_deployment.clone(),
                ),
            ]),
            RunTarget::Process {
                command,
                cloud_url,
                logs,
            } => rows.extend([
                ("target".to_owned(), "process".to_owned()),
                ("provider command".to_owned(), command.clone()),
                ("cloud url".to_owned(), cloud_url.clone()),
                ("provider logs".to_owned(), logs.clone()),
            ]),
        }
        rows.push((
            "api requests measured by".to_owned(),
            self.api_requests_measured_by.clone(),
        ));
        rows.push((
            "api requests counted".to_owned(),
            match self.api_count {
                ApiCount::Exact => "the provider's, all of them and only them",
                ApiCount::MayIncludeOthers => {
                    "the provider's and maybe other clients' (a count past its bound is UNMEASURED)"
                }
                ApiCount::MayMissSome => {
                    "the provider's, maybe not all of them (a count within its bound is UNMEASURED)"
                }
                ApiCount::Unknown => "not the provider's alone nor all of them (UNMEASURED)",
            }
            .to_owned(),
        ));
        if let Some(th) = &self.api_server_throttling {
            rows.push((
                "api server throttling".to_owned(),
                format!(
                    "{} requests rejected with 429, {} queued more than 5 ms, {} s of waiting in all, at priority level {}",
                    th.rejected,
                    th.queued,
                    fmt_num(th.queued_s),
                    th.priority_level
                ),
            ));
        }
        if let Some(gap) = self.api_read_gap_s {
            rows.push((
                "api requests' longest gap between reads".to_owned(),
                format!(
                    "{} s (a window's count may be off by the requests of that long)",
                    fmt_num(gap)
                ),
            ));
        }
        rows.push((
            "journal entries dropped (api, cloud)".to_owned(),
            format!("{}, {}", self.dropped.api, self.dropped.cloud),
        ));
        rows.push((
            "provider starts".to_owned(),
            self.provider_starts.to_string(),
        ));
        for (i, note) in self.notes.iter().enumerate() {
            rows.push((format!("note {}", i + 1), note.clone()));
        }
        rows
    }
}

/// The provider settings, as run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SettingsInfo {
    /// R.
    pub max_reconcile_rate: u32,
    /// Model.
    pub rate_limit_model: String,
    /// P (s).
    pub poll_interval_s: f64,
    /// Jitter percent.
    pub poll_jitter_percent: u32,
    /// P_min (s).
    pub min_poll_interval_s: f64,
}

/// The scenario, as run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioInfo {
    /// Name.
    pub name: String,
    /// File.
    pub file: String,
    /// Description.
    pub description: String,
    /// Resources.
    pub resources: u64,
    /// Provider settings.
    pub settings: SettingsInfo,
    /// The `--set PATH=VALUE` overrides the run was made with, in order.
    #[serde(default)]
    pub overrides: Vec<String>,
    /// The phases the scenario plans, in order, as `name (action)`.
    #[serde(default)]
    pub phases: Vec<String>,
    /// What the provider is put through, apart from its settings: resource groups, phases,
    /// cloud and assertions, one line each. Two runs compare only when these agree.
    #[serde(default)]
    pub workload: Vec<String>,
    /// The provider's settings and what follows from them (the API client's limits, SDK
    /// attempts), one `name: value` line each: what `compare` reports as changed.
    #[serde(default)]
    pub setting_lines: Vec<String>,
}

/// A peak windowed count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    /// W (s).
    pub window_s: f64,
    /// Most calls in any closed window of W.
    pub count: u64,
    /// Where that window starts (s).
    pub start_s: f64,
}

/// One phase's measurements.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    /// Name.
    pub name: String,
    /// Action.
    pub action: String,
    /// Start (s).
    pub start_s: f64,
    /// End (s).
    pub end_s: f64,
    /// `until` met in time.
    pub completed: bool,
    /// Cloud calls by action (create, get, update, delete, list).
    pub calls: BTreeMap<String, u64>,
    /// Cloud calls by the journal's operation (`s3:HeadBucket`, `generic:get`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub operations: BTreeMap<String, u64>,
    /// Throttled calls.
    pub throttles: u64,
    /// Provider API requests.
    pub api_requests: u64,
    /// Peak windowed cloud calls.
    pub peaks: Vec<Peak>,
    /// Time to Ready of resources created in the phase.
    pub ttr: Option<LatencySummary>,
    /// Expected cloud calls per second (the band's low edge).
    #[serde(with = "crate::float")]
    pub expected_per_s: f64,
    /// Hard bound on cloud calls in any 1 s (the band's high edge).
    #[serde(with = "crate::float")]
    pub bound_per_s: f64,
    /// Expected cloud calls per second over the phase: the steady polls plus the backlog's
    /// calls spread over the phase's expected length (NaN when unknown).
    #[serde(default = "crate::float::nan", with = "crate::float")]
    pub expected_calls_per_s: f64,
    /// Hard bound on the provider's API requests in any 1 s (NaN when unknown).
    #[serde(default = "crate::float::nan", with = "crate::float")]
    pub api_bound_per_s: f64,
    /// The formula of that bound, as the plan computed it (the HTML chart's caption names
    /// the formula that drew its line).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_bound_formula: String,
    /// Why it ended early without its `until` (the phase failed; the run went on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<super::PhaseFailure>,
}

/// Per-second series over the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// Bin width (s).
    pub bin_s: f64,
    /// Cloud calls per bin.
    pub cloud_calls: Vec<u32>,
    /// Throttled calls per bin.
    pub throttles: Vec<u32>,
    /// Provider API requests per bin.
    pub api_requests: Vec<u32>,
}

/// A signal that stopped a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Signal {
    /// SIGINT (Ctrl-C): exit 130.
    Sigint,
    /// SIGTERM (what CI sends to cancel a job): exit 143.
    Sigterm,
}

impl Signal {
    /// `SIGINT` or `SIGTERM`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Signal::Sigint => "SIGINT",
            Signal::Sigterm => "SIGTERM",
        }
    }
}

/// Why a run stopped before its last phase completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopCause {
    /// A signal.
    Interrupted(Signal),
    /// The phase did not reach its `until` within its timeout.
    TimedOut,
    /// The provider exited by itself (the process target), with this exit code (none: a
    /// signal ended it).
    ProviderExited(Option<i32>),
}

/// Where and why a run stopped early.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stopped {
    /// The phase that was running.
    pub phase: String,
    /// Why.
    pub cause: StopCause,
    /// A phase that timed out: the resources it was still waiting for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<super::waiting::Waiting>,
}

impl Stopped {
    /// `interrupted (SIGTERM) during phase create`, `phase create timed out`, `the provider
    /// exited with code 2 during phase create`.
    #[must_use]
    pub fn headline(&self) -> String {
        match self.cause {
            StopCause::Interrupted(s) => {
                format!("interrupted ({}) during phase {}", s.name(), self.phase)
            }
            StopCause::TimedOut => format!("stopped: phase {} timed out", self.phase),
            StopCause::ProviderExited(Some(code)) => format!(
                "stopped: the provider exited with code {code} during phase {}",
                self.phase
            ),
            StopCause::ProviderExited(None) => format!(
                "stopped: a signal ended the provider during phase {}",
                self.phase
            ),
        }
    }
}

/// How an assertion came out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    /// The observation is within the limit.
    #[default]
    Pass,
    /// The observation is past the limit.
    Fail,
    /// The observation is within the limit, but the phase it is about did not complete (or
    /// never ran), so it does not count as a pass.
    Incomplete,
    /// The check's formula does not cover the scenario (an interaction the model does not
    /// predict): the note gives the reason and the measured figure. Not a failure, unless
    /// the run is `--strict`.
    Unmodeled,
    /// What the check counts was not measured well enough to judge (API requests from a
    /// source that may miss some of the provider's or count other clients'): the note
    /// says why. Not a failure, unless the run is `--strict`.
    Unmeasured,
}

impl Outcome {
    /// `PASS`, `FAIL` or `INCOMPLETE`.
    #[must_use]
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Pass => "PASS",
            Outcome::Fail => "FAIL",
            Outcome::Incomplete => "INCOMPLETE",
            Outcome::Unmodeled => "UNMODELED",
            Outcome::Unmeasured => "UNMEASURED",
        }
    }
}

/// One assertion's outcome: formula, inputs, predicted, observed, margin, verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Assertion name.
    pub name: String,
    /// The check (`cloudCalls`, …).
    pub check: String,
    /// Phase, if restricted.
    pub phase: Option<String>,
    /// Formula of the prediction.
    pub formula: String,
    /// Inputs, as `R=10, W=10`.
    pub inputs: String,
    /// The predicted value (NaN when there is none).
    #[serde(with = "crate::float")]
    pub predicted: f64,
    /// The limit applied (the prediction, an explicit max/min, or the prediction plus
    /// tolerance).
    #[serde(with = "crate::float")]
    pub limit: f64,
    /// The observed value.
    #[serde(with = "crate::float")]
    pub observed: f64,
    /// Whether the limit is an upper (`≤`) or lower (`≥`) one.
    pub upper: bool,
    /// Headroom: limit − observed for an upper limit, observed − limit for a lower one.
    #[serde(with = "crate::float")]
    pub margin: f64,
    /// Passed.
    pub pass: bool,
    /// Pass, fail, or incomplete (within its limit, but its phase did not complete).
    #[serde(default)]
    pub outcome: Outcome,
    /// What a reader must know.
    pub note: Option<String>,
    /// W (s) of a windowed count of every cloud call (`cloudCalls`, `steadyRate` with no
    /// `account`): what the report's busiest-windows chart marks the limit on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls_window_s: Option<f64>,
    /// What kind of limit `limit` is, from the tag of the formula behind it
    /// (docs/budget.md): a hard bound, a derived one, an approximation held to its stated
    /// tolerance, or a limit the scenario gave.
    #[serde(default)]
    pub kind: LimitKind,
}

/// What kind of limit a verdict applies, as docs/budget.md's tags say of the formula behind
/// it. `harness selfcheck` counts verdicts by it: a hard bound must never be exceeded, an
/// approximation is held to its stated tolerance.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "camelCase")]
pub enum LimitKind {
    /// Tagged \[P\]: proved; a measurement past it is a bug in the provider or in the proof.
    Hard,
    /// Tagged \[D\] and neither \[P\] nor \[A\], an upper or lower bound: exact under the
    /// assumptions stated with it; past it, one of them did not hold.
    Derived,
    /// Tagged \[A\], or an expected value or statistical tolerance (a limit exceeded at a
    /// stated level α, or a prediction plus a stated tolerance).
    Approximation,
    /// The scenario's own limit (`max`, `min`, `maxDuration`, an audit's count): no formula.
    #[default]
    Given,
}

impl LimitKind {
    /// The kind of a limit computed from a prediction with this `source` tag
    /// (`[D][A][S] §3.4, §3.5`) and meaning.
    #[must_use]
    pub fn of(source: &str, meaning: crate::predict::Meaning) -> Self {
        use crate::predict::Meaning;
        if source.contains("[P]") {
            LimitKind::Hard
        } else if source.contains("[A]")
            || matches!(meaning, Meaning::Tolerance | Meaning::Expected)
        {
            LimitKind::Approximation
        } else if source.contains("[D]") {
            LimitKind::Derived
        } else {
            LimitKind::Given
        }
    }

    /// The kind of the limit of `prediction`.
    #[must_use]
    pub fn of_prediction(prediction: &Prediction) -> Self {
        Self::of(&prediction.source, prediction.meaning)
    }

    /// `hard`, `derived`, `approximation`, `given`.
    #[must_use]
    pub fn word(self) -> &'static str {
        match self {
            LimitKind::Hard => "hard",
            LimitKind::Derived => "derived",
            LimitKind::Approximation => "approximation",
            LimitKind::Given => "given",
        }
    }
}

/// The result of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// [`RESULT_VERSION`].
    pub version: u32,
    /// Interrupted or timed out.
    pub partial: bool,
    /// Where and why the run stopped early, if it did.
    #[serde(default)]
    pub stopped: Option<Stopped>,
    /// The scenario.
    pub scenario: ScenarioInfo,
    /// What ran and how it was measured.
    pub run: RunInfo,
    /// Run length (s).
    pub duration_s: f64,
    /// Per phase.
    pub phases: Vec<PhaseResult>,
    /// Per-second series.
    pub timeline: Timeline,
    /// Time to Ready over the run.
    pub ttr: LatencySummary,
    /// Orphans, duplicates, incomplete creates and lost resources at the end of the run.
    pub audit: Audit,
    /// The provider's kills, in order.
    #[serde(default)]
    pub kills: Vec<super::Kill>,
    /// The audit at the end of each phase that met its `until`.
    #[serde(default)]
    pub phase_audits: Vec<super::PhaseAudit>,
    /// Memory samples of the run's components.
    #[serde(default)]
    pub memory: Vec<crate::measure::MemorySample>,
    /// Realised poll intervals.
    pub poll: Vec<PollStats>,
    /// The resources with the most cloud calls, and why (docs/budget.md §9).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub offenders: Vec<Offender>,
    /// What each faulted share cost per resource-hour in each hold, against its prediction.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub share_costs: Vec<ShareCost>,
    /// Every prediction of the plan.
    pub predictions: Vec<Prediction>,
    /// Every assertion's verdict.
    pub verdicts: Vec<Verdict>,
    /// The provider's own counters next to the ground truth, when they were read.
    #[serde(default)]
    pub provider: Option<ProviderCheck>,
    /// Cloud calls per reconcile by kind, path and operation, when the API server's journal
    /// dated the provider's status writes (`crate::measure::per_reconcile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls_per_reconcile: Option<crate::measure::per_reconcile::PerReconcile>,
    /// The provider's API requests over the run by verb and resource, as
    /// `run.api_requests_measured_by` counted them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_requests_by: Vec<ApiRequestCount>,
    /// What Crossplane core's composite layer did, for a scenario with XR groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core: Option<super::core::CoreReport>,
}

/// The provider's own metrics, cross-checked against the mock cloud's journal and the API
/// server's count, the limiter counters that attribute reconciles beyond the nominal budget
/// (budget.md §8), and each controller's standard metrics. A counter the provider does not
/// export is `None` (`result::provider_check`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProviderCheck {
    /// Cloud calls the mock cloud journalled.
    pub journal_cloud_calls: u64,
    /// Cloud calls the provider says it made (`provider_cloud_requests_total`).
    #[serde(default)]
    pub provider_cloud_calls: Option<u64>,
    /// `limiter_reservations_total`.
    #[serde(default)]
    pub reservations: Option<u64>,
    /// `limiter_early_runs_total`: flagged passes that ran before their token's time.
    #[serde(default)]
    pub early_runs: Option<u64>,
    /// Each controller's realised concurrency over the run, where the provider reports
    /// its time spent reconciling.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub concurrency: Vec<Concurrency>,
    /// Each controller's controller-runtime and work-queue metrics.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub controllers: Vec<super::standard_metrics::ControllerMetrics>,
    /// The provider's count of its API requests (`rest_client_requests_total`) beside the
    /// API server's; `None` when it exports no such count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_requests: Option<super::standard_metrics::ApiRequestsCheck>,
}

/// A controller's realised concurrency: its mean number of busy workers over the run
/// (time spent reconciling / the run's length, by Little's law), against its workers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Concurrency {
    /// The controller (its work queue's name).
    pub controller: String,
    /// Time spent reconciling, seconds, summed over its workers.
    pub busy_s: f64,
    /// Mean busy workers over the run.
    pub mean_busy: f64,
    /// Its workers: R, or 1 for the `controller-runtime` model.
    pub workers: usize,
}

impl RunResult {
    /// Every assertion passed, no phase failed, and the run was complete.
    #[must_use]
    pub fn passed(&self) -> bool {
        !self.partial
            && self.verdicts.iter().all(|v| v.pass)
            && self.phases.iter().all(|p| p.failure.is_none())
    }

    /// `--strict`: a check the model does not cover (UNMODELED) or the run could not
    /// measure (UNMEASURED) fails the run.
    pub fn make_strict(&mut self) {
        for v in &mut self.verdicts {
            if matches!(v.outcome, Outcome::Unmodeled | Outcome::Unmeasured) {
                v.pass = false;
            }
        }
    }

    /// How many checks the model did not cover.
    #[must_use]
    pub fn unmodeled(&self) -> usize {
        self.verdicts
            .iter()
            .filter(|v| v.outcome == Outcome::Unmodeled)
            .count()
    }

    /// A headline for the top of every report: the verdict, and where and why the run
    /// stopped early.
    #[must_use]
    pub fn headline(&self) -> String {
        let failed = self.verdicts.iter().filter(|v| !v.pass).count();
        let mut failures: Vec<String> = self
            .phases
            .iter()
            .filter_map(|p| {
                Some(format!(
                    "phase {}: {}",
                    p.name,
                    p.failure.as_ref()?.headline()
                ))
            })
            .collect();
        if failed > 0 {
            failures.push(format!(
                "{failed} of {} assertions failed",
                self.verdicts.len()
            ));
        }
        match &self.stopped {
            Some(s) => format!("PARTIAL: {}", s.headline()),
            None if self.partial => "PARTIAL: measurements were lost (see notes)".to_owned(),
            None if !failures.is_empty() => format!("FAIL: {}", failures.join("; ")),
            None if self.unmodeled() > 0 => format!(
                "PASS: {} of {} assertions held, {} UNMODELED (the model does not cover them: see their notes)",
                self.verdicts.len() - self.unmodeled(),
                self.verdicts.len(),
                self.unmodeled()
            ),
            None => format!("PASS: all {} assertions held", self.verdicts.len()),
        }
    }

    /// Total throttled calls.
    #[must_use]
    pub fn throttles(&self) -> u64 {
        self.phases.iter().map(|p| p.throttles).sum()
    }
}

/// One of the resources that made the most cloud calls.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Offender {
    /// The resource's cloud name.
    pub name: String,
    /// Its cloud calls over the run.
    pub calls: u64,
    /// Its share of all cloud calls (0–1).
    #[serde(with = "crate::float")]
    pub share: f64,
    /// Why: its Synced condition's message when it is not synced, else the fault the
    /// scenario gave it, else empty.
    pub reason: String,
    /// The width of a bin of `calls_per_bin` (s).
    #[serde(default)]
    pub bin_s: f64,
    /// Its cloud calls per bin from the run's start: the report's strip chart.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls_per_bin: Vec<u32>,
}

/// What one faulted share cost in a hold, against its prediction (§9.1–§9.3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShareCost {
    /// The hold.
    pub phase: String,
    /// `group/fault`.
    pub share: String,
    /// Resources in the share.
    pub resources: u64,
    /// Observed cloud calls per resource-hour in the hold.
    #[serde(with = "crate::float")]
    pub observed_per_hour: f64,
    /// Predicted calls per resource-hour once the backoff is at its cap (or per poll).
    #[serde(with = "crate::float")]
    pub predicted_per_hour: f64,
    /// Predicted calls in a resource's first hour of failing (with the ramp).
    #[serde(with = "crate::float")]
    pub predicted_first_hour: f64,
}
