//! The AWS kinds through the provider's controllers, on paused time: mock-apiserver and
//! mock-cloud in process (the SDK clients on `aws::transport::in_process`), each kind
//! through create, observe, update and delete with the calls of `provider/README.md`'s table
//! counted in mock-cloud's journal; bad ProviderConfigs; a ProviderConfig's backoff; the two
//! scopes' buckets.

mod failures;
mod lifecycle;
mod scopes;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use limiter::crossplane::Settings;
use mock_apiserver::ApiServer;
use mock_cloud::MockCloud;
use provider::aws::AwsOptions;
use provider::aws::connect::{CredentialCache, RetryMode};
use provider::aws::kinds::ClusterProviderConfig;
use provider::crd::Managed;
use provider::{CloudClient, ProviderMetrics, ProviderOptions, RunSummary};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

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
