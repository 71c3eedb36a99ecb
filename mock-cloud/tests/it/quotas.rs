//! Rate and count quotas, in-process under paused time.

use std::time::Duration;

use mock_cloud::{Action, Class, Collection, Config, Flavor, Quotas, Rate};
use tokio::time::advance;

use crate::support::{call, cloud, create_named, get_json, header, request, send, two_accounts};

const GET_B: &str = "/v1/accounts/acme/buckets/b";

fn reads(rate: Rate) -> Quotas {
    Quotas::unlimited().with_class(Class::Read, Some(rate))
}

/// The µs arrival times of the requests that were not throttled.
fn admitted_at(cloud: &mock_cloud::MockCloud) -> Vec<u64> {
    cloud
        .calls()
        .iter()
        .filter(|c| !c.throttled)
        .map(|c| c.at_us)
        .collect()
}

#[tokio::test(start_paused = true)]
async fn at_most_burst_plus_rate_times_window_succeed_in_any_window_and_at_least_95_percent_of_it_under_sustained_demand()
 {
    let cloud = cloud(two_accounts(reads(Rate::new(100, 20.0))));
    // Sustained demand: a GET every 2 ms for 30 s, far above 20/s.
    for _ in 0..15_000 {
        let response = send(&cloud, request("GET", GET_B, Some("t-acme"), "")).await;
        assert!(matches!(response.status().as_u16(), 404 | 429));
        advance(Duration::from_millis(2)).await;
    }
    let admitted = admitted_at(&cloud);
    for window_s in [1u64, 2, 5, 10, 25] {
        let bound = 100 + 20 * window_s;
        let window_us = window_s * 1_000_000;
        // Every window that starts at an admitted request (the worst case for a sliding
        // window), closed at both ends.
        let most = (0..admitted.len())
            .map(|i| admitted[i..].partition_point(|&t| t <= admitted[i] + window_us))
            .max()
            .unwrap();
        assert!(most as u64 <= bound, "window {window_s}s: {most} > {bound}");
        // From a full bucket, sustained demand gets at least 95% of the bound.
        let from_start = admitted.partition_point(|&t| t < window_us);
        assert!(
            from_start as f64 >= 0.95 * bound as f64,
            "window {window_s}s: only {from_start} of {bound}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_client_that_honours_retry_after_is_never_throttled_twice_in_a_row() {
    let quotas = Quotas::unlimited()
        .with_class(Class::Mutate, Some(Rate::new(3, 0.3)))
        .with_action(Action::Update, Some(Rate::new(2, 0.7)))
        .with_account(Some(Rate::new(10, 2.0)));
    let cloud = cloud(two_accounts(quotas));
    let mut throttles = 0;
    for i in 0..300u64 {
        let (path, method, body) = match i % 3 {
            0 => (
                "/v1/accounts/acme/buckets",
                "POST",
                format!(r#"{{"name":"b{i}"}}"#),
            ),
            1 => (
                "/v1/accounts/acme/buckets/b0",
                "PUT",
                r#"{"spec":{}}"#.to_owned(),
            ),
            _ => ("/v1/accounts/acme/records/r", "GET", String::new()),
        };
        let response = send(&cloud, request(method, path, Some("t-acme"), &body)).await;
        if response.status() == 429 {
            throttles += 1;
            let wait: u64 = header(&response, "retry-after").unwrap().parse().unwrap();
            assert!(wait >= 1);
            advance(Duration::from_secs(wait)).await;
            let retry = send(&cloud, request(method, path, Some("t-acme"), &body)).await;
            assert_ne!(
                retry.status(),
                429,
                "request {i} throttled again after Retry-After {wait}"
            );
        }
        // Irregular think time, 0 to 96 ms.
        advance(Duration::from_millis(i * 37 % 97)).await;
    }
    assert!(
        throttles > 20,
        "the test must exercise throttling, saw {throttles}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_successful_request_reports_its_bucket_and_what_is_left() {
    let cloud = cloud(two_accounts(reads(Rate::new(100, 20.0))));
    let response = send(&cloud, request("GET", GET_B, Some("t-acme"), "")).await;
    assert_eq!(header(&response, "ratelimit-limit").as_deref(), Some("100"));
    assert_eq!(
        header(&response, "ratelimit-remaining").as_deref(),
        Some("99")
    );
}

#[tokio::test(start_paused = true)]
async fn accounts_have_separate_buckets() {
    let cloud = cloud(two_accounts(reads(Rate::new(2, 1.0))));
    for _ in 0..2 {
        assert_eq!(get_json(&cloud, GET_B, "t-acme").await.0, 404);
    }
    assert_eq!(get_json(&cloud, GET_B, "t-acme").await.0, 429);
    let (status, _) = get_json(&cloud, "/v1/accounts/other/buckets/b", "t-other").await;
    assert_eq!(status, 404);
}

#[tokio::test(start_paused = true)]
async fn shadow_mode_lets_everything_through_and_records_would_be_throttles() {
    let cloud = cloud(two_accounts(reads(Rate::new(10, 1.0))).with_shadow(true));
    for _ in 0..50 {
        assert_eq!(get_json(&cloud, GET_B, "t-acme").await.0, 404);
    }
    let calls = cloud.calls();
    assert_eq!(calls.iter().filter(|c| c.shadow_throttled).count(), 40);
    assert!(calls.iter().all(|c| !c.throttled));
    let summary = cloud.summary();
    assert_eq!(summary.shadow_throttled, 40);
    assert_eq!(summary.violations.len(), 1);
    assert_eq!(summary.violations[0].layer, "class:read");
    assert_eq!(summary.violations[0].shadow_throttled, 40);
}

#[tokio::test(start_paused = true)]
async fn the_aws_flavors_throttle_with_their_own_status_and_code() {
    for (flavor, status, code) in [
        (Flavor::AwsJson, 400, "ThrottlingException"),
        (Flavor::AwsEc2, 503, "RequestLimitExceeded"),
    ] {
        let cloud = cloud(two_accounts(reads(Rate::new(1, 1.0))).with_flavor(flavor));
        get_json(&cloud, GET_B, "t-acme").await;
        let response = send(&cloud, request("GET", GET_B, Some("t-acme"), "")).await;
        assert_eq!(response.status(), status);
        assert_eq!(
            header(&response, "x-amz-retry-after").as_deref(),
            Some("1000")
        );
        let body = crate::support::json_body(response).await.to_string();
        assert!(body.contains(code), "{body}");
        assert!(cloud.calls()[1].throttled);
    }
}

#[tokio::test(start_paused = true)]
async fn a_count_quota_is_a_distinct_non_retryable_error_and_frees_up_on_delete() {
    let quotas = Quotas::unlimited().with_count(Collection::Buckets, Some(2));
    let cloud = cloud(two_accounts(quotas));
    let create = |name: &'static str| {
        let cloud = cloud.clone();
        async move {
            let body = format!(r#"{{"name":"{name}"}}"#);
            send(
                &cloud,
                request("POST", "/v1/accounts/acme/buckets", Some("t-acme"), &body),
            )
            .await
        }
    };
    assert_eq!(create("a").await.status(), 201);
    assert_eq!(create("b").await.status(), 201);
    let refused = create("c").await;
    assert_eq!(refused.status(), 403);
    assert_eq!(header(&refused, "retry-after"), None);
    let body = crate::support::json_body(refused).await;
    assert_eq!(body["error"]["code"], "QuotaExceeded");
    assert!(cloud.calls()[2].quota_exceeded);
    // Another account has its own count.
    let (status, _) = create_named(&cloud, "other", "buckets", "c").await;
    assert_eq!(status, 201);
    assert_eq!(
        call(
            &cloud,
            "DELETE",
            "/v1/accounts/acme/buckets/a",
            "t-acme",
            ""
        )
        .await
        .0,
        200
    );
    assert_eq!(create("c").await.status(), 201);
    assert_eq!(cloud.summary().quota_exceeded, 1);
}

#[tokio::test(start_paused = true)]
async fn databases_still_deleting_count_against_the_count_quota() {
    let quotas = Quotas::unlimited().with_count(Collection::Databases, Some(1));
    let config =
        two_accounts(quotas).with_provisioning(Duration::from_secs(2), Duration::from_secs(4));
    let cloud = cloud(config);
    let path = "/v1/accounts/acme/databases";
    assert_eq!(
        call(&cloud, "POST", path, "t-acme", r#"{"name":"one"}"#)
            .await
            .0,
        201
    );
    assert_eq!(
        call(
            &cloud,
            "DELETE",
            "/v1/accounts/acme/databases/one",
            "t-acme",
            ""
        )
        .await
        .0,
        202
    );
    let create_two = || call(&cloud, "POST", path, "t-acme", r#"{"name":"two"}"#);
    advance(Duration::from_secs(3)).await;
    assert_eq!(create_two().await.0, 403);
    advance(Duration::from_secs(1)).await;
    assert_eq!(create_two().await.0, 201);
}

#[test]
fn the_default_quotas_follow_real_cloud_defaults() {
    let quotas = Config::default().accounts[0].quotas.clone();
    assert_eq!(quotas.classes[&Class::Read], Rate::new(100, 20.0));
    assert_eq!(quotas.classes[&Class::Mutate], Rate::new(50, 5.0));
    assert_eq!(quotas.counts[&Collection::Databases], 40);
}
