//! The model checks itself: `harness selfcheck` runs scenarios drawn by
//! [`crate::scenario::generate`] and counts, for every check, how its verdicts came out by
//! the kind of limit they applied ([`LimitKind`], from docs/budget.md's tags). This module
//! is the counting and the table; the command line draws and runs the scenarios.
//!
//! A hard bound (\[P\]) must never be exceeded: one FAIL of a hard bound is a bug in the
//! provider or in the proof, and fails the selfcheck. An approximation (\[A\], an expected
//! value or a statistical tolerance) is held to its stated tolerance: the table gives the
//! share of its verdicts within it. A derived bound (\[D\]) holds under its stated
//! assumptions; a FAIL says one of them did not. UNMODELED verdicts (docs/budget.md §11) are
//! counted apart: the model says it does not cover them.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::predict::fmt_num;
use crate::result::{LimitKind, Outcome, RunResult, Verdict};

/// The seed `harness selfcheck` starts from unless told otherwise: scenario i of a run is
/// drawn with seed + i.
pub const DEFAULT_SEED: u64 = 1;

/// How one scenario's run ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum Ran {
    /// Every phase met its `until`.
    Complete,
    /// The run ended early by itself (a phase timed out on the run's clock, a phase
    /// failed); its verdicts count, an incomplete phase's as INCOMPLETE.
    Partial {
        /// Why, in words.
        why: String,
    },
    /// The run passed the wall-time limit per scenario and was stopped; the verdicts of
    /// what it ran count.
    TimedOut {
        /// The limit, s of wall time.
        limit_s: f64,
        /// The run did not even stop within a grace after the limit and was left behind:
        /// it has no verdicts.
        abandoned: bool,
    },
    /// The scenario could not be run (the generator's text did not validate, the stack
    /// did not start).
    Error {
        /// The error, with its causes.
        message: String,
    },
}

impl Ran {
    fn word(&self) -> &'static str {
        match self {
            Ran::Complete => "complete",
            Ran::Partial { .. } => "partial",
            Ran::TimedOut { .. } => "timed out",
            Ran::Error { .. } => "error",
        }
    }
}

/// One scenario of a selfcheck: its seed, how its run ended, and its verdicts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checked {
    /// The generator's seed.
    pub seed: u64,
    /// How the run ended.
    pub ran: Ran,
    /// The wall time it took, s.
    pub wall_s: f64,
    /// Its verdicts, one per assertion (none when it did not run).
    pub verdicts: Vec<Verdict>,
}

impl Checked {
    /// The scenario of `seed` whose run gave `r` in `wall_s` seconds; `timed_out` holds the
    /// wall-time limit when the run was stopped by it.
    #[must_use]
    pub fn from_result(seed: u64, r: &RunResult, wall_s: f64, timed_out: Option<f64>) -> Self {
        let ran = match (timed_out, &r.stopped) {
            (Some(limit_s), _) => Ran::TimedOut {
                limit_s,
                abandoned: false,
            },
            (None, Some(st)) => Ran::Partial { why: st.headline() },
            (None, None) if r.partial => Ran::Partial {
                why: "measurements were lost".to_owned(),
            },
            (None, None) => match r.phases.iter().find_map(|p| p.failure.as_ref()) {
                Some(f) => Ran::Partial {
                    why: f.headline().to_owned(),
                },
                None => Ran::Complete,
            },
        };
        Checked {
            seed,
            ran,
            wall_s,
            verdicts: r.verdicts.clone(),
        }
    }

    /// A scenario with no verdicts: it could not run, or was left behind.
    #[must_use]
    pub fn without_verdicts(seed: u64, ran: Ran, wall_s: f64) -> Self {
        Checked {
            seed,
            ran,
            wall_s,
            verdicts: Vec::new(),
        }
    }

    /// Whether this scenario is worth keeping to run again: a verdict FAILed, or the run
    /// timed out or could not run.
    #[must_use]
    pub fn keep(&self) -> bool {
        matches!(self.ran, Ran::TimedOut { .. } | Ran::Error { .. })
            || self.verdicts.iter().any(|v| v.outcome == Outcome::Fail)
    }

    /// The hard bounds it exceeded.
    pub fn hard_violations(&self) -> impl Iterator<Item = &Verdict> {
        self.verdicts
            .iter()
            .filter(|v| v.kind == LimitKind::Hard && v.outcome == Outcome::Fail)
    }
}

