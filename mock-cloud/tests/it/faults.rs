//! Injected latency, error rates and outages, set at start and at run time.

use std::time::Duration;

use mock_cloud::{Class, ErrorRate, Faults, Latency, Outage, Quotas};
use tokio::time::{Instant, advance};

use crate::support::{call, cloud, create_named, get_json, two_accounts};

const B: &str = "/v1/accounts/acme/buckets/b";

#[tokio::test(start_paused = true)]
async fn fixed_latency_holds_requests_of_its_class_only() {
    let faults =
        Faults::none().with_latency(Class::Read, Latency::Fixed(Duration::from_millis(250)));
    let cloud = cloud(two_accounts(Quotas::unlimited()).with_faults(faults));
    let start = Instant::now();
    assert_eq!(get_json(&cloud, B, "t-acme").await.0, 404);
    assert_eq!(start.elapsed(), Duration::from_millis(250));
    assert_eq!(call(&cloud, "DELETE", B, "t-acme", "").await.0, 404);
    let calls = cloud.calls();
    assert_eq!(calls[0].latency_us, 250_000);
    assert_eq!(calls[1].latency_us, 0);
}

#[tokio::test(start_paused = true)]
async fn an_error_rate_of_one_fails_every_request_of_its_class_with_its_status() {
    let errors = ErrorRate {
        probability: 1.0,
        status: 500,
    };
    let cloud = cloud(
        two_accounts(Quotas::unlimited())
            .with_faults(Faults::none().with_errors(Class::Mutate, errors)),
    );
    let (status, body) = create_named(&cloud, "acme", "buckets", "b").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (500, Some("InjectedFault"))
    );
    assert!(
        cloud.inventory().is_empty(),
        "a failed create creates nothing"
    );
    assert_eq!(get_json(&cloud, B, "t-acme").await.0, 404);
    assert!(cloud.calls()[0].fault && !cloud.calls()[1].fault);
}

#[tokio::test(start_paused = true)]
async fn an_outage_set_at_run_time_fails_every_request_inside_its_window() {
    let cloud = cloud(two_accounts(Quotas::unlimited()));
    advance(Duration::from_secs(10)).await;
    let now = cloud.elapsed();
    let outage = Outage {
        start: now + Duration::from_secs(1),
        end: now + Duration::from_secs(2),
        status: 503,
    };
    cloud
        .set_faults(Faults::none().with_outage(outage))
        .unwrap();
    assert_eq!(get_json(&cloud, B, "t-acme").await.0, 404);
    advance(Duration::from_secs(1)).await;
    assert_eq!(get_json(&cloud, B, "t-acme").await.0, 503);
    assert_eq!(create_named(&cloud, "acme", "buckets", "b").await.0, 503);
    advance(Duration::from_secs(1)).await;
    assert_eq!(get_json(&cloud, B, "t-acme").await.0, 404);
    cloud.set_faults(Faults::none()).unwrap();
    assert_eq!(cloud.faults(), Faults::none());
}

#[tokio::test(start_paused = true)]
async fn the_admin_api_changes_faults_and_rejects_bad_ones_naming_the_field() {
    let cloud = cloud(two_accounts(Quotas::unlimited()));
    let faults = r#"{"seed": 3, "latency": {"read": {"uniform_ms": {"min": 10, "max": 20}}},
                     "errors": {"delete": {"rate": 1.0, "status": 503}},
                     "outages": [{"start_s": 100, "end_s": 200}]}"#;
    let (status, _) = call(&cloud, "PUT", "/admin/v1/faults", "", faults).await;
    assert_eq!(status, 200);
    let set = cloud.faults();
    assert_eq!(set.seed, 3);
    assert_eq!(set.outages[0].status, 503);
    assert_eq!(call(&cloud, "DELETE", B, "t-acme", "").await.0, 503);
    let latency = cloud.calls()[0].latency_us;
    assert_eq!(latency, 0, "deletes have no latency configured");
    get_json(&cloud, B, "t-acme").await;
    assert!((10_000..=20_000).contains(&cloud.calls()[1].latency_us));

    let (status, body) = call(
        &cloud,
        "PUT",
        "/admin/v1/faults",
        "",
        r#"{"errors": {"read": {"rate": 3}}}"#,
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("errors.read.rate"),
        "{body}"
    );
    let (status, body) = call(&cloud, "PUT", "/admin/v1/faults", "", r#"{"latncy": {}}"#).await;
    assert_eq!(
        (status, body["error"]["field"].as_str()),
        (400, Some("body"))
    );
    assert_eq!(
        cloud.faults().seed,
        3,
        "a rejected change leaves the faults alone"
    );
}
