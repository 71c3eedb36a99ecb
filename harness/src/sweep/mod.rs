//! `harness sweep`: a scenario run over a grid of settings, each point a normal run with
//! its own output directory, and the frontier of what each setting costs (peak cloud calls,
//! steady calls per hour, API requests, throttles) against what it buys (time to Ready,
//! poll period, drift detection, drain after a restart), predicted and measured, with the
//! cheapest point that meets the SLOs and budgets named.
//!
//! Where to start: [`Sweep::prepare`] reads the scenario, its `sweep` section and the
//! command line's axes and constraints into a [`Sweep`] (every point is validated before
//! any runs); [`runner::run_points`] runs its points as child processes of the harness
//! binary (`harness sweep --point I`, which an Indexed Job's pod runs too);
//! [`Sweep::collect`] reads their results into a [`SweepResult`], which [`text`] and
//! [`html`] render. docs/sweep.md describes each figure and the choice.

pub mod apply;
pub mod constraint;
pub mod figure;
pub mod grid;
pub mod html;
pub mod job;
pub mod model;
pub mod remote;
pub mod result;
pub mod runner;
#[cfg(feature = "aws")]
pub mod s3;
pub mod select;
pub mod spec;
pub mod text;
pub mod values;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use constraint::{Budget, Constraint, Slo};
pub use figure::Figure;
pub use grid::{Axis, Grid};
pub use model::Point;
pub use result::{SWEEP_VERSION, SweepResult};
pub use select::Selection;

use crate::result::RunResult;
use crate::scenario::{self, Scenario, ScenarioError, Set, TimeMode};

/// Why a sweep cannot start.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The scenario file could not be read.
    #[error("cannot read {}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The scenario's `sweep` section is wrong.
    #[error(transparent)]
    Spec(#[from] spec::SpecError),
    /// Two axes vary one path.
    #[error(transparent)]
    Grid(#[from] grid::DuplicateAxis),
    /// Nothing varies.
    #[error(
        "scenario {0} has no axis: give --vary PATH=V1,V2,… (such as provider.maxReconcileRate=5,10,20) or a `sweep.vary` in the file"
    )]
    NoAxis(String),
    /// A point's settings do not make a valid scenario.
    #[error("point {index} ({label})")]
    Point {
        /// Its index.
        index: usize,
        /// Its settings.
        label: String,
        /// The scenario's problem, placed at its `--set`.
        #[source]
        source: ScenarioError,
    },
    /// A constraint or the cost names a window the runs do not measure.
    #[error(
        "{figure} is not measured: a run measures the windows 1s, 10s and those of the scenario's cloudCalls, apiRequests and steadyRate assertions ({}); add an assertion with window {}",
        measured.join(", "), figure::seconds(*window_s)
    )]
    Unmeasured {
        /// The figure.
        figure: Figure,
        /// Its window (s).
        window_s: f64,
        /// The windows measured.
        measured: Vec<String>,
    },
    /// `--point` past the grid.
    #[error("--point {index}: the grid has {len} points, expected 0 to {}", len - 1)]
    NoPoint {
        /// The index asked.
        index: usize,
        /// The grid's points.
        len: usize,
    },
}

/// What the command line gives a sweep.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `--vary`s, over the file's axes.
    pub vary: Vec<Axis>,
    /// `--set`s every point has.
    pub sets: Vec<Set>,
    /// `--slo`s, replacing the file's.
    pub slo: Vec<Constraint>,
    /// `--budget`s, replacing the file's.
    pub budget: Vec<Constraint>,
    /// `--cost`.
    pub cost: Option<Figure>,
    /// `--real-time`: keep the scenario's time instead of virtual time.
    pub real_time: bool,
}

/// A sweep ready to run: its grid, constraints and figures, every point validated.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The scenario file.
    pub file: PathBuf,
    /// The scenario's name.
    pub name: String,
    /// The axes.
    pub grid: Grid,
    /// The `--set`s every point has.
    pub sets: Vec<Set>,
    /// The SLOs, then the budgets.
    pub constraints: Vec<Constraint>,
    /// The cost the cheapest point is the least of.
    pub cost: Figure,
    /// Whether the points run in virtual time.
    pub virtual_time: bool,
    /// The figures, costs first.
    pub figures: Vec<Figure>,
}

