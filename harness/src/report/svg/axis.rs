//! The scales and ticks of the charts' axes: round steps, time labels in one unit, and a
//! y axis broken under limits far above the data.

use std::fmt::Write as _;

use super::{BOTTOM, H, LEFT, RIGHT, TOP, W};
use crate::predict::fmt_num;

/// The least of 1, 2, 2.5, 5 × 10ⁿ at or above `v` (1 for nothing to show).
pub(super) fn nice_max(v: f64) -> f64 {
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
pub(super) fn tick_step(span: f64, max_ticks: f64) -> f64 {
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
pub(in crate::report) fn time_label(t: f64) -> String {
    if t >= 120.0 && (t % 60.0).abs() < 1e-9 {
        format!("{}m", fmt_num(t / 60.0))
    } else {
        format!("{}s", fmt_num(t))
    }
}

/// The labels under a chart's x axis, `step` apart from 0 to `max`: at `x(v)`, reading
/// `label(v)`.
pub(super) fn x_ticks(
    o: &mut String,
    max: f64,
    step: f64,
    x: impl Fn(f64) -> f64,
    label: impl Fn(f64) -> String,
) {
    let mut v = 0.0;
    while v <= max + 1e-9 {
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"middle\">{}</text>",
            x(v),
            H - BOTTOM + 16.0,
            label(v)
        );
        v += step;
    }
}

/// The time axis under a strip chart: a tick down from `bottom` and its label at `x(t)`,
/// a round step apart from 0 to `span` seconds.
pub(in crate::report) fn strip_time_axis(
    o: &mut String,
    span: f64,
    bottom: f64,
    x: impl Fn(f64) -> f64,
) {
    let step = time_step(span);
    let mut t = 0.0;
    while t <= span + 1e-9 {
        let xt = x(t);
        let _ = write!(
            o,
            "<line x1=\"{xt:.1}\" x2=\"{xt:.1}\" y1=\"{bottom:.1}\" y2=\"{:.1}\" stroke=\"#444\"/><text x=\"{xt:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"middle\">{}</text>",
            bottom + 4.0,
            bottom + 16.0,
            axis_time_label(t, step)
        );
        t += step;
    }
}

/// How a chart's y axis maps values: linear up to `low_max` over the plot; when a limit is
/// far above the data, the axis is broken and the limits get a strip at the top with their
/// own linear scale from `strip_min` to `strip_max`.
pub(super) struct YAxis {
    pub(super) low_max: f64,
    strip: Option<(f64, f64)>,
}

const STRIP: f64 = 40.0;
const GAP: f64 = 14.0;

impl YAxis {
    pub(super) fn new(data_max: f64, expected_max: f64, limits: &[f64]) -> YAxis {
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

    pub(super) fn low_top(&self) -> f64 {
        if self.strip.is_some() {
            TOP + STRIP + GAP
        } else {
            TOP
        }
    }

    /// The y pixel of `v`.
    pub(super) fn y(&self, v: f64) -> f64 {
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

    pub(super) fn ticks(&self, o: &mut String) {
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
