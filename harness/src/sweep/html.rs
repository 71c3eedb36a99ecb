//! `sweep.html`: the frontier charts (each cost against each benefit, predicted as a line
//! and measured as marks, the budget and the SLO as lines), the choice, and every point's
//! figures with a link to its own report. Self-contained: inline SVG and styles, no
//! scripts.

use std::fmt::Write as _;

use super::constraint::Constraint;
use super::figure::{Figure, Side};
use super::model::Status;
use super::result::SweepResult;
use crate::report::{self, ChartLimit, Scatter, ScatterPoint, xml_escape as esc};

const EXTRA_STYLE: &str = ".charts{display:flex;flex-wrap:wrap;gap:8px}.charts svg{border:1px solid #eee}.wide{overflow-x:auto}";

/// Whether any point has a value of `f` (`measured` only, or either).
fn has(r: &SweepResult, f: Figure, measured_only: bool) -> bool {
    r.points.iter().any(|p| {
        let v = p.value(f);
        v.measured.is_some_and(|m| m > 0.0) || (!measured_only && v.predicted.is_some())
    })
}

/// The figures on the charts' axes: the cost and the constrained figures first, then the
/// headline ones, each once, those some point has.
fn chart_figures(r: &SweepResult, side: Side) -> Vec<Figure> {
    let mut wanted: Vec<Figure> = Vec::new();
    if side == Side::Cost {
        wanted.push(r.selection.cost);
    }
    wanted.extend(
        r.constraints
            .iter()
            .map(|c| c.figure)
            .filter(|f| f.side() == side),
    );
    let api = r
        .figures
        .iter()
        .copied()
        .find(|f| matches!(f, Figure::ApiRequests { .. }));
    match side {
        Side::Cost => wanted.extend(
            [
                Some(Figure::CloudCalls { window_s: 10.0 }),
                Some(Figure::SteadyCallsPerHour),
                api,
                Some(Figure::Throttles),
            ]
            .into_iter()
            .flatten(),
        ),
        Side::Benefit => wanted.extend([
            Figure::TimeToReady { quantile: 0.99 },
            Figure::PollPeriod,
            Figure::DriftDetection,
            Figure::DrainTime,
        ]),
    }
    let mut out: Vec<Figure> = Vec::new();
    for f in wanted {
        let constrained = r.constraints.iter().any(|c| c.figure == f);
        if !out.contains(&f)
            && r.figures.contains(&f)
            && (constrained || has(r, f, side == Side::Cost && f == Figure::Throttles))
        {
            out.push(f);
        }
    }
    out
}

/// The line of the first constraint on `f`.
fn limit(constraints: &[Constraint], f: Figure, what: &str) -> Option<ChartLimit> {
    constraints
        .iter()
        .find(|c| c.figure == f)
        .map(|c| ChartLimit {
            value: c.limit,
            label: format!("{what} {c}"),
        })
}

/// A point's short label on a chart: its values, `/` between them.
fn short(sets: &[String]) -> String {
    sets.iter()
        .map(|s| s.split_once('=').map_or(s.as_str(), |(_, v)| v))
        .collect::<Vec<_>>()
        .join("/")
}

/// The chart of `cost` against `benefit`.
fn chart(r: &SweepResult, cost: Figure, benefit: Figure) -> String {
    let points: Vec<ScatterPoint> = r
        .points
        .iter()
        .map(|p| {
            let (c, b) = (p.value(cost), p.value(benefit));
            ScatterPoint {
                label: short(&p.sets),
                predicted: c.predicted.zip(b.predicted),
                measured: c.measured.zip(b.measured),
                unmodeled: !p.unmodeled.is_empty(),
                chosen: r.selection.cheapest == Some(p.index),
            }
        })
        .collect();
    // A time axis's unit is the one its ticks read in, which the chart adds.
    let axis = |f: Figure| {
        if f.unit() == "s" {
            format!("{f}: {}", f.title())
        } else {
            format!("{f}: {} ({})", f.title(), f.unit())
        }
    };
    report::scatter(&Scatter {
        title: format!("{} against {}", benefit.title(), cost.title()),
        x_title: axis(cost),
        y_title: axis(benefit),
        x_time: cost.unit() == "s",
        y_time: benefit.unit() == "s",
        points: &points,
        budget: limit(&r.constraints, cost, "budget"),
        slo: limit(&r.constraints, benefit, "SLO"),
    })
}

