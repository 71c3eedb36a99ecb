//! The report's charts: calls, throttles and API requests over time against their bands
//! and limits, the top offenders' strips, and time to Ready.

use std::fmt::Write as _;

use crate::predict::fmt_num;
use crate::report::escape::xml_escape as esc;
use crate::report::parts::{api_bands, heading, phase_bands, phase_starts, quantile_markers};
use crate::report::strip::{StripRow, strip_chart};
use crate::report::svg::{
    Level, Marker, PhaseBand, Series, bins_over_limit, histogram, time_chart,
};
use crate::result::RunResult;

pub(super) fn charts(o: &mut String, r: &RunResult) {
    let per_second = |v: &[u32]| -> Vec<f64> { v.iter().map(|&x| f64::from(x)).collect() };
    let calls = per_second(&r.timeline.cloud_calls);
    let thr = per_second(&r.timeline.throttles);
    let api = per_second(&r.timeline.api_requests);
    let bin = r.timeline.bin_s;
    let asserted = |check: &str, w: f64| {
        r.verdicts
            .iter()
            .any(|v| v.check == check && v.name.contains(&format!("per {}s", fmt_num(w))))
    };
    let call_bands = phase_bands(r, |p| {
        (
            p.expected_calls_per_s
                .is_finite()
                .then_some(p.expected_calls_per_s * bin),
            p.bound_per_s.is_finite().then_some(p.bound_per_s),
        )
    });
    o.push_str("<h2>Cloud calls per second against the budget band</h2><p class=\"sub\">Per phase, the band runs from the expected call rate (dashed green: steady polls plus the phase's backlog spread over its expected length) to the hard bound for any 1 s window (red). A bound far above the calls is drawn above a marked break of the axis. Phases shaded.");
    if !asserted("cloudCalls", 1.0) {
        o.push_str(
            " No assertion checks the 1 s bound in this scenario; it is drawn for reference.",
        );
    }
    let quota_levels = quota_levels(r, bin);
    if !quota_levels.is_empty() {
        let _ = write!(
            o,
            " Brown: each account's cloud quota, its refill rate per {} s bin (dashed) and its burst (dotted, where it fits); the calls drawn are every account's together.",
            fmt_num(bin)
        );
    }
    o.push_str("</p>");
    o.push_str(&time_chart(
        "cloud calls / s",
        "calls per second",
        bin,
        &[
            Series {
                label: "calls",
                color: "#1f4e79",
                values: &calls,
                over: Some(over_flag(asserted("cloudCalls", 1.0))),
            },
            Series {
                label: "throttled (429)",
                color: "#d2691e",
                values: &thr,
                over: None,
            },
        ],
        &call_bands,
        &quota_levels,
    ));
    seconds_over(
        o,
        &calls,
        bin,
        &call_bands,
        "cloud calls",
        asserted("cloudCalls", 1.0),
    );
    let api_bands = api_bands(r);
    o.push_str("<h2>API-server requests from the provider</h2>");
    o.push_str(&api_caption(r));
    o.push_str(&time_chart(
        "API requests / s",
        "requests per second",
        bin,
        &[Series {
            label: "requests",
            color: "#6a3d9a",
            values: &api,
            over: Some(over_flag(asserted("apiRequests", 1.0))),
        }],
        &api_bands,
        &[],
    ));
    seconds_over(
        o,
        &api,
        bin,
        &api_bands,
        "API requests",
        asserted("apiRequests", 1.0),
    );
    crate::report::peaks::section(o, r);
    ttr(o, r);
}

/// The API chart's caption: the formula of the bound that drew its red line, phase by phase
/// as the plan computed it (one limiter or several, a restart's fresh bursts), so the caption
/// and the line come from one prediction.
fn api_caption(r: &RunResult) -> String {
    let mut by: Vec<(&str, Vec<&str>)> = Vec::new();
    for p in r.phases.iter().filter(|p| p.api_bound_per_s.is_finite()) {
        match by.iter_mut().find(|(f, _)| *f == p.api_bound_formula) {
            Some((_, phases)) => phases.push(&p.name),
            None => by.push((&p.api_bound_formula, vec![&p.name])),
        }
    }
    let lines: Vec<String> = by
        .iter()
        .map(|(f, phases)| {
            let f = if f.is_empty() {
                "(the plan's bound; its formula is not in this result)"
            } else {
                f
            };
            if by.len() == 1 {
                esc(f)
            } else {
                format!("{}: {}", esc(&phases.join(", ")), esc(f))
            }
        })
        .collect();
    if lines.is_empty() {
        return "<p class=\"sub\">No bound on the provider's API requests in this run.</p>"
            .to_owned();
    }
    format!(
        "<p class=\"sub\">Red: the bound on the provider's API requests in any 1 s window (docs/budget.md §2.5), W = 1 s: {}.</p>",
        lines.join("; ")
    )
}

