//! `run` on the embedded stack, with a scenario small enough to finish in seconds.
//!
//! It has no delete phase: deleting within 30 s of a create waits out crossplane-runtime's
//! creation grace (path P10 applies while deleting too), which `smoke` covers in CI.

use harness::run::{Progress, run_embedded};

const TINY: &str = "\
apiVersion: harness/v1
name: tiny-run
provider: {maxReconcileRate: 5, rateLimitModel: in-queue, pollInterval: 2s}
resources:
  - {name: bucket, kind: Bucket, count: 12, spec: {region: eu-west-1}}
  - {name: db, kind: Database, count: 3, spec: {engine: postgres, version: '16', sizeGb: 10}}
cloud:
  provisioning: {databaseCreate: 1s, databaseDelete: 1s}
phases:
  - {name: create, action: create, timeout: 60s}
  - {name: update, action: update, groups: [bucket], spec: {versioning: true}}
  - {name: hold, action: hold, duration: 3s}
  - {name: resync, action: resync, timeout: 30s}
assertions:
  - {check: cloudCalls, window: 1s}
  - {check: orphans}
  - {check: duplicates}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_scenario_runs_end_to_end_and_every_write_reaches_the_cloud_once() {
    let scenario = harness::scenario::parse(TINY, "tiny.yaml").expect("valid scenario");
    let output = run_embedded(&scenario, &Progress::quiet(), std::future::pending())
        .await
        .expect("the stack starts");
    let r = &output.result;
    assert!(output.interrupted.is_none());
    let report = harness::report::assertion_table(r);
    assert!(r.passed(), "{report}");
    let phases: Vec<&str> = r.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(phases, ["create", "update", "hold", "resync"]);
    let total = |op: &str| -> u64 {
        r.phases
            .iter()
            .map(|p| p.calls.get(op).copied().unwrap_or(0))
            .sum()
    };
    assert_eq!(total("create"), 15, "one cloud create per resource");
    assert_eq!(total("update"), 12, "one cloud update per updated bucket");
    assert_eq!(total("delete"), 0);
    assert_eq!(r.audit.orphans.len() + r.audit.duplicates.len(), 0);
    // The provider's own count of cloud calls matches the journal, call for call.
    let check = r
        .provider
        .as_ref()
        .expect("embedded runs read the provider's metrics");
    assert_eq!(check.agrees(), Some(true), "{}", check.summary());
    assert!(check.journal_cloud_calls > 0);
    // The names every controller-runtime provider exports, read in process after the run
    // stopped the provider: reconciles by result, errors, work-queue adds per controller,
    // and the provider's count of its API requests beside the API server's.
    let buckets = check
        .controllers
        .iter()
        .find(|c| c.controller == "managed/bucket.mockcloud.example.org")
        .unwrap_or_else(|| panic!("{:#?}", check.controllers));
    let reconciles = buckets.reconciles_total().expect("exported");
    assert!(reconciles >= 12, "{buckets:?}");
    assert!(
        buckets
            .reconciles
            .keys()
            .all(|r| ["success", "error", "requeue", "requeue_after"].contains(&r.as_str())),
        "controller-runtime's result values: {buckets:?}"
    );
    assert_eq!(buckets.reconcile_errors, Some(0), "{buckets:?}");
    assert!(
        buckets.queue_adds.is_some_and(|a| a >= reconciles),
        "{buckets:?}"
    );
    let api = check
        .api_requests
        .as_ref()
        .expect("rest_client_requests_total");
    assert!(
        api.provider > 0 && api.by.iter().all(|r| r.host == "in-process"),
        "{api:?}"
    );
    assert_eq!(api.provider, api.api_server, "{}", check.api_summary());
    // Each controller's realised concurrency, from its time spent reconciling: within its
    // workers, and busy where there was work.
    // The sample kinds' three controllers, and the AWS flavour's when it is built in.
    for kind in ["bucket", "database", "record"] {
        let name = format!("managed/{kind}.mockcloud.example.org");
        assert!(
            check.concurrency.iter().any(|c| c.controller == name),
            "{name} in {:?}",
            check.concurrency
        );
    }
    for c in &check.concurrency {
        assert!(
            c.mean_busy >= 0.0 && c.mean_busy <= c.workers as f64,
            "{c:?}"
        );
    }
    assert!(
        check.concurrency.iter().any(|c| c.busy_s > 0.0),
        "{:?}",
        check.concurrency
    );
}

/// Three buckets name a ProviderConfig that does not exist: they never become Ready.
const MISSING_CONFIG: &str = "\
apiVersion: harness/v1
name: missing-config
time: virtual
provider: {maxReconcileRate: 5, pollInterval: 1m}
resources:
  - {name: bucket, kind: Bucket, count: 12, spec: {region: eu-west-1}}
  - name: lost
    kind: Bucket
    count: 3
    spec: {region: eu-west-1}
    template: {spec: {providerConfigRef: {name: team-b}}}
phases:
  - {name: create, action: create, timeout: 2m}
  - {name: hold, action: hold, duration: 1m}
assertions:
  - {check: orphans}
";

#[test]
fn a_create_that_times_out_names_the_resources_not_ready_with_the_providers_words() {
    let scenario = harness::scenario::parse(MISSING_CONFIG, "missing.yaml").expect("valid");
    let runtime = harness::run::time::runtime(scenario.time).unwrap();
    let output = runtime
        .block_on(run_embedded(
            &scenario,
            &Progress::quiet(),
            std::future::pending(),
        ))
        .expect("the stack starts");
    let r = &output.result;
    let stopped = r.stopped.as_ref().expect("the create timed out");
    assert_eq!(stopped.phase, "create");
    let waiting = stopped.waiting.as_ref().expect("what it waited for");
    assert_eq!((waiting.pending, waiting.of), (3, 15), "{waiting:#?}");
    assert_eq!(waiting.until, "Ready");
    for (i, p) in waiting.first.iter().enumerate() {
        assert_eq!(p.name, format!("lost-{i}"));
        let synced = p
            .conditions
            .iter()
            .find(|c| c.kind == "Synced")
            .unwrap_or_else(|| panic!("{p:#?}"));
        assert_eq!(synced.status, "False", "{p:#?}");
        assert!(synced.message.contains("team-b"), "{p:#?}");
    }
    let table = harness::report::assertion_table(r);
    assert!(
        table.contains(
            "phase create timed out with 3 of 15 resources not Ready yet:\n  Bucket lost-0: "
        ),
        "{table}"
    );
}
