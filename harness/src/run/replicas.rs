//! The API server's replicas. A control plane runs several kube-apiservers behind one
//! address (a load balancer), and each counts only the requests it serves: its `/metrics`
//! (and mock-apiserver's journal) are per replica. The `kubernetes` Service's
//! EndpointSlices in `default` list every replica's address, as kube-apiserver's endpoint
//! reconciler writes them; the harness reads each replica it can reach there directly,
//! and when it reaches only the load balancer it says its count may be partial. A leaf:
//! it knows the kubeconfig's client and the harness's own-request counting, nothing of
//! runs.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, ListParams};

use super::own::{self, OwnRequests};

/// How long the harness waits for a replica's `/version` before it counts the replica
/// unreachable.
const REACH_TIMEOUT: Duration = Duration::from_secs(3);

/// Where the harness reads the API server's per-replica series from.
#[derive(Clone)]
pub struct Replicas {
    /// The replicas' addresses (`HOST:PORT`) the EndpointSlices list; empty when they
    /// could not be read.
    pub listed: Vec<String>,
    /// What the harness reads: each replica directly (its address, a client), or the
    /// kubeconfig's address alone (named `load balancer`).
    pub targets: Vec<(Arc<str>, kube::Client)>,
    /// Several replicas, read through one address that may answer from any of them.
    pub balanced: bool,
    /// Why the replicas could not be listed, when they could not.
    pub unlisted: Option<String>,
    /// How many of the listed replicas answered the harness directly.
    pub reached: usize,
}

/// The name of the single target when the replicas are read through the kubeconfig's
/// address.
pub const LOAD_BALANCER: &str = "load balancer";

impl Replicas {
    /// The kubeconfig's address alone, as one server.
    #[must_use]
    pub fn single(client: &kube::Client) -> Replicas {
        Replicas {
            listed: Vec::new(),
            targets: vec![(Arc::from(LOAD_BALANCER), client.clone())],
            balanced: false,
            unlisted: None,
            reached: 0,
        }
    }

    /// Lists the replicas in the `kubernetes` EndpointSlices and connects to each with
    /// `config` (the kubeconfig's, its server replaced, TLS still checking the
    /// kubeconfig's host name). With more than one listed and every one reachable, reads
    /// each; else reads the kubeconfig's address (`client`).
    pub async fn find(client: &kube::Client, config: &kube::Config, own: &OwnRequests) -> Replicas {
        let mut out = Replicas::single(client);
        let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), "default");
        let listed = match slices
            .list(&ListParams::default().labels("kubernetes.io/service-name=kubernetes"))
            .await
        {
            Ok(list) => addresses(&list.items),
            Err(e) => {
                out.unlisted = Some(e.to_string());
                return out;
            }
        };
        out.listed.clone_from(&listed);
        if listed.len() < 2 {
            return out;
        }
        let mut targets = Vec::new();
        for address in &listed {
            let Some(client) = replica_client(config, address, own) else {
                continue;
            };
            if let Ok(Ok(_)) = tokio::time::timeout(REACH_TIMEOUT, client.apiserver_version()).await
            {
                targets.push((Arc::from(address.as_str()), client));
            }
        }
        out.reached = targets.len();
        if targets.len() == listed.len() {
            out.targets = targets;
        } else {
            out.balanced = true;
        }
        out
    }

    /// Whether a count read this way may miss requests: several replicas, read through
    /// one address.
    #[must_use]
    pub fn partial(&self) -> bool {
        self.balanced
    }

    /// What a reader of the result must know of the replicas, if anything.
    #[must_use]
    pub fn note(&self) -> Option<String> {
        if let Some(why) = &self.unlisted {
            return Some(format!(
                "the API server's replicas could not be listed (EndpointSlices of Service default/kubernetes: {why}): read through the kubeconfig's address as one server"
            ));
        }
        if self.listed.len() < 2 {
            return None;
        }
        let n = self.listed.len();
        Some(if self.balanced {
            format!(
                "the count may be partial: the API server has {n} replicas (EndpointSlices of Service default/kubernetes: {}) and the harness reached {} of them directly, so it read them through the kubeconfig's address, which answers each read from one replica: a read counts only that replica's requests, growth past the highest count seen",
                self.listed.join(", "),
                self.reached
            )
        } else {
            format!(
                "the API server has {n} replicas (EndpointSlices of Service default/kubernetes), each read directly and summed: {}",
                self.listed.join(", ")
            )
        })
    }
}

