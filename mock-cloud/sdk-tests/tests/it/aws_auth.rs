//! SigV4 as the SDKs see it: a wrong secret, an unknown key, a skewed clock and a throttle,
//! each in the service's own envelope, and the SDK's standard retry mode retrying throttles.

use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_sdk_s3::error::ProvideErrorMetadata;
use aws_smithy_types::retry::RetryConfig;
use mock_cloud::{Config, Per, Rate, Service};

use crate::aws_support::{default_s3, keys, one_quota, s3, serve, standard_retry, sts, thrice};

/// The error codes S3's ListBuckets and STS's GetCallerIdentity refuse `credentials` with.
async fn refusals(url: &str, credentials: Credentials) -> (String, String) {
    let client = s3(
        url,
        credentials.clone(),
        "us-east-1",
        RetryConfig::disabled(),
    );
    let s3_error = client
        .list_buckets()
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    let sts_error = sts(url, Some(credentials))
        .get_caller_identity()
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    let code = |c: Option<&str>| c.expect("an error code").to_owned();
    (code(s3_error.code()), code(sts_error.code()))
}

#[tokio::test]
async fn a_wrong_secret_surfaces_as_signature_does_not_match_in_s3_and_sts() {
    let served = serve(Config::default()).await;
    assert_eq!(
        refusals(&served.url, keys("default", "not-the-secret")).await,
        (
            "SignatureDoesNotMatch".to_owned(),
            "SignatureDoesNotMatch".to_owned()
        )
    );
    let calls = served.cloud.calls();
    assert_eq!(
        calls.iter().map(|c| c.status).collect::<Vec<_>>(),
        [403, 403]
    );
    assert_eq!(calls[1].operation, "GetCallerIdentity");
    assert!(
        calls.iter().all(|c| c.account.is_empty()),
        "unauthenticated calls have no account"
    );
}

#[tokio::test]
async fn an_unknown_key_is_invalid_access_key_id_in_s3_and_invalid_client_token_id_in_sts() {
    let served = serve(Config::default()).await;
    assert_eq!(
        refusals(&served.url, keys("AKIAUNKNOWN", "x")).await,
        (
            "InvalidAccessKeyId".to_owned(),
            "InvalidClientTokenId".to_owned()
        )
    );
}

#[tokio::test]
async fn a_clock_twenty_minutes_off_is_request_time_too_skewed() {
    let served = serve(Config::default()).await;
    let skewed = SystemTime::now() + Duration::from_secs(20 * 60);
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
        .endpoint_url(&served.url)
        .region(aws_sdk_s3::config::Region::new("us-east-1"))
        .credentials_provider(keys("default", "default"))
        .force_path_style(true)
        .retry_config(RetryConfig::disabled())
        .time_source(aws_smithy_async::time::StaticTimeSource::new(skewed))
        .http_client(aws_smithy_http_client::Builder::new().build_http())
        .build();
    let client = aws_sdk_s3::Client::from_conf(config);
    let e = client
        .list_buckets()
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("RequestTimeTooSkewed"));
    let calls = served.cloud.calls();
    assert_eq!(calls[0].status, 403);
}

/// S3 limits of one request a second per bucket for reads.
fn one_read_a_second() -> Config {
    one_quota(Service::S3, "read", Rate::new(1, 2.0), Per::Resource)
}

#[tokio::test]
async fn a_slow_down_is_a_503_throttle_the_sdks_standard_mode_retries_until_it_passes() {
    let served = serve(one_read_a_second()).await;
    let setup = default_s3(&served.url);
    send!(setup.create_bucket("hot")).unwrap();
    // Without retries the second read in the same second is SlowDown.
    send!(setup.head_bucket("hot")).unwrap();
    let e = send!(setup.get_bucket_versioning("hot")).unwrap_err();
    let raw = e.raw_response().map(|r| r.status().as_u16());
    assert_eq!(raw, Some(503));
    assert_eq!(e.into_service_error().code(), Some("SlowDown"));

    // Standard retry mode (quick backoff for the test) retries it as a throttle.
    let retrying = s3(
        &served.url,
        keys("default", "default"),
        "us-east-1",
        standard_retry(10, Duration::from_millis(100)),
    );
    let (calls, throttled) = thrice(&served.cloud, async || {
        send!(retrying.head_bucket("hot")).unwrap();
    })
    .await;
    assert!(
        throttled >= 1,
        "the journal shows the retried throttles: {calls:#?}"
    );
    assert_eq!(calls.iter().filter(|c| c.status == 200).count(), 3);
    assert!(
        calls
            .iter()
            .all(|c| c.operation == "HeadBucket" && (c.status == 200 || c.status == 503))
    );
    let summary = served.cloud.summary();
    let head = summary
        .operations
        .iter()
        .find(|o| o.operation == "HeadBucket")
        .unwrap();
    assert_eq!(head.throttled as usize, throttled);
    assert!(
        summary
            .violations
            .iter()
            .any(|v| v.layer == "s3:class:read")
    );
}

#[tokio::test]
async fn an_sts_throttle_is_retried_by_the_sdks_standard_mode_and_journalled_each_time() {
    let served = serve(one_quota(
        Service::Sts,
        "auth",
        Rate::new(1, 5.0),
        Per::Class,
    ))
    .await;
    let once = sts(&served.url, Some(keys("default", "default")));
    once.get_caller_identity().send().await.unwrap();
    let e = once.get_caller_identity().send().await.unwrap_err();
    assert_eq!(e.raw_response().map(|r| r.status().as_u16()), Some(400));
    assert_eq!(e.into_service_error().code(), Some("Throttling"));

    let retrying = crate::aws_support::sts_retrying(
        &served.url,
        Some(keys("default", "default")),
        standard_retry(10, Duration::from_millis(50)),
    );
    let (calls, throttled) = thrice(&served.cloud, async || {
        let who = retrying.get_caller_identity().send().await.unwrap();
        assert_eq!(who.account(), Some("000000000000"));
    })
    .await;
    assert!(throttled >= 1, "{calls:#?}");
    assert_eq!(calls.len(), 3 + throttled, "every attempt is journalled");
    assert!(
        calls
            .iter()
            .all(|c| c.service == "sts" && c.operation == "GetCallerIdentity")
    );
    assert!(
        calls
            .iter()
            .all(|c| c.status == 200 || (c.status == 400 && c.throttled))
    );
}
