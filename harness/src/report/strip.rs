//! The per-resource strip chart: one row per top resource, its cloud calls over the run as
//! a strip of cells shaded by how many calls each bin holds, so that the few resources that
//! eat the budget, and when they do, stand out at a glance.

use std::fmt::Write as _;

use super::escape::xml_escape;
use super::svg::{LEFT, LIMIT, RIGHT, TOP, W, open, strip_time_axis, time_label};
use crate::predict::fmt_num;

/// One row: a resource and its calls per bin.
pub struct StripRow<'a> {
    /// The resource's name.
    pub label: &'a str,
    /// Its calls over the run.
    pub calls: u64,
    /// Its share of all calls (0–1).
    pub share: f64,
    /// Calls per bin, from the run's start.
    pub values: &'a [u32],
}

/// A phase boundary: where a phase starts (s), and its name.
pub struct Boundary<'a> {
    /// Label.
    pub label: &'a str,
    /// Start (s).
    pub at: f64,
}

/// Where each phase starts on a strip chart: a dashed line at `x(at)` from just above `top`
/// down to `bottom`, labelled with the phase.
pub(super) fn phase_lines(
    o: &mut String,
    phases: &[Boundary<'_>],
    (top, bottom): (f64, f64),
    x: impl Fn(f64) -> f64,
) {
    for p in phases {
        let xp = x(p.at);
        let _ = write!(
            o,
            "<line x1=\"{xp:.1}\" x2=\"{xp:.1}\" y1=\"{:.1}\" y2=\"{bottom:.1}\" stroke=\"#999\" stroke-width=\"0.8\" stroke-dasharray=\"3 2\"/><text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\">{}</text>",
            top - 4.0,
            xp + 2.0,
            top - 6.0,
            xml_escape(p.label)
        );
    }
}

const ROW_H: f64 = 18.0;
const LABEL_W: f64 = 230.0;
const TEXT_W: f64 = 130.0;
/// The longest name drawn whole; longer ones keep their end (where names differ).
const NAME_CHARS: usize = 34;

fn short(name: &str) -> String {
    let n = name.chars().count();
    if n <= NAME_CHARS {
        name.to_owned()
    } else {
        let tail: String = name.chars().skip(n - (NAME_CHARS - 1)).collect();
        format!("…{tail}")
    }
}

/// The strip chart of `rows`, bins of `bin_s` seconds, with the phases' starts marked.
/// Every row shares one scale: a cell's shade is its calls over the busiest cell's, and a
/// bin without calls is left blank.
#[must_use]
pub fn strip_chart(
    title: &str,
    bin_s: f64,
    rows: &[StripRow<'_>],
    phases: &[Boundary<'_>],
) -> String {
    let bins = rows
        .iter()
        .map(|r| r.values.len())
        .max()
        .unwrap_or(0)
        .max(1);
    let busiest = rows
        .iter()
        .flat_map(|r| r.values.iter().copied())
        .max()
        .unwrap_or(0)
        .max(1);
    let x0 = LEFT + LABEL_W;
    let pw = W - RIGHT - x0 - TEXT_W;
    let span = bin_s * bins as f64;
    let x = |t: f64| x0 + (t / span).clamp(0.0, 1.0) * pw;
    let top = TOP + 16.0;
    let h = top + ROW_H * rows.len() as f64 + 34.0;
    let mut o = String::new();
    open(&mut o, title, h);
    let _ = write!(
        o,
        "<text x=\"{:.1}\" y=\"14\" class=\"tick\" text-anchor=\"end\">darkest cell: {busiest} calls in {} s</text>",
        W - RIGHT,
        fmt_num(bin_s)
    );
    let bottom = top + ROW_H * rows.len() as f64;
    phase_lines(&mut o, phases, (top, bottom), x);
    let cell = pw / bins as f64;
    for (i, r) in rows.iter().enumerate() {
        let y = top + ROW_H * i as f64;
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"end\"><title>{}</title>{}</text><rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{pw:.1}\" height=\"{:.1}\" fill=\"#f4f4f4\"/>",
            x0 - 8.0,
            y + 12.0,
            xml_escape(r.label),
            xml_escape(&short(r.label)),
            y + 2.0,
            ROW_H - 4.0
        );
        for (b, &v) in r.values.iter().enumerate() {
            if v == 0 {
                continue;
            }
            let shade = 0.15 + 0.85 * f64::from(v) / f64::from(busiest);
            let _ = write!(
                o,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{LIMIT}\" fill-opacity=\"{shade:.2}\"><title>{} calls at {}</title></rect>",
                x0 + cell * b as f64,
                y + 2.0,
                cell.max(0.6),
                ROW_H - 4.0,
                v,
                time_label(bin_s * b as f64)
            );
        }
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\">{} calls, {:.1} %</text>",
            x0 + pw + 8.0,
            y + 12.0,
            r.calls,
            r.share * 100.0
        );
    }
    strip_time_axis(&mut o, span, bottom, x);
    o.push_str("</svg>");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_name_keeps_its_end_and_an_empty_bin_draws_no_cell() {
        assert_eq!(short("short"), "short");
        let long = "permanent-errors-bucket-0123456789-abcdefghij";
        let s = short(long);
        assert_eq!(s.chars().count(), NAME_CHARS);
        assert!(s.ends_with("abcdefghij"));
        let svg = strip_chart(
            "t",
            10.0,
            &[StripRow {
                label: "b-1",
                calls: 3,
                share: 0.5,
                values: &[2, 0, 1],
            }],
            &[],
        );
        assert_eq!(svg.matches("calls at").count(), 2, "{svg}");
        assert!(svg.contains("darkest cell: 2 calls in 10 s"));
    }
}
