//! The harness's predictions of core's composite layer (docs/budget.md §12) against the
//! composer itself, on tokio's paused clock: the controller with its watches and cached reads
//! as the binary runs it, against mock-apiserver, counted at the source (applies in the
//! API server's journal, calls in the function's own log, tokens and opens in the breaker's
//! metrics), each compared with the formula's value for the same shape.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use composer::function::builtin::{API_VERSION, KIND, Resources};
use composer::function::{Functions, InProcessRunner};
use harness::predict::core::{BreakerShape, CloseMode, CoreShape, Step, breaker, load};
use kube::api::PostParams;
use limiter::crossplane::circuit::{BreakerConfig, Mode};
use mock_apiserver::{ApiServer, Config, Verb};
use serde_json::{Value, json};

use crate::fixture::{
    Cluster, Logged, Resync, Running, is_true, object, realtime, set_condition, widget_resource,
    xr_resource, xrd,
};

/// Two steps of the built-in function (one Function, so k = 2 for it), composing `n`
/// Widgets, with `ttl` (none when empty).
fn two_steps(n: usize, ttl: &str) -> Value {
    let mut input = json!({"apiVersion": API_VERSION, "kind": KIND,
        "resources": [{"name": "widget", "count": n,
            "base": {"apiVersion": "test.example.org/v1", "kind": "Widget"}}]});
    if !ttl.is_empty() {
        input["ttl"] = json!(ttl);
    }
    json!([{"step": "compose", "functionRef": {"name": "resources"}, "input": input},
           {"step": "again", "functionRef": {"name": "resources"}, "input": input}])
}

/// The shape §12 predicts for `xrs` XRs of `n` Widgets through [`two_steps`].
fn shape(xrs: usize, n: usize, ttl: f64) -> CoreShape {
    CoreShape {
        ttl,
        sync_interval: f64::INFINITY,
        // The stand-in provider: one Ready write per Widget, which the XR's status shows.
        provider_writes: 1.0,
        status_changes: 1.0,
        ..CoreShape::new(
            xrs as f64,
            n as f64,
            vec![Step::new("resources"), Step::new("resources")],
        )
    }
}

struct Stack {
    cluster: Cluster,
    running: Running,
    calls: Arc<AtomicU64>,
}

/// The controller with no resync (§12's steady windows are then TTL polls only).
async fn stack(n: usize, ttl: &str) -> Stack {
    stack_with(n, ttl, BreakerConfig::default(), Resync::default()).await
}

async fn stack_with(n: usize, ttl: &str, config: BreakerConfig, resync: Resync) -> Stack {
    let cluster = Cluster::new(ApiServer::new(Config::default())).await;
    cluster.install_xrd(&xrd()).await;
    cluster.composition("widgets", &two_steps(n, ttl)).await;
    let (logged, calls) = Logged::new(Resources);
    let functions = Functions::new().with("resources", InProcessRunner::new(logged));
    let running = Running::cached(
        &cluster,
        functions,
        realtime(config),
        &[widget_resource()],
        resync,
    );
    Stack {
        cluster,
        running,
        calls,
    }
}

pub(crate) async fn create_xrs(cluster: &Cluster, xrs: usize) {
    let api = cluster.api(&xr_resource());
    for i in 0..xrs {
        api.create(
            &PostParams::default(),
            &object(json!({"apiVersion": "example.org/v1", "kind": "XWidget",
                "metadata": {"name": format!("xr-{i}")}, "spec": {"region": "eu-west-1"}})),
        )
        .await
        .unwrap();
    }
}

/// Core's requests at the journal after `from`, by verb and resource, watches left out
/// (the informers' own, not a reconcile's).
pub(crate) fn requests(server: &ApiServer, from: u64) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for e in server.journal().since(from) {
        if e.verb != Verb::Watch {
            *out.entry(format!("{:?} {}", e.verb, e.resource))
                .or_default() += 1;
        }
    }
    out
}

