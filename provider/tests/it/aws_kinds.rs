//! The AWS kinds through the provider's controllers, on paused time: mock-apiserver and
//! mock-cloud in process (the SDK clients on `aws::transport::in_process`), each kind
//! through create, observe, update and delete with the calls of `provider/README.md`'s table
//! counted in mock-cloud's journal; bad ProviderConfigs; a ProviderConfig's backoff; the two
//! scopes' buckets.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use limiter::crossplane::Settings;
use mock_apiserver::ApiServer;
use mock_cloud::{Call, MockCloud};
use provider::aws::AwsOptions;
use provider::aws::connect::{CredentialCache, RetryMode};
#[cfg(feature = "aws-vpc")]
use provider::aws::kinds::Vpc;
use provider::aws::kinds::{ClusterBucket, ClusterProviderConfig, NamespacedBucket, Table};
use provider::crd::Managed;
use provider::{CloudClient, ProviderMetrics, ProviderOptions, RunSummary};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::aws::BUCKET_READ;
use crate::stack::{events_regarding, eventually, is_ready, spawn_provider};

const NS: &str = "default";
const SECRET_NS: &str = "default";

struct AwsStack {
    api: ApiServer,
    cloud: MockCloud,
    client: kube::Client,
    metrics: Arc<ProviderMetrics>,
    settings: Settings,
    retry_mode: RetryMode,
    running: Option<(oneshot::Sender<()>, JoinHandle<RunSummary>)>,
}

/// The ProviderConfig spec every test uses, plus `extra` YAML lines.
fn config_yaml(extra: &str) -> String {
    format!(
        "credentials: {{source: Secret, secretRef: {{namespace: {SECRET_NS}, name: aws, key: credentials}}}}\n\
         endpoint: {{services: [s3, sts, ec2, dynamodb], hostnameImmutable: true, url: {{type: Static, static: 'http://mock-cloud'}}}}\n\
         s3_use_path_style: true\n{extra}"
    )
}

impl AwsStack {
    /// The API server with every CRD, the Secret `crossplane-system/aws` (mock-cloud's
    /// default keys) and the ClusterProviderConfig `default` (`extra` added to its spec);
    /// the provider started with `settings` and the SDK clients in process.
    async fn start(
        settings: Settings,
        cloud: mock_cloud::Config,
        retry_mode: RetryMode,
        extra: &str,
    ) -> AwsStack {
        let api = ApiServer::default();
        api.load_crd_yaml(&provider::crd::crds_yaml().unwrap())
            .unwrap();
        let cloud = MockCloud::new(cloud).unwrap();
        let client = kube::Client::new(api.service(), NS);
        let secret = Secret {
            metadata: kube::api::ObjectMeta {
                name: Some("aws".into()),
                namespace: Some(SECRET_NS.into()),
                ..Default::default()
            },
            string_data: Some(BTreeMap::from([(
                "credentials".to_owned(),
                "[default]\naws_access_key_id = default\naws_secret_access_key = default\n"
                    .to_owned(),
            )])),
            ..Default::default()
        };
        Api::<Secret>::namespaced(client.clone(), SECRET_NS)
            .create(&PostParams::default(), &secret)
            .await
            .unwrap();
        let stack = AwsStack {
            api,
            cloud,
            client,
            metrics: Arc::new(ProviderMetrics::new()),
            settings,
            retry_mode,
            running: None,
        };
        stack.cluster_config("default", &config_yaml(extra)).await;
        let mut stack = stack;
        stack.launch();
        stack
    }

    /// Starts a provider (with new metrics) against the stack.
    fn launch(&mut self) {
        self.metrics = Arc::new(ProviderMetrics::new());
        let options = ProviderOptions::from_service(
            self.settings.clone(),
            self.api.service(),
            CloudClient::new(self.cloud.clone(), "http://mock-cloud"),
            Arc::clone(&self.metrics),
        )
        .shutdown_timeout(Duration::from_secs(2))
        .seed(7)
        .aws(AwsOptions {
            retry_mode: self.retry_mode,
            credential_cache: CredentialCache::None,
            http: Some(provider::aws::transport::in_process(self.cloud.clone())),
        });
        self.running = Some(spawn_provider(options));
    }

