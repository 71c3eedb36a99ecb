//! The admin client against a cloud served on a loopback socket, in real time, and against
//! servers that misbehave.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use mock_cloud::admin::{Client, ClientError, DecodeError};
use mock_cloud::{
    AccountConfig, Action, Class, Collection, Config, ErrorRate, Faults, MockCloud, Quotas,
    Switchable,
};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;

struct Served {
    addr: SocketAddr,
    switch: Switchable,
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Served {
    async fn start() -> Served {
        let switch = Switchable::new(MockCloud::new(Config::default()).unwrap());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(mock_cloud::serve_switchable(
            listener,
            switch.clone(),
            async {
                stopped.await.ok();
            },
        ));
        Served {
            addr,
            switch,
            stop,
            task,
        }
    }

    fn client(&self) -> Client {
        Client::new(&format!("http://{}", self.addr)).unwrap()
    }

    async fn stop(self) {
        self.stop.send(()).unwrap();
        self.task.await.unwrap();
    }
}

fn acme() -> Config {
    Config::empty().with_account(
        AccountConfig::new("acme")
            .with_token("t-acme")
            .with_quotas(Quotas::unlimited()),
    )
}

/// Calls the cloud API (not the admin API) over its own connection.
struct Api {
    addr: SocketAddr,
    http: HttpClient<HttpConnector, Full<Bytes>>,
}

impl Api {
    fn new(addr: SocketAddr) -> Api {
        Api {
            addr,
            http: HttpClient::builder(TokioExecutor::new()).build_http(),
        }
    }

