//! EC2 through the real aws-sdk-ec2: VPCs and tags round-trip with filters and pages,
//! bad input gets EC2's own codes, throttles are 503 `RequestLimitExceeded` that the
//! SDK's standard mode retries, a wrong secret is `AuthFailure`; and below the SDK, the
//! envelope, the request-token buckets per category and faults per operation.

use std::time::Duration;

use aws_sdk_ec2::error::ProvideErrorMetadata;
use aws_sdk_ec2::types::{
    AttributeBooleanValue, Filter, ResourceType, Tag, TagSpecification, VpcState,
};
use aws_smithy_types::retry::RetryConfig;
use mock_cloud::{Config, Per, Rate, Service};

use crate::aws_support::{default_ec2, ec2, keys, one_quota, serve, standard_retry, thrice};

fn code<E: ProvideErrorMetadata>(e: &E) -> &str {
    e.code().unwrap_or_default()
}

fn tag(key: &str, value: &str) -> Tag {
    Tag::builder().key(key).value(value).build()
}

fn filter(name: &str, values: &[&str]) -> Filter {
    let mut f = Filter::builder().name(name);
    for v in values {
        f = f.values(*v);
    }
    f.build()
}

async fn create_vpc(client: &aws_sdk_ec2::Client, cidr: &str, name: &str) -> String {
    let created = client
        .create_vpc()
        .cidr_block(cidr)
        .tag_specifications(
            TagSpecification::builder()
                .resource_type(ResourceType::Vpc)
                .tags(tag("Name", name))
                .build(),
        )
        .send()
        .await
        .unwrap();
    created.vpc().unwrap().vpc_id().unwrap().to_owned()
}

