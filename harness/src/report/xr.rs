//! The HTML report's section on Crossplane core's composite layer (the text report's is
//! [`super::core`]): the breakers' strip chart (each XR whose circuit ever left closed: open
//! and half-open over time, the trigger named), core's API requests stacked on the
//! provider's against their bounds, function calls and latency, and the XRs' time to Ready
//! beside the managed resources'.

use std::fmt::Write as _;

use super::escape::xml_escape as esc;
use super::parts::{api_bands, heading, phase_bands, phase_starts, quantile_markers};
use super::strip::{Boundary, phase_lines};
use super::svg::{
    LEFT, LIMIT, Marker, RIGHT, Series, TOP, W, histogram, open, strip_time_axis, time_chart,
    time_label,
};
use crate::predict::fmt_num;
use crate::result::RunResult;
use crate::result::core::{CoreReport, OpenSpan, XrTiming};

/// The most XRs the strip chart draws; the rest are counted under it.
pub const MAX_ROWS: usize = 40;

const ROW_H: f64 = 18.0;
const LABEL_W: f64 = 200.0;
const TEXT_W: f64 = 250.0;
const OPEN: &str = LIMIT;
const HALF_OPEN: &str = "#e69f00";
const CLOSED: &str = "#e3efe3";

/// The section (nothing for a run without core).
pub fn section(o: &mut String, r: &RunResult) {
    let Some(c) = &r.core else {
        return;
    };
    o.push_str("<h2>Crossplane core: composite resources</h2>");
    let _ = write!(
        o,
        "<p class=\"sub\">{} API requests from core (User-Agent {}…), {} PATCHes (server-side applies): {} changed their object, {} changed nothing (no resourceVersion bump). {} XRs, {} function calls.</p>",
        c.requests,
        esc(&c.user_agent),
        c.patches(),
        c.patches_changed,
        c.patches_no_op,
        c.xrs.len(),
        c.total_function_calls()
    );
    requests_table(o, c);
    breakers(o, r, c);
    requests_charts(o, r, c);
    functions(o, c);
    xr_ttr(o, r, c);
}

fn requests_table(o: &mut String, c: &CoreReport) {
    o.push_str("<details><summary>core's requests by verb and resource</summary><table><tr><th>verb</th><th>resource</th><th>requests</th><th>of them no-op</th></tr>");
    for x in &c.by_verb {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&x.verb),
            esc(&x.resource),
            x.count,
            if x.verb == "patch" {
                x.no_op.to_string()
            } else {
                String::new()
            }
        );
    }
    o.push_str("</table></details>");
}

fn breakers(o: &mut String, r: &RunResult, c: &CoreReport) {
    let none = "No XR controller ran.";
    if !heading(o, "h3", "Circuit breakers", c.breakers.is_empty(), none) {
        return;
    }
    o.push_str("<table><tr><th>XR controller</th><th>opens</th><th>closes</th><th>events allowed</th><th>dropped</th><th>half-open probes</th></tr>");
    for b in &c.breakers {
        let _ = write!(
            o,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&b.xrd),
            b.opens,
            b.closes,
            b.allowed,
            b.dropped,
            b.half_open_allowed
        );
    }
    o.push_str("</table>");
    let (opened, closed) = c.circuits();
    if opened.is_empty() {
        let _ = write!(
            o,
            "<p class=\"sub\">Every XR's circuit stayed closed ({closed} XRs).</p>"
        );
        return;
    }
    let _ = write!(
        o,
        "<p class=\"sub\">One strip per XR whose circuit left closed ({} of {} XRs; the {closed} others stayed closed throughout), most time open first{}: red while open (its events dropped), amber while half-open (its next event passes as a probe), pale green closed; each strip names the source that triggered its opens (hover a span for its times). Dashed: where each phase starts.</p>",
        opened.len(),
        c.xrs.len(),
        if opened.len() > MAX_ROWS {
            format!(", the first {MAX_ROWS} drawn")
        } else {
            String::new()
        }
    );
    let starts = phase_starts(r);
    let end = c
        .ended_s
        .max(r.phases.iter().map(|p| p.end_s).fold(0.0, f64::max));
    o.push_str(&breaker_strip(&opened, end, &starts));
    if opened.len() > MAX_ROWS {
        let _ = write!(
            o,
            "<p class=\"sub\">… and {} more XRs whose circuit opened (their spans: result.json, <code>core.open_spans</code>).</p>",
            opened.len() - MAX_ROWS
        );
    }
}

