//! A composite scenario on the embedded stack in virtual time (a small copy of
//! scenarios/xr-smoke.yaml): core's figures measured at the source against what one XR
//! reconcile must do with cached reads (composer/README.md): N+2 server-side applies (the
//! XR's resource references, the N composed resources, the XR's status) and one function
//! call per pipeline step, and nothing else.

use harness::run::{Progress, run_embedded};
use harness::scenario::parse;

#[test]
fn an_xr_reconcile_applies_n_plus_2_and_calls_each_step_once() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/xr-smoke.yaml"
    ))
    .expect("the shipped scenario")
    .replace("count: 100", "count: 4")
    .replace("duration: 3m", "duration: 2m");
    let s = parse(&text, "xr-smoke.yaml").expect("valid");
    let shape = &s.composites.groups[0].shape;
    let (n, f) = (
        u64::from(shape.resources_per_xr().expect("fixed counts")),
        shape.steps_per_pipeline() as u64,
    );
    assert_eq!((n, f), (5, 2));
    let runtime = harness::run::time::runtime(s.time).expect("a runtime");
    let out = runtime
        .block_on(run_embedded(&s, &Progress::quiet(), std::future::pending()))
        .expect("the stack starts");
    let r = out.result;
    assert!(!r.partial, "{:?}", r.stopped);
    for v in &r.verdicts {
        assert!(v.pass, "{v:?}");
    }
    let core = r.core.expect("core was measured");
    let patches = |resource: &str| {
        core.by_verb
            .iter()
            .filter(|x| x.verb == "patch" && x.resource == resource)
            .map(|x| x.count)
            .sum::<u64>()
    };
    // Each reconcile that composes calls every step once.
    let calls = core.total_function_calls();
    assert_eq!(calls % f, 0, "{core:?}");
    let reconciles = calls / f;
    // Four XRs: created, polled by the functions' 1m TTL through a 2-minute hold, re-synced.
    assert!(reconciles >= 4 * 3, "{reconciles}");
    // N composed applies, the references' apply and the status apply per reconcile.
    assert_eq!(patches("buckets.mockcloud.example.org"), n * reconciles);
    assert_eq!(patches("xbucketsets.example.org"), reconciles);
    assert_eq!(patches("xbucketsets.example.org/status"), reconciles);
    // Reads are cached: core's only GETs are the name generator's, one per new composed
    // resource, and no LIST beyond the informers' first.
    let gets: u64 = core
        .by_verb
        .iter()
        .filter(|x| x.verb == "get" && x.resource == "buckets.mockcloud.example.org")
        .map(|x| x.count)
        .sum();
    assert_eq!(gets, 4 * n);
    assert_eq!(core.breaker_opens(), 0);
    assert!(core.stale.is_empty());
    assert_eq!(core.xrs.len(), 4);
    for x in &core.xrs {
        assert_eq!(x.composed, 5, "{x:?}");
        // An XR is Ready once its slowest composed resource is, never before.
        let (xr, slowest) = (
            x.ready_s.expect("Ready"),
            x.slowest_composed_s.expect("all Ready"),
        );
        assert!(xr >= slowest, "{x:?}");
    }
    // The provider's checks hold on the composed Buckets: every one created in the cloud
    // and gone after the XRs' foreground delete.
    assert!(r.audit.orphans.is_empty() && r.audit.duplicates.is_empty());
}
