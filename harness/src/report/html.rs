//! The self-contained HTML report: charts as inline SVG, styles inline, no scripts.

use std::fmt::Write as _;

use super::escape::xml_escape as esc;
use super::strip::{Boundary, StripRow, strip_chart};
use super::svg::{Level, Marker, PhaseBand, Series, bins_over_limit, histogram, time_chart};
use crate::predict::fmt_num;
use crate::result::{Outcome, RunResult, RunTarget};

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1150px}\
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}.sub{color:#555}\
.pass{color:#1e7b34;font-weight:600}.fail{color:#b22222;font-weight:600}\
table{border-collapse:collapse;font-size:13px;width:100%}td,th{border-bottom:1px solid #ddd;padding:4px 6px;text-align:left;vertical-align:top}\
td.n{text-align:right;font-variant-numeric:tabular-nums}.f{font-family:ui-monospace,monospace;font-size:12px;color:#444}\
svg text.title{font-size:14px;font-weight:600}svg text.tick{font-size:11px;fill:#444}svg text.phase{font-size:11px;fill:#555}\
svg text.bound{font-size:11px;fill:#b22222}svg text.flag{font-size:11px;fill:#b35900;font-weight:600}.flagged{color:#b35900;font-weight:600}.badge{display:inline-block;padding:2px 10px;border-radius:10px;color:#fff}\
.headline{font-size:16px;margin:6px 0}.incomplete{color:#a0522d;font-weight:600}.unmodeled{color:#6a5acd;font-weight:600}.unmeasured{color:#6a5acd;font-weight:600}";

/// The report.
#[must_use]
pub fn html(r: &RunResult) -> String {
    let mut o = String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    let _ = write!(
        o,
        "<title>harness: {}</title><style>{STYLE}</style></head><body>",
        esc(&r.scenario.name)
    );
    header(&mut o, r);
    listing(&mut o, "Still waiting for", &super::waiting_lines(r));
    assertions(&mut o, r);
    listing(&mut o, "Kills", &super::chaos::kill_lines(r));
    listing(&mut o, "Memory", &super::chaos::memory_lines(r));
    offenders(&mut o, r);
    charts(&mut o, r);
    super::xr::section(&mut o, r);
    phases(&mut o, r);
    predictions(&mut o, r);
    o.push_str("</body></html>\n");
    o
}

fn header(o: &mut String, r: &RunResult) {
    let ok = r.passed();
    let st = &r.scenario.settings;
    let _ = write!(
        o,
        "<h1>{} <span class=\"badge\" style=\"background:{}\">{}</span></h1>",
        esc(&r.scenario.name),
        if ok { "#1e7b34" } else { "#b22222" },
        if ok {
            "PASS"
        } else if r.partial {
            "PARTIAL"
        } else {
            "FAIL"
        },
    );
    let _ = write!(
        o,
        "<p class=\"headline {}\">{}</p>",
        if ok { "pass" } else { "fail" },
        esc(&r.headline())
    );
    let _ = write!(
        o,
        "<div class=\"sub\">{} · {} resources · model {} · R = {} · poll {} s ± {}% · min poll {} s · {} · result v{}</div>",
        esc(&r.scenario.description),
        r.scenario.resources,
        esc(&st.rate_limit_model),
        st.max_reconcile_rate,
        fmt_num(st.poll_interval_s),
        st.poll_jitter_percent,
        fmt_num(st.min_poll_interval_s),
        esc(&super::text::time_summary(r)),
        r.version
    );
    let overrides = if r.scenario.overrides.is_empty() {
        "none".to_owned()
    } else {
        r.scenario.overrides.join(" ")
    };
    let _ = write!(
        o,
        "<div class=\"sub\">{} · --set: {} · started {} · commit {}</div>",
        esc(&r.scenario.file),
        esc(&overrides),
        esc(r.run.started_at.as_deref().unwrap_or("unknown")),
        esc(r.run.commit.as_deref().unwrap_or("unknown"))
    );
    {
        let target = match r.run.target {
            RunTarget::Embedded => "embedded",
            RunTarget::Cluster { .. } => "cluster",
            RunTarget::Process { .. } => "process",
        };
        let _ = write!(
            o,
            "<div class=\"sub\">target {target} · API requests: {}</div>",
            esc(&r.run.api_requests_measured_by)
        );
    }
}

fn charts(o: &mut String, r: &RunResult) {
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
    let call_bands: Vec<PhaseBand<'_>> = r
        .phases
        .iter()
        .map(|p| PhaseBand {
            label: &p.name,
            start: p.start_s,
            end: p.end_s,
            expected: p
                .expected_calls_per_s
                .is_finite()
                .then_some(p.expected_calls_per_s * bin),
            limit: p.bound_per_s.is_finite().then_some(p.bound_per_s),
        })
        .collect();
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
    super::peaks::section(o, r);
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
    for q in super::quota::quotas(&r.predictions) {
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
    o.push_str("<h2>Time to Ready</h2>");
    if r.ttr.count == 0 {
        o.push_str("<p class=\"sub\">No resource became Ready in this run.</p>");
        return;
    }
    let mut markers: Vec<Marker> = r
        .ttr
        .quantiles
        .iter()
        .filter(|(q, _)| *q <= 0.99)
        .map(|(q, v)| Marker {
            label: format!("p{}", q * 100.0),
            value: *v,
            color: "#333",
            dashed: true,
        })
        .collect();
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

/// A section of lines, when there are any.
fn listing(o: &mut String, title: &str, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let _ = write!(o, "<h2>{title}</h2><ul>");
    for l in lines {
        let _ = write!(o, "<li>{}</li>", esc(l));
    }
    o.push_str("</ul>");
}

fn assertions(o: &mut String, r: &RunResult) {
    o.push_str("<h2>Assertions</h2><p class=\"sub\">Symbols, tags ([P] proved, [D] derived, [A] approximation, [S] simulated) and sections (§) of the formulas are explained in docs/budget.md.</p><table><tr><th></th><th>assertion</th><th>phase</th><th>observed</th><th></th><th>limit</th><th>predicted</th><th>margin</th><th>formula and inputs</th></tr>");
    for v in &r.verdicts {
        let _ = write!(
            o,
            "<tr><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"f\">{}<br>{}{}</td></tr>",
            match v.outcome {
                Outcome::Pass => "pass",
                Outcome::Fail => "fail",
                Outcome::Incomplete => "incomplete",
                Outcome::Unmodeled => "unmodeled",
                Outcome::Unmeasured => "unmeasured",
            },
            v.outcome.word(),
            esc(&v.name),
            esc(v.phase.as_deref().unwrap_or("run")),
            fmt_num(v.observed),
            if v.upper { "≤" } else { "≥" },
            fmt_num(v.limit),
            fmt_num(v.predicted),
            fmt_num(v.margin),
            esc(&v.formula),
            esc(&v.inputs),
            v.note
                .as_ref()
                .map(|n| format!("<br><i>{}</i>", esc(n)))
                .unwrap_or_default()
        );
    }
    o.push_str("</table>");
}

fn offenders(o: &mut String, r: &RunResult) {
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
    let starts: Vec<Boundary<'_>> = r
        .phases
        .iter()
        .map(|p| Boundary {
            label: &p.name,
            at: p.start_s,
        })
        .collect();
    o.push_str(&strip_chart(
        "cloud calls per resource",
        bin_s,
        &rows,
        &starts,
    ));
}

/// The provider's controllers as a table (the standard metrics over the run).
fn controllers(o: &mut String, rows: &[[String; 9]]) {
    let Some((head, body)) = rows.split_first().filter(|(_, b)| !b.is_empty()) else {
        return;
    };
    o.push_str("<h2>Controllers</h2><p class=\"sub\">The provider's own metrics per controller over the run, as controller-runtime and client-go export them: controller_runtime_reconcile_total by result, controller_runtime_reconcile_errors_total, workqueue_adds_total and the largest workqueue_depth read; - where the provider does not export one.</p><table><tr>");
    for h in head {
        let _ = write!(o, "<th>{}</th>", esc(h));
    }
    o.push_str("</tr>");
    for row in body {
        let _ = write!(o, "<tr><td>{}</td>", esc(&row[0]));
        for cell in &row[1..] {
            let _ = write!(o, "<td class=\"n\">{}</td>", esc(cell));
        }
        o.push_str("</tr>");
    }
    o.push_str("</table>");
}

fn phases(o: &mut String, r: &RunResult) {
    if let Some(p) = &r.provider {
        o.push_str(&format!("<p class=\"sub\">{}</p>", esc(&p.summary())));
        o.push_str(&format!("<p class=\"sub\">{}</p>", esc(&p.api_summary())));
        if let Some(line) = p.concurrency_summary() {
            o.push_str(&format!("<p class=\"sub\">{}</p>", esc(&line)));
        }
        controllers(o, &p.controller_rows());
    }
    o.push_str("<h2>Phases</h2><table><tr><th>phase</th><th>action</th><th>start</th><th>end</th><th>done</th><th>calls by operation</th><th>throttled</th><th>API requests</th><th>peak windows</th></tr>");
    for p in &r.phases {
        let calls: Vec<String> = p.calls.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let peaks: Vec<String> = p
            .peaks
            .iter()
            .map(|k| format!("{} in {} s", k.count, fmt_num(k.window_s)))
            .collect();
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            esc(&p.name),
            esc(&p.action),
            fmt_num(p.start_s),
            fmt_num(p.end_s),
            match &r.stopped {
                _ if p.completed => "yes".to_owned(),
                _ if p.failure.is_some() => format!(
                    "<span class=\"fail\">{}</span>",
                    esc(&p.failure.as_ref().map(|f| f.message()).unwrap_or_default())
                ),
                Some(st) if st.phase == p.name =>
                    format!("<span class=\"fail\">{}</span>", esc(&st.headline())),
                _ => "<span class=\"fail\">did not complete</span>".to_owned(),
            },
            esc(&calls.join(", ")),
            p.throttles,
            p.api_requests,
            esc(&peaks.join(", "))
        );
    }
    for planned in &r.scenario.phases {
        let name = planned.split(" (").next().unwrap_or(planned);
        if !r.phases.iter().any(|p| p.name == name) {
            let _ = write!(
                o,
                "<tr><td>{}</td><td colspan=\"8\"><span class=\"fail\">never ran</span></td></tr>",
                esc(planned)
            );
        }
    }
    o.push_str("</table>");
}

fn predictions(o: &mut String, r: &RunResult) {
    let _ = write!(
        o,
        "<h2>Predictions</h2><details><summary>{} predictions with formulas and inputs</summary><table><tr><th>id</th><th>value</th><th>formula</th><th>inputs</th><th>source</th></tr>",
        r.predictions.len()
    );
    for p in &r.predictions {
        let _ = write!(
            o,
            "<tr><td>{}</td><td class=\"n\">{} {}</td><td class=\"f\">{}</td><td class=\"f\">{}</td><td>{}</td></tr>",
            esc(&p.id),
            fmt_num(p.value),
            esc(&p.unit),
            esc(&p.formula),
            esc(&p.inputs_text()),
            esc(&p.source)
        );
    }
    o.push_str("</table></details>");
    let rows = r.run.rows();
    let _ = write!(
        o,
        "<h2>Run</h2><details><summary>target, versions and notes ({})</summary><table>",
        rows.len()
    );
    for (k, v) in &rows {
        let _ = write!(o, "<tr><td>{}</td><td>{}</td></tr>", esc(k), esc(v));
    }
    o.push_str("</table></details>");
}

/// Each phase's band for a chart of the provider's API requests per second, with the
/// phase's bound on them where it has one.
pub(super) fn api_bands(r: &RunResult) -> Vec<PhaseBand<'_>> {
    r.phases
        .iter()
        .map(|p| PhaseBand {
            label: &p.name,
            start: p.start_s,
            end: p.end_s,
            expected: None,
            limit: p.api_bound_per_s.is_finite().then_some(p.api_bound_per_s),
        })
        .collect()
}
