//! DynamoDB below the SDK, in process under paused time: tables provision on the config's
//! times, every answer carries its CRC32, bad input gets DynamoDB's own codes, faults per
//! operation answer in its envelope.

use std::time::Duration;

use mock_cloud::{Config, ErrorRate, Faults, MockCloud, OperationFaults, Service};

use crate::aws_support::{Payload, Signing, cloud_now, keys, text};

fn cloud(config: Config) -> MockCloud {
    MockCloud::new(config).unwrap()
}

/// Sends `body` to `target` (None: no `X-Amz-Target`), signed for DynamoDB.
async fn send(cloud: &MockCloud, target: Option<&str>, body: &str) -> (u16, serde_json::Value) {
    let target = target.map(|t| format!("DynamoDB_20120810.{t}"));
    let mut headers = vec![("content-type", "application/x-amz-json-1.0")];
    if let Some(t) = &target {
        headers.push(("x-amz-target", t.as_str()));
    }
    let request = Signing::new("POST", "/", "dynamodb")
        .headers(&headers)
        .body(body.as_bytes())
        .payload(Payload::NotS3)
        .sign(&keys("default", "default"), cloud_now(cloud));
    let response = cloud.handle(request).await;
    let status = response.status().as_u16();
    assert!(response.headers().contains_key("x-amzn-requestid"));
    let crc32 = response.headers().get("x-amz-crc32").cloned();
    let text = text(response).await;
    // Every answer, errors included, carries the CRC32 of its body, as DynamoDB's do.
    assert_eq!(
        crc32.as_ref().and_then(|v| v.to_str().ok()),
        Some(crc32fast::hash(text.as_bytes()).to_string().as_str()),
        "x-amz-crc32 of {text}"
    );
    let json = if text.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::from_str(&text).unwrap()
    };
    (status, json)
}

const USERS: &str = r#"{"TableName":"users","AttributeDefinitions":[{"AttributeName":"id","AttributeType":"S"}],
    "KeySchema":[{"AttributeName":"id","KeyType":"HASH"}],"ProvisionedThroughput":{"ReadCapacityUnits":5,"WriteCapacityUnits":5}}"#;

