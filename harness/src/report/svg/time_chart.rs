//! The time-series chart: phases shaded with their bands, series, limits and levels.

use std::fmt::Write as _;

use super::axis::{YAxis, axis_time_label, time_step, x_ticks};
use super::xml_escape;
use super::{BOTTOM, EXPECTED, FLAG, H, LEFT, LIMIT, RIGHT, TOP, W, legend, open};
use crate::predict::fmt_num;

/// One phase on a time chart: shaded, and with its band (expected value to limit).
pub struct PhaseBand<'a> {
    /// Label.
    pub label: &'a str,
    /// Start (s).
    pub start: f64,
    /// End (s).
    pub end: f64,
    /// The expected value per bin (the band's low edge, dashed green), if any.
    pub expected: Option<f64>,
    /// The limit per bin (the band's high edge, red), if any.
    pub limit: Option<f64>,
}

/// A level across the whole time chart (a cloud quota), labelled at its right end.
pub struct Level {
    /// Label.
    pub label: String,
    /// The value per bin.
    pub value: f64,
    /// Dotted (a burst) rather than dashed (a rate).
    pub dotted: bool,
    /// Drawn only when it fits under the axis the rest of the chart needs (a burst), rather
    /// than widening the axis to show it (a rate).
    pub only_if_it_fits: bool,
}

/// The colour of a quota's levels.
const QUOTA: &str = "#8b4513";

/// A series of one value per bin.
pub struct Series<'a> {
    /// Legend.
    pub label: &'a str,
    /// CSS colour.
    pub color: &'a str,
    /// Values.
    pub values: &'a [f64],
    /// When its bins are checked against their phase's limit: the flag for a bin above it
    /// (`above limit, not asserted`).
    pub over: Option<&'a str>,
}

