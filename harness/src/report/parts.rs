//! Pieces of the HTML report that the provider's sections and the XR section both draw:
//! a section's heading (or the line that says it has nothing), the phases' bands (the
//! API-request ones) and starts, and a time-to-Ready histogram's quantile markers.

use std::fmt::Write as _;

use super::strip::Boundary;
use super::svg::{Marker, PhaseBand};
use crate::result::{PhaseResult, RunResult};

/// Writes the heading `<TAG>TITLE</TAG>`, and when the section is `empty`, the line `none`
/// in its place; whether the section has anything to show.
pub(super) fn heading(o: &mut String, tag: &str, title: &str, empty: bool, none: &str) -> bool {
    let _ = write!(o, "<{tag}>{title}</{tag}>");
    if empty {
        let _ = write!(o, "<p class=\"sub\">{none}</p>");
    }
    !empty
}

/// Each phase's band for a chart of the provider's API requests per second, with the
/// phase's bound on them where it has one.
pub(super) fn api_bands(r: &RunResult) -> Vec<PhaseBand<'_>> {
    phase_bands(r, |p| {
        (
            None,
            p.api_bound_per_s.is_finite().then_some(p.api_bound_per_s),
        )
    })
}

/// Each phase's band for a time chart, with the (expected, limit) lines `lines` gives it.
pub(super) fn phase_bands(
    r: &RunResult,
    lines: impl Fn(&PhaseResult) -> (Option<f64>, Option<f64>),
) -> Vec<PhaseBand<'_>> {
    r.phases
        .iter()
        .map(|p| {
            let (expected, limit) = lines(p);
            PhaseBand {
                label: &p.name,
                start: p.start_s,
                end: p.end_s,
                expected,
                limit,
            }
        })
        .collect()
}

/// Where each phase starts, for a strip chart's dashed lines.
pub(super) fn phase_starts(r: &RunResult) -> Vec<Boundary<'_>> {
    r.phases
        .iter()
        .map(|p| Boundary {
            label: &p.name,
            at: p.start_s,
        })
        .collect()
}

/// The observed quantiles up to p99 of a time-to-Ready histogram, black dashed markers
/// labelled `{prefix}p50`, `{prefix}p90`, ….
pub(super) fn quantile_markers(quantiles: &[(f64, f64)], prefix: &str) -> Vec<Marker> {
    quantiles
        .iter()
        .filter(|(q, _)| *q <= 0.99)
        .map(|(q, v)| Marker {
            label: format!("{prefix}p{}", q * 100.0),
            value: *v,
            color: "#333",
            dashed: true,
        })
        .collect()
}
