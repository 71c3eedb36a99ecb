//! Provider profiles and the `process` target: a profile's settings, written out or read
//! from the provider's command line, with errors that say where and what was expected; and
//! this workspace's provider run as a foreign provider through `harness run --process`
//! (the generic flavour, and with feature `aws` the AWS flavour): the scenario names its
//! kinds only by `apiVersion` and `kind`, the profile's settings come from the command line
//! the test starts it with, a restart phase stops and starts the process, and the budgets
//! hold.

use std::path::{Path, PathBuf};
use std::process::Command;

use harness::predict::plan;
use harness::scenario::{load, parse};

#[cfg(feature = "aws-vpc")]
use crate::aws_flavour;
use crate::bins::binaries;
use crate::fixture::{BODY, HEAD};

fn err(text: &str) -> String {
    parse(text, "t.yaml")
        .expect_err("must not validate")
        .to_string()
}

#[test]
fn a_profile_without_a_command_line_must_give_every_setting_the_budget_needs() {
    let e = err(&format!(
        "{HEAD}profile:\n  settings: {{maxReconcileRate: 5, pollInterval: 5m}}\n  kinds: [{{apiVersion: example.org/v1, kind: Widget, scope: Cluster}}]\n{BODY}"
    ));
    assert_eq!(
        e,
        "t.yaml:4:3: the profile gives no rateLimitModel, pollJitterPercent, pollJitterSizing, minPollInterval, scopedBuckets, backoffBase, backoffMax, clientQps, clientBurst, expected every setting the budget needs in `settings`, or `flags` with the provider's command line"
    );
}

#[test]
fn a_profiles_unknown_field_and_a_bad_flag_are_placed_and_explained() {
    let e = err(&format!(
        "{HEAD}profile:\n  flags: upjet\n  args: [--poll=10m]\n  colour: red\n{BODY}"
    ));
    assert!(e.starts_with("t.yaml:6:3: unknown field `colour`"), "{e}");
    let e = err(&format!(
        "{HEAD}profile:\n  flags: upjet\n  args: [--poll=10m, --poll-jitter=45s]\n  kinds: [{{apiVersion: example.org/v1, kind: Widget, scope: Cluster}}]\n{BODY}"
    ));
    assert!(
        e.starts_with("t.yaml:5:9: --poll-jitter=\"45s\": expected a whole percentage below 100 of --poll (10m0s)"),
        "{e}"
    );
}

#[test]
fn settings_read_from_an_upjet_command_line_feed_the_prediction_and_must_agree_with_written_ones() {
    let text = format!(
        "{HEAD}profile:\n  flags: upjet\n  command: [provider, --max-reconcile-rate=3, --poll, 5m, --sync=1h, -d]\n  kinds: [{{apiVersion: example.org/v1, kind: Widget, scope: Cluster}}]\n{BODY}"
    );
    let s = parse(&text, "t.yaml").expect("valid");
    assert_eq!(s.settings.max_reconcile_rate.get(), 3);
    assert_eq!(s.settings.poll_interval.as_secs(), 300);
    assert!(s.settings.scoped_buckets, "upjet runs one bucket per scope");
    let client = s.prediction.client.expect("the profile's client limits");
    assert_eq!((client.qps, client.burst), (15.0, 30.0));
    let plan = plan(&s);
    let rs: Vec<f64> = plan
        .all()
        .flat_map(|p| p.inputs.iter().filter(|i| i.name == "R").map(|i| i.value))
        .collect();
    assert!(!rs.is_empty(), "the prediction reads R");
    assert!(
        rs.iter().all(|&r| r == 3.0),
        "R from the command line: {rs:?}"
    );
    let e = err(&text.replace("  kinds:", "  settings: {maxReconcileRate: 4}\n  kinds:"));
    assert!(
        e.starts_with("t.yaml:5:12: the command line's --max-reconcile-rate=3 disagrees with the profile's settings (4)"),
        "{e}"
    );
    let e = err(&text.replace("profile:", "provider: {maxReconcileRate: 4}\nprofile:"));
    assert!(
        e.contains("the scenario has a profile, which gives the provider's settings"),
        "{e}"
    );
}

