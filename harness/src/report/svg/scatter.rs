//! A cost/benefit chart of a sweep: each point's predicted pair joined by a line in grid
//! order, its measured pair as a mark, the points the model does not cover as hollow
//! diamonds apart from the line, a budget as a vertical line and an SLO as a horizontal
//! one, the region that meets both shaded, and a legend.

use std::fmt::Write as _;

use super::axis::{axis_time_label, nice_max, tick_step, time_label, time_step};
use super::{EXPECTED, LIMIT, labels};
use crate::predict::fmt_num;
use crate::report::escape::xml_escape as esc;

const CW: f64 = 540.0;
const CH: f64 = 340.0;
const L: f64 = 64.0;
const R: f64 = 16.0;
const T: f64 = 56.0;
const B: f64 = 46.0;
/// Where the title starts: above the plot's left edge.
const TITLE_X: f64 = L;
/// The mean width of a title's character (14 px, bold), an estimate for its fit.
const TITLE_CHAR: f64 = 7.9;

/// A title too long for the chart is squeezed into its width (`textLength`) rather than
/// cut off at the edge.
fn title_fit(title: &str) -> String {
    let room = CW - TITLE_X - R;
    if TITLE_CHAR * title.chars().count() as f64 > room {
        format!(" textLength=\"{room:.0}\" lengthAdjust=\"spacingAndGlyphs\"")
    } else {
        String::new()
    }
}

/// The measured marks' colour.
const MEASURED: &str = "#1f4e99";
/// The colour of a point the model does not cover.
const UNMODELED: &str = "#6a5acd";
const SLO: &str = "#b35900";
/// The text styles of the page's charts, inside the chart so that it reads the same on its
/// own (an `.svg` file).
const STANDALONE: &str = "text{font-family:system-ui,sans-serif}text.title{font-size:14px;font-weight:600}text.tick{font-size:11px;fill:#444}";

/// One point of the grid on a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct ScatterPoint {
    /// Its short label (its values).
    pub label: String,
    /// Its predicted (cost, benefit).
    pub predicted: Option<(f64, f64)>,
    /// Its measured (cost, benefit).
    pub measured: Option<(f64, f64)>,
    /// The model does not cover it (UNMODELED).
    pub unmodeled: bool,
    /// The chosen point.
    pub chosen: bool,
}

/// A line across a chart: a value and its label.
#[derive(Clone, Debug, PartialEq)]
pub struct Limit {
    /// Where, in the axis's unit.
    pub value: f64,
    /// What it is, e.g. `budget cloudCalls.10s<=400`.
    pub label: String,
}

/// A cost/benefit chart.
#[derive(Clone)]
pub struct Scatter<'a> {
    /// The title.
    pub title: String,
    /// The x axis's title, with its unit; a time axis's without, as the chart adds the
    /// unit its ticks read in (`s` or `min`).
    pub x_title: String,
    /// The y axis's title, as the x axis's.
    pub y_title: String,
    /// Whether the x axis is a time in seconds (its ticks read 30s, 2m).
    pub x_time: bool,
    /// Whether the y axis is a time in seconds.
    pub y_time: bool,
    /// The points.
    pub points: &'a [ScatterPoint],
    /// The budget on the cost.
    pub budget: Option<Limit>,
    /// The SLO on the benefit.
    pub slo: Option<Limit>,
}

