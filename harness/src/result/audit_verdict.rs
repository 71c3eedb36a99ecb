//! Verdicts of the audit's checks (`orphans`, `duplicates`, `stuck`, `lost`): at the end of
//! one phase, or the worst of every phase's end and the run's end.

use std::collections::BTreeSet;

use super::kills::PhaseAudit;
use super::model::{RunResult, Verdict};
use crate::measure::Audit;
use crate::scenario::{Assertion, Check, Scenario};

/// Names listed in a verdict's note before "and N more".
const NAMED: usize = 10;

/// Which of the audit's lists a check counts.
fn found<'a>(check: &Check, audit: &'a Audit) -> Vec<&'a str> {
    match check {
        Check::Orphans { .. } => audit.orphans.iter().map(String::as_str).collect(),
        Check::Duplicates { .. } => audit.duplicates.iter().map(|(n, _)| n.as_str()).collect(),
        Check::Stuck { .. } => audit.stuck.iter().map(String::as_str).collect(),
        Check::Lost { .. } => audit.lost.iter().map(String::as_str).collect(),
        _ => Vec::new(),
    }
}

fn named(names: &[&str]) -> String {
    let mut s = names
        .iter()
        .take(NAMED)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > NAMED {
        s.push_str(&format!(" and {} more", names.len() - NAMED));
    }
    s
}

/// The verdict of an audit check with limit `max`; `None` for other checks.
#[must_use]
pub(super) fn audit_verdict(
    s: &Scenario,
    res: &RunResult,
    audits: &[PhaseAudit],
    a: &Assertion,
) -> Option<Verdict> {
    let (check, max) = match &a.check {
        Check::Orphans { max }
        | Check::Duplicates { max }
        | Check::Stuck { max, .. }
        | Check::Lost { max } => (check_str(&a.check), *max),
        _ => return None,
    };
    let mut places: Vec<(String, Vec<&str>)> = match a.phase {
        Some(i) => audits
            .iter()
            .filter(|p| p.phase == s.phases[i].name)
            .map(|p| (format!("end of {}", p.phase), found(&a.check, &p.audit)))
            .collect(),
        None => audits
            .iter()
            .map(|p| (format!("end of {}", p.phase), found(&a.check, &p.audit)))
            .chain(std::iter::once((
                "end of the run".to_owned(),
                found(&a.check, &res.audit),
            )))
            .collect(),
    };
    let interrupted: BTreeSet<&str> = res
        .kills
        .iter()
        .flat_map(|k| k.interrupted_creates.iter().map(String::as_str))
        .collect();
    let allowed: Vec<&str> = match a.check {
        Check::Stuck {
            allow_interrupted: true,
            ..
        } => {
            let mut allowed = BTreeSet::new();
            for (_, names) in &mut places {
                names.retain(|n| {
                    let ok = interrupted.contains(n);
                    if ok {
                        allowed.insert(*n);
                    }
                    !ok
                });
            }
            allowed.into_iter().collect()
        }
        _ => Vec::new(),
    };
    // The worst place; the latest of equals.
    let worst = places.iter().max_by_key(|(_, n)| n.len());
    let (observed, note) = match worst {
        None => (
            f64::NAN,
            "no audit: the phase did not meet its `until`".to_owned(),
        ),
        Some(_) if places.iter().all(|(_, n)| n.is_empty()) => (
            0.0,
            format!(
                "none in {} audit{} (the end of each phase that met its `until`, and of the run)",
                places.len(),
                if places.len() == 1 { "" } else { "s" }
            ),
        ),
        Some((at, names)) => (names.len() as f64, format!("{at}: {}", named(names))),
    };
    let mut note = note;
    if matches!(a.check, Check::Stuck { .. }) && !interrupted.is_empty() {
        let interrupted: Vec<&str> = interrupted.into_iter().collect();
        note.push_str(&format!(
            "; the kills interrupted {} creates between external-create-pending and its outcome ({}): crossplane-runtime v2.4 leaves each of them stuck (path P5, \"cannot determine creation result\") until a human removes the annotation",
            interrupted.len(),
            named(&interrupted)
        ));
        if !allowed.is_empty() {
            note.push_str(&format!(
                "; allowed (allowInterrupted), {} of them still carry the incomplete stamp: {}",
                allowed.len(),
                named(&allowed)
            ));
        }
    }
    let limit = max as f64;
    Some(Verdict {
        phase: a.phase.map(|i| s.phases[i].name.clone()),
        formula: format!("{check} ≤ max, at the end of each phase and of the run"),
        inputs: format!("max = {max}"),
        note: Some(note),
        ..Verdict::at_most(&a.name, check, limit, observed)
    })
}

fn check_str(c: &Check) -> &'static str {
    match c {
        Check::Orphans { .. } => "orphans",
        Check::Duplicates { .. } => "duplicates",
        Check::Stuck { .. } => "stuck",
        _ => "lost",
    }
}
