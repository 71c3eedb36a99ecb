//! Inline SVG charts (no scripts, no external assets): a time series against per-phase
//! bands and limits, the windowed maxima against their bounds, and a histogram with its
//! quantiles, prediction and limit.

use std::fmt::Write as _;

use super::escape::xml_escape;
use crate::predict::fmt_num;

pub(super) const W: f64 = 1100.0;
const H: f64 = 300.0;
pub(super) const LEFT: f64 = 60.0;
pub(super) const RIGHT: f64 = 20.0;
pub(super) const TOP: f64 = 24.0;
const BOTTOM: f64 = 36.0;
pub(super) const LIMIT: &str = "#b22222";
const EXPECTED: &str = "#2e8b57";
/// An assertion's own limit where it is tighter than the bound.
const ASSERTED: &str = "#000000";

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

/// The least of 1, 2, 2.5, 5 × 10ⁿ at or above `v` (1 for nothing to show).
fn nice_max(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(v.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if v <= m * mag {
            return m * mag;
        }
    }
    10.0 * mag
}

/// A round tick step for an axis of length `span` with at most `max_ticks` steps.
fn tick_step(span: f64, max_ticks: f64) -> f64 {
    if span <= 0.0 || !span.is_finite() {
        return 1.0;
    }
    let raw = span / max_ticks;
    let mag = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if raw <= m * mag {
            return m * mag;
        }
    }
    10.0 * mag
}

/// A round step for a time axis in seconds (1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min…).
pub(super) fn time_step(span: f64) -> f64 {
    const STEPS: [f64; 17] = [
        0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0,
        3600.0, 7200.0,
    ];
    STEPS
        .into_iter()
        .find(|s| span / s <= 10.0)
        .unwrap_or(14_400.0)
}

/// A tick of a time axis whose ticks are `step` apart, in one unit for the whole axis:
/// minutes when every tick is a whole minute, seconds otherwise (never `90s` beside `2m`).
pub(super) fn axis_time_label(t: f64, step: f64) -> String {
    if step >= 60.0 && (step % 60.0).abs() < 1e-9 {
        format!("{}m", fmt_num(t / 60.0))
    } else {
        format!("{}s", fmt_num(t))
    }
}

/// One moment, as a tooltip names it.
pub(super) fn time_label(t: f64) -> String {
    if t >= 120.0 && (t % 60.0).abs() < 1e-9 {
        format!("{}m", fmt_num(t / 60.0))
    } else {
        format!("{}s", fmt_num(t))
    }
}

pub(super) fn open(o: &mut String, title: &str, h: f64) {
    let _ = write!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {h}\" width=\"{W}\" height=\"{h}\" role=\"img\" aria-label=\"{}\">",
        xml_escape(title)
    );
    let _ = write!(
        o,
        "<text x=\"{LEFT}\" y=\"16\" class=\"title\">{}</text>",
        xml_escape(title)
    );
}

fn legend(o: &mut String, entries: &[(&str, &str, bool)]) {
    let mut lx = W - RIGHT - 10.0;
    for (label, color, dashed) in entries.iter().rev() {
        lx -= 24.0 + 6.5 * label.chars().count() as f64;
        let dash = if *dashed {
            " stroke-dasharray=\"4 3\""
        } else {
            ""
        };
        let _ = write!(
            o,
            "<line x1=\"{lx:.1}\" x2=\"{:.1}\" y1=\"10\" y2=\"10\" stroke=\"{color}\" stroke-width=\"2\"{dash}/><text x=\"{:.1}\" y=\"14\" class=\"tick\">{}</text>",
            lx + 14.0,
            lx + 18.0,
            xml_escape(label)
        );
    }
}

/// How a chart's y axis maps values: linear up to `low_max` over the plot; when a limit is
/// far above the data, the axis is broken and the limits get a strip at the top with their
/// own linear scale from `strip_min` to `strip_max`.
struct YAxis {
    low_max: f64,
    strip: Option<(f64, f64)>,
}

const STRIP: f64 = 40.0;
const GAP: f64 = 14.0;

impl YAxis {
    fn new(data_max: f64, expected_max: f64, limits: &[f64]) -> YAxis {
        let low = (data_max * 1.15).max(expected_max * 1.3).max(1.0);
        let lim_max = limits.iter().copied().fold(0.0, f64::max);
        let lim_min = limits.iter().copied().fold(f64::INFINITY, f64::min);
        if lim_max <= 3.0 * low {
            return YAxis {
                low_max: nice_max(low.max(lim_max * 1.08)),
                strip: None,
            };
        }
        let low_max = nice_max(low);
        let above = lim_min.max(low_max);
        YAxis {
            low_max,
            strip: Some((above * 0.9, lim_max * 1.1)),
        }
    }