/// Verdicts of one check (or of every check, `*`) with one kind of limit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The check (`cloudCalls`), or `*` for a total.
    pub check: String,
    /// The kind of limit.
    pub kind: LimitKind,
    /// Scenarios with at least one such verdict.
    pub scenarios: u64,
    /// Verdicts.
    pub verdicts: u64,
    /// Within the limit.
    pub pass: u64,
    /// Past the limit.
    pub fail: u64,
    /// Not covered by the model (§11): neither a pass nor a failure.
    pub unmodeled: u64,
    /// Within the limit, but the phase did not complete.
    pub incomplete: u64,
}

impl Row {
    /// PASS ÷ (PASS + FAIL): for an approximation, the share within its stated tolerance;
    /// NaN when nothing was decided.
    #[must_use]
    pub fn within(&self) -> f64 {
        let decided = self.pass + self.fail;
        if decided == 0 {
            f64::NAN
        } else {
            self.pass as f64 / decided as f64
        }
    }

    fn add(&mut self, v: &Verdict) {
        self.verdicts += 1;
        match v.outcome {
            Outcome::Pass => self.pass += 1,
            Outcome::Fail => self.fail += 1,
            Outcome::Unmodeled | Outcome::Unmeasured => self.unmodeled += 1,
            Outcome::Incomplete => self.incomplete += 1,
        }
    }
}

/// A verdict past its limit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The scenario's seed.
    pub seed: u64,
    /// The check.
    pub check: String,
    /// The phase, if the check is about one.
    pub phase: Option<String>,
    /// The kind of limit.
    pub kind: LimitKind,
    /// What was measured.
    #[serde(with = "crate::float")]
    pub observed: f64,
    /// The limit.
    #[serde(with = "crate::float")]
    pub limit: f64,
    /// Whether the limit is an upper one.
    pub upper: bool,
    /// The formula behind the limit.
    pub formula: String,
    /// The verdict's note.
    pub note: Option<String>,
}

/// How the scenarios' runs ended.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Runs {
    /// Scenarios drawn.
    pub drawn: u64,
    /// Every phase met its `until`.
    pub complete: u64,
    /// Ended early by themselves.
    pub partial: u64,
    /// Stopped at the wall-time limit.
    pub timed_out: u64,
    /// Could not run.
    pub errors: u64,
}

/// One scenario's line in the JSON table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioLine {
    /// The generator's seed.
    pub seed: u64,
    /// How its run ended.
    #[serde(flatten)]
    pub ran: Ran,
    /// Wall time, s.
    pub wall_s: f64,
    /// Verdicts.
    pub verdicts: u64,
    /// FAILs.
    pub fail: u64,
    /// UNMODELED verdicts.
    pub unmodeled: u64,
}

/// The selfcheck's table: every check by kind of limit, totals per kind, the runs, and
/// every verdict past its limit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// The first scenario's seed; scenario i has seed + i.
    pub seed: u64,
    /// How the runs ended.
    pub runs: Runs,
    /// One row per check and kind of limit, by check.
    pub rows: Vec<Row>,
    /// One row per kind of limit over every check (`check` is `*`).
    pub kinds: Vec<Row>,
    /// FAILed hard bounds.
    pub hard_violations: u64,
    /// Every verdict past its limit, by seed.
    pub findings: Vec<Finding>,
    /// Each scenario.
    pub scenarios: Vec<ScenarioLine>,
}

