//! The whole chain on tokio's paused clock: XR → composer → API server → provider →
//! mock-cloud. A Namespaced XRD, a Composition of two pipeline steps (our built-in function
//! in process, then a crossplane-function-sdk-python function run as a process), 100 XRs of
//! 5 composed Buckets each; our provider, embedded, reconciles the Buckets against
//! mock-cloud. Every XR becomes Ready with 500 buckets in mock-cloud; deleting the XRs
//! leaves no composed resource in the API server and no bucket in mock-cloud.

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use composer::composite::{LABEL_COMPOSITE, RequeueSettings};
use composer::function::builtin::Resources;
use composer::function::{Functions, GrpcRunner, InProcessRunner};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ApiResource, DeleteParams, PostParams};
use limiter::crossplane::Settings;
use limiter::crossplane::circuit::BreakerConfig;
use mock_apiserver::ApiServer;
use mock_cloud::{AccountConfig, Action, Collection, MockCloud, Quotas};
use provider::crd::{ProviderConfig, ProviderConfigSpec, ProviderCredentials, SecretKeySelector};
use provider::{CloudClient, Provider, ProviderMetrics, ProviderOptions};
use serde_json::json;

use crate::fixture::{
    Cluster, Logged, NS, RealTime, Running, builtin_step, is_true, realtime, reconciler, resource,
    xr, xr_resource, xrd,
};

const XRS: usize = 100;
const N: usize = 5;
/// The bound on each wait, in virtual time.
const WAIT: Duration = Duration::from_secs(600);

/// A cluster with the provider's CRDs, the XRD and the provider's ProviderConfig; an
/// unlimited mock-cloud account for it; and the Buckets' API resource.
pub(crate) async fn provider_cluster() -> (Cluster, MockCloud, ApiResource) {
    let cluster = Cluster::new(ApiServer::default()).await;
    cluster
        .server
        .load_crd_yaml(&provider::crd::crds_yaml().unwrap())
        .unwrap();
    cluster.install_xrd(&xrd()).await;
    provider_config(&cluster.client).await;
    let cloud = MockCloud::new(
        mock_cloud::Config::empty().with_account(
            AccountConfig::new("default")
                .with_token("default")
                .with_quotas(Quotas::unlimited()),
        ),
    )
    .unwrap();
    let buckets = resource(
        provider::crd::GROUP,
        provider::crd::VERSION,
        "Bucket",
        "buckets",
    );
    (cluster, cloud, buckets)
}

/// Our provider, embedded on the cluster's server and `cloud`, as its own tests start it.
pub(crate) struct EmbeddedProvider {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl EmbeddedProvider {
    pub(crate) fn start(cluster: &Cluster, cloud: &MockCloud) -> Self {
        let options = ProviderOptions::from_service(
            Settings::new(NonZeroU32::new(100).unwrap()),
            cluster.server.service(),
            CloudClient::new(cloud.clone(), "http://mock-cloud"),
            Arc::new(ProviderMetrics::new()),
        )
        .shutdown_timeout(Duration::from_secs(2));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            Provider::new(options)
                .run(async {
                    stopped.await.ok();
                })
                .await
                .unwrap();
        });
        EmbeddedProvider { stop, task }
    }

    /// Stops the provider and waits until it has.
    pub(crate) async fn stop(self) {
        self.stop.send(()).ok();
        self.task.await.unwrap();
    }
}

/// The provider's account `default` in mock-cloud: a ProviderConfig and its token Secret.
pub(crate) async fn provider_config(client: &kube::Client) {
    let secret = Secret {
        metadata: kube::api::ObjectMeta {
            name: Some("default-creds".into()),
            namespace: Some(NS.into()),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(
            "token".to_owned(),
            ByteString(b"default".to_vec()),
        )])),
        ..Default::default()
    };
    Api::<Secret>::namespaced(client.clone(), NS)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let config = ProviderConfig::new(
        "default",
        ProviderConfigSpec {
            account: "default".into(),
            credentials: ProviderCredentials {
                secret_ref: SecretKeySelector {
                    namespace: NS.into(),
                    name: "default-creds".into(),
                    key: "token".into(),
                },
            },
        },
    );
    Api::<ProviderConfig>::all(client.clone())
        .create(&PostParams::default(), &config)
        .await
        .unwrap();
}

