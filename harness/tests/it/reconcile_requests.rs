//! A resync phase against a provider that does not record reconcile requests: our provider
//! with `--reconcile-requests=ignore` reconciles each resource once on the annotation, as
//! crossplane-runtime does for a type without `Get/SetLastHandledReconcileAt`, and the phase
//! stops with its verdict a grace after the first of those reconciles, not at its timeout;
//! the run goes on and fails (exit 1), and every report says why. With `honour` the phase
//! completes as before.

use std::process::Command;

use harness::run::{self, Progress, run_embedded};
use harness::scenario::parse;

/// 20 buckets, then a resync with a 10-minute timeout and the default 10 s grace, then a hold.
fn scenario(mode: &str) -> String {
    format!(
        "apiVersion: harness/v1
name: resync-{mode}
time: virtual
provider: {{maxReconcileRate: 10, reconcileRequests: {mode}}}
resources:
  - {{name: bucket, kind: Bucket, count: 20}}
phases:
  - {{name: create, action: create, timeout: 1m}}
  - {{name: resync, action: resync, timeout: 10m}}
  - {{name: hold, action: hold, duration: 5s}}
assertions:
  - {{check: cloudCalls, window: 1s}}
"
    )
}

#[test]
fn a_provider_that_records_reconcile_requests_completes_the_resync_phase() {
    let s = parse(&scenario("honour"), "t.yaml").expect("valid");
    let runtime = run::time::runtime(s.time).expect("a runtime");
    let r = runtime
        .block_on(run_embedded(&s, &Progress::quiet(), std::future::pending()))
        .expect("the stack starts")
        .result;
    assert!(r.passed(), "{}", harness::report::assertion_table(&r));
    let resync = r.phases.iter().find(|p| p.name == "resync").unwrap();
    assert!(resync.completed && resync.failure.is_none());
}

#[test]
fn a_provider_that_ignores_reconcile_requests_fails_the_resync_phase_quickly_and_the_run_goes_on() {
    let dir = std::env::temp_dir().join(format!("harness-ignore-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("resync-ignore.yaml");
    std::fs::write(&path, scenario("ignore")).unwrap();
    let out = dir.join("out");
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("run")
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("harness runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let verdict = "this provider does not implement reconcile requests";
    assert!(
        stdout.contains(
            "resync-ignore: FAIL: phase resync: this provider does not implement reconcile requests"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "phase resync FAILED: {verdict}: it reconciled 20 of the 20 resources asked"
        )),
        "{stdout}"
    );
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    assert_eq!(result["partial"], false, "the run went on to its end");
    let phases = result["phases"].as_array().unwrap();
    let names: Vec<&str> = phases.iter().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(names, ["create", "resync", "hold"]);
    let resync = &phases[1];
    assert_eq!(resync["completed"], false);
    assert_eq!(
        resync["failure"]["kind"], "reconcileRequestsNotImplemented",
        "{resync}"
    );
    // Quickly: a grace (10 s) after the first reconcile, not the 10-minute timeout.
    let took = resync["end_s"].as_f64().unwrap() - resync["start_s"].as_f64().unwrap();
    assert!(
        (10.0..15.0).contains(&took),
        "the resync phase took {took} s"
    );
    assert_eq!(phases[2]["completed"], true, "the hold after it ran");
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert!(
        junit.contains("type=\"reconcileRequestsNotImplemented\"") && junit.contains(verdict),
        "{junit}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains(verdict));
    std::fs::remove_dir_all(&dir).unwrap();
}
