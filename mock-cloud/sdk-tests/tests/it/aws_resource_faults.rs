//! Per-resource faults on the AWS front ends, through the real SDK clients over loopback:
//! each service answers a lasting error with its own code (the SDK parses it), a retry hint
//! rides on the error, and drift shows in the tags a read reports. The faults that depend
//! on a resource's life are in `aws_resource_windows.rs`.

use std::time::Duration;

use aws_sdk_s3::error::ProvideErrorMetadata;
use aws_smithy_types::retry::RetryConfig;
use mock_cloud::{Config, Faults, LastingError, ResourceEffect, ResourceFault, ResourceSelector};

use crate::aws_support::{
    create_table, default_ec2, default_s3, dynamodb, keys, s3_tagging, serve, table_tags,
};

pub(crate) fn rule(name: &str, effect: ResourceEffect) -> ResourceFault {
    ResourceFault {
        select: ResourceSelector {
            name: Some(name.to_owned()),
            ..ResourceSelector::default()
        },
        effect,
    }
}

pub(crate) fn error(error: LastingError) -> ResourceEffect {
    ResourceEffect::Error {
        error,
        code: None,
        actions: None,
    }
}

pub(crate) fn config(rules: Vec<ResourceFault>) -> Config {
    let mut faults = Faults::none();
    for r in rules {
        faults = faults.with_resource_fault(r);
    }
    Config::default().with_faults(faults)
}

#[tokio::test]
async fn s3_denies_and_conflicts_by_bucket_name_with_s3s_codes_and_a_retry_hint() {
    let served = serve(config(vec![
        rule("denied-*", error(LastingError::AccessDenied)),
        rule(
            "denied-*",
            ResourceEffect::RetryAfter {
                after: Duration::from_millis(2500),
            },
        ),
        rule("taken", error(LastingError::Conflict)),
    ]))
    .await;
    let s3 = default_s3(&served.url);
    let e = send!(s3.create_bucket("denied-1"))
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("AccessDenied"));
    let e = send!(s3.create_bucket("taken"))
        .unwrap_err()
        .into_service_error();
    assert!(e.is_bucket_already_exists(), "{e:?}");
    // A conflict fails only creates: the bucket made by another name answers.
    send!(s3.create_bucket("fine")).unwrap();
    send!(s3.head_bucket("fine")).unwrap();
    let calls = served.cloud.calls();
    let denied = &calls[0];
    assert_eq!((denied.status, denied.fault), (403, true));
    assert_eq!(denied.name, "denied-1");
    assert_eq!(denied.retry_after_ms, 2500, "x-amz-retry-after is kept");
    assert_eq!((calls[1].status, calls[1].retry_after_ms), (409, 0));
    assert!(!calls[2].fault && !calls[3].fault);
}

#[tokio::test]
async fn s3_drift_changes_the_tag_a_read_reports_and_never_what_is_stored() {
    let served = serve(config(vec![rule(
        "drifting",
        ResourceEffect::Drift {
            field: Some("team".into()),
        },
    )]))
    .await;
    let s3 = default_s3(&served.url);
    send!(s3.create_bucket("drifting")).unwrap();
    let tagging = s3_tagging("team", "red");
    for _ in 0..2 {
        send!(s3.put_bucket_tagging("drifting").tagging(tagging.clone())).unwrap();
        let read = send!(s3.get_bucket_tagging("drifting")).unwrap();
        let tags: Vec<_> = read
            .tag_set()
            .iter()
            .map(|t| (t.key(), t.value()))
            .collect();
        assert_eq!(tags, [("team", "red-drifted")]);
    }
}

#[tokio::test]
async fn dynamodb_answers_its_own_codes_per_table_and_reports_drifted_tags() {
    let served = serve(config(vec![
        rule("denied", error(LastingError::AccessDenied)),
        rule("taken", error(LastingError::Conflict)),
        rule("drifting", ResourceEffect::Drift { field: None }),
    ]))
    .await;
    let db = dynamodb(
        &served.url,
        keys("default", "default"),
        RetryConfig::disabled(),
    );
    let create = |name: &'static str| create_table(&db, name).send();
    let e = create("denied").await.unwrap_err().into_service_error();
    assert_eq!(e.code(), Some("AccessDeniedException"), "{e:?}");
    let e = create("taken").await.unwrap_err().into_service_error();
    assert!(e.is_resource_in_use_exception(), "{e:?}");
    assert_eq!(e.message(), Some("Table already exists: taken"));
    let e = db
        .describe_table()
        .table_name("denied")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("AccessDeniedException"));
    let arn = create("drifting")
        .await
        .unwrap()
        .table_description()
        .and_then(|t| t.table_arn())
        .unwrap()
        .to_owned();
    assert_eq!(
        table_tags(&db, &arn).await,
        [("drift".into(), "drifted".into())]
    );
    let statuses: Vec<(u16, bool)> = served
        .cloud
        .calls()
        .iter()
        .map(|c| (c.status, c.fault))
        .collect();
    assert_eq!(
        statuses,
        [
            (400, true),
            (400, true),
            (400, true),
            (200, false),
            (200, false)
        ]
    );
}

#[tokio::test]
async fn ec2_denies_a_vpc_by_id_and_reports_its_tags_drifted() {
    let served = serve(Config::default()).await;
    let ec2 = default_ec2(&served.url);
    let mut ids = Vec::new();
    for _ in 0..2 {
        let vpc = ec2
            .create_vpc()
            .cidr_block("10.0.0.0/16")
            .send()
            .await
            .unwrap();
        ids.push(vpc.vpc().unwrap().vpc_id().unwrap().to_owned());
    }
    // At run time, as the admin API does: the first VPC denied, the second drifting.
    served
        .cloud
        .set_faults(
            Faults::none()
                .with_resource_fault(rule(&ids[0], error(LastingError::AccessDenied)))
                .with_resource_fault(rule(
                    &ids[1],
                    ResourceEffect::Drift {
                        field: Some("Name".into()),
                    },
                )),
        )
        .unwrap();
    let e = ec2
        .describe_vpcs()
        .vpc_ids(&ids[0])
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("UnauthorizedOperation"));
    let e = ec2
        .delete_vpc()
        .vpc_id(&ids[0])
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("UnauthorizedOperation"));
    let read = ec2.describe_vpcs().vpc_ids(&ids[1]).send().await.unwrap();
    let tags: Vec<_> = read.vpcs()[0]
        .tags()
        .iter()
        .map(|t| (t.key().unwrap(), t.value().unwrap()))
        .collect();
    assert_eq!(tags, [("Name", "drifted")]);
    // A describe of both names no one resource: not faulted, not drifted.
    let both = ec2
        .describe_vpcs()
        .vpc_ids(&ids[0])
        .vpc_ids(&ids[1])
        .send()
        .await
        .unwrap();
    assert_eq!(both.vpcs().len(), 2);
    assert!(both.vpcs().iter().all(|v| v.tags().is_empty()));
}
