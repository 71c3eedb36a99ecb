//! The self-contained HTML report: charts as inline SVG, styles inline, no scripts.

use std::fmt::Write as _;

use super::junit::xml_escape as esc;
use super::svg::{Series, Shade, histogram, time_chart};
use crate::predict::fmt_num;
use crate::result::{RunResult, RunTarget};

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1150px}\
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}.sub{color:#555}\
.pass{color:#1e7b34;font-weight:600}.fail{color:#b22222;font-weight:600}\
table{border-collapse:collapse;font-size:13px;width:100%}td,th{border-bottom:1px solid #ddd;padding:4px 6px;text-align:left;vertical-align:top}\
td.n{text-align:right;font-variant-numeric:tabular-nums}.f{font-family:ui-monospace,monospace;font-size:12px;color:#444}\
svg text.title{font-size:14px;font-weight:600}svg text.tick{font-size:11px;fill:#444}svg text.phase{font-size:11px;fill:#555}\
svg text.bound{font-size:11px;fill:#b22222}.badge{display:inline-block;padding:2px 10px;border-radius:10px;color:#fff}";

/// The report.
#[must_use]
pub fn html(r: &RunResult) -> String {
    let mut o = String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    let _ = write!(
        o,
        "<title>harness: {}</title><style>{STYLE}</style></head><body>",
        esc(&r.scenario.name)
    );
    let ok = r.passed();
    let st = &r.scenario.settings;
    let _ = write!(
        o,
        "<h1>{} <span class=\"badge\" style=\"background:{}\">{}</span></h1><div class=\"sub\">{} · {} resources · model {} · R = {} · poll {} s ± {}% · min poll {} s · {} s run · result v{}</div>",
        esc(&r.scenario.name),
        if ok { "#1e7b34" } else { "#b22222" },
        if ok {
            "PASS"
        } else if r.partial {
            "PARTIAL"
        } else {
            "FAIL"
        },
        esc(&r.scenario.description),
        r.scenario.resources,
        esc(&st.rate_limit_model),
        st.max_reconcile_rate,
        fmt_num(st.poll_interval_s),
        st.poll_jitter_percent,
        fmt_num(st.min_poll_interval_s),
        fmt_num(r.duration_s),
        r.version
    );
    {
        let target = match r.run.target {
            RunTarget::Embedded => "embedded",
            RunTarget::Cluster { .. } => "cluster",
        };
        let _ = write!(
            o,
            "<div class=\"sub\">target {target} · API requests: {}</div>",
            esc(&r.run.api_requests_measured_by)
        );
    }
    assertions(&mut o, r);
    let calls: Vec<f64> = r
        .timeline
        .cloud_calls
        .iter()
        .map(|&v| f64::from(v))
        .collect();
    let thr: Vec<f64> = r.timeline.throttles.iter().map(|&v| f64::from(v)).collect();
    let api: Vec<f64> = r
        .timeline
        .api_requests
        .iter()
        .map(|&v| f64::from(v))
        .collect();
    let shades: Vec<Shade<'_>> = r
        .phases
        .iter()
        .map(|p| Shade {
            label: &p.name,
            start: p.start_s,
            end: p.end_s,
            band_low: Some(p.expected_per_s * r.timeline.bin_s),
            band_high: p.bound_per_s.is_finite().then_some(p.bound_per_s),
        })
        .collect();
    o.push_str("<h2>Cloud calls per second against the budget band</h2><p class=\"sub\">Band: expected steady rate (dashed) to the hard bound for any 1 s window (red line, or an arrow when off the chart). Phases shaded.</p>");
    o.push_str(&time_chart(
        "cloud calls / s",
        "calls per second",
        r.timeline.bin_s,
        &[
            Series {
                label: "calls",
                color: "#1f4e79",
                values: &calls,
            },
            Series {
                label: "throttled (429)",
                color: "#d2691e",
                values: &thr,
            },
        ],
        &shades,
    ));
    let plain: Vec<Shade<'_>> = r
        .phases
        .iter()
        .map(|p| Shade {
            label: &p.name,
            start: p.start_s,
            end: p.end_s,
            band_low: None,
            band_high: None,
        })
        .collect();
    o.push_str("<h2>API-server requests from the provider</h2>");
    o.push_str(&time_chart(
        "API requests / s",
        "requests per second",
        r.timeline.bin_s,
        &[Series {
            label: "requests",
            color: "#6a3d9a",
            values: &api,
        }],
        &plain,
    ));
    o.push_str("<h2>Time to Ready</h2>");
    if r.ttr.count == 0 {
        o.push_str("<p class=\"sub\">No resource became Ready in this run.</p>");
    } else {
        let markers: Vec<(String, f64)> = r
            .ttr
            .quantiles
            .iter()
            .filter(|(q, _)| *q <= 0.99)
            .map(|(q, v)| (format!("p{}", q * 100.0), *v))
            .collect();
        let _ = write!(
            o,
            "<p class=\"sub\">{} resources · min {} s · mean {} s · max {} s</p>",
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
    phases(&mut o, r);
    predictions(&mut o, r);
    o.push_str("</body></html>\n");
    o
}

fn assertions(o: &mut String, r: &RunResult) {
    o.push_str("<h2>Assertions</h2><table><tr><th></th><th>assertion</th><th>phase</th><th>observed</th><th></th><th>limit</th><th>predicted</th><th>margin</th><th>formula and inputs</th></tr>");
    for v in &r.verdicts {
        let _ = write!(
            o,
            "<tr><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"f\">{}<br>{}{}</td></tr>",
            if v.pass { "pass" } else { "fail" },
            if v.pass { "PASS" } else { "FAIL" },
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

fn phases(o: &mut String, r: &RunResult) {
    if let Some(p) = &r.provider {
        o.push_str(&format!("<p class=\"sub\">{}</p>", esc(&p.summary())));
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
            if p.completed {
                "yes"
            } else {
                "<span class=\"fail\">timed out</span>"
            },
            esc(&calls.join(", ")),
            p.throttles,
            p.api_requests,
            esc(&peaks.join(", "))
        );
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
