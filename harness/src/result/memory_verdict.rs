//! The `memoryGrowth` verdict: every sampled component's growth from the end of the warm-up
//! to the end, against a limit in percent.

use super::model::Verdict;
use super::observe::Observations;
use crate::measure::{Growth, growth, retained_by_design, shown_only};
use crate::predict::fmt_num;
use crate::scenario::{Assertion, Scenario};

/// The span a `memoryGrowth` check measures: its phase, or from the end of the first phase
/// (the warm-up) to the end of the run.
fn span(s: &Scenario, obs: &Observations, a: &Assertion) -> Option<(u64, u64)> {
    match a.phase {
        Some(i) => obs
            .phases
            .iter()
            .find(|p| p.name == s.phases[i].name)
            .map(|p| (p.start_us, p.end_us)),
        None => obs.phases.first().map(|p| (p.end_us, obs.duration_us)),
    }
}

fn describe(g: &Growth) -> String {
    let (scale, unit) = if g.component.ends_with("_bytes") {
        (1.0 / 1_048_576.0, " MiB")
    } else {
        (1.0, "")
    };
    format!(
        "{} {}{unit} → {}{unit} ({:+.2} %, peak {}{unit})",
        g.component,
        fmt_num(g.from * scale),
        fmt_num(g.to * scale),
        g.percent,
        fmt_num(g.peak * scale)
    )
}

/// The verdict: the largest growth among the components not retained by design.
#[must_use]
pub(super) fn memory_verdict(
    s: &Scenario,
    obs: &Observations,
    a: &Assertion,
    max_percent: f64,
) -> Verdict {
    let grown = span(s, obs, a).map_or_else(Vec::new, |(from, to)| growth(&obs.memory, from, to));
    let sampled: Vec<&str> = grown.iter().map(|g| g.component.as_str()).collect();
    let (shown, judged): (Vec<&Growth>, Vec<&Growth>) = grown
        .iter()
        .partition(|g| shown_only(&g.component, &sampled));
    let (asserted, by_design): (Vec<&Growth>, Vec<&Growth>) = judged
        .into_iter()
        .partition(|g| !retained_by_design(&g.component));
    let observed = asserted.iter().map(|g| g.percent).fold(f64::NAN, f64::max);
    let mut note = if asserted.is_empty() {
        "no memory samples in the span: nothing was measured".to_owned()
    } else {
        asserted
            .iter()
            .map(|g| describe(g))
            .collect::<Vec<_>>()
            .join("; ")
    };
    if !shown.is_empty() {
        note.push_str(&format!(
            "; not asserted, it holds the journals and the pages the allocator keeps: {}",
            shown
                .iter()
                .map(|g| describe(g))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    if !by_design.is_empty() {
        note.push_str(&format!(
            "; not asserted, they keep every request for the measurements: {}",
            by_design
                .iter()
                .map(|g| describe(g))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    Verdict {
        formula: "(value at the end − value at the end of the warm-up) / value at the end of the warm-up ≤ max %"
            .to_owned(),
        inputs: format!("max = {max_percent} %"),
        predicted: 0.0,
        note: Some(note),
        ..Verdict::at_most(&a.name, "memoryGrowth", max_percent, observed)
    }
}
