//! Crossplane core as a process (`harness run --process --core-profile`), with the
//! composer binary as core (the `crossplane-core` flag family): a small XR scenario runs
//! on the embedded stack and on the process target, and core's figures are compared.
//!
//! One XR reconcile that composes makes the same requests wherever core runs (N + 2
//! server-side applies, one function call per step), so the counts per reconcile must be
//! equal. How many reconciles the XRs get is not fixed: each composed resource's status
//! writes are watch events, and the events that arrive while an XR is already queued are
//! one reconcile, so the number depends on when the provider's writes land. That is timing,
//! not core: the test compares the requests per reconcile exactly and the totals within the
//! reconcile counts' difference, beside the setup the composer binary does and the
//! embedded core does not (its four discovery LISTs at start and its XRD watch's LIST and
//! WATCH; the embedded core reads the scenario).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::bins::binaries;

/// The scenario's Function, XRD, Composition and XR group (4 XRs of 2 Buckets, one step of
/// the built-in function); the cluster target's test of core uses them too.
pub(crate) const XR_OBJECTS: &str = r"objects:
  - apiVersion: pkg.crossplane.io/v1
    kind: Function
    metadata:
      name: resources
      annotations: {render.crossplane.io/runtime: InProcess}
    spec: {package: xpkg.crossplane.io/loadtest/function-resources:v0.1.0}
  - apiVersion: apiextensions.crossplane.io/v2
    kind: CompositeResourceDefinition
    metadata: {name: xbucketsets.example.org}
    spec:
      group: example.org
      names: {kind: XBucketSet, plural: xbucketsets}
      scope: Namespaced
      versions:
        - name: v1
          served: true
          referenceable: true
          schema:
            openAPIV3Schema:
              type: object
              properties:
                spec:
                  type: object
                  properties:
                    region: {type: string}
  - apiVersion: apiextensions.crossplane.io/v1
    kind: Composition
    metadata: {name: bucketsets}
    spec:
      compositeTypeRef: {apiVersion: example.org/v1, kind: XBucketSet}
      mode: Pipeline
      pipeline:
        - step: data
          functionRef: {name: resources}
          input:
            apiVersion: composer.loadtest.dev/v1alpha1
            kind: Resources
            ttl: 10m
            resources:
              - name: data
                count: 2
                base:
                  apiVersion: mockcloud.example.org/v1alpha1
                  kind: Bucket
                  spec: {providerConfigRef: {name: default}, forProvider: {storageClass: STANDARD}}
                patches:
                  - {fromFieldPath: spec.region, toFieldPath: spec.forProvider.region}
composites:
  - name: sets
    apiVersion: example.org/v1
    kind: XBucketSet
    count: 4
    composition: bucketsets
    spec: {region: eu-west-1}
";

/// The run-wide checks of core and of the XRs of [`XR_OBJECTS`]; the cluster target's test
/// of core makes them too.
pub(crate) const XR_CHECKS: &str = r"assertions:
  - {check: coreApiRequests, window: 10s}
  - {check: functionCalls}
  - {check: xrTimeToReady, quantile: 0.99, maxDuration: 60s}
  - {check: breakerOpens}
  - {check: staleXRs}
";

/// The phases of both runs; their checks follow: [`XR_CHECKS`], then [`CREATE_CHECKS`].
const PHASES: &str = r"phases:
  - {name: create, action: create, timeout: 90s}
  - {name: hold, action: hold, duration: 5s}
  - {name: delete, action: delete, timeout: 90s}
";

/// The create phase's checks, after [`XR_CHECKS`].
const CREATE_CHECKS: &str = r"  - {check: functionCalls, phase: create, max: 200}
  - {check: breakerOpens, phase: create}
";

/// Core's settings, the same on both targets.
const CORE: &str = "core:\n  maxReconcileRate: 10\n  pollInterval: 1m\n  syncInterval: 1h\n";

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("harness-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A copy of the workspace binary `name` in `dir` (a rebuild by another test cannot
/// change it under the run).
fn copy(dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(binaries().join(name), &to).expect("copy the binary");
    to
}

/// Runs `harness run` with `args`; returns result.json, asserting the run ended 0 or 1.
fn run(args: &[&str], out: &Path) -> serde_json::Value {
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("run")
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .expect("harness runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let core_log = std::fs::read_to_string(out.join("core-1.log")).unwrap_or_default();
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "exit {}\n{}\n{}\ncore-1.log (tail):\n{}",
        output.status,
        text(&output.stdout),
        text(&output.stderr),
        core_log
            .lines()
            .rev()
            .take(30)
            .collect::<Vec<_>>()
            .join("\n")
    );
    serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap()
}

/// Core's requests of `verb` to `resource` in a result.
pub(crate) fn count(core: &serde_json::Value, verb: &str, resource: &str) -> u64 {
    core["by_verb"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verb"] == verb && r["resource"] == resource)
        .map(|r| r["count"].as_u64().unwrap())
        .sum()
}

/// The run-wide verdict of `check`.
pub(crate) fn verdict<'a>(result: &'a serde_json::Value, check: &str) -> &'a serde_json::Value {
    phase_verdict(result, check, None)
}

