//! A/B comparison.

use std::path::PathBuf;

use harness::compare::{compare, render};
use harness::predict::plan;
use harness::result::evaluate;
use harness::scenario::load;

use crate::fixture::smoke_observations;

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
    assert!(regressed.contains(&"calls create create"), "{regressed:?}");
    assert!(render(&c).contains("REGRESSION"));
    assert_eq!(
        compare(&old, &new, 25.0).regressions().count(),
        0,
        "+20% is within 25%"
    );
    assert_eq!(compare(&old, &old, 0.0).regressions().count(), 0);
}