    /// [`AwsStack::start`] with the test settings, an unlimited cloud and standard retries.
    async fn open(extra: &str) -> AwsStack {
        AwsStack::start(
            settings(),
            mock_cloud::Config::default(),
            RetryMode::Standard,
            extra,
        )
        .await
    }

    async fn cluster_config(&self, name: &str, spec_yaml: &str) {
        let pc: ClusterProviderConfig = serde_saphyr::from_str(&format!(
            "apiVersion: aws.m.loadtest.dev/v1beta1\nkind: ClusterProviderConfig\nmetadata: {{name: {name}}}\nspec:\n{}",
            indent(spec_yaml)
        ))
        .expect("a valid ClusterProviderConfig");
        Api::<ClusterProviderConfig>::all(self.client.clone())
            .create(&PostParams::default(), &pc)
            .await
            .unwrap();
    }

    async fn stop(&mut self) -> RunSummary {
        let (stop, task) = self.running.take().expect("running");
        stop.send(()).ok();
        task.await.unwrap()
    }

    fn ops(&self, service: &str) -> Vec<String> {
        self.cloud
            .calls()
            .into_iter()
            .filter(|c| c.service == service)
            .map(|c| c.operation)
            .collect()
    }

    async fn create<K: Managed>(&self, yaml: &str) -> K {
        let obj: K = serde_saphyr::from_str(yaml).expect("a valid object");
        K::api(self.client.clone(), NS)
            .create(&PostParams::default(), &obj)
            .await
            .unwrap()
    }

    async fn get<K: Managed>(&self, name: &str) -> Option<K> {
        K::api(self.client.clone(), NS).get_opt(name).await.unwrap()
    }

    /// Waits (paused time) until `name` is Ready and Synced: at most one poll interval
    /// after it is available.
    async fn ready<K: Managed>(&self, name: &str) -> K {
        let ok = eventually(
            Duration::from_secs(900),
            Duration::from_millis(200),
            || async { self.get::<K>(name).await.is_some_and(|o| is_ready(&o)) },
        )
        .await;
        let obj = self.get::<K>(name).await;
        assert!(ok, "{name} did not become ready: {obj:#?}");
        obj.expect("exists")
    }

    /// Waits until `name` is gone.
    async fn gone<K: Managed>(&self, name: &str) {
        let ok = eventually(
            Duration::from_secs(120),
            Duration::from_millis(200),
            || async { self.get::<K>(name).await.is_none() },
        )
        .await;
        assert!(ok, "{name} was not deleted");
    }

    /// Waits until the journal of `service` has `op` after position `since`.
    async fn called(&self, service: &str, since: usize, op: &str) {
        let ok = eventually(
            Duration::from_secs(60),
            Duration::from_millis(200),
            || async { self.ops(service)[since..].iter().any(|o| o == op) },
        )
        .await;
        assert!(ok, "no {op} after {since}: {:?}", self.ops(service));
    }

    async fn merge<K: Managed>(&self, name: &str, patch: serde_json::Value) {
        K::api(self.client.clone(), NS)
            .patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .unwrap();
    }

    async fn delete<K: Managed>(&self, name: &str) {
        K::api(self.client.clone(), NS)
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
    }

    /// Event reasons and notes recorded for an object.
    async fn events(&self, name: &str) -> Vec<(String, String)> {
        events_regarding(&Api::all(self.client.clone()), name)
            .await
            .into_iter()
            .map(|e| (e.reason.unwrap_or_default(), e.note.unwrap_or_default()))
            .collect()
    }
}

fn indent(yaml: &str) -> String {
    yaml.lines().map(|l| format!("  {l}\n")).collect()
}

fn synced_message<K: Managed>(obj: &K) -> Option<String> {
    obj.managed_status()
        .and_then(|s| s.condition("Synced"))
        .filter(|c| c.status == "False")
        .and_then(|c| c.message.clone())
}