#[tokio::test]
async fn every_ec2_operation_round_trips_through_the_real_sdk() {
    let served = serve(Config::default()).await;
    let client = default_ec2(&served.url);

    let created = client
        .create_vpc()
        .cidr_block("10.0.0.0/16")
        .tag_specifications(
            TagSpecification::builder()
                .resource_type(ResourceType::Vpc)
                .tags(tag("Name", "web"))
                .tags(tag("team", "a"))
                .build(),
        )
        .send()
        .await
        .unwrap();
    let vpc = created.vpc().unwrap();
    let id = vpc.vpc_id().unwrap().to_owned();
    assert!(id.starts_with("vpc-") && id.len() == 21, "{id}");
    assert_eq!(vpc.state(), Some(&VpcState::Pending));
    assert_eq!(vpc.cidr_block(), Some("10.0.0.0/16"));
    assert_eq!(vpc.owner_id(), Some("000000000000"));
    assert_eq!(vpc.tags().len(), 2);
    assert_eq!(
        vpc.cidr_block_association_set()[0].cidr_block(),
        Some("10.0.0.0/16")
    );
    let other = create_vpc(&client, "10.1.0.0/16", "db").await;

    // By ID, by tag, by tag key, by CIDR, with wildcards; filters are ANDed.
    let by_id = client.describe_vpcs().vpc_ids(&id).send().await.unwrap();
    assert_eq!(by_id.vpcs().len(), 1);
    assert_eq!(by_id.vpcs()[0].state(), Some(&VpcState::Available));
    assert_eq!(
        by_id.vpcs()[0].instance_tenancy().unwrap().as_str(),
        "default"
    );
    assert!(
        by_id.vpcs()[0]
            .dhcp_options_id()
            .unwrap()
            .starts_with("dopt-")
    );
    let ids_of = |out: &aws_sdk_ec2::operation::describe_vpcs::DescribeVpcsOutput| {
        out.vpcs()
            .iter()
            .map(|v| v.vpc_id().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let named = client
        .describe_vpcs()
        .filters(filter("tag:Name", &["we*"]))
        .send()
        .await
        .unwrap();
    assert_eq!(ids_of(&named), std::slice::from_ref(&id));
    let keyed = client
        .describe_vpcs()
        .filters(filter("tag-key", &["team"]))
        .filters(filter("cidr", &["10.0.0.0/16", "10.9.0.0/16"]))
        .send()
        .await
        .unwrap();
    assert_eq!(ids_of(&keyed), std::slice::from_ref(&id));
    let none = client
        .describe_vpcs()
        .filters(filter("tag:Name", &["web"]))
        .filters(filter("vpc-id", &[&other]))
        .send()
        .await
        .unwrap();
    assert!(none.vpcs().is_empty());

    client
        .modify_vpc_attribute()
        .vpc_id(&id)
        .enable_dns_hostnames(AttributeBooleanValue::builder().value(true).build())
        .send()
        .await
        .unwrap();

    // Tags: add, overwrite, list with filters, delete by key and by key and value.
    client
        .create_tags()
        .resources(&id)
        .resources(&other)
        .tags(tag("env", "prod"))
        .tags(tag("team", "b"))
        .send()
        .await
        .unwrap();
    let described = client
        .describe_tags()
        .filters(filter("resource-id", &[&id]))
        .send()
        .await
        .unwrap();
    let tags: Vec<(&str, &str)> = described
        .tags()
        .iter()
        .map(|t| (t.key().unwrap(), t.value().unwrap()))
        .collect();
    assert_eq!(tags, [("Name", "web"), ("env", "prod"), ("team", "b")]);
    assert!(
        described
            .tags()
            .iter()
            .all(|t| t.resource_type() == Some(&ResourceType::Vpc)
                && t.resource_id() == Some(id.as_str()))
    );
    client
        .delete_tags()
        .resources(&id)
        .tags(Tag::builder().key("env").build())
        .tags(tag("team", "not-b"))
        .send()
        .await
        .unwrap();
    let left = client
        .describe_tags()
        .filters(filter("resource-id", &[&id]))
        .send()
        .await
        .unwrap();
    let keys_left: Vec<&str> = left.tags().iter().map(|t| t.key().unwrap()).collect();
    assert_eq!(
        keys_left,
        ["Name", "team"],
        "a value that differs keeps the tag"
    );
    let everywhere = client
        .describe_tags()
        .filters(filter("key", &["env"]))
        .send()
        .await
        .unwrap();
    assert_eq!(everywhere.tags().len(), 1);
    assert_eq!(everywhere.tags()[0].resource_id(), Some(other.as_str()));

    client.delete_vpc().vpc_id(&other).send().await.unwrap();
    let e = client
        .describe_vpcs()
        .vpc_ids(&other)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InvalidVpcID.NotFound");
    assert_eq!(
        e.message(),
        Some(format!("The vpc ID '{other}' does not exist").as_str())
    );
    let e = client.delete_vpc().vpc_id(&other).send().await.unwrap_err();
    assert_eq!(code(&e), "InvalidVpcID.NotFound");

    // Another region does not see the VPC.
    let west = ec2(
        &served.url,
        keys("default", "default"),
        "us-west-2",
        RetryConfig::disabled(),
    );
    assert!(west.describe_vpcs().send().await.unwrap().vpcs().is_empty());

    // Every call is journalled with its service and operation.
    let calls = served.cloud.calls();
    assert!(calls.iter().all(|c| c.service == "ec2"), "{calls:#?}");
    let ops: std::collections::BTreeSet<&str> =
        calls.iter().map(|c| c.operation.as_str()).collect();
    assert_eq!(ops.len(), 7, "{ops:?}");
    let modify = calls
        .iter()
        .find(|c| c.operation == "ModifyVpcAttribute")
        .unwrap();
    assert_eq!((modify.name.as_str(), modify.status), (id.as_str(), 200));
    // A DescribeVpcs names its VPC when it reads exactly one (how a poll is matched to it).
    let describes: Vec<&str> = calls
        .iter()
        .filter(|c| c.operation == "DescribeVpcs")
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(describes[0], id, "by ID: {describes:?}");
    assert_eq!(describes[1], "", "by filter: {describes:?}");
}

#[tokio::test]
async fn describe_calls_page_as_ec2_does_and_the_sdks_paginator_follows() {
    let served = serve(Config::default()).await;
    let client = default_ec2(&served.url);
    let mut created = Vec::new();
    for i in 0..7 {
        created.push(create_vpc(&client, &format!("10.{i}.0.0/16"), &format!("n{i}")).await);
    }
    created.sort();
    let first = client.describe_vpcs().max_results(5).send().await.unwrap();
    assert_eq!(first.vpcs().len(), 5);
    let token = first.next_token().unwrap().to_owned();
    let second = client
        .describe_vpcs()
        .max_results(5)
        .next_token(token)
        .send()
        .await
        .unwrap();
    assert_eq!(second.vpcs().len(), 2);
    assert_eq!(second.next_token(), None);

    let mut pages = client
        .describe_vpcs()
        .max_results(5)
        .into_paginator()
        .items()
        .send();
    let mut seen = Vec::new();
    while let Some(vpc) = pages.next().await {
        seen.push(vpc.unwrap().vpc_id().unwrap().to_owned());
    }
    assert_eq!(seen, created);

    let mut tag_pages = client
        .describe_tags()
        .max_results(5)
        .into_paginator()
        .items()
        .send();
    let mut tags = 0;
    while let Some(t) = tag_pages.next().await {
        assert_eq!(t.unwrap().key(), Some("Name"));
        tags += 1;
    }
    assert_eq!(tags, 7);

    let e = client
        .describe_vpcs()
        .max_results(3)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InvalidParameterValue");
    assert_eq!(
        e.message(),
        Some("Value ( 3 ) for parameter maxResults is invalid. Expecting a value greater than 5.")
    );
    let e = client
        .describe_vpcs()
        .next_token("not a token!")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InvalidPaginationToken");
}

#[tokio::test]
async fn bad_input_gets_ec2s_own_codes_through_the_sdk() {
    let served = serve(Config::default()).await;
    let client = default_ec2(&served.url);
    let e = client.create_vpc().send().await.unwrap_err();
    assert_eq!(code(&e), "MissingParameter");
    let e = client
        .create_vpc()
        .cidr_block("10.0.0.0/8")
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        (code(&e), e.message()),
        (
            "InvalidVpc.Range",
            Some("The CIDR '10.0.0.0/8' is invalid.")
        )
    );
    let e = client
        .create_vpc()
        .cidr_block("10.0.0.300/16")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InvalidParameterValue");
    let e = client
        .describe_vpcs()
        .filters(filter("colour", &["blue"]))
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        (code(&e), e.message()),
        (
            "InvalidParameterValue",
            Some("The filter 'colour' is invalid")
        )
    );

    // A dry run of a request that would succeed is 412 DryRunOperation, and changes nothing.
    let e = client
        .create_vpc()
        .cidr_block("10.0.0.0/16")
        .dry_run(true)
        .send()
        .await
        .unwrap_err();
    assert_eq!(e.raw_response().map(|r| r.status().as_u16()), Some(412));
    assert_eq!(code(&e), "DryRunOperation");
    assert!(
        client
            .describe_vpcs()
            .send()
            .await
            .unwrap()
            .vpcs()
            .is_empty()
    );

    let id = create_vpc(&client, "10.0.0.0/16", "x").await;
    let on = || AttributeBooleanValue::builder().value(true).build();
    let e = client
        .modify_vpc_attribute()
        .vpc_id(&id)
        .enable_dns_support(on())
        .enable_dns_hostnames(on())
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        (code(&e), e.message()),
        (
            "InvalidParameterCombination",
            Some(
                "Fields for multiple attribute types specified: enableDnsSupport, enableDnsHostnames"
            )
        )
    );
    let e = client
        .modify_vpc_attribute()
        .vpc_id(&id)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InvalidParameterCombination");
    let e = client
        .create_tags()
        .resources("vpc-0123456789abcdef0")
        .tags(tag("a", "b"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InvalidVpcID.NotFound");
    let e = client
        .create_tags()
        .resources("i-0123456789abcdef0")
        .tags(tag("a", "b"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InvalidID");
    let e = client
        .create_tags()
        .resources(&id)
        .tags(tag("aws:reserved", "b"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InvalidParameterValue");
    let mut many = client.create_tags().resources(&id);
    for i in 0..50 {
        many = many.tags(tag(&format!("k{i}"), "v"));
    }
    let e = many.send().await.unwrap_err();
    assert_eq!(code(&e), "TagLimitExceeded", "Name and 50 more are 51");
    let e = client.delete_vpc().send().await.unwrap_err();
    assert_eq!(
        (code(&e), e.message()),
        (
            "MissingParameter",
            Some("The request must contain the parameter VpcId")
        )
    );
    assert!(served.cloud.calls().iter().all(|c| c.status < 500));
}

#[tokio::test]
async fn a_wrong_secret_is_ec2s_auth_failure_and_an_unknown_key_too() {
    let served = serve(Config::default()).await;
    for credentials in [keys("default", "wrong"), keys("nobody", "default")] {
        let client = ec2(
            &served.url,
            credentials,
            "us-east-1",
            RetryConfig::disabled(),
        );
        let e = client.describe_vpcs().send().await.unwrap_err();
        assert_eq!(e.raw_response().map(|r| r.status().as_u16()), Some(401));
        assert_eq!(code(&e), "AuthFailure");
    }
    let calls = served.cloud.calls();
    assert_eq!(calls.len(), 2);
    assert!(
        calls
            .iter()
            .all(|c| c.operation == "DescribeVpcs" && c.status == 401)
    );
}

/// EC2 quotas of one DescribeVpcs a second (burst 1), per operation.
fn one_describe_a_second() -> Config {
    one_quota(
        Service::Ec2,
        "non-mutating",
        Rate::new(1, 2.0),
        Per::Operation,
    )
}

#[tokio::test]
async fn a_throttle_is_a_503_request_limit_exceeded_that_the_sdks_standard_mode_retries() {
    let served = serve(one_describe_a_second()).await;
    let once = default_ec2(&served.url);
    once.describe_vpcs().send().await.unwrap();
    let e = once.describe_vpcs().send().await.unwrap_err();
    let raw = e.raw_response().unwrap();
    assert_eq!(raw.status().as_u16(), 503);
    assert!(raw.headers().get("x-amzn-requestid").is_some());
    assert_eq!(code(&e), "RequestLimitExceeded");
    assert_eq!(e.message(), Some("Request limit exceeded."));
    // Other categories have their own buckets.
    create_vpc(&once, "10.0.0.0/16", "a").await;

    let retrying = ec2(
        &served.url,
        keys("default", "default"),
        "us-east-1",
        standard_retry(10, Duration::from_millis(100)),
    );
    let (calls, throttled) = thrice(&served.cloud, async || {
        let out = retrying.describe_vpcs().send().await.unwrap();
        assert_eq!(out.vpcs().len(), 1);
    })
    .await;
    assert!(throttled >= 1, "the journal shows the retries: {calls:#?}");
    assert_eq!(calls.len(), 3 + throttled, "every attempt is journalled");
    assert!(calls.iter().all(|c| c.service == "ec2"
        && c.operation == "DescribeVpcs"
        && (c.status == 200 || (c.status == 503 && c.throttled))));
    let summary = served.cloud.summary();
    assert!(
        summary
            .violations
            .iter()
            .any(|v| v.layer.starts_with("ec2:")),
        "{:?}",
        summary.violations
    );
}

// Below the SDK, in process under paused time.