/// The table of the scenarios `checked`, drawn from `seed` on.
#[must_use]
pub fn tally(seed: u64, checked: &[Checked]) -> Table {
    let mut rows: BTreeMap<(String, LimitKind), (Row, Vec<u64>)> = BTreeMap::new();
    let mut kinds: BTreeMap<LimitKind, (Row, Vec<u64>)> = BTreeMap::new();
    let mut runs = Runs::default();
    let mut findings = Vec::new();
    let mut scenarios = Vec::new();
    let mut sorted: Vec<&Checked> = checked.iter().collect();
    sorted.sort_by_key(|c| c.seed);
    for c in sorted {
        runs.drawn += 1;
        match c.ran {
            Ran::Complete => runs.complete += 1,
            Ran::Partial { .. } => runs.partial += 1,
            Ran::TimedOut { .. } => runs.timed_out += 1,
            Ran::Error { .. } => runs.errors += 1,
        }
        for v in &c.verdicts {
            let (row, seen) = rows.entry((v.check.clone(), v.kind)).or_insert_with(|| {
                (
                    Row {
                        check: v.check.clone(),
                        kind: v.kind,
                        ..Row::default()
                    },
                    Vec::new(),
                )
            });
            row.add(v);
            seen.push(c.seed);
            let (total, seen) = kinds.entry(v.kind).or_insert_with(|| {
                (
                    Row {
                        check: "*".to_owned(),
                        kind: v.kind,
                        ..Row::default()
                    },
                    Vec::new(),
                )
            });
            total.add(v);
            seen.push(c.seed);
            if v.outcome == Outcome::Fail {
                findings.push(Finding {
                    seed: c.seed,
                    check: v.check.clone(),
                    phase: v.phase.clone(),
                    kind: v.kind,
                    observed: v.observed,
                    limit: v.limit,
                    upper: v.upper,
                    formula: v.formula.clone(),
                    note: v.note.clone(),
                });
            }
        }
        scenarios.push(ScenarioLine {
            seed: c.seed,
            ran: c.ran.clone(),
            wall_s: c.wall_s,
            verdicts: c.verdicts.len() as u64,
            fail: count(c, Outcome::Fail),
            unmodeled: count(c, Outcome::Unmodeled),
        });
    }
    let finish = |(mut row, mut seen): (Row, Vec<u64>)| {
        seen.dedup();
        row.scenarios = seen.len() as u64;
        row
    };
    let kinds: Vec<Row> = kinds.into_values().map(finish).collect();
    let hard_violations = kinds
        .iter()
        .filter(|r| r.kind == LimitKind::Hard)
        .map(|r| r.fail)
        .sum();
    Table {
        seed,
        runs,
        rows: rows.into_values().map(finish).collect(),
        kinds,
        hard_violations,
        findings,
        scenarios,
    }
}

fn count(c: &Checked, o: Outcome) -> u64 {
    c.verdicts.iter().filter(|v| v.outcome == o).count() as u64
}

impl Table {
    /// No hard bound was exceeded, and every scenario ran to its verdicts (one that timed
    /// out or could not run leaves its bounds unchecked).
    #[must_use]
    pub fn clean(&self) -> bool {
        self.hard_violations == 0 && self.runs.timed_out == 0 && self.runs.errors == 0
    }

    /// The verdicts counted, over every row.
    #[must_use]
    pub fn verdicts(&self) -> u64 {
        self.rows.iter().map(|r| r.verdicts).sum()
    }
}

fn percent(x: f64) -> String {
    if x.is_nan() {
        "-".to_owned()
    } else {
        format!("{:.1} %", x * 100.0)
    }
}

fn row_line(out: &mut String, label: &str, r: &Row) {
    let _ = writeln!(
        out,
        "{label:<19} {:<13} {:>9} {:>8} {:>6} {:>6} {:>9} {:>10} {:>8}",
        r.kind.word(),
        r.scenarios,
        r.verdicts,
        r.pass,
        r.fail,
        r.unmodeled,
        r.incomplete,
        percent(r.within())
    );
}

