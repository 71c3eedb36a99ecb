//! The error paths in cluster mode: a share of denied buckets budgeted apart and its
//! faults cleared at run time, and the shipped error-path scenarios shortened to seconds.

use std::path::PathBuf;
use std::time::Instant;

use super::{Cluster, calls};

#[test]
fn a_cluster_run_budgets_a_share_of_denied_buckets_and_clears_their_faults_at_run_time() {
    let mut cluster = Cluster::start("cluster-errors");
    // 2 of 20 buckets denied (the top indices), as permanent-errors.yaml marks its share;
    // the faults reach the separate mock-cloud over its admin API, then a cloudFault phase
    // clears them there.
    let scenario = "\
apiVersion: harness/v1
name: cluster-errors
description: the error paths in cluster mode, with a share of denied buckets
provider: {maxReconcileRate: 10, rateLimitModel: crossplane, pollInterval: 5s}
resources:
  - {name: bucket, kind: Bucket, count: 20, faults: [{percent: 10, error: AccessDenied}]}
phases:
  - {name: create, action: create, rate: 40, timeout: 60s}
  - {name: hold, action: hold, duration: 20s}
  - {name: fix, action: cloudFault, faults: []}
assertions:
  - {check: perResourceCalls, phase: hold, window: 10s}
  - {check: hotLoops, phase: hold, window: 10s}
  - {check: throttles}
  - {check: duplicates}
";
    let result = cluster.run(scenario, &[]);
    for v in result["verdicts"].as_array().unwrap() {
        assert_eq!(v["pass"], true, "{v}");
    }
    // The denied share is measured apart: its two buckets, their calls in the hold (on
    // the backoff's first steps, so far above the hourly figure at the cap), against the
    // prediction. With the provider polling every 5 s the denied buckets call no more than
    // the healthy ones, so there are no offenders to name.
    let costs = result["share_costs"].as_array().unwrap();
    assert_eq!(costs.len(), 1, "{costs:?}");
    assert_eq!(costs[0]["share"], "bucket/AccessDenied");
    assert_eq!(costs[0]["resources"], 2);
    assert!(costs[0]["observed_per_hour"].as_f64().unwrap() > 0.0);
    let phases: Vec<&str> = result["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["create", "hold", "fix"]);
}

/// The cluster runs of the shipped error-path scenarios, shortened to seconds of real time:
/// 20 buckets (50 for drift-loop, 15 beside the 5 observed), polled every 5 s, held 20 s,
/// with the per-resource windows that fit in the hold (hotLoops 10 s, perResourceCalls the
/// whole hold). The file's assertions and predictions are otherwise unchanged.
const SHORTEN: [&str; 6] = [
    "time=real",
    "provider.pollInterval=5s",
    "phases.hold.duration=20s",
    "phases.create.timeout=60s",
    "assertions.perResourceCalls.window=20s",
    "assertions.hotLoops.window=10s",
];

/// Runs the shipped scenario `file` with `sets` in cluster mode against a provider started
/// with the flags of its settings (as a Deployment made for it would); returns result.json
/// and the seconds the run took.
fn run_shipped(file: &str, sets: &[&str]) -> (serde_json::Value, f64) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(file);
    let parsed: Vec<harness::scenario::Set> = sets.iter().map(|s| s.parse().unwrap()).collect();
    let s = harness::scenario::load_with(&path, &parsed).unwrap_or_else(|e| panic!("{e}"));
    let flags = harness::run::source::provider_metrics::provider_flags(&s.settings)
        .into_iter()
        .map(|(flag, value)| format!("--{flag}={value}"))
        .collect();
    let mut cluster = Cluster::start_with(&s.name, flags);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut extra = Vec::new();
    for set in sets {
        extra.push("--set");
        extra.push(set);
    }
    let started = Instant::now();
    let result = cluster.run(&text, &extra);
    let took = started.elapsed().as_secs_f64();
    eprintln!("{file} in cluster mode: {took:.1} s");
    let failed: Vec<String> = result["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["pass"] != true)
        .map(|v| v.to_string())
        .collect();
    assert!(failed.is_empty(), "{file}: {failed:#?}");
    (result, took)
}

fn share_cost<'a>(result: &'a serde_json::Value, share: &str) -> &'a serde_json::Value {
    result["share_costs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["share"] == share)
        .unwrap_or_else(|| panic!("no share {share}: {}", result["share_costs"]))
}

/// Runs shipped scenario `file` in cluster mode shortened to seconds with `count` (a
/// `--set` of its group's count), and requires its error share `share` to hold `resources`
/// resources that cost calls; returns the result.
fn shipped_share(file: &str, count: &str, share: &str, resources: u64) -> serde_json::Value {
    let mut sets = SHORTEN.to_vec();
    sets.push(count);
    let (result, _) = run_shipped(file, &sets);
    let cost = share_cost(&result, share);
    assert_eq!(cost["resources"], resources, "{cost}");
    assert!(cost["observed_per_hour"].as_f64().unwrap() > 0.0, "{cost}");
    result
}

#[test]
fn permanent_errors_yaml_passes_in_cluster_mode_shortened_to_seconds() {
    // 5 % of 20: one denied bucket, on the backoff's first steps in the hold.
    shipped_share(
        "permanent-errors.yaml",
        "resources.bucket.count=20",
        "bucket/AccessDenied",
        1,
    );
}

#[test]
fn drift_loop_yaml_passes_in_cluster_mode_shortened_to_seconds() {
    // 2 % of 50: one drifting bucket, updated on every poll.
    let result = shipped_share(
        "drift-loop.yaml",
        "resources.bucket.count=50",
        "bucket/drift",
        1,
    );
    // A 20 s hold of 5 s polls (± 10 % jitter, plus the reconcile) holds 3 or 4 of them.
    assert!(
        calls(&result, "hold", "update") >= 3,
        "an update every poll"
    );
}

#[test]
fn observe_only_absent_yaml_passes_in_cluster_mode_shortened_to_seconds() {
    shipped_share(
        "observe-only-absent.yaml",
        "resources.managed.count=15",
        "observed/observe-only-absent",
        5,
    );
}