/// The chart as inline SVG.
#[must_use]
pub fn scatter(c: &Scatter<'_>) -> String {
    let values = |axis: fn(&(f64, f64)) -> f64| {
        c.points
            .iter()
            .flat_map(|p| [p.predicted, p.measured])
            .flatten()
            .map(|v| axis(&v))
            .fold(0.0, f64::max)
    };
    let xs = Scale::new(
        values(|v| v.0).max(c.budget.as_ref().map_or(0.0, |l| l.value)) * 1.08,
        c.x_time,
    );
    let ys = Scale::new(
        values(|v| v.1).max(c.slo.as_ref().map_or(0.0, |l| l.value)) * 1.08,
        c.y_time,
    );
    let (x_max, y_max) = (xs.max, ys.max);
    let x = |v: f64| L + (v / x_max).clamp(0.0, 1.0) * (CW - L - R);
    let y = |v: f64| CH - B - (v / y_max).clamp(0.0, 1.0) * (CH - B - T);
    let mut o = String::new();
    let _ = write!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {CW} {CH}\" width=\"{CW}\" height=\"{CH}\" role=\"img\" aria-label=\"{}\"><style>{STANDALONE}</style><text x=\"{TITLE_X}\" y=\"16\" class=\"title\"{}>{}</text>",
        esc(&c.title),
        title_fit(&c.title),
        esc(&c.title)
    );
    if let (Some(b), Some(s)) = (&c.budget, &c.slo) {
        let _ = write!(
            o,
            "<rect x=\"{L}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#2e8b57\" fill-opacity=\"0.07\"/>",
            y(s.value),
            x(b.value) - L,
            CH - B - y(s.value)
        );
    }
    axes(&mut o, c, (&xs, &ys), &x, &y);
    if let Some(b) = &c.budget {
        let xb = x(b.value);
        let _ = write!(
            o,
            "<line x1=\"{xb:.1}\" x2=\"{xb:.1}\" y1=\"{T}\" y2=\"{:.1}\" stroke=\"{LIMIT}\" stroke-width=\"1.5\" stroke-dasharray=\"6 3\"/>",
            CH - B
        );
    }
    if let Some(s) = &c.slo {
        let ys = y(s.value);
        let _ = write!(
            o,
            "<line x1=\"{L}\" x2=\"{:.1}\" y1=\"{ys:.1}\" y2=\"{ys:.1}\" stroke=\"{SLO}\" stroke-width=\"1.5\" stroke-dasharray=\"6 3\"/>",
            CW - R
        );
    }
    let line: Vec<String> = c
        .points
        .iter()
        .filter(|p| !p.unmodeled)
        .filter_map(|p| p.predicted)
        .map(|(a, b)| format!("{:.1},{:.1}", x(a), y(b)))
        .collect();
    if !line.is_empty() {
        let _ = write!(
            o,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{EXPECTED}\" stroke-width=\"1.5\"/>",
            line.join(" ")
        );
        for p in c.points.iter().filter(|p| !p.unmodeled) {
            if let Some((a, b)) = p.predicted {
                let _ = write!(
                    o,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{EXPECTED}\"><title>{} predicted</title></circle>",
                    x(a),
                    y(b),
                    esc(&p.label)
                );
            }
        }
    }
    for p in c.points {
        let Some((a, b)) = p.measured else { continue };
        let (px, py) = (x(a), y(b));
        let tip = format!("{}: {} × {} measured", p.label, xs.value(a), ys.value(b));
        if p.unmodeled {
            let _ = write!(
                o,
                "<polygon points=\"{px:.1},{:.1} {:.1},{py:.1} {px:.1},{:.1} {:.1},{py:.1}\" fill=\"#fff\" stroke=\"{UNMODELED}\" stroke-width=\"1.5\"><title>{} (UNMODELED)</title></polygon>",
                py - 6.0,
                px + 6.0,
                py + 6.0,
                px - 6.0,
                esc(&tip)
            );
        } else {
            let _ = write!(
                o,
                "<circle cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"4.5\" fill=\"{MEASURED}\"><title>{}</title></circle>",
                esc(&tip)
            );
        }
        if p.chosen {
            let _ = write!(
                o,
                "<circle cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"9\" fill=\"none\" stroke=\"#000\" stroke-width=\"1.5\"/>"
            );
        }
    }
    point_labels(&mut o, c, &x, &y);
    legend(&mut o, c);
    o.push_str("</svg>");
    o
}

/// The measured points' labels, each where no other label is (`labels::place`), joined to
/// its mark by a thin line when it had to move away from it.
fn point_labels(o: &mut String, c: &Scatter<'_>, x: &impl Fn(f64) -> f64, y: &impl Fn(f64) -> f64) {
    let marks: Vec<((f64, f64), &str)> = c
        .points
        .iter()
        .filter_map(|p| p.measured.map(|(a, b)| ((x(a), y(b)), p.label.as_str())))
        .collect();
    for (((px, py), text), at) in marks
        .iter()
        .zip(labels::place(&marks, (L, T, CW - R, CH - B)))
    {
        if at.moved {
            let _ = write!(
                o,
                "<line x1=\"{px:.1}\" y1=\"{py:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#999\" stroke-width=\"0.75\"/>",
                if at.x < *px {
                    at.x + labels::CHAR * text.chars().count() as f64
                } else {
                    at.x
                },
                at.y - 4.0
            );
        }
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\">{}</text>",
            at.x,
            at.y,
            esc(text)
        );
    }
}

/// An axis's scale: from 0 to `max`, a tick every `step`.
struct Scale {
    max: f64,
    step: f64,
    time: bool,
}

impl Scale {
    /// The scale of an axis that shows values up to `top`: round steps of a number, or of a
    /// time (1, 2, 5, 10, 15, 30 s, 1, 2, 5 min …), five or six of them.
    fn new(top: f64, time: bool) -> Scale {
        if time {
            let step = time_step(top.max(1e-9) * 10.0 / 6.0);
            let max = ((top / step).ceil() * step).max(step);
            Scale { max, step, time }
        } else {
            let max = nice_max(top);
            Scale {
                max,
                step: tick_step(max, 5.0),
                time,
            }
        }
    }

