//! The AWS flavour (feature `aws`) against mock-cloud's AWS front end on a loopback socket,
//! counted by mock-cloud's journal: Connect's STS calls per credential source and cache
//! policy, a Bucket through create, observe, update and delete, bad ProviderConfigs, and the
//! SDK's retries under S3 throttling.
//!
//! Real time: the SDK signs with the system clock, which mock-cloud checks.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use mock_cloud::{Call, Config, MockCloud};
use provider::aws::bucket::{self, BucketParameters, Encryption, Versioning};
use provider::aws::config::ProviderConfigSpec;
use provider::aws::connect::{Clients, ConnectError, Connector, CredentialCache, RetryMode};
use tokio::sync::oneshot;

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

struct Served {
    url: String,
    cloud: MockCloud,
    _stop: oneshot::Sender<()>,
}

async fn serve(config: Config) -> Served {
    let cloud = MockCloud::new(config).expect("valid config");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(mock_cloud::serve(listener, cloud.clone(), async {
        stopped.await.ok();
    }));
    Served {
        url,
        cloud,
        _stop: stop,
    }
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
    served: &Served,
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
async fn serve_and_connect(config: Config, region: &str) -> (Served, Clients) {
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

#[tokio::test]
async fn a_secret_connect_validates_with_one_get_caller_identity_and_none_with_both_skips() {
    let served = serve(Config::default()).await;
    let connector = Connector::new(RetryMode::Off, CredentialCache::None);
    let clients = connect(&connector, &spec(&served.url, ""), "us-east-1")
        .await
        .expect("connects");
    assert_eq!(clients.account_id, "000000000000");
    assert_eq!(sts_ops(&served.cloud.calls()), ["GetCallerIdentity"]);
    let skipping = spec(
        &served.url,
        "skip_credentials_validation: true\nskip_requesting_account_id: true\n",
    );
    connect(&connector, &skipping, "us-east-1")
        .await
        .expect("connects");
    assert_eq!(sts_ops(&served.cloud.calls()).len(), 1, "no STS call");
}

#[tokio::test]
async fn an_assume_role_chain_costs_one_assume_role_per_role_on_every_connect_unless_all_is_cached()
{
    let served = serve(Config::default()).await;
    let chain = spec(
        &served.url,
        "assumeRoleChain: [{roleARN: 'arn:aws:iam::000000000000:role/a'}, {roleARN: 'arn:aws:iam::000000000000:role/b'}]\n",
    );
    connect_times(CredentialCache::None, &chain, "eu-west-1", 2).await;
    assert_eq!(
        sts_ops(&served.cloud.calls()),
        ["AssumeRole", "AssumeRole", "GetCallerIdentity"].repeat(2)
    );
    let before = served.cloud.calls().len();
    let all = connect_times(CredentialCache::All, &chain, "eu-west-1", 3).await;
    assert_eq!(
        ops_since(&served.cloud.calls(), before),
        ["AssumeRole", "AssumeRole", "GetCallerIdentity"],
        "one Connect's calls, then the cache"
    );
    // Another region is another set of clients.
    connect(&all, &chain, "eu-west-2").await.expect("connects");
    assert_eq!(served.cloud.calls().len(), before + 6);
}

#[tokio::test]
async fn irsa_caching_keeps_only_the_web_identity_exchange() {
    let served = serve(Config::default()).await;
    let irsa = serde_saphyr::from_str::<ProviderConfigSpec>(&format!(
        "credentials: {{source: WebIdentity, webIdentity: {{roleARN: 'arn:aws:iam::000000000000:role/provider', tokenSecretRef: {{namespace: crossplane-system, name: irsa, key: credentials}}}}}}\n\
         assumeRoleChain: [{{roleARN: 'arn:aws:iam::000000000000:role/deployer'}}]\n\
         endpoint: {{services: [s3, sts], url: {{type: Static, static: '{}'}}}}\n",
        served.url
    ))
    .expect("valid");
    connect_times(CredentialCache::Irsa, &irsa, "us-east-1", 2).await;
    assert_eq!(
        sts_ops(&served.cloud.calls()),
        [
            "AssumeRoleWithWebIdentity",
            "AssumeRole",
            "GetCallerIdentity",
            "AssumeRole",
            "GetCallerIdentity"
        ]
    );
    let before = served.cloud.calls().len();
    connect_times(CredentialCache::None, &irsa, "us-east-1", 2).await;
    assert_eq!(
        ops_since(&served.cloud.calls(), before),
        [
            "AssumeRoleWithWebIdentity",
            "AssumeRole",
            "GetCallerIdentity"
        ]
        .repeat(2)
    );
}

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
async fn bad_provider_configs_fail_connect_with_a_message_to_act_on_and_call_nothing() {
    let served = serve(Config::default()).await;
    let connector = Connector::new(RetryMode::Standard, CredentialCache::All);
    let cases = [
        (
            spec(&served.url, "").with_secret("crossplane-system", "missing", "credentials"),
            "us-east-1",
            "cannot get credentials Secret crossplane-system/missing: create it, or fix spec.credentials.secretRef",
        ),
        (
            spec(&served.url, "").with_secret("crossplane-system", "aws", "creds"),
            "us-east-1",
            "credentials Secret crossplane-system/aws has no key \"creds\" (or it is not UTF-8 text)",
        ),
        (
            spec(&served.url, "").with_secret("crossplane-system", "empty", "credentials"),
            "us-east-1",
            "credentials Secret crossplane-system/empty key \"credentials\" has no [default] profile with aws_access_key_id and aws_secret_access_key",
        ),
        (
            spec(&served.url, ""),
            "moon-base-1",
            "region \"moon-base-1\" is not an AWS region: expected a name such as us-east-1 or eu-west-2 (or set skip_region_validation)",
        ),
        (
            spec("127.0.0.1:8080", ""),
            "us-east-1",
            "spec.endpoint.url.static \"127.0.0.1:8080\" is not a URL: expected http://host:port or https://host:port (no scheme)",
        ),
    ];
    for (spec, region, want) in cases {
        let err = connect(&connector, &spec, region)
            .await
            .expect_err("a bad config");
        assert!(matches!(err, ConnectError::Config(_)), "{err:?}");
        assert_eq!(err.to_string(), want);
    }
    let mut no_sts = spec(&served.url, "");
    if let Some(e) = no_sts.endpoint.as_mut() {
        e.services.retain(|s| s != "sts");
    }
    let err = connect(&connector, &no_sts, "us-east-1")
        .await
        .expect_err("no STS endpoint");
    assert_eq!(
        err.to_string(),
        "service sts is not in spec.endpoint.services: this provider reaches only the endpoints given there (it has no TLS for AWS's own)"
    );
    assert!(served.cloud.calls().is_empty(), "nothing reached the cloud");
    // A role of an account mock-cloud does not know: STS refuses, with its code.
    let stranger = spec(
        &served.url,
        "assumeRoleChain: [{roleARN: 'arn:aws:iam::999999999999:role/x'}]\n",
    );
    match connect(&connector, &stranger, "us-east-1").await {
        Err(ConnectError::Sts(e)) => {
            assert_eq!((e.service, e.operation), ("STS", "AssumeRole"));
            assert!(e.code.is_some(), "STS answered a code");
        }
        other => panic!("expected an STS error, got {other:?}"),
    }
}

trait WithSecret {
    fn with_secret(self, ns: &str, name: &str, key: &str) -> Self;
}

impl WithSecret for ProviderConfigSpec {
    fn with_secret(mut self, ns: &str, name: &str, key: &str) -> Self {
        let r = self
            .credentials
            .secret_ref
            .as_mut()
            .expect("a Secret source");
        r.namespace = ns.to_owned();
        r.name = name.to_owned();
        r.key = key.to_owned();
        self
    }
}

/// S3 reads limited to a burst of 4 and 1 per second for the whole class: an Observe's 15
/// reads are throttled with `SlowDown`.
fn throttled_reads() -> Config {
    Config::from_yaml(
        "quotas:\n  services:\n    s3:\n      classes:\n        read: {burst: 4, per_second: 1, per: class}\n",
        "throttled.yaml",
    )
    .expect("valid")
}

/// The sum of `provider_cloud_requests_total` over its label sets that contain `labels`.
fn counted(text: &str, labels: &str) -> usize {
    text.lines()
        .filter(|l| l.starts_with("provider_cloud_requests_total{") && l.contains(labels))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<usize>().ok())
        .sum()
}

#[tokio::test]
async fn a_throttled_observe_shows_the_sdks_retries_in_the_journal_within_three_attempts() {
    let served = serve(throttled_reads()).await;
    let metrics = provider::ProviderMetrics::new();
    let connector = Connector::new(RetryMode::Standard, CredentialCache::All)
        .with_requests(metrics.cloud_requests().clone());
    let spec = spec(
        &served.url,
        "skip_credentials_validation: true\nskip_requesting_account_id: true\n",
    );
    let clients = connect(&connector, &spec, "us-east-1").await.unwrap();
    bucket::create(
        &clients.s3,
        "throttled",
        &BucketParameters {
            region: "us-east-1".to_owned(),
            ..BucketParameters::default()
        },
    )
    .await
    .expect("writes are not limited");
    let start = served.cloud.calls().len();
    let outcome = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        bucket::observe(&clients.s3, "throttled"),
    )
    .await
    .expect("the SDK's retries end within 3 attempts an operation");
    let calls = served.cloud.calls()[start..].to_vec();
    let mut attempts: BTreeMap<&str, usize> = BTreeMap::new();
    for c in &calls {
        *attempts.entry(c.operation.as_str()).or_default() += 1;
    }
    assert!(
        calls.iter().any(|c| c.throttled && c.status == 503),
        "SlowDown answers: {calls:#?}"
    );
    assert!(
        attempts.values().any(|n| *n > 1),
        "the SDK retried: {attempts:?}"
    );
    assert!(
        attempts.values().all(|n| *n <= 3),
        "standard mode makes at most 3 attempts: {attempts:?}"
    );
    // Every retry follows a throttle of the same operation.
    for (op, n) in &attempts {
        let throttled = calls
            .iter()
            .filter(|c| c.operation == *op && c.throttled)
            .count();
        assert!(
            *n <= throttled + 1,
            "{op}: {n} attempts, {throttled} throttled"
        );
    }
    if let Err(e) = outcome {
        assert_eq!(e.code.as_deref(), Some("SlowDown"), "{e}");
    }
    // The provider's own count has every attempt the journal has, retries included, each
    // with its status and operation.
    let journal = served.cloud.calls();
    let text = metrics.encode().unwrap();
    assert_eq!(counted(&text, ""), journal.len(), "{text}");
    assert_eq!(
        counted(&text, "code=\"503\""),
        journal.iter().filter(|c| c.status == 503).count(),
        "{text}"
    );
    assert!(
        text.contains("provider_cloud_requests_total{action=\"HeadBucket\",code=\""),
        "{text}"
    );

    // With retries off, each operation is tried once and the first throttle fails Observe.
    let off = Connector::new(RetryMode::Off, CredentialCache::None);
    let clients = connect(&off, &spec, "us-east-1").await.unwrap();
    let start = served.cloud.calls().len();
    let mut err = None;
    for _ in 0..3 {
        if let Err(e) = bucket::observe(&clients.s3, "throttled").await {
            err = Some(e);
            break;
        }
    }
    let err = err.expect("a burst of 4 cannot serve 15 reads at once");
    let calls = served.cloud.calls()[start..].to_vec();
    assert_eq!(
        calls.iter().filter(|c| c.throttled).count(),
        1,
        "no retry after the throttle"
    );
    let last = calls.last().expect("calls");
    assert!(last.throttled && last.status == 503, "{last:?}");
    assert_eq!(err.operation, last.operation);
    // A HEAD answer has no body, so only the other operations carry S3's code.
    if err.operation != "HeadBucket" {
        assert_eq!(err.code.as_deref(), Some("SlowDown"), "{err}");
    }
}

#[cfg(feature = "aws-vpc")]
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
