//! The cloud served on a loopback socket, in real time.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{SendRequest, handshake};
use hyper_util::rt::TokioIo;
use mock_cloud::{Class, Faults, Latency, MAX_BODY, MockCloud, Quotas};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::support::{cloud, two_accounts};

struct Server {
    addr: SocketAddr,
    cloud: MockCloud,
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

async fn start() -> Server {
    let cloud = cloud(two_accounts(Quotas::unlimited()));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(mock_cloud::serve(listener, cloud.clone(), async {
        stopped.await.ok();
    }));
    Server {
        addr,
        cloud,
        stop,
        task,
    }
}

async fn connect(addr: SocketAddr) -> SendRequest<Full<Bytes>> {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (sender, connection) = handshake(TokioIo::new(stream)).await.unwrap();
    tokio::spawn(connection);
    sender
}

/// `GET /v1/accounts/acme/buckets` as `acme` on `sender`: the status.
async fn list_buckets(sender: &mut SendRequest<Full<Bytes>>) -> StatusCode {
    let (status, _) = send(
        sender,
        "GET",
        "/v1/accounts/acme/buckets",
        "t-acme",
        Bytes::new(),
    )
    .await;
    status
}

async fn send(
    sender: &mut SendRequest<Full<Bytes>>,
    method: &str,
    path: &str,
    token: &str,
    body: Bytes,
) -> (StatusCode, Bytes) {
    sender.ready().await.expect("the connection is still open");
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("host", "mock-cloud")
        .header("authorization", format!("Bearer {token}"))
        .body(Full::new(body))
        .unwrap();
    let response = tokio::time::timeout(Duration::from_secs(10), sender.send_request(request))
        .await
        .expect("an answer within 10 s")
        .expect("an answer, not a dropped connection");
    let status = response.status();
    (
        status,
        response.into_body().collect().await.unwrap().to_bytes(),
    )
}

#[tokio::test]
async fn one_connection_survives_every_kind_of_bad_request() {
    let server = start().await;
    let mut c = connect(server.addr).await;
    let cases: [(&str, &str, &str, &str, u16); 9] = [
        ("GET", "/v1/accounts/acme/buckets/b", "nope", "", 401),
        ("GET", "/v1/accounts/acme/buckets/b", "t-other", "", 403),
        ("GET", "/nowhere", "t-acme", "", 404),
        ("PATCH", "/v1/accounts/acme/buckets/b", "t-acme", "{}", 405),
        (
            "POST",
            "/v1/accounts/acme/buckets",
            "t-acme",
            "{\"name\":",
            400,
        ),
        (
            "POST",
            "/v1/accounts/acme/buckets",
            "t-acme",
            "{\"spec\":{}}",
            400,
        ),
        (
            "POST",
            "/v1/accounts/acme/buckets",
            "t-acme",
            "{\"name\":\"b\"}",
            201,
        ),
        ("GET", "/v1/accounts/acme/buckets/b", "t-acme", "", 200),
        ("DELETE", "/v1/accounts/acme/buckets/b", "t-acme", "", 200),
    ];
    for (method, path, token, body, status) in cases {
        let (got, body) = send(&mut c, method, path, token, Bytes::from(body)).await;
        assert_eq!(got.as_u16(), status, "{method} {path}: {body:?}");
    }
    assert_eq!(server.cloud.calls().len(), cases.len());
    server.stop.send(()).unwrap();
    server.task.await.unwrap();
}

#[tokio::test]
async fn a_body_over_one_mebibyte_gets_413() {
    let server = start().await;
    let mut c = connect(server.addr).await;
    let big = Bytes::from(vec![b'x'; MAX_BODY + 1]);
    let (status, _) = send(&mut c, "POST", "/v1/accounts/acme/buckets", "t-acme", big).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    let mut fresh = connect(server.addr).await;
    assert_eq!(list_buckets(&mut fresh).await, StatusCode::OK);
}

#[tokio::test]
async fn concurrent_connections_journal_every_request_exactly_once() {
    let server = start().await;
    let (connections, per_connection) = (4, 100);
    let mut tasks = Vec::new();
    for c in 0..connections {
        let addr = server.addr;
        tasks.push(tokio::spawn(async move {
            let mut sender = connect(addr).await;
            for i in 0..per_connection {
                let body = Bytes::from(format!(r#"{{"name":"c{c}-{i}"}}"#));
                let (status, _) = send(
                    &mut sender,
                    "POST",
                    "/v1/accounts/acme/buckets",
                    "t-acme",
                    body,
                )
                .await;
                assert_eq!(status, StatusCode::CREATED);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let calls = server.cloud.calls();
    assert_eq!(calls.len(), connections * per_connection);
    assert!(calls.iter().enumerate().all(|(i, c)| c.seq == i as u64));
    let mut names: Vec<_> = calls.iter().map(|c| c.name.clone()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), connections * per_connection);
    assert_eq!(server.cloud.inventory().len(), connections * per_connection);
}

#[tokio::test]
async fn shutdown_returns_promptly_with_an_idle_keep_alive_connection_open() {
    let server = start().await;
    let mut c = connect(server.addr).await;
    assert_eq!(list_buckets(&mut c).await, StatusCode::OK);
    server.stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(5), server.task)
        .await
        .expect("the server stops within 5 s")
        .unwrap();
    assert!(
        TcpStream::connect(server.addr).await.is_err(),
        "no longer listening"
    );
}

#[tokio::test]
async fn shutdown_answers_a_request_held_by_injected_latency_before_returning() {
    let server = start().await;
    let latency = Latency::Fixed(Duration::from_millis(300));
    server
        .cloud
        .set_faults(Faults::none().with_latency(Class::Read, latency))
        .unwrap();
    let mut c = connect(server.addr).await;
    let in_flight = tokio::spawn(async move {
        send(
            &mut c,
            "GET",
            "/v1/accounts/acme/buckets/b",
            "t-acme",
            Bytes::new(),
        )
        .await
    });
    // Shut down while the request is held.
    tokio::time::sleep(Duration::from_millis(100)).await;
    server.stop.send(()).unwrap();
    let (status, _) = in_flight.await.unwrap();
    assert_eq!(status, StatusCode::NOT_FOUND, "answered, not dropped");
    tokio::time::timeout(Duration::from_secs(5), server.task)
        .await
        .expect("the server stops once the request is answered")
        .unwrap();
    assert!(server.cloud.calls()[0].latency_us >= 300_000);
}
