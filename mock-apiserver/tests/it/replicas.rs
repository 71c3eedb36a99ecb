//! Replicas of one API server (`ApiServer::replica`) on their own sockets, a load
//! balancer in front (`balance`), and the `kubernetes` EndpointSlices listing them.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use mock_apiserver::{ApiServer, Verb};

use crate::support::Socket;

const BOUND: Duration = Duration::from_secs(30);

fn configmap(name: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm
}

/// One HTTP/1.1 connection to `addr`.
async fn connect(
    addr: std::net::SocketAddr,
) -> hyper::client::conn::http1::SendRequest<http_body_util::Full<bytes::Bytes>> {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (send, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    send
}

/// Sends `request` over `connection`, reads the whole answer, and returns its status.
async fn send(
    connection: &mut hyper::client::conn::http1::SendRequest<http_body_util::Full<bytes::Bytes>>,
    request: http::Result<http::Request<String>>,
) -> http::StatusCode {
    use http_body_util::BodyExt as _;
    let request = request
        .unwrap()
        .map(|b| http_body_util::Full::new(bytes::Bytes::from(b)));
    connection.ready().await.unwrap();
    let response = connection.send_request(request).await.unwrap();
    let status = response.status();
    response.into_body().collect().await.unwrap();
    status
}

async fn metrics(client: &kube::Client) -> String {
    let request = http::Request::get("/metrics").body(Vec::new()).unwrap();
    client.request_text(request).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_share_objects_and_watches_and_each_counts_only_what_it_serves() {
    let server = ApiServer::default();
    let other = server.replica();
    let (a, b) = (
        Socket::start(server.clone()).await,
        Socket::start(other.clone()).await,
    );
    server.set_replica_endpoints(&[a.addr, b.addr]).unwrap();
    let (client_a, client_b) = (a.client().await, b.client().await);

    // A watch through one replica sees a create through the other.
    let on_b: Api<ConfigMap> = Api::default_namespaced(client_b.clone());
    let mut events = on_b
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    let on_a: Api<ConfigMap> = Api::default_namespaced(client_a.clone());
    on_a.create(&PostParams::default(), &configmap("shared"))
        .await
        .unwrap();
    let event = tokio::time::timeout(BOUND, events.try_next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        matches!(&event, WatchEvent::Added(cm) if cm.metadata.name.as_deref() == Some("shared")),
        "{event:?}"
    );
    assert_eq!(
        on_b.get("shared").await.unwrap().metadata.name.unwrap(),
        "shared"
    );

    // Each journal and each /metrics holds what its replica served.
    let verbs =
        |s: &ApiServer| -> Vec<Verb> { s.journal().since(0).iter().map(|e| e.verb).collect() };
    assert_eq!(verbs(&server), [Verb::Create]);
    assert_eq!(verbs(&other), [Verb::Watch, Verb::Get]);
    let (text_a, text_b) = (metrics(&client_a).await, metrics(&client_b).await);
    assert!(
        text_a
            .contains("resource=\"configmaps\",scope=\"resource\",subresource=\"\",verb=\"POST\""),
        "{text_a}"
    );
    assert!(!text_b.contains("verb=\"POST\""), "{text_b}");
    assert!(text_b.contains("verb=\"GET\""), "{text_b}");

    // The kubernetes Service's EndpointSlices list both (one per port, as they differ).
    let slices: Api<EndpointSlice> = Api::namespaced(client_b, "default");
    let listed = slices
        .list(&ListParams::default().labels("kubernetes.io/service-name=kubernetes"))
        .await
        .unwrap();
    let mut addresses: Vec<String> = listed
        .items
        .iter()
        .flat_map(|s| {
            let port = s.ports.as_ref().unwrap()[0].port.unwrap();
            s.endpoints
                .iter()
                .map(move |e| format!("{}:{port}", e.addresses[0]))
        })
        .collect();
    addresses.sort();
    let mut want = vec![a.addr.to_string(), b.addr.to_string()];
    want.sort();
    assert_eq!(addresses, want);
    assert_eq!(
        listed
            .items
            .iter()
            .filter(|s| s.metadata.name.as_deref() == Some("kubernetes"))
            .count(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_load_balancer_spreads_connections_over_the_replicas_in_turn() {
    let server = ApiServer::default();
    let other = server.replica();
    let (a, b) = (
        Socket::start(server.clone()).await,
        Socket::start(other.clone()).await,
    );
    let front = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let front_addr = front.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let balancer = tokio::spawn(mock_apiserver::balance(
        front,
        vec![a.addr, b.addr],
        async {
            let _ = stopped.await;
        },
    ));
    // Four connections, opened one after another: two on each replica, in turn. The
    // requests of one connection keep to its replica. (One HTTP/1.1 connection each, not
    // a client's pool, which may open a second connection for the next request when the
    // first is not back in the pool yet, and so shift the turns.)
    for i in 0..4 {
        let mut connection = connect(front_addr).await;
        let body =
            format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"cm-{i}"}}}}"#);
        let created = send(
            &mut connection,
            http::Request::post("/api/v1/namespaces/default/configmaps")
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(body),
        )
        .await;
        assert_eq!(created, http::StatusCode::CREATED);
        let got = send(
            &mut connection,
            http::Request::get(format!("/api/v1/namespaces/default/configmaps/cm-{i}"))
                .body(String::new()),
        )
        .await;
        assert_eq!(got, http::StatusCode::OK);
    }
    for (replica, gets) in [(&server, ["cm-0", "cm-2"]), (&other, ["cm-1", "cm-3"])] {
        let entries = replica.journal().since(0);
        let verbs: Vec<Verb> = entries.iter().map(|e| e.verb).collect();
        assert_eq!(verbs, [Verb::Create, Verb::Get, Verb::Create, Verb::Get]);
        // Each client's create and get landed on the same replica.
        let got: Vec<&str> = entries
            .iter()
            .filter(|e| e.verb == Verb::Get)
            .map(|e| &*e.name)
            .collect();
        assert_eq!(got, gets);
    }
    let _ = stop.send(());
    balancer.await.unwrap();
}
