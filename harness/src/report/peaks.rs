//! The busiest-windows section: each phase's busiest windows against their hard bound, a
//! hold's tolerance and the assertions' limits, with every window above a limit that no
//! assertion checks flagged on its bar and listed under the chart.

use std::fmt::Write as _;

use super::escape::xml_escape as esc;
use super::svg::{PeakRow, peaks_chart};
use crate::predict::fmt_num;
use crate::result::RunResult;

fn prediction_value(r: &RunResult, id: &str) -> Option<f64> {
    r.predictions.iter().find(|p| p.id == id).map(|p| p.value)
}

/// One row per phase and window, with the bound (`PHASE/cloud-calls/Ws`), the tolerance
/// (`PHASE/steady-max-conditional/Ws`, else `PHASE/steady-max/Ws`) and the assertions' limit.
pub(super) fn rows(r: &RunResult) -> Vec<PeakRow<'_>> {
    r.phases
        .iter()
        .flat_map(|p| {
            p.peaks.iter().map(move |k| {
                let w = fmt_num(k.window_s);
                let bound = prediction_value(r, &format!("{}/cloud-calls/{w}s", p.name))
                    .unwrap_or(f64::INFINITY);
                let checked = asserted_limit(r, &p.name, k.window_s);
                PeakRow {
                    phase: &p.name,
                    window_s: k.window_s,
                    observed: k.count as f64,
                    bound,
                    tolerance: prediction_value(
                        r,
                        &format!("{}/steady-max-conditional/{w}s", p.name),
                    )
                    .or_else(|| prediction_value(r, &format!("{}/steady-max/{w}s", p.name))),
                    asserted: checked.filter(|a| *a < bound),
                    checked,
                }
            })
        })
        .collect()
}

/// The tightest upper limit that an assertion on every cloud call puts on `phase`'s busiest
/// window of W (a run-wide one, or one of this phase).
fn asserted_limit(r: &RunResult, phase: &str, window_s: f64) -> Option<f64> {
    r.verdicts
        .iter()
        .filter(|v| v.upper && v.calls_window_s == Some(window_s))
        .filter(|v| v.phase.as_deref().is_none_or(|p| p == phase))
        .map(|v| v.limit)
        .filter(|l| l.is_finite())
        .min_by(f64::total_cmp)
}

/// One line per window above a limit that no assertion checks.
pub(super) fn unasserted_lines(rows: &[PeakRow<'_>]) -> Vec<String> {
    rows.iter()
        .filter_map(|row| {
            let (limit, flag) = row.unasserted()?;
            let what = if flag.starts_with("above bound") {
                "its hard bound"
            } else {
                "its tolerance"
            };
            Some(format!(
                "{} per {} s, {} calls against {what} of {}",
                row.phase,
                fmt_num(row.window_s),
                fmt_num(row.observed),
                fmt_num(limit)
            ))
        })
        .collect()
}

/// The section: heading, legend text, chart, and the windows flagged.
pub(super) fn section(o: &mut String, r: &RunResult) {
    let rows = rows(r);
    if rows.is_empty() {
        return;
    }
    o.push_str("<h2>Busiest windows against their bounds</h2><p class=\"sub\">The most cloud calls in any closed window of 1 s and 10 s (and each asserted window) per phase; red mark: the hard bound; dashed green: a hold's statistical tolerance (docs/budget.md §2, §3.5, §3.6). A window above a limit that no assertion checks is flagged in amber: the run passes it, but the model did not expect it.</p>");
    o.push_str(&peaks_chart("busiest windows (cloud calls)", &rows));
    let lines = unasserted_lines(&rows);
    if !lines.is_empty() {
        let _ = write!(
            o,
            "<p class=\"flagged\">Above a predicted limit, not asserted: {}. A steadyRate assertion on the phase (for a tolerance) or a cloudCalls assertion with the window (for a bound) would check it.</p>",
            esc(&lines.join("; "))
        );
    }
}
