//! The SDK clients of the tests, pointed at a cloud served on loopback, and the signing
//! helpers of mock-cloud's own AWS tests (`signing`).

use aws_credential_types::Credentials;
use aws_sdk_dynamodb::operation::create_table::builders::CreateTableFluentBuilder;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, KeySchemaElement, KeyType, ScalarAttributeType,
};
use aws_smithy_types::retry::RetryConfig;
use mock_cloud::{
    Call, ClassQuota, Config, Loopback, MockCloud, Per, Quotas, Rate, Service, ServiceQuotas,
};

pub use crate::signing::*;

/// mock-cloud on `config`, served on loopback until dropped.
pub async fn serve(config: Config) -> Loopback {
    let cloud = MockCloud::new(config).expect("valid config");
    mock_cloud::serve_loopback(cloud)
        .await
        .expect("a loopback port")
}

/// Runs `op` three times; returns the calls the journal took meanwhile (every attempt, the
/// SDK's retries included) and how many of them were throttled.
pub async fn thrice(cloud: &MockCloud, mut op: impl AsyncFnMut()) -> (Vec<Call>, usize) {
    let before = cloud.journal_stats().next_seq;
    for _ in 0..3 {
        op().await;
    }
    let calls = cloud.calls_since(before);
    let throttled = calls.iter().filter(|c| c.throttled).count();
    (calls, throttled)
}

fn http_client() -> aws_smithy_runtime_api::client::http::SharedHttpClient {
    aws_smithy_http_client::Builder::new().build_http()
}

/// An S3 client of `credentials` in `region`, path-style, no retries unless `retry` says.
pub fn s3(
    url: &str,
    credentials: Credentials,
    region: &str,
    retry: aws_smithy_types::retry::RetryConfig,
) -> aws_sdk_s3::Client {
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
        .endpoint_url(url)
        .region(aws_sdk_s3::config::Region::new(region.to_owned()))
        .credentials_provider(credentials)
        .force_path_style(true)
        .retry_config(retry)
        .http_client(http_client())
        .build();
    aws_sdk_s3::Client::from_conf(config)
}

/// The default account's S3 client in us-east-1, without retries.
pub fn default_s3(url: &str) -> aws_sdk_s3::Client {
    s3(
        url,
        keys("default", "default"),
        "us-east-1",
        aws_smithy_types::retry::RetryConfig::disabled(),
    )
}

/// An STS client of `credentials` (none: only unsigned operations work), without retries.
pub fn sts(url: &str, credentials: Option<Credentials>) -> aws_sdk_sts::Client {
    sts_retrying(
        url,
        credentials,
        aws_smithy_types::retry::RetryConfig::disabled(),
    )
}

/// An STS client of `credentials` that retries as `retry` says.
pub fn sts_retrying(
    url: &str,
    credentials: Option<Credentials>,
    retry: aws_smithy_types::retry::RetryConfig,
) -> aws_sdk_sts::Client {
    let mut config = aws_sdk_sts::Config::builder()
        .behavior_version(aws_sdk_sts::config::BehaviorVersion::latest())
        .endpoint_url(url)
        .region(aws_sdk_sts::config::Region::new("us-east-1"))
        .retry_config(retry)
        .http_client(http_client());
    if let Some(credentials) = credentials {
        config = config.credentials_provider(credentials);
    }
    aws_sdk_sts::Client::from_conf(config.build())
}

/// An EC2 client of `credentials` in `region` that retries as `retry` says.
pub fn ec2(
    url: &str,
    credentials: Credentials,
    region: &str,
    retry: aws_smithy_types::retry::RetryConfig,
) -> aws_sdk_ec2::Client {
    let config = aws_sdk_ec2::Config::builder()
        .behavior_version(aws_sdk_ec2::config::BehaviorVersion::latest())
        .endpoint_url(url)
        .region(aws_sdk_ec2::config::Region::new(region.to_owned()))
        .credentials_provider(credentials)
        .retry_config(retry)
        .http_client(http_client())
        .build();
    aws_sdk_ec2::Client::from_conf(config)
}

/// The default account's EC2 client in us-east-1, without retries.
pub fn default_ec2(url: &str) -> aws_sdk_ec2::Client {
    ec2(
        url,
        keys("default", "default"),
        "us-east-1",
        aws_smithy_types::retry::RetryConfig::disabled(),
    )
}

/// A DynamoDB client of `credentials` in us-east-1 that retries as `retry` says.
pub fn dynamodb(
    url: &str,
    credentials: Credentials,
    retry: aws_smithy_types::retry::RetryConfig,
) -> aws_sdk_dynamodb::Client {
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
        .endpoint_url(url)
        .region(aws_sdk_dynamodb::config::Region::new("us-east-1"))
        .credentials_provider(credentials)
        .retry_config(retry)
        .http_client(http_client())
        .build();
    aws_sdk_dynamodb::Client::from_conf(config)
}

/// The default config with one quota, on `class` of `service`; every other limit off.
pub fn one_quota(service: Service, class: &str, rate: Rate, per: Per) -> Config {
    let quotas = ServiceQuotas::new().with_class(class, Some(ClassQuota::new(rate, per)));
    let mut config = Config::default();
    config.accounts[0].quotas = Quotas::unlimited().with_service(service, Some(quotas));
    config
}

/// A key schema element of the attribute `name`.
pub fn key(name: &str, kind: KeyType) -> KeySchemaElement {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(kind)
        .build()
        .unwrap()
}

/// A string attribute definition.
pub fn attribute(name: &str) -> AttributeDefinition {
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(ScalarAttributeType::S)
        .build()
        .unwrap()
}

/// CreateTable of `name`: a string hash key `id`, billed per request.
pub fn create_table(db: &aws_sdk_dynamodb::Client, name: &str) -> CreateTableFluentBuilder {
    db.create_table()
        .table_name(name)
        .attribute_definitions(attribute("id"))
        .key_schema(key("id", KeyType::Hash))
        .billing_mode(BillingMode::PayPerRequest)
}

/// The SDK's standard retry mode with `attempts` attempts, the first backoff `backoff`
/// (short, for the tests).
pub fn standard_retry(attempts: u32, backoff: std::time::Duration) -> RetryConfig {
    RetryConfig::standard()
        .with_max_attempts(attempts)
        .with_initial_backoff(backoff)
}

/// An S3 tag set of the one tag `key` = `value`.
pub fn s3_tagging(key: &str, value: &str) -> aws_sdk_s3::types::Tagging {
    let tag = aws_sdk_s3::types::Tag::builder()
        .key(key)
        .value(value)
        .build()
        .unwrap();
    aws_sdk_s3::types::Tagging::builder()
        .tag_set(tag)
        .build()
        .unwrap()
}

/// The tags of the DynamoDB table `arn`, as ListTagsOfResource lists them.
pub async fn table_tags(db: &aws_sdk_dynamodb::Client, arn: &str) -> Vec<(String, String)> {
    let listed = db
        .list_tags_of_resource()
        .resource_arn(arn)
        .send()
        .await
        .unwrap();
    listed
        .tags()
        .iter()
        .map(|t| (t.key().to_owned(), t.value().to_owned()))
        .collect()
}
