//! The AWS flavour (feature `aws`) against mock-cloud's AWS front end on a loopback socket,
//! counted by mock-cloud's journal: Connect's STS calls per credential source and cache
//! policy, a Bucket through create, observe, update and delete, bad ProviderConfigs, and the
//! SDK's retries under S3 throttling.
//!
//! Real time: the SDK signs with the system clock, which mock-cloud checks.

mod credentials;
mod resources;
mod throttling;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use mock_cloud::{Call, Config, Loopback, MockCloud};
use provider::aws::config::ProviderConfigSpec;
use provider::aws::connect::{Clients, ConnectError, Connector, CredentialCache, RetryMode};

/// Terraform's read of a bucket (an Observe of one that exists), as the journal shows it.
pub const BUCKET_READ: [&str; 15] = [
    "HeadBucket",
    "GetBucketPolicy",
    "GetBucketAcl",
    "GetBucketCors",
    "GetBucketWebsite",
    "GetBucketVersioning",
    "GetBucketAccelerateConfiguration",
    "GetBucketRequestPayment",
    "GetBucketLogging",
    "GetBucketLifecycleConfiguration",
    "GetBucketReplication",
    "GetBucketEncryption",
    "GetObjectLockConfiguration",
    "GetBucketLocation",
    "GetBucketTagging",
];

/// mock-cloud on `config`, served on loopback.
async fn serve(config: Config) -> Loopback {
    let cloud = MockCloud::new(config).expect("valid config");
    mock_cloud::serve_loopback(cloud)
        .await
        .expect("a loopback port")
}

/// A web identity token: JWT-shaped, `exp` in 2100 (mock-cloud checks only that).
const TOKEN: &str = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6Y3Jvc3NwbGFuZS1zeXN0ZW06cHJvdmlkZXItYXdzIiwiZXhwIjo0MTAyNDQ0ODAwfQ.c2ln";

fn secrets(ns: &str, name: &str) -> Option<Secret> {
    let text = match (ns, name) {
        ("crossplane-system", "aws") => {
            "[default]\naws_access_key_id = default\naws_secret_access_key = default\n"
        }
        ("crossplane-system", "irsa") => TOKEN,
        ("crossplane-system", "empty") => "[default]\n",
        _ => return None,
    };
    Some(Secret {
        string_data: Some(BTreeMap::from([(
            "credentials".to_owned(),
            text.to_owned(),
        )])),
        ..Secret::default()
    })
}

fn spec(url: &str, extra: &str) -> ProviderConfigSpec {
    serde_saphyr::from_str(&format!(
        "credentials: {{source: Secret, secretRef: {{namespace: crossplane-system, name: aws, key: credentials}}}}\n\
         endpoint: {{services: [s3, sts, ec2, dynamodb], hostnameImmutable: true, url: {{type: Static, static: '{url}'}}}}\n\
         s3_use_path_style: true\n{extra}"
    ))
    .expect("a valid spec")
}

fn sts_ops(calls: &[Call]) -> Vec<&str> {
    calls
        .iter()
        .filter(|c| c.service == "sts")
        .map(|c| c.operation.as_str())
        .collect()
}

fn ops_since(calls: &[Call], since: usize) -> Vec<&str> {
    calls[since..]
        .iter()
        .map(|c| c.operation.as_str())
        .collect()
}

/// The cloud operations that `update` calls; it must succeed.
async fn ops_during<E: std::fmt::Debug>(
    served: &Loopback,
    update: impl std::future::Future<Output = Result<(), E>>,
) -> Vec<String> {
    let start = served.cloud.calls().len();
    update.await.expect("updates");
    ops_since(&served.cloud.calls(), start)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

async fn connect(
    c: &Connector,
    spec: &ProviderConfigSpec,
    region: &str,
) -> Result<Clients, ConnectError> {
    c.connect("default", spec, region, &secrets).await
}

/// mock-cloud on `config`, and the clients of a Connect for `region` with the default
/// ProviderConfig (standard retries, everything cached).
async fn serve_and_connect(config: Config, region: &str) -> (Loopback, Clients) {
    let served = serve(config).await;
    let connector = Connector::new(RetryMode::Standard, CredentialCache::All);
    let clients = connect(&connector, &spec(&served.url, ""), region)
        .await
        .expect("connects");
    (served, clients)
}

/// A connector caching as `cache` (standard retries) after `times` Connects with `spec`.
async fn connect_times(
    cache: CredentialCache,
    spec: &ProviderConfigSpec,
    region: &str,
    times: usize,
) -> Connector {
    let connector = Connector::new(RetryMode::Standard, cache);
    for _ in 0..times {
        connect(&connector, spec, region).await.expect("connects");
    }
    connector
}
