//! The journal, the summary, the inventory and metrics, in-process and through the admin API.

use std::num::NonZeroUsize;
use std::time::Duration;

use http_body_util::BodyExt;
use mock_cloud::{Action, Collection, Quotas};
use tokio::time::advance;

use crate::support::{call, cloud, create_named, get_json, header, request, send, two_accounts};

#[tokio::test(start_paused = true)]
async fn n_requests_make_n_entries_in_order_with_their_details() {
    let cloud = cloud(two_accounts(Quotas::unlimited()));
    let n = 500u64;
    let mut expected = Vec::new();
    for i in 0..n {
        let (method, path, body, action, status) = match i % 4 {
            0 => (
                "POST",
                "/v1/accounts/acme/buckets".to_owned(),
                format!(r#"{{"name":"b{i}"}}"#),
                Action::Create,
                201,
            ),
            1 => (
                "GET",
                format!("/v1/accounts/acme/buckets/b{}", i - 1),
                String::new(),
                Action::Get,
                200,
            ),
            2 => (
                "DELETE",
                format!("/v1/accounts/acme/buckets/b{}", i - 2),
                String::new(),
                Action::Delete,
                200,
            ),
            _ => (
                "GET",
                "/v1/accounts/acme/buckets/gone".to_owned(),
                String::new(),
                Action::Get,
                404,
            ),
        };
        assert_eq!(call(&cloud, method, &path, "t-acme", &body).await.0, status);
        expected.push((action, status));
        advance(Duration::from_micros(1_500)).await;
    }
    let calls = cloud.calls();
    assert_eq!(calls.len() as u64, n);
    for (i, (call, (action, status))) in calls.iter().zip(&expected).enumerate() {
        assert_eq!(call.seq, i as u64);
        assert_eq!(call.at_us, i as u64 * 1_500);
        assert_eq!((call.action, call.status), (Some(*action), *status));
        assert_eq!(call.account, "acme");
        assert_eq!(call.collection, Some(Collection::Buckets));
    }
    assert_eq!(calls[0].name, "b0");
    let stats = cloud.journal_stats();
    assert_eq!((stats.next_seq, stats.dropped), (n, 0));
    assert_eq!(cloud.calls_since(498).len(), 2);
}

#[tokio::test(start_paused = true)]
async fn the_journal_holds_at_most_64_bytes_an_entry_names_included() {
    let cloud = cloud(two_accounts(Quotas::unlimited()));
    assert!(cloud.journal_stats().bytes_per_entry <= 32);
    // 50,000 calls over 1,000 distinct resource names of 16 characters.
    for i in 0..50_000 {
        let path = format!("/v1/accounts/acme/buckets/bucket-name-{:04}", i % 1_000);
        send(&cloud, request("GET", &path, Some("t-acme"), "")).await;
    }
    let stats = cloud.journal_stats();
    let per_entry = stats.memory_bytes as f64 / stats.len as f64;
    println!(
        "journal: {} entries, {} bytes each, {} names, {} bytes in all: {per_entry:.1} bytes an entry",
        stats.len, stats.bytes_per_entry, stats.interned_names, stats.memory_bytes
    );
    assert_eq!(stats.len, 50_000);
    assert!(per_entry <= 64.0, "{per_entry:.1} bytes an entry");
}

#[tokio::test(start_paused = true)]
async fn a_full_journal_drops_the_oldest_entries_and_says_so() {
    let cap = NonZeroUsize::new(10).unwrap();
    let cloud = cloud(two_accounts(Quotas::unlimited()).with_journal_cap(cap));
    for _ in 0..25 {
        get_json(&cloud, "/v1/accounts/acme/buckets/x", "t-acme").await;
    }
    let calls = cloud.calls();
    assert_eq!(calls.len(), 10);
    assert_eq!(calls[0].seq, 15);
    let summary = cloud.summary();
    assert_eq!(summary.journal.dropped, 15);
    assert_eq!(summary.requests, 25, "the aggregates stay complete");
    assert!(
        cloud
            .metrics_text()
            .contains("mockcloud_journal_dropped_total 15")
    );
}

#[tokio::test(start_paused = true)]
async fn the_admin_api_streams_calls_since_a_seq_as_ndjson() {
    let cloud = cloud(two_accounts(Quotas::unlimited()));
    for i in 0..5 {
        call(
            &cloud,
            "GET",
            &format!("/v1/accounts/acme/buckets/b{i}"),
            "t-acme",
            "",
        )
        .await;
    }
    let response = send(&cloud, request("GET", "/admin/v1/calls?since=3", None, "")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(header(&response, "x-next-seq").as_deref(), Some("5"));
    assert_eq!(header(&response, "x-dropped").as_deref(), Some("0"));
    let epoch: jiff::Timestamp = header(&response, "x-epoch").unwrap().parse().unwrap();
    assert_eq!(epoch, cloud.epoch());
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let lines: Vec<serde_json::Value> = std::str::from_utf8(&body)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["seq"], 3);
    assert_eq!(lines[0]["name"], "b3");
    assert_eq!(lines[0]["action"], "get");
    assert_eq!(lines[1]["status"], 404);
    let (status, body) = get_json(&cloud, "/admin/v1/calls?since=x", "").await;
    assert_eq!(
        (status, body["error"]["field"].as_str()),
        (400, Some("since"))
    );
    assert_eq!(cloud.calls().len(), 5, "admin requests are not journalled");
}

#[tokio::test(start_paused = true)]
async fn the_summary_counts_per_account_action_status_and_second() {
    let cloud = cloud(two_accounts(Quotas::unlimited()));
    create_named(&cloud, "acme", "buckets", "a").await;
    get_json(&cloud, "/v1/accounts/acme/buckets/a", "t-acme").await;
    advance(Duration::from_secs(2)).await;
    get_json(&cloud, "/v1/accounts/acme/buckets/a", "t-acme").await;
    get_json(&cloud, "/v1/accounts/other/buckets/a", "t-other").await;
    let (status, summary) = get_json(&cloud, "/admin/v1/summary", "").await;
    assert_eq!(status, 200);
    assert_eq!(summary["requests"], 4);
    assert_eq!(summary["epoch"], cloud.epoch().to_string());
    let counts = summary["counts"].as_array().unwrap();
    let count = |account: &str, action: &str, status: u16| {
        counts
            .iter()
            .find(|c| c["account"] == account && c["action"] == action && c["status"] == status)
            .map(|c| c["count"].as_u64().unwrap())
    };
    assert_eq!(count("acme", "get", 200), Some(2));
    assert_eq!(count("acme", "create", 201), Some(1));
    assert_eq!(count("other", "get", 404), Some(1));
    let timeline: Vec<(u64, u64)> = summary["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["second"].as_u64().unwrap(),
                s["requests"].as_u64().unwrap(),
            )
        })
        .collect();
    // Second 1 had no request: it is absent.
    assert_eq!(timeline, [(0, 2), (2, 2)]);
}