#[test]
fn a_profile_file_is_read_beside_the_scenario_and_its_problems_name_it() {
    let dir = std::env::temp_dir().join(format!("harness-profile-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("profiles")).unwrap();
    let scenario = dir.join("s.yaml");
    std::fs::write(
        &scenario,
        format!("{HEAD}profile: {{file: profiles/p.yaml}}\n{BODY}"),
    )
    .unwrap();
    std::fs::write(
        dir.join("profiles/p.yaml"),
        "flags: crossplane-runtime\nargs: [--max-reconcile-rate=2]\nkinds:\n  - {apiVersion: example.org/v1, kind: Widget, scope: Namespaced}\n",
    )
    .unwrap();
    let s = load(&scenario).expect("valid");
    assert_eq!(s.settings.max_reconcile_rate.get(), 2);
    assert_eq!(
        s.settings.poll_jitter_percent, 0,
        "provider-template has no jitter"
    );
    std::fs::write(
        dir.join("profiles/p.yaml"),
        "flags: crossplane-runtime\nkinds: []\n",
    )
    .unwrap();
    let e = load(&scenario).expect_err("no command line").to_string();
    let file = dir.join("profiles/p.yaml").display().to_string();
    assert_eq!(
        e,
        format!(
            "{file}:1:8: flags needs the provider's command line, expected `args` or `command`"
        )
    );
    // A calibration file that is not there: placed at the profile's `calibration` field.
    std::fs::write(
        dir.join("profiles/p.yaml"),
        "flags: crossplane-runtime\nargs: []\ncalibration: cal.yaml\nkinds:\n  - {apiVersion: example.org/v1, kind: Widget, scope: Namespaced}\n",
    )
    .unwrap();
    let e = load(&scenario)
        .expect_err("no calibration file")
        .to_string();
    let cal = dir.join("profiles/cal.yaml").display().to_string();
    assert!(
        e.starts_with(&format!(
            "{file}:3:14: cannot read the calibration file {cal}: "
        )) && e.ends_with("(`harness calibrate SCENARIO` writes one)"),
        "{e}"
    );
    // A profile file that is not there: placed at the scenario's `file` field.
    std::fs::remove_file(dir.join("profiles/p.yaml")).unwrap();
    let e = load(&scenario).expect_err("no profile").to_string();
    let shown = scenario.display().to_string();
    assert!(
        e.starts_with(&format!(
            "{shown}:3:17: cannot read the profile {}: ",
            dir.join("profiles/p.yaml").display()
        )),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

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
    let scenario = "apiVersion: harness/v1
name: process-generic
target: process
profile: {file: profile.yaml}
resources:
  - {name: bucket, apiVersion: mockcloud.example.org/v1alpha1, kind: Bucket, count: 20, spec: {region: eu-west-1}}
phases:
  - {name: create, action: create, rate: 40, timeout: 60s}
  - {name: hold, action: hold, duration: 3s}
  - {name: restart, action: restart, timeout: 60s}
assertions:
  - {check: cloudCalls, window: 1s}
  - {check: apiRequests, window: 1s}
  - {check: throttles}
  - {check: orphans}
  - {check: duplicates}
";
    let result = run_process(&dir, scenario, &profile);
    check_process_result(&result, &dir);
    // Its metrics, scraped across the restart: the standard names per controller, its
    // count of API requests, and its own cloud-call counter (the calls of its drain after
    // the last scrape before SIGTERM are not in it).
    let provider = &result["provider"];
    let controller = provider["controllers"]
        .as_array()
        .and_then(|cs| {
            cs.iter()
                .find(|c| c["controller"] == "managed/bucket.mockcloud.example.org")
        })
        .unwrap_or_else(|| panic!("the buckets' controller: {provider}"));
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
fn a_profiles_metrics_url_must_be_http_and_beside_a_command() {
    let kinds = "  kinds: [{apiVersion: example.org/v1, kind: Widget, scope: Cluster}]\n";
    let e = err(&format!(
        "{HEAD}profile:\n  flags: loadtest\n  command: [provider]\n  metricsUrl: 'https://p:{{{{metricsPort}}}}/metrics'\n{kinds}{BODY}"
    ));
    assert!(
        e.starts_with(
            "t.yaml:6:15: metricsUrl \"https://p:{{metricsPort}}/metrics\" is not an http:// URL"
        ),
        "{e}"
    );
    let e = err(&format!(
        "{HEAD}profile:\n  flags: loadtest\n  args: []\n  metricsUrl: http://127.0.0.1:8080/metrics\n{kinds}{BODY}"
    ));
    assert!(
        e.starts_with("t.yaml:6:15: metricsUrl is for the process target"),
        "{e}"
    );
}

#[cfg(feature = "aws-vpc")]
#[test]
fn the_aws_flavour_runs_as_a_foreign_process_with_generic_groups_and_its_budgets_hold() {
    let dir = temp("process-aws");
    let provider = provider_copy(&dir);
    std::fs::write(dir.join("crds.yaml"), provider::crd::crds_yaml().unwrap()).unwrap();
    let profile = aws_flavour::profile(&provider, "10s", "none", "");
    let scenario = [
        r#"apiVersion: harness/v1
name: process-aws
target: process
profile: {file: profile.yaml}
calls:
  - {apiVersion: s3.aws.m.loadtest.dev/v1beta1, kind: Bucket, connect: 1, observe: 15, create: 2, update: 1, delete: 1}
  - {apiVersion: ec2.aws.m.loadtest.dev/v1beta1, kind: VPC, connect: 1, observe: 1, create: 1, update: 2, delete: 1}
"#,
        aws_flavour::OBJECTS,
        r#"resources:
  - name: bucket
    apiVersion: s3.aws.m.loadtest.dev/v1beta1
    kind: Bucket
    count: 10
    namePattern: "{{scenario}}-{{index}}"
    spec: {region: eu-west-1, tags: {team: load}}
  - name: vpc
    apiVersion: ec2.aws.m.loadtest.dev/v1beta1
    kind: VPC
    count: 10
    spec: {region: eu-west-1, cidrBlock: 10.0.0.0/16, tags: {team: load}}
phases:
  - {name: create, action: create, rate: 20, timeout: 90s}
  - {name: hold, action: hold, duration: 12s}
  - {name: restart, action: restart, timeout: 90s}
assertions:
  - {check: cloudCalls, window: 1s}
  - {check: cloudCalls, window: 10s}
  - {check: apiRequests, window: 10s}
  - {check: throttles}
  - {check: orphans}
"#,
    ]
    .concat();
    let result = run_process(&dir, &scenario, &profile);
    check_process_result(&result, &dir);
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

/// A profile's line naming the calibration file beside it.
#[cfg(feature = "aws-vpc")]
const CALIBRATION: &str = "calibration: calibration.yaml\n";

/// The AWS flavour's three kinds by `apiVersion` and `kind` only, created, held through a
/// few polls, re-tagged and deleted; with `assertions` for a run (none for a calibration).
#[cfg(feature = "aws-vpc")]
fn aws_calibration_scenario(assertions: &str) -> String {
    [
        "apiVersion: harness/v1
name: calibrate-aws
target: process
profile: {file: profile-none.yaml}
",
        aws_flavour::OBJECTS,
        &aws_flavour::resources(3),
        "phases:
  - {name: create, action: create, rate: 10, timeout: 90s}
  - {name: hold, action: hold, duration: 9s}
  - {name: retag, action: update, spec: {tags: {team: load, tier: gold}}, timeout: 60s}
  - {name: settle, action: hold, duration: 5s}
  - {name: delete, action: delete, rate: 10, timeout: 90s}
",
        assertions,
    ]
    .concat()
}

/// Runs the harness with `args` in `dir`; returns its exit code and standard output, the
/// test failing with both streams when the code is not one of `ok`.
#[cfg(feature = "aws-vpc")]
fn harness_in(dir: &Path, args: &[&str], ok: &[i32]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("harness runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let code = output.status.code().unwrap_or(-1);
    assert!(
        ok.contains(&code),
        "harness {args:?}: exit {code}\n{}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    (code, text(&output.stdout))
}

/// Calibration of the AWS flavour through the `process` target, treated as a foreign
/// provider: each kind's calls per path are the ones `provider/README.md` documents, the
/// budgets taken from them hold with the credentials cached and without, and `compare`
/// flags Connect's extra call per reconcile when the provider runs with
/// `--credential-cache=none` instead of `all`.
#[cfg(feature = "aws-vpc")]
#[test]
fn the_aws_flavour_calibrates_to_its_documented_calls_and_compare_flags_an_uncached_connect() {
    let _cores = crate::timing::sensitive();
    let dir = temp("calibrate-aws");
    let provider = provider_copy(&dir);
    std::fs::write(dir.join("crds.yaml"), provider::crd::crds_yaml().unwrap()).unwrap();
    std::fs::write(
        dir.join("profile-none.yaml"),
        aws_flavour::profile(&provider, "4s", "none", ""),
    )
    .unwrap();
    std::fs::write(dir.join("sample.yaml"), aws_calibration_scenario("")).unwrap();
    let (_, stdout) = harness_in(
        &dir,
        &[
            "calibrate",
            "sample.yaml",
            "--sample=3",
            "--polls=2",
            "--rate=3",
            "--out=cal",
        ],
        &[0],
    );
    assert!(
        stdout.contains("Bucket.s3.aws.m.loadtest.dev steady observe: 15 calls: GetBucketAccelerateConfiguration 1,"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(dir.join("cal/calibration.yaml")).unwrap();
    let file: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(file["target"], "process", "{text}");
    // provider/README.md's calls per path, each measured with little spread on a sample.
    let kinds = aws_flavour::assert_documented_calls(&text);
    for calls in &kinds {
        for path in aws_flavour::FIGURES {
            let measured = &calls["measured"][path];
            let sd = measured["sd"].as_f64().unwrap();
            assert!(sd <= 0.5, "{path}: sd {sd}: {calls:#}");
            assert!(measured["reconciles"].as_u64().unwrap() >= 3, "{calls:#}");
        }
        assert_eq!(
            calls["operations"]["connect"]["sts:GetCallerIdentity"], 1,
            "{calls:#}"
        );
    }
    assert_eq!(kinds[0]["operations"]["observe"]["s3:GetBucketTagging"], 1);

    // Budgets from the calibration, before (credentials cached) and after (not) an upgrade.
    std::fs::copy(
        dir.join("cal/calibration.yaml"),
        dir.join("calibration.yaml"),
    )
    .unwrap();
    std::fs::write(
        dir.join("profile-none.yaml"),
        aws_flavour::profile(&provider, "4s", "none", CALIBRATION),
    )
    .unwrap();
    std::fs::write(
        dir.join("profile-all.yaml"),
        aws_flavour::profile(&provider, "4s", "all", CALIBRATION),
    )
    .unwrap();
    std::fs::write(
        dir.join("scenario.yaml"),
        aws_calibration_scenario(
            "assertions:
  - {check: cloudCalls, window: 10s}
  - {check: operationCalls, operation: sts, window: 10s}
  - {check: operationCalls, operation: s3:GetBucketTagging, window: 10s}
  - {check: callsPerReconcile}
  - {check: apiRequests, window: 10s}
  - {check: throttles}
",
        ),
    )
    .unwrap();
    // The two runs side by side (each its own stack and ports): they wait on real time.
    std::thread::scope(|s| {
        for (profile, out) in [
            ("profile-all.yaml", "before"),
            ("profile-none.yaml", "after"),
        ] {
            let dir = &dir;
            s.spawn(move || {
                harness_in(
                    dir,
                    &[
                        "run",
                        "scenario.yaml",
                        "--set",
                        &format!("profile.file={profile}"),
                        "--out",
                        out,
                    ],
                    &[0],
                )
            });
        }
    });
    for out in ["before", "after"] {
        let result: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(out).join("result.json")).unwrap(),
        )
        .unwrap();
        let verdicts = result["verdicts"].as_array().unwrap();
        assert_eq!(verdicts.len(), 6, "{out}: {verdicts:#?}");
        assert!(
            verdicts.iter().all(|v| v["pass"] == true),
            "{out}: every budget holds: {verdicts:#?}"
        );
    }
    let (code, stdout) = harness_in(
        &dir,
        &["compare", "before/result.json", "after/result.json"],
        &[1],
    );
    assert_eq!(code, 1, "an upgrade that adds calls is a regression");
    let changed = stdout
        .split("calls per reconcile that changed:")
        .nth(1)
        .unwrap_or_else(|| panic!("{stdout}"));
    // Cached: one GetCallerIdentity per ProviderConfig over the run (0 or 0.01 a
    // reconcile); uncached: one on every Connect.
    let connect = changed
        .lines()
        .find(|l| l.trim_start().starts_with("connect: 0"))
        .unwrap_or_else(|| panic!("connect changed: {changed}"));
    assert!(connect.contains(" → 1 calls per reconcile (+"), "{connect}");
    assert!(
        !changed.contains("observe"),
        "only Connect changed: {changed}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("calls hold sts:GetCallerIdentity") && l.ends_with("REGRESSION")),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A profile's `userAgent` names the start of the provider's User-Agent; an empty one is
/// refused at its place, and a scenario without a profile names this workspace's provider.
#[test]
fn a_profiles_user_agent_is_what_the_journal_tells_the_provider_by() {
    use harness::run::own::ProviderAgent;
    let kinds = "  kinds: [{apiVersion: example.org/v1, kind: Widget, scope: Cluster}]\n";
    let e = err(&format!(
        "{HEAD}profile:\n  flags: loadtest\n  args: []\n  userAgent: ' '\n{kinds}{BODY}"
    ));
    assert!(
        e.starts_with("t.yaml:6:14: userAgent \" \" is not the start of a User-Agent header"),
        "{e}"
    );
    let s = parse(
        &format!(
            "{HEAD}profile:\n  flags: loadtest\n  args: []\n  userAgent: provider-aws-s3/\n{kinds}{BODY}"
        ),
        "t.yaml",
    )
    .unwrap();
    let agent = ProviderAgent::of(&s);
    assert_eq!(agent, ProviderAgent::Prefix("provider-aws-s3/".to_owned()));
    assert!(
        agent.is_provider("provider-aws-s3/v1.20.0 (linux/amd64) kubernetes/abc/leader-election")
    );
    assert!(!agent.is_provider("provider/v0.1.0 (linux/amd64) kube-rs"));
    let s = parse(
        &format!("{HEAD}profile:\n  flags: loadtest\n  args: []\n{kinds}{BODY}"),
        "t.yaml",
    )
    .unwrap();
    assert_eq!(ProviderAgent::of(&s), ProviderAgent::NotHarness);
}
