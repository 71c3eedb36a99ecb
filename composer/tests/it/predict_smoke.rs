//! `xr-smoke`'s shape (docs/budget.md §12.6) with our provider embedded against mock-cloud:
//! 100 XRs of 5 Buckets through two steps, the composer's controller as the binary runs it,
//! every figure compared with §12's prediction for the shape.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use composer::function::builtin::{API_VERSION, KIND, Resources};
use composer::function::{Functions, InProcessRunner};
use harness::predict::core::{CoreShape, Step, breaker, load};
use limiter::crossplane::circuit::BreakerConfig;
use mock_apiserver::{ApiServer, Verb};
use serde_json::json;

use crate::fixture::{Logged, Resync, Running, is_true, realtime, xr_resource};
use crate::predict::{create_xrs, requests};

/// Requests at the journal after `from` on `resource` (and its status), by verb.
fn by_verb(server: &ApiServer, from: u64, resource: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for e in server.journal().since(from) {
        if e.verb != Verb::Watch && e.resource.split('/').next() == Some(resource) {
            *out.entry(format!("{:?} {}", e.verb, e.resource))
                .or_default() += 1;
        }
    }
    out
}

#[tokio::test(start_paused = true)]
async fn xr_smoke_with_our_provider_against_section_12_6() {
    let _cores = crate::timing::heavy();
    const X: usize = 100;
    const N: usize = 5;
    let s = CoreShape {
        sync_interval: f64::INFINITY,
        ..CoreShape::new(
            X as f64,
            N as f64,
            vec![Step::new("resources"), Step::new("resources")],
        )
    };
    let (cluster, cloud, buckets) = crate::chain::provider_cluster().await;
    let step = |name: &str| {
        json!({"step": name, "functionRef": {"name": "resources"}, "input": {
            "apiVersion": API_VERSION, "kind": KIND, "ttl": "60s",
            "resources": [{"name": "bucket", "count": N, "base": {
                "apiVersion": format!("{}/{}", provider::crd::GROUP, provider::crd::VERSION),
                "kind": "Bucket", "spec": {"forProvider": {"versioning": false}}},
                "patches": [{"fromFieldPath": "spec.region",
                    "toFieldPath": "spec.forProvider.region"}]}]}})
    };
    cluster
        .composition("buckets", &json!([step("compose"), step("again")]))
        .await;
    let (logged, calls) = Logged::new(Resources);
    let functions = Functions::new().with("resources", InProcessRunner::new(logged));
    let running = Running::cached(
        &cluster,
        functions,
        realtime(BreakerConfig::default()),
        std::slice::from_ref(&buckets),
        Resync::default(),
    );
    let provider = crate::chain::EmbeddedProvider::start(&cluster, &cloud);

    let from = cluster.server.journal().last_seq();
    create_xrs(&cluster, X).await;
    let began = tokio::time::Instant::now();
    // The test's own Lists of the XRs go to the journal too (one client for the test and
    // the composer): counted, and taken out of core's requests below.
    let mut polls = 0;
    loop {
        let all = cluster.list(&xr_resource()).await;
        polls += 1;
        if all.len() == X && all.iter().all(|x| is_true(x, "Ready")) {
            break;
        }
        assert!(began.elapsed() < Duration::from_secs(600), "not Ready");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let took = began.elapsed();
    let metrics = running.realtime.metrics();
    let creation_calls = calls.load(Ordering::Relaxed);
    eprintln!(
        "xr-smoke creation: Ready after {took:?}; {} function calls ({} reconciles per XR); \
         breaker {metrics:?} ({} tokens per XR); buckets {:#?}; xwidgets {:#?}",
        creation_calls,
        creation_calls as f64 / 2.0 / X as f64,
        (metrics.allowed + metrics.dropped + metrics.half_open_allowed) as f64 / X as f64,
        by_verb(&cluster.server, from, "buckets"),
        by_verb(&cluster.server, from, "xwidgets"),
    );
    let v = breaker::creation(&s);
    let tokens = (metrics.allowed + metrics.dropped + metrics.half_open_allowed) as f64 / X as f64;
    let reconciles = creation_calls as f64 / 2.0 / X as f64;
    let core_creation: usize = by_verb(&cluster.server, from, "xwidgets")
        .iter()
        .filter(|(k, _)| !k.starts_with("Create "))
        .map(|(_, v)| v)
        .sum::<usize>()
        - polls
        + by_verb(&cluster.server, from, "buckets")
            .iter()
            .filter(|(k, _)| k.starts_with("Patch ") || k.starts_with("Get "))
            .map(|(_, v)| v)
            .sum::<usize>();
    eprintln!(
        "§12.6 predicted: R_c ≤ {}, core's creation requests ≤ {} (measured {core_creation}), \
         c + 2U from {} to {}, opens surely {}, may open {}",
        load::creation_reconciles(&s).value,
        load::creation_requests(&s).value,
        v.tokens_min.value,
        v.tokens.value,
        v.opens.value,
        v.may_open.value
    );
    assert!(reconciles <= load::creation_reconciles(&s).value);
    assert!(core_creation as f64 <= load::creation_requests(&s).value);
    assert!(
        (v.tokens_min.value..=v.tokens.value).contains(&tokens),
        "{tokens}"
    );
    assert!(metrics.opens as f64 >= X as f64 * v.opens.value);
    assert!(metrics.opens as f64 <= X as f64 * v.may_open.value);

    // A steady 10 minutes.
    tokio::time::sleep(Duration::from_secs(120)).await;
    let (from, before) = (
        cluster.server.journal().last_seq(),
        calls.load(Ordering::Relaxed),
    );
    tokio::time::sleep(Duration::from_secs(600)).await;
    let steady = requests(&cluster.server, from);
    let core: usize = by_verb(&cluster.server, from, "xwidgets")
        .values()
        .sum::<usize>()
        + steady.get("Patch buckets").copied().unwrap_or_default();
    let steady_calls = calls.load(Ordering::Relaxed) - before;
    eprintln!(
        "xr-smoke steady 600 s: {core} requests of core (expected {}, at most {}), {steady_calls} \
         function calls (expected {}); all {steady:#?}",
        load::steady_requests(&s, 600.0).value,
        load::steady_requests_bound(&s, 600.0).value,
        load::function_calls(&s, "resources", 600.0).value,
    );
    let lower = X as f64 * (N as f64 + 2.0) * (600.0_f64 / 66.0).floor();
    assert!(
        (lower..=load::steady_requests_bound(&s, 600.0).value).contains(&(core as f64)),
        "{core}"
    );
    assert!(steady_calls as f64 <= load::function_calls_bound(&s, "resources", 600.0).value);
    provider.stop().await;
    running.stop().await;
}
