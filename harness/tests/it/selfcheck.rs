//! `harness selfcheck`: the table's totals add up over real runs of generated scenarios, and
//! a hard bound exceeded in a run's verdicts is counted as such and fails the selfcheck.

use std::process::Command;

use harness::result::{CallAction, CloudCall, LimitKind, Observations, Outcome, PhaseSpan};
use harness::selfcheck::{Checked, tally};

/// Seeds whose scenarios are small and short, seconds each in a debug build; the first
/// misses a given limit (a restart's `drainEfficiency` of 0.5 that a controller-runtime
/// provider's restart does not reach) and the second an approximation (a time to Ready
/// past its tolerance), so both are kept.
const SEED: &str = "9";
const COUNT: u64 = 2;

#[test]
fn a_small_selfcheck_tallies_every_verdict_once_and_keeps_its_failures() {
    let _cores = crate::timing::heavy();
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("selfcheck");
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["selfcheck", "-n", &COUNT.to_string(), "--seed", SEED])
        .args(["--format", "json", "--out"])
        .arg(&out)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&run.stderr);
    let t: serde_json::Value = serde_json::from_slice(&run.stdout).expect("JSON on stdout");
    assert_eq!(t["runs"]["drawn"], COUNT, "{stderr}");
    let scenarios = t["scenarios"].as_array().expect("scenarios");
    assert_eq!(scenarios.len() as u64, COUNT);
    let seeds: Vec<u64> = scenarios
        .iter()
        .map(|s| s["seed"].as_u64().unwrap())
        .collect();
    let first: u64 = SEED.parse().unwrap();
    assert_eq!(seeds, (first..first + COUNT).collect::<Vec<_>>());
    // Every verdict of every scenario is in exactly one row, and every row's outcomes add up.
    let per_scenario: u64 = scenarios
        .iter()
        .map(|s| s["verdicts"].as_u64().unwrap())
        .sum();
    assert!(per_scenario > 0);
    for table in ["rows", "kinds"] {
        let rows = t[table].as_array().expect("rows");
        let total: u64 = rows.iter().map(|r| r["verdicts"].as_u64().unwrap()).sum();
        assert_eq!(total, per_scenario, "{table}");
        for r in rows {
            let n = |k: &str| r[k].as_u64().unwrap();
            assert_eq!(
                n("pass") + n("fail") + n("unmodeled") + n("incomplete"),
                n("verdicts"),
                "{r}"
            );
            assert!(n("scenarios") >= 1 && n("scenarios") <= COUNT, "{r}");
        }
    }
    let fails: u64 = scenarios.iter().map(|s| s["fail"].as_u64().unwrap()).sum();
    assert_eq!(fails, t["findings"].as_array().unwrap().len() as u64);
    // The exit code follows the hard bounds and the runs.
    let clean =
        t["hard_violations"] == 0 && t["runs"]["timed_out"] == 0 && t["runs"]["errors"] == 0;
    assert_eq!(
        run.status.code(),
        Some(if clean { 0 } else { 1 }),
        "{stderr}"
    );
    // Each scenario with a failure is kept, and loads as a scenario of its own.
    let kept: Vec<&serde_json::Value> = scenarios
        .iter()
        .filter(|s| s["fail"].as_u64() > Some(0))
        .collect();
    assert!(!kept.is_empty(), "{t}");
    for s in kept {
        let yaml = out.join(format!("seed-{}.yaml", s["seed"]));
        let loaded = harness::scenario::load_with(&yaml, &[]).expect("a kept scenario loads");
        assert_eq!(loaded.time, harness::scenario::TimeMode::Virtual);
        assert!(out.join(format!("seed-{}/result.json", s["seed"])).exists());
    }
    assert!(out.join("selfcheck.json").exists());
}

const SCENARIO: &str = "apiVersion: harness/v1\nname: burst\nprovider: {maxReconcileRate: 1, rateLimitModel: in-queue, pollInterval: 1m}\nresources:\n  - {name: b, kind: Bucket, count: 10}\nphases:\n  - {name: create, action: create}\n  - {name: hold, action: hold, duration: 10m}\nassertions:\n  - {check: cloudCalls, window: 1s}\n  - {check: orphans}\n";

/// A run of `SCENARIO` whose hold made `calls` cloud calls within its first millisecond.
fn observed(calls: u64) -> Observations {
    let cloud_calls = (0..calls)
        .map(|i| CloudCall {
            at_us: 100_000_000 + i,
            account: "default".into(),
            action: CallAction::Get,
            op: "generic:get".into(),
            name: format!("b-{}", i % 10),
            status: 200,
            throttled: false,
            retry_not_before_us: None,
        })
        .collect();
    Observations {
        duration_us: 700_000_000,
        phases: vec![
            PhaseSpan::complete("create", 0, 100_000_000),
            PhaseSpan::complete("hold", 100_000_000, 700_000_000),
        ],
        cloud_calls,
        ..Observations::default()
    }
}

#[test]
fn a_hard_bound_exceeded_in_a_run_is_a_violation_and_fails_the_selfcheck() {
    let s = harness::scenario::parse(SCENARIO, "burst.yaml").expect("valid");
    let plan = harness::predict::plan(&s);
    let checked = |calls| {
        let r = harness::result::evaluate(&s, &plan, &observed(calls));
        Checked::from_result(7, &r, 0.0, None)
    };
    // in-queue: the window's bound is [P] §2.1, a hard one.
    let quiet = checked(1);
    assert_eq!(quiet.verdicts[0].kind, LimitKind::Hard);
    assert_eq!(quiet.verdicts[0].outcome, Outcome::Pass);
    let bound = quiet.verdicts[0].limit;
    assert!(bound.is_finite() && bound > 1.0, "{bound}");
    // The audit's limit is the scenario's.
    assert_eq!(quiet.verdicts[1].kind, LimitKind::Given);
    let burst = checked(bound as u64 + 1);
    assert_eq!(burst.verdicts[0].outcome, Outcome::Fail);
    assert_eq!(burst.hard_violations().count(), 1);
    assert!(burst.keep());

    let t = tally(7, &[quiet.clone(), Checked { seed: 8, ..burst }]);
    assert_eq!(t.hard_violations, 1);
    assert!(!t.clean());
    let hard = t.kinds.iter().find(|r| r.kind == LimitKind::Hard).unwrap();
    assert_eq!(
        (hard.scenarios, hard.verdicts, hard.pass, hard.fail),
        (2, 2, 1, 1)
    );
    assert_eq!(t.findings.len(), 1);
    assert_eq!(
        (t.findings[0].seed, t.findings[0].kind),
        (8, LimitKind::Hard)
    );
    assert!(harness::selfcheck::render(&t).contains("hard bounds exceeded: 1 (of 2"));

    let t = tally(
        7,
        &[
            quiet,
            Checked {
                seed: 8,
                ..checked(bound as u64)
            },
        ],
    );
    assert_eq!(t.hard_violations, 0);
    assert!(t.clean());
}
