//! The echo of a creation wave (docs/budget.md §3.6) on the embedded stack in virtual time:
//! 600 buckets created within seconds come back for their polls together cycle after
//! cycle, and the busiest window of a 20-minute hold (four poll cycles) stays within the
//! echo's tolerance, far above the stationary one.

use harness::predict::{plan, scan};
use harness::run::{self, Progress, run_embedded};
use harness::scenario::parse;

use crate::fixture::verdict;

const ECHO: &str = "apiVersion: harness/v1
name: echo
time: virtual
provider: {maxReconcileRate: 200, pollInterval: 5m, pollJitterPercent: 10}
resources:
  - {name: bucket, kind: Bucket, count: 600}
phases:
  - {name: create, action: create, timeout: 5m}
  - {name: hold, action: hold, duration: 20m}
assertions:
  - {check: steadyRate, phase: hold, window: 10s}
";

#[test]
fn a_long_hold_after_a_fast_create_stays_within_the_echo_and_above_the_stationary_tolerance() {
    let _cores = crate::timing::heavy();
    let s = parse(ECHO, "echo.yaml").expect("valid scenario");
    let planned = plan(&s);
    let echo = planned
        .find("hold/steady-max/10s")
        .expect("planned")
        .clone();
    assert!(echo.source.contains("§3.6"), "{echo:?}");
    let hold = planned
        .phases
        .iter()
        .find(|p| p.name == "hold")
        .expect("a hold");
    // What the tolerance was before the echo entered it: the hold as stationary from its
    // first second (Naus, §3.5).
    let stationary = scan::naus_tolerance(hold.steady.rate, 10.0, 1200.0, s.prediction.alpha);
    let runtime = run::time::runtime(s.time).expect("a runtime");
    let r = runtime
        .block_on(run_embedded(&s, &Progress::quiet(), std::future::pending()))
        .expect("the stack starts")
        .result;
    assert!(r.phases.iter().all(|p| p.completed), "{}", r.headline());
    let v = verdict(&r, "steadyRate");
    let numbers = format!(
        "busiest 10 s of the hold: {} calls; echo tolerance {} ({}; {}); stationary tolerance {stationary}; the verdict's limit {} ({})",
        v.observed,
        echo.value,
        echo.inputs_text(),
        echo.note.as_deref().unwrap_or_default(),
        v.limit,
        v.formula
    );
    eprintln!("{numbers}");
    assert!(v.observed <= echo.value, "{numbers}");
    assert!(v.observed > stationary as f64, "{numbers}");
    assert!(v.pass, "{numbers}");
}