    fn low_top(&self) -> f64 {
        if self.strip.is_some() {
            TOP + STRIP + GAP
        } else {
            TOP
        }
    }

    /// The y pixel of `v`.
    fn y(&self, v: f64) -> f64 {
        let bottom = H - BOTTOM;
        let top = self.low_top();
        match self.strip {
            Some((s0, s1)) if v > self.low_max => {
                let f = ((v - s0) / (s1 - s0)).clamp(0.0, 1.0);
                TOP + STRIP - f * STRIP
            }
            _ => bottom - (v.min(self.low_max) / self.low_max) * (bottom - top),
        }
    }

    fn ticks(&self, o: &mut String) {
        let step = tick_step(self.low_max, 4.0);
        let mut v = 0.0;
        while v <= self.low_max + 1e-9 {
            let yy = self.y(v);
            let _ = write!(
                o,
                "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#ccc\" stroke-width=\"0.5\"/><text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"end\">{}</text>",
                W - RIGHT,
                LEFT - 6.0,
                yy + 4.0,
                fmt_num(v)
            );
            v += step;
        }
        if self.strip.is_some() {
            // The break: a zig-zag across the axis between the plot and the limits' strip.
            let y0 = TOP + STRIP + GAP / 2.0;
            let _ = write!(
                o,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{GAP}\" fill=\"#fff\"/><polyline points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" fill=\"none\" stroke=\"#444\"/><text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\">axis broken: limits above</text>",
                LEFT - 8.0,
                TOP + STRIP,
                W - RIGHT - LEFT + 8.0,
                LEFT - 8.0,
                y0 + 3.0,
                LEFT - 3.0,
                y0 - 3.0,
                LEFT + 3.0,
                y0 + 3.0,
                LEFT + 8.0,
                y0 - 3.0,
                LEFT + 12.0,
                y0 + 4.0
            );
        }
    }
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
    let mut t = 0.0;
    while t <= t_max + 1e-9 {
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"middle\">{}</text>",
            x(t),
            H - BOTTOM + 16.0,
            axis_time_label(t, step)
        );
        t += step;
    }
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

/// One row of the windowed-maxima chart.
pub struct PeakRow<'a> {
    /// The phase.
    pub phase: &'a str,
    /// W (s).
    pub window_s: f64,
    /// The most calls in any closed window of W in the phase.
    pub observed: f64,
    /// The hard bound for W in the phase (∞: none).
    pub bound: f64,
    /// The statistical tolerance, for holds.
    pub tolerance: Option<f64>,
    /// The tightest limit an assertion puts on this row (the run's or this phase's, for W),
    /// when it is below the bound: what the verdict depends on.
    pub asserted: Option<f64>,
    /// The tightest limit any assertion puts on this row, below the bound or not: whether an
    /// excess is checked at all.
    pub checked: Option<f64>,
}

impl PeakRow<'_> {
    /// The limit this row's busiest window is above while no assertion checks it, and the
    /// flag that says so: the hard bound first, else a hold's tolerance.
    #[must_use]
    pub fn unasserted(&self) -> Option<(f64, &'static str)> {
        let unchecked = |limit: f64| self.checked.is_none_or(|c| c > limit);
        if self.bound.is_finite() && self.observed > self.bound && unchecked(self.bound) {
            return Some((self.bound, "above bound, not asserted"));
        }
        self.tolerance
            .filter(|t| t.is_finite() && self.observed > *t && unchecked(*t))
            .map(|t| (t, "above tolerance, not asserted"))
    }
}

/// The colour of a flag: an excess no assertion checks.
const FLAG: &str = "#e08a00";

