//! A/B comparison of two results: calls per phase by action and by operation, calls per
//! reconcile by kind, path and operation, peak windowed rates, time-to-Ready quantiles,
//! throttles and API requests; a regression is a rise past a threshold.
//!
//! # Semantics
//! A comparison is only as good as its two runs, so [`compare`] first says whether they can
//! be compared at all ([`Problem`]): NEW must be complete and pass its assertions, OLD must be
//! complete, both must put the provider through the same workload (groups, phases, cloud,
//! assertions: [`crate::result::workload`]; the provider settings may differ, that is the
//! point of an A/B), and every metric must exist in both. The command exits 3 when any of
//! these fails, 1 on a regression, 0 otherwise.
//!
//! Runs whose settings differ (R, the poll interval, jitter, model, backoff, buckets per
//! scope, and what follows from them: the API client's limits, SDK attempts) compare as a
//! settings change: the header names each changed setting, every row is the effect of the
//! change, and only a worse use of a budget (observed ÷ limit of an assertion with an upper
//! limit, `budget use NAME`) or a slower time to Ready gates as a regression: more calls per
//! window after raising R is the change working, not a regression.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::predict::fmt_num;
use crate::result::RunResult;

mod metrics;
mod render;

use metrics::{
    XR_TTR, budget_use, by_operation, metrics, operation_metrics, ops, per_reconcile_metrics,
    settings_changed,
};
pub use render::{per_reconcile_changes, render};

/// One compared metric (for every metric here, higher is worse).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// What.
    pub metric: String,
    /// Old value (None: the old run does not have it).
    pub old: Option<f64>,
    /// New value (None: the new run does not have it).
    pub new: Option<f64>,
    /// Past the threshold.
    pub regression: bool,
}

impl Row {
    /// Change in percent of the old value; ∞ for a rise from 0; None when a side is missing.
    #[must_use]
    pub fn change_pct(&self) -> Option<f64> {
        let (o, n) = (self.old?, self.new?);
        Some(if o == 0.0 {
            if n > 0.0 { f64::INFINITY } else { 0.0 }
        } else {
            (n - o) / o * 100.0
        })
    }
}

/// Why two results cannot be compared honestly.
#[derive(Clone, Debug, PartialEq)]
pub enum Problem {
    /// The new run stopped early or lost measurements.
    NewPartial(String),
    /// The new run failed assertions.
    NewFailed(Vec<String>),
    /// The old run stopped early or lost measurements.
    OldPartial(String),
    /// The runs put the provider through different workloads: the lines that differ.
    WorkloadDiffers {
        /// Lines only the old run has.
        old_only: Vec<String>,
        /// Lines only the new run has.
        new_only: Vec<String>,
    },
    /// Metrics that only one run has.
    MissingMetrics(Vec<String>),
}

impl Problem {
    fn text(&self) -> String {
        match self {
            Problem::NewPartial(why) => format!("NEW is partial: {why}"),
            Problem::NewFailed(names) => {
                format!(
                    "NEW failed {} assertion(s): {}",
                    names.len(),
                    names.join(", ")
                )
            }
            Problem::OldPartial(why) => format!("OLD is partial: {why}"),
            Problem::WorkloadDiffers { old_only, new_only } => {
                let mut t =
                    "the runs have different workloads (groups, phases, cloud or assertions)"
                        .to_owned();
                for l in old_only {
                    let _ = write!(t, "\n    OLD: {l}");
                }
                for l in new_only {
                    let _ = write!(t, "\n    NEW: {l}");
                }
                t
            }
            Problem::MissingMetrics(m) => {
                format!(
                    "{} metric(s) exist in one run only: {}",
                    m.len(),
                    m.join(", ")
                )
            }
        }
    }
}

/// One side of the comparison, for the header.
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    /// `name (file)`.
    pub scenario: String,
    /// The provider settings, in one line.
    pub settings: String,
    /// The `--set`s, joined, or `none`.
    pub overrides: String,
    /// The commit, or `unknown`.
    pub commit: String,
    /// The harness build's features (`features: aws`), or `default`.
    pub build: String,
    /// The start time, or `unknown`.
    pub started: String,
    /// The run's headline (PASS, FAIL, PARTIAL and why).
    pub outcome: String,
}

