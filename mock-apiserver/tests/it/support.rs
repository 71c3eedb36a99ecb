//! Shared fixtures: a `Bucket` custom resource, servers and clients.

use std::net::SocketAddr;

use kube::CustomResource;
use kube::CustomResourceExt;
use kube::api::{Api, ListParams, PostParams};
use mock_apiserver::{ApiServer, Config};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A condition as Crossplane and kubectl wait read it.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// The status of a bucket.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
pub struct BucketStatus {
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

/// A cloud bucket, as the sample provider manages them.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[kube(
    group = "example.org",
    version = "v1alpha1",
    kind = "Bucket",
    namespaced,
    status = "BucketStatus",
    shortname = "bk",
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Region","type":"string","jsonPath":".spec.region"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
pub struct BucketSpec {
    pub region: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i64>,
}

/// The Bucket CRD as YAML (what `kubectl apply -f` and `--crd` read).
pub fn bucket_crd_yaml() -> String {
    serde_saphyr::to_string(&Bucket::crd()).expect("the CRD serializes")
}

/// A bucket named `name` in `region`.
pub fn bucket(name: &str, region: &str) -> Bucket {
    let mut bucket = Bucket::new(
        name,
        BucketSpec {
            region: region.into(),
            size: None,
        },
    );
    bucket.metadata.namespace = Some("default".into());
    bucket
}

/// A server with the Bucket CRD loaded.
/// Creates the bucket `name` in `region` through `api`.
pub async fn create_bucket(api: &Api<Bucket>, name: &str, region: &str) -> Bucket {
    api.create(&PostParams::default(), &bucket(name, region))
        .await
        .unwrap()
}

/// How many buckets `api` lists.
pub async fn count(api: &Api<Bucket>) -> usize {
    api.list(&ListParams::default()).await.unwrap().items.len()
}

pub fn server_with_buckets(config: Config) -> ApiServer {
    let server = ApiServer::new(config);
    server
        .load_crd(serde_json::to_value(Bucket::crd()).unwrap())
        .expect("the Bucket CRD loads");
    server
}

/// A kube client talking to `server` in-process.
pub fn client(server: &ApiServer) -> kube::Client {
    kube::Client::new(server.service(), "default")
}

/// A server on a loopback socket; dropping it shuts the socket down.
pub struct Socket {
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Socket {
    /// Serves `server` on 127.0.0.1 with a free port.
    pub async fn start(server: ApiServer) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(mock_apiserver::serve(listener, server, async {
            let _ = stopped.await;
        }));
        Self {
            addr,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A kube client over the socket, built from a kubeconfig like a real program.
    pub async fn client(&self) -> kube::Client {
        let kubeconfig: kube::config::Kubeconfig =
            serde_saphyr::from_str(&mock_apiserver::kubeconfig(&self.url())).unwrap();
        let config = kube::Config::from_custom_kubeconfig(
            kubeconfig,
            &kube::config::KubeConfigOptions::default(),
        )
        .await
        .unwrap();
        kube::Client::try_from(config).unwrap()
    }

    /// Shuts the socket down and waits for `serve` to return.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.take().unwrap().await.unwrap();
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
