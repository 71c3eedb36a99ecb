//! Virtual time: the embedded stack on tokio's paused clock. A run repeats exactly for a
//! seed, and it is the same run as in real time, within the poll jitter.

use std::path::PathBuf;
use std::process::Command;

use harness::result::RunResult;
use harness::scenario::{self, Scenario, TimeMode};

use crate::fixture::run_to_end as run_on;

fn scenario_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(name)
}

fn smoke(time: TimeMode) -> Scenario {
    let mut s = scenario::load(&scenario_path("smoke.yaml")).expect("smoke.yaml is valid");
    s.time = time;
    s
}

/// The result as JSON, without the fields that hold wall time.
fn without_wall_time(r: &RunResult) -> serde_json::Value {
    let mut v = serde_json::to_value(r).expect("a result serializes");
    v["run"]["time"]["wall_s"] = serde_json::Value::Null;
    v["run"]["time"]["reconcile_cpu_measured_ms"] = serde_json::Value::Null;
    v["run"]["started_at"] = serde_json::Value::Null;
    // The process's resident set depends on the machine, as wall time does.
    if let Some(samples) = v["memory"].as_array_mut() {
        for s in samples {
            for pair in s["values"].as_array_mut().into_iter().flatten() {
                if pair[0] == "process_rss_bytes" {
                    pair[1] = serde_json::Value::Null;
                }
            }
        }
    }
    v
}

/// The paths at which `a` and `b` differ, the first 20.
fn differences(a: &serde_json::Value, b: &serde_json::Value, at: &str, out: &mut Vec<String>) {
    use serde_json::Value;
    if out.len() >= 20 || a == b {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                differences(
                    v,
                    y.get(k).unwrap_or(&Value::Null),
                    &format!("{at}.{k}"),
                    out,
                );
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                differences(v, w, &format!("{at}[{i}]"), out);
            }
        }
        _ => out.push(format!("{at}: {a} / {b}").chars().take(300).collect()),
    }
}

#[test]
fn two_virtual_runs_with_one_seed_write_the_same_result_apart_from_wall_time() {
    let s = smoke(TimeMode::Virtual);
    let first = run_on(&s);
    let second = run_on(&s);
    assert_eq!(first.run.time.mode, TimeMode::Virtual);
    assert!(
        first.passed(),
        "{}",
        harness::report::assertion_table(&first)
    );
    // Four phases: 15 s of hold alone; the run took far less wall time than that.
    assert!(first.duration_s > 40.0, "span {}", first.duration_s);
    assert!(
        first.run.time.wall_s < first.duration_s,
        "{}",
        harness::report::time_summary(&first)
    );
    let mut differ = Vec::new();
    differences(
        &without_wall_time(&first),
        &without_wall_time(&second),
        "",
        &mut differ,
    );
    assert!(differ.is_empty(), "the two runs differ at {differ:?}");
    // The seed reaches the draws: another seed, another run.
    let mut other = s.clone();
    other.seed += 1;
    assert!(without_wall_time(&run_on(&other)) != without_wall_time(&first));
}

/// The relative tolerance the prediction states for poll counts: the hold's long-run band
/// [Σ 1/(P_i + j_i), Σ 1/(P_i − j_i)], as (high − low) / (high + low), that is j/P.
fn jitter_tolerance(s: &Scenario) -> f64 {
    let plan = harness::predict::plan(s);
    let band = plan
        .all()
        .find(|p| p.id == "hold/band")
        .expect("smoke's hold has a band");
    let input = |name: &str| {
        band.inputs
            .iter()
            .find(|i| i.name == name)
            .map(|i| i.value)
            .expect("the band has its ends")
    };
    let (low, high) = (input("low"), input("high"));
    (high - low) / (high + low)
}

#[test]
fn smoke_gets_the_same_verdicts_and_call_counts_in_real_and_virtual_time() {
    let real = run_on(&smoke(TimeMode::Real));
    let virtual_ = run_on(&smoke(TimeMode::Virtual));
    assert_eq!(real.run.time.mode, TimeMode::Real);
    let verdicts = |r: &RunResult| -> Vec<(String, bool)> {
        r.verdicts
            .iter()
            .map(|v| (v.name.clone(), v.pass))
            .collect()
    };
    assert_eq!(verdicts(&real), verdicts(&virtual_));
    let tolerance = jitter_tolerance(&smoke(TimeMode::Real));
    assert!((0.09..0.11).contains(&tolerance), "{tolerance}");
    let within = |what: &str, a: u64, b: u64| {
        let allowed = (tolerance * a.max(b) as f64).ceil() as u64;
        assert!(
            a.abs_diff(b) <= allowed,
            "{what}: {a} in real time, {b} in virtual time, more than {allowed} apart"
        );
    };
    assert_eq!(real.phases.len(), virtual_.phases.len());
    for (r, v) in real.phases.iter().zip(&virtual_.phases) {
        assert_eq!(r.name, v.name);
        let mut ops: Vec<&String> = r.calls.keys().chain(v.calls.keys()).collect();
        ops.sort();
        ops.dedup();
        for op in ops {
            let count = |p: &harness::result::PhaseResult| p.calls.get(op).copied().unwrap_or(0);
            within(&format!("phase {} {op}", r.name), count(r), count(v));
        }
        within(
            &format!("phase {} API requests", r.name),
            r.api_requests,
            v.api_requests,
        );
    }
}

#[test]
fn virtual_time_is_refused_with_a_kubeconfig_and_on_a_cluster_scenario() {
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["run", "--virtual-time", "--kubeconfig", "kubeconfig"])
        .args(["--cloud-url", "http://127.0.0.1:9"])
        .arg(scenario_path("smoke.yaml"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: --virtual-time cannot run with --kubeconfig: virtual time runs the embedded stack on a paused clock"),
        "{err}"
    );
    let yaml = "apiVersion: harness/v1\nname: c\ntarget: cluster\ntime: virtual\n\
                resources:\n  - {name: b, kind: Bucket, count: 1}\n\
                phases:\n  - {name: create, action: create}\n";
    let err = scenario::parse(yaml, "c.yaml").unwrap_err().to_string();
    assert!(
        err.contains("c.yaml:4:7: `time: virtual` runs the embedded stack on a paused clock"),
        "{err}"
    );
}
