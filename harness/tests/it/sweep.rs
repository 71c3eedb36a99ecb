//! `harness sweep`: a small scenario over three reconcile rates in virtual time, each point a
//! run of its own; the choice follows the measured figures; a point that writes no result
//! is reported and the others kept; points run one by one as an Indexed Job's pods would
//! (JOB_COMPLETION_INDEX) are collected into the same report.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// 200 buckets created at once, held and restarted: at R = 2 the creation drains for
/// minutes, at R = 20 its burst takes the whole wave in a few seconds. Seconds of wall time
/// a point in virtual time.
pub(crate) const SCENARIO: &str = "apiVersion: harness/v1
name: sweep-small
description: 200 buckets created, held and restarted, for harness sweep's tests.
provider: {maxReconcileRate: 5, pollInterval: 2m}
resources:
  - {name: bucket, kind: Bucket, count: 200}
phases:
  - {name: create, action: create, timeout: 10m}
  - {name: hold, action: hold, duration: 5m}
  - {name: restart, action: restart, timeout: 10m}
assertions:
  - {check: cloudCalls, window: 10s}
  - {check: orphans}
";

/// A fresh directory `dir` under the tests' scratch directory, with [`SCENARIO`] in it:
/// the scenario's file and the directory.
pub(crate) fn scenario_in(dir: &str) -> (PathBuf, PathBuf) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("sweep-small.yaml");
    std::fs::write(&file, SCENARIO).unwrap();
    (file, dir)
}

/// A fresh directory for test `name`, with the scenario in it: the scenario's file and
/// where the sweep writes.
fn setup(name: &str) -> (PathBuf, PathBuf) {
    let (file, dir) = scenario_in(&format!("sweep-{name}"));
    (file, dir.join("out"))
}

fn harness(args: &[&str], file: &Path, out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("sweep")
        .arg(file)
        .args(args)
        .arg("--out")
        .arg(out)
        .env_remove("JOB_COMPLETION_INDEX")
        .output()
        .expect("runs")
}

fn sweep_json(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap()
}

/// A figure of a point: (predicted, measured).
fn figure(point: &Value, name: &str) -> (Option<f64>, Option<f64>) {
    let v = &point["figures"][name];
    (v["predicted"].as_f64(), v["measured"].as_f64())
}

#[test]
fn a_sweep_runs_every_point_and_names_the_cheapest_that_meets_slo_and_budget() {
    let _cores = crate::timing::heavy();
    let (file, out) = setup("choice");
    let run = harness(
        &[
            "--vary",
            "provider.maxReconcileRate=2,5,20",
            "--slo",
            "timeToReady.p99<=2m",
            "--budget",
            "cloudCalls.10s<=1000",
            "--jobs",
            "2",
        ],
        &file,
        &out,
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    let r = sweep_json(&out);
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 3, "{stderr}");
    assert_eq!(r["time"], "virtual");
    let mut feasible = Vec::new();
    for (i, p) in points.iter().enumerate() {
        assert_eq!(p["index"], i);
        assert_eq!(p["status"], "ran", "{p}");
        assert!(out.join(format!("points/{i:03}/result.json")).exists());
        assert!(out.join(format!("points/{i:03}/report.html")).exists());
        for name in [
            "timeToReady.p99",
            "cloudCalls.10s",
            "pollPeriod",
            "drainTime",
        ] {
            let (predicted, measured) = figure(p, name);
            assert!(
                predicted.is_some() && measured.is_some(),
                "{name} of point {i}: {p}"
            );
        }
        let (_, ttr) = figure(p, "timeToReady.p99");
        let (_, peak) = figure(p, "cloudCalls.10s");
        if ttr.unwrap() <= 120.0 && peak.unwrap() <= 1000.0 {
            feasible.push((peak.unwrap(), i));
        }
    }
    // A faster rate buys a faster creation wave and costs a higher peak, measured and
    // predicted alike.
    let at = |i: usize, name: &str| figure(&points[i], name);
    assert!(at(0, "timeToReady.p99").1 > at(2, "timeToReady.p99").1);
    assert!(at(0, "cloudCalls.10s").1 < at(2, "cloudCalls.10s").1);
    assert!(at(0, "timeToReady.p99").0 > at(2, "timeToReady.p99").0);
    assert!(at(0, "cloudCalls.10s").0 < at(2, "cloudCalls.10s").0);
    // The choice is the least peak among the points that meet both, as measured.
    let cheapest = feasible
        .iter()
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, i)| *i);
    assert_eq!(
        r["selection"]["cheapest"].as_u64().map(|i| i as usize),
        cheapest
    );
    let expected_exit = if cheapest.is_some() { 0 } else { 1 };
    assert_eq!(run.status.code(), Some(expected_exit), "{stdout}\n{stderr}");
    match cheapest {
        Some(i) => assert!(
            stdout.contains(&format!(
                "cheapest point meeting timeToReady.p99<=2m and cloudCalls.10s<=1000: point {i}"
            )),
            "{stdout}"
        ),
        None => assert!(stdout.contains("no point meets"), "{stdout}"),
    }
    for name in ["sweep.txt", "sweep.html"] {
        assert!(out.join(name).exists(), "{name}");
    }
    let html = std::fs::read_to_string(out.join("sweep.html")).unwrap();
    for needle in [
        "budget cloudCalls.10s&lt;=1000",
        "SLO timeToReady.p99&lt;=2m",
        "cloudCalls.10s: peak cloud calls in 10s (calls)",
    ] {
        assert!(html.contains(needle), "{needle}");
    }
    // A time axis names the unit its ticks read in.
    assert!(
        html.contains("timeToReady.p99: time to Ready p99 (s)<")
            || html.contains("timeToReady.p99: time to Ready p99 (min)<"),
        "the time axis's title"
    );
    assert!(stderr.contains("sweep: 3 points, 2 at once"), "{stderr}");
}