    async fn call(&self, method: &str, path: &str, body: &str) -> u16 {
        let request = Request::builder()
            .method(method)
            .uri(format!("http://{}{path}", self.addr))
            .header("authorization", "Bearer t-acme")
            .body(Full::new(Bytes::from(body.to_owned())))
            .unwrap();
        let response = self.http.request(request).await.unwrap();
        let status = response.status().as_u16();
        response.into_body().collect().await.unwrap();
        status
    }
}

#[tokio::test]
async fn put_config_starts_a_new_cloud_whose_clock_started_within_the_epoch_s_uncertainty() {
    let served = Served::start().await;
    let client = served.client();
    let wall_before = jiff::Timestamp::now();
    let epoch = client.put_config(&acme()).await.unwrap();
    let wall_after = jiff::Timestamp::now();
    let cloud = served.switch.current();
    assert_eq!(cloud.config(), &acme());

    // The cloud's clock read zero somewhere in [before - elapsed, after - elapsed].
    let before = Instant::now();
    let elapsed = cloud.elapsed();
    let after = Instant::now();
    let (earliest, latest) = (before - elapsed, after - elapsed);
    let half = epoch.uncertainty / 2;
    assert!(
        earliest <= epoch.at + half && latest >= epoch.at - half,
        "the zero, in {earliest:?}..={latest:?}, is within {half:?} of {:?}",
        epoch.at
    );
    assert!(epoch.uncertainty < Duration::from_secs(10));

    let summary = client.summary().await.unwrap();
    assert_eq!(summary.epoch, cloud.epoch());
    assert!(wall_before <= summary.epoch && summary.epoch <= wall_after);
    served.stop().await;
}

#[tokio::test]
async fn every_client_method_reads_what_the_cloud_api_did() {
    let served = Served::start().await;
    let client = served.client();
    client.put_config(&acme()).await.unwrap();
    let api = Api::new(served.addr);
    assert_eq!(
        api.call("POST", "/v1/accounts/acme/buckets", r#"{"name":"b1"}"#)
            .await,
        201
    );
    assert_eq!(
        api.call("POST", "/v1/accounts/acme/databases", r#"{"name":"db"}"#)
            .await,
        201
    );
    assert_eq!(
        api.call("GET", "/v1/accounts/acme/buckets/nope", "").await,
        404
    );

    let page = client.all_calls_since(0).await.unwrap();
    assert_eq!(page.calls, served.switch.current().calls());
    assert_eq!((page.next_seq, page.dropped), (3, 0));
    assert_eq!(page.epoch, served.switch.current().epoch());
    let first = &page.calls[0];
    assert_eq!(first.seq, 0);
    assert_eq!(first.account, "acme");
    assert_eq!(first.action, Some(Action::Create));
    assert_eq!(first.collection, Some(Collection::Buckets));
    assert_eq!((first.name.as_str(), first.status), ("b1", 201));
    assert!(page.calls[1].at_us >= first.at_us);
    assert_eq!(
        (page.calls[2].action, page.calls[2].status),
        (Some(Action::Get), 404)
    );
    assert_eq!(client.all_calls_since(2).await.unwrap().calls.len(), 1);

    let summary = client.summary().await.unwrap();
    assert_eq!(summary.requests, 3);
    assert_eq!(client.next_seq().await.unwrap(), 3);
    let inventory = client.inventory().await.unwrap();
    let names: Vec<&str> = inventory
        .resources
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(names, ["b1", "db"]);

    let faults = Faults::none().with_seed(7).with_errors(
        Class::Read,
        ErrorRate {
            probability: 1.0,
            status: 500,
        },
    );
    client.put_faults(&faults).await.unwrap();
    assert_eq!(served.switch.current().faults(), faults);
    assert_eq!(
        api.call("GET", "/v1/accounts/acme/buckets/b1", "").await,
        500
    );
    let page = client.all_calls_since(3).await.unwrap();
    assert!(page.calls[0].fault, "{:?}", page.calls);

    client.reset().await.unwrap();
    assert!(client.inventory().await.unwrap().resources.is_empty());
    assert_eq!(client.next_seq().await.unwrap(), 4, "seq keeps counting");
    let page = client.all_calls_since(0).await.unwrap();
    assert!(page.calls.is_empty());
    assert_eq!(page.next_seq, 4);
    served.stop().await;
}

#[tokio::test]
async fn pages_of_a_small_limit_follow_on_without_gaps() {
    let served = Served::start().await;
    let client = served.client();
    client.put_config(&acme()).await.unwrap();
    let api = Api::new(served.addr);
    for i in 0..25 {
        api.call("GET", &format!("/v1/accounts/acme/buckets/b{i}"), "")
            .await;
    }
    let page = client.calls(0, Some(10)).await.unwrap();
    assert_eq!(page.calls.len(), 10);
    assert_eq!(page.next_seq, 10);
    let page = client.calls(20, Some(10)).await.unwrap();
    assert_eq!(page.calls.len(), 5);
    assert_eq!((page.calls[0].name.as_str(), page.next_seq), ("b20", 25));

    // 7 + 7 + 7 + 2: four pages, the last short.
    let all = client
        .clone()
        .with_page_limit(7)
        .all_calls_since(2)
        .await
        .unwrap();
    let seqs: Vec<u64> = all.calls.iter().map(|c| c.seq).collect();
    assert_eq!(seqs, (2..25).collect::<Vec<_>>());
    assert_eq!(all.next_seq, 25);
    // A limit that divides the calls exactly ends with an empty page.
    let all = client
        .clone()
        .with_page_limit(5)
        .all_calls_since(0)
        .await
        .unwrap();
    assert_eq!((all.calls.len(), all.next_seq), (25, 25));
    served.stop().await;
}

#[tokio::test]
async fn refusals_carry_the_server_s_message() {
    let served = Served::start().await;
    let client = served.client();
    let bad = Faults::none().with_errors(
        Class::Read,
        ErrorRate {
            probability: 2.0,
            status: 503,
        },
    );
    let err = client.put_faults(&bad).await.unwrap_err();
    let ClientError::Status { url, status, body } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(status.as_u16(), 400);
    assert_eq!(body, "errors.read.rate must be within 0 and 1");
    assert_eq!(url, &format!("http://{}/admin/v1/faults", served.addr));
    assert_eq!(
        err.to_string(),
        format!("{url} answered 400 Bad Request: errors.read.rate must be within 0 and 1")
    );

    let twice = Config::empty()
        .with_account(AccountConfig::new("a").with_token("t"))
        .with_account(AccountConfig::new("b").with_token("t"));
    let err = client.put_config(&twice).await.unwrap_err();
    assert!(
        matches!(&err, ClientError::Status { body, .. } if body.contains("used twice")),
        "{err:?}"
    );
    assert_eq!(
        served.switch.current().config(),
        &Config::default(),
        "the old cloud stays"
    );
    served.stop().await;
}

#[tokio::test]
async fn a_port_nobody_listens_on_is_unreachable() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let err = Client::new(&format!("http://{addr}"))
        .unwrap()
        .summary()
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Unreachable { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("cannot reach http://{addr}/admin/v1/summary")
    );
    assert!(std::error::Error::source(&err).is_some());
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let holder = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        tokio::time::sleep(Duration::from_secs(30)).await;
        drop(stream);
    });
    let client = Client::new(&format!("http://{addr}"))
        .unwrap()
        .with_timeout(Duration::from_millis(200));
    let started = Instant::now();
    let err = client.reset().await.unwrap_err();
    assert!(
        matches!(err, ClientError::Timeout { after, .. } if after == Duration::from_millis(200)),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    holder.abort();
}

/// Serves `answer` for every request on a loopback socket.
async fn fake(
    answer: impl Fn(&Request<hyper::body::Incoming>) -> Response<Full<Bytes>>
    + Clone
    + Send
    + Sync
    + 'static,
) -> (SocketAddr, oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let service = tower::service_fn(move |request: Request<hyper::body::Incoming>| {
        let response = answer(&request);
        async move { Ok::<_, Infallible>(response) }
    });
    tokio::spawn(serve::serve(
        listener,
        service,
        async {
            stopped.await.ok();
        },
        serve::Options::default(),
    ));
    (addr, stop)
}

const LINE: &str = r#"{"seq":0,"at_us":5,"account":"a","action":"get","collection":"buckets","name":"b","status":200,"latency_us":1,"throttled":false,"shadow_throttled":false,"quota_exceeded":false,"fault":false}"#;

#[tokio::test]
async fn answers_that_are_not_the_admin_api_s_are_decode_errors() {
    let (addr, stop) = fake(|request| {
        let mut response = Response::new(Full::new(Bytes::from(format!("{LINE}\n"))));
        if request.uri().query() == Some("since=0") {
            response
                .headers_mut()
                .insert("x-next-seq", "1".parse().unwrap());
            response
                .headers_mut()
                .insert("x-dropped", "0".parse().unwrap());
            response
                .headers_mut()
                .insert("x-epoch", "yesterday".parse().unwrap());
        }
        response
    })
    .await;
    let client = Client::new(&format!("http://{addr}")).unwrap();
    let err = client.summary().await.unwrap_err();
    assert!(
        matches!(
            &err,
            ClientError::Decode {
                source: DecodeError::Json(_),
                ..
            }
        ),
        "{err:?}"
    );
    let err = client.calls(0, None).await.unwrap_err();
    assert!(
        matches!(
            &err,
            ClientError::Decode {
                source: DecodeError::NotTime {
                    name: "x-epoch",
                    ..
                },
                ..
            }
        ),
        "{err:?}"
    );
    let err = client.calls(1, None).await.unwrap_err();
    assert!(
        matches!(
            &err,
            ClientError::Decode {
                source: DecodeError::MissingHeader { name: "x-next-seq" },
                ..
            }
        ),
        "{err:?}"
    );
    stop.send(()).unwrap();
}

#[tokio::test]
async fn pages_from_two_different_clouds_are_not_joined() {
    let (addr, stop) = fake(|request| {
        let second = request.uri().query() != Some("since=0&limit=1");
        let epoch = if second {
            "2026-01-01T00:00:01Z"
        } else {
            "2026-01-01T00:00:00Z"
        };
        let mut response = Response::new(Full::new(Bytes::from(format!("{LINE}\n"))));
        let headers = response.headers_mut();
        headers.insert("x-next-seq", "1".parse().unwrap());
        headers.insert("x-dropped", "0".parse().unwrap());
        headers.insert("x-epoch", epoch.parse().unwrap());
        response
    })
    .await;
    let client = Client::new(&format!("http://{addr}"))
        .unwrap()
        .with_page_limit(1);
    let err = client.all_calls_since(0).await.unwrap_err();
    assert!(matches!(err, ClientError::EpochChanged { .. }), "{err:?}");
    assert!(err.to_string().contains("was replaced"), "{err}");
    stop.send(()).unwrap();
}
