//! Resources through the API: the database lifecycle, idempotent creates, pagination,
//! account isolation and bad inputs, in-process.

use std::time::Duration;

use mock_cloud::{MAX_BODY, Quotas, State};
use serde_json::Value;
use tokio::time::advance;

use crate::support::{
    call, cloud, create_named, get_json, header, json_body, request, send, two_accounts,
};

const DBS: &str = "/v1/accounts/acme/databases";
const DB: &str = "/v1/accounts/acme/databases/db";

#[tokio::test(start_paused = true)]
async fn a_database_goes_creating_available_deleting_gone_and_refuses_updates_until_available() {
    let config = two_accounts(Quotas::unlimited())
        .with_provisioning(Duration::from_secs(5), Duration::from_secs(3));
    let cloud = cloud(config);
    let (status, body) = call(
        &cloud,
        "POST",
        DBS,
        "t-acme",
        r#"{"name":"db","spec":{"size":1}}"#,
    )
    .await;
    assert_eq!((status, body["state"].as_str()), (201, Some("creating")));
    let (status, body) = call(&cloud, "PUT", DB, "t-acme", r#"{"spec":{"size":2}}"#).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("NotAvailable"))
    );

    advance(Duration::from_millis(4_999)).await;
    assert_eq!(get_json(&cloud, DB, "t-acme").await.1["state"], "creating");
    advance(Duration::from_millis(1)).await;
    assert_eq!(get_json(&cloud, DB, "t-acme").await.1["state"], "available");
    let (status, body) = call(&cloud, "PUT", DB, "t-acme", r#"{"spec":{"size":2}}"#).await;
    assert_eq!((status, body["generation"].as_u64()), (200, Some(2)));

    let (status, body) = call(&cloud, "DELETE", DB, "t-acme", "").await;
    assert_eq!((status, body["state"].as_str()), (202, Some("deleting")));
    assert_eq!(call(&cloud, "DELETE", DB, "t-acme", "").await.0, 202);
    assert_eq!(
        call(&cloud, "PUT", DB, "t-acme", r#"{"spec":{}}"#).await.0,
        409
    );
    assert_eq!(cloud.inventory()[0].state, State::Deleting);
    advance(Duration::from_secs(3)).await;
    assert_eq!(get_json(&cloud, DB, "t-acme").await.0, 404);
    assert!(cloud.inventory().is_empty());
    assert_eq!(call(&cloud, "DELETE", DB, "t-acme", "").await.0, 404);
}

#[tokio::test(start_paused = true)]
async fn a_retried_create_with_the_same_idempotency_key_returns_the_first_result() {
    let cloud = cloud(two_accounts(Quotas::unlimited()));
    let create = || {
        let mut r = request(
            "POST",
            "/v1/accounts/acme/buckets",
            Some("t-acme"),
            r#"{"name":"b"}"#,
        );
        r.headers_mut()
            .insert("idempotency-key", "key-1".parse().unwrap());
        r
    };
    let first = send(&cloud, create()).await;
    assert_eq!(first.status(), 201);
    assert_eq!(header(&first, "idempotent-replayed"), None);
    advance(Duration::from_secs(1)).await;
    let second = send(&cloud, create()).await;
    assert_eq!(second.status(), 201);
    assert_eq!(
        header(&second, "idempotent-replayed").as_deref(),
        Some("true")
    );
    assert_eq!(json_body(first).await, json_body(second).await);
    assert_eq!(cloud.inventory().len(), 1);
    let (status, body) = create_named(&cloud, "acme", "buckets", "b").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("AlreadyExists"))
    );
}