/// Every ready endpoint's `HOST:PORT` in `slices`, each address with each of its slice's
/// ports (the `https` one when named), IPv6 in brackets, sorted.
fn addresses(slices: &[EndpointSlice]) -> Vec<String> {
    let mut out = Vec::new();
    for slice in slices {
        let ports = slice.ports.as_deref().unwrap_or_default();
        let port = ports
            .iter()
            .find(|p| p.name.as_deref() == Some("https"))
            .or_else(|| ports.first())
            .and_then(|p| p.port);
        let Some(port) = port else { continue };
        for endpoint in &slice.endpoints {
            let ready = endpoint
                .conditions
                .as_ref()
                .and_then(|c| c.ready)
                .unwrap_or(true);
            if !ready {
                continue;
            }
            for ip in &endpoint.addresses {
                if ip.contains(':') {
                    out.push(format!("[{ip}]:{port}"));
                } else {
                    out.push(format!("{ip}:{port}"));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// A client for the replica at `address`: `config` with its server's host and port
/// replaced, TLS still checking the name the kubeconfig's server has (a replica's
/// certificate names the load balancer's address too), the harness's User-Agent and its
/// requests counted in `own`.
fn replica_client(config: &kube::Config, address: &str, own: &OwnRequests) -> Option<kube::Client> {
    let client = kube::client::ClientBuilder::try_from(replica_config(config, address)?).ok()?;
    Some(client.with_layer(&own::layer(own.clone())).build())
}

/// `config` for the replica at `address` (see [`replica_client`]).
fn replica_config(config: &kube::Config, address: &str) -> Option<kube::Config> {
    let mut config = config.clone();
    let original = config.cluster_url.clone();
    let scheme = original.scheme_str().unwrap_or("https");
    config.cluster_url = format!("{scheme}://{address}").parse().ok()?;
    if config.tls_server_name.is_none() && scheme == "https" {
        config.tls_server_name = original.host().map(str::to_owned);
    }
    Some(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mock-apiserver on a loopback socket whose `kubernetes` EndpointSlices list
    /// `also` besides itself (a replica of it on another socket, or an address nothing
    /// listens on), and the harness's client and configuration for it.
    async fn listed_with(also: Option<std::net::SocketAddr>) -> (kube::Client, kube::Config) {
        let server = mock_apiserver::ApiServer::default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(mock_apiserver::serve(
            listener,
            server.clone(),
            std::future::pending(),
        ));
        let other = match also {
            Some(a) => a,
            None => {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let other = listener.local_addr().unwrap();
                tokio::spawn(mock_apiserver::serve(
                    listener,
                    server.replica(),
                    std::future::pending(),
                ));
                other
            }
        };
        server.set_replica_endpoints(&[addr, other]).unwrap();
        let config = kube::Config::new(format!("http://{addr}").parse().unwrap());
        (kube::Client::try_from(config.clone()).unwrap(), config)
    }

    #[tokio::test]
    async fn every_listed_replica_that_answers_is_read_directly() {
        let (client, config) = listed_with(None).await;
        let r = Replicas::find(&client, &config, &OwnRequests::default()).await;
        assert_eq!((r.listed.len(), r.targets.len(), r.reached), (2, 2, 2));
        assert!(!r.partial());
        assert!(r.note().unwrap().contains("2 replicas"), "{:?}", r.note());
    }

    #[tokio::test]
    async fn a_replica_out_of_reach_leaves_the_kubeconfigs_address_and_a_partial_count() {
        // Nothing listens on a port just freed.
        let gone = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let (client, config) = listed_with(Some(gone)).await;
        let r = Replicas::find(&client, &config, &OwnRequests::default()).await;
        assert_eq!((r.listed.len(), r.reached), (2, 1));
        assert_eq!(r.targets.len(), 1);
        assert_eq!(&*r.targets[0].0, LOAD_BALANCER);
        assert!(r.partial());
        let note = r.note().unwrap();
        assert!(
            note.starts_with("the count may be partial: the API server has 2 replicas")
                && note.contains("reached 1 of them"),
            "{note}"
        );
    }

    #[tokio::test]
    async fn a_server_that_lists_no_replicas_is_one() {
        let server = mock_apiserver::ApiServer::default();
        let client = kube::Client::new(server.service(), "default");
        let config = kube::Config::new("http://127.0.0.1:1".parse().unwrap());
        let r = Replicas::find(&client, &config, &OwnRequests::default()).await;
        assert!(r.listed.is_empty() && !r.partial() && r.note().is_none());
        assert_eq!(r.targets.len(), 1);
    }

    #[test]
    fn the_replicas_are_every_ready_address_with_its_slices_https_port() {
        let slices: Vec<EndpointSlice> = serde_json::from_value(serde_json::json!([
            {"metadata": {"name": "kubernetes"}, "addressType": "IPv4",
             "endpoints": [{"addresses": ["10.0.0.2"]}, {"addresses": ["10.0.0.1"], "conditions": {"ready": true}},
                           {"addresses": ["10.0.0.3"], "conditions": {"ready": false}}],
             "ports": [{"name": "metrics", "port": 9000}, {"name": "https", "port": 6443}]},
            {"metadata": {"name": "kubernetes-7"}, "addressType": "IPv6",
             "endpoints": [{"addresses": ["fd00::1"]}], "ports": [{"port": 7}]},
            {"metadata": {"name": "no-ports"}, "addressType": "IPv4",
             "endpoints": [{"addresses": ["10.0.0.9"]}]},
        ]))
        .unwrap();
        assert_eq!(
            addresses(&slices),
            ["10.0.0.1:6443", "10.0.0.2:6443", "[fd00::1]:7"]
        );
    }

    #[tokio::test]
    async fn a_replica_client_keeps_the_scheme_and_checks_the_kubeconfigs_host_name() {
        let config = kube::Config::new("https://api.example.org:6443".parse().unwrap());
        let replica = replica_config(&config, "10.0.0.1:6443").unwrap();
        assert_eq!(replica.cluster_url.to_string(), "https://10.0.0.1:6443/");
        assert_eq!(replica.tls_server_name.as_deref(), Some("api.example.org"));
        assert!(replica_client(&config, "10.0.0.1:6443", &OwnRequests::default()).is_some());
        let plain = kube::Config::new("http://127.0.0.1:6443".parse().unwrap());
        let replica = replica_config(&plain, "[::1]:7000").unwrap();
        assert_eq!(replica.cluster_url.to_string(), "http://[::1]:7000/");
        assert_eq!(replica.tls_server_name, None);
    }
}