#[tokio::test(start_paused = true)]
async fn steady_polling_creation_and_breaker_tokens_match_section_12() {
    const X: usize = 3;
    const N: usize = 5;
    let s = shape(X, N, 60.0);
    let stack = stack(N, "60s").await;
    let breaker = Arc::clone(&stack.running.realtime);
    let from = stack.cluster.server.journal().last_seq();
    create_xrs(&stack.cluster, X).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    stack.cluster.mark_ready(&widget_resource()).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    for i in 0..X {
        let x = stack.cluster.get(&xr_resource(), &format!("xr-{i}")).await;
        assert!(is_true(&x, "Ready"), "{:?}", x.data["status"]);
    }

    // Creation: every mapped event is one token. Every Widget turns Ready in one instant,
    // and one reconcile of each XR sees them all: its own writes are the fewest, w_xr,min,
    // so c + 2U_min per XR exactly.
    let metrics = breaker.metrics();
    let tokens = breaker::creation(&s).tokens_min.value;
    assert_eq!(metrics.opens, 0);
    assert_eq!(metrics.allowed as f64, X as f64 * tokens, "{metrics:?}");
    let creation = requests(&stack.cluster.server, from);
    let created: usize = creation
        .iter()
        .filter(|(k, _)| !k.starts_with("Create ") && !k.starts_with("List "))
        .map(|(_, v)| v)
        .sum();
    let reconciles = stack.calls.load(Ordering::Relaxed) as f64 / 2.0 / X as f64;
    let bound = load::creation_reconciles(&s).value;
    let requests_bound = load::creation_requests(&s).value;
    eprintln!(
        "§12.3 creation of {X} XRs × {N}: {reconciles} reconciles per XR (bound {bound}), \
         {created} requests of core (bound {requests_bound}), {} breaker tokens per XR \
         (c + 2U_min = {tokens})\n{creation:#?}",
        metrics.allowed as f64 / X as f64
    );
    assert!(reconciles <= bound);
    assert!((created as f64) <= requests_bound);

    // Steady state: ten minutes of TTL polls, nothing but N + 2 applies per reconcile.
    tokio::time::sleep(Duration::from_secs(120)).await;
    let (from, before) = (
        stack.cluster.server.journal().last_seq(),
        stack.calls.load(Ordering::Relaxed),
    );
    let window = 600.0;
    tokio::time::sleep(Duration::from_secs_f64(window)).await;
    let steady = requests(&stack.cluster.server, from);
    let applies: usize = steady.values().sum();
    let patches = steady
        .iter()
        .filter(|(k, _)| k.starts_with("Patch "))
        .map(|(_, v)| v)
        .sum::<usize>();
    assert_eq!(applies, patches, "only applies: {steady:#?}");
    let calls = (stack.calls.load(Ordering::Relaxed) - before) as f64;
    let expected = load::steady_requests(&s, window).value;
    let upper = load::steady_requests_bound(&s, window).value;
    // The jitter's slowest chain: ⌊W/(1.1·TTL + L)⌋ reconciles per XR.
    let lower = X as f64 * (N as f64 + 2.0) * (window / 66.0).floor();
    let calls_expected = load::function_calls(&s, "resources", window).value;
    let calls_bound = load::function_calls_bound(&s, "resources", window).value;
    eprintln!(
        "§12.1 steady {window}s: {applies} requests (expected {expected}, bounds {lower}..{upper}); \
         §12.2 {calls} function calls (expected {calls_expected}, bound {calls_bound})"
    );
    assert!((lower..=upper).contains(&(applies as f64)), "{applies}");
    assert_eq!(applies % (N + 2), 0, "whole reconciles of N + 2 applies");
    assert!(calls <= calls_bound);
    assert_eq!(
        calls * (N as f64 + 2.0) / 2.0,
        applies as f64,
        "k = 2 per reconcile"
    );
    // Within the jitter's spread of the expectation: one reconcile per XR either way (the
    // expectation is a float sum: 210.00000000000003 for 210, so 189 is one reconcile per
    // XR below it, the slowest chain's count above, and must pass).
    let spread = X as f64 * (N as f64 + 2.0);
    assert!(
        (applies as f64 - expected).abs() <= spread + 1e-9 * expected,
        "{applies} against {expected} ± {spread}"
    );
    stack.running.stop().await;
}

/// Creation of one XR of `n` Widgets without a TTL, the stand-in provider writing the
/// Widgets' Ready a second after the create, one a millisecond, so that the XR is reconciled
/// after each: whether the breaker opens and the XR is left stale.
async fn creation_storm(n: usize) -> (u64, bool) {
    let stack = stack(n, "").await;
    create_xrs(&stack.cluster, 1).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    stack
        .cluster
        .mark_ready_one_by_one(&widget_resource(), Duration::from_millis(1))
        .await;
    // No TTL, no resync: only a kept event could bring the XR back.
    tokio::time::sleep(Duration::from_secs(600)).await;
    let x = stack.cluster.api(&xr_resource()).get("xr-0").await.unwrap();
    let opens = stack.running.realtime.metrics().opens;
    stack.running.stop().await;
    (opens, !is_true(&x, "Ready"))
}

#[tokio::test(start_paused = true)]
async fn creation_opens_the_breaker_exactly_past_the_predicted_tokens() {
    // 12: 99 tokens, no open; 13: 106, open, but the last Ready write is the one the opening
    // keeps; 14: 113, its Ready write dropped.
    for n in [12, 13, 14] {
        let s = CoreShape {
            creation_span: 1.0,
            ..shape(1, n, 0.0)
        };
        let v = breaker::creation(&s);
        let (opens, stale) = creation_storm(n).await;
        // The stand-in writes one Ready at a time and the XR is reconciled after each, so
        // its tokens are the most, c + 2U: the circuit opens exactly when they may.
        eprintln!(
            "§12.5 creation of 1 XR × {n}: c + 2U = {} against B + R·Δt = 101: predicted may \
             open {} stale {}; measured opens {opens} stale {stale}",
            v.tokens.value, v.may_open.value, v.stale_xrs.value
        );
        assert_eq!(opens as f64, v.may_open.value, "{n}");
        assert_eq!(f64::from(u8::from(stale)), v.stale_xrs.value, "{n}");
    }
}

