//! Each kind through create, observe, update and delete, with the calls of
//! `provider/README.md`'s table: the two scopes' buckets, a VPC and a Table.

use std::time::Duration;

use kube::ResourceExt;
use kube::api::{Api, DeleteParams, PostParams};
use mock_cloud::Call;
use provider::aws::connect::RetryMode;
use provider::aws::kinds::Vpc;
use provider::aws::kinds::{ClusterBucket, NamespacedBucket, Table};

use super::{AwsStack, NO_STS, assert_prefix_then_repeats, settings};
use crate::aws::BUCKET_READ;
use crate::stack::{eventually, is_ready};

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_namespaced_bucket_goes_through_create_observe_update_and_delete_with_the_documented_calls()
 {
    let mut stack = AwsStack::open(NO_STS).await;
    stack
        .create::<NamespacedBucket>(
            "apiVersion: s3.aws.m.loadtest.dev/v1beta1\nkind: Bucket\nmetadata: {name: logs, namespace: default}\n\
             spec: {forProvider: {region: eu-west-1, tags: {team: a}, versioning: {enabled: true}}}\n",
        )
        .await;
    let ready = stack.ready::<NamespacedBucket>("logs").await;
    let at = ready.status.as_ref().and_then(|s| s.at_provider.clone());
    let at = at.expect("atProvider is written");
    assert_eq!(at.arn, "arn:aws:s3:::logs");
    assert_eq!(at.region, "eu-west-1");
    assert_eq!(at.versioning.as_deref(), Some("Enabled"));
    assert_eq!(ready.annotations()["crossplane.io/external-name"], "logs");
    // Create: observe of the absent bucket (1), CreateBucket + the two parts set (3); then
    // every Observe is the 15-call read.
    let ops = stack.ops("s3");
    let reads = assert_prefix_then_repeats(
        &ops,
        &[
            "HeadBucket",
            "CreateBucket",
            "PutBucketTagging",
            "PutBucketVersioning",
        ],
        &BUCKET_READ,
    );
    assert!(reads >= 1, "{ops:?}");
    assert!(stack.ops("sts").is_empty(), "both STS checks are skipped");

    // Update: one Observe, then PutBucketTagging for the changed tags.
    let before = stack.ops("s3").len();
    stack
        .merge::<NamespacedBucket>(
            "logs",
            serde_json::json!({"spec": {"forProvider": {"tags": {"team": "b"}}}}),
        )
        .await;
    stack.called("s3", before, "PutBucketTagging").await;
    let ops = stack.ops("s3")[before..].to_vec();
    let mut update: Vec<&str> = BUCKET_READ.to_vec();
    update.push("PutBucketTagging");
    assert_prefix_then_repeats(&ops, &update, &BUCKET_READ);

    // Delete: one Observe, DeleteBucket, then the absent bucket's one HeadBucket.
    let before = stack.ops("s3").len();
    stack.delete::<NamespacedBucket>("logs").await;
    stack.gone::<NamespacedBucket>("logs").await;
    let ops = stack.ops("s3")[before..].to_vec();
    let mut delete: Vec<&str> = BUCKET_READ.to_vec();
    delete.push("DeleteBucket");
    assert_prefix_then_repeats(&ops, &delete, &["HeadBucket"]);
    assert!(
        stack
            .cloud
            .calls()
            .iter()
            .all(|c: &Call| !c.throttled && c.status < 500),
        "no throttle, no server error: no SDK retry in the counts"
    );
    assert!(stack.stop().await.drained);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_cluster_scoped_bucket_is_reconciled_and_each_connect_validates_with_sts() {
    let mut stack = AwsStack::start(
        settings(),
        mock_cloud::Config::default(),
        RetryMode::Standard,
        "",
    )
    .await;
    let api = Api::<ClusterBucket>::all(stack.client.clone());
    let bucket: ClusterBucket = serde_saphyr::from_str(
        "apiVersion: s3.aws.loadtest.dev/v1beta1\nkind: Bucket\nmetadata: {name: shared}\n\
         spec: {forProvider: {region: us-east-1, serverSideEncryption: {sseAlgorithm: AES256}}}\n",
    )
    .unwrap();
    api.create(&PostParams::default(), &bucket).await.unwrap();
    let ok = eventually(
        Duration::from_secs(60),
        Duration::from_millis(200),
        || async {
            api.get_opt("shared")
                .await
                .unwrap()
                .is_some_and(|b| is_ready(&b))
        },
    )
    .await;
    assert!(ok, "{:#?}", api.get_opt("shared").await);
    let s3 = stack.ops("s3");
    let observes = s3.iter().filter(|op| *op == "HeadBucket").count();
    // `--credential-cache=none`: one GetCallerIdentity per Connect, one Connect per
    // reconcile that reaches P7, and every such reconcile observes once.
    assert_eq!(
        stack.ops("sts"),
        vec!["GetCallerIdentity".to_owned(); observes],
        "{s3:?}"
    );
    assert_eq!(
        s3[..3],
        ["HeadBucket", "CreateBucket", "PutBucketEncryption"],
        "{s3:?}"
    );
    api.delete("shared", &DeleteParams::default())
        .await
        .unwrap();
    let ok = eventually(
        Duration::from_secs(60),
        Duration::from_millis(200),
        || async { api.get_opt("shared").await.unwrap().is_none() },
    )
    .await;
    assert!(ok, "deleted");
    assert!(stack.stop().await.drained);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_vpc_takes_the_id_ec2_assigns_as_its_external_name() {
    let mut stack = AwsStack::open(NO_STS).await;
    stack
        .create::<Vpc>(
            "apiVersion: ec2.aws.m.loadtest.dev/v1beta1\nkind: VPC\nmetadata: {name: main, namespace: default}\n\
             spec: {forProvider: {region: eu-west-1, cidrBlock: 10.1.0.0/16, tags: {Name: main}}}\n",
        )
        .await;
    let vpc = stack.ready::<Vpc>("main").await;
    let id = vpc.annotations()["crossplane.io/external-name"].clone();
    assert!(id.starts_with("vpc-"), "{id}");
    let at = vpc.status.and_then(|s| s.at_provider).expect("atProvider");
    assert_eq!(
        (at.id.as_str(), at.cidr_block.as_str()),
        (id.as_str(), "10.1.0.0/16")
    );
    // No Observe before the Create: the name is EC2's to give.
    let ops = stack.ops("ec2");
    assert_prefix_then_repeats(&ops, &["CreateVpc"], &["DescribeVpcs"]);

    let before = ops.len();
    stack
        .merge::<Vpc>(
            "main",
            serde_json::json!({"spec": {"forProvider": {"tags": {"Name": null, "team": "a"}}}}),
        )
        .await;
    stack.called("ec2", before, "DeleteTags").await;
    let ops = stack.ops("ec2")[before..].to_vec();
    assert_prefix_then_repeats(
        &ops,
        &["DescribeVpcs", "CreateTags", "DeleteTags"],
        &["DescribeVpcs"],
    );

    let before = stack.ops("ec2").len();
    stack.delete::<Vpc>("main").await;
    stack.gone::<Vpc>("main").await;
    let ops = stack.ops("ec2")[before..].to_vec();
    assert_prefix_then_repeats(&ops, &["DescribeVpcs", "DeleteVpc"], &["DescribeVpcs"]);
    assert!(stack.stop().await.drained);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_table_is_creating_until_active_then_ready_and_is_updated_and_deleted() {
    let cloud = mock_cloud::Config::from_yaml(
        "provisioning: {database_create_ms: 3000, database_delete_ms: 3000}\n",
        "slow.yaml",
    )
    .unwrap();
    let mut stack = AwsStack::start(settings(), cloud, RetryMode::Standard, NO_STS).await;
    stack
        .create::<Table>(
            "apiVersion: dynamodb.aws.m.loadtest.dev/v1beta1\nkind: Table\nmetadata: {name: users, namespace: default}\n\
             spec: {forProvider: {region: us-east-1, billingMode: PAY_PER_REQUEST, attribute: [{name: id, type: S}], hashKey: id, tags: {team: a}}}\n",
        )
        .await;
    let table = stack.ready::<Table>("users").await;
    let at = table
        .status
        .and_then(|s| s.at_provider)
        .expect("atProvider");
    assert_eq!(at.status, "ACTIVE");
    assert_eq!(at.billing_mode.as_deref(), Some("PAY_PER_REQUEST"));
    let ops = stack.ops("dynamodb");
    let observes = assert_prefix_then_repeats(
        &ops,
        &["DescribeTable", "CreateTable"],
        &["DescribeTable", "ListTagsOfResource"],
    );
    assert!(observes >= 2, "CREATING, then ACTIVE: {ops:?}");

    let before = ops.len();
    stack
        .merge::<Table>(
            "users",
            serde_json::json!({"spec": {"forProvider": {"tags": {"team": "b"}}}}),
        )
        .await;
    stack.called("dynamodb", before, "TagResource").await;
    let ops = stack.ops("dynamodb")[before..].to_vec();
    assert_prefix_then_repeats(
        &ops,
        &["DescribeTable", "ListTagsOfResource", "TagResource"],
        &["DescribeTable", "ListTagsOfResource"],
    );

    let before = stack.ops("dynamodb").len();
    stack.delete::<Table>("users").await;
    stack.gone::<Table>("users").await;
    let ops = stack.ops("dynamodb")[before..].to_vec();
    assert_eq!(
        ops[..3],
        ["DescribeTable", "ListTagsOfResource", "DeleteTable"],
        "{ops:?}"
    );
    assert_eq!(
        ops.last().map(String::as_str),
        Some("DescribeTable"),
        "{ops:?}"
    );
    assert!(stack.stop().await.drained);
}
