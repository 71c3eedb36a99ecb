//! The choice: the points that meet every SLO and budget on their measured figures, the
//! cheapest of them by the cost figure, and, when none does, which constraint binds.
//!
//! # Semantics
//!
//! - A point is feasible when its run ended (a complete result) and every constraint holds
//!   on its measured figure; a figure its run did not measure meets no constraint. With no
//!   constraint at all, a point is feasible when its run passed: every assertion of the
//!   scenario held and no phase failed.
//! - The cheapest is the feasible point with the least measured cost figure (a point that
//!   did not measure it ranks last); ties go to the lower index, the earlier value of the
//!   first axis.
//! - The predicted choice applies the same rule to the predicted figures of the points the
//!   model covers (no UNMODELED condition), with the constraints that have a prediction.
//! - When no point is feasible, a constraint binds if some point that ran fails it alone:
//!   relaxing it would admit that point.

use serde::{Deserialize, Serialize};

use super::constraint::Constraint;
use super::figure::Figure;
use super::model::Point;

/// What a constraint rules out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ruling {
    /// The constraint, as text.
    pub constraint: String,
    /// The indices of the points that ran and fail it.
    pub fails: Vec<usize>,
    /// The indices of the points that ran and fail it alone.
    pub fails_alone: Vec<usize>,
}

/// The choice the constraints make.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Selection {
    /// The figure the cheapest point is the least of.
    pub cost: Figure,
    /// The feasible points' indices.
    pub feasible: Vec<usize>,
    /// The cheapest feasible point's index.
    pub cheapest: Option<usize>,
    /// The cheapest point by the predictions.
    pub predicted_cheapest: Option<usize>,
    /// Each constraint's points ruled out.
    pub rulings: Vec<Ruling>,
    /// The constraints that bind when no point is feasible.
    pub binding: Vec<String>,
    /// The points that wrote no complete result.
    pub failed: Vec<usize>,
}

/// The least of `points` by `key` (missing last, ties to the first).
fn least(points: &[&Point], key: impl Fn(&Point) -> Option<f64>) -> Option<usize> {
    points
        .iter()
        .min_by(|a, b| {
            let (ka, kb) = (
                key(a).unwrap_or(f64::INFINITY),
                key(b).unwrap_or(f64::INFINITY),
            );
            ka.total_cmp(&kb).then(a.index.cmp(&b.index))
        })
        .map(|p| p.index)
}

/// The choice among `points` under `constraints`, cheapest by `cost`.
#[must_use]
pub fn select(points: &[Point], constraints: &[Constraint], cost: Figure) -> Selection {
    let ran: Vec<&Point> = points.iter().filter(|p| p.ran()).collect();
    let meets = |p: &Point, c: &Constraint| c.holds(p.value(c.figure).measured);
    let feasible: Vec<&Point> = ran
        .iter()
        .copied()
        .filter(|p| {
            if constraints.is_empty() {
                matches!(p.status, super::model::Status::Ran { passed: true })
            } else {
                constraints.iter().all(|c| meets(p, c))
            }
        })
        .collect();
    let cheapest = least(&feasible, |p| p.value(cost).measured);
    let modeled: Vec<&Point> = points
        .iter()
        .filter(|p| p.unmodeled.is_empty())
        .filter(|p| {
            constraints.iter().all(|c| {
                let v = p.value(c.figure).predicted;
                v.is_none() || c.holds(v)
            })
        })
        .collect();
    let predicted_cheapest = least(&modeled, |p| p.value(cost).predicted);
    let rulings: Vec<Ruling> = constraints
        .iter()
        .map(|c| {
            let fails: Vec<usize> = ran
                .iter()
                .filter(|p| !meets(p, c))
                .map(|p| p.index)
                .collect();
            let fails_alone = ran
                .iter()
                .filter(|p| !meets(p, c))
                .filter(|p| constraints.iter().filter(|o| !meets(p, o)).count() == 1)
                .map(|p| p.index)
                .collect();
            Ruling {
                constraint: c.to_string(),
                fails,
                fails_alone,
            }
        })
        .collect();
    let binding = if feasible.is_empty() {
        rulings
            .iter()
            .filter(|r| !r.fails_alone.is_empty())
            .map(|r| r.constraint.clone())
            .collect()
    } else {
        Vec::new()
    };
    Selection {
        cost,
        feasible: feasible.iter().map(|p| p.index).collect(),
        cheapest,
        predicted_cheapest,
        rulings,
        binding,
        failed: points
            .iter()
            .filter(|p| !p.ran())
            .map(|p| p.index)
            .collect(),
    }
}