#[test]
fn a_point_that_writes_no_result_is_named_and_the_others_are_kept() {
    let _cores = crate::timing::heavy();
    let (file, out) = setup("failure");
    // Point 1 cannot write its result.json: a directory is in its place.
    std::fs::create_dir_all(out.join("points/001/result.json")).unwrap();
    let run = harness(
        &[
            "--vary",
            "provider.maxReconcileRate=5,10",
            "--set",
            "phases.hold.duration=1m",
        ],
        &file,
        &out,
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(1), "{stdout}");
    let r = sweep_json(&out);
    let points = r["points"].as_array().unwrap();
    assert_eq!(points[0]["status"], "ran");
    assert_eq!(points[1]["status"], "failed");
    let reason = points[1]["reason"].as_str().unwrap();
    assert!(reason.contains("result.json"), "{reason}");
    assert_eq!(r["selection"]["failed"], serde_json::json!([1]));
    // The failed point keeps its predictions; the other its measurements.
    assert!(figure(&points[1], "timeToReady.p99").0.is_some());
    assert!(figure(&points[0], "timeToReady.p99").1.is_some());
    assert!(
        stdout.contains("without a complete result (not chosen): 1 (provider.maxReconcileRate=10)"),
        "{stdout}"
    );
    assert!(r["sets"] == serde_json::json!(["phases.hold.duration=1m"]));
}

#[test]
fn points_run_apart_with_their_completion_index_are_collected_into_one_report() {
    let _cores = crate::timing::heavy();
    let (file, out) = setup("indexed");
    let vary = "provider.maxReconcileRate=5,10";
    // Two "pods": the same command, each with its completion index in the environment.
    let pods: Vec<_> = (0..2)
        .map(|i| {
            Command::new(env!("CARGO_BIN_EXE_harness"))
                .arg("sweep")
                .arg(&file)
                .args(["--vary", vary, "--out"])
                .arg(&out)
                .env("JOB_COMPLETION_INDEX", i.to_string())
                .output()
                .expect("runs")
        })
        .collect();
    for (i, pod) in pods.iter().enumerate() {
        assert!(
            out.join(format!("points/{i:03}/result.json")).exists(),
            "pod {i}: {}",
            String::from_utf8_lossy(&pod.stderr)
        );
        assert!(
            !out.join("sweep.json").exists(),
            "a pod runs its point only"
        );
    }
    let collect = harness(&["--vary", vary, "--collect"], &file, &out);
    let stdout = String::from_utf8_lossy(&collect.stdout);
    let r = sweep_json(&out);
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{stdout}");
    for p in points {
        assert_eq!(p["status"], "ran", "{p}");
        assert!(figure(p, "cloudCalls.10s").1.is_some());
    }
    assert_eq!(r["wallS"], Value::Null, "a collection runs nothing");
    // A completion index past the grid is refused, naming the grid's size.
    let past = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("sweep")
        .arg(&file)
        .args(["--vary", vary, "--out"])
        .arg(&out)
        .env("JOB_COMPLETION_INDEX", "2")
        .output()
        .unwrap();
    assert_eq!(past.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&past.stderr);
    assert!(
        stderr.contains("--point 2: the grid has 2 points, expected 0 to 1"),
        "{stderr}"
    );
}

#[test]
fn bad_axes_and_constraints_say_what_was_expected() {
    let (file, out) = setup("errors");
    for (args, expected) in [
        (
            vec!["--vary", "provider.maxReconcileRate"],
            "expected PATH=V1,V2,…",
        ),
        (vec!["--vary", "provider.rate=5,10"], "unknown path"),
        (
            vec!["--vary", "provider.maxReconcileRate=5,ten"],
            "point 1 (provider.maxReconcileRate=ten)",
        ),
        (
            vec!["--vary", "seed=1,2", "--slo", "timeToReady.p99<5"],
            "no duration such as 5m",
        ),
        (
            vec!["--vary", "seed=1,2", "--budget", "timeToReady.p99<=5m"],
            "give it with --slo",
        ),
        (
            vec!["--vary", "seed=1,2", "--budget", "cloudCalls.30s<=5"],
            "cloudCalls.30s is not measured",
        ),
        (vec![], "has no axis: give --vary"),
    ] {
        let run = harness(&args, &file, &out);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    assert!(!out.exists(), "nothing runs on bad input");
}

#[test]
fn the_shipped_sweep_varies_r_from_5_to_100_against_its_slo_and_budget() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/sweep-r.yaml");
    let sw = harness::sweep::Sweep::prepare(&file, harness::sweep::Options::default())
        .expect("the shipped sweep prepares");
    let rates: Vec<u32> = (0..sw.grid.len())
        .map(|i| sw.scenario(i).unwrap().settings.rate())
        .collect();
    assert_eq!(rates, [5, 10, 20, 50, 100]);
    let constraints: Vec<String> = sw.constraints.iter().map(ToString::to_string).collect();
    assert_eq!(constraints, ["timeToReady.p99<=2m", "cloudCalls.10s<=1000"]);
    assert_eq!(sw.cost.to_string(), "cloudCalls.10s");
    assert!(sw.virtual_time);
    // A command line's axis of the same path replaces the file's.
    let narrowed = harness::sweep::Sweep::prepare(
        &file,
        harness::sweep::Options {
            vary: vec!["provider.maxReconcileRate=20,50".parse().unwrap()],
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(narrowed.grid.len(), 2);
}
