//! Per-resource faults through the real SDK clients that depend on a resource's life: reads
//! right after a create answer the service's own not-found, a slow create holds the
//! service's creating state, and rules select by tags (from creates and tagging calls) and
//! by the front end's kind.

use std::time::Duration;

use aws_sdk_s3::error::ProvideErrorMetadata;
use aws_smithy_types::retry::RetryConfig;
use mock_cloud::admin::FaultsDocument;
use mock_cloud::{
    Collection, Faults, LastingError, ResourceEffect, ResourceFault, ResourceKind, ResourceSelector,
};

use crate::aws_resource_faults::{config, error, rule};
use crate::aws_support::{
    create_table, default_s3, dynamodb, ec2, keys, s3, s3_tagging, serve, standard_retry,
};

/// Three attempts with the SDK's standard retry mode: a read that the SDK classified as
/// retryable would show as several calls in the journal.
fn retrying() -> RetryConfig {
    standard_retry(3, Duration::from_millis(1))
}

fn selecting(select: ResourceSelector, effect: ResourceEffect) -> ResourceFault {
    ResourceFault { select, effect }
}

fn tagged(key: &str, value: &str) -> ResourceSelector {
    ResourceSelector {
        tag: Some((key.to_owned(), value.to_owned())),
        ..ResourceSelector::default()
    }
}

/// NotFound-after-create windows and slow creates: long enough for a few SDK calls on a
/// busy machine.
const WINDOW: Duration = Duration::from_secs(2);

#[tokio::test]
async fn s3_reads_answer_no_such_bucket_right_after_the_create_and_the_sdk_does_not_retry_them() {
    let served = serve(config(vec![rule(
        "young-*",
        ResourceEffect::NotFoundAfterCreate { duration: WINDOW },
    )]))
    .await;
    let s3 = s3(
        &served.url,
        keys("default", "default"),
        "us-east-1",
        retrying(),
    );
    send!(s3.create_bucket("young-1")).unwrap();
    let e = send!(s3.head_bucket("young-1"))
        .unwrap_err()
        .into_service_error();
    assert!(e.is_not_found(), "{e:?}");
    let e = send!(s3.get_bucket_versioning("young-1"))
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("NoSuchBucket"), "{e:?}");
    // Updates are not reads: the bucket takes its tags meanwhile.
    let tagging = s3_tagging("team", "red");
    send!(s3.put_bucket_tagging("young-1").tagging(tagging)).unwrap();
    let calls = served.cloud.calls();
    let answered: Vec<(&str, u16, bool)> = calls
        .iter()
        .map(|c| (c.operation.as_str(), c.status, c.fault))
        .collect();
    assert_eq!(
        answered,
        [
            ("CreateBucket", 200, false),
            ("HeadBucket", 404, false),
            ("GetBucketVersioning", 404, false),
            ("PutBucketTagging", 204, false),
        ],
        "one attempt each: the SDK classifies the 404s as not retryable"
    );
    tokio::time::sleep(WINDOW).await;
    send!(s3.head_bucket("young-1")).unwrap();
    let read = send!(s3.get_bucket_tagging("young-1")).unwrap();
    assert_eq!(read.tag_set()[0].value(), "red");
}

#[tokio::test]
async fn dynamodb_answers_resource_not_found_after_create_table_and_holds_a_slow_table_creating() {
    let served = serve(
        config(vec![
            rule(
                "young",
                ResourceEffect::NotFoundAfterCreate { duration: WINDOW },
            ),
            rule("slow", ResourceEffect::SlowCreate { duration: WINDOW }),
        ])
        .with_provisioning(Duration::ZERO, Duration::ZERO),
    )
    .await;
    let db = dynamodb(&served.url, keys("default", "default"), retrying());
    let young = create_table(&db, "young").send().await.unwrap();
    let arn = young
        .table_description()
        .unwrap()
        .table_arn()
        .unwrap()
        .to_owned();
    let e = db
        .describe_table()
        .table_name("young")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_resource_not_found_exception(), "{e:?}");
    assert_eq!(
        e.message(),
        Some("Requested resource not found: Table: young not found")
    );
    let e = db
        .list_tags_of_resource()
        .resource_arn(&arn)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_resource_not_found_exception(), "{e:?}");
    let slow = create_table(&db, "slow").send().await.unwrap();
    let slow_arn = slow
        .table_description()
        .unwrap()
        .table_arn()
        .unwrap()
        .to_owned();
    let described = db.describe_table().table_name("slow").send().await.unwrap();
    assert_eq!(
        described.table().unwrap().table_status(),
        Some(&aws_sdk_dynamodb::types::TableStatus::Creating)
    );
    let tag = aws_sdk_dynamodb::types::Tag::builder()
        .key("team")
        .value("red")
        .build()
        .unwrap();
    let e = db
        .tag_resource()
        .resource_arn(&slow_arn)
        .tags(tag.clone())
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_resource_in_use_exception(), "{e:?}");
    // Each error once: none is retried by the SDK's standard mode.
    let calls = served.cloud.calls();
    let statuses: Vec<(&str, u16)> = calls
        .iter()
        .map(|c| (c.operation.as_str(), c.status))
        .collect();
    assert_eq!(
        statuses,
        [
            ("CreateTable", 200),
            ("DescribeTable", 400),
            ("ListTagsOfResource", 400),
            ("CreateTable", 200),
            ("DescribeTable", 200),
            ("TagResource", 400),
        ]
    );
    tokio::time::sleep(WINDOW).await;
    let young = db
        .describe_table()
        .table_name("young")
        .send()
        .await
        .unwrap();
    assert_eq!(
        young.table().unwrap().table_status(),
        Some(&aws_sdk_dynamodb::types::TableStatus::Active)
    );
    let slow = db.describe_table().table_name("slow").send().await.unwrap();
    assert_eq!(
        slow.table().unwrap().table_status(),
        Some(&aws_sdk_dynamodb::types::TableStatus::Active)
    );
    db.tag_resource()
        .resource_arn(&slow_arn)
        .tags(tag)
        .send()
        .await
        .unwrap();
}

