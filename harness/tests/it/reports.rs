//! Reports from a synthetic result: table, JUnit, HTML (written to the test temp dir for a
//! look in a browser).

use std::path::PathBuf;

use harness::predict::plan;
use harness::report::{assertion_table, html, junit};
use harness::result::evaluate;
use harness::scenario::load;

use crate::fixture::smoke_observations;

fn smoke_result() -> harness::result::RunResult {
    let s = load(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/smoke.yaml"))
        .expect("loads");
    evaluate(&s, &plan(&s), &smoke_observations())
}

#[test]
fn the_smoke_fixture_gets_a_verdict_per_assertion_with_the_orphan_caught() {
    let r = smoke_result();
    assert_eq!(r.verdicts.len(), 7);
    let orphans = r
        .verdicts
        .iter()
        .find(|v| v.check == "orphans")
        .expect("orphan check");
    assert!(!orphans.pass && orphans.observed == 1.0);
    let calls = r
        .verdicts
        .iter()
        .find(|v| v.name == "cloudCalls per 1s")
        .expect("1 s bound");
    assert!(calls.pass && calls.limit == 220.0, "{calls:?}");
    let throttles = r
        .verdicts
        .iter()
        .find(|v| v.check == "throttles")
        .expect("throttles");
    assert_eq!((throttles.observed, throttles.pass), (3.0, false));
    assert!(!r.passed());
}

#[test]
fn the_table_lists_every_assertion_with_formula_and_a_summary_line() {
    let t = assertion_table(&smoke_result());
    assert!(t.contains("FAIL  orphans"), "{t}");
    // The fixture's create burst sends 5 status writes per create within 10 ms: above the
    // API client's 10R + 5R·W, so the synthetic run fails that bound too.
    assert!(t.contains("FAIL  apiRequests per 1s"), "{t}");
    assert!(t.contains("c_max · [min(⌊B + R·(W + Q)⌋ + E"), "{t}");
    assert!(t.trim_end().ends_with("4 of 7 assertions passed"), "{t}");
}

#[test]
fn junit_has_one_testcase_per_assertion_and_escapes_text() {
    let x = junit(&smoke_result());
    assert_eq!(x.matches("<testcase ").count(), 7);
    assert_eq!(x.matches("<failure ").count(), 3);
    assert!(x.contains("failures=\"3\""));
    assert!(!x.contains("≤ limit <"), "unescaped text");
}

#[test]
fn the_html_report_is_self_contained_and_has_every_chart() {
    let h = html(&smoke_result());
    assert!(!h.contains("<script") && !h.contains("src=\"http") && !h.contains("href=\"http"));
    assert_eq!(h.matches("<svg ").count(), 3);
    for part in [
        "Cloud calls per second against the budget band",
        "API-server requests",
        "Time to Ready",
        "Assertions",
        "resync",
    ] {
        assert!(h.contains(part), "missing {part}");
    }
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("smoke-report.html");
    std::fs::write(&out, &h).expect("writable temp dir");
}

#[test]
fn the_result_round_trips_through_json() {
    let r = smoke_result();
    let text = serde_json::to_string(&r).expect("serialises");
    let back: harness::result::RunResult = serde_json::from_str(&text).expect("deserialises");
    assert_eq!(back.verdicts.len(), r.verdicts.len());
    assert_eq!(back.version, harness::result::RESULT_VERSION);
    assert_eq!(back.timeline.cloud_calls, r.timeline.cloud_calls);
}
