//! The SDK's retries under S3 throttling, as mock-cloud's journal and the provider's own
//! request counts show them.

use std::collections::BTreeMap;

use mock_cloud::Config;
use provider::aws::bucket::{self, BucketParameters};
use provider::aws::connect::{Connector, CredentialCache, RetryMode};

use super::{connect, serve, spec};

/// S3 reads limited to a burst of 4 and 1 per second for the whole class: an Observe's 15
/// reads are throttled with `SlowDown`.
fn throttled_reads() -> Config {
    Config::from_yaml(
        "quotas:\n  services:\n    s3:\n      classes:\n        read: {burst: 4, per_second: 1, per: class}\n",
        "throttled.yaml",
    )
    .expect("valid")
}

/// The sum of `provider_cloud_requests_total` over its label sets that contain `labels`.
fn counted(text: &str, labels: &str) -> usize {
    text.lines()
        .filter(|l| l.starts_with("provider_cloud_requests_total{") && l.contains(labels))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<usize>().ok())
        .sum()
}

#[tokio::test]
async fn a_throttled_observe_shows_the_sdks_retries_in_the_journal_within_three_attempts() {
    let served = serve(throttled_reads()).await;
    let metrics = provider::ProviderMetrics::new();
    let connector = Connector::new(RetryMode::Standard, CredentialCache::All)
        .with_requests(metrics.cloud_requests().clone());
    let spec = spec(
        &served.url,
        "skip_credentials_validation: true\nskip_requesting_account_id: true\n",
    );
    let clients = connect(&connector, &spec, "us-east-1").await.unwrap();
    bucket::create(
        &clients.s3,
        "throttled",
        &BucketParameters {
            region: "us-east-1".to_owned(),
            ..BucketParameters::default()
        },
    )
    .await
    .expect("writes are not limited");
    let start = served.cloud.calls().len();
    let outcome = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        bucket::observe(&clients.s3, "throttled"),
    )
    .await
    .expect("the SDK's retries end within 3 attempts an operation");
    let calls = served.cloud.calls()[start..].to_vec();
    let mut attempts: BTreeMap<&str, usize> = BTreeMap::new();
    for c in &calls {
        *attempts.entry(c.operation.as_str()).or_default() += 1;
    }
    assert!(
        calls.iter().any(|c| c.throttled && c.status == 503),
        "SlowDown answers: {calls:#?}"
    );
    assert!(
        attempts.values().any(|n| *n > 1),
        "the SDK retried: {attempts:?}"
    );
    assert!(
        attempts.values().all(|n| *n <= 3),
        "standard mode makes at most 3 attempts: {attempts:?}"
    );
    // Every retry follows a throttle of the same operation.
    for (op, n) in &attempts {
        let throttled = calls
            .iter()
            .filter(|c| c.operation == *op && c.throttled)
            .count();
        assert!(
            *n <= throttled + 1,
            "{op}: {n} attempts, {throttled} throttled"
        );
    }
    if let Err(e) = outcome {
        assert_eq!(e.code.as_deref(), Some("SlowDown"), "{e}");
    }
    // The provider's own count has every attempt the journal has, retries included, each
    // with its status and operation.
    let journal = served.cloud.calls();
    let text = metrics.encode().unwrap();
    assert_eq!(counted(&text, ""), journal.len(), "{text}");
    assert_eq!(
        counted(&text, "code=\"503\""),
        journal.iter().filter(|c| c.status == 503).count(),
        "{text}"
    );
    assert!(
        text.contains("provider_cloud_requests_total{action=\"HeadBucket\",code=\""),
        "{text}"
    );

    // With retries off, each operation is tried once and the first throttle fails Observe.
    let off = Connector::new(RetryMode::Off, CredentialCache::None);
    let clients = connect(&off, &spec, "us-east-1").await.unwrap();
    let start = served.cloud.calls().len();
    let mut err = None;
    for _ in 0..3 {
        if let Err(e) = bucket::observe(&clients.s3, "throttled").await {
            err = Some(e);
            break;
        }
    }
    let err = err.expect("a burst of 4 cannot serve 15 reads at once");
    let calls = served.cloud.calls()[start..].to_vec();
    assert_eq!(
        calls.iter().filter(|c| c.throttled).count(),
        1,
        "no retry after the throttle"
    );
    let last = calls.last().expect("calls");
    assert!(last.throttled && last.status == 503, "{last:?}");
    assert_eq!(err.operation, last.operation);
    // A HEAD answer has no body, so only the other operations carry S3's code.
    if err.operation != "HeadBucket" {
        assert_eq!(err.code.as_deref(), Some("SlowDown"), "{err}");
    }
}