/// The bins of `values` above the limit of the phase they fall in, with that limit: only
/// when a bin is 1 s long, the window the time charts' limits are for.
#[must_use]
pub fn bins_over_limit(values: &[f64], bin_s: f64, phases: &[PhaseBand<'_>]) -> Vec<(usize, f64)> {
    if (bin_s - 1.0).abs() > 1e-9 {
        return Vec::new();
    }
    values
        .iter()
        .enumerate()
        .filter_map(|(i, &v)| {
            let mid = (i as f64 + 0.5) * bin_s;
            let limit = phases
                .iter()
                .find(|p| p.start <= mid && mid < p.end)?
                .limit
                .filter(|l| l.is_finite())?;
            (v > limit).then_some((i, limit))
        })
        .collect()
}

/// A time-series chart: phases shaded, each phase's band from its expected value (dashed
/// green) to its limit (red) shaded, one polyline per series, and levels (quotas) across the
/// whole chart. A limit far above the data is drawn in a strip above a marked break of the y
/// axis.
#[must_use]
pub fn time_chart(
    title: &str,
    y_label: &str,
    bin_s: f64,
    series: &[Series<'_>],
    phases: &[PhaseBand<'_>],
    levels: &[Level],
) -> String {
    let n = series
        .iter()
        .map(|s| s.values.len())
        .max()
        .unwrap_or(0)
        .max(1);
    let t_max = (n as f64 * bin_s)
        .max(phases.iter().map(|p| p.end).fold(0.0, f64::max))
        .max(1.0);
    let data_max = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .chain(
            levels
                .iter()
                .filter(|l| !l.only_if_it_fits)
                .map(|l| l.value),
        )
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let expected_max = phases.iter().filter_map(|p| p.expected).fold(0.0, f64::max);
    let limits: Vec<f64> = phases
        .iter()
        .filter_map(|p| p.limit)
        .filter(|l| l.is_finite())
        .collect();
    let axis = YAxis::new(data_max, expected_max, &limits);
    let pw = W - LEFT - RIGHT;
    let x = |t: f64| LEFT + t / t_max * pw;
    let mut o = String::new();
    open(&mut o, title, H);
    let plot_top = axis.low_top();
    for (i, p) in phases.iter().enumerate() {
        let (x0, x1) = (x(p.start), x(p.end.max(p.start)));
        let width = (x1 - x0).max(0.5);
        let fill = if i % 2 == 0 { "#eef2f7" } else { "#f7f4ee" };
        let _ = write!(
            o,
            "<rect x=\"{x0:.1}\" y=\"{plot_top:.1}\" width=\"{width:.1}\" height=\"{:.1}\" fill=\"{fill}\"/><text x=\"{:.1}\" y=\"{:.1}\" class=\"phase\">{}</text>",
            H - BOTTOM - plot_top,
            x0 + 3.0,
            plot_top + 12.0,
            xml_escape(p.label)
        );
    }
    axis.ticks(&mut o);
    for p in phases {
        let (x0, x1) = (x(p.start), x(p.end.max(p.start)));
        let width = (x1 - x0).max(0.5);
        let limit = p.limit.filter(|l| l.is_finite());
        if let (Some(e), Some(l)) = (p.expected, limit) {
            // The band: expected to limit, across the break when the limit is in the strip.
            let (ye, yl) = (axis.y(e), axis.y(l));
            let _ = write!(
                o,
                "<rect x=\"{x0:.1}\" y=\"{yl:.1}\" width=\"{width:.1}\" height=\"{:.1}\" fill=\"{EXPECTED}\" fill-opacity=\"0.12\"/>",
                (ye - yl).max(0.5)
            );
        }
        if let Some(e) = p.expected {
            let ye = axis.y(e);
            let _ = write!(
                o,
                "<line x1=\"{x0:.1}\" x2=\"{x1:.1}\" y1=\"{ye:.1}\" y2=\"{ye:.1}\" stroke=\"{EXPECTED}\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/>"
            );
        }
        if let Some(l) = limit {
            let yl = axis.y(l);
            let _ = write!(
                o,
                "<line x1=\"{x0:.1}\" x2=\"{x1:.1}\" y1=\"{yl:.1}\" y2=\"{yl:.1}\" stroke=\"{LIMIT}\" stroke-width=\"1.5\"/><text x=\"{:.1}\" y=\"{:.1}\" class=\"bound\">{}</text>",
                x0 + 3.0,
                yl - 3.0,
                fmt_num(l)
            );
        }
    }
    let step = time_step(t_max);
    x_ticks(&mut o, t_max, step, x, |t| axis_time_label(t, step));
    let mid = (plot_top + H - BOTTOM) / 2.0;
    let _ = write!(
        o,
        "<text x=\"14\" y=\"{mid:.1}\" class=\"tick\" transform=\"rotate(-90 14 {mid:.1})\" text-anchor=\"middle\">{}</text>",
        xml_escape(y_label)
    );
    for s in series {
        let pts: String = s
            .values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                format!(
                    "{:.1},{:.1} ",
                    x((i as f64 + 0.5) * bin_s),
                    axis.y(v.min(axis.low_max))
                )
            })
            .collect();
        let _ = write!(
            o,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"/>",
            pts.trim_end(),
            s.color
        );
    }
    let shown: Vec<&Level> = levels
        .iter()
        .filter(|l| l.value.is_finite() && (!l.only_if_it_fits || l.value <= axis.low_max))
        .collect();
    for (i, l) in shown.iter().enumerate() {
        let yy = axis.y(l.value);
        let dash = if l.dotted { "1 3" } else { "8 4" };
        // Labels of levels close together are staggered along the line.
        let lx = W - RIGHT - 4.0 - 260.0 * (i % 3) as f64;
        let _ = write!(
            o,
            "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"{QUOTA}\" stroke-width=\"1.5\" stroke-dasharray=\"{dash}\"/><text x=\"{lx:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"end\" style=\"fill:{QUOTA};stroke:#fff;stroke-width:3px;paint-order:stroke\">{}</text>",
            W - RIGHT,
            yy - 3.0,
            xml_escape(&l.label)
        );
    }
    let mut flagged = false;
    for s in series {
        let Some(flag) = s.over else {
            continue;
        };
        for (k, (i, _)) in bins_over_limit(s.values, bin_s, phases)
            .into_iter()
            .enumerate()
        {
            flagged = true;
            let (xx, yy) = (
                x((i as f64 + 0.5) * bin_s),
                axis.y(s.values[i].min(axis.low_max)),
            );
            let _ = write!(
                o,
                "<circle cx=\"{xx:.1}\" cy=\"{yy:.1}\" r=\"4\" fill=\"{FLAG}\"><title>{}</title></circle>",
                xml_escape(flag)
            );
            if k == 0 {
                let _ = write!(
                    o,
                    "<text x=\"{:.1}\" y=\"{:.1}\" class=\"flag\" style=\"fill:{FLAG};stroke:#fff;stroke-width:3px;paint-order:stroke\">{}</text>",
                    xx + 7.0,
                    (yy - 6.0).max(TOP + 10.0),
                    xml_escape(flag)
                );
            }
        }
    }
    let mut entries: Vec<(&str, &str, bool)> =
        series.iter().map(|s| (s.label, s.color, false)).collect();
    if flagged {
        entries.push(("above limit", FLAG, false));
    }
    if !shown.is_empty() {
        entries.push(("quota", QUOTA, true));
    }
    if phases.iter().any(|p| p.expected.is_some()) {
        entries.push(("expected", EXPECTED, true));
    }
    if !limits.is_empty() {
        entries.push(("limit", LIMIT, false));
    }
    legend(&mut o, &entries);
    o.push_str("</svg>");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_above_its_phases_limit_is_flagged_and_only_with_1_s_bins() {
        let phases = [
            PhaseBand {
                label: "create",
                start: 0.0,
                end: 2.0,
                expected: None,
                limit: Some(20.0),
            },
            PhaseBand {
                label: "hold",
                start: 2.0,
                end: 4.0,
                expected: None,
                limit: None,
            },
        ];
        let values = [5.0, 30.0, 50.0, 10.0];
        assert_eq!(bins_over_limit(&values, 1.0, &phases), [(1, 20.0)]);
        assert!(bins_over_limit(&values, 10.0, &phases).is_empty());
        let chart = time_chart(
            "calls",
            "calls",
            1.0,
            &[Series {
                label: "calls",
                color: "#000",
                values: &values,
                over: Some("above limit, not asserted"),
            }],
            &phases,
            &[],
        );
        assert_eq!(chart.matches("<circle ").count(), 1, "{chart}");
        assert!(
            chart.contains(">above limit, not asserted</text>"),
            "{chart}"
        );
    }
}