fn vpc_tags(key: &str, value: &str) -> aws_sdk_ec2::types::TagSpecification {
    aws_sdk_ec2::types::TagSpecification::builder()
        .resource_type(aws_sdk_ec2::types::ResourceType::Vpc)
        .tags(
            aws_sdk_ec2::types::Tag::builder()
                .key(key)
                .value(value)
                .build(),
        )
        .build()
}

#[tokio::test]
async fn ec2_selects_vpcs_by_their_create_tags_holds_slow_ones_pending_and_hides_young_ones() {
    let served = serve(config(vec![
        selecting(
            tagged("team", "slow"),
            ResourceEffect::SlowCreate { duration: WINDOW },
        ),
        selecting(
            tagged("team", "young"),
            ResourceEffect::NotFoundAfterCreate { duration: WINDOW },
        ),
        selecting(tagged("team", "denied"), error(LastingError::AccessDenied)),
        // A conflict has nothing to fail on CreateVpc.
        selecting(tagged("team", "slow"), error(LastingError::Conflict)),
    ]))
    .await;
    let ec2 = ec2(
        &served.url,
        keys("default", "default"),
        "us-east-1",
        retrying(),
    );
    let create = |team: &'static str| {
        ec2.create_vpc()
            .cidr_block("10.0.0.0/16")
            .tag_specifications(vpc_tags("team", team))
            .send()
    };
    let e = create("denied").await.unwrap_err().into_service_error();
    assert_eq!(e.code(), Some("UnauthorizedOperation"), "{e:?}");
    let slow = create("slow").await.unwrap();
    let slow = slow.vpc().unwrap();
    assert_eq!(slow.state(), Some(&aws_sdk_ec2::types::VpcState::Pending));
    let slow = slow.vpc_id().unwrap().to_owned();
    let young = create("young")
        .await
        .unwrap()
        .vpc()
        .unwrap()
        .vpc_id()
        .unwrap()
        .to_owned();
    let read = ec2.describe_vpcs().vpc_ids(&slow).send().await.unwrap();
    assert_eq!(
        read.vpcs()[0].state(),
        Some(&aws_sdk_ec2::types::VpcState::Pending)
    );
    let pending = ec2
        .describe_vpcs()
        .filters(
            aws_sdk_ec2::types::Filter::builder()
                .name("state")
                .values("pending")
                .build(),
        )
        .send()
        .await
        .unwrap();
    let ids: Vec<_> = pending.vpcs().iter().filter_map(|v| v.vpc_id()).collect();
    assert_eq!(ids, [slow.as_str()]);
    let e = ec2
        .describe_vpcs()
        .vpc_ids(&young)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("InvalidVpcID.NotFound"), "{e:?}");
    assert_eq!(
        e.message(),
        Some(format!("The vpc ID '{young}' does not exist").as_str())
    );
    let calls = served.cloud.calls();
    let statuses: Vec<(&str, u16, bool)> = calls
        .iter()
        .map(|c| (c.operation.as_str(), c.status, c.fault))
        .collect();
    assert_eq!(
        statuses,
        [
            ("CreateVpc", 403, true),
            ("CreateVpc", 200, false),
            ("CreateVpc", 200, false),
            ("DescribeVpcs", 200, false),
            ("DescribeVpcs", 200, false),
            ("DescribeVpcs", 400, false),
        ],
        "no error retried by the SDK"
    );
    tokio::time::sleep(WINDOW).await;
    let both = ec2
        .describe_vpcs()
        .vpc_ids(&slow)
        .vpc_ids(&young)
        .send()
        .await
        .unwrap();
    let states: Vec<_> = both.vpcs().iter().map(|v| v.state().cloned()).collect();
    let available = Some(aws_sdk_ec2::types::VpcState::Available);
    assert_eq!(states, [available.clone(), available]);
    ec2.describe_vpcs().vpc_ids(&young).send().await.unwrap();
}

