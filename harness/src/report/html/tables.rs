//! The report's tables: assertions, phases with their controllers, and predictions.

use std::fmt::Write as _;

use crate::predict::fmt_num;
use crate::report::escape::xml_escape as esc;
use crate::result::{Outcome, RunResult};

pub(super) fn assertions(o: &mut String, r: &RunResult) {
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

pub(super) fn phases(o: &mut String, r: &RunResult) {
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

pub(super) fn predictions(o: &mut String, r: &RunResult) {
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