#[tokio::test(start_paused = true)]
async fn lists_page_through_every_resource_in_name_order() {
    let cloud = cloud(two_accounts(Quotas::unlimited()));
    for name in ["e", "a", "d", "b", "c"] {
        let body = format!(r#"{{"name":"{name}","spec":{{"type":"A","value":"10.0.0.1"}}}}"#);
        assert_eq!(
            call(&cloud, "POST", "/v1/accounts/acme/records", "t-acme", &body)
                .await
                .0,
            201
        );
    }
    let mut names = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &token {
            Some(t) => format!("/v1/accounts/acme/records?limit=2&page_token={t}"),
            None => "/v1/accounts/acme/records?limit=2".to_owned(),
        };
        let (status, body) = call(&cloud, "GET", &path, "t-acme", "").await;
        assert_eq!(status, 200);
        pages += 1;
        names.extend(
            body["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["name"].as_str().unwrap().to_owned()),
        );
        match &body["next_page_token"] {
            Value::String(next) => token = Some(next.clone()),
            _ => break,
        }
    }
    assert_eq!(names, ["a", "b", "c", "d", "e"]);
    assert_eq!(pages, 3);
    assert!(
        cloud
            .calls()
            .iter()
            .filter(|c| c.action == Some(mock_cloud::Action::List))
            .count()
            == 3
    );
}

#[tokio::test(start_paused = true)]
async fn another_accounts_token_gets_403_whether_or_not_the_resource_exists() {
    let cloud = cloud(two_accounts(Quotas::unlimited()));
    create_named(&cloud, "acme", "buckets", "secret").await;
    let exists = get_json(&cloud, "/v1/accounts/acme/buckets/secret", "t-other").await;
    let absent = get_json(&cloud, "/v1/accounts/acme/buckets/nothing", "t-other").await;
    assert_eq!(exists.0, 403);
    assert_eq!(exists, absent);
    let delete = call(
        &cloud,
        "DELETE",
        "/v1/accounts/acme/buckets/secret",
        "t-other",
        "",
    )
    .await;
    assert_eq!(delete, absent);
    assert_eq!(
        get_json(&cloud, "/v1/accounts/other/buckets/secret", "t-other")
            .await
            .0,
        404
    );
    assert_eq!(cloud.inventory().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn requests_without_a_valid_token_get_401() {
    let cloud = cloud(two_accounts(Quotas::unlimited()));
    let no_token = send(
        &cloud,
        request("GET", "/v1/accounts/acme/buckets", None, ""),
    )
    .await;
    assert_eq!(no_token.status(), 401);
    assert_eq!(
        header(&no_token, "www-authenticate").as_deref(),
        Some("Bearer")
    );
    assert_eq!(
        get_json(&cloud, "/v1/accounts/acme/buckets", "wrong")
            .await
            .0,
        401
    );
    let calls = cloud.calls();
    assert_eq!(calls.len(), 2);
    assert!(
        calls
            .iter()
            .all(|c| c.account.is_empty() && c.status == 401)
    );
}

#[tokio::test(start_paused = true)]
async fn bad_input_gets_a_clear_4xx_naming_the_field() {
    let cloud = cloud(two_accounts(Quotas::unlimited()));
    let field = |body: Value| body["error"]["field"].as_str().map(str::to_owned);
    let post =
        |body: &'static str| call(&cloud, "POST", "/v1/accounts/acme/records", "t-acme", body);
    let (status, body) = post("{not json").await;
    assert_eq!((status, field(body).as_deref()), (400, Some("body")));
    let (status, body) = post(r#"{"spec":{"type":"A","value":"x"}}"#).await;
    assert_eq!((status, field(body).as_deref()), (400, Some("name")));
    let (status, body) = post(r#"{"name":"r","spec":{"type":"A"}}"#).await;
    assert_eq!((status, field(body).as_deref()), (400, Some("spec.value")));
    let (status, body) = call(
        &cloud,
        "PUT",
        "/v1/accounts/acme/records/r",
        "t-acme",
        r#"{"specs":{}}"#,
    )
    .await;
    assert_eq!((status, field(body).as_deref()), (400, Some("spec")));
    let (status, body) = get_json(&cloud, "/v1/accounts/acme/records?limit=5000", "t-acme").await;
    assert_eq!((status, field(body).as_deref()), (400, Some("limit")));

    let big = "x".repeat(MAX_BODY + 1);
    let response = send(
        &cloud,
        request("POST", "/v1/accounts/acme/buckets", Some("t-acme"), &big),
    )
    .await;
    assert_eq!(response.status(), 413);
    assert_eq!(get_json(&cloud, "/v2/nothing", "t-acme").await.0, 404);
    assert_eq!(
        get_json(&cloud, "/v1/accounts/acme/disks", "t-acme")
            .await
            .0,
        404
    );
    let wrong_method = send(
        &cloud,
        request("PATCH", "/v1/accounts/acme/buckets/b", Some("t-acme"), "{}"),
    )
    .await;
    assert_eq!(wrong_method.status(), 405);
    assert_eq!(
        header(&wrong_method, "allow").as_deref(),
        Some("GET, PUT, DELETE")
    );
    assert_eq!(
        call(&cloud, "DELETE", "/v1/accounts/acme/buckets", "t-acme", "")
            .await
            .0,
        405
    );
    assert_eq!(cloud.inventory().len(), 0);
    assert_eq!(
        cloud.calls().len(),
        10,
        "every bad request is journalled too"
    );
}
