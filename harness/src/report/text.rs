//! Terminal text: the assertion table and the `predict` listing.

use std::fmt::Write as _;

use crate::predict::{Meaning, Plan, Prediction, fmt_num};
use crate::result::{Outcome, RunResult, Verdict};
use crate::scenario::{Scenario, TimeMode};

fn verdict_word(v: &Verdict) -> &'static str {
    v.outcome.word()
}

/// A duration as a person reads it: `45s`, `3m20s`, `1h05m`.
#[must_use]
pub fn human_duration(d: std::time::Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 if s.is_multiple_of(60) => format!("{}m", s / 60),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600 + 30) / 60),
    }
}

/// How long the run was, in virtual time how much wall time it took, and the CPU time per
/// reconcile it measured (real time) or simulated (virtual time): "virtual time: 24h00m
/// in 48.2 s of wall time (1790× real time); reconcile CPU simulated: 0.3 ms".
#[must_use]
pub fn time_summary(r: &RunResult) -> String {
    let t = &r.run.time;
    let span = human_duration(std::time::Duration::from_secs_f64(r.duration_s.max(0.0)));
    let mut line = match t.mode {
        TimeMode::Real => format!("real time: {span}"),
        TimeMode::Virtual => {
            let speed = if t.wall_s > 0.0 {
                format!(
                    " ({}× real time)",
                    fmt_num((r.duration_s / t.wall_s).round())
                )
            } else {
                String::new()
            };
            format!(
                "virtual time: {span} in {} s of wall time{speed}",
                fmt_num(t.wall_s)
            )
        }
    };
    if let Some(ms) = t.reconcile_cpu_measured_ms {
        let _ = write!(line, "; reconcile CPU measured: {} ms", fmt_num(ms));
    }
    if let Some(ms) = t.reconcile_cpu_simulated_ms {
        let _ = write!(line, "; reconcile CPU simulated: {} ms", fmt_num(ms));
    }
    line
}

fn cmp(v: &Verdict) -> &'static str {
    if v.upper { "≤" } else { "≥" }
}

/// The top offenders: the resources with the most cloud calls, their share and why.
fn offenders(out: &mut String, r: &RunResult) {
    for c in &r.share_costs {
        let _ = writeln!(
            out,
            "error path {} [{}]: {} resources, {} calls per resource-hour observed, {} predicted at the cap ({} in the first hour)",
            c.share,
            c.phase,
            c.resources,
            fmt_num(c.observed_per_hour),
            fmt_num(c.predicted_per_hour),
            fmt_num(c.predicted_first_hour)
        );
    }
    if r.offenders.is_empty() {
        return;
    }
    let w = r
        .offenders
        .iter()
        .map(|o| o.name.chars().count())
        .max()
        .unwrap_or(8)
        .max(8);
    let _ = writeln!(out, "top offenders (cloud calls over the run):");
    let _ = writeln!(
        out,
        "  {:<w$}  {:>8}  {:>7}  reason",
        "resource", "calls", "share"
    );
    for o in &r.offenders {
        let _ = writeln!(
            out,
            "  {:<w$}  {:>8}  {:>6.1}%  {}",
            o.name,
            o.calls,
            o.share * 100.0,
            o.reason
        );
    }
}

/// The provider's controllers, one row each, columns aligned (the first left, the others
/// right); nothing when there are none.
fn controllers(out: &mut String, rows: &[[String; 9]]) {
    if rows.len() < 2 {
        return;
    }
    let _ = writeln!(
        out,
        "controllers (controller_runtime_reconcile_total by result, reconcile errors, work-queue adds and largest depth; - not exported):"
    );
    let widths: Vec<usize> = (0..9)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    for row in rows {
        let mut line = format!("  {:<w$}", row[0], w = widths[0]);
        for (cell, w) in row.iter().zip(&widths).skip(1) {
            let _ = write!(line, "  {cell:>w$}");
        }
        let _ = writeln!(out, "{line}");
    }
}

