//! JUnit XML through quick-junit: one test suite per run; one test case per phase (an error
//! when it did not complete, so a CI that reads the file never shows an interrupted or timed
//! out run green; a failure when it stopped with a verdict) and one per assertion (a failure when it failed, an error when it is
//! incomplete).

use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use crate::predict::fmt_num;
use crate::result::{Outcome, RunResult, Verdict};

fn detail(v: &Verdict) -> String {
    format!(
        "observed {} {} limit {} (predicted {}, margin {})\nformula: {}\ninputs: {}{}\nsymbols and sections: docs/budget.md",
        fmt_num(v.observed),
        if v.upper { "≤" } else { "≥" },
        fmt_num(v.limit),
        fmt_num(v.predicted),
        fmt_num(v.margin),
        v.formula,
        v.inputs,
        v.note
            .as_ref()
            .map(|n| format!("\nnote: {n}"))
            .unwrap_or_default()
    )
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(if s.is_finite() { s.max(0.0) } else { 0.0 })
}

fn phase_cases(r: &RunResult, suite: &mut TestSuite) {
    let name = &r.scenario.name;
    let planned: Vec<(String, String)> = if r.scenario.phases.is_empty() {
        r.phases
            .iter()
            .map(|p| (p.name.clone(), p.action.clone()))
            .collect()
    } else {
        r.scenario
            .phases
            .iter()
            .map(|p| match p.split_once(" (") {
                Some((n, a)) => (n.to_owned(), a.trim_end_matches(')').to_owned()),
                None => (p.clone(), String::new()),
            })
            .collect()
    };
    for (phase, action) in planned {
        let ran = r.phases.iter().find(|p| p.name == phase);
        let stopped_here = r.stopped.as_ref().filter(|s| s.phase == phase);
        let failure = ran.and_then(|p| p.failure.as_ref());
        let status = match (ran, stopped_here) {
            (Some(p), _) if p.completed => TestCaseStatus::success(),
            _ if failure.is_some() => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                if let Some(f) = failure {
                    st.set_message(f.message()).set_type(f.kind());
                }
                st
            }
            (_, Some(s)) => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
                match &s.waiting {
                    Some(w) => st
                        .set_message(format!(
                            "{}: {} of {} resources not {} yet",
                            s.headline(),
                            w.pending,
                            w.of,
                            w.until
                        ))
                        .set_type("timed out")
                        .set_description(super::waiting_lines(r).join("\n")),
                    None => st.set_message(s.headline()).set_type("interrupted"),
                };
                st
            }
            (Some(_), None) => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
                st.set_message(format!("phase {phase} did not complete"))
                    .set_type("incomplete");
                st
            }
            (None, None) => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
                st.set_message(format!(
                    "phase {phase} never ran: {}",
                    r.stopped
                        .as_ref()
                        .map_or_else(|| "the run stopped before it".to_owned(), |s| s.headline())
                ))
                .set_type("not run");
                st
            }
        };
        let mut case = TestCase::new(format!("phase {phase} ({action})"), status);
        case.set_classname(format!("{name}.phases"));
        if let Some(p) = ran {
            case.set_time(secs(p.end_s - p.start_s));
        }
        suite.add_test_case(case);
    }
}

/// The JUnit document.
#[must_use]
pub fn junit(r: &RunResult) -> String {
    let name = &r.scenario.name;
    let mut suite = TestSuite::new(name.as_str());
    suite.set_time(secs(r.duration_s));
    suite.add_property(("scenario file", r.scenario.file.as_str()));
    suite.add_property(("outcome", r.headline().as_str()));
    if !r.scenario.overrides.is_empty() {
        suite.add_property(("overrides", r.scenario.overrides.join(" ").as_str()));
    }
    if let Some(c) = &r.run.commit {
        suite.add_property(("commit", c.as_str()));
    }
    if let Some(t) = &r.run.started_at {
        suite.add_property(("started", t.as_str()));
    }
    phase_cases(r, &mut suite);
    for v in &r.verdicts {
        let status = match v.outcome {
            // The model does not cover the check: skipped, or a failure under --strict.
            Outcome::Unmodeled => {
                let mut st = if v.pass {
                    TestCaseStatus::skipped()
                } else {
                    TestCaseStatus::non_success(NonSuccessKind::Failure)
                };
                st.set_message(format!(
                    "unmodeled: observed {} (the model's limit {} does not cover this scenario{})",
                    fmt_num(v.observed),
                    fmt_num(v.limit),
                    if v.pass { "" } else { "; --strict" }
                ))
                .set_type("unmodeled")
                .set_description(detail(v));
                st
            }
            // The run could not measure what the check counts: skipped, or a failure
            // under --strict.
            Outcome::Unmeasured => {
                let mut st = if v.pass {
                    TestCaseStatus::skipped()
                } else {
                    TestCaseStatus::non_success(NonSuccessKind::Failure)
                };
                st.set_message(format!(
                    "unmeasured: observed {} against limit {}, from a count that cannot judge it{}",
                    fmt_num(v.observed),
                    fmt_num(v.limit),
                    if v.pass { "" } else { "; --strict" }
                ))
                .set_type("unmeasured")
                .set_description(detail(v));
                st
            }
            _ if v.pass => TestCaseStatus::success(),
            Outcome::Incomplete => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
                st.set_message(format!(
                    "incomplete: observed {} within limit {} so far, but {}",
                    fmt_num(v.observed),
                    fmt_num(v.limit),
                    if v.phase.is_some() {
                        "its phase did not complete"
                    } else {
                        "the run stopped early"
                    }
                ))
                .set_type("incomplete")
                .set_description(detail(v));
                st
            }
            _ => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                st.set_message(format!(
                    "observed {} against limit {}",
                    fmt_num(v.observed),
                    fmt_num(v.limit)
                ))
                .set_type(v.check.as_str())
                .set_description(detail(v));
                st
            }
        };
        let mut case = TestCase::new(v.name.as_str(), status);
        case.set_classname(format!("{name}.assertions"));
        if v.pass {
            case.set_system_out(detail(v));
        }
        suite.add_test_case(case);
    }
    let mut report = Report::new("harness");
    report.set_time(secs(r.duration_s));
    report.add_test_suite(suite);
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- cannot serialize the JUnit report: {e} -->\n"))
}
