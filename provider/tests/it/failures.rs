//! Failures: cloud outages, throttling, a crash between create and its record, bad specs.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use kube::api::{Patch, PatchParams};
use limiter::crossplane::Settings;
use mock_cloud::{Action, Class, Collection, Faults, Outage, Quotas, Rate};
use provider::CloudClient;
use provider::crd::{Bucket, Record};
use serde_json::json;
use tower::ServiceExt;

use crate::stack::{Stack, bucket, eventually, is_ready, open_cloud, record};

const SECOND: Duration = Duration::from_secs(1);

#[tokio::test(start_paused = true)]
async fn a_cloud_outage_backs_off_per_resource_and_everything_recovers() {
    let settings = Settings::default().poll_interval(Duration::from_secs(5));
    let mut stack = Stack::new(settings, open_cloud()).await;
    stack.start();
    for i in 0..10 {
        stack.create(&bucket(&format!("b{i}"))).await;
    }
    assert!(
        eventually(Duration::from_secs(30), SECOND, || stack
            .all_ready::<Bucket>())
        .await
    );
    let start = stack.cloud.elapsed();
    let outage = Outage {
        start,
        end: start + Duration::from_secs(60),
        status: 503,
    };
    stack
        .cloud
        .set_faults(Faults::none().with_outage(outage))
        .unwrap();

    tokio::time::sleep(Duration::from_secs(30)).await;
    let synced = stack.condition::<Bucket>("b0", "Synced").await;
    assert_eq!(synced.status, "False");
    assert!(
        synced
            .message
            .as_deref()
            .unwrap_or_default()
            .starts_with("observe failed: cloud answered HTTP 503"),
        "{synced:?}"
    );

    let recovered = eventually(Duration::from_secs(120), SECOND, || {
        stack.all_ready::<Bucket>()
    })
    .await;
    assert!(recovered, "not every bucket recovered after the outage");
    // During the outage each resource backed off: 1, 2, 4, 8, 16, 32 s between failed
    // Observes, instead of polling every 5 s or retrying at once.
    for i in 0..10 {
        let failed: Vec<u64> = stack
            .calls(Action::Get, &format!("b{i}"))
            .iter()
            .filter(|c| c.status == 503)
            .map(|c| c.at_us)
            .collect();
        assert!(
            (4..=8).contains(&failed.len()),
            "b{i}: {} failed observes in 60 s",
            failed.len()
        );
        let gaps: Vec<u64> = failed.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(
            gaps.windows(2).all(|g| g[1] >= g[0]),
            "b{i}: gaps shrink: {gaps:?}"
        );
        assert!(
            gaps.last().copied().unwrap_or_default() >= 8_000_000,
            "b{i}: {gaps:?}"
        );
    }
    assert_eq!(stack.inventory(Collection::Buckets).len(), 10);
    stack.stop().await;
}

#[tokio::test(start_paused = true)]
async fn cloud_throttling_is_absorbed_by_per_item_backoff() {
    let quotas = Quotas::unlimited().with_class(Class::Mutate, Some(Rate::new(5, 2.0)));
    let cloud = mock_cloud::Config::empty().with_account(
        mock_cloud::AccountConfig::new("default")
            .with_token("default")
            .with_quotas(quotas),
    );
    let mut stack = Stack::new(Settings::default(), cloud).await;
    stack.start();
    for i in 0..30 {
        stack.create(&record(&format!("r{i:02}"), "A")).await;
    }
    let ready = eventually(Duration::from_secs(600), SECOND, || {
        stack.all_ready::<Record>()
    })
    .await;
    if !ready {
        let left: Vec<_> = stack
            .list::<Record>()
            .await
            .into_iter()
            .filter(|r| !is_ready(r))
            .map(|r| (r.name_any(), r.status))
            .collect();
        panic!(
            "throttled creates did not all complete: {} left: {:?}",
            left.len(),
            left.first()
        );
    }
    let calls = stack.cloud.calls();
    let throttled = calls.iter().filter(|c| c.throttled).count();
    let created = calls
        .iter()
        .filter(|c| c.action == Some(Action::Create) && c.status == 201)
        .count();
    assert!(throttled > 0, "the quota never throttled");
    assert_eq!(created, 30);
    assert_eq!(stack.inventory(Collection::Records).len(), 30);
    stack.stop().await;
}

/// What the crashing cloud transport does with the next create.
const LOSE_RESPONSE: u8 = 1;
const LOSE_REQUEST: u8 = 2;

