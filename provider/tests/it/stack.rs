//! An in-process stack: mock-apiserver and mock-cloud as tower Services, the provider
//! running against them, and helpers to create resources and wait (on tokio time).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::{Api, ListParams, PostParams};
use limiter::crossplane::Settings;
use mock_apiserver::ApiServer;
use mock_cloud::MockCloud;
use provider::crd::{
    Bucket, BucketSpec, Condition, Database, DatabaseParameters, DatabaseSpec, Managed,
    ProviderConfig, ProviderConfigReference, ProviderConfigSpec, ProviderCredentials, Record,
    RecordParameters, RecordSpec, SecretKeySelector,
};
use provider::{CloudClient, Provider, ProviderMetrics, ProviderOptions, RunSummary};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub const NS: &str = "default";

/// The whole stack in one process.
pub struct Stack {
    pub api: ApiServer,
    pub cloud: MockCloud,
    /// A client for the test itself (not limited, not counted).
    pub client: kube::Client,
    pub metrics: Arc<ProviderMetrics>,
    pub settings: Settings,
    running: Option<(oneshot::Sender<()>, JoinHandle<RunSummary>)>,
}

impl Stack {
    /// The API server with our CRDs, a ProviderConfig `default` for the cloud's `default`
    /// account, and the cloud built from `cloud`. The provider is not started.
    pub async fn new(settings: Settings, cloud: mock_cloud::Config) -> Stack {
        let api = ApiServer::default();
        api.load_crd_yaml(&provider::crd::crds_yaml().unwrap())
            .unwrap();
        let cloud = MockCloud::new(cloud).unwrap();
        let client = kube::Client::new(api.service(), NS);
        let stack = Stack {
            api,
            cloud,
            client,
            metrics: Arc::new(ProviderMetrics::new()),
            settings,
            running: None,
        };
        stack.provider_config("default", "default", "default").await;
        stack
    }

    /// A ProviderConfig `name` for `account`, with its token in a Secret.
    pub async fn provider_config(&self, name: &str, account: &str, token: &str) {
        provider_config_objects_for(&self.client, name, account, token).await;
    }

    /// Starts the provider with the cloud's in-process service.
    pub fn start(&mut self) {
        let cloud = CloudClient::new(self.cloud.clone(), "http://mock-cloud");
        self.start_with(cloud);
    }

    /// Starts the provider with a given cloud client.
    pub fn start_with(&mut self, cloud: CloudClient) {
        assert!(self.running.is_none(), "already running");
        let options = ProviderOptions::from_service(
            self.settings.clone(),
            self.api.service(),
            cloud,
            Arc::clone(&self.metrics),
        )
        .shutdown_timeout(Duration::from_secs(2));
        self.running = Some(spawn_provider(options));
    }

    /// Stops the provider (as SIGTERM does) and returns how it ended.
    pub async fn stop(&mut self) -> RunSummary {
        let (stop, task) = self.running.take().expect("running");
        stop.send(()).ok();
        task.await.unwrap()
    }

    pub fn api<K: Managed>(&self) -> Api<K> {
        K::api(self.client.clone(), NS)
    }

    pub async fn create<K: Managed>(&self, obj: &K) -> K {
        self.api::<K>()
            .create(&PostParams::default(), obj)
            .await
            .unwrap()
    }

    pub async fn get<K: Managed>(&self, name: &str) -> Option<K> {
        self.api::<K>().get_opt(name).await.unwrap()
    }

    /// The condition `type_` of object `name`, which must exist and have it.
    pub async fn condition<K: Managed>(&self, name: &str, type_: &str) -> Condition {
        let obj = self.get::<K>(name).await.unwrap();
        condition_of(&obj, type_)
    }

    pub async fn list<K: Managed>(&self) -> Vec<K> {
        self.api::<K>()
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
    }

    /// Whether every object of kind K is Ready=True and Synced=True.
    pub async fn all_ready<K: Managed>(&self) -> bool {
        self.list::<K>().await.iter().all(is_ready)
    }

    /// Cloud calls of one action on one resource name, in order.
    pub fn calls(&self, action: mock_cloud::Action, name: &str) -> Vec<mock_cloud::Call> {
        self.cloud
            .calls()
            .into_iter()
            .filter(|c| c.action == Some(action) && c.name == name)
            .collect()
    }

