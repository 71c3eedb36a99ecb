//! DynamoDB through the real aws-sdk-dynamodb over a socket: every table operation round
//! trips, tables provision on the config's times, throttles are retried by the standard
//! retry mode, a wrong secret is the signature error; and below the SDK, in process under
//! paused time: the wire's error envelopes, bad input, faults per operation.

use std::time::Duration;

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{
    BillingMode, GlobalSecondaryIndex, KeyType, Projection, ProjectionType, TableStatus, Tag,
};
use aws_smithy_types::retry::RetryConfig;
use mock_cloud::{Config, Per, Rate, Service};

use crate::aws_support::{
    attribute, create_table, dynamodb, key, keys, one_quota, serve, standard_retry, table_tags,
    thrice,
};

const ARN: &str = "arn:aws:dynamodb:us-east-1:000000000000:table";

fn client(url: &str) -> aws_sdk_dynamodb::Client {
    dynamodb(url, keys("default", "default"), RetryConfig::disabled())
}

fn tag(k: &str, v: &str) -> Tag {
    Tag::builder().key(k).value(v).build().unwrap()
}

async fn create(client: &aws_sdk_dynamodb::Client, name: &str) {
    create_table(client, name).send().await.unwrap();
}

async fn status(client: &aws_sdk_dynamodb::Client, name: &str) -> Result<TableStatus, String> {
    match client.describe_table().table_name(name).send().await {
        Ok(out) => Ok(out.table().unwrap().table_status().unwrap().clone()),
        Err(e) => Err(e.into_service_error().code().unwrap_or_default().to_owned()),
    }
}

/// Polls until `name`'s status is `want` (bounded: 40 polls of 25 ms).
async fn wait_for(
    client: &aws_sdk_dynamodb::Client,
    name: &str,
    want: Result<TableStatus, String>,
) {
    for _ in 0..40 {
        if status(client, name).await == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{name} never reached {want:?}");
}

#[tokio::test]
async fn every_table_operation_round_trips_through_the_sdk() {
    let config =
        Config::default().with_provisioning(Duration::from_millis(150), Duration::from_millis(150));
    let served = serve(config).await;
    let db = client(&served.url);

    let created = db
        .create_table()
        .table_name("users")
        .attribute_definitions(attribute("id"))
        .attribute_definitions(attribute("email"))
        .key_schema(key("id", KeyType::Hash))
        .global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name("by-email")
                .key_schema(key("email", KeyType::Hash))
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::All)
                        .build(),
                )
                .build()
                .unwrap(),
        )
        .billing_mode(BillingMode::PayPerRequest)
        .tags(tag("team", "a"))
        .deletion_protection_enabled(false)
        .send()
        .await
        .unwrap();
    let d = created.table_description().unwrap();
    assert_eq!(d.table_status(), Some(&TableStatus::Creating));
    assert_eq!(d.table_arn(), Some(format!("{ARN}/users").as_str()));
    assert_eq!(
        d.billing_mode_summary().unwrap().billing_mode(),
        Some(&BillingMode::PayPerRequest)
    );
    let gsi = &d.global_secondary_indexes()[0];
    assert_eq!(gsi.index_name(), Some("by-email"));
    assert_eq!(
        gsi.index_arn(),
        Some(format!("{ARN}/users/index/by-email").as_str())
    );
    let age = jiff::Timestamp::now().as_second() - d.creation_date_time().unwrap().secs();
    assert!((0..=5).contains(&age), "{age}");
    assert!(d.table_id().unwrap().len() == 36);

    assert_eq!(status(&db, "users").await, Ok(TableStatus::Creating));
    wait_for(&db, "users", Ok(TableStatus::Active)).await;
    // The ARN names the table too.
    let by_arn = db
        .describe_table()
        .table_name(format!("{ARN}/users"))
        .send()
        .await
        .unwrap();
    assert_eq!(by_arn.table().unwrap().table_name(), Some("users"));

    create(&db, "b-orders").await;
    create(&db, "c-events").await;
    let first = db.list_tables().limit(2).send().await.unwrap();
    assert_eq!(first.table_names(), ["b-orders", "c-events"]);
    assert_eq!(first.last_evaluated_table_name(), Some("c-events"));
    let rest = db
        .list_tables()
        .exclusive_start_table_name("c-events")
        .limit(2)
        .send()
        .await
        .unwrap();
    assert_eq!(rest.table_names(), ["users"]);
    assert_eq!(rest.last_evaluated_table_name(), None);
    let paged: Vec<String> = db
        .list_tables()
        .limit(1)
        .into_paginator()
        .items()
        .send()
        .collect::<Result<Vec<_>, _>>()
        .await
        .unwrap();
    assert_eq!(paged, ["b-orders", "c-events", "users"]);

    let arn = format!("{ARN}/users");
    db.tag_resource()
        .resource_arn(&arn)
        .tags(tag("env", "dev"))
        .tags(tag("team", "b"))
        .send()
        .await
        .unwrap();
    db.untag_resource()
        .resource_arn(&arn)
        .tag_keys("env")
        .send()
        .await
        .unwrap();
    assert_eq!(table_tags(&db, &arn).await, [("team".into(), "b".into())]);

    let deleted = db.delete_table().table_name("users").send().await.unwrap();
    assert_eq!(
        deleted.table_description().unwrap().table_status(),
        Some(&TableStatus::Deleting)
    );
    assert_eq!(status(&db, "users").await, Ok(TableStatus::Deleting));
    wait_for(&db, "users", Err("ResourceNotFoundException".into())).await;

    let calls = served.cloud.calls();
    assert!(
        calls
            .iter()
            .all(|c| c.service == "dynamodb" && c.account == "default")
    );
    let ops: std::collections::BTreeSet<&str> =
        calls.iter().map(|c| c.operation.as_str()).collect();
    assert_eq!(
        ops.into_iter().collect::<Vec<_>>(),
        [
            "CreateTable",
            "DeleteTable",
            "DescribeTable",
            "ListTables",
            "ListTagsOfResource",
            "TagResource",
            "UntagResource"
        ]
    );
    assert_eq!(calls[0].name, "users");
}