#[tokio::test(start_paused = true)]
async fn a_provider_killed_between_a_cloud_create_and_its_record_leaves_no_duplicate_after_restart()
{
    let mut stack = Stack::new(Settings::default(), open_cloud()).await;
    let mode = Arc::new(AtomicU8::new(0));
    let crashed = Arc::new(AtomicBool::new(false));
    let crashing = {
        let (cloud, mode, crashed) = (stack.cloud.clone(), Arc::clone(&mode), Arc::clone(&crashed));
        tower::service_fn(move |request: http::Request<Full<Bytes>>| {
            let (cloud, mode, crashed) = (cloud.clone(), Arc::clone(&mode), Arc::clone(&crashed));
            async move {
                let is_create = request.method() == http::Method::POST;
                let lose = if is_create {
                    mode.swap(0, Ordering::SeqCst)
                } else {
                    0
                };
                if lose == LOSE_REQUEST {
                    crashed.store(true, Ordering::SeqCst);
                    std::future::pending::<()>().await;
                }
                let response = cloud.oneshot(request).await;
                if lose == LOSE_RESPONSE {
                    crashed.store(true, Ordering::SeqCst);
                    std::future::pending::<()>().await;
                }
                response
            }
        })
    };

    for (name, lose) in [
        ("lost-response", LOSE_RESPONSE),
        ("lost-request", LOSE_REQUEST),
    ] {
        mode.store(lose, Ordering::SeqCst);
        crashed.store(false, Ordering::SeqCst);
        stack.start_with(CloudClient::new(crashing.clone(), "http://mock-cloud"));
        stack.create(&bucket(name)).await;
        assert!(
            eventually(
                Duration::from_secs(10),
                Duration::from_millis(10),
                || async { crashed.load(Ordering::SeqCst) }
            )
            .await
        );
        let summary = stack.stop().await;
        assert!(
            !summary.drained,
            "the stuck reconcile should have been abandoned"
        );
        let obj = stack.get::<Bucket>(name).await.unwrap();
        assert!(
            obj.annotations()
                .contains_key("crossplane.io/external-create-pending")
        );
        assert!(
            !obj.annotations()
                .contains_key("crossplane.io/external-create-succeeded")
        );

        stack.start();
        let ready = eventually(Duration::from_secs(60), SECOND, || async {
            stack
                .get::<Bucket>(name)
                .await
                .is_some_and(|b| is_ready(&b))
        })
        .await;
        assert!(
            ready,
            "{name}: the interrupted create was not completed after restart"
        );
        stack.stop().await;
        let creates = stack
            .calls(Action::Create, name)
            .iter()
            .filter(|c| c.status == 201)
            .count();
        assert_eq!(creates, 1, "{name}: one resource created in the cloud");
    }
    assert_eq!(
        stack.inventory(Collection::Buckets),
        ["lost-request", "lost-response"]
    );
}

use kube::ResourceExt;

#[tokio::test(start_paused = true)]
async fn a_bad_spec_gets_synced_false_with_a_clear_message_and_backs_off_until_fixed() {
    let mut stack = Stack::new(Settings::default(), open_cloud()).await;
    stack.start();
    stack.create(&record("mail", "MX")).await;
    tokio::time::sleep(Duration::from_secs(120)).await;
    let synced = stack.condition::<Record>("mail", "Synced").await;
    assert_eq!(synced.status, "False");
    assert_eq!(
        synced.message.as_deref(),
        Some(
            r#"create failed: invalid spec.forProvider.type: "MX" is not one of A, AAAA, CNAME, TXT"#
        )
    );
    // Backoff 1, 2, 4 … 60 s: attempts at about 0, 1, 3, 7, 15, 31, 63 s and 123 s.
    let attempts = stack.metrics.reconciles().total("Record");
    assert!(
        (5..=9).contains(&attempts),
        "{attempts} reconciles in 120 s"
    );
    assert!(
        stack.calls(Action::Create, "mail").is_empty(),
        "an invalid spec never reaches the cloud"
    );
    assert!(
        stack
            .event_reasons("mail")
            .await
            .contains(&"CannotCreateExternalResource".to_owned())
    );

    let fix = json!({"spec": {"forProvider": {"type": "A"}}});
    stack
        .api::<Record>()
        .patch("mail", &PatchParams::default(), &Patch::Merge(&fix))
        .await
        .unwrap();
    assert!(
        eventually(
            Duration::from_secs(5),
            Duration::from_millis(100),
            || async {
                stack
                    .get::<Record>("mail")
                    .await
                    .is_some_and(|r| is_ready(&r))
            }
        )
        .await,
        "fixing the spec did not make the record Ready at once"
    );
    stack.stop().await;
}