#[tokio::test(start_paused = true)]
async fn inventory_metrics_and_reset_over_the_admin_api() {
    let cloud = cloud(two_accounts(Quotas::unlimited()));
    create_named(&cloud, "acme", "databases", "db").await;
    let (status, inventory) = get_json(&cloud, "/admin/v1/inventory", "").await;
    assert_eq!(status, 200);
    assert_eq!(inventory["resources"][0]["name"], "db");
    assert_eq!(inventory["resources"][0]["state"], "creating");
    let metrics = send(&cloud, request("GET", "/metrics", None, "")).await;
    let text = String::from_utf8(
        metrics
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec(),
    )
    .unwrap();
    assert!(
        text.contains(r#"mockcloud_requests_total{account="acme",action="create",service="generic",operation="create",code="201"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"mockcloud_live_resources{account="acme",collection="databases"} 1"#),
        "{text}"
    );

    assert_eq!(call(&cloud, "POST", "/admin/v1/reset", "", "").await.0, 200);
    assert!(cloud.inventory().is_empty());
    assert!(cloud.calls().is_empty());
    assert_eq!(cloud.summary().requests, 0);
    get_json(&cloud, "/v1/accounts/acme/databases/db", "t-acme").await;
    assert_eq!(cloud.calls()[0].seq, 1, "seq keeps counting across a reset");
    assert_eq!(get_json(&cloud, "/admin/v1/reset", "").await.0, 405);
    assert_eq!(get_json(&cloud, "/admin/v1/nothing", "").await.0, 404);
}

#[tokio::test(start_paused = true)]
async fn the_epoch_is_read_when_the_cloud_is_built_and_survives_a_reset() {
    let before = jiff::Timestamp::now();
    let cloud = cloud(two_accounts(Quotas::unlimited()));
    let after = jiff::Timestamp::now();
    let epoch = cloud.epoch();
    assert!(
        before <= epoch && epoch <= after,
        "{before} <= {epoch} <= {after}"
    );
    advance(Duration::from_secs(3)).await;
    cloud.reset();
    assert_eq!(cloud.epoch(), epoch, "a reset keeps the clock");
    assert_eq!(cloud.summary().epoch, epoch);
}

/// The generic API and an AWS service go through one pipeline: the same steps leave the
/// same record, line for line on the admin API, whichever service answered.
#[tokio::test(start_paused = true)]
async fn a_generic_and_an_aws_request_leave_the_same_record() {
    use mock_cloud::{Class, ClassQuota, Config, Per, Rate, Service, ServiceQuotas};

    use crate::aws_support::{Signing, cloud_now, keys};

    let one_read = || Some(Rate::new(1, 1.0));
    let s3 = ServiceQuotas::new()
        .with_class("read", Some(ClassQuota::new(Rate::new(1, 1.0), Per::Class)));
    let mut config = Config::default();
    config.accounts[0].quotas = Quotas::unlimited()
        .with_class(Class::Read, one_read())
        .with_service(Service::S3, Some(s3));
    let cloud = cloud(config);
    let aws = |method: &'static str| {
        Signing::new(method, "/bkt", "s3").sign(&keys("default", "default"), cloud_now(&cloud))
    };
    let generic =
        |method: &str, path: &str, body: &str| request(method, path, Some("default"), body);

    assert_eq!(cloud.handle(aws("PUT")).await.status(), 200);
    let create = generic("POST", "/v1/accounts/default/buckets", r#"{"name":"bkt"}"#);
    assert_eq!(send(&cloud, create).await.status(), 201);
    // Admitted, then throttled by the read class of each.
    for expected in [(200, 200), (429, 503)] {
        let get = generic("GET", "/v1/accounts/default/buckets/bkt", "");
        let generic_status = send(&cloud, get).await.status().as_u16();
        let aws_status = cloud.handle(aws("HEAD")).await.status().as_u16();
        assert_eq!((generic_status, aws_status), expected);
    }

    let response = send(&cloud, request("GET", "/admin/v1/calls", None, "")).await;
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let lines: Vec<serde_json::Map<String, serde_json::Value>> = std::str::from_utf8(&body)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6);
    let keys_of = |line: &serde_json::Map<String, serde_json::Value>| {
        line.keys().cloned().collect::<Vec<_>>()
    };
    let same = [
        "account",
        "name",
        "throttled",
        "shadow_throttled",
        "quota_exceeded",
        "fault",
    ];
    for pair in [[2, 3], [4, 5]] {
        let [generic, aws] = pair.map(|i| &lines[i]);
        assert_eq!(keys_of(generic), keys_of(aws));
        for field in same {
            assert_eq!(
                generic[field], aws[field],
                "{field}: {generic:?} against {aws:?}"
            );
        }
        assert_eq!(
            (&generic["service"], &generic["operation"]),
            (&"generic".into(), &"get".into())
        );
        assert_eq!(
            (&aws["service"], &aws["operation"]),
            (&"s3".into(), &"HeadBucket".into())
        );
        assert_eq!(generic["name"], "bkt");
        assert_eq!(generic["account"], "default");
    }
    assert_eq!(lines[4]["throttled"], true);
    let summary = cloud.summary();
    assert_eq!(summary.throttled, 2, "{summary:?}");
}