#[tokio::test(start_paused = true)]
async fn an_edit_storm_opens_every_breaker_at_the_predicted_edit() {
    const K: usize = 10;
    const N: usize = 2;
    let s = CoreShape {
        edit_interval: 1.0,
        ..shape(K, N, 0.0)
    };
    let predicted = breaker::edits_to_open(&s).expect("opens");
    let stack = stack(N, "").await;
    create_xrs(&stack.cluster, K).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    stack.cluster.mark_ready(&widget_resource()).await;
    tokio::time::sleep(Duration::from_secs(120)).await;
    let breaker = Arc::clone(&stack.running.realtime);
    assert_eq!(breaker.metrics().opens, 0);
    let before = breaker.metrics().allowed;
    let mut edits = 0;
    while breaker.metrics().opens < K as u64 {
        edits += 1;
        assert!(edits < 60, "{:?}", breaker.metrics());
        stack
            .cluster
            .revision("widgets", edits + 1, &two_steps(N, ""))
            .await;
        if edits == 1 {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let per_xr = (breaker.metrics().allowed - before) as f64 / K as f64;
            eprintln!(
                "§12.5 one revision: {per_xr} tokens per XR (τ_rev = {})",
                breaker::revision_tokens(&s)
            );
            assert!((per_xr - breaker::revision_tokens(&s)).abs() < 1e-9);
            tokio::time::sleep(Duration::from_millis(500)).await;
        } else {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
    eprintln!(
        "§12.5 edits 1 s apart: {edits} opened all {K} breakers (predicted n* = {predicted})"
    );
    assert_eq!(edits as f64, predicted);
    // Without a TTL the XRs stay behind: a further revision reaches none of them.
    let newest = edits + 2;
    stack
        .cluster
        .revision("widgets", newest, &two_steps(N, ""))
        .await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    let mut stale = 0;
    for i in 0..K {
        let x = stack.cluster.get(&xr_resource(), &format!("xr-{i}")).await;
        let on = x.data["spec"]["crossplane"]["compositionRevisionRef"]["name"].clone();
        stale += usize::from(on != json!(format!("widgets-{newest}")));
    }
    assert_eq!(stale as f64, breaker::revision(&s).stale_xrs.value);
    stack.running.stop().await;
}

/// Writes `Ready=True` on every Widget, one every 10 s: 6 tokens each (its Update and the
/// XR's two status writes), fewer than the 10 the bucket refills meanwhile.
async fn trickle_ready(cluster: &Cluster) {
    let widgets = cluster.api(&widget_resource());
    for w in cluster.list(&widget_resource()).await {
        set_condition(&widgets, &w, "Ready", "True").await;
        tokio::time::sleep(Duration::from_secs(10)).await;
    }
}

/// One XR of `n` Widgets made Ready slowly enough to keep its circuit closed, the Widgets'
/// informer resyncing every S_sync = 20 minutes: the second the circuit opens and how long it
/// stays open, as the breaker's counters show.
async fn resync_storm(n: usize, mode: Mode) -> Option<(u64, Option<u64>)> {
    let resync = Resync {
        composed: Some(Duration::from_secs(1200)),
        ..Resync::default()
    };
    let stack = stack_with(n, "", BreakerConfig::default().mode(mode), resync).await;
    create_xrs(&stack.cluster, 1).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    trickle_ready(&stack.cluster).await;
    let metrics = || stack.running.realtime.metrics();
    assert_eq!(metrics().opens, 0, "the creation keeps the circuit closed");
    let mut opened = None;
    for second in 0..3000 {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let m = metrics();
        match opened {
            None if m.opens > 0 => opened = Some(second),
            Some(at) if m.closes > 0 => {
                stack.running.stop().await;
                return Some((at, Some(second - at)));
            }
            _ => {}
        }
    }
    stack.running.stop().await;
    opened.map(|at| (at, None))
}

#[tokio::test(start_paused = true)]
async fn a_resync_opens_past_fifty_widgets_and_closes_within_the_predicted_time() {
    for (n, mode, close) in [
        (50, Mode::Released, CloseMode::Released),
        (51, Mode::Released, CloseMode::Released),
        (51, Mode::EagerClose, CloseMode::Eager),
    ] {
        let s = CoreShape {
            composed: n as f64,
            watched_per_kind: n as f64,
            sync_interval: 1200.0,
            breaker: BreakerShape {
                mode: close,
                ..BreakerShape::default()
            },
            ..shape(1, n, 0.0)
        };
        let v = breaker::resync(&s);
        let measured = resync_storm(n, mode).await;
        eprintln!(
            "§12.5 resync of {n} Widgets ({mode:?}): 2·n_kind = {}, predicted opens {}, open at \
             most {} s; measured (opened at, open for) {measured:?}",
            v.tokens.value, v.opens.value, v.open_for.value
        );
        assert_eq!(
            f64::from(u8::from(measured.is_some())),
            v.opens.value,
            "{n}"
        );
        if let Some((_, open_for)) = measured {
            let open_for = open_for.expect("closes") as f64;
            assert!(open_for >= s.breaker.cooldown, "{open_for}");
            assert!(open_for <= v.open_for.value + 1.0, "{open_for}");
        }
    }
}