#[tokio::test]
async fn table_errors_are_dynamodbs_own() {
    let served = serve(Config::default()).await;
    let db = client(&served.url);
    create(&db, "users").await;

    let code = |e: &dyn ProvideErrorMetadata| {
        (
            e.code().unwrap_or_default().to_owned(),
            e.message().unwrap_or_default().to_owned(),
        )
    };
    let e = create_table(&db, "users")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_resource_in_use_exception());
    assert_eq!(
        code(&e),
        (
            "ResourceInUseException".into(),
            "Table already exists: users".into()
        )
    );
    let e = db
        .describe_table()
        .table_name("nope")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_resource_not_found_exception());
    assert_eq!(
        code(&e).1,
        "Requested resource not found: Table: nope not found"
    );
    // Still creating (the default create time is 5 s): it cannot be deleted yet.
    let e = db
        .delete_table()
        .table_name("users")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_resource_in_use_exception(), "{e:?}");
    let e = db
        .create_table()
        .table_name("provisioned")
        .attribute_definitions(attribute("id"))
        .key_schema(key("id", KeyType::Hash))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(
        code(&e),
        (
            "ValidationException".into(),
            "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED".into()
        )
    );
    let e = db
        .list_tables()
        .limit(101)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(
        code(&e).1,
        "1 validation error detected: Value '101' at 'limit' failed to satisfy constraint: Member must have value less than or equal to 100"
    );
    let e = db
        .list_tags_of_resource()
        .resource_arn(format!("{ARN}/nope"))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_resource_not_found_exception());
}

#[tokio::test]
async fn a_wrong_secret_or_an_unknown_key_is_refused_in_dynamodbs_envelope() {
    let served = serve(Config::default()).await;
    let wrong = dynamodb(
        &served.url,
        keys("default", "not-the-secret"),
        RetryConfig::disabled(),
    );
    let e = wrong.list_tables().send().await.unwrap_err();
    assert_eq!(e.raw_response().map(|r| r.status().as_u16()), Some(400));
    assert_eq!(
        e.into_service_error().code(),
        Some("InvalidSignatureException")
    );
    let unknown = dynamodb(
        &served.url,
        keys("AKIDUNKNOWN", "x"),
        RetryConfig::disabled(),
    );
    let e = unknown.list_tables().send().await.unwrap_err();
    assert_eq!(
        e.into_service_error().code(),
        Some("UnrecognizedClientException")
    );
    let calls = served.cloud.calls();
    assert_eq!(
        calls
            .iter()
            .map(|c| (c.operation.as_str(), c.status))
            .collect::<Vec<_>>(),
        [("ListTables", 400), ("ListTables", 400)]
    );
}

#[tokio::test]
async fn a_throttle_is_retried_by_the_sdks_standard_mode_and_journalled_each_time() {
    let served = serve(one_quota(
        Service::DynamoDb,
        "read",
        Rate::new(1, 5.0),
        Per::Class,
    ))
    .await;
    let once = client(&served.url);
    once.list_tables().send().await.unwrap();
    let e = once.list_tables().send().await.unwrap_err();
    let raw = e.raw_response().unwrap();
    assert_eq!(raw.status().as_u16(), 400);
    assert!(raw.headers().get("x-amzn-requestid").is_some());
    let body = std::str::from_utf8(raw.body().bytes().unwrap()).unwrap();
    let body: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(
        body["__type"],
        "com.amazon.coral.availability#ThrottlingException"
    );
    assert_eq!(e.into_service_error().code(), Some("ThrottlingException"));

    let retrying = dynamodb(
        &served.url,
        keys("default", "default"),
        standard_retry(10, Duration::from_millis(50)),
    );
    let (calls, throttled) = thrice(&served.cloud, async || {
        retrying.list_tables().send().await.unwrap();
    })
    .await;
    assert!(throttled >= 1, "{calls:#?}");
    assert_eq!(calls.len(), 3 + throttled, "every attempt is journalled");
    assert!(calls.iter().all(|c| c.service == "dynamodb"
        && c.operation == "ListTables"
        && (c.status == 200 || (c.status == 400 && c.throttled))));
}

// Below the SDK, in process, under paused time.