/// A line under a time chart naming the seconds above their phase's 1 s limit, if any.
fn seconds_over(
    o: &mut String,
    values: &[f64],
    bin_s: f64,
    bands: &[PhaseBand<'_>],
    what: &str,
    asserted: bool,
) {
    let over = bins_over_limit(values, bin_s, bands);
    let Some(&(first, limit)) = over.first() else {
        return;
    };
    let _ = write!(
        o,
        "<p class=\"flagged\">{what} above their phase's 1 s limit in {} {} (the first at {} s: {} against {}){}.</p>",
        over.len(),
        if over.len() == 1 { "second" } else { "seconds" },
        fmt_num(first as f64 * bin_s),
        fmt_num(values[first]),
        fmt_num(limit),
        if asserted { "" } else { ", not asserted" }
    );
}

/// The flag for a second above its phase's 1 s limit.
fn over_flag(asserted: bool) -> &'static str {
    if asserted {
        "above limit"
    } else {
        "above limit, not asserted"
    }
}

/// Each account's quota per class as levels of a chart with bins of `bin_s`: the refill per
/// bin, and the burst.
fn quota_levels(r: &RunResult, bin_s: f64) -> Vec<Level> {
    let mut levels = Vec::new();
    for q in crate::report::quota::quotas(&r.predictions) {
        let per_bin = q.per_second * bin_s;
        let rate = if (bin_s - 1.0).abs() < 1e-9 {
            format!("{}/s", fmt_num(q.per_second))
        } else {
            format!(
                "{}/s, {} per {} s",
                fmt_num(q.per_second),
                fmt_num(per_bin),
                fmt_num(bin_s)
            )
        };
        levels.push(Level {
            label: format!("{} quota of {}: {rate}", q.class, q.account),
            value: per_bin,
            dotted: false,
            only_if_it_fits: false,
        });
        if let Some(b) = q.burst {
            levels.push(Level {
                label: format!("{} burst of {}: {}", q.class, q.account, fmt_num(b)),
                value: b,
                dotted: true,
                only_if_it_fits: true,
            });
        }
    }
    levels
}

fn ttr(o: &mut String, r: &RunResult) {
    let none = "No resource became Ready in this run.";
    if !heading(o, "h2", "Time to Ready", r.ttr.count == 0, none) {
        return;
    }
    let mut markers = quantile_markers(&r.ttr.quantiles, "");
    for v in r.verdicts.iter().filter(|v| v.check == "timeToReady") {
        let q = v.name.split_whitespace().nth(1).unwrap_or("");
        for (what, value, color, dashed) in [
            ("predicted", v.predicted, "#2e8b57", true),
            ("limit", v.limit, "#b22222", false),
        ] {
            if value.is_finite() {
                markers.push(Marker {
                    label: format!("{q} {what} {} s", fmt_num(value)),
                    value,
                    color,
                    dashed,
                });
            }
        }
    }
    let _ = write!(
        o,
        "<p class=\"sub\">{} resources · min {} s · mean {} s · max {} s; black dashed: observed quantiles, green: the prediction, red: the limit of each timeToReady assertion (docs/budget.md §5.2)</p>",
        r.ttr.count,
        fmt_num(r.ttr.min_s),
        fmt_num(r.ttr.mean_s),
        fmt_num(r.ttr.max_s)
    );
    o.push_str(&histogram(
        "time to Ready (resources per bucket)",
        &r.ttr.buckets,
        &markers,
    ));
}

pub(super) fn offenders(o: &mut String, r: &RunResult) {
    if r.offenders.is_empty() {
        return;
    }
    o.push_str("<h2>Top offenders</h2><p class=\"sub\">The resources with the most cloud calls over the run, their share of all calls, and why: the message of their Synced=False condition, else the fault the scenario gave them (docs/budget.md §9).</p><table><tr><th>resource</th><th>calls</th><th>share of all calls</th><th>reason</th></tr>");
    for f in &r.offenders {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{:.1} %</td><td>{}</td></tr>",
            esc(&f.name),
            f.calls,
            f.share * 100.0,
            esc(&f.reason)
        );
    }
    o.push_str("</table>");
    if r.offenders.iter().all(|f| f.calls_per_bin.is_empty()) {
        return;
    }
    let bin_s = r.offenders.first().map_or(1.0, |f| f.bin_s);
    let _ = write!(
        o,
        "<h2>Calls per resource over time</h2><p class=\"sub\">One strip per top offender, one cell per {} s: the darker, the more cloud calls it made then (every strip on the same scale). A resource on a lasting error or a hot loop is a dark strip from its start; a healthy one is pale dots a poll apart. Dashed: where each phase starts.</p>",
        fmt_num(bin_s)
    );
    let rows: Vec<StripRow<'_>> = r
        .offenders
        .iter()
        .map(|f| StripRow {
            label: &f.name,
            calls: f.calls,
            share: f.share,
            values: &f.calls_per_bin,
        })
        .collect();
    let starts = phase_starts(r);
    o.push_str(&strip_chart(
        "cloud calls per resource",
        bin_s,
        &rows,
        &starts,
    ));
}
