//! The `process` target: this workspace's provider run as a foreign provider through
//! `harness run --process` (the generic flavour here, the AWS flavour in [`aws`] with
//! feature `aws`): the scenario names its kinds only by `apiVersion` and `kind`, the
//! profile's settings come from the command line the test starts it with, a restart phase
//! stops and starts the process, and the budgets hold; and the runs there that stop before
//! their end. A profile's own checks are in [`profile`].

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::bins::binaries;
use crate::fixture::{BODY, HEAD};
use crate::provider_process::{RESTART_PHASES, bucket_controller};

#[cfg(feature = "aws")]
mod aws;
mod profile;

#[test]
fn virtual_time_is_refused_for_the_process_target_with_the_reason() {
    let dir = std::env::temp_dir().join(format!("harness-process-vt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.yaml");
    std::fs::write(
        &path,
        format!(
            "{HEAD}profile:\n  flags: loadtest\n  command: [provider, --poll-interval=5s]\n  kinds: [{{apiVersion: example.org/v1, kind: Widget, scope: Cluster}}]\n{BODY}"
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("run")
        .arg(&path)
        .args(["--process", "--virtual-time"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--virtual-time cannot run on the process target"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_provider_that_exits_by_itself_stops_the_run_at_once_with_its_status_and_the_end_of_its_log() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp("process-exit");
    let script = dir.join("provider.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho 'starting'\necho 'error: --cloud-endpoint is required' >&2\nexit 2\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.join("scenario.yaml"),
        format!(
            "{HEAD}target: process\nprofile:\n  flags: loadtest\n  command: [./provider.sh]\n  kinds: [{{apiVersion: example.org/v1, kind: Widget, scope: Cluster}}]\nresources:\n  - {{name: b, apiVersion: example.org/v1, kind: Widget, count: 2}}\ncalls:\n  - {{apiVersion: example.org/v1, kind: Widget, observe: 3, create: 1, update: 1, delete: 1}}\nphases:\n  - {{name: c, action: create, timeout: 60s}}\n"
        ),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = harness_run(&dir.join("scenario.yaml"), &dir.join("out"));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "not the phase's timeout: {stderr}"
    );
    assert!(
        stderr.contains("phase c: the provider (start 1) exited by itself with exit status: 2")
            && stderr.contains("provider-1.log ends:\n  starting\n  error: --cloud-endpoint is required\nstopping the run"),
        "{stderr}"
    );
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/result.json")).unwrap())
            .unwrap();
    assert_eq!(
        result["stopped"],
        serde_json::json!({"phase": "c", "cause": {"providerExited": 2}})
    );
    assert!(
        stdout.contains("stopped: the provider exited with code 2 during phase c"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The provider binary ([`binaries`]: cargo's own when fresh), copied into `dir` (so a
/// rebuild by another test cannot change it under a restart).
fn provider_copy(dir: &Path) -> PathBuf {
    let copy = dir.join("provider");
    std::fs::copy(binaries().join("provider"), &copy).expect("copy the provider binary");
    copy
}

/// Runs `harness run --process` on `scenario` (written into `dir` beside `profile`);
/// returns result.json.
fn run_process(dir: &Path, scenario: &str, profile: &str) -> serde_json::Value {
    std::fs::write(dir.join("profile.yaml"), profile).unwrap();
    let path = dir.join("scenario.yaml");
    std::fs::write(&path, scenario).unwrap();
    let out = dir.join("out");
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("run")
        .arg(&path)
        .arg("--process")
        .arg("--out")
        .arg(&out)
        .output()
        .expect("harness runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let logs = std::fs::read_to_string(out.join("provider-1.log")).unwrap_or_default();
    assert!(
        output.status.success(),
        "exit {}\n{}\n{}\nprovider-1.log (tail):\n{}",
        output.status,
        text(&output.stdout),
        text(&output.stderr),
        logs.lines().rev().take(30).collect::<Vec<_>>().join("\n")
    );
    serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap()
}

fn check_process_result(result: &serde_json::Value, dir: &Path) {
    let run = &result["run"];
    assert_eq!(run["target"]["kind"], "process", "{run}");
    assert_eq!(
        run["provider_starts"], 2,
        "the restart phase started it again: {run}"
    );
    for n in [1, 2] {
        let log = dir.join(format!("out/provider-{n}.log"));
        assert!(
            std::fs::metadata(&log).is_ok_and(|m| m.len() > 0),
            "{} holds the provider's output",
            log.display()
        );
    }
    let failed: Vec<_> = result["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["pass"] != true)
        .collect();
    assert!(failed.is_empty(), "every budget holds: {failed:#?}");
    assert!(result["verdicts"].as_array().unwrap().len() >= 4);
}

/// Runs `harness run SCENARIO --out OUT`; returns its exit code, standard output and
/// standard error.
fn harness_run(scenario: &Path, out: &Path) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("run")
        .arg(scenario)
        .arg("--out")
        .arg(out)
        .output()
        .expect("harness runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        output.status.code(),
        text(&output.stdout),
        text(&output.stderr),
    )
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("harness-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_generic_provider_runs_as_a_foreign_process_and_its_budgets_hold() {
    let dir = temp("process-generic");
    let provider = provider_copy(&dir);
    std::fs::write(dir.join("crds.yaml"), provider::crd::crds_yaml().unwrap()).unwrap();
    let profile = format!(
        "flags: loadtest
command:
  - {}
  - --kubeconfig={{{{kubeconfig}}}}
  - --cloud-endpoint={{{{cloudUrl}}}}
  - --metrics-addr=127.0.0.1:{{{{metricsPort}}}}
  - --shutdown-timeout=5s
  - --max-reconcile-rate=10
  - --rate-limit-model=crossplane
  - --poll-interval=5s
metricsUrl: http://127.0.0.1:{{{{metricsPort}}}}/metrics
crds: [crds.yaml]
kinds:
  - {{apiVersion: mockcloud.example.org/v1alpha1, kind: Bucket, scope: Namespaced}}
",
        provider.display()
    );
    let scenario = [
        "apiVersion: harness/v1
name: process-generic
target: process
profile: {file: profile.yaml}
resources:
  - {name: bucket, apiVersion: mockcloud.example.org/v1alpha1, kind: Bucket, count: 20, spec: {region: eu-west-1}}
",
        RESTART_PHASES,
    ]
    .concat();
    let result = run_process(&dir, &scenario, &profile);
    check_process_result(&result, &dir);
    // Its metrics, scraped across the restart: the standard names per controller, its
    // count of API requests, and its own cloud-call counter (the calls of its drain after
    // the last scrape before SIGTERM are not in it).
    let provider = &result["provider"];
    let controller = bucket_controller(provider);
    assert!(
        controller["queue_adds"].as_u64().unwrap_or(0) >= 20,
        "{controller}"
    );
    assert!(
        provider["api_requests"]["provider"].as_u64().unwrap_or(0) > 0,
        "{provider}"
    );
    let own = provider["provider_cloud_calls"].as_u64().expect("exported");
    let journal = provider["journal_cloud_calls"].as_u64().unwrap();
    assert!(own > 0 && own <= journal, "{provider}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_kind_the_api_server_does_not_serve_is_exit_2_at_its_place_before_anything_is_created() {
    let dir = temp("process-unserved");
    std::fs::write(dir.join("crds.yaml"), provider::crd::crds_yaml().unwrap()).unwrap();
    // The provider's own CRDs lack the profile's Widget: only the API server can say so.
    let profile = "flags: loadtest
args: []
command: [sleep, '30']
crds: [crds.yaml]
kinds:
  - {apiVersion: mockcloud.example.org/v1alpha1, kind: Bucket, scope: Namespaced}
  - {apiVersion: example.org/v1, kind: Widget, scope: Cluster}
";
    std::fs::write(dir.join("profile.yaml"), profile).unwrap();
    let scenario = "apiVersion: harness/v1
name: process-unserved
target: process
profile: {file: profile.yaml}
calls:
  - {apiVersion: example.org/v1, kind: Widget, observe: 1, create: 1, update: 1, delete: 1}
resources:
  - {name: bucket, apiVersion: mockcloud.example.org/v1alpha1, kind: Bucket, count: 1, spec: {region: eu-west-1}}
  - {name: widget, apiVersion: example.org/v1, kind: Widget, count: 1}
phases:
  - {name: create, action: create, timeout: 10s}
";
    let path = dir.join("scenario.yaml");
    std::fs::write(&path, scenario).unwrap();
    let (code, _, stderr) = harness_run(&path, &dir.join("out"));
    assert_eq!(code, Some(2), "{stderr}");
    let want = format!(
        "error: {}:9:54: the API server does not serve example.org/v1 Widget, and serves no kind in example.org",
        path.display()
    );
    assert!(stderr.contains(&want), "{stderr}");
    assert!(
        !dir.join("out/result.json").exists(),
        "nothing ran, nothing was reported"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_provider_that_exits_before_its_metrics_answer_is_exit_2_pointing_at_its_log() {
    let dir = temp("process-exits");
    let profile = "flags: loadtest
args: []
command: [sh, -c, 'echo \"error: --cloud-endpoint is required\" >&2; exit 3']
metricsUrl: http://127.0.0.1:{{metricsPort}}/metrics
kinds:
  - {apiVersion: example.org/v1, kind: Widget, scope: Cluster}
";
    std::fs::write(dir.join("profile.yaml"), profile).unwrap();
    let path = dir.join("scenario.yaml");
    std::fs::write(
        &path,
        format!("apiVersion: harness/v1\nname: process-exits\ntarget: process\nprofile: {{file: profile.yaml}}\n{BODY}"),
    )
    .unwrap();
    let (code, _, stderr) = harness_run(&path, &dir.join("out"));
    assert_eq!(code, Some(2), "{stderr}");
    let want = format!(
        "error: the provider exited (exit status: 3) before it answered at its metricsUrl; {} says why",
        dir.join("out/provider-1.log").display()
    );
    assert!(stderr.contains(&want), "{stderr}");
    let log = std::fs::read_to_string(dir.join("out/provider-1.log")).unwrap();
    assert!(log.contains("--cloud-endpoint is required"), "{log}");
    std::fs::remove_dir_all(&dir).unwrap();
}
