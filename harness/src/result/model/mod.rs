//! The versioned result document: what `--out` writes as JSON and what every report and
//! `compare` read.

mod phase;
mod run;
mod scenario;
mod stop;
mod verdict;

pub use phase::{Peak, PhaseResult, Timeline};
pub use run::{ApiCount, ApiRequestCount, Dropped, RunInfo, RunTarget, ServerThrottling, TimeInfo};
pub use scenario::{ScenarioInfo, SettingsInfo};
use serde::{Deserialize, Serialize};
pub use stop::{Signal, StopCause, Stopped};
pub use verdict::{LimitKind, Outcome, Verdict};

use crate::measure::{Audit, LatencySummary, PollStats};
use crate::predict::Prediction;

/// The result format's version; bump on any incompatible change.
pub const RESULT_VERSION: u32 = 2;

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
    /// `result.json`'s text. The binary writes and reads results through these two rather
    /// than through serde_json's generic functions, so that their code is compiled once,
    /// here, and not a second time in the binary.
    ///
    /// # Errors
    /// serde_json's, which a result's types do not give (no map has keys that are not
    /// strings).
    pub fn to_json(&self) -> serde_json::Result<String> {
        serde_json::to_string_pretty(self)
    }

    /// A result read from `result.json`'s text.
    ///
    /// # Errors
    /// serde_json's, when the text is not JSON or not a result of this version's shape.
    pub fn from_json(text: &str) -> serde_json::Result<Self> {
        serde_json::from_str(text)
    }

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

    /// Verdicts that could not be judged because what they read was not measured.
    #[must_use]
    pub fn unmeasured(&self) -> usize {
        self.verdicts
            .iter()
            .filter(|v| v.outcome == Outcome::Unmeasured)
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
            None if self.unmodeled() + self.unmeasured() > 0 => {
                let (unmodeled, unmeasured) = (self.unmodeled(), self.unmeasured());
                let mut aside = Vec::new();
                if unmodeled > 0 {
                    aside.push(format!(
                        "{unmodeled} UNMODELED (the model does not cover them: see their notes)"
                    ));
                }
                if unmeasured > 0 {
                    aside.push(format!(
                        "{unmeasured} UNMEASURED (what they read was not there to read: see their notes)"
                    ));
                }
                format!(
                    "PASS: {} of {} assertions held, {}",
                    self.verdicts.len() - unmodeled - unmeasured,
                    self.verdicts.len(),
                    aside.join(", ")
                )
            }
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
