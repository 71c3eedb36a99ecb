//! The plan's tests: scoped buckets, backoff flags, the poll floor and failing shares.

use super::*;
use crate::scenario::parse;

fn scenario(provider: &str) -> Scenario {
    parse(
        &format!(
            "apiVersion: harness/v1\nname: t\nprovider: {{maxReconcileRate: 10, {provider}}}\nresources:\n  - {{name: b, kind: Bucket, count: 100}}\n  - {{name: r, kind: Record, count: 10, annotations: [{{percent: 100, values: {{crossplane.io/poll-interval: 1ms}}}}]}}\nphases:\n  - {{name: create, action: create}}\n  - {{name: outage, action: cloudOutage, duration: 5m}}\n"
        ),
        "t.yaml",
    )
    .expect("valid")
}

fn values(plan: &Plan) -> Vec<(String, f64)> {
    plan.run
        .iter()
        .chain(plan.phases.iter().flat_map(|p| &p.predictions))
        .filter(|p| p.id != "run/global-budget")
        .map(|p| (p.id.clone(), p.value))
        .collect()
}

#[test]
fn scoped_buckets_over_namespaced_kinds_only_predict_what_one_bucket_does() {
    let shared = plan(&scenario("rateLimitModel: in-queue"));
    let scoped = plan(&scenario("rateLimitModel: in-queue, scopedBuckets: true"));
    assert_eq!(values(&shared), values(&scoped));
    assert!(shared.find("run/global-budget").is_none());
    let budget = scoped
        .find("run/global-budget")
        .expect("scoped buckets say so");
    assert_eq!((budget.get("σ"), budget.value), (Some(1.0), 10.0));
}

#[test]
fn the_backoff_flags_move_the_outages_retry_rate_and_recovery() {
    let default = plan(&scenario("rateLimitModel: in-queue"));
    let sap = plan(&scenario(
        "rateLimitModel: in-queue, backoffBase: 5s, backoffMax: 5m",
    ));
    let rate = |p: &Plan| p.find("outage/failing-rate").expect("outage").value;
    let recovery = |p: &Plan| p.find("outage/recovery").expect("outage").value;
    // 110 resources, L̄ = 50 ms: N/(d_max + L̄), under R.
    assert!((rate(&default) - 110.0 / 60.05).abs() < 1e-9);
    assert!((rate(&sap) - 110.0 / 300.05).abs() < 1e-9);
    assert_eq!(recovery(&sap) - recovery(&default), 240.0);
    let f = &sap.find("outage/recovery").expect("outage").formula;
    assert!(f.starts_with("300 s (longest backoff)"), "{f}");
}

#[test]
fn no_poll_floor_lets_a_1ms_annotation_saturate_the_bucket() {
    let floor = plan(&scenario("rateLimitModel: in-queue"));
    let none = plan(&scenario("rateLimitModel: in-queue, minPollInterval: 0s"));
    let demand = |p: &Plan| p.phases[1].steady.demand;
    // With the 1 s floor, 10 records poll every 1 s; with none, every 1 ms.
    assert!(demand(&floor) < 30.0, "{}", demand(&floor));
    assert!(demand(&none) > 150.0, "{}", demand(&none));
    assert!(none.phases[1].steady.saturated);
    assert!((none.phases[1].steady.rate - 10.0).abs() < 1e-9);
}

/// docs/budget.md §9.6: the hold's windowed maximum is the polled buckets' tolerance plus
/// the failing share's n_f·c_f·A(W), with the failing buckets out of the poll population.
#[test]
fn a_failing_share_adds_its_backoff_attempts_to_the_holds_windowed_maximum() {
    let yaml = |faults: &str| {
        format!(
            "apiVersion: harness/v1\nname: t\nprovider: {{maxReconcileRate: 50, pollInterval: 20m}}\nresources:\n  - {{name: bucket, kind: Bucket, count: 1000{faults}}}\nphases:\n  - {{name: create, action: create, rate: 50}}\n  - {{name: hold, action: hold, duration: 168h}}\nassertions:\n  - {{check: steadyRate, phase: hold, window: 20m}}\n"
        )
    };
    let failing = plan(
        &parse(
            &yaml(", faults: [{percent: 2, error: AccessDenied}]"),
            "t.yaml",
        )
        .expect("valid"),
    );
    let healthy = plan(&parse(&yaml(""), "t.yaml").expect("valid"));
    let max = |p: &Plan| p.find("hold/steady-max/1200s").expect("planned").clone();
    let (f, h) = (max(&failing), max(&healthy));
    assert!(f.formula.contains("20·1·A(1200)"), "{}", f.formula);
    let added = f
        .inputs
        .iter()
        .find(|i| i.name == "faulted calls")
        .expect("input")
        .value;
    assert_eq!(added, 500.0);
    // 980 buckets polled instead of 1,000: the polled part is below the healthy run's.
    assert!(
        f.value - added < h.value,
        "{} − {added} against {}",
        f.value,
        h.value
    );
    assert!(
        h.value < 1489.0 && f.value >= 1489.0,
        "observed 1,489 in a week's run"
    );
}