/// Splits `ops` after `prefix` into repetitions of `unit`, failing with the whole list if it
/// does not split so.
fn assert_prefix_then_repeats(ops: &[String], prefix: &[&str], unit: &[&str]) -> usize {
    assert!(
        ops.len() >= prefix.len() && ops[..prefix.len()] == *prefix,
        "expected {prefix:?} first, got {ops:?}"
    );
    let rest = &ops[prefix.len()..];
    assert!(
        rest.len().is_multiple_of(unit.len()) && rest.chunks(unit.len()).all(|c| c == unit),
        "after {prefix:?}, expected repetitions of {unit:?}, got {rest:?}"
    );
    rest.len() / unit.len()
}

/// Skipping both STS checks, `--credential-cache=none` makes no STS call at all: the journal
/// then holds only the kind's own calls.
const NO_STS: &str = "skip_credentials_validation: true\nskip_requesting_account_id: true\n";

fn settings() -> Settings {
    Settings::default().poll_interval(Duration::from_secs(600))
}

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

#[cfg(feature = "aws-vpc")]
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

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn bad_provider_configs_and_regions_fail_their_resources_with_a_message_and_an_event_only() {
    let mut stack = AwsStack::open(NO_STS).await;
    stack
        .cluster_config("no-credentials", "credentials: {}\n")
        .await;
    stack
        .cluster_config(
            "missing-key",
            &config_yaml(NO_STS).replace("key: credentials", "key: aws_credentials"),
        )
        .await;
    stack
        .cluster_config(
            "not-a-url",
            &config_yaml(NO_STS).replace("'http://mock-cloud'", "'mock-cloud:8080'"),
        )
        .await;
    let bucket = |name: &str, region: &str, config: &str| {
        format!(
            "apiVersion: s3.aws.m.loadtest.dev/v1beta1\nkind: Bucket\nmetadata: {{name: {name}, namespace: default}}\n\
             spec: {{forProvider: {{region: {region}}}, providerConfigRef: {{kind: ClusterProviderConfig, name: {config}}}}}\n"
        )
    };
    let cases = [
        (
            "no-credentials",
            "us-east-1",
            "connect failed: spec.credentials.source is not set: set it to Secret (with spec.credentials.secretRef) or WebIdentity (with spec.credentials.webIdentity)",
        ),
        (
            "missing-key",
            "us-east-1",
            "connect failed: credentials Secret default/aws has no key \"aws_credentials\" (or it is not UTF-8 text)",
        ),
        (
            "not-a-url",
            "us-east-1",
            "connect failed: spec.endpoint.url.static \"mock-cloud:8080\" is not a URL: expected http://host:port or https://host:port (no scheme)",
        ),
        (
            "default",
            "moon-base-1",
            "connect failed: region \"moon-base-1\" is not an AWS region: expected a name such as us-east-1 or eu-west-2 (or set skip_region_validation)",
        ),
        (
            "absent",
            "us-east-1",
            "connect failed: cannot get ClusterProviderConfig \"absent\": create it, or fix spec.providerConfigRef",
        ),
    ];
    for (i, (config, region, _)) in cases.iter().enumerate() {
        stack
            .create::<NamespacedBucket>(&bucket(&format!("bad-{i}"), region, config))
            .await;
    }
    stack
        .create::<NamespacedBucket>(&bucket("good", "eu-west-1", "default"))
        .await;
    stack.ready::<NamespacedBucket>("good").await;
    for (i, (_, _, want)) in cases.iter().enumerate() {
        let name = format!("bad-{i}");
        let ok = eventually(
            Duration::from_secs(30),
            Duration::from_millis(200),
            || async {
                stack
                    .get::<NamespacedBucket>(&name)
                    .await
                    .and_then(|b| synced_message(&b))
                    .is_some()
            },
        )
        .await;
        assert!(ok, "{name} got Synced=False");
        let obj = stack.get::<NamespacedBucket>(&name).await.expect("exists");
        assert_eq!(synced_message(&obj).as_deref(), Some(*want), "{name}");
        let events = stack.events(&name).await;
        assert!(
            events
                .iter()
                .any(|(reason, note)| reason == "CannotConnectToProvider" && note == want),
            "{name}: {events:?}"
        );
    }
    // Nothing reached the cloud for the bad ones.
    let names: Vec<String> = stack.cloud.calls().into_iter().map(|c| c.name).collect();
    assert!(names.iter().all(|n| !n.starts_with("bad-")), "{names:?}");
    assert!(stack.stop().await.drained);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_throttled_client_retries_no_more_than_its_500_token_retry_quota_allows() {
    use provider::aws::config::ProviderConfigSpec;
    use provider::aws::connect::Connector;
    // S3 reads: a burst of 1, then 1 per 1000 s: every read after the first is throttled.
    let cloud = MockCloud::new(
        mock_cloud::Config::from_yaml(
            "quotas:\n  services:\n    s3:\n      classes:\n        read: {burst: 1, per_second: 0.001, per: class}\n",
            "throttled.yaml",
        )
        .unwrap(),
    )
    .unwrap();
    let connector = Connector::new(RetryMode::Standard, CredentialCache::All)
        .with_http_client(provider::aws::transport::in_process(cloud.clone()))
        .with_clock(provider::reconciler::meta::Clock::new());
    let spec: ProviderConfigSpec = serde_saphyr::from_str(&config_yaml(NO_STS)).unwrap();
    let secrets = |_: &str, _: &str| {
        Some(Secret {
            string_data: Some(BTreeMap::from([(
                "credentials".to_owned(),
                "[default]\naws_access_key_id = default\naws_secret_access_key = default\n"
                    .to_owned(),
            )])),
            ..Default::default()
        })
    };
    let clients = connector
        .connect("default", &spec, "us-east-1", &secrets)
        .await
        .expect("connects");
    const OPERATIONS: usize = 70;
    let mut codes = BTreeMap::<String, usize>::new();
    for _ in 0..OPERATIONS {
        let out = clients
            .s3
            .get_bucket_tagging()
            .bucket("absent")
            .send()
            .await;
        let code = match out {
            Ok(_) => "ok".to_owned(),
            Err(e) => aws_sdk_s3::error::ProvideErrorMetadata::code(&e)
                .unwrap_or("none")
                .to_owned(),
        };
        *codes.entry(code).or_default() += 1;
    }
    let calls: Vec<Call> = cloud
        .calls()
        .into_iter()
        .filter(|c| c.service == "s3")
        .collect();
    // The first read fits the burst (NoSuchBucket: not retried). Each later one is
    // throttled on all 3 attempts while the quota lasts: 2 retries of 5 tokens each, so
    // 500 tokens pay for 50 operations' retries; after that, 1 attempt each.
    let retries = calls.len() - OPERATIONS;
    assert_eq!(retries, 500 / 5, "{codes:?}");
    assert_eq!(calls.len(), 1 + 50 * 3 + (OPERATIONS - 51), "{codes:?}");
    assert_eq!(
        calls.iter().filter(|c| c.throttled).count(),
        calls.len() - 1
    );
    assert_eq!(codes.get("SlowDown"), Some(&(OPERATIONS - 1)), "{codes:?}");
    assert_eq!(codes.get("NoSuchBucket"), Some(&1), "{codes:?}");
    // The last 19 operations were tried once each: no retry without tokens.
    let tail: Vec<bool> = calls[calls.len() - 19..]
        .iter()
        .map(|c| c.throttled)
        .collect();
    assert!(tail.iter().all(|t| *t));
}

/// Reconciles of a resource whose Connect fails, in `seconds` of paused time.
async fn failing_reconciles(policy: &str, seconds: u64) -> u64 {
    let mut stack = AwsStack::start(
        Settings::default(),
        mock_cloud::Config::default(),
        RetryMode::Standard,
        &format!("{NO_STS}{policy}"),
    )
    .await;
    stack
        .create::<NamespacedBucket>(
            "apiVersion: s3.aws.m.loadtest.dev/v1beta1\nkind: Bucket\nmetadata: {name: b, namespace: default}\n\
             spec: {forProvider: {region: nowhere}}\n",
        )
        .await;
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let total = stack
        .metrics
        .reconciles()
        .total("Bucket.s3.aws.m.loadtest.dev");
    assert!(stack.stop().await.drained);
    total
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_provider_configs_reconciliation_policy_backoff_wins_over_the_flags() {
    // The flags' default: 1s doubling (reconciles at 0, 1, 3, 7, 15, 31, 63 s, then every
    // 60 s: 7 in 100 s). The policy: 30s doubling to 60s (at 0, 30, 90 s: 3).
    let flags = failing_reconciles("", 100).await;
    let policy = failing_reconciles(
        "reconciliationPolicy: {exponentialFailureRateLimiter: {baseDelay: 30s, maxDelay: 60s}}\n",
        100,
    )
    .await;
    assert_eq!((flags, policy), (7, 3));
}

/// Reconciles per second, from 5 s to 10 s after a provider restart, of a backlog of 200
/// cluster-scoped Buckets and 200 VPCs that are ready: every one is observed once, with one
/// status write. The bursts come first (with two buckets, their 2 × 100 tokens outrun the
/// API client's QPS 5R with burst 10R: 50/s for 4 s), then R/s per global bucket. The
/// resources are created once; each of `scoped_buckets` is then a restart of its own.
#[cfg(feature = "aws-vpc")]
async fn backlog_rates(scoped_buckets: [bool; 2]) -> [f64; 2] {
    let mut stack = AwsStack::start(
        settings(),
        mock_cloud::Config::default(),
        RetryMode::Standard,
        NO_STS,
    )
    .await;
    let buckets = Api::<ClusterBucket>::all(stack.client.clone());
    for i in 0..200 {
        let b: ClusterBucket = serde_saphyr::from_str(&format!(
            "apiVersion: s3.aws.loadtest.dev/v1beta1\nkind: Bucket\nmetadata: {{name: b-{i}}}\n\
             spec: {{forProvider: {{region: us-east-1}}}}\n"
        ))
        .unwrap();
        buckets.create(&PostParams::default(), &b).await.unwrap();
        stack
            .create::<Vpc>(&format!(
                "apiVersion: ec2.aws.m.loadtest.dev/v1beta1\nkind: VPC\nmetadata: {{name: v-{i}, namespace: default}}\n\
                 spec: {{forProvider: {{region: us-east-1, cidrBlock: 10.0.0.0/16}}}}\n"
            ))
            .await;
    }
    let all_ready = eventually(Duration::from_secs(600), Duration::from_secs(1), || async {
        let b = buckets.list(&ListParams::default()).await.unwrap().items;
        let v = Api::<Vpc>::namespaced(stack.client.clone(), NS)
            .list(&ListParams::default())
            .await
            .unwrap()
            .items;
        b.iter().all(is_ready) && v.iter().all(is_ready)
    })
    .await;
    assert!(all_ready, "the 400 resources became ready");
    assert!(stack.stop().await.drained);
    let total = |s: &AwsStack| {
        s.metrics.reconciles().total("Bucket.s3.aws.loadtest.dev")
            + s.metrics.reconciles().total("VPC.ec2.aws.m.loadtest.dev")
    };
    let mut rates = [0.0; 2];
    for (rate, scoped) in rates.iter_mut().zip(scoped_buckets) {
        stack.settings = settings().scoped_buckets(scoped);
        stack.launch();
        tokio::time::sleep(Duration::from_secs(5)).await;
        let before = total(&stack);
        tokio::time::sleep(Duration::from_secs(5)).await;
        *rate = (total(&stack) - before) as f64 / 5.0;
        assert!(stack.stop().await.drained);
    }
    rates
}

#[cfg(feature = "aws-vpc")]
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn two_scopes_at_r_10_drain_at_20_per_second_with_scoped_buckets_and_10_without() {
    let [scoped, shared] = backlog_rates([true, false]).await;
    assert!((19.0..=21.0).contains(&scoped), "scoped: {scoped}/s");
    assert!((9.5..=10.5).contains(&shared), "shared: {shared}/s");
}
