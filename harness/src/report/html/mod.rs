//! The self-contained HTML report: charts as inline SVG, styles inline, no scripts.

use std::fmt::Write as _;

use crate::predict::fmt_num;
use crate::report::escape::xml_escape as esc;
use crate::result::{RunResult, RunTarget};

mod charts;
mod tables;

use charts::{charts, offenders};
use tables::{assertions, phases, predictions};

/// The report's styles, which the sweep's page shares.
pub(crate) const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1150px}\
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
