//! The binary: exit codes and error output.

use std::path::PathBuf;
use std::process::Command;

use crate::fixture::scenario;

fn harness() -> Command {
    Command::new(env!("CARGO_BIN_EXE_harness"))
}

#[test]
fn validate_exits_zero_on_a_good_scenario() {
    let out = harness()
        .args(["validate", &scenario("smoke.yaml")])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("ok: scenario smoke with 100 resources"));
}

#[test]
fn validate_counts_the_xrs_of_a_composite_scenario() {
    let out = harness()
        .args(["validate", &scenario("xr-smoke.yaml")])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("with 0 resources in 0 groups and 100 XRs in 1 XR group, 4 phases"),
        "{text}"
    );
}

#[test]
fn a_composite_runs_progress_counts_its_xrs() {
    // Plain progress (standard error is not a terminal): each XR phase counts the XRs it
    // wrote and waited for, not the phase's resource groups (none here).
    let dir = temp_dir("xr-progress");
    let text = std::fs::read_to_string(scenario("xr-smoke.yaml"))
        .expect("the shipped scenario")
        .replace("count: 100", "count: 3");
    let (head, tail) = text.split_once("phases:").expect("a phases section");
    let (_, assertions) = tail
        .split_once("assertions:")
        .expect("an assertions section");
    let text = format!(
        "{head}phases:\n  - {{name: create, action: create, timeout: 5m}}\n  \
         - {{name: hold, action: hold, duration: 1s}}\n  \
         - {{name: delete, action: delete, timeout: 5m}}\nassertions:{assertions}"
    );
    let file = dir.join("xr-progress.yaml");
    std::fs::write(&file, text).expect("writable");
    let out = harness()
        .args(["run", &file.display().to_string(), "--out"])
        .arg(dir.join("out"))
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("phase 1 create (create): done, 3/3 in"),
        "{err}"
    );
    // A hold counts nothing: it says how long it took, not "0/0".
    assert!(err.contains("phase 2 hold (hold): done in"), "{err}");
    assert!(!err.contains("0/0"), "{err}");
    assert!(
        err.contains("phase 3 delete (delete): done, 3/3 in"),
        "{err}"
    );
}

#[test]
fn bad_input_exits_two_with_cause_and_hint() {
    let out = harness()
        .args(["validate", "no/such.yaml"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: cannot read scenario no/such.yaml\n  caused by: "),
        "{err}"
    );
    assert!(err.contains("hint: check the path"), "{err}");
}

#[test]
fn predict_prints_formulas_and_schema_prints_json() {
    let out = harness()
        .args(["predict", &scenario("restart-burst.yaml")])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("phase restart") && text.contains("physical drain limit D_phys"),
        "{text}"
    );
    let out = harness().arg("schema").output().expect("runs");
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(schema["title"], "harness scenario");
    assert!(schema["properties"]["phases"].is_object());
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("writable temp dir");
    dir
}

#[test]
fn compare_exits_three_when_the_new_run_is_partial() {
    let s = harness::scenario::load(std::path::Path::new(&scenario("smoke.yaml"))).expect("loads");
    let p = harness::predict::plan(&s);
    let old = harness::result::evaluate(&s, &p, &crate::fixture::smoke_observations());
    let new = harness::result::evaluate(&s, &p, &crate::fixture::interrupted_observations());
    let dir = temp_dir("compare-partial");
    for (name, r) in [("old.json", &old), ("new.json", &new)] {
        std::fs::write(
            dir.join(name),
            serde_json::to_string(r).expect("serialises"),
        )
        .expect("writable");
    }
    let out = harness()
        .arg("compare")
        .arg(dir.join("old.json"))
        .arg(dir.join("new.json"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("not comparable: NEW is partial: interrupted (SIGTERM) during phase hold"),
        "{text}"
    );
}

/// CI cancels a job with SIGTERM: the run writes its partial report and exits 143.
#[cfg(unix)]
#[test]
fn sigterm_stops_a_run_with_a_partial_report_and_exit_143() {
    use std::time::{Duration, Instant};
    let dir = temp_dir("sigterm");
    let mut child = harness()
        .args(["run", &scenario("smoke.yaml"), "--out"])
        .arg(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starts");
    // The stack starts in well under a second; 3 s is inside the create phase or the hold.
    std::thread::sleep(Duration::from_secs(3));
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("waits") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the run did not stop within 60 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status.code(), Some(143));
    let result: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("result.json")).expect("result.json written"),
    )
    .expect("json");
    assert_eq!(result["partial"], true);
    assert_eq!(result["stopped"]["cause"]["interrupted"], "SIGTERM");
    let junit = std::fs::read_to_string(dir.join("junit.xml")).expect("junit.xml written");
    assert!(junit.contains("type=\"interrupted\""), "{junit}");
    let html = std::fs::read_to_string(dir.join("report.html")).expect("report.html written");
    assert!(
        html.contains("PARTIAL: interrupted (SIGTERM) during phase"),
        "report headline"
    );
}

