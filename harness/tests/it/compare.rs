//! A/B comparison.

use std::path::PathBuf;

use harness::compare::{Problem, compare, render};
use harness::predict::plan;
use harness::result::evaluate;
use harness::scenario::load;

use crate::fixture::{interrupted_observations, smoke_observations};

#[test]
fn a_rise_past_the_threshold_is_a_regression_and_a_rise_below_it_is_not() {
    let s = load(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/smoke.yaml"))
        .expect("loads");
    let p = plan(&s);
    let old = evaluate(&s, &p, &smoke_observations());
    let mut obs = smoke_observations();
    let extra: Vec<_> = obs
        .cloud_calls
        .iter()
        .filter(|c| c.action == harness::result::CallAction::Create)
        .take(20)
        .cloned()
        .collect();
    obs.cloud_calls.extend(extra);
    obs.cloud_calls.sort_by_key(|c| c.at_us);
    let new = evaluate(&s, &p, &obs);
    let c = compare(&old, &new, 10.0);
    let regressed: Vec<&str> = c.regressions().map(|r| r.metric.as_str()).collect();
    // One row per difference: the calls by operation stand in for those by action.
    assert!(
        regressed.contains(&"calls create generic:create"),
        "{regressed:?}"
    );
    assert!(
        !c.rows.iter().any(|r| r.metric == "calls create create"),
        "{:?}",
        c.rows
    );
    assert!(render(&c).contains("REGRESSION"));
    assert_eq!(
        compare(&old, &new, 25.0).regressions().count(),
        0,
        "+20% is within 25%"
    );
    assert_eq!(compare(&old, &old, 0.0).regressions().count(), 0);
}

fn smoke() -> harness::scenario::Scenario {
    load(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/smoke.yaml")).expect("loads")
}

/// The smoke fixture without the orphan it leaks, so that every assertion but the API bound
/// passes; the API bound is raised out of the way.
fn passing(s: &harness::scenario::Scenario) -> harness::result::RunResult {
    let mut obs = smoke_observations();
    obs.inventory.clear();
    obs.cloud_calls.retain(|c| !c.throttled);
    let mut r = evaluate(s, &plan(s), &obs);
    r.scenario.file = "scenarios/smoke.yaml".to_owned();
    r.verdicts.retain(|v| v.check != "apiRequests");
    assert!(r.passed(), "{}", harness::report::assertion_table(&r));
    r
}

#[test]
fn an_interrupted_new_run_is_not_comparable_and_says_why() {
    let s = smoke();
    let old = passing(&s);
    let new = evaluate(&s, &plan(&s), &interrupted_observations());
    let c = compare(&old, &new, 10.0);
    assert!(!c.comparable());
    assert!(
        c.problems.iter().any(|p| matches!(
            p,
            Problem::NewPartial(why) if why == "interrupted (SIGTERM) during phase hold"
        )),
        "{:?}",
        c.problems
    );
    // resync and delete never ran: their metrics are missing, not "0 % better".
    assert!(
        c.problems
            .iter()
            .any(|p| matches!(p, Problem::MissingMetrics(m) if m.iter().any(|k| k.starts_with("calls resync")))),
        "{:?}",
        c.problems
    );
    let text = render(&c);
    assert!(!text.contains("NaN"), "{text}");
    assert!(text.contains("not comparable: NEW is partial"), "{text}");
    assert!(
        text.trim_end()
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("NOT COMPARABLE")),
        "{text}"
    );
}

#[test]
fn a_new_run_that_failed_an_assertion_is_not_comparable() {
    let s = smoke();
    let old = passing(&s);
    let new = evaluate(&s, &plan(&s), &smoke_observations());
    let c = compare(&old, &new, 10.0);
    let failed = c
        .problems
        .iter()
        .find_map(|p| match p {
            Problem::NewFailed(names) => Some(names.clone()),
            _ => None,
        })
        .expect("NEW's failures are a problem");
    assert!(failed.contains(&"orphans".to_owned()), "{failed:?}");
    assert!(compare(&old, &old, 10.0).comparable());
}

#[test]
fn different_workloads_are_not_compared_but_different_settings_are() {
    let s = smoke();
    let old = passing(&s);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/smoke.yaml");
    let sets = |v: &[&str]| -> Vec<harness::scenario::Set> {
        v.iter().map(|x| x.parse().expect("a set")).collect()
    };
    let faster = harness::scenario::load_with(&path, &sets(&["provider.maxReconcileRate=20"]))
        .expect("loads");
    // The same observations, judged under R = 20's budget.
    let mut new = passing(&faster);
    let c = compare(&old, &new, 10.0);
    assert!(c.comparable(), "{:?}", c.problems);
    let text = render(&c);
    assert!(
        text.contains(
            "overrides  OLD none\n           NEW provider.maxReconcileRate=20  (differs)"
        ),
        "{text}"
    );
    assert_eq!(c.settings_changed, ["maxReconcileRate: 10 → 20"]);
    assert!(
        text.contains("settings changed: maxReconcileRate: 10 → 20\nthe rows below are the effect of that change"),
        "{text}"
    );
    // The same observations under a larger budget: every budget is used less, nothing
    // regresses, and each assertion's use is a row.
    assert_eq!(c.regressions().count(), 0, "{text}");
    assert!(
        c.rows.iter().any(|r| r.metric.starts_with("budget use ")),
        "{text}"
    );
    // Back the other way: the same calls under half the budget use it worse, a regression.
    let back = compare(&new, &old, 10.0);
    let regressed: Vec<&str> = back.regressions().map(|r| r.metric.as_str()).collect();
    assert!(
        !regressed.is_empty() && regressed.iter().all(|m| m.starts_with("budget use ")),
        "{regressed:?}"
    );
    let bigger =
        harness::scenario::load_with(&path, &sets(&["resources.bucket.count=50"])).expect("loads");
    new.scenario = harness::result::scenario_info(&bigger);
    let c = compare(&old, &new, 10.0);
    match c.problems.as_slice() {
        [Problem::WorkloadDiffers { old_only, new_only }] => {
            assert!(old_only[0].contains("100 ×"), "{old_only:?}");
            assert!(new_only[0].contains("50 ×"), "{new_only:?}");
        }
        other => panic!("{other:?}"),
    }
    assert!(c.rows.is_empty(), "no metric is compared across workloads");
}

#[test]
fn the_header_names_both_runs_scenario_settings_commit_and_start() {
    let s = smoke();
    let mut old = passing(&s);
    old.run.commit = Some("aaaaaaaaaaaa".to_owned());
    let mut new = passing(&s);
    new.run.commit = Some("bbbbbbbbbbbb+dirty".to_owned());
    new.run.features = vec!["aws".to_owned()];
    let text = render(&compare(&old, &new, 10.0));
    let head: Vec<&str> = text.lines().take(14).collect();
    assert_eq!(
        head,
        [
            "scenario   OLD smoke (scenarios/smoke.yaml)",
            "           NEW smoke (scenarios/smoke.yaml)",
            "settings   OLD crossplane R=10 poll 10s ±10% min 1s",
            "           NEW crossplane R=10 poll 10s ±10% min 1s",
            "overrides  OLD none",
            "           NEW none",
            "commit     OLD aaaaaaaaaaaa",
            "           NEW bbbbbbbbbbbb+dirty  (differs)",
            "build      OLD default",
            "           NEW features: aws  (differs)",
            "started    OLD 2026-11-24T10:00:00Z",
            "           NEW 2026-11-24T10:00:00Z",
            "outcome    OLD PASS: all 6 assertions held",
            "           NEW PASS: all 6 assertions held",
        ]
    );
    assert!(
        text.trim_end().ends_with("0 regression(s) past 10%"),
        "{text}"
    );
}
