//! The sweep's text report: a table of the points' settings and figures (measured, and
//! predicted in brackets), then the choice, or why there is none.

use std::fmt::Write as _;

use super::figure::Figure;
use super::model::{Point, Status};
use super::result::SweepResult;

/// The figures the table shows: the constraints', the cost, and the headline figures,
/// those that any point has, in the sweep's order.
#[must_use]
pub fn shown(r: &SweepResult) -> Vec<Figure> {
    let headline = [
        Figure::CloudCalls { window_s: 10.0 },
        Figure::SteadyCallsPerHour,
        Figure::Throttles,
        Figure::TimeToReady { quantile: 0.99 },
        Figure::DriftDetection,
        Figure::DrainTime,
    ];
    r.figures
        .iter()
        .copied()
        .filter(|f| {
            headline.contains(f)
                || *f == r.selection.cost
                || r.constraints.iter().any(|c| c.figure == *f)
        })
        .filter(|f| {
            r.points.iter().any(|p| {
                let v = p.value(*f);
                v.measured.is_some() || v.predicted.is_some()
            })
        })
        .collect()
}

/// A point's status in a word.
#[must_use]
pub fn status_word(p: &Point) -> &'static str {
    match p.status {
        Status::Ran { passed: true } => "PASS",
        Status::Ran { passed: false } => "FAIL",
        Status::Partial { .. } => "PARTIAL",
        Status::Failed { .. } => "ERROR",
    }
}

/// `measured (predicted)`.
fn cell(f: Figure, p: &Point) -> String {
    let v = p.value(f);
    match v.predicted {
        Some(_) => format!("{} ({})", f.show(v.measured), f.show(v.predicted)),
        None => f.show(v.measured),
    }
}

/// The points named by index, with their settings.
#[must_use]
pub fn names(r: &SweepResult, indices: &[usize]) -> String {
    indices
        .iter()
        .map(|&i| match r.points.get(i) {
            Some(p) => format!("{i} ({})", p.label()),
            None => i.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The sentences of the choice: the cheapest point, the model's, or what binds.
#[must_use]
pub fn choice(r: &SweepResult) -> Vec<String> {
    let sel = &r.selection;
    let mut out = Vec::new();
    let against = if r.constraints.is_empty() {
        "every assertion of the scenario".to_owned()
    } else {
        r.constraints
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" and ")
    };
    match sel.cheapest.and_then(|i| r.points.get(i)) {
        Some(p) => {
            let v = p.value(sel.cost);
            out.push(format!(
                "cheapest point meeting {against}: point {} ({}), {} {} measured{}",
                p.index,
                p.label(),
                sel.cost,
                sel.cost.show(v.measured),
                v.predicted
                    .map(|x| format!(", {} predicted", sel.cost.show(Some(x))))
                    .unwrap_or_default()
            ));
        }
        None => {
            out.push(format!("no point meets {against}"));
            for ruling in &sel.rulings {
                if !ruling.fails.is_empty() {
                    out.push(format!(
                        "  {} rules out {}",
                        ruling.constraint,
                        names(r, &ruling.fails)
                    ));
                }
            }
            if sel.binding.is_empty() {
                out.push("  no constraint binds alone: every point that ran fails more than one, or none ran".into());
            }
            for b in &sel.binding {
                let ruling = sel.rulings.iter().find(|x| &x.constraint == b);
                out.push(format!(
                    "  {b} binds: relaxing it admits {}",
                    ruling.map_or_else(String::new, |x| names(r, &x.fails_alone))
                ));
            }
        }
    }
    match (sel.predicted_cheapest, sel.cheapest) {
        (Some(p), Some(m)) if p == m => out.push("the model predicts the same choice".into()),
        (Some(p), _) => out.push(format!("the model predicts point {}", names(r, &[p]))),
        (None, _) => out.push("the model predicts no point meets them".into()),
    }
    if !sel.failed.is_empty() {
        out.push(format!(
            "without a complete result (not chosen): {}",
            names(r, &sel.failed)
        ));
    }
    out
}

/// The text report.
#[must_use]
pub fn render(r: &SweepResult) -> String {
    let figures = shown(r);
    let mut header: Vec<String> = vec![String::new(), "#".into()];
    header.extend(r.axes.iter().map(|a| a.path.clone()));
    header.push("run".into());
    header.extend(figures.iter().map(|f| format!("{f} {}", f.unit())));
    let mut rows = vec![header];
    for p in &r.points {
        let mark = if r.selection.cheapest == Some(p.index) {
            ">"
        } else if r.selection.feasible.contains(&p.index) {
            "*"
        } else {
            ""
        };
        let mut row = vec![mark.to_owned(), p.index.to_string()];
        row.extend(
            p.sets
                .iter()
                .map(|s| s.split_once('=').map_or(s.clone(), |(_, v)| v.to_owned())),
        );
        let word = status_word(p);
        row.push(if p.unmodeled.is_empty() {
            word.to_owned()
        } else {
            format!("{word} UNMODELED")
        });
        row.extend(figures.iter().map(|&f| cell(f, p)));
        rows.push(row);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut o = String::new();
    let _ = writeln!(
        o,
        "sweep {}: {} points, {} time{}",
        r.scenario,
        r.points.len(),
        r.time,
        r.wall_s
            .map(|w| format!(", {}", super::figure::seconds(w)))
            .unwrap_or_default()
    );
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        let _ = writeln!(o, "{}", line.join("  ").trim_end());
    }
    let _ = writeln!(
        o,
        "measured (predicted); > the cheapest point meeting every constraint, * the others that do"
    );
    for line in choice(r) {
        let _ = writeln!(o, "{line}");
    }
    for p in &r.points {
        if let Status::Failed { reason } | Status::Partial { reason } = &p.status {
            let _ = writeln!(o, "point {} ({}): {reason}", p.index, p.label());
        }
        for why in &p.unmodeled {
            let _ = writeln!(o, "point {} UNMODELED: {why}", p.index);
        }
    }
    o
}
