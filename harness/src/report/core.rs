//! The text report's section on Crossplane core's composite layer: its API requests by
//! verb and resource (its server-side applies that changed their object beside those that
//! changed nothing), its function calls and their mean latency, its breakers and the XRs
//! whose circuit left closed, and the XRs' time to Ready beside their slowest composed
//! resource's and the managed resources'.

use crate::predict::fmt_num;
use crate::result::RunResult;
use crate::result::core::CoreReport;

/// The section's lines (none for a run without XRs).
#[must_use]
pub fn lines(r: &RunResult) -> Vec<String> {
    let Some(c) = &r.core else {
        return Vec::new();
    };
    let mut out = vec![format!(
        "Crossplane core (User-Agent {:?}…): {} API requests, {} PATCHes (server-side applies): {} changed their object, {} changed nothing (no resourceVersion bump)",
        c.user_agent,
        c.requests,
        c.patches(),
        c.patches_changed,
        c.patches_no_op
    )];
    out.push("  requests    verb        resource".to_owned());
    for x in c.by_verb.iter().take(12) {
        let no_op = if x.verb == "patch" {
            format!("  ({} no-op)", x.no_op)
        } else {
            String::new()
        };
        out.push(format!(
            "  {:>8}    {:<10}  {}{no_op}",
            x.count, x.verb, x.resource
        ));
    }
    if c.by_verb.len() > 12 {
        out.push(format!("  … {} more (result.json)", c.by_verb.len() - 12));
    }
    let calls: Vec<String> = c
        .function_calls
        .iter()
        .map(|(f, n)| {
            let quantiles = match (
                c.function_quantile_s(f, 0.5),
                c.function_quantile_s(f, 0.99),
            ) {
                (Some(p50), Some(p99)) => format!(", p50 {}, p99 {}", fmt_ms(p50), fmt_ms(p99)),
                _ => String::new(),
            };
            match c.function_mean_s(f) {
                Some(s) => format!("{f} {n} (mean {}{quantiles})", fmt_ms(s)),
                None => format!("{f} {n}"),
            }
        })
        .collect();
    out.push(format!(
        "  function calls: {}",
        if calls.is_empty() {
            "none".to_owned()
        } else {
            calls.join(", ")
        }
    ));
    out.extend(latency_by_phase(c));
    for b in &c.breakers {
        out.push(format!(
            "  breaker {}: {} opens, {} closes; events {} allowed, {} dropped, {} half-open",
            b.xrd, b.opens, b.closes, b.allowed, b.dropped, b.half_open_allowed
        ));
    }
    out.extend(circuit_lines(c));
    let ready = c.xrs.iter().filter(|x| x.ready_s.is_some()).count();
    let q = |f: fn(&CoreReport, f64) -> Option<f64>, p: f64| {
        f(c, p).map_or_else(|| "-".to_owned(), |s| format!("{s:.2}s"))
    };
    out.push(format!(
        "  XRs: {ready} of {} Ready; time to Ready p50 {} p99 {}; slowest composed resource p50 {} p99 {}; stale {}",
        c.xrs.len(),
        q(CoreReport::ready_quantile, 0.5),
        q(CoreReport::ready_quantile, 0.99),
        q(CoreReport::composed_ready_quantile, 0.5),
        q(CoreReport::composed_ready_quantile, 0.99),
        c.stale.len()
    ));
    if r.ttr.count > 0 {
        let mr = |q: f64| {
            r.ttr
                .quantiles
                .iter()
                .find(|(x, _)| (*x - q).abs() < 1e-9)
                .map_or_else(|| "-".to_owned(), |(_, s)| format!("{s:.2}s"))
        };
        out.push(format!(
            "  beside the managed resources': time to Ready p50 {} p99 {} ({} resources)",
            mr(0.5),
            mr(0.99),
            r.ttr.count
        ));
    }
    out
}

/// Each phase's function latency, p50 and p99 per function (with its responses), when the
/// run had more than one phase and core's histogram was read per phase.
fn latency_by_phase(c: &CoreReport) -> Vec<String> {
    if c.phases.len() < 2 || c.phases.iter().all(|p| p.function_latency.is_empty()) {
        return Vec::new();
    }
    let mut out = vec!["  function latency by phase (p50 / p99, responses):".to_owned()];
    for p in &c.phases {
        let l = &p.function_latency;
        let parts: Vec<String> = l
            .responses
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(f, n)| {
                let q = |q| l.quantile_s(f, q).map_or_else(|| "-".to_owned(), fmt_ms);
                format!("{f} {} / {} ({n})", q(0.5), q(0.99))
            })
            .collect();
        out.push(format!(
            "    {}: {}",
            p.phase,
            if parts.is_empty() {
                "no responses".to_owned()
            } else {
                parts.join(", ")
            }
        ));
    }
    out
}

/// The most XRs whose circuit left closed the text report names one by one.
const NAMED_CIRCUITS: usize = 10;

/// The XRs whose circuit ever left closed, most time open first: each one's opens, its
/// time open and half-open, the source that triggered its opens and its spans.
fn circuit_lines(c: &CoreReport) -> Vec<String> {
    let (opened, closed) = c.circuits();
    if opened.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!(
        "  circuits that left closed: {} of {} XRs ({closed} stayed closed)",
        opened.len(),
        c.xrs.len()
    )];
    for (x, spans) in opened.iter().take(NAMED_CIRCUITS) {
        let half: f64 = spans
            .iter()
            .flat_map(|s| s.half_open_s.iter())
            .map(|[a, b]| b - a)
            .fold(0.0, |a, b| a + b);
        let mut by: Vec<&str> = Vec::new();
        for s in spans {
            if !by.contains(&s.triggered_by.as_str()) {
                by.push(&s.triggered_by);
            }
        }
        let shown: Vec<String> = spans
            .iter()
            .take(4)
            .map(|s| match s.closed_s {
                Some(e) => format!("{:.0}–{e:.0}s", s.opened_s),
                None => format!("{:.0}s–end", s.opened_s),
            })
            .collect();
        out.push(format!(
            "    {}: {} opens, open {:.1}s (half-open {half:.1}s of it), triggered by {}; open {}{}",
            x.name,
            x.opens,
            x.open_s,
            by.join(", "),
            shown.join(", "),
            if spans.len() > 4 { ", …" } else { "" }
        ));
    }
    if opened.len() > NAMED_CIRCUITS {
        out.push(format!(
            "    … {} more (result.json, core.open_spans)",
            opened.len() - NAMED_CIRCUITS
        ));
    }
    out
}

/// A latency in seconds as milliseconds to a tenth: "2.5 ms".
pub(super) fn fmt_ms(s: f64) -> String {
    format!("{} ms", fmt_num((s * 1e4).round() / 10.0))
}
