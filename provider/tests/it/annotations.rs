//! The per-resource annotations: `crossplane.io/poll-interval` and
//! `crossplane.io/reconcile-requested-at`.

use std::time::Duration;

use kube::api::{Patch, PatchParams};
use limiter::crossplane::{ReconcileRequests, Settings};
use mock_cloud::Action;
use provider::crd::{Bucket, Managed};
use serde_json::json;

use crate::stack::{Stack, annotated, bucket, eventually, is_ready, open_cloud};

const POLL: &str = "crossplane.io/poll-interval";
const REQUESTED: &str = "crossplane.io/reconcile-requested-at";

/// Whether every gap lies in `[p − 10 %, p + 10 %)`, give or take 10 ms for the journal's
/// clock resolution and the reconcile itself.
fn within_jitter(gaps: &[Duration], p: Duration) -> bool {
    let slack = Duration::from_millis(10);
    gaps.iter()
        .all(|g| *g + slack >= p.mul_f64(0.9) && *g < p.mul_f64(1.1) + slack)
}

/// Gaps between consecutive Observes of `name`, after the first `skip` calls.
fn observe_gaps(stack: &Stack, name: &str, skip: usize) -> Vec<Duration> {
    let times: Vec<u64> = stack
        .calls(Action::Get, name)
        .iter()
        .map(|c| c.at_us)
        .collect();
    times
        .windows(2)
        .skip(skip)
        .map(|w| Duration::from_micros(w[1] - w[0]))
        .collect()
}

/// Starts the provider, creates the Bucket `b`, waits (at most 10 s) until it is Ready,
/// then a second more.
async fn start_with_ready_bucket(stack: &mut Stack) {
    stack.start();
    stack.create(&bucket("b")).await;
    assert!(
        eventually(
            Duration::from_secs(10),
            Duration::from_millis(100),
            || async { stack.get::<Bucket>("b").await.is_some_and(|b| is_ready(&b)) }
        )
        .await
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[tokio::test(start_paused = true)]
async fn the_poll_annotation_sets_the_interval_between_observes_within_the_jitter_bounds() {
    let settings = Settings::default().min_poll_interval(Duration::from_secs(2));
    let mut stack = Stack::new(settings, open_cloud()).await;
    stack.start();
    stack.create(&bucket("default-poll")).await;
    stack.create(&annotated(bucket("fast"), POLL, "10s")).await;
    stack
        .create(&annotated(bucket("clamped"), POLL, "100ms"))
        .await;
    stack
        .create(&annotated(bucket("invalid"), POLL, "soon"))
        .await;
    tokio::time::sleep(Duration::from_secs(400)).await;

    // The first gap is creation → Ready (immediate); polls follow.
    let fast = observe_gaps(&stack, "fast", 1);
    assert!(fast.len() >= 30, "{} polls in 400 s at 10 s", fast.len());
    assert!(within_jitter(&fast, Duration::from_secs(10)), "{fast:?}");
    let clamped = observe_gaps(&stack, "clamped", 1);
    assert!(
        clamped.len() >= 150,
        "{} polls in 400 s at 2 s",
        clamped.len()
    );
    assert!(
        within_jitter(&clamped, Duration::from_secs(2)),
        "{clamped:?}"
    );
    for name in ["default-poll", "invalid"] {
        let gaps = observe_gaps(&stack, name, 1);
        assert!(gaps.len() >= 5, "{name}: {gaps:?}");
        assert!(
            within_jitter(&gaps, Duration::from_secs(60)),
            "{name}: {gaps:?}"
        );
    }
    // Jitter spreads the polls rather than repeating one value.
    let distinct: std::collections::BTreeSet<_> = fast.iter().collect();
    assert!(distinct.len() > fast.len() / 2);
    assert!(
        stack
            .event_reasons("invalid")
            .await
            .contains(&"InvalidPollInterval".to_owned())
    );
    assert!(
        !stack
            .event_reasons("fast")
            .await
            .contains(&"InvalidPollInterval".to_owned())
    );
    stack.stop().await;
}

#[tokio::test(start_paused = true)]
async fn each_new_reconcile_request_token_triggers_one_reconcile_and_the_same_token_none() {
    let mut stack = Stack::new(Settings::default(), open_cloud()).await;
    start_with_ready_bucket(&mut stack).await;
    let request = |token: &'static str| {
        let api = stack.api::<Bucket>();
        async move {
            let patch = json!({"metadata": {"annotations": {REQUESTED: token}}});
            api.patch("b", &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .unwrap();
        }
    };
    let observes = || stack.calls(Action::Get, "b").len();
    let last_handled = || async {
        stack
            .get::<Bucket>("b")
            .await
            .unwrap()
            .managed_status()
            .unwrap()
            .last_handled_reconcile_at
            .clone()
    };

    let before = observes();
    request("t1").await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(observes(), before + 1, "one reconcile for a new token");
    assert_eq!(last_handled().await.as_deref(), Some("t1"));

    // The same token again (a label edit passes the filter, then nothing new is handled).
    request("t1").await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(observes(), before + 1, "the same token does nothing");

    request("t2").await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(observes(), before + 2);
    assert_eq!(last_handled().await.as_deref(), Some("t2"));
    let handled = stack
        .event_reasons("b")
        .await
        .into_iter()
        .filter(|r| r == "ReconcileRequestHandled")
        .count();
    assert!(handled >= 1, "ReconcileRequestHandled was not recorded");
    stack.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_ignored_reconcile_request_still_brings_one_reconcile_but_records_nothing() {
    let settings = Settings::default().reconcile_requests(ReconcileRequests::Ignore);
    let mut stack = Stack::new(settings, open_cloud()).await;
    start_with_ready_bucket(&mut stack).await;
    let before = stack.calls(Action::Get, "b").len();
    let patch = json!({"metadata": {"annotations": {REQUESTED: "t1"}}});
    stack
        .api::<Bucket>()
        .patch("b", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    // The annotation's change passes the event filter, as in crossplane-runtime for a type
    // without Get/SetLastHandledReconcileAt: one reconcile on the normal path.
    assert_eq!(stack.calls(Action::Get, "b").len(), before + 1);
    let status = stack.get::<Bucket>("b").await.unwrap();
    assert_eq!(
        status.managed_status().unwrap().last_handled_reconcile_at,
        None
    );
    assert!(
        !stack
            .event_reasons("b")
            .await
            .contains(&"ReconcileRequestHandled".to_owned())
    );
    stack.stop().await;
}
