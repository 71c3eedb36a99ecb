//! The `callsPerReconcile` verdict: a run's mean calls per reconcile, per kind and path,
//! against the most one reconcile made when the provider was calibrated.

use super::model::{RunResult, Verdict};
use crate::measure::per_reconcile::{CallStats, KindCalls, Path};
use crate::predict::fmt_num;
use crate::scenario::Scenario;

/// One compared pair.
struct Pair {
    label: String,
    mean: f64,
    limit: f64,
}

fn stats<'a>(k: &'a KindCalls, path: &str) -> Option<&'a CallStats> {
    Path::ALL
        .iter()
        .find(|p| p.as_str() == path)
        .and_then(|p| k.path(*p))
}

/// The verdict; `extra` calls are allowed above the calibration's most.
pub(super) fn verdict(
    s: &Scenario,
    res: &RunResult,
    (kind, path, extra): (Option<&str>, Option<&str>, f64),
    base: Verdict,
) -> Verdict {
    let formula = "mean calls per reconcile of each kind and path, calls answered 429 apart, ≤ the most one reconcile made in the calibration + extra".to_owned();
    let fail = |note: String| Verdict {
        formula: formula.clone(),
        predicted: f64::NAN,
        limit: f64::NAN,
        observed: f64::NAN,
        margin: f64::NAN,
        pass: false,
        note: Some(note),
        ..base.clone()
    };
    let Some(per) = &res.calls_per_reconcile else {
        return fail("not measured: calls per reconcile need mock-apiserver's journal of the provider's status writes".to_owned());
    };
    let mut pairs: Vec<Pair> = Vec::new();
    for (gk, detail) in &s.call_detail {
        let label = gk.to_string();
        if kind.is_some_and(|k| k != label) || detail.measured.is_empty() {
            continue;
        }
        let Some(run) = per.kinds.iter().find(|k| k.kind == label) else {
            continue;
        };
        for (p, m) in &detail.measured {
            if path.is_some_and(|want| want != p) {
                continue;
            }
            // Reconciles of a deleted resource that find it gone end without a status
            // write (a requeue in the creation grace, a finalizer's removal): a span of that
            // path holds as many of them as timing makes, not as the provider's version
            // does. Compared only when asked for by name.
            if p == Path::Deleting.as_str() && path.is_none() {
                continue;
            }
            if p == "connect" {
                // Connect's calls name no resource: the provider-wide mean is exact.
                if per.reconciles > 0 {
                    pairs.push(Pair {
                        label: format!("{label} connect (every kind)"),
                        mean: per.connect_calls as f64 / per.reconciles as f64,
                        limit: m.max as f64 + extra,
                    });
                }
                continue;
            }
            if let Some(st) = stats(run, p) {
                pairs.push(Pair {
                    label: format!("{label} {p}"),
                    mean: st.mean,
                    limit: m.max as f64 + extra,
                });
            }
        }
    }
    let Some(worst) = pairs
        .iter()
        .min_by(|x, y| (x.limit - x.mean).total_cmp(&(y.limit - y.mean)))
    else {
        return fail(format!(
            "nothing to compare: no kind{}{} has both a calibration and reconciles in this run",
            kind.map_or(String::new(), |k| format!(" {k}")),
            path.map_or(String::new(), |p| format!(" on path {p}"))
        ));
    };
    let shown = |p: &Pair| {
        format!(
            "{} {} ≤ {}",
            p.label,
            fmt_num((p.mean * 100.0).round() / 100.0),
            fmt_num(p.limit)
        )
    };
    let above: Vec<String> = pairs
        .iter()
        .filter(|p| p.mean > p.limit + 1e-9)
        .map(shown)
        .collect();
    let over = above.len();
    let note = if above.is_empty() {
        format!(
            "0 of {} kind-path pairs above their calibration; closest: {}",
            pairs.len(),
            shown(worst)
        )
    } else {
        format!(
            "{over} of {} kind-path pairs above their calibration: {}",
            pairs.len(),
            above.join(", ")
        )
    };
    // Calls the cloud answered 429 are no path's cost: the throttled reconcile retries
    // later, and its retry is the path (docs/budget.md §10.4).
    let note = if per.throttled > 0 {
        format!(
            "{note}; {} calls answered 429 kept apart (not a path's cost)",
            per.throttled
        )
    } else {
        note
    };
    Verdict {
        formula,
        inputs: format!("extra = {}", fmt_num(extra)),
        predicted: worst.limit - extra,
        limit: worst.limit,
        observed: worst.mean,
        margin: worst.limit - worst.mean,
        pass: over == 0,
        note: Some(note),
        ..base
    }
}
