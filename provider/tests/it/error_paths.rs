//! Error paths as crossplane-runtime takes them, against per-resource cloud faults: a
//! lasting error backs off to its cap, drift updates on every reconcile, an observe-only
//! resource whose cloud resource is absent polls (after #1088) or backs off (before), and
//! the deliberately broken `immediate` mode loops.

use std::time::Duration;

use limiter::crossplane::{ErrorRequeue, ObserveOnlyAbsent, Settings};
use mock_cloud::{Action, Faults, LastingError, ResourceEffect, ResourceFault, ResourceSelector};
use provider::crd::{Bucket, Managed};

use crate::stack::{Stack, bucket, open_cloud};

fn faulted(name: &str, effect: ResourceEffect) -> mock_cloud::Config {
    open_cloud().with_faults(Faults::none().with_resource_fault(ResourceFault {
        select: ResourceSelector {
            name: Some(name.to_owned()),
            ..ResourceSelector::default()
        },
        effect,
    }))
}

fn access_denied() -> ResourceEffect {
    ResourceEffect::Error {
        error: LastingError::AccessDenied,
        code: None,
        actions: None,
    }
}

fn synced(b: &Bucket) -> (String, String) {
    let c = b.managed_status().unwrap().condition("Synced").unwrap();
    (c.status.clone(), c.message.clone().unwrap_or_default())
}

/// Start times of the Observes (GETs) of `name`, in seconds from the first.
fn observes(stack: &Stack, name: &str) -> Vec<f64> {
    let at: Vec<u64> = stack
        .calls(Action::Get, name)
        .iter()
        .map(|c| c.at_us)
        .collect();
    at.iter().map(|t| (t - at[0]) as f64 / 1e6).collect()
}

#[tokio::test(start_paused = true)]
async fn a_lasting_access_denied_sets_synced_false_warns_and_backs_off_to_the_cap() {
    let settings = Settings::default()
        .backoff_base(Some(Duration::from_secs(2)))
        .backoff_max(Some(Duration::from_secs(30)));
    let mut stack = Stack::new(settings, faulted("denied", access_denied())).await;
    stack.start();
    stack.create(&bucket("denied")).await;
    stack.create(&bucket("fine")).await;
    tokio::time::sleep(Duration::from_secs(300)).await;

    let denied = stack.get::<Bucket>("denied").await.unwrap();
    let (status, message) = synced(&denied);
    assert_eq!(status, "False");
    assert!(
        message.starts_with("observe failed: cloud answered HTTP 403"),
        "{message}"
    );
    assert!(
        stack
            .event_reasons("denied")
            .await
            .contains(&"CannotObserveExternalResource".to_owned())
    );
    // The first reconcile's external-name write comes back as a watch event and runs it again
    // at once (a self-triggered event); from then on base 2 s doubling to the 30 s cap: the
    // second failure waits 4 s, then 8, 16, 30, 30, … s.
    let at = observes(&stack, "denied");
    let gaps: Vec<f64> = at.windows(2).map(|w| (w[1] - w[0]).round()).collect();
    assert_eq!(gaps[..5], [0.0, 4.0, 8.0, 16.0, 30.0], "{gaps:?}");
    assert!(gaps[5..].iter().all(|g| *g == 30.0), "{gaps:?}");
    assert!(stack.calls(Action::Create, "denied").is_empty());
    assert_eq!(
        synced(&stack.get::<Bucket>("fine").await.unwrap()).0,
        "True"
    );
    stack.stop().await;
}

#[tokio::test(start_paused = true)]
async fn drift_that_never_converges_updates_on_every_reconcile_one_poll_apart() {
    let settings = Settings::default().poll_interval(Duration::from_secs(10));
    let drift = ResourceEffect::Drift {
        field: Some("versioning".into()),
    };
    let mut stack = Stack::new(settings, faulted("drifting", drift)).await;
    stack.start();
    stack.create(&bucket("drifting")).await;
    tokio::time::sleep(Duration::from_secs(200)).await;
    let gets = stack.calls(Action::Get, "drifting").len();
    let updates = stack.calls(Action::Update, "drifting").len();
    // Every reconcile after the create observes a drifted spec and updates: P ± 10 %.
    assert!((17..=23).contains(&updates), "{updates} updates in 200 s");
    assert!(gets - updates <= 2, "{gets} observes, {updates} updates");
    let b = stack.get::<Bucket>("drifting").await.unwrap();
    assert_eq!(synced(&b).0, "True");
    assert!(
        stack
            .event_reasons("drifting")
            .await
            .contains(&"UpdatedExternalResource".to_owned())
    );
    stack.stop().await;
}

async fn observe_only_absent(mode: ObserveOnlyAbsent) -> (Vec<f64>, Stack) {
    let settings = Settings::default().observe_only_absent(mode);
    let mut stack = Stack::new(settings, open_cloud()).await;
    stack.start();
    let mut observed = bucket("elsewhere");
    observed.spec.management_policies = Some(vec!["Observe".into()]);
    stack.create(&observed).await;
    tokio::time::sleep(Duration::from_secs(600)).await;
    (observes(&stack, "elsewhere"), stack)
}

#[tokio::test(start_paused = true)]
async fn an_observe_only_absent_resource_polls_since_1088_and_backed_off_before() {
    let (fixed, mut stack) = observe_only_absent(ObserveOnlyAbsent::Poll).await;
    let b = stack.get::<Bucket>("elsewhere").await.unwrap();
    assert_eq!(
        synced(&b),
        (
            "False".into(),
            "observe failed: external resource does not exist".into()
        )
    );
    assert!(
        b.metadata.finalizers.is_none(),
        "observe-only adds no finalizer"
    );
    assert!(stack.calls(Action::Create, "elsewhere").is_empty());
    // One Observe per poll (60 s ± 10 %) over 600 s.
    assert!((10..=12).contains(&fixed.len()), "{fixed:?}");
    stack.stop().await;

    let (before, mut stack) = observe_only_absent(ObserveOnlyAbsent::Backoff).await;
    // 0, 1, 3, 7, 15, 31, 63 s, then every 60 s: 16 Observes by 600 s.
    assert!((15..=17).contains(&before.len()), "{before:?}");
    assert!(stack.calls(Action::Create, "elsewhere").is_empty());
    stack.stop().await;
}

#[tokio::test(start_paused = true)]
async fn the_broken_immediate_mode_retries_a_failing_resource_as_fast_as_the_bucket_allows() {
    let settings =
        Settings::new(std::num::NonZeroU32::new(2).unwrap()).error_requeue(ErrorRequeue::Immediate);
    let mut stack = Stack::new(settings, faulted("denied", access_denied())).await;
    stack.start();
    stack.create(&bucket("denied")).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    let observes = stack.calls(Action::Get, "denied").len();
    // The backoff would allow 10 Observes in 60 s; the bucket (2/s, burst 20) allows ~140.
    assert!(observes > 100, "{observes} observes in 60 s");
    stack.stop().await;
}
