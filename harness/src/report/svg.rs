//! Inline SVG charts (no scripts, no external assets).

use std::fmt::Write as _;

use super::junit::xml_escape;
use crate::predict::fmt_num;

const W: f64 = 1100.0;
const H: f64 = 300.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 24.0;
const BOTTOM: f64 = 36.0;

/// A shaded phase on the time axis.
pub struct Shade<'a> {
    /// Label.
    pub label: &'a str,
    /// Start (s).
    pub start: f64,
    /// End (s).
    pub end: f64,
    /// Band low edge (per bin), if any.
    pub band_low: Option<f64>,
    /// Band high edge (per bin), if any.
    pub band_high: Option<f64>,
}

/// A series of one value per bin.
pub struct Series<'a> {
    /// Legend.
    pub label: &'a str,
    /// CSS colour.
    pub color: &'a str,
    /// Values.
    pub values: &'a [f64],
}

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

/// A time-series chart: phases shaded, budget bands, one polyline per series.
#[must_use]
pub fn time_chart(
    title: &str,
    y_label: &str,
    bin_s: f64,
    series: &[Series<'_>],
    shades: &[Shade<'_>],
) -> String {
    let n = series
        .iter()
        .map(|s| s.values.len())
        .max()
        .unwrap_or(0)
        .max(1);
    let t_max = (n as f64 * bin_s).max(1.0);
    let data_max = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0, f64::max);
    let band_max = shades.iter().filter_map(|s| s.band_low).fold(0.0, f64::max);
    let y_max = nice_max((data_max * 1.15).max(band_max * 1.3));
    let pw = W - LEFT - RIGHT;
    let ph = H - TOP - BOTTOM;
    let x = |t: f64| LEFT + t / t_max * pw;
    let y = |v: f64| TOP + ph - (v.min(y_max) / y_max) * ph;
    let mut o = String::new();
    let _ = write!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" aria-label=\"{}\">",
        xml_escape(title)
    );
    let _ = write!(
        o,
        "<text x=\"{LEFT}\" y=\"16\" class=\"title\">{}</text>",
        xml_escape(title)
    );
    for (i, s) in shades.iter().enumerate() {
        let (x0, x1) = (x(s.start), x(s.end.max(s.start)));
        let fill = if i % 2 == 0 { "#eef2f7" } else { "#f7f4ee" };
        let _ = write!(
            o,
            "<rect x=\"{x0:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{ph}\" fill=\"{fill}\"/>",
            (x1 - x0).max(0.5)
        );
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"phase\">{}</text>",
            x0 + 3.0,
            TOP + 12.0,
            xml_escape(s.label)
        );
        if let (Some(lo), Some(hi)) = (s.band_low, s.band_high) {
            let (ylo, yhi) = (y(lo), y(hi));
            // Tint the band only when its top is on the chart; a band running off the top
            // would cover the phase shading.
            if hi <= y_max {
                let _ = write!(
                    o,
                    "<rect x=\"{x0:.1}\" y=\"{yhi:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#2e8b57\" fill-opacity=\"0.15\"/>",
                    (x1 - x0).max(0.5),
                    (ylo - yhi).max(0.5)
                );
            }
            let _ = write!(
                o,
                "<line x1=\"{x0:.1}\" x2=\"{x1:.1}\" y1=\"{ylo:.1}\" y2=\"{ylo:.1}\" stroke=\"#2e8b57\" stroke-dasharray=\"4 3\"/>"
            );
            if hi > y_max {
                let _ = write!(
                    o,
                    "<text x=\"{:.1}\" y=\"{:.1}\" class=\"bound\">bound {} ↑</text>",
                    x0 + 3.0,
                    TOP + 26.0,
                    fmt_num(hi)
                );
            } else {
                let _ = write!(
                    o,
                    "<line x1=\"{x0:.1}\" x2=\"{x1:.1}\" y1=\"{yhi:.1}\" y2=\"{yhi:.1}\" stroke=\"#b22222\"/>"
                );
            }
        }
    }
    for i in 0..=4 {
        let v = y_max * f64::from(i) / 4.0;
        let yy = y(v);
        let _ = write!(
            o,
            "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#ccc\" stroke-width=\"0.5\"/><text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"end\">{}</text>",
            W - RIGHT,
            LEFT - 6.0,
            yy + 4.0,
            fmt_num(v)
        );
    }
    for i in 0..=10 {
        let t = t_max * f64::from(i) / 10.0;
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"middle\">{}s</text>",
            x(t),
            H - BOTTOM + 16.0,
            fmt_num(t.round())
        );
    }
    let _ = write!(
        o,
        "<text x=\"14\" y=\"{:.1}\" class=\"tick\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">{}</text>",
        TOP + ph / 2.0,
        TOP + ph / 2.0,
        xml_escape(y_label)
    );
    for s in series {
        let pts: String = s
            .values
            .iter()
            .enumerate()
            .map(|(i, v)| format!("{:.1},{:.1} ", x((i as f64 + 0.5) * bin_s), y(*v)))
            .collect();
        let _ = write!(
            o,
            "<polyline points=\"{pts}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"/>",
            s.color
        );
    }
    let mut lx = W - RIGHT - 10.0;
    for s in series.iter().rev() {
        lx -= 12.0 + 7.0 * s.label.chars().count() as f64;
        let _ = write!(
            o,
            "<rect x=\"{lx:.1}\" y=\"8\" width=\"10\" height=\"3\" fill=\"{}\"/><text x=\"{:.1}\" y=\"14\" class=\"tick\">{}</text>",
            s.color,
            lx + 13.0,
            xml_escape(s.label)
        );
    }
    o.push_str("</svg>");
    o
}