#[tokio::test(start_paused = true)]
async fn tables_provision_on_the_configs_create_and_delete_times() {
    let cloud = cloud(
        Config::default().with_provisioning(Duration::from_secs(20), Duration::from_secs(10)),
    );
    let (status, body) = send(&cloud, Some("CreateTable"), USERS).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["TableDescription"]["TableStatus"], "CREATING");
    assert_eq!(
        body["TableDescription"]["ProvisionedThroughput"],
        serde_json::json!({"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    );
    let describe = r#"{"TableName":"users"}"#;
    tokio::time::advance(Duration::from_millis(19_999)).await;
    let (_, body) = send(&cloud, Some("DescribeTable"), describe).await;
    assert_eq!(body["Table"]["TableStatus"], "CREATING");
    tokio::time::advance(Duration::from_millis(1)).await;
    let (_, body) = send(&cloud, Some("DescribeTable"), describe).await;
    assert_eq!(body["Table"]["TableStatus"], "ACTIVE");
    let (status, body) = send(&cloud, Some("DeleteTable"), describe).await;
    assert_eq!(
        (status, &body["TableDescription"]["TableStatus"]),
        (200, &"DELETING".into())
    );
    tokio::time::advance(Duration::from_millis(9_999)).await;
    let (_, body) = send(&cloud, Some("ListTables"), "{}").await;
    assert_eq!(body["TableNames"], serde_json::json!(["users"]));
    let (status, body) = send(&cloud, Some("DeleteTable"), describe).await;
    assert_eq!(
        (status, body["message"].as_str().unwrap()),
        (
            400,
            "Attempt to change a resource which is still in use: Table is being deleted: users"
        )
    );
    tokio::time::advance(Duration::from_millis(1)).await;
    let (status, body) = send(&cloud, Some("DescribeTable"), describe).await;
    assert_eq!(
        (status, body["__type"].as_str().unwrap()),
        (
            400,
            "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException"
        )
    );
    // The name is free again.
    assert_eq!(send(&cloud, Some("CreateTable"), USERS).await.0, 200);
}

#[tokio::test(start_paused = true)]
async fn every_answer_carries_the_crc32_of_its_body_as_dynamodbs_do() {
    // `send` checks `x-amz-crc32` against the body of every answer it gets.
    let cloud = cloud(Config::default());
    let (status, answer) = send(&cloud, Some("ListTables"), "{}").await;
    assert_eq!(
        (status, answer["TableNames"].as_array().map(Vec::len)),
        (200, Some(0))
    );
    let (status, _) = send(&cloud, Some("CreateTable"), USERS).await;
    assert_eq!(status, 200);
    let (status, answer) = send(&cloud, Some("DescribeTable"), r#"{"TableName":"nope"}"#).await;
    assert_eq!(
        (status, answer["__type"].as_str()),
        (
            400,
            Some("com.amazonaws.dynamodb.v20120810#ResourceNotFoundException")
        )
    );
}

#[tokio::test(start_paused = true)]
async fn bad_input_gets_dynamodbs_own_codes_and_never_a_500() {
    let cloud = cloud(Config::default());
    let cases: &[(Option<&str>, &str, &str)] = &[
        (
            None,
            "{}",
            "com.amazon.coral.service#UnknownOperationException",
        ),
        (
            Some("PutItem"),
            "{}",
            "com.amazon.coral.service#UnknownOperationException",
        ),
        (
            Some("DescribeTable"),
            "{not json",
            "com.amazon.coral.service#SerializationException",
        ),
        (
            Some("DescribeTable"),
            "[]",
            "com.amazon.coral.service#SerializationException",
        ),
        (
            Some("DescribeTable"),
            r#"{"TableName": 7}"#,
            "com.amazon.coral.service#SerializationException",
        ),
        (
            Some("DescribeTable"),
            "{}",
            "com.amazon.coral.validate#ValidationException",
        ),
        (
            Some("DescribeTable"),
            r#"{"TableName": "a/b"}"#,
            "com.amazon.coral.validate#ValidationException",
        ),
        (
            Some("CreateTable"),
            r#"{"TableName": "t1", "KeySchema": {}}"#,
            "com.amazon.coral.service#SerializationException",
        ),
        (
            Some("TagResource"),
            r#"{"ResourceArn": "arn:aws:s3:::b", "Tags": []}"#,
            "com.amazon.coral.validate#ValidationException",
        ),
        (
            Some("UntagResource"),
            r#"{"ResourceArn": "x"}"#,
            "com.amazon.coral.validate#ValidationException",
        ),
        (
            Some("ListTables"),
            r#"{"Limit": 0}"#,
            "com.amazon.coral.validate#ValidationException",
        ),
    ];
    for (target, body, want) in cases {
        let (status, answer) = send(&cloud, *target, body).await;
        assert_eq!(
            (status, answer["__type"].as_str()),
            (400, Some(*want)),
            "{target:?} {body}: {answer}"
        );
    }
    let (_, answer) = send(&cloud, Some("DescribeTable"), "{}").await;
    assert_eq!(
        answer["message"],
        "1 validation error detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null"
    );
    let calls = cloud.calls();
    assert_eq!(calls.len(), cases.len() + 1);
    assert_eq!(
        calls[0].operation, "",
        "an unknown operation is journalled without one"
    );
    assert_eq!(calls[2].operation, "DescribeTable");
}

#[tokio::test(start_paused = true)]
async fn operation_faults_answer_in_dynamodbs_envelope() {
    let faults = Faults::none().with_operation(
        Service::DynamoDb,
        "DescribeTable",
        OperationFaults::none()
            .with_errors(ErrorRate {
                probability: 1.0,
                status: 400,
            })
            .with_code("ProvisionedThroughputExceededException"),
    );
    let cloud = cloud(Config::default().with_faults(faults));
    let (status, body) = send(&cloud, Some("DescribeTable"), r#"{"TableName":"users"}"#).await;
    assert_eq!(
        (status, body["__type"].as_str()),
        (
            400,
            Some("com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException")
        )
    );
    assert_eq!(send(&cloud, Some("ListTables"), "{}").await.0, 200);
    let summary = cloud.summary();
    let faulted: Vec<(&str, &str, u64)> = summary
        .operations
        .iter()
        .filter(|o| o.faults > 0)
        .map(|o| (o.service.as_str(), o.operation.as_str(), o.faults))
        .collect();
    assert_eq!(faulted, [("dynamodb", "DescribeTable", 1)]);
}
