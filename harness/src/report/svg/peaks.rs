//! The windowed-maxima chart: each phase and window's busiest window against its bound.

use std::fmt::Write as _;

use super::xml_escape;
use super::{ASSERTED, EXPECTED, FLAG, LEFT, LIMIT, RIGHT, TOP, W, legend, open};
use crate::predict::fmt_num;

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
