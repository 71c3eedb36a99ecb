//! The AWS flavour as a foreign provider on the `process` target: run with generic groups,
//! and calibrated to the calls `provider/README.md` documents.

use std::path::Path;
use std::process::Command;

use super::{check_process_result, provider_copy, run_process, temp};
use crate::aws_flavour;

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

/// A profile's line naming the calibration file beside it.
const CALIBRATION: &str = "calibration: calibration.yaml\n";

/// The AWS flavour's three kinds by `apiVersion` and `kind` only, created, held through a
/// few polls, re-tagged and deleted; with `assertions` for a run (none for a calibration).
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