/// A histogram: (upper edge, count) buckets as bars, with quantile markers.
#[must_use]
pub fn histogram(title: &str, buckets: &[(f64, u64)], markers: &[(String, f64)]) -> String {
    let x_max = buckets.last().map_or(1.0, |b| b.0).max(1e-3);
    let c_max = nice_max(buckets.iter().map(|b| b.1).max().unwrap_or(1) as f64);
    let pw = W - LEFT - RIGHT;
    let ph = H - TOP - BOTTOM;
    let x = |v: f64| LEFT + v / x_max * pw;
    let y = |c: f64| TOP + ph - c / c_max * ph;
    let mut o = String::new();
    let _ = write!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" aria-label=\"{}\">",
        xml_escape(title)
    );
    let _ = write!(
        o,
        "<text x=\"{LEFT}\" y=\"16\" class=\"title\">{}</text>",
        xml_escape(title)
    );
    let mut prev = 0.0;
    for &(edge, count) in buckets {
        let (x0, x1) = (x(prev), x(edge));
        let yy = y(count as f64);
        let _ = write!(
            o,
            "<rect x=\"{x0:.1}\" y=\"{yy:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#4682b4\"><title>≤ {} s: {count}</title></rect>",
            (x1 - x0 - 1.0).max(0.5),
            TOP + ph - yy,
            fmt_num(edge)
        );
        prev = edge;
    }
    for (label, v) in markers {
        let xx = x(*v);
        let _ = write!(
            o,
            "<line x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{TOP}\" y2=\"{:.1}\" stroke=\"#b22222\" stroke-dasharray=\"3 2\"/><text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\">{}</text>",
            TOP + ph,
            xx + 3.0,
            TOP + 10.0,
            xml_escape(label)
        );
    }
    for i in 0..=4 {
        let c = c_max * f64::from(i) / 4.0;
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"end\">{}</text>",
            LEFT - 6.0,
            y(c) + 4.0,
            fmt_num(c)
        );
    }
    for i in 0..=10 {
        let v = x_max * f64::from(i) / 10.0;
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"middle\">{}s</text>",
            x(v),
            H - BOTTOM + 16.0,
            fmt_num((v * 10.0).round() / 10.0)
        );
    }
    o.push_str("</svg>");
    o
}