    /// Names of the cloud's resources in a collection.
    pub fn inventory(&self, collection: mock_cloud::Collection) -> Vec<String> {
        let mut names: Vec<String> = self
            .cloud
            .inventory()
            .into_iter()
            .filter(|r| r.collection == collection)
            .map(|r| r.name)
            .collect();
        names.sort();
        names
    }

    /// Event reasons recorded for an object (events.k8s.io/v1, as kube's Recorder writes).
    pub async fn event_reasons(&self, name: &str) -> Vec<String> {
        events_regarding(&Api::namespaced(self.client.clone(), NS), name)
            .await
            .into_iter()
            .filter_map(|e| e.reason)
            .collect()
    }
}

/// The ProviderConfig `default` for account `default`, token `token`.
pub async fn provider_config_objects(client: &kube::Client, account: &str, token: &str) {
    provider_config_objects_for(client, "default", account, token).await;
}

/// A ProviderConfig `name` for `account`, with its token in a Secret.
pub async fn provider_config_objects_for(
    client: &kube::Client,
    name: &str,
    account: &str,
    token: &str,
) {
    let secret = Secret {
        metadata: kube::api::ObjectMeta {
            name: Some(format!("{name}-creds")),
            namespace: Some(NS.into()),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(
            "token".to_owned(),
            ByteString(token.as_bytes().to_vec()),
        )])),
        ..Default::default()
    };
    Api::<Secret>::namespaced(client.clone(), NS)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let pc = ProviderConfig::new(
        name,
        ProviderConfigSpec {
            account: account.into(),
            credentials: ProviderCredentials {
                secret_ref: SecretKeySelector {
                    namespace: NS.into(),
                    name: format!("{name}-creds"),
                    key: "token".into(),
                },
            },
        },
    );
    Api::<ProviderConfig>::all(client.clone())
        .create(&PostParams::default(), &pc)
        .await
        .unwrap();
}

/// A cloud with one account `default` (token `default`) and no quotas.
pub fn open_cloud() -> mock_cloud::Config {
    mock_cloud::Config::empty().with_account(
        mock_cloud::AccountConfig::new("default")
            .with_token("default")
            .with_quotas(mock_cloud::Quotas::unlimited()),
    )
}

/// Ready=True and Synced=True.
/// The condition `type_` of `obj`, which must have it.
pub fn condition_of<K: Managed>(obj: &K, type_: &str) -> Condition {
    obj.managed_status()
        .unwrap()
        .condition(type_)
        .unwrap()
        .clone()
}

/// The events `events` lists about the object `name`.
pub async fn events_regarding(
    events: &Api<k8s_openapi::api::events::v1::Event>,
    name: &str,
) -> Vec<k8s_openapi::api::events::v1::Event> {
    events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
        .collect()
}

/// Runs a provider with `options` until the sender is used or dropped; the task ends with
/// its run's summary.
pub fn spawn_provider(options: ProviderOptions) -> (oneshot::Sender<()>, JoinHandle<RunSummary>) {
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        Provider::new(options)
            .run(async {
                stopped.await.ok();
            })
            .await
            .unwrap()
    });
    (stop, task)
}

pub fn is_ready<K: Managed>(obj: &K) -> bool {
    obj.managed_status()
        .is_some_and(|s| s.is_true("Ready") && s.is_true("Synced"))
}

/// Polls `check` every `step` (tokio time) until it holds, at most `max`; returns whether
/// it held.
pub async fn eventually<F, Fut>(max: Duration, step: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + max;
    loop {
        if check().await {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(step).await;
    }
}

pub fn bucket(name: &str) -> Bucket {
    Bucket::new(name, BucketSpec::in_region("eu-west-1"))
}

pub fn database(name: &str) -> Database {
    Database::new(
        name,
        DatabaseSpec {
            for_provider: DatabaseParameters {
                engine: "postgres".into(),
                version: "16".into(),
                size_gb: 10,
            },
            provider_config_ref: ProviderConfigReference::default(),
            management_policies: None,
        },
    )
}

pub fn record(name: &str, type_: &str) -> Record {
    Record::new(
        name,
        RecordSpec {
            for_provider: RecordParameters {
                type_: type_.into(),
                value: "192.0.2.1".into(),
                ttl: Some(300),
            },
            provider_config_ref: ProviderConfigReference::default(),
            management_policies: None,
        },
    )
}

/// With an annotation.
pub fn annotated<K: Managed>(mut obj: K, key: &str, value: &str) -> K {
    obj.annotations_mut().insert(key.into(), value.into());
    obj
}