/// The triggers of `spans`' opens, most frequent first, as one label.
fn triggers(spans: &[&OpenSpan]) -> String {
    let mut by: Vec<(&str, usize)> = Vec::new();
    for s in spans {
        let t = if s.triggered_by.is_empty() {
            "?"
        } else {
            s.triggered_by.as_str()
        };
        match by.iter_mut().find(|(x, _)| *x == t) {
            Some((_, n)) => *n += 1,
            None => by.push((t, 1)),
        }
    }
    by.sort_by_key(|b| std::cmp::Reverse(b.1));
    by.iter()
        .map(|(t, n)| {
            if by.len() == 1 {
                (*t).to_owned()
            } else {
                format!("{t} ×{n}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The strip chart of the circuits in `rows` (at most [`MAX_ROWS`] drawn) over `[0, end]`
/// seconds, the phases' starts marked.
#[must_use]
pub fn breaker_strip(
    rows: &[(&XrTiming, Vec<&OpenSpan>)],
    end: f64,
    phases: &[Boundary<'_>],
) -> String {
    let rows = &rows[..rows.len().min(MAX_ROWS)];
    let span = end.max(1.0);
    let x0 = LEFT + LABEL_W;
    let pw = W - RIGHT - x0 - TEXT_W;
    let x = |t: f64| x0 + (t / span).clamp(0.0, 1.0) * pw;
    let top = TOP + 18.0;
    let bottom = top + ROW_H * rows.len() as f64;
    let h = bottom + 34.0;
    let mut o = String::new();
    open(&mut o, "circuit state per XR over the run", h);
    // The legend.
    let mut lx = W - RIGHT - 330.0;
    for (label, color) in [("closed", CLOSED), ("open", OPEN), ("half-open", HALF_OPEN)] {
        let _ = write!(
            o,
            "<rect x=\"{lx:.1}\" y=\"5\" width=\"14\" height=\"10\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"14\" class=\"tick\">{label}</text>",
            lx + 18.0
        );
        lx += 30.0 + 7.0 * label.len() as f64;
    }
    phase_lines(&mut o, phases, (top, bottom), x);
    for (i, (xr, spans)) in rows.iter().enumerate() {
        let y = top + ROW_H * i as f64;
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"end\"><title>{}</title>{}</text><rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{pw:.1}\" height=\"{:.1}\" fill=\"{CLOSED}\"/>",
            x0 - 8.0,
            y + 12.0,
            esc(&xr.name),
            esc(&short(&xr.name, 30)),
            y + 2.0,
            ROW_H - 4.0
        );
        for s in spans {
            let until = s.closed_s.unwrap_or(end);
            let (a, b) = (x(s.opened_s), x(until));
            let _ = write!(
                o,
                "<rect x=\"{a:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{OPEN}\"><title>open {}–{}{}, triggered by {}</title></rect>",
                y + 2.0,
                (b - a).max(1.0),
                ROW_H - 4.0,
                time_label(s.opened_s),
                time_label(until),
                if s.closed_s.is_none() {
                    " (still open at its delete or the end)"
                } else {
                    ""
                },
                esc(if s.triggered_by.is_empty() {
                    "an unknown source"
                } else {
                    &s.triggered_by
                })
            );
            for [from, to] in &s.half_open_s {
                let (a, b) = (x(*from), x(*to));
                let _ = write!(
                    o,
                    "<rect x=\"{a:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{HALF_OPEN}\"><title>half-open {}–{}</title></rect>",
                    y + 2.0,
                    (b - a).max(0.8),
                    ROW_H - 4.0,
                    time_label(*from),
                    time_label(*to)
                );
            }
        }
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\">{}× open, {} s · {}</text>",
            x0 + pw + 8.0,
            y + 12.0,
            xr.opens,
            fmt_num((xr.open_s * 10.0).round() / 10.0),
            esc(&short(&triggers(spans), 26))
        );
    }
    strip_time_axis(&mut o, span, bottom, x);
    let _ = write!(
        o,
        "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"end\">time since the run started</text>",
        x0 + pw,
        bottom + 30.0
    );
    o.push_str("</svg>");
    o
}

/// `name` cut to `chars`, keeping its end (where XR and resource names differ).
fn short(name: &str, chars: usize) -> String {
    let n = name.chars().count();
    if n <= chars {
        name.to_owned()
    } else {
        let tail: String = name.chars().skip(n - (chars - 1)).collect();
        format!("…{tail}")
    }
}

/// Core's window W for its requests and its bound in it, over the run and per phase, from
/// the plan's predictions (`core/api-requests/{W}s`, `core/phase/{p}/api-requests/{W}s`) or
/// the limit of the scenario's `coreApiRequests` check.
/// Core's window (s), its bound over the run, and each phase's bound by the phase's name.
type CoreBounds = (f64, f64, Vec<(String, f64)>);

fn core_bounds(r: &RunResult) -> Option<CoreBounds> {
    let run = r.predictions.iter().find_map(|p| {
        let w =
            p.id.strip_prefix("core/api-requests/")?
                .strip_suffix('s')?
                .parse::<f64>()
                .ok()?;
        Some((w, p.value))
    })?;
    let limit = r
        .verdicts
        .iter()
        .find(|v| v.check == "coreApiRequests" && v.phase.is_none())
        .map_or(run.1, |v| v.limit);
    let phases = r
        .predictions
        .iter()
        .filter_map(|p| {
            let rest = p.id.strip_prefix("core/phase/")?;
            let (phase, w) = rest.split_once("/api-requests/")?;
            let w = w.strip_suffix('s')?.parse::<f64>().ok()?;
            ((w - run.0).abs() < 1e-9).then(|| (phase.to_owned(), p.value))
        })
        .collect();
    Some((run.0, limit, phases))
}

fn requests_charts(o: &mut String, r: &RunResult, c: &CoreReport) {
    if c.requests_per_bin.is_empty() {
        return;
    }
    let bin = c.bin_s;
    let n = c.requests_per_bin.len().max(r.timeline.api_requests.len());
    let at = |v: &[u32], i: usize| f64::from(v.get(i).copied().unwrap_or(0));
    let provider: Vec<f64> = (0..n).map(|i| at(&r.timeline.api_requests, i)).collect();
    let core: Vec<f64> = (0..n).map(|i| at(&c.requests_per_bin, i)).collect();
    let total: Vec<f64> = provider.iter().zip(&core).map(|(a, b)| a + b).collect();
    let bands = api_bands(r);
    let _ = write!(
        o,
        "<h3>API requests: core stacked on the provider</h3><p class=\"sub\">Requests per {} s bin: the provider's (purple), core's (teal) and both together (black, the API server's load from the two). Red: the provider's own bound in any 1 s window (docs/budget.md §2.5), for its line only; core's bound is per window of the coreApiRequests check, below.</p>",
        fmt_num(bin)
    );
    o.push_str(&time_chart(
        "API requests per bin, provider and core",
        "requests per bin",
        bin,
        &[
            Series {
                label: "provider",
                color: "#6a3d9a",
                values: &provider,
                over: None,
            },
            Series {
                label: "core",
                color: "#1b9e77",
                values: &core,
                over: None,
            },
            Series {
                label: "provider + core",
                color: "#222",
                values: &total,
                over: None,
            },
        ],
        &bands,
        &[],
    ));
    let Some((w, limit, per_phase)) = core_bounds(r) else {
        return;
    };
    // Core's requests in consecutive windows of W (as many bins as fit in one).
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let k = ((w / bin).round() as usize).max(1);
    let wide = bin * k as f64;
    let per_w: Vec<f64> = core.chunks(k).map(|ch| ch.iter().sum()).collect();
    let bands = phase_bands(r, |p| {
        let phase_limit = per_phase.iter().find(|(ph, _)| *ph == p.name);
        (None, Some(phase_limit.map_or(limit, |(_, v)| *v)))
    });
    let _ = write!(
        o,
        "<p class=\"sub\">Core's requests per {} s (consecutive windows; the check slides its window over every start, so its observed maximum can be above every bar here) against its bound in any {} s window (red: the phase's prediction where the plan makes one, else the run's: docs/budget.md §12). Most in any window: {}.</p>",
        fmt_num(wide),
        fmt_num(w),
        if c.times_us.is_empty() {
            format!(
                "{} in one of these windows (the sliding maximum is in the assertions)",
                fmt_num(per_w.iter().copied().fold(0.0, f64::max))
            )
        } else {
            c.max_in_window(std::time::Duration::from_secs_f64(w))
                .to_string()
        }
    );
    o.push_str(&time_chart(
        &format!("core's API requests per {} s", fmt_num(wide)),
        &format!("requests per {} s", fmt_num(wide)),
        wide,
        &[Series {
            label: "core",
            color: "#1b9e77",
            values: &per_w,
            over: None,
        }],
        &bands,
        &[],
    ));
}

/// A latency in milliseconds to a tenth, or `-`.
fn latency_ms(s: Option<f64>) -> String {
    s.map_or_else(|| "-".to_owned(), super::core::fmt_ms)
}

fn functions(o: &mut String, c: &CoreReport) {
    let none = "No function was called.";
    if !heading(o, "h3", "Function calls", c.function_calls.is_empty(), none) {
        return;
    }
    o.push_str("<table><tr><th>function</th><th>calls</th><th>responses</th><th>mean latency</th><th>p50</th><th>p99</th>");
    for p in &c.phases {
        let _ = write!(o, "<th>calls in {}</th>", esc(&p.phase));
    }
    o.push_str("</tr>");
    for (f, n) in &c.function_calls {
        let _ = write!(
            o,
            "<tr><td>{}</td><td class=\"n\">{n}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>",
            esc(f),
            c.function_responses.get(f).copied().unwrap_or(0),
            latency_ms(c.function_mean_s(f))
        );
        for q in [0.5, 0.99] {
            let _ = write!(
                o,
                "<td class=\"n\">{}</td>",
                latency_ms(c.function_quantile_s(f, q))
            );
        }
        for p in &c.phases {
            let _ = write!(
                o,
                "<td class=\"n\">{}</td>",
                p.function_calls.get(f).copied().unwrap_or(0)
            );
        }
        o.push_str("</tr>");
    }
    o.push_str("</table>");
    latency_by_phase(o, c);
}

/// Each phase's function latency (core's histogram read at the phase's start and end), when
/// the run had more than one phase and it was read per phase.
fn latency_by_phase(o: &mut String, c: &CoreReport) {
    if c.phases.len() < 2 || c.phases.iter().all(|p| p.function_latency.is_empty()) {
        return;
    }
    o.push_str("<p class=\"sub\">Function latency by phase, from core's histogram read as each phase started and ended.</p>");
    o.push_str("<table><tr><th>phase</th><th>function</th><th>responses</th><th>mean latency</th><th>p50</th><th>p99</th></tr>");
    for p in &c.phases {
        let l = &p.function_latency;
        for (f, n) in l.responses.iter().filter(|(_, n)| **n > 0) {
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{n}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(&p.phase),
                esc(f),
                latency_ms(l.mean_s(f)),
                latency_ms(l.quantile_s(f, 0.5)),
                latency_ms(l.quantile_s(f, 0.99))
            );
        }
    }
    o.push_str("</table>");
}

fn xr_ttr(o: &mut String, r: &RunResult, c: &CoreReport) {
    let xr = c.xr_ttr();
    let none = "No XR became Ready in this run.";
    if !heading(o, "h3", "XR time to Ready", xr.count == 0, none) {
        return;
    }
    let mut markers = quantile_markers(&xr.quantiles, "XR ");
    for (q, v) in r
        .ttr
        .quantiles
        .iter()
        .filter(|(q, _)| *q == 0.5 || *q == 0.99)
    {
        markers.push(Marker {
            label: format!("MR p{}", q * 100.0),
            value: *v,
            color: "#1f77b4",
            dashed: false,
        });
    }
    for v in r.verdicts.iter().filter(|v| v.check == "xrTimeToReady") {
        if v.limit.is_finite() {
            markers.push(Marker {
                label: format!("limit {} s", fmt_num(v.limit)),
                value: v.limit,
                color: LIMIT,
                dashed: false,
            });
        }
    }
    let _ = write!(
        o,
        "<p class=\"sub\">{} of {} XRs Ready · min {} s · mean {} s · max {} s. Black dashed: the XRs' quantiles; blue: the managed resources' p50 and p99 (their own histogram is under Time to Ready above); red: the xrTimeToReady limit. The slowest composed resource of each XR: p50 {} p99 {}.</p>",
        xr.count,
        c.xrs.len(),
        fmt_num(xr.min_s),
        fmt_num(xr.mean_s),
        fmt_num(xr.max_s),
        c.composed_ready_quantile(0.5)
            .map_or_else(|| "-".to_owned(), |s| format!("{} s", fmt_num(s))),
        c.composed_ready_quantile(0.99)
            .map_or_else(|| "-".to_owned(), |s| format!("{} s", fmt_num(s)))
    );
    o.push_str(&histogram(
        "XR time to Ready (XRs per bucket, seconds)",
        &xr.buckets,
        &markers,
    ));
}
