//! The histogram: buckets as bars, with markers for quantiles, prediction and limit.

use std::fmt::Write as _;

use super::axis::{nice_max, tick_step, x_ticks};
use super::xml_escape;
use super::{BOTTOM, H, LEFT, RIGHT, TOP, W, open};
use crate::predict::fmt_num;

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
    x_ticks(&mut o, x_max, step, x, |v| {
        format!("{}s", fmt_num((v * 1000.0).round() / 1000.0))
    });
    o.push_str("</svg>");
    o
}