#[test]
fn the_flowschema_in_ci_manifests_is_what_harness_flowschema_prints_for_its_provider() {
    let out = harness().arg("flowschema").output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let printed = String::from_utf8_lossy(&out.stdout);
    let file = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ci/manifests/provider-flowschema.yaml"),
    )
    .expect("the manifest");
    assert_eq!(
        printed, file,
        "regenerate it: harness flowschema > ci/manifests/provider-flowschema.yaml"
    );
    let out = harness()
        .args([
            "flowschema",
            "--service-account",
            "crossplane-system/provider-aws-s3",
        ])
        .output()
        .expect("runs");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed.contains(
            "            name: provider-aws-s3\n            namespace: crossplane-system\n"
        ),
        "{printed}"
    );
    let out = harness()
        .args(["flowschema", "--service-account", "provider-aws-s3"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("expected NAMESPACE/NAME"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[cfg(not(feature = "aws"))]
#[test]
fn an_aws_scenario_without_the_aws_build_is_refused_before_the_run_starts_and_without_a_usage_hint()
{
    let dir = temp_dir("aws-refused");
    let file = dir.join("table.yaml");
    std::fs::write(
        &file,
        "apiVersion: harness/v1\nname: table\ncalls:\n  - {apiVersion: dynamodb.aws.m.loadtest.dev/v1beta1, kind: Table, connect: 1, observe: 2, create: 1, update: 2, delete: 1}\nresources:\n  - {name: t, apiVersion: dynamodb.aws.m.loadtest.dev/v1beta1, kind: Table, count: 1, spec: {region: eu-west-1, billingMode: PAY_PER_REQUEST, hashKey: id, attribute: [{name: id, type: S}]}}\nphases:\n  - {name: c, action: create}\nassertions:\n  - {check: stuck, phase: c}\n",
    )
    .expect("write");
    refused_before_start(
        &file,
        &dir.join("out"),
        "error: the scenario runs the provider's AWS flavour (its kinds, ProviderConfigs or client settings) on the embedded stack, and this harness is built without it: build it with `cargo build --release -p harness --features aws`\n",
    );
}

/// The VPCs too: their EC2 client is part of feature `aws`.
#[cfg(not(feature = "aws"))]
#[test]
fn a_scenario_with_vpcs_without_the_aws_build_is_refused_before_the_run_starts_naming_that_feature()
{
    refused_before_start(
        std::path::Path::new(&scenario("aws-upjet.yaml")),
        &temp_dir("aws-vpc-refused").join("out"),
        "error: the scenario runs the provider's AWS flavour (its kinds, ProviderConfigs or client settings) on the embedded stack, and this harness is built without it: build it with `cargo build --release -p harness --features aws`\n",
    );
}

/// `harness run FILE --out DIR` exits 2 with exactly `error` on standard error, nothing on
/// standard output, and no DIR: the run never started.
#[cfg(not(feature = "aws"))]
fn refused_before_start(file: &std::path::Path, out_dir: &std::path::Path, error: &str) {
    let out = harness()
        .arg("run")
        .arg(file)
        .arg("--out")
        .arg(out_dir)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr), error);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert!(
        !out_dir.exists(),
        "no output directory for a run that never started"
    );
}

#[test]
fn validate_counts_in_the_singular_when_there_is_one() {
    let dir = temp_dir("validate-singular");
    let file = dir.join("one.yaml");
    std::fs::write(
        &file,
        "apiVersion: harness/v1\nname: one\nresources:\n  - {name: b, kind: Bucket, count: 1}\nphases:\n  - {name: c, action: create}\nassertions:\n  - {check: stuck, phase: c}\n",
    )
    .expect("write");
    let out = harness().arg("validate").arg(&file).output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("ok: scenario one with 1 resource in 1 group, 1 phase, 1 assertion;"),
        "{text}"
    );
}

#[test]
fn the_cluster_targets_core_flags_and_cores_refusals_are_checked_before_the_run() {
    // A scenario without XR groups has no core to read.
    let out = harness()
        .args(["run", &scenario("smoke.yaml"), "--kubeconfig", "kubeconfig"])
        .args(["--cloud-url", "http://127.0.0.1:1", "--core-metrics-url"])
        .arg("http://127.0.0.1:2/metrics")
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--core-metrics-url is for Crossplane core, which runs a scenario's XR groups, and scenario smoke has none"),
        "{err}"
    );
    // A function fault switches the built-in function inside the harness's process: a
    // cluster's core runs its own.
    let out = harness()
        .args([
            "run",
            &scenario("xr-slow-function.yaml"),
            "--kubeconfig",
            "kubeconfig",
        ])
        .args(["--cloud-url", "http://127.0.0.1:1", "--set", "time=real"])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is a functionFault")
            && err.contains("on the cluster target, core runs in the cluster"),
        "{err}"
    );
}