/// Windowed maxima against their bounds: one row per phase and window, a bar for the busiest
/// window, a red mark at the bound and a dashed green one at a hold's tolerance, each row on
/// its own scale (its bound, or the observation if higher, is 90 % of the width). The part of
/// a bar above a limit that no assertion checks is amber, with a triangle over its end and a
/// flag in its label ([`PeakRow::unasserted`]).
#[must_use]
pub fn peaks_chart(title: &str, rows: &[PeakRow<'_>]) -> String {
    let row_h = 22.0;
    let label_w = 190.0;
    let h = TOP + 14.0 + row_h * rows.len() as f64 + 10.0;
    let mut o = String::new();
    open(&mut o, title, h);
    let mut keys = vec![
        ("busiest window", "#1f4e79", false),
        ("tolerance", EXPECTED, true),
        ("bound", LIMIT, false),
    ];
    if rows.iter().any(|r| r.asserted.is_some()) {
        keys.push(("asserted limit", ASSERTED, false));
    }
    if rows.iter().any(|r| r.unasserted().is_some()) {
        keys.push(("above a limit, not asserted", FLAG, false));
    }
    legend(&mut o, &keys);
    let x0 = LEFT + label_w;
    let pw = W - RIGHT - x0 - 340.0;
    for (i, r) in rows.iter().enumerate() {
        let y = TOP + 14.0 + row_h * i as f64;
        let scale_to = [
            r.bound,
            r.observed,
            r.tolerance.unwrap_or(0.0),
            r.asserted.unwrap_or(0.0),
        ]
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(1.0, f64::max)
            / 0.9;
        let x = |v: f64| x0 + (v / scale_to).min(1.0) * pw;
        let over = r.observed > r.bound || r.asserted.is_some_and(|a| r.observed > a);
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"end\">{} per {} s</text><rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"12\" fill=\"{}\"/>",
            x0 - 8.0,
            y + 10.0,
            xml_escape(r.phase),
            fmt_num(r.window_s),
            y + 1.0,
            (x(r.observed) - x0).max(0.5),
            if over { LIMIT } else { "#1f4e79" }
        );
        let flag = r.unasserted();
        if let Some((limit, what)) = flag {
            // The excess: amber from the limit to the bar's end, a triangle over the end.
            let (xl, xe) = (x(limit), x(r.observed).max(x(limit) + 1.0));
            let _ = write!(
                o,
                "<rect x=\"{xl:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"12\" fill=\"{FLAG}\"><title>{}</title></rect><polygon points=\"{:.1},{:.1} {:.1},{:.1} {xe:.1},{:.1}\" fill=\"{FLAG}\"/>",
                y + 1.0,
                xe - xl,
                what,
                xe - 5.0,
                y - 6.0,
                xe + 5.0,
                y - 6.0,
                y
            );
        }
        if let Some(t) = r.tolerance.filter(|t| t.is_finite()) {
            let xt = x(t);
            let _ = write!(
                o,
                "<line x1=\"{xt:.1}\" x2=\"{xt:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{EXPECTED}\" stroke-width=\"2\" stroke-dasharray=\"3 2\"/>",
                y - 2.0,
                y + 16.0
            );
        }
        if let Some(a) = r.asserted.filter(|a| a.is_finite()) {
            let xa = x(a);
            let _ = write!(
                o,
                "<line x1=\"{xa:.1}\" x2=\"{xa:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{ASSERTED}\" stroke-width=\"3\"/>",
                y - 3.0,
                y + 17.0
            );
        }
        let mut asserted = r
            .asserted
            .filter(|a| a.is_finite())
            .map(|a| format!("; asserted ≤ {}", fmt_num(a)))
            .unwrap_or_default();
        if let Some((limit, what)) = flag {
            let _ = write!(
                asserted,
                "<tspan class=\"flag\" style=\"fill:{FLAG}\"> · {what} ({})</tspan>",
                fmt_num(limit)
            );
        }
        let text = if r.bound.is_finite() {
            let xb = x(r.bound);
            let _ = write!(
                o,
                "<line x1=\"{xb:.1}\" x2=\"{xb:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{LIMIT}\" stroke-width=\"2\"/>",
                y - 3.0,
                y + 17.0
            );
            format!(
                "{} of {} ({:.0} %){asserted}",
                fmt_num(r.observed),
                fmt_num(r.bound),
                r.observed / r.bound * 100.0
            )
        } else {
            format!("{} (no bound){asserted}", fmt_num(r.observed))
        };
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"{}\">{text}</text>",
            x0 + pw + 10.0,
            y + 10.0,
            if over { "bound" } else { "tick" }
        );
    }
    o.push_str("</svg>");
    o
}

/// A vertical marker on the histogram.
pub struct Marker {
    /// Label.
    pub label: String,
    /// Value (s).
    pub value: f64,
    /// CSS colour.
    pub color: &'static str,
    /// Dashed.
    pub dashed: bool,
}

