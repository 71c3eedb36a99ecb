//! The text report's section on Crossplane core's composite layer: its API requests by
//! verb and resource, its function calls, its breakers, and the XRs' time to Ready beside
//! their slowest composed resource's.

use crate::result::RunResult;

/// The section's lines (none for a run without XRs).
#[must_use]
pub fn lines(r: &RunResult) -> Vec<String> {
    let Some(c) = &r.core else {
        return Vec::new();
    };
    let mut out = vec![format!(
        "Crossplane core (User-Agent {:?}…): {} API requests, {} PATCHes (server-side applies)",
        c.user_agent,
        c.requests,
        c.patches()
    )];
    out.push("  requests    verb        resource".to_owned());
    for x in c.by_verb.iter().take(12) {
        out.push(format!(
            "  {:>8}    {:<10}  {}",
            x.count, x.verb, x.resource
        ));
    }
    if c.by_verb.len() > 12 {
        out.push(format!("  … {} more (result.json)", c.by_verb.len() - 12));
    }
    let calls: Vec<String> = c
        .function_calls
        .iter()
        .map(|(f, n)| format!("{f} {n}"))
        .collect();
    out.push(format!(
        "  function calls: {}",
        if calls.is_empty() {
            "none".to_owned()
        } else {
            calls.join(", ")
        }
    ));
    for b in &c.breakers {
        out.push(format!(
            "  breaker {}: {} opens, {} closes; events {} allowed, {} dropped, {} half-open",
            b.xrd, b.opens, b.closes, b.allowed, b.dropped, b.half_open_allowed
        ));
    }
    let ready = c.xrs.iter().filter(|x| x.ready_s.is_some()).count();
    let q = |f: fn(&crate::result::core::CoreReport, f64) -> Option<f64>, p: f64| {
        f(c, p).map_or_else(|| "-".to_owned(), |s| format!("{s:.2}s"))
    };
    out.push(format!(
        "  XRs: {ready} of {} Ready; time to Ready p50 {} p99 {}; slowest composed resource p50 {} p99 {}; stale {}",
        c.xrs.len(),
        q(crate::result::core::CoreReport::ready_quantile, 0.5),
        q(crate::result::core::CoreReport::ready_quantile, 0.99),
        q(crate::result::core::CoreReport::composed_ready_quantile, 0.5),
        q(crate::result::core::CoreReport::composed_ready_quantile, 0.99),
        c.stale.len()
    ));
    out
}
