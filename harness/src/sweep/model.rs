//! A point of a sweep as `sweep.json` holds it: its settings, predicted and measured
//! figures, and how its run ended.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::figure::Figure;
use crate::result::{Outcome, RunResult};
use crate::scenario::Scenario;

/// One figure of a point.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Value {
    /// What docs/budget.md's formulas predict with the point's settings.
    pub predicted: Option<f64>,
    /// What the point's run measured.
    pub measured: Option<f64>,
}

/// How a point's run ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum Status {
    /// It ran to its end: `passed` when every assertion held and no phase failed.
    Ran {
        /// Every assertion held and no phase failed.
        passed: bool,
    },
    /// It was interrupted or a phase timed out: its measurements are partial, and it is
    /// not among the feasible points.
    Partial {
        /// Why, as the result's headline says.
        reason: String,
    },
    /// It wrote no result.
    Failed {
        /// Why: the exit status and the end of its log.
        reason: String,
    },
}

/// One point of the grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Point {
    /// Its index in the grid (the Indexed Job's completion index).
    pub index: usize,
    /// Its settings, `PATH=VALUE`, one per axis.
    pub sets: Vec<String>,
    /// Its output directory, relative to the sweep's.
    pub dir: String,
    /// How its run ended.
    #[serde(flatten)]
    pub status: Status,
    /// Every figure, by name.
    pub figures: BTreeMap<String, Value>,
    /// Why the model does not cover it: the plan's UNMODELED conditions and the checks its
    /// run found UNMODELED. Such a point is drawn apart and left out of the predicted
    /// choice.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmodeled: Vec<String>,
    /// The wall time its run took (s).
    #[serde(default)]
    pub wall_s: Option<f64>,
}

impl Point {
    /// The point `index` with settings `sets`, its predictions from `s` (the scenario with
    /// the point's settings) and its measurements from `run` when it wrote a result.
    #[must_use]
    pub fn new(
        index: usize,
        sets: &[crate::scenario::Set],
        s: &Scenario,
        figures: &[Figure],
        run: Result<&RunResult, String>,
    ) -> Point {
        let plan = crate::predict::plan(s);
        let mut unmodeled: Vec<String> = plan
            .all()
            .filter(|p| p.id.contains("/unmodeled/"))
            .map(|p| p.note.clone().unwrap_or_else(|| p.what.clone()))
            .collect();
        let values = figures
            .iter()
            .map(|&f| {
                let from_gaps = matches!(f, Figure::PollPeriod | Figure::DriftDetection);
                let measured = run
                    .as_ref()
                    .ok()
                    .filter(|_| !from_gaps || super::values::one_read_per_poll(s))
                    .and_then(|r| super::values::measured(r, f));
                let value = Value {
                    predicted: super::values::predicted(s, &plan, f),
                    measured,
                };
                (f.to_string(), value)
            })
            .collect();
        let (status, wall_s) = match run {
            Ok(r) => {
                for v in r
                    .verdicts
                    .iter()
                    .filter(|v| v.outcome == Outcome::Unmodeled)
                {
                    unmodeled.push(format!(
                        "{}: {}",
                        v.name,
                        v.note.as_deref().unwrap_or("UNMODELED")
                    ));
                }
                let status = if r.partial {
                    Status::Partial {
                        reason: r.headline(),
                    }
                } else {
                    Status::Ran { passed: r.passed() }
                };
                (status, Some(r.run.time.wall_s))
            }
            Err(reason) => (Status::Failed { reason }, None),
        };
        Point {
            index,
            sets: sets.iter().map(ToString::to_string).collect(),
            dir: point_dir(index),
            status,
            figures: values,
            unmodeled,
            wall_s,
        }
    }

    /// Its label: its settings joined by `, `.
    #[must_use]
    pub fn label(&self) -> String {
        self.sets.join(", ")
    }

    /// The value of figure `f`.
    #[must_use]
    pub fn value(&self, f: Figure) -> Value {
        self.figures
            .get(&f.to_string())
            .copied()
            .unwrap_or_default()
    }

    /// Whether its run ended with measurements that count: complete, with a result.
    #[must_use]
    pub fn ran(&self) -> bool {
        matches!(self.status, Status::Ran { .. })
    }
}

/// The directory of point `index` under the sweep's: `points/007`.
#[must_use]
pub fn point_dir(index: usize) -> String {
    format!("points/{index:03}")
}