/// The table as text: the runs, one line per check and kind, the totals per kind, and the
/// findings (a hard bound's first).
#[must_use]
pub fn render(t: &Table) -> String {
    let mut out = String::new();
    let r = &t.runs;
    let _ = writeln!(
        out,
        "scenarios: {} drawn from seed {} ({}..={}): {} complete, {} partial (a phase timed out or failed on the run's clock), {} stopped at the wall-time limit, {} could not run",
        r.drawn,
        t.seed,
        t.seed,
        t.seed + r.drawn.saturating_sub(1),
        r.complete,
        r.partial,
        r.timed_out,
        r.errors
    );
    let _ = writeln!(out);
    let header = format!(
        "{:<19} {:<13} {:>9} {:>8} {:>6} {:>6} {:>9} {:>10} {:>8}",
        "check",
        "kind",
        "scenarios",
        "verdicts",
        "PASS",
        "FAIL",
        "UNMODELED",
        "INCOMPLETE",
        "within"
    );
    let _ = writeln!(out, "{header}");
    for row in &t.rows {
        row_line(&mut out, &row.check, row);
    }
    let _ = writeln!(out, "{}", "-".repeat(header.chars().count()));
    for row in &t.kinds {
        row_line(&mut out, "all checks", row);
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "hard bounds exceeded: {} (of {} hard-bound verdicts)",
        t.hard_violations,
        t.kinds
            .iter()
            .filter(|k| k.kind == LimitKind::Hard)
            .map(|k| k.verdicts)
            .sum::<u64>()
    );
    let unmodeled: u64 = t.kinds.iter().map(|k| k.unmodeled).sum();
    let _ = writeln!(
        out,
        "UNMODELED: {unmodeled} of {} verdicts ({})",
        t.verdicts(),
        percent(if t.verdicts() == 0 {
            f64::NAN
        } else {
            unmodeled as f64 / t.verdicts() as f64
        })
    );
    let mut findings: Vec<&Finding> = t.findings.iter().collect();
    findings.sort_by_key(|f| (f.kind, f.seed));
    if !findings.is_empty() {
        let _ = writeln!(
            out,
            "\npast their limits (seed, check, phase: observed vs limit):"
        );
        for f in findings {
            let note = f.note.as_deref().unwrap_or_default();
            let short: String = note.chars().take(160).collect();
            let _ = writeln!(
                out,
                "  seed {} {} {}: {} {} {} ({}){}",
                f.seed,
                f.check,
                f.phase.as_deref().unwrap_or("(run)"),
                fmt_num(f.observed),
                if f.upper { ">" } else { "<" },
                fmt_num(f.limit),
                f.kind.word(),
                if short.is_empty() {
                    String::new()
                } else {
                    format!(
                        ": {short}{}",
                        if note.len() > short.len() { "…" } else { "" }
                    )
                }
            );
        }
    }
    let stopped: Vec<String> = t
        .scenarios
        .iter()
        .filter(|s| matches!(s.ran, Ran::TimedOut { .. } | Ran::Error { .. }))
        .map(|s| match &s.ran {
            Ran::Error { message } => format!("  seed {}: could not run: {message}", s.seed),
            Ran::TimedOut { limit_s, abandoned } => format!(
                "  seed {}: {} after {} s of wall time{}",
                s.seed,
                s.ran.word(),
                fmt_num(*limit_s),
                if *abandoned {
                    " and did not stop: left behind"
                } else {
                    ""
                }
            ),
            _ => String::new(),
        })
        .collect();
    if !stopped.is_empty() {
        let _ = writeln!(out, "\nnot checked to the end:\n{}", stopped.join("\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Outcome;

    fn verdict(check: &str, kind: LimitKind, outcome: Outcome) -> Verdict {
        Verdict {
            name: check.to_owned(),
            check: check.to_owned(),
            phase: None,
            formula: String::new(),
            inputs: String::new(),
            predicted: 1.0,
            limit: 1.0,
            observed: if outcome == Outcome::Fail { 2.0 } else { 1.0 },
            upper: true,
            margin: 0.0,
            pass: outcome != Outcome::Fail,
            outcome,
            note: None,
            calls_window_s: None,
            kind,
        }
    }

    #[test]
    fn rows_count_scenarios_once_and_outcomes_add_up() {
        let a = Checked::without_verdicts(1, Ran::Complete, 1.0);
        let a = Checked {
            verdicts: vec![
                verdict("cloudCalls", LimitKind::Hard, Outcome::Pass),
                verdict("cloudCalls", LimitKind::Hard, Outcome::Pass),
                verdict("steadyRate", LimitKind::Approximation, Outcome::Fail),
            ],
            ..a
        };
        let b = Checked {
            verdicts: vec![
                verdict("cloudCalls", LimitKind::Hard, Outcome::Fail),
                verdict("steadyRate", LimitKind::Approximation, Outcome::Unmodeled),
            ],
            ..Checked::without_verdicts(2, Ran::Complete, 1.0)
        };
        let t = tally(1, &[b, a]);
        let calls = &t.rows[0];
        assert_eq!((calls.scenarios, calls.verdicts), (2, 3));
        assert_eq!((calls.pass, calls.fail), (2, 1));
        assert_eq!(t.hard_violations, 1);
        assert!(!t.clean());
        assert_eq!(t.verdicts(), 5);
        assert!((t.rows[1].within() - 0.0).abs() < 1e-12);
        assert_eq!(t.findings.len(), 2);
        assert!(render(&t).contains("hard bounds exceeded: 1 (of 3"));
    }
}