    /// A tick's label, in one unit for the axis.
    fn tick(&self, v: f64) -> String {
        if self.time {
            axis_time_label(v, self.step)
        } else {
            fmt_num(v)
        }
    }

    /// The unit of the ticks of a time axis (`s`, or `min` for whole minutes), the
    /// axis's title's suffix; none for a number's.
    fn unit(&self) -> Option<&'static str> {
        self.time.then(|| {
            if self.step >= 60.0 && (self.step % 60.0).abs() < 1e-9 {
                "min"
            } else {
                "s"
            }
        })
    }

    /// An axis's title: `title`, and the unit of a time axis.
    fn title(&self, title: &str) -> String {
        match self.unit() {
            Some(unit) => format!("{title} ({unit})"),
            None => title.to_owned(),
        }
    }

    /// A value, as a tooltip names it.
    fn value(&self, v: f64) -> String {
        if self.time { time_label(v) } else { fmt_num(v) }
    }
}

/// The axes: frame, ticks, grid lines and titles.
fn axes(
    o: &mut String,
    c: &Scatter<'_>,
    (xs, ys): (&Scale, &Scale),
    x: &dyn Fn(f64) -> f64,
    y: &dyn Fn(f64) -> f64,
) {
    let _ = write!(
        o,
        "<line x1=\"{L}\" x2=\"{L}\" y1=\"{T}\" y2=\"{:.1}\" stroke=\"#444\"/><line x1=\"{L}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#444\"/>",
        CH - B,
        CW - R,
        CH - B,
        CH - B
    );
    let mut v = 0.0;
    while v <= xs.max + 1e-9 {
        let tick = xs.tick(v);
        // A label centred on the last tick would run past the chart's right edge: it ends
        // at its tick instead.
        let half = labels::CHAR * tick.chars().count() as f64 / 2.0;
        let anchor = if x(v) + half + 4.0 > CW { "end" } else { "middle" };
        let _ = write!(
            o,
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{1:.1}\" y2=\"{2:.1}\" stroke=\"#444\"/><text x=\"{0:.1}\" y=\"{3:.1}\" class=\"tick\" text-anchor=\"{anchor}\">{4}</text>",
            x(v),
            CH - B,
            CH - B + 4.0,
            CH - B + 16.0,
            esc(&tick)
        );
        v += xs.step;
    }
    let mut v = 0.0;
    while v <= ys.max + 1e-9 {
        let yy = y(v);
        let _ = write!(
            o,
            "<line x1=\"{L}\" x2=\"{:.1}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#ccc\" stroke-width=\"0.5\"/><text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"end\">{}</text>",
            CW - R,
            L - 6.0,
            yy + 4.0,
            esc(&ys.tick(v))
        );
        v += ys.step;
    }
    let _ = write!(
        o,
        "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"middle\">{}</text><text transform=\"translate(14 {:.1}) rotate(-90)\" class=\"tick\" text-anchor=\"middle\">{}</text>",
        L + (CW - L - R) / 2.0,
        CH - 8.0,
        esc(&xs.title(&c.x_title)),
        T + (CH - B - T) / 2.0,
        esc(&ys.title(&c.y_title))
    );
}

/// One legend entry at `*lx` on `row`: its swatch (drawn from its left edge) and label;
/// moves `*lx` past it.
fn entry(o: &mut String, lx: &mut f64, row: f64, swatch: impl Fn(f64) -> String, label: &str) {
    let _ = write!(
        o,
        "{}<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\">{}</text>",
        swatch(*lx),
        *lx + 16.0,
        row + 4.0,
        esc(label)
    );
    *lx += 26.0 + 6.0 * label.chars().count() as f64;
}