/// The page.
#[must_use]
pub fn render(r: &SweepResult) -> String {
    let mut o = String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    let _ = write!(
        o,
        "<title>harness sweep: {}</title><style>{}{EXTRA_STYLE}</style></head><body>",
        esc(&r.scenario),
        report::STYLE
    );
    let axes: Vec<String> = r.axes.iter().map(ToString::to_string).collect();
    let _ = write!(
        o,
        "<h1>sweep {}</h1><div class=\"sub\">{} · {} points · vary {} · --set {} · {} time{}</div>",
        esc(&r.scenario),
        esc(&r.file),
        r.points.len(),
        esc(&axes.join(" ")),
        esc(&if r.sets.is_empty() {
            "none".to_owned()
        } else {
            r.sets.join(" ")
        }),
        esc(&r.time),
        r.wall_s
            .map(|w| format!(" · {}", super::figure::seconds(w)))
            .unwrap_or_default()
    );
    let chosen = r.selection.cheapest.is_some();
    let mut lines = super::text::choice(r).into_iter();
    if let Some(first) = lines.next() {
        let _ = write!(
            o,
            "<p class=\"headline {}\">{}</p><ul>",
            if chosen { "pass" } else { "fail" },
            esc(&first)
        );
        for l in lines {
            let _ = write!(o, "<li>{}</li>", esc(l.trim_start()));
        }
        o.push_str("</ul>");
    }
    o.push_str("<h2>Frontier</h2><p class=\"sub\">Each chart: one cost against one benefit, lower is better on both. The line joins the predicted pairs in grid order, the marks are the measured pairs, labelled with the point's values; the shaded corner meets both the budget and the SLO.</p><div class=\"charts\">");
    for cost in chart_figures(r, Side::Cost) {
        for benefit in chart_figures(r, Side::Benefit) {
            o.push_str(&chart(r, cost, benefit));
        }
    }
    o.push_str("</div>");
    table(&mut o, r);
    o.push_str("</body></html>\n");
    o
}

/// Every point's figures, measured over predicted, and its status and report.
fn table(o: &mut String, r: &SweepResult) {
    o.push_str("<h2>Points</h2><p class=\"sub\">measured, predicted below; – where there is none</p><div class=\"wide\"><table><tr><th>#</th><th>settings</th><th>run</th>");
    for f in &r.figures {
        let _ = write!(o, "<th>{} ({})</th>", esc(&f.to_string()), f.unit());
    }
    o.push_str("</tr>");
    for p in &r.points {
        let word = super::text::status_word(p);
        let class = match p.status {
            Status::Ran { passed: true } => "pass",
            _ => "fail",
        };
        let mark = if r.selection.cheapest == Some(p.index) {
            " (chosen)"
        } else if r.selection.feasible.contains(&p.index) {
            " (feasible)"
        } else {
            ""
        };
        let _ = write!(
            o,
            "<tr><td class=\"n\">{}</td><td class=\"f\">{}{mark}</td><td><a class=\"{class}\" href=\"{}/report.html\">{word}</a>{}</td>",
            p.index,
            esc(&p.label()),
            esc(&p.dir),
            if p.unmodeled.is_empty() {
                String::new()
            } else {
                format!(
                    " <span class=\"unmodeled\" title=\"{}\">UNMODELED</span>",
                    esc(&p.unmodeled.join("; "))
                )
            }
        );
        for &f in &r.figures {
            let v = p.value(f);
            let _ = write!(
                o,
                "<td class=\"n\">{}<br><span class=\"sub\">{}</span></td>",
                f.show(v.measured),
                f.show(v.predicted)
            );
        }
        o.push_str("</tr>");
        if let Status::Failed { reason } | Status::Partial { reason } = &p.status {
            let _ = write!(
                o,
                "<tr><td></td><td colspan=\"{}\" class=\"f\">{}</td></tr>",
                r.figures.len() + 2,
                esc(reason)
            );
        }
    }
    o.push_str("</table></div>");
}
