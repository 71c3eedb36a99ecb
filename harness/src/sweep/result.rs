//! `sweep.json`: every point, the constraints, and the choice they make.

use serde::{Deserialize, Serialize};

use super::constraint::Constraint;
use super::figure::Figure;
use super::grid::Axis;
use super::model::Point;
use super::select::Selection;

/// The version of `sweep.json`; bump on any incompatible change.
pub const SWEEP_VERSION: u32 = 1;

/// The sweep's document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepResult {
    /// [`SWEEP_VERSION`].
    pub version: u32,
    /// The scenario's name.
    pub scenario: String,
    /// The scenario file.
    pub file: String,
    /// The axes, the first varying slowest.
    pub axes: Vec<Axis>,
    /// The `--set`s every point has.
    pub sets: Vec<String>,
    /// `virtual` or `real`.
    pub time: String,
    /// The figures, costs first.
    pub figures: Vec<Figure>,
    /// The SLOs and budgets.
    pub constraints: Vec<Constraint>,
    /// Every point, in index order.
    pub points: Vec<Point>,
    /// The choice the constraints make.
    pub selection: Selection,
    /// The sweep's wall time (s), when it ran the points itself.
    #[serde(default)]
    pub wall_s: Option<f64>,
}