/// The assertion table: verdict, name, observed against limit, predicted, margin; then the
/// formula and inputs indented below each row.
#[must_use]
pub fn assertion_table(r: &RunResult) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}: {}", r.scenario.name, r.headline());
    for p in &r.phases {
        if let Some(f) = &p.failure {
            let _ = writeln!(out, "phase {} FAILED: {}", p.name, f.message());
        }
    }
    for (i, l) in super::waiting_lines(r).iter().enumerate() {
        let _ = writeln!(out, "{}{l}", if i == 0 { "" } else { "  " });
    }
    let _ = writeln!(out, "{}", time_summary(r));
    let w = r
        .verdicts
        .iter()
        .map(|v| v.name.chars().count())
        .max()
        .unwrap_or(9)
        .max(9);
    let _ = writeln!(
        out,
        "{:<10}  {:<w$}  {:>10}    {:>10}  {:>10}  {:>10}",
        "", "assertion", "observed", "limit", "predicted", "margin"
    );
    for v in &r.verdicts {
        let _ = writeln!(
            out,
            "{:<10}  {:<w$}  {:>10} {} {:>10}  {:>10}  {:>10}",
            verdict_word(v),
            v.name,
            fmt_num(v.observed),
            cmp(v),
            fmt_num(v.limit),
            fmt_num(v.predicted),
            fmt_num(v.margin),
        );
        if !v.formula.is_empty() {
            let _ = writeln!(out, "            {}", v.formula);
        }
        if !v.inputs.is_empty() {
            let _ = writeln!(out, "            with {}", v.inputs);
        }
        if let Some(n) = &v.note {
            let _ = writeln!(out, "            note: {n}");
        }
    }
    offenders(&mut out, r);
    for l in super::per_reconcile::lines(r)
        .into_iter()
        .chain(super::core::lines(r))
    {
        let _ = writeln!(out, "{l}");
    }
    let failed = r.verdicts.iter().filter(|v| !v.pass).count();
    for l in super::chaos::kill_lines(r)
        .iter()
        .chain(&super::chaos::memory_lines(r))
    {
        let _ = writeln!(out, "{l}");
    }
    if let Some(p) = &r.provider {
        let _ = writeln!(out, "{}", p.summary());
        let _ = writeln!(out, "{}", p.api_summary());
        controllers(&mut out, &p.controller_rows());
        if let Some(line) = p.concurrency_summary() {
            let _ = writeln!(out, "{line}");
        }
    }
    let count = |o: Outcome| {
        r.verdicts
            .iter()
            .filter(|v| v.pass && v.outcome == o)
            .count()
    };
    let (unmodeled, unmeasured) = (count(Outcome::Unmodeled), count(Outcome::Unmeasured));
    let mut aside = String::new();
    if unmodeled > 0 {
        aside.push_str(&format!(
            ", {unmodeled} UNMODELED (not covered by the model; --strict fails them)"
        ));
    }
    if unmeasured > 0 {
        aside.push_str(&format!(
            ", {unmeasured} UNMEASURED (the count cannot judge them: see the note; --strict fails them)"
        ));
    }
    let _ = writeln!(
        out,
        "{} of {} assertions passed{}{}",
        r.verdicts.len() - failed - unmodeled - unmeasured,
        r.verdicts.len(),
        aside,
        if r.partial { " (partial run)" } else { "" }
    );
    let _ = writeln!(
        out,
        "symbols, tags and sections (§) of the formulas: docs/budget.md"
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

/// What a scenario creates, for the first line of `run` and of `predict`: its resources, and its XRs with the resources
/// they compose when their pipelines say how many ("40 resources, 2000 XRs composing 20000").
#[must_use]
pub fn what_it_creates(s: &Scenario) -> String {
    let resources = s.total_resources();
    let xrs = s.composites.total_xrs();
    if xrs == 0 {
        return format!("{resources} resources");
    }
    let composed: Option<u64> = s
        .composites
        .groups
        .iter()
        .map(|g| {
            g.shape
                .resources_per_xr()
                .map(|n| u64::from(n) * u64::from(g.count))
        })
        .sum();
    let xrs = match composed {
        Some(n) => format!("{xrs} XRs composing {n} resources"),
        None => format!("{xrs} XRs"),
    };
    if resources == 0 {
        xrs
    } else {
        format!("{resources} resources, {xrs}")
    }
}

/// `harness predict`'s output: the settings, then every prediction, run-wide and per phase.
#[must_use]
pub fn plan_listing(s: &Scenario, plan: &Plan) -> String {
    let mut out = String::new();
    let st = &s.settings;
    let _ = writeln!(
        out,
        "scenario {} ({}): model {}, R = {}, poll {:?} ± {}%, min poll {:?}",
        s.name,
        what_it_creates(s),
        st.model,
        st.rate(),
        st.poll_interval,
        st.poll_jitter_percent,
        st.min_poll_interval
    );
    if !s.sets.is_empty() {
        let sets: Vec<String> = s.sets.iter().map(ToString::to_string).collect();
        let _ = writeln!(out, "overrides: {}", sets.join(" "));
    }
    for w in &s.warnings {
        let _ = writeln!(out, "warning: {}: {}", s.place(w.pos), w.message);
    }
    let d = plan.expected_duration(s);
    let parts: Vec<String> = d
        .phases
        .iter()
        .map(|(n, t)| format!("{n} {}", human_duration(*t)))
        .collect();
    let _ = writeln!(
        out,
        "expected duration: about {} ({}); at most {} if every phase runs to its timeout",
        human_duration(d.total),
        parts.join(", "),
        human_duration(d.at_most)
    );
    let _ = writeln!(
        out,
        "symbols, tags ([P] proved, [D] derived, [A] approximation, [S] simulated) and sections (§): docs/budget.md"
    );
    let _ = writeln!(
        out,
        "\nrun-wide bounds, for every phase unless the phase lists its own (≤ bound, ≈ expected, tol tolerance, ≥ lower bound, ? condition)"
    );
    let mut run_wide: Vec<&Prediction> = plan.run.iter().collect();
    // A bound every phase shares (the cloud-call bound without a phase's own excess) is
    // listed once, here.
    let shared = shared_phase_bounds(plan);
    run_wide.extend(shared.iter().copied());
    for p in &run_wide {
        line(&mut out, p);
    }
    for ph in &plan.phases {
        let _ = writeln!(
            out,
            "\nphase {} ({} resources live, {} acted on)",
            ph.name, ph.population, ph.acted_on
        );
        for p in ph
            .predictions
            .iter()
            .filter(|p| !repeats_run_wide(p, &plan.run, &shared))
        {
            line(&mut out, p);
        }
    }
    if !plan.core.is_empty() {
        let _ = writeln!(
            out,
            "\nCrossplane core, per XR group (core/<group>/…), and the bounds of its checks"
        );
        // A breaker verdict that cannot differ between surely and maybe says it once.
        let mut last: Option<&Prediction> = None;
        for p in &plan.core {
            let same = last
                .is_some_and(|l| l.what == p.what && l.value == p.value && l.formula == p.formula);
            if !same {
                line(&mut out, p);
            }
            last = Some(p);
        }
    }
    out
}

/// The part of a prediction id after the phase: `cloud-calls/1s`.
fn quantity(id: &str) -> &str {
    id.split_once('/').map_or(id, |(_, q)| q)
}

/// Per-phase bounds that are the same in every phase: listed once, as run-wide.
fn shared_phase_bounds(plan: &Plan) -> Vec<&Prediction> {
    let Some(first) = plan.phases.first() else {
        return Vec::new();
    };
    first
        .predictions
        .iter()
        .filter(|p| p.meaning == Meaning::UpperBound)
        .filter(|p| !plan.run.iter().any(|r| quantity(&r.id) == quantity(&p.id)))
        .filter(|p| {
            plan.phases.iter().all(|ph| {
                ph.predictions.iter().any(|q| {
                    quantity(&q.id) == quantity(&p.id)
                        && q.value == p.value
                        && q.formula == p.formula
                })
            })
        })
        .collect()
}

/// Whether a phase's prediction is a run-wide one again (same quantity, formula and value).
fn repeats_run_wide(p: &Prediction, run: &[Prediction], shared: &[&Prediction]) -> bool {
    run.iter()
        .chain(shared.iter().copied())
        .any(|r| quantity(&r.id) == quantity(&p.id) && r.value == p.value && r.formula == p.formula)
}

#[cfg(test)]
mod tests {
    use super::what_it_creates;

    fn shipped(name: &str) -> crate::scenario::Scenario {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../scenarios")
            .join(name);
        crate::scenario::load(&path).expect("a shipped scenario loads")
    }

    #[test]
    fn the_first_line_counts_resources_and_xrs_with_what_they_compose() {
        assert_eq!(
            what_it_creates(&shipped("xr-day-2k.yaml")),
            "2000 XRs composing 20000 resources"
        );
        assert_eq!(what_it_creates(&shipped("smoke.yaml")), "100 resources");
    }
}
