//! Terminal text: the assertion table and the `predict` listing.

use std::fmt::Write as _;

use crate::predict::{Meaning, Plan, Prediction, fmt_num};
use crate::result::{RunResult, Verdict};
use crate::scenario::Scenario;

fn verdict_word(v: &Verdict) -> &'static str {
    if v.pass { "PASS" } else { "FAIL" }
}

fn cmp(v: &Verdict) -> &'static str {
    if v.upper { "≤" } else { "≥" }
}

/// The assertion table: verdict, name, observed against limit, predicted, margin; then the
/// formula and inputs indented below each row.
#[must_use]
pub fn assertion_table(r: &RunResult) -> String {
    let mut out = String::new();
    let w = r
        .verdicts
        .iter()
        .map(|v| v.name.chars().count())
        .max()
        .unwrap_or(9)
        .max(9);
    let _ = writeln!(
        out,
        "{:<4}  {:<w$}  {:>10}    {:>10}  {:>10}  {:>10}",
        "", "assertion", "observed", "limit", "predicted", "margin"
    );
    for v in &r.verdicts {
        let _ = writeln!(
            out,
            "{:<4}  {:<w$}  {:>10} {} {:>10}  {:>10}  {:>10}",
            verdict_word(v),
            v.name,
            fmt_num(v.observed),
            cmp(v),
            fmt_num(v.limit),
            fmt_num(v.predicted),
            fmt_num(v.margin),
        );
        if !v.formula.is_empty() {
            let _ = writeln!(out, "      {}", v.formula);
        }
        if !v.inputs.is_empty() {
            let _ = writeln!(out, "      with {}", v.inputs);
        }
        if let Some(n) = &v.note {
            let _ = writeln!(out, "      note: {n}");
        }
    }
    let failed = r.verdicts.iter().filter(|v| !v.pass).count();
    if let Some(p) = &r.provider {
        let _ = writeln!(out, "{}", p.summary());
    }
    let _ = writeln!(
        out,
        "{} of {} assertions passed{}",
        r.verdicts.len() - failed,
        r.verdicts.len(),
        if r.partial { " (partial run)" } else { "" }
    );
    out
}

fn meaning(m: Meaning) -> &'static str {
    match m {
        Meaning::UpperBound => "≤",
        Meaning::Expected => "≈",
        Meaning::Tolerance => "tol",
        Meaning::LowerBound => "≥",
        Meaning::Condition => "?",
    }
}

fn line(out: &mut String, p: &Prediction) {
    let value = if p.meaning == Meaning::Condition {
        (if p.value >= 1.0 { "holds" } else { "fails" }).to_owned()
    } else {
        format!("{} {}", fmt_num(p.value), p.unit)
    };
    let _ = writeln!(out, "  {:<3} {:<56} {}", meaning(p.meaning), p.what, value);
    if !p.formula.is_empty() {
        let _ = writeln!(out, "        {}   {}", p.formula, p.source);
    }
    if !p.inputs.is_empty() {
        let _ = writeln!(out, "        with {}", p.inputs_text());
    }
    if let Some(n) = p.note.as_ref().filter(|n| !n.is_empty()) {
        let _ = writeln!(out, "        note: {n}");
    }
}

/// `harness predict`'s output: the settings, then every prediction, run-wide and per phase.
#[must_use]
pub fn plan_listing(s: &Scenario, plan: &Plan) -> String {
    let mut out = String::new();
    let st = &s.settings;
    let _ = writeln!(
        out,
        "scenario {} ({} resources): model {}, R = {}, poll {:?} ± {}%, min poll {:?}",
        s.name,
        s.total_resources(),
        st.model,
        st.rate(),
        st.poll_interval,
        st.poll_jitter_percent,
        st.min_poll_interval
    );
    for w in &s.warnings {
        let _ = writeln!(out, "warning: {}: {}", s.place(w.pos), w.message);
    }
    let _ = writeln!(
        out,
        "\nrun-wide bounds (≤ bound, ≈ expected, tol tolerance, ≥ lower bound, ? condition)"
    );
    for p in &plan.run {
        line(&mut out, p);
    }
    for ph in &plan.phases {
        let _ = writeln!(
            out,
            "\nphase {} ({} resources live, {} acted on)",
            ph.name, ph.population, ph.acted_on
        );
        for p in &ph.predictions {
            line(&mut out, p);
        }
    }
    out
}
