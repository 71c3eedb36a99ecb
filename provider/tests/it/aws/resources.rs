//! A Bucket, a VPC and a Table through create, observe, update and delete, with the
//! documented calls of each.

use std::collections::BTreeMap;

use mock_cloud::Config;
use provider::aws::bucket::{self, BucketParameters, Encryption, Versioning};

use super::{BUCKET_READ, ops_during, ops_since, serve_and_connect};

#[tokio::test]
async fn a_bucket_goes_through_create_observe_update_and_delete_with_the_documented_calls() {
    let (served, clients) = serve_and_connect(Config::default(), "eu-west-1").await;
    let s3 = &clients.s3;
    let name = "loadtest-logs";
    let mut params = BucketParameters {
        region: "eu-west-1".to_owned(),
        tags: BTreeMap::from([("team".to_owned(), "a".to_owned())]),
        versioning: Some(Versioning { enabled: true }),
        server_side_encryption: Some(Encryption {
            sse_algorithm: "AES256".to_owned(),
            kms_master_key_id: None,
        }),
    };

    // Observe of an absent bucket: one HeadBucket.
    let start = served.cloud.calls().len();
    assert_eq!(bucket::observe(s3, name).await.expect("observes"), None);
    assert_eq!(ops_since(&served.cloud.calls(), start), ["HeadBucket"]);

    let start = served.cloud.calls().len();
    bucket::create(s3, name, &params).await.expect("creates");
    assert_eq!(
        ops_since(&served.cloud.calls(), start),
        [
            "CreateBucket",
            "PutBucketTagging",
            "PutBucketVersioning",
            "PutBucketEncryption"
        ]
    );

    let start = served.cloud.calls().len();
    let seen = bucket::observe(s3, name)
        .await
        .expect("observes")
        .expect("exists");
    assert_eq!(
        ops_since(&served.cloud.calls(), start),
        BUCKET_READ,
        "Terraform's read"
    );
    assert!(seen.up_to_date(&params), "{seen:#?}");
    assert_eq!(seen.region, "eu-west-1");
    assert_eq!(seen.arn, "arn:aws:s3:::loadtest-logs");
    assert_eq!(seen.versioning.as_deref(), Some("Enabled"));
    assert_eq!(seen.sse_algorithm.as_deref(), Some("AES256"));
    assert_eq!(seen.tags, params.tags);
    assert!(!seen.object_lock_enabled && seen.policy.is_none());

    // Update: only the tags differ, so one call.
    params
        .tags
        .insert("cost-center".to_owned(), "42".to_owned());
    assert!(!seen.up_to_date(&params));
    let ops = ops_during(&served, bucket::update(s3, name, &params, &seen)).await;
    assert_eq!(ops, ["PutBucketTagging"]);
    let seen = bucket::observe(s3, name).await.unwrap().expect("exists");
    assert!(seen.up_to_date(&params));
    // Tags removed: DeleteBucketTagging.
    params.tags.clear();
    let ops = ops_during(&served, bucket::update(s3, name, &params, &seen)).await;
    assert_eq!(ops, ["DeleteBucketTagging"]);

    let start = served.cloud.calls().len();
    bucket::delete(s3, name).await.expect("deletes");
    assert_eq!(ops_since(&served.cloud.calls(), start), ["DeleteBucket"]);
    assert_eq!(bucket::observe(s3, name).await.expect("observes"), None);
    assert!(
        served
            .cloud
            .calls()
            .iter()
            .all(|c| !c.throttled && c.status < 500),
        "no retries in a clean run"
    );
}