/// Waits on virtual time, a second at a time, until `check` holds; panics after [`WAIT`].
async fn until<F: Future<Output = bool>>(what: &str, mut check: impl FnMut() -> F) -> Duration {
    let began = tokio::time::Instant::now();
    while !check().await {
        assert!(began.elapsed() < WAIT, "waited {WAIT:?} for {what}");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    began.elapsed()
}

#[tokio::test(start_paused = true)]
async fn a_hundred_xrs_of_five_buckets_through_two_functions_and_the_provider_become_ready_and_leave_nothing()
 {
    let _cores = crate::timing::heavy();
    // The real function: crossplane-function-sdk-python, labelling each desired resource
    // with the XR's region; skipped (or failed under REQUIRE_TOOLS) without the SDK.
    let Some(python) = crate::python::start(60) else {
        return;
    };
    let (cluster, cloud, buckets) = provider_cluster().await;
    let pipeline = json!([
        builtin_step(
            N,
            json!({"apiVersion": format!("{}/{}", provider::crd::GROUP, provider::crd::VERSION),
                "kind": "Bucket", "spec": {"forProvider": {"versioning": false}}}),
            "spec.forProvider.region",
            "60s",
        ),
        {"step": "label", "functionRef": {"name": "label"}},
    ]);
    cluster.composition("buckets", &pipeline).await;

    // Our function counts the calls it serves; the Python one is called over its socket.
    let (ours, served) = Logged::new(Resources);
    let functions = Functions::new()
        .with("resources", InProcessRunner::new(ours))
        .with("label", RealTime::new(GrpcRunner::new(python.address)));
    let breaker = realtime(BreakerConfig::default());
    let running = Running::start(
        &cluster,
        reconciler(&cluster, functions, RequeueSettings::default(), &breaker),
        breaker,
        std::slice::from_ref(&buckets),
    );

    // Our provider, embedded, as its own tests start it.
    let provider = EmbeddedProvider::start(&cluster, &cloud);

    let xrs = cluster.api(&xr_resource());
    for i in 0..XRS {
        xrs.create(&PostParams::default(), &xr(&format!("xr-{i}")))
            .await
            .unwrap();
    }
    let took = until("every XR Ready", || async {
        let all = cluster.list(&xr_resource()).await;
        all.len() == XRS && all.iter().all(|x| is_true(x, "Ready"))
    })
    .await;
    eprintln!(
        "{XRS} XRs Ready after {took:?} of virtual time, {} calls of our function",
        served.load(Ordering::Relaxed)
    );

    let composed = cluster.list(&buckets).await;
    assert_eq!(composed.len(), XRS * N);
    for b in &composed {
        let labels = b.metadata.labels.as_ref().unwrap();
        // Both steps: our function composed it, the Python one labelled it.
        assert_eq!(labels["example.org/region"], "eu-west-1");
        assert!(labels[LABEL_COMPOSITE].starts_with("xr-"));
        assert_eq!(b.data["spec"]["forProvider"]["region"], "eu-west-1");
        // Our provider reconciled it.
        assert!(is_true(b, "Ready") && is_true(b, "Synced"), "{b:?}");
    }
    for x in cluster.list(&xr_resource()).await {
        let refs = x.data["spec"]["crossplane"]["resourceRefs"]
            .as_array()
            .unwrap();
        assert_eq!(refs.len(), N);
        assert!(is_true(&x, "Responsive"), "{:?}", x.data["status"]);
    }
    let in_cloud = |c: Collection| {
        cloud
            .inventory()
            .into_iter()
            .filter(|r| r.collection == c)
            .count()
    };
    assert_eq!(in_cloud(Collection::Buckets), XRS * N);
    let created = cloud
        .calls()
        .iter()
        .filter(|c| c.action == Some(Action::Create))
        .count();
    assert_eq!(created, XRS * N, "one cloud create per Bucket");
    // Every XR's reconciles called our step; the Python step after it in each.
    let calls = served.load(Ordering::Relaxed);
    assert!(calls >= XRS as u64, "{calls} calls of our function");

    // Delete every XR: the composer drops its finalizer, the API server's garbage
    // collector deletes its Buckets, the provider deletes them in mock-cloud.
    for i in 0..XRS {
        xrs.delete(&format!("xr-{i}"), &DeleteParams::default())
            .await
            .unwrap();
    }
    let took = until("nothing left", || async {
        cluster.list(&xr_resource()).await.is_empty()
            && cluster.list(&buckets).await.is_empty()
            && in_cloud(Collection::Buckets) == 0
    })
    .await;
    eprintln!("all gone after {took:?} of virtual time");
    let deleted = cloud
        .calls()
        .iter()
        .filter(|c| c.action == Some(Action::Delete))
        .count();
    assert_eq!(deleted, XRS * N, "one cloud delete per Bucket");

    provider.stop().await;
    running.stop().await;
}