#[tokio::test]
async fn rules_select_aws_resources_by_their_kind_and_by_tags_from_creates_and_tagging_calls() {
    let served = serve(config(vec![
        // The generic API's buckets are not S3's.
        selecting(
            ResourceSelector {
                collection: Some(Collection::Buckets.into()),
                ..ResourceSelector::default()
            },
            error(LastingError::AccessDenied),
        ),
        selecting(
            ResourceSelector {
                collection: Some(ResourceKind::DynamoDbTables),
                ..tagged("team", "red")
            },
            error(LastingError::AccessDenied),
        ),
        selecting(
            ResourceSelector {
                collection: Some(ResourceKind::S3Buckets),
                ..tagged("team", "red")
            },
            ResourceEffect::Drift {
                field: Some("team".into()),
            },
        ),
        selecting(
            ResourceSelector {
                collection: Some(ResourceKind::S3Buckets),
                ..tagged("team", "blue")
            },
            error(LastingError::Validation),
        ),
    ]))
    .await;
    let s3 = default_s3(&served.url);
    let db = dynamodb(
        &served.url,
        keys("default", "default"),
        RetryConfig::disabled(),
    );
    let tag = |value: &str| {
        aws_sdk_s3::types::Tag::builder()
            .key("team")
            .value(value)
            .build()
            .unwrap()
    };
    // Tags given to CreateBucket select the create, and are the bucket's tag set.
    let e = s3
        .create_bucket()
        .bucket("blue-bucket")
        .create_bucket_configuration(
            aws_sdk_s3::types::CreateBucketConfiguration::builder()
                .tags(tag("blue"))
                .build(),
        )
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("InvalidArgument"), "{e:?}");
    s3.create_bucket()
        .bucket("red-bucket")
        .create_bucket_configuration(
            aws_sdk_s3::types::CreateBucketConfiguration::builder()
                .tags(tag("red"))
                .build(),
        )
        .send()
        .await
        .unwrap();
    let read = send!(s3.get_bucket_tagging("red-bucket")).unwrap();
    assert_eq!(read.tag_set()[0].value(), "red-drifted");
    // A bucket made untagged is selected once PutBucketTagging gives it the tag.
    send!(s3.create_bucket("later")).unwrap();
    let tagging = |value: &str| {
        aws_sdk_s3::types::Tagging::builder()
            .tag_set(tag(value))
            .build()
            .unwrap()
    };
    send!(s3.put_bucket_tagging("later").tagging(tagging("green"))).unwrap();
    let read = send!(s3.get_bucket_tagging("later")).unwrap();
    assert_eq!(read.tag_set()[0].value(), "green");
    send!(s3.put_bucket_tagging("later").tagging(tagging("red"))).unwrap();
    let read = send!(s3.get_bucket_tagging("later")).unwrap();
    assert_eq!(read.tag_set()[0].value(), "red-drifted");
    // DynamoDB's Tags select the create; the S3-only rules leave a red table alone after.
    let red = aws_sdk_dynamodb::types::Tag::builder()
        .key("team")
        .value("red")
        .build()
        .unwrap();
    let e = create_table(&db, "red-table")
        .tags(red)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("AccessDeniedException"), "{e:?}");
    create_table(&db, "plain").send().await.unwrap();
    db.describe_table()
        .table_name("plain")
        .send()
        .await
        .unwrap();
}

#[test]
fn a_slow_create_of_s3_buckets_is_refused_and_the_aws_kinds_read_back() {
    let doc: FaultsDocument =
        serde_json::from_str(r#"{"resources":[{"collection":"s3/buckets","slow_create_s":5}]}"#)
            .unwrap();
    let err = Faults::try_from(doc).unwrap_err().to_string();
    assert!(err.contains("S3 has no creating state"), "{err}");
    let json = r#"{"seed":0,"outages":[],"resources":[{"collection":"dynamodb/tables","slow_create_s":5.0},{"collection":"ec2/vpcs","tag":{"key":"team","value":"a"},"not_found_after_create_s":2.0},{"collection":"s3/buckets","not_found_after_create_s":2.0}]}"#;
    let faults = Faults::try_from(serde_json::from_str::<FaultsDocument>(json).unwrap()).unwrap();
    assert_eq!(
        faults.resources[1].select.collection,
        Some(ResourceKind::Ec2Vpcs)
    );
    assert_eq!(
        serde_json::to_string(&FaultsDocument::from(&faults)).unwrap(),
        json
    );
    let unknown =
        serde_json::from_str::<FaultsDocument>(r#"{"resources":[{"collection":"s3","drift":{}}]}"#)
            .unwrap_err()
            .to_string();
    assert!(
        unknown.contains(
            "expected one of buckets, databases, records, s3/buckets, dynamodb/tables, ec2/vpcs"
        ),
        "{unknown}"
    );
}