/// The legend, in two rows under the title: the marks, then the lines.
fn legend(o: &mut String, c: &Scatter<'_>) {
    let mut lx = L;
    let row = 30.0;
    entry(
        o,
        &mut lx,
        row,
        |x| {
            format!(
                "<line x1=\"{x}\" x2=\"{}\" y1=\"{row}\" y2=\"{row}\" stroke=\"{EXPECTED}\" stroke-width=\"1.5\"/>",
                x + 12.0
            )
        },
        "predicted",
    );
    entry(
        o,
        &mut lx,
        row,
        |x| {
            format!(
                "<circle cx=\"{}\" cy=\"{row}\" r=\"4.5\" fill=\"{MEASURED}\"/>",
                x + 6.0
            )
        },
        "measured",
    );
    if c.points.iter().any(|p| p.unmodeled) {
        entry(
            o,
            &mut lx,
            row,
            |x| {
                format!(
                    "<polygon points=\"{0},{1} {2},{row} {0},{3} {4},{row}\" fill=\"#fff\" stroke=\"{UNMODELED}\"/>",
                    x + 6.0,
                    row - 5.0,
                    x + 11.0,
                    row + 5.0,
                    x + 1.0
                )
            },
            "UNMODELED",
        );
    }
    if c.points.iter().any(|p| p.chosen) {
        entry(
            o,
            &mut lx,
            row,
            |x| {
                format!(
                    "<circle cx=\"{}\" cy=\"{row}\" r=\"6\" fill=\"none\" stroke=\"#000\"/>",
                    x + 6.0
                )
            },
            "chosen",
        );
    }
    let mut lx = L;
    let row = 44.0;
    let dashed = |color: &'static str| {
        move |x: f64| {
            format!(
                "<line x1=\"{x}\" x2=\"{}\" y1=\"{row}\" y2=\"{row}\" stroke=\"{color}\" stroke-width=\"1.5\" stroke-dasharray=\"6 3\"/>",
                x + 12.0
            )
        }
    };
    match &c.budget {
        Some(b) => entry(o, &mut lx, row, dashed(LIMIT), &b.label),
        None => entry(o, &mut lx, row, dashed("#bbb"), "no budget on this cost"),
    }
    match &c.slo {
        Some(s) => entry(o, &mut lx, row, dashed(SLO), &s.label),
        None => entry(o, &mut lx, row, dashed("#bbb"), "no SLO on this benefit"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_has_its_axes_titles_limits_and_legend() {
        let points = [
            ScatterPoint {
                label: "5".into(),
                predicted: Some((150.0, 400.0)),
                measured: Some((148.0, 380.0)),
                unmodeled: false,
                chosen: false,
            },
            ScatterPoint {
                label: "10".into(),
                predicted: Some((250.0, 200.0)),
                measured: Some((240.0, 210.0)),
                unmodeled: false,
                chosen: true,
            },
            ScatterPoint {
                label: "50".into(),
                predicted: Some((650.0, 50.0)),
                measured: Some((600.0, 70.0)),
                unmodeled: true,
                chosen: false,
            },
        ];
        let svg = scatter(&Scatter {
            title: "peak cloud calls against time to Ready".into(),
            x_title: "peak cloud calls in 10s (calls)".into(),
            y_title: "time to Ready p99".into(),
            x_time: false,
            y_time: true,
            points: &points,
            budget: Some(Limit {
                value: 400.0,
                label: "budget cloudCalls.10s<=400".into(),
            }),
            slo: Some(Limit {
                value: 300.0,
                label: "SLO timeToReady.p99<=5m".into(),
            }),
        });
        for needle in [
            "peak cloud calls in 10s (calls)",
            "time to Ready p99 (min)",
            ">6m<",
            "budget cloudCalls.10s&lt;=400",
            "SLO timeToReady.p99&lt;=5m",
            ">predicted<",
            ">measured<",
            ">UNMODELED<",
            ">chosen<",
        ] {
            assert!(svg.contains(needle), "{needle} missing");
        }
        // The line joins the two modeled points only: the unmodeled one is drawn apart.
        let line = svg.split("<polyline points=\"").nth(1).unwrap();
        let line = &line[..line.find('"').unwrap()];
        assert_eq!(line.split(' ').count(), 2, "{line}");
        // A title that fits is drawn as it is.
        assert!(!svg.contains("textLength"));
    }

    #[test]
    fn a_time_axis_names_the_unit_its_ticks_read_in_and_a_long_title_fits_the_chart() {
        let points = [ScatterPoint {
            label: "5".into(),
            predicted: Some((3000.0, 40.0)),
            measured: Some((2900.0, 45.0)),
            unmodeled: false,
            chosen: false,
        }];
        let title = "drain time after the restart against steady cloud calls per hour";
        let svg = scatter(&Scatter {
            title: title.into(),
            x_title: "steady cloud calls per hour (calls/h)".into(),
            y_title: "drain time after the restart".into(),
            x_time: false,
            y_time: true,
            points: &points,
            budget: None,
            slo: None,
        });
        // Up to 48.6 s: ticks of 10 s, read in seconds.
        assert!(svg.contains(">drain time after the restart (s)<"), "{svg}");
        assert!(svg.contains(">40s<"));
        assert!(svg.contains(">steady cloud calls per hour (calls/h)<"));
        let room = CW - TITLE_X - R;
        assert!(
            svg.contains(&format!(
                "textLength=\"{room:.0}\" lengthAdjust=\"spacingAndGlyphs\">{title}<"
            )),
            "{svg}"
        );
    }
}
