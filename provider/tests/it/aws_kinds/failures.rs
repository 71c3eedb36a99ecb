//! What fails: bad ProviderConfigs and regions, a throttled client out of retry tokens,
//! and a failing Connect's backoff under a ProviderConfig's policy.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use limiter::crossplane::Settings;
use mock_cloud::{Call, MockCloud};
use provider::aws::connect::{CredentialCache, RetryMode};
use provider::aws::kinds::NamespacedBucket;
use provider::crd::Managed;

use super::{AwsStack, NO_STS, config_yaml};
use crate::stack::eventually;

fn synced_message<K: Managed>(obj: &K) -> Option<String> {
    obj.managed_status()
        .and_then(|s| s.condition("Synced"))
        .filter(|c| c.status == "False")
        .and_then(|c| c.message.clone())
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn bad_provider_configs_and_regions_fail_their_resources_with_a_message_and_an_event_only() {
    let mut stack = AwsStack::open(NO_STS).await;
    stack
        .cluster_config("no-credentials", "credentials: {}\n")
        .await;
    stack
        .cluster_config(
            "missing-key",
            &config_yaml(NO_STS).replace("key: credentials", "key: aws_credentials"),
        )
        .await;
    stack
        .cluster_config(
            "not-a-url",
            &config_yaml(NO_STS).replace("'http://mock-cloud'", "'mock-cloud:8080'"),
        )
        .await;
    let bucket = |name: &str, region: &str, config: &str| {
        format!(
            "apiVersion: s3.aws.m.loadtest.dev/v1beta1\nkind: Bucket\nmetadata: {{name: {name}, namespace: default}}\n\
             spec: {{forProvider: {{region: {region}}}, providerConfigRef: {{kind: ClusterProviderConfig, name: {config}}}}}\n"
        )
    };
    let cases = [
        (
            "no-credentials",
            "us-east-1",
            "connect failed: spec.credentials.source is not set: set it to Secret (with spec.credentials.secretRef) or WebIdentity (with spec.credentials.webIdentity)",
        ),
        (
            "missing-key",
            "us-east-1",
            "connect failed: credentials Secret default/aws has no key \"aws_credentials\" (or it is not UTF-8 text)",
        ),
        (
            "not-a-url",
            "us-east-1",
            "connect failed: spec.endpoint.url.static \"mock-cloud:8080\" is not a URL: expected http://host:port or https://host:port (no scheme)",
        ),
        (
            "default",
            "moon-base-1",
            "connect failed: region \"moon-base-1\" is not an AWS region: expected a name such as us-east-1 or eu-west-2 (or set skip_region_validation)",
        ),
        (
            "absent",
            "us-east-1",
            "connect failed: cannot get ClusterProviderConfig \"absent\": create it, or fix spec.providerConfigRef",
        ),
    ];
    for (i, (config, region, _)) in cases.iter().enumerate() {
        stack
            .create::<NamespacedBucket>(&bucket(&format!("bad-{i}"), region, config))
            .await;
    }
    stack
        .create::<NamespacedBucket>(&bucket("good", "eu-west-1", "default"))
        .await;
    stack.ready::<NamespacedBucket>("good").await;
    for (i, (_, _, want)) in cases.iter().enumerate() {
        let name = format!("bad-{i}");
        let ok = eventually(
            Duration::from_secs(30),
            Duration::from_millis(200),
            || async {
                stack
                    .get::<NamespacedBucket>(&name)
                    .await
                    .and_then(|b| synced_message(&b))
                    .is_some()
            },
        )
        .await;
        assert!(ok, "{name} got Synced=False");
        let obj = stack.get::<NamespacedBucket>(&name).await.expect("exists");
        assert_eq!(synced_message(&obj).as_deref(), Some(*want), "{name}");
        let events = stack.events(&name).await;
        assert!(
            events
                .iter()
                .any(|(reason, note)| reason == "CannotConnectToProvider" && note == want),
            "{name}: {events:?}"
        );
    }
    // Nothing reached the cloud for the bad ones.
    let names: Vec<String> = stack.cloud.calls().into_iter().map(|c| c.name).collect();
    assert!(names.iter().all(|n| !n.starts_with("bad-")), "{names:?}");
    assert!(stack.stop().await.drained);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_throttled_client_retries_no_more_than_its_500_token_retry_quota_allows() {
    use provider::aws::config::ProviderConfigSpec;
    use provider::aws::connect::Connector;
    // S3 reads: a burst of 1, then 1 per 1000 s: every read after the first is throttled.
    let cloud = MockCloud::new(
        mock_cloud::Config::from_yaml(
            "quotas:\n  services:\n    s3:\n      classes:\n        read: {burst: 1, per_second: 0.001, per: class}\n",
            "throttled.yaml",
        )
        .unwrap(),
    )
    .unwrap();
    let connector = Connector::new(RetryMode::Standard, CredentialCache::All)
        .with_http_client(provider::aws::transport::in_process(cloud.clone()))
        .with_clock(provider::reconciler::meta::Clock::new());
    let spec: ProviderConfigSpec = serde_saphyr::from_str(&config_yaml(NO_STS)).unwrap();
    let secrets = |_: &str, _: &str| {
        Some(Secret {
            string_data: Some(BTreeMap::from([(
                "credentials".to_owned(),
                "[default]\naws_access_key_id = default\naws_secret_access_key = default\n"
                    .to_owned(),
            )])),
            ..Default::default()
        })
    };
    let clients = connector
        .connect("default", &spec, "us-east-1", &secrets)
        .await
        .expect("connects");
    const OPERATIONS: usize = 70;
    let mut codes = BTreeMap::<String, usize>::new();
    for _ in 0..OPERATIONS {
        let out = clients
            .s3
            .get_bucket_tagging()
            .bucket("absent")
            .send()
            .await;
        let code = match out {
            Ok(_) => "ok".to_owned(),
            Err(e) => aws_sdk_s3::error::ProvideErrorMetadata::code(&e)
                .unwrap_or("none")
                .to_owned(),
        };
        *codes.entry(code).or_default() += 1;
    }
    let calls: Vec<Call> = cloud
        .calls()
        .into_iter()
        .filter(|c| c.service == "s3")
        .collect();
    // The first read fits the burst (NoSuchBucket: not retried). Each later one is
    // throttled on all 3 attempts while the quota lasts: 2 retries of 5 tokens each, so
    // 500 tokens pay for 50 operations' retries; after that, 1 attempt each.
    let retries = calls.len() - OPERATIONS;
    assert_eq!(retries, 500 / 5, "{codes:?}");
    assert_eq!(calls.len(), 1 + 50 * 3 + (OPERATIONS - 51), "{codes:?}");
    assert_eq!(
        calls.iter().filter(|c| c.throttled).count(),
        calls.len() - 1
    );
    assert_eq!(codes.get("SlowDown"), Some(&(OPERATIONS - 1)), "{codes:?}");
    assert_eq!(codes.get("NoSuchBucket"), Some(&1), "{codes:?}");
    // The last 19 operations were tried once each: no retry without tokens.
    let tail: Vec<bool> = calls[calls.len() - 19..]
        .iter()
        .map(|c| c.throttled)
        .collect();
    assert!(tail.iter().all(|t| *t));
}

/// Reconciles of a resource whose Connect fails, in `seconds` of paused time.
async fn failing_reconciles(policy: &str, seconds: u64) -> u64 {
    let mut stack = AwsStack::start(
        Settings::default(),
        mock_cloud::Config::default(),
        RetryMode::Standard,
        &format!("{NO_STS}{policy}"),
    )
    .await;
    stack
        .create::<NamespacedBucket>(
            "apiVersion: s3.aws.m.loadtest.dev/v1beta1\nkind: Bucket\nmetadata: {name: b, namespace: default}\n\
             spec: {forProvider: {region: nowhere}}\n",
        )
        .await;
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let total = stack
        .metrics
        .reconciles()
        .total("Bucket.s3.aws.m.loadtest.dev");
    assert!(stack.stop().await.drained);
    total
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_provider_configs_reconciliation_policy_backoff_wins_over_the_flags() {
    // The flags' default: 1s doubling (reconciles at 0, 1, 3, 7, 15, 31, 63 s, then every
    // 60 s: 7 in 100 s). The policy: 30s doubling to 60s (at 0, 30, 90 s: 3).
    let flags = failing_reconciles("", 100).await;
    let policy = failing_reconciles(
        "reconciliationPolicy: {exponentialFailureRateLimiter: {baseDelay: 30s, maxDelay: 60s}}\n",
        100,
    )
    .await;
    assert_eq!((flags, policy), (7, 3));
}
