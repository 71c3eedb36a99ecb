//! Inline SVG charts (no scripts, no external assets): a time series against per-phase
//! bands and limits, the windowed maxima against their bounds, and a histogram with its
//! quantiles, prediction and limit. One chart a module; the axes' scales and ticks, the
//! frame and the legend are shared here.

use std::fmt::Write as _;

use super::escape::xml_escape;

mod axis;
mod histogram;
mod labels;
mod peaks;
mod scatter;
mod time_chart;

pub(super) use axis::{strip_time_axis, time_label};
pub use histogram::{Marker, histogram};
pub use peaks::{PeakRow, peaks_chart};
pub use scatter::{Limit, Scatter, ScatterPoint, scatter};
pub use time_chart::{Level, PhaseBand, Series, bins_over_limit, time_chart};

pub(super) const W: f64 = 1100.0;
const H: f64 = 300.0;
pub(super) const LEFT: f64 = 60.0;
pub(super) const RIGHT: f64 = 20.0;
pub(super) const TOP: f64 = 24.0;
const BOTTOM: f64 = 36.0;
pub(super) const LIMIT: &str = "#b22222";
const EXPECTED: &str = "#2e8b57";
/// The colour of a flag: an excess no assertion checks.
const FLAG: &str = "#e08a00";
/// An assertion's own limit where it is tighter than the bound.
const ASSERTED: &str = "#000000";

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