/// The cost figure: `--cost`, else the first budget's figure, else `cloudCalls.10s`.
#[must_use]
pub fn cost_figure(asked: Option<Figure>, constraints: &[Constraint]) -> Figure {
    asked
        .or_else(|| {
            constraints
                .iter()
                .find(|c| c.side() == super::figure::Side::Cost)
                .map(|c| c.figure)
        })
        .unwrap_or(Figure::CloudCalls { window_s: 10.0 })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::sweep::constraint::{Budget, Slo};
    use crate::sweep::model::{Status, Value};

    const PEAK: Figure = Figure::CloudCalls { window_s: 10.0 };
    const TTR: Figure = Figure::TimeToReady { quantile: 0.99 };

    /// A point at R = `r` that measured `peak` calls and a p99 of `ttr` seconds, predicted
    /// 10 % above.
    fn point(index: usize, r: u32, peak: f64, ttr: f64) -> Point {
        let v = |m: f64| Value {
            predicted: Some(m * 1.1),
            measured: Some(m),
        };
        Point {
            index,
            sets: vec![format!("provider.maxReconcileRate={r}")],
            dir: String::new(),
            status: Status::Ran { passed: true },
            figures: BTreeMap::from([(PEAK.to_string(), v(peak)), (TTR.to_string(), v(ttr))]),
            unmodeled: Vec::new(),
            wall_s: None,
        }
    }

    fn grid() -> Vec<Point> {
        vec![
            point(0, 5, 150.0, 400.0),
            point(1, 10, 200.0, 200.0),
            point(2, 20, 300.0, 100.0),
            point(3, 50, 600.0, 40.0),
        ]
    }

    fn constraints(slo: &str, budget: &str) -> Vec<Constraint> {
        vec![
            slo.parse::<Slo>().unwrap().0,
            budget.parse::<Budget>().unwrap().0,
        ]
    }

    #[test]
    fn the_cheapest_point_that_meets_both_is_chosen() {
        let c = constraints("timeToReady.p99<=5m", "cloudCalls.10s<=400");
        let s = select(&grid(), &c, cost_figure(None, &c));
        assert_eq!(s.cost, PEAK);
        assert_eq!(s.feasible, [1, 2]);
        assert_eq!(s.cheapest, Some(1));
        // Predicted 10 % above: R = 10 predicts 220 s and 220 calls, also within.
        assert_eq!(s.predicted_cheapest, Some(1));
        assert!(s.binding.is_empty());
        assert_eq!(s.rulings[0].fails, [0]);
        assert_eq!(s.rulings[1].fails, [3]);
    }

    #[test]
    fn with_none_feasible_each_constraint_that_alone_rules_out_a_point_binds() {
        let c = constraints("timeToReady.p99<=1m", "cloudCalls.10s<=250");
        let s = select(&grid(), &c, PEAK);
        assert_eq!(s.cheapest, None);
        assert!(s.feasible.is_empty());
        // R = 5, 10 fail only the SLO; R = 50 only the budget; R = 20 both.
        assert_eq!(s.rulings[0].fails_alone, [0, 1]);
        assert_eq!(s.rulings[1].fails_alone, [3]);
        assert_eq!(s.binding, ["timeToReady.p99<=1m", "cloudCalls.10s<=250"]);
    }

    #[test]
    fn a_failed_or_unmodeled_point_is_never_chosen_on_what_it_lacks() {
        let mut points = grid();
        points[1].status = Status::Failed {
            reason: "exit status 2".into(),
        };
        points[2].unmodeled = vec!["the coupled regime".into()];
        let c = constraints("timeToReady.p99<=5m", "cloudCalls.10s<=400");
        let s = select(&points, &c, PEAK);
        assert_eq!(s.failed, [1]);
        assert_eq!(s.cheapest, Some(2), "unmodeled is still measured");
        // Point 1 failed to run but its predictions stand; point 2 is out of the model.
        assert_eq!(s.predicted_cheapest, Some(1));
    }

    #[test]
    fn without_constraints_the_scenarios_assertions_decide() {
        let mut points = grid();
        points[0].status = Status::Ran { passed: false };
        let s = select(&points, &[], PEAK);
        assert_eq!(s.feasible, [1, 2, 3]);
        assert_eq!(s.cheapest, Some(1));
    }
}