/// A histogram: (upper edge, count) buckets as bars, with markers (quantiles, prediction,
/// limit). The x axis covers every marker; labels that would overprint are stacked.
#[must_use]
pub fn histogram(title: &str, buckets: &[(f64, u64)], markers: &[Marker]) -> String {
    let data_max = buckets.last().map_or(1.0, |b| b.0);
    let marker_max = markers
        .iter()
        .map(|m| m.value)
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let step = tick_step(data_max.max(marker_max * 1.05).max(1e-3), 10.0);
    let x_max = (data_max.max(marker_max * 1.05) / step).ceil().max(1.0) * step;
    let c_max = nice_max(buckets.iter().map(|b| b.1).max().unwrap_or(1) as f64);
    let pw = W - LEFT - RIGHT;
    let top = TOP + 30.0;
    let ph = H - top - BOTTOM;
    let x = |v: f64| LEFT + v / x_max * pw;
    let y = |c: f64| top + ph - c / c_max * ph;
    let mut o = String::new();
    open(&mut o, title, H);
    let mut prev = 0.0;
    for &(edge, count) in buckets {
        let (x0, x1) = (x(prev), x(edge));
        let yy = y(count as f64);
        let _ = write!(
            o,
            "<rect x=\"{x0:.1}\" y=\"{yy:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#4682b4\"><title>≤ {} s: {count}</title></rect>",
            (x1 - x0 - 1.0).max(0.5),
            top + ph - yy,
            fmt_num(edge)
        );
        prev = edge;
    }
    let mut sorted: Vec<&Marker> = markers.iter().filter(|m| m.value.is_finite()).collect();
    sorted.sort_by(|a, b| a.value.total_cmp(&b.value));
    let mut placed: Vec<(f64, f64)> = Vec::new(); // (x start, x end) per label row
    for m in sorted {
        let xx = x(m.value);
        let width = 7.0 * m.label.chars().count() as f64;
        let row = (0..)
            .find(|&r| placed.get(r).is_none_or(|&(_, end)| xx > end + 4.0))
            .unwrap_or(0);
        if row < placed.len() {
            placed[row] = (xx, xx + 3.0 + width);
        } else {
            placed.push((xx, xx + 3.0 + width));
        }
        let ly = TOP + 2.0 + 11.0 * row as f64;
        let dash = if m.dashed {
            " stroke-dasharray=\"3 2\""
        } else {
            ""
        };
        let _ = write!(
            o,
            "<line x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{}\" stroke-width=\"1.5\"{dash}/><text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" fill=\"{}\">{}</text>",
            ly + 2.0,
            top + ph,
            m.color,
            xx + 3.0,
            ly + 8.0,
            m.color,
            xml_escape(&m.label)
        );
    }
    let cstep = tick_step(c_max, 4.0);
    let mut c = 0.0;
    while c <= c_max + 1e-9 {
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"end\">{}</text>",
            LEFT - 6.0,
            y(c) + 4.0,
            fmt_num(c)
        );
        c += cstep;
    }
    let mut v = 0.0;
    while v <= x_max + 1e-9 {
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"middle\">{}s</text>",
            x(v),
            H - BOTTOM + 16.0,
            fmt_num((v * 1000.0).round() / 1000.0)
        );
        v += step;
    }
    o.push_str("</svg>");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(2.87, 10.0), 0.5);
        assert_eq!(tick_step(100.0, 4.0), 25.0);
        assert_eq!(time_step(45.0), 5.0);
        assert_eq!(time_step(3_700.0), 600.0);
        assert_eq!(time_label(600.0), "10m");
        assert_eq!(time_label(45.0), "45s");
    }

    #[test]
    fn a_time_axis_keeps_one_unit_for_all_its_ticks() {
        let labels = |span: f64| {
            let step = time_step(span);
            (0..=(span / step) as u32)
                .map(|i| axis_time_label(f64::from(i) * step, step))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            labels(150.0),
            [
                "0s", "15s", "30s", "45s", "60s", "75s", "90s", "105s", "120s", "135s", "150s"
            ]
        );
        assert_eq!(
            labels(600.0),
            [
                "0m", "1m", "2m", "3m", "4m", "5m", "6m", "7m", "8m", "9m", "10m"
            ]
        );
    }

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

    #[test]
    fn a_limit_far_above_the_data_gets_a_strip_above_a_break() {
        let near = YAxis::new(40.0, 10.0, &[110.0]);
        assert!(near.strip.is_none());
        assert!(near.low_max >= 110.0);
        let far = YAxis::new(40.0, 10.0, &[442.0]);
        assert_eq!(far.low_max, 50.0);
        let (y_limit, y_top_of_data) = (far.y(442.0), far.y(50.0));
        assert!(
            y_limit < y_top_of_data - GAP,
            "the limit is above the break"
        );
    }
}
