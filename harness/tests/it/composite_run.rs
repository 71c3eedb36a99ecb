//! A composite scenario on the embedded stack in virtual time (a small copy of
//! scenarios/xr-smoke.yaml): core's figures measured at the source against what one XR
//! reconcile must do with cached reads (composer/README.md): N+2 server-side applies (the
//! XR's resource references, the N composed resources, the XR's status) and one function
//! call per pipeline step, and nothing else.

use harness::run::{Progress, run_embedded};
use harness::scenario::parse;

#[test]
fn an_xr_reconcile_applies_n_plus_2_and_calls_each_step_once() {
    // Four XRs' 20 Buckets queue nowhere: the plan's unloaded time to Ready of a composed
    // Bucket (2L̄ + L̄) is shorter than the 1.1 s observed.
    let text = crate::fixture::xr_smoke_text("3m").replace("count: 100", "count: 4");
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
    // Reads are cached and names cost nothing (core names a composed resource from its
    // XR's uid): core sends no GET of a composed resource, and no LIST beyond the
    // informers' first.
    let gets: u64 = core
        .by_verb
        .iter()
        .filter(|x| x.verb == "get" && x.resource == "buckets.mockcloud.example.org")
        .map(|x| x.count)
        .sum();
    assert_eq!(gets, 0);
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
    // The scenario gives core's checks no limits: each takes the plan's prediction, shown
    // beside the observed figure.
    let plan = harness::predict::plan(&s);
    for (check, id) in [
        ("coreApiRequests", "core/api-requests/10s"),
        ("functionCalls", "core/function-calls"),
        ("xrTimeToReady", "core/xr-time-to-ready"),
        ("breakerOpens", "core/breaker-opens"),
    ] {
        let p = plan.find(id).expect("predicted");
        let v = r
            .verdicts
            .iter()
            .find(|v| v.check == check)
            .expect("asserted");
        assert_eq!(v.predicted, p.value, "{v:?}");
        match check {
            "breakerOpens" => assert_eq!(v.limit, 0.0, "{v:?}"),
            "xrTimeToReady" => assert_eq!(v.limit, 180.0, "{v:?}"),
            _ => {
                assert_eq!(v.limit, p.value, "{v:?}");
                assert_eq!(v.formula, p.formula, "{v:?}");
            }
        }
        assert!(v.observed.is_finite(), "{v:?}");
    }
}

/// The plan of the shipped xr-smoke holds core's predictions for its XR group, the worked
/// example of docs/budget.md §12.6, and the bounds its core checks read.
#[test]
fn the_plan_of_xr_smoke_holds_cores_predictions() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/xr-smoke.yaml"
    ))
    .expect("the shipped scenario");
    let s = parse(&text, "xr-smoke.yaml").expect("valid");
    let plan = harness::predict::plan(&s);
    let value = |id: &str| plan.find(id).unwrap_or_else(|| panic!("{id}")).value;
    // §12.6: 100 XRs of 5 Buckets, two steps, 60 s TTL, core's defaults, u = 6, h = 2.
    assert_eq!(value("core/sets/creation-reconciles"), 63.0);
    assert_eq!(value("core/sets/creation-requests"), 50_800.0);
    assert_eq!(
        value("core/sets/creation-function-calls/resources"),
        2.0 * 6_300.0
    );
    assert_eq!(value("core/sets/steady-requests-bound"), 55_300.0);
    assert_eq!(value("core/sets/creation/tokens"), 120.0);
    assert_eq!(value("core/sets/creation/tokens-min"), 88.0);
    // The checks' bounds: the whole creation in one 10 s window plus the steady bound
    // 100·7·(⌊10/54⌋ + 1 + 2·3·1).
    assert_eq!(value("core/api-requests/10s"), 50_800.0 + 4_900.0);
    let calls = plan.find("core/function-calls").expect("predicted");
    let t = calls.get("T").expect("the run's length");
    assert!(t >= 180.0, "{t}");
    let steady = 100.0 * 2.0 * ((t / 54.0 + 1e-9).floor() + 1.0 + 6.0);
    assert_eq!(calls.value, 12_600.0 + steady);
    // XR time to Ready: the provider's p99 time to Ready for the 500 Buckets created at
    // once (§5.2: ((m − 1 + q)·N − B)/R + L̄ with m = 2, R = 10, B = 100, L̄ = 50 ms), with
    // no function or apply time in virtual time.
    let ttr = (1.99 * 500.0 - 100.0) / 10.0 + 0.05;
    for id in ["core/xr-time-to-ready", "core/sets/xr-time-to-ready"] {
        let p = plan.find(id).expect("predicted");
        assert!((p.value - ttr).abs() < 1e-9, "{p:?}");
        assert!((p.get("τ_MR").expect("τ_MR") - ttr).abs() < 1e-9, "{p:?}");
    }
    // With Δt = 0 (the default) the creation may open every circuit, not surely.
    let opens = plan.find("core/breaker-opens").expect("predicted");
    assert_eq!(opens.value, 0.0);
    assert_eq!(opens.get("X_may"), Some(100.0));
    // `harness predict` lists them.
    let listing = harness::report::plan_listing(&s, &plan);
    assert!(
        listing.contains("sets: core's API requests while the XRs are created"),
        "{listing}"
    );
    assert!(
        listing.contains("core's API requests in any 10s window"),
        "{listing}"
    );
}

/// A phase with kills scheduled into it still writes its XR groups and waits for them: the
/// shrunk xr-smoke with two kills of the provider during its create phase creates its four
/// XRs, and the phase ends only once every one is Ready.
#[test]
fn a_phase_with_kills_writes_and_waits_for_its_xrs() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/xr-smoke.yaml"
    ))
    .expect("the shipped scenario")
    .replace("count: 100", "count: 4")
    .replace(
        "  - {name: hold, action: hold, duration: 3m}\n  - {name: resync, action: resync, timeout: 2m}\n",
        "  - {name: kill-create, action: kill, during: create, count: 2, duration: 20s}\n",
    )
    // The budget does not predict the cloud calls of a phase with kills.
    .replace("  - {check: cloudCalls, window: 10s}\n", "");
    let s = parse(&text, "xr-smoke.yaml").expect("valid");
    assert!(s.phases.iter().any(|p| p.name == "kill-create"), "{text}");
    let runtime = harness::run::time::runtime(s.time).expect("a runtime");
    let r = runtime
        .block_on(run_embedded(&s, &Progress::quiet(), std::future::pending()))
        .expect("the stack starts")
        .result;
    assert_eq!(r.kills.len(), 2, "{:?}", r.kills);
    assert!(
        r.kills.iter().all(|k| k.during == "create"),
        "{:?}",
        r.kills
    );
    let create = r.phases.iter().find(|p| p.name == "create").expect("ran");
    assert!(create.completed, "{create:?}");
    let core = r.core.expect("core was measured");
    assert_eq!(core.xrs.len(), 4, "{:?}", core.xrs);
    // The create phase waited for its XRs: each, created in the phase, was Ready before
    // the phase ended.
    for x in &core.xrs {
        let ready = x.ready_s.expect("Ready");
        assert!(
            create.start_s + ready <= create.end_s,
            "{x:?} in {create:?}"
        );
        assert_eq!(x.composed, 5, "{x:?}");
    }
}