impl Sweep {
    /// Reads scenario `file` and its `sweep` section, with `o` over them; validates every
    /// point.
    ///
    /// # Errors
    /// A [`SweepError`]: the file, its section, the axes, a point, or a figure no run
    /// measures.
    pub fn prepare(file: &Path, o: Options) -> Result<Sweep, SweepError> {
        let text = std::fs::read_to_string(file).map_err(|source| SweepError::Read {
            file: file.to_path_buf(),
            source,
        })?;
        let spec = spec::read(&text, &file.display().to_string())?;
        let grid = Grid::overlaid(&spec.grid, &Grid::new(o.vary)?);
        let base = scenario::load_with(file, &o.sets).map_err(|source| SweepError::Point {
            index: 0,
            label: "the scenario with the --sets every point has".into(),
            source,
        })?;
        if grid.is_empty() {
            return Err(SweepError::NoAxis(base.name.clone()));
        }
        let pick = |flags: Vec<Constraint>, file: Vec<Constraint>, side| {
            if !flags.is_empty() {
                flags
            } else if !file.is_empty() {
                file
            } else {
                constraint::from_assertions(&base)
                    .into_iter()
                    .filter(|c| c.side() == side)
                    .collect()
            }
        };
        let mut constraints = pick(o.slo, spec.slo, figure::Side::Benefit);
        constraints.extend(pick(o.budget, spec.budget, figure::Side::Cost));
        let cost = select::cost_figure(o.cost.or(spec.cost), &constraints);
        let windows = crate::predict::windows(&base);
        for f in constraints.iter().map(|c| c.figure).chain([cost]) {
            if let Figure::CloudCalls { window_s } | Figure::ApiRequests { window_s } = f
                && !windows.iter().any(|w| (w - window_s).abs() < 1e-9)
            {
                return Err(SweepError::Unmeasured {
                    figure: f,
                    window_s,
                    measured: windows.iter().map(|w| figure::seconds(*w)).collect(),
                });
            }
        }
        let virtual_time = base.time == TimeMode::Virtual
            || (!o.real_time
                && base.target == scenario::Target::Embedded
                && base.profile.is_none());
        let sweep = Sweep {
            file: file.to_path_buf(),
            name: base.name.clone(),
            grid,
            sets: o.sets,
            constraints,
            cost,
            virtual_time,
            figures: Figure::defaults(&windows),
        };
        for index in 0..sweep.grid.len() {
            sweep.scenario(index)?;
        }
        Ok(sweep)
    }

    /// Point `index`'s settings on the grid.
    #[must_use]
    pub fn point_sets(&self, index: usize) -> Vec<Set> {
        self.grid.point(index).unwrap_or_default()
    }

    /// The scenario of point `index`: the file with every `--set`, then the point's, in
    /// virtual time when the sweep is.
    ///
    /// # Errors
    /// [`SweepError::NoPoint`] past the grid; [`SweepError::Point`] with the scenario's
    /// problem.
    pub fn scenario(&self, index: usize) -> Result<Scenario, SweepError> {
        let point = self.grid.point(index).ok_or(SweepError::NoPoint {
            index,
            len: self.grid.len(),
        })?;
        let sets: Vec<Set> = self.sets.iter().chain(&point).cloned().collect();
        let mut s = scenario::load_with(&self.file, &sets).map_err(|source| SweepError::Point {
            index,
            label: grid::label(&point),
            source,
        })?;
        if self.virtual_time {
            s.time = TimeMode::Virtual;
        }
        Ok(s)
    }

    /// The sweep's result from the points' output directories under `out`
    /// (`points/NNN/result.json`); a point without a result is reported failed with the
    /// end of its log (`points/NNN/log.txt`).
    ///
    /// # Errors
    /// A point's scenario no longer valid (the file changed since the points ran).
    pub fn collect(&self, out: &Path, wall_s: Option<f64>) -> Result<SweepResult, SweepError> {
        self.collect_with(out, wall_s, &BTreeMap::new())
    }

    /// As [`Sweep::collect`], with the points of `missing` reported failed for the reason
    /// it gives, whatever their directories hold (the points whose results a collection
    /// from S3 did not find).
    ///
    /// # Errors
    /// As [`Sweep::collect`].
    pub fn collect_with(
        &self,
        out: &Path,
        wall_s: Option<f64>,
        missing: &BTreeMap<usize, String>,
    ) -> Result<SweepResult, SweepError> {
        let mut points = Vec::with_capacity(self.grid.len());
        for index in 0..self.grid.len() {
            let s = self.scenario(index)?;
            let dir = out.join(model::point_dir(index));
            let run = match missing.get(&index) {
                Some(reason) => Err(reason.clone()),
                None => read_result(&dir),
            };
            points.push(Point::new(
                index,
                &self.point_sets(index),
                &s,
                &self.figures,
                run.as_ref().map_err(Clone::clone),
            ));
        }
        let selection = select::select(&points, &self.constraints, self.cost);
        Ok(SweepResult {
            version: SWEEP_VERSION,
            scenario: self.name.clone(),
            file: self.file.display().to_string(),
            axes: self.grid.axes.clone(),
            sets: self.sets.iter().map(ToString::to_string).collect(),
            time: if self.virtual_time { "virtual" } else { "real" }.into(),
            figures: self.figures.clone(),
            constraints: self.constraints.clone(),
            points,
            selection,
            wall_s,
        })
    }
}

/// The result in a point's directory, or why there is none: the end of its log.
fn read_result(dir: &Path) -> Result<RunResult, String> {
    let path = dir.join("result.json");
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            RunResult::from_json(&text).map_err(|e| format!("{} is no result: {e}", path.display()))
        }
        Err(_) => {
            let log = std::fs::read_to_string(dir.join(runner::LOG)).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(4).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            Err(if tail.is_empty() {
                format!("no result in {}", dir.display())
            } else {
                format!("no result in {}: {}", dir.display(), tail.join(" / "))
            })
        }
    }
}