/// The verdict of `check` in `phase` (`None`: over the run).
fn phase_verdict<'a>(
    result: &'a serde_json::Value,
    check: &str,
    phase: Option<&str>,
) -> &'a serde_json::Value {
    result["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["check"] == check && v["phase"].as_str() == phase)
        .unwrap_or_else(|| panic!("a {check} verdict of phase {phase:?}"))
}

#[test]
fn the_composer_as_a_core_process_makes_the_embedded_cores_requests_per_reconcile() {
    let dir = temp("core-process");
    let provider = copy(&dir, "provider");
    let composer = copy(&dir, "composer");
    std::fs::write(dir.join("crds.yaml"), provider::crd::crds_yaml().unwrap()).unwrap();
    std::fs::write(
        dir.join("provider.yaml"),
        format!(
            "flags: loadtest
command:
  - {}
  - --kubeconfig={{{{kubeconfig}}}}
  - --cloud-endpoint={{{{cloudUrl}}}}
  - --shutdown-timeout=5s
  - --max-reconcile-rate=10
  - --poll-interval=1m
crds: [crds.yaml]
userAgent: provider/
kinds:
  - {{apiVersion: mockcloud.example.org/v1alpha1, kind: Bucket, scope: Namespaced}}
",
            provider.display()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("core.yaml"),
        format!(
            "flags: crossplane-core
command:
  - {}
  - --kubeconfig={{{{kubeconfig}}}}
  - --metrics-addr=127.0.0.1:{{{{metricsPort}}}}
metricsUrl: http://127.0.0.1:{{{{metricsPort}}}}/metrics
userAgent: composer/
",
            composer.display()
        ),
    )
    .unwrap();
    let head = "apiVersion: harness/v1\nname: core-process\ntime: real\n";
    std::fs::write(
        dir.join("embedded.yaml"),
        format!(
            "{head}provider: {{maxReconcileRate: 10, pollInterval: 1m}}\n{CORE}{XR_OBJECTS}{PHASES}{XR_CHECKS}{CREATE_CHECKS}"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("process.yaml"),
        format!("{head}profile: {{file: provider.yaml}}\n{CORE}{XR_OBJECTS}{PHASES}{XR_CHECKS}{CREATE_CHECKS}"),
    )
    .unwrap();
    let path = |f: &str| dir.join(f).display().to_string();
    // Both runs at once: each waits on real time, not on the CPU.
    let (embedded, process) = std::thread::scope(|scope| {
        let embedded = scope.spawn(|| run(&[&path("embedded.yaml")], &dir.join("out-embedded")));
        let process = scope.spawn(|| {
            run(
                &[
                    &path("process.yaml"),
                    "--process",
                    "--core-profile",
                    &path("core.yaml"),
                ],
                &dir.join("out-process"),
            )
        });
        let join = |h: std::thread::ScopedJoinHandle<'_, serde_json::Value>| {
            h.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        };
        (join(embedded), join(process))
    });
    let (e, p) = (&embedded["core"], &process["core"]);
    assert_eq!(p["user_agent"], "composer/", "{p}");
    assert!(
        dir.join("out-process/core-1.log")
            .metadata()
            .is_ok_and(|m| m.len() > 0),
        "core's output is in core-1.log"
    );
    let notes = process["run"]["notes"].to_string();
    assert!(
        notes.contains("--max-reconcile-rate=10 --poll-interval=1m0s"),
        "core started with the scenario's settings as its flags: {notes}"
    );
    // Per reconcile: one function call (one step), N + 2 = 4 applies.
    let reconciles = |core: &serde_json::Value| core["function_calls"]["resources"].as_u64();
    let (re, rp) = (
        reconciles(e).expect("the embedded core's calls"),
        reconciles(p).expect("the process's calls, from its metrics"),
    );
    for (core, r) in [(e, re), (p, rp)] {
        assert!(r >= 4, "each XR was composed at least once: {core}");
        assert_eq!(
            count(core, "patch", "buckets.mockcloud.example.org"),
            2 * r,
            "{core}"
        );
        assert_eq!(count(core, "patch", "xbucketsets.example.org"), r, "{core}");
        assert_eq!(
            count(core, "patch", "xbucketsets.example.org/status"),
            r,
            "{core}"
        );
        // A response per call, in the latency histogram's buckets (11 bounds, all of the
        // built-in function's answers within the largest).
        assert_eq!(core["function_responses"]["resources"].as_u64(), Some(r));
        let buckets = core["function_buckets"]["resources"].as_array().unwrap();
        assert_eq!(buckets.len(), 11, "{core}");
        assert_eq!(buckets[10].as_u64(), Some(r), "{core}");
    }
    // The rest: the watches' LISTs and WATCHes, events, finalizers, the revision: the
    // same, but for the process's discovery at start (four LISTs), its XRD watch (a LIST
    // and a WATCH) and the XR CRD, which the composer binary applies (a PATCH) and the
    // embedded core creates.
    let per_reconcile =
        |core: &serde_json::Value, r: u64| core["requests"].as_u64().unwrap() - 4 * r;
    let (rest_e, rest_p) = (per_reconcile(e, re), per_reconcile(p, rp));
    eprintln!(
        "embedded: {} requests, {re} reconciles, {rest_e} beside them; process: {} requests, {rp} reconciles, {rest_p} beside them",
        e["requests"], p["requests"]
    );
    let xrds = "compositeresourcedefinitions.apiextensions.crossplane.io";
    for (verb, resource, n) in [
        ("list", "functions.pkg.crossplane.io", 1),
        ("list", xrds, 2),
        ("watch", xrds, 1),
    ] {
        assert_eq!(count(e, verb, resource), 0, "{verb} {resource}: {e}");
        assert_eq!(count(p, verb, resource), n, "{verb} {resource}: {p}");
    }
    assert_eq!(
        count(
            e,
            "create",
            "customresourcedefinitions.apiextensions.k8s.io"
        ),
        1
    );
    assert_eq!(
        count(p, "patch", "customresourcedefinitions.apiextensions.k8s.io"),
        1
    );
    // Beside applies, events and status Updates: the watches' LISTs and WATCHes, the XRs'
    // finalizers and labels, the composed resources' names, the deletes. The same requests
    // but for the composer binary's four discovery LISTs at start (Functions, Compositions,
    // CompositionRevisions, XRDs) and its XRD watch's LIST and WATCH. Left out with the events: the XR's status Updates, one
    // for each reconcile that changed its conditions, composing or not (a deleting XR's
    // reconciles call no function), so they follow the reconcile count, which the process's
    // metrics do not give (a run saw 25 by the embedded core over 44 reconciles and 20
    // function calls, 36 by the process over 26 function calls). What may still differ is
    // what depends on how many reconciles the events made, so the stated difference is at
    // most the function call counts' difference plus 4 requests.
    let setup = 6;
    let left_out = |core: &serde_json::Value| {
        count(core, "create", "events")
            + count(core, "patch", "events")
            + count(core, "update", "xbucketsets.example.org/status")
    };
    let (other_e, other_p) = (rest_e - left_out(e), rest_p - left_out(p));
    let allowed = re.abs_diff(rp) + 4;
    assert!(
        other_p.abs_diff(other_e + setup) <= allowed,
        "beside applies, events and status Updates, the process made {other_p} requests and the embedded core {other_e} (+{setup}: 4 discovery LISTs, the XRD watch's LIST and WATCH), more apart than {allowed}: embedded {e}, process {p}"
    );
    // What a process cannot give is UNMEASURED, with the reason; the rest is judged.
    let breaker = verdict(&process, "breakerOpens");
    assert_eq!(breaker["outcome"], "unmeasured", "{breaker}");
    assert!(
        breaker["note"]
            .as_str()
            .is_some_and(|n| n.contains("core ran as a process")),
        "{breaker}"
    );
    for check in [
        "coreApiRequests",
        "functionCalls",
        "xrTimeToReady",
        "staleXRs",
    ] {
        let v = verdict(&process, check);
        assert_eq!(v["outcome"], "pass", "{v}");
    }
    // Per phase: the function calls are read from the process's metrics at the phase's
    // start and end, as from the embedded core's counters; its breakers are not.
    let breaker = phase_verdict(&process, "breakerOpens", Some("create"));
    assert_eq!(breaker["outcome"], "unmeasured", "{breaker}");
    for (result, name) in [(&embedded, "embedded"), (&process, "process")] {
        let v = phase_verdict(result, "functionCalls", Some("create"));
        assert_eq!(v["outcome"], "pass", "{name}: {v}");
        let core = &result["core"];
        let create = core["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["phase"] == "create")
            .unwrap_or_else(|| panic!("{name}: the create phase's share: {core}"));
        let calls = create["function_calls"]["resources"].as_u64().unwrap();
        assert_eq!(v["observed"].as_f64(), Some(calls as f64), "{name}: {v}");
        // Each XR composed at least once in the creation, each call answered and timed.
        assert!(calls >= 4, "{name}: {create}");
        let latency = &create["function_latency"];
        assert_eq!(
            latency["responses"]["resources"].as_u64(),
            Some(calls),
            "{name}: {create}"
        );
        let phases = core["phases"].as_array().unwrap().len();
        assert_eq!(phases, 3, "{name}: a share of every phase: {core}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