impl Side {
    fn of(r: &RunResult) -> Side {
        let st = &r.scenario.settings;
        Side {
            scenario: format!("{} ({})", r.scenario.name, r.scenario.file),
            settings: format!(
                "{} R={} poll {}s ±{}% min {}s",
                st.rate_limit_model,
                st.max_reconcile_rate,
                fmt_num(st.poll_interval_s),
                st.poll_jitter_percent,
                fmt_num(st.min_poll_interval_s)
            ),
            overrides: if r.scenario.overrides.is_empty() {
                "none".to_owned()
            } else {
                r.scenario.overrides.join(" ")
            },
            commit: r.run.commit.clone().unwrap_or_else(|| "unknown".to_owned()),
            build: r
                .run
                .features_label()
                .unwrap_or_else(|| "default".to_owned()),
            started: r
                .run
                .started_at
                .clone()
                .unwrap_or_else(|| "unknown".to_owned()),
            outcome: r.headline(),
        }
    }
}

/// The comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The baseline.
    pub old: Side,
    /// The candidate.
    pub new: Side,
    /// Why the two cannot be compared (empty: they can).
    pub problems: Vec<Problem>,
    /// Every metric of either run, sorted (empty when the workloads differ).
    pub rows: Vec<Row>,
    /// The settings that differ, `name: old → new`.
    pub settings_changed: Vec<String>,
    /// The threshold (percent).
    pub max_regression_pct: f64,
}

impl Comparison {
    /// The rows that regressed.
    pub fn regressions(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.regression)
    }

    /// Whether the two runs can be compared (no [`Problem`]).
    #[must_use]
    pub fn comparable(&self) -> bool {
        self.problems.is_empty()
    }
}

fn partial_reason(r: &RunResult) -> Option<String> {
    match &r.stopped {
        Some(s) => Some(s.headline()),
        None if r.partial => Some("measurements were lost (see the result's notes)".to_owned()),
        None => None,
    }
}

/// Compares `old` with `new`. A metric regresses when it rises by more than
/// `max_regression_pct` percent (any rise from 0 counts).
#[must_use]
pub fn compare(old: &RunResult, new: &RunResult, max_regression_pct: f64) -> Comparison {
    let mut problems = Vec::new();
    if let Some(why) = partial_reason(new) {
        problems.push(Problem::NewPartial(why));
    }
    let failed: Vec<String> = new
        .verdicts
        .iter()
        .filter(|v| !v.pass)
        .map(|v| v.name.clone())
        .collect();
    if !failed.is_empty() {
        problems.push(Problem::NewFailed(failed));
    }
    if let Some(why) = partial_reason(old) {
        problems.push(Problem::OldPartial(why));
    }
    let (wo, wn) = (&old.scenario.workload, &new.scenario.workload);
    let old_only: Vec<String> = wo.iter().filter(|l| !wn.contains(l)).cloned().collect();
    let new_only: Vec<String> = wn.iter().filter(|l| !wo.contains(l)).cloned().collect();
    let same_workload = old_only.is_empty() && new_only.is_empty();
    if !same_workload {
        problems.push(Problem::WorkloadDiffers { old_only, new_only });
    }
    let changed = settings_changed(old, new);
    let mut rows = Vec::new();
    if same_workload {
        let ops = ops(old, new);
        let by_op = by_operation(old, new);
        let (mut a, mut b) = (metrics(old, &ops, &by_op), metrics(new, &ops, &by_op));
        for [x, y] in [operation_metrics(old, new), per_reconcile_metrics(old, new)] {
            a.extend(x);
            b.extend(y);
        }
        if !changed.is_empty() {
            a.extend(budget_use(old));
            b.extend(budget_use(new));
        }
        // An XR time to Ready only one run has (the other's XRs never read Ready: the
        // `core XRs not Ready` row says so) is not a missing measurement.
        let both = |k: &String, other: &BTreeMap<String, f64>| {
            !k.starts_with(XR_TTR) || other.contains_key(k)
        };
        let b_keys = b.clone();
        a.retain(|k, _| both(k, &b_keys));
        let a_keys = a.clone();
        b.retain(|k, _| both(k, &a_keys));
        let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        let mut missing = Vec::new();
        for k in keys {
            let row = Row {
                metric: k.clone(),
                old: a.get(k).copied(),
                new: b.get(k).copied(),
                regression: false,
            };
            // A settings change gates on budget use and time to Ready: its other rows are
            // its effect.
            let gated = changed.is_empty() || k.starts_with("budget use ") || k.starts_with("ttr ");
            let regression = match (row.old, row.new, row.change_pct()) {
                (Some(o), Some(n), Some(c)) => gated && n > o && c > max_regression_pct,
                _ => {
                    missing.push(k.clone());
                    false
                }
            };
            rows.push(Row { regression, ..row });
        }
        if !missing.is_empty() {
            problems.push(Problem::MissingMetrics(missing));
        }
    }
    Comparison {
        old: Side::of(old),
        new: Side::of(new),
        problems,
        rows,
        settings_changed: changed,
        max_regression_pct,
    }
}