#[tokio::test]
async fn a_vpc_goes_through_create_observe_update_and_delete_with_one_call_each() {
    use provider::aws::vpc::{self, VpcParameters};
    let (served, clients) = serve_and_connect(Config::default(), "eu-west-1").await;
    let ec2 = &clients.ec2;
    let mut params = VpcParameters {
        region: "eu-west-1".to_owned(),
        cidr_block: "10.1.0.0/16".to_owned(),
        tags: BTreeMap::from([
            ("Name".to_owned(), "loadtest".to_owned()),
            ("team".to_owned(), "a".to_owned()),
        ]),
    };
    let start = served.cloud.calls().len();
    let id = vpc::create(ec2, &params).await.expect("creates");
    assert!(id.starts_with("vpc-"), "{id}");
    let seen = vpc::observe(ec2, &id).await.unwrap().expect("exists");
    assert_eq!(
        ops_since(&served.cloud.calls(), start),
        ["CreateVpc", "DescribeVpcs"]
    );
    assert_eq!(seen.cidr_block, "10.1.0.0/16");
    assert_eq!(seen.owner_id, "000000000000");
    assert!(seen.up_to_date(&params), "{seen:?}");

    params.tags.insert("team".to_owned(), "b".to_owned());
    params.tags.remove("Name");
    assert!(!seen.up_to_date(&params));
    let start = served.cloud.calls().len();
    vpc::update(ec2, &params, &seen).await.expect("updates");
    assert_eq!(
        ops_since(&served.cloud.calls(), start),
        ["CreateTags", "DeleteTags"]
    );
    let seen = vpc::observe(ec2, &id).await.unwrap().expect("exists");
    assert!(seen.up_to_date(&params), "{seen:?}");

    let start = served.cloud.calls().len();
    vpc::delete(ec2, &id).await.expect("deletes");
    assert_eq!(vpc::observe(ec2, &id).await.expect("observes"), None);
    assert_eq!(
        ops_since(&served.cloud.calls(), start),
        ["DeleteVpc", "DescribeVpcs"]
    );
}

#[tokio::test]
async fn a_table_goes_through_create_observe_update_and_delete() {
    use provider::aws::table::{self, TableAttribute, TableParameters};
    let config = Config::from_yaml(
        "provisioning: {database_create_ms: 200, database_delete_ms: 200}\n",
        "fast.yaml",
    )
    .expect("valid");
    let (served, clients) = serve_and_connect(config, "us-east-1").await;
    let db = &clients.dynamodb;
    let mut params = TableParameters {
        region: "us-east-1".to_owned(),
        billing_mode: "PAY_PER_REQUEST".to_owned(),
        attribute: vec![TableAttribute {
            name: "id".to_owned(),
            kind: "S".to_owned(),
        }],
        hash_key: "id".to_owned(),
        range_key: None,
        tags: BTreeMap::from([("team".to_owned(), "a".to_owned())]),
    };
    let start = served.cloud.calls().len();
    assert_eq!(table::observe(db, "users").await.expect("observes"), None);
    table::create(db, "users", &params).await.expect("creates");
    let seen = table::observe(db, "users").await.unwrap().expect("exists");
    assert_eq!(
        ops_since(&served.cloud.calls(), start),
        [
            "DescribeTable",
            "CreateTable",
            "DescribeTable",
            "ListTagsOfResource"
        ]
    );
    assert!(seen.up_to_date(&params), "{seen:?}");
    assert_eq!(seen.billing_mode.as_deref(), Some("PAY_PER_REQUEST"));
    assert!(
        seen.arn.ends_with(":000000000000:table/users"),
        "{}",
        seen.arn
    );
    // CREATING for 200 ms; the reconciler's next poll finds it ACTIVE.
    let mut seen = seen;
    for _ in 0..50 {
        if seen.ready() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        seen = table::observe(db, "users").await.unwrap().expect("exists");
    }
    assert!(seen.ready(), "{seen:?}");

    params.tags = BTreeMap::from([("owner".to_owned(), "b".to_owned())]);
    let start = served.cloud.calls().len();
    table::update(db, &params, &seen).await.expect("updates");
    assert_eq!(
        ops_since(&served.cloud.calls(), start),
        ["TagResource", "UntagResource"]
    );
    let seen = table::observe(db, "users").await.unwrap().expect("exists");
    assert!(seen.up_to_date(&params), "{seen:?}");

    let start = served.cloud.calls().len();
    table::delete(db, "users").await.expect("deletes");
    assert_eq!(ops_since(&served.cloud.calls(), start), ["DeleteTable"]);
}
