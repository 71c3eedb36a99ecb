//! Loopback GET throughput of mock-cloud (quotas and journal on) against `wiremock`
//! serving an equivalent stub, in the same run, or of any server given with `--target`.
//! Two floors are measured beside them: hyper answering a fixed body and doing nothing
//! else, and a socket loop that writes fixed bytes without any HTTP. No server built on
//! these sockets can answer for less, so their ratios to wiremock bound any server's.
//!
//! ```text
//! cargo run --release -p mock-cloud-loadgen -- --seconds 5 --connections 32
//! cargo run --release -p mock-cloud-loadgen -- --target http://127.0.0.1:8080/v1/accounts/default/buckets/b1
//! cargo run --release -p mock-cloud-loadgen -- --method HEAD --token '' --target 'PRESIGNED-URL'
//! mock-cloud/bench.sh   # the same servers measured by wrk from another process
//! ```
//!
//! A crate of its own, so that wiremock is no dependency of mock-cloud: it needs none of
//! the AWS SDKs that mock-cloud's tests use. The in-process cost of a SigV4-verified HeadBucket is
//! timed by the criterion bench instead (`cargo bench -p mock-cloud --bench request_path`).
//!
//! The servers run on their own runtime (mock-cloud: `--server-threads`, default 2; wiremock: its own
//! single thread, by design), the load generator on another; each target gets a short
//! warm-up, then `--seconds` of closed-loop load: every connection sends a GET as soon as
//! the previous answer is read. Prints requests/s and latency percentiles.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::Parser;
use http::Request;
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1::{SendRequest, handshake};
use hyper_util::rt::TokioIo;
use mock_cloud::{AccountConfig, Class, Config, MockCloud, Quotas, Rate};
use tokio::net::{TcpListener, TcpStream};

#[derive(Debug, Parser)]
struct Args {
    /// Seconds of measured load per target.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// Concurrent keep-alive connections.
    #[arg(long, default_value_t = 32)]
    connections: usize,
    /// Worker threads of the load generator.
    #[arg(long, default_value_t = 2)]
    client_threads: usize,
    /// Worker threads of the runtime serving mock-cloud (wiremock always has one).
    #[arg(long, default_value_t = 2)]
    server_threads: usize,
    /// Load this URL (http://host:port/path) instead of the built-in pair of servers.
    #[arg(long)]
    target: Option<String>,
    /// Only serve the stubs (mock-cloud, wiremock and the two floors) for this many seconds,
    /// printing their URLs, and let an external load generator such as wrk measure them;
    /// see bench.sh.
    #[arg(long, value_name = "SECONDS")]
    serve: Option<u64>,
    /// Bearer token sent with every request; empty: no `Authorization` header (a
    /// presigned AWS URL carries its signature in the query).
    #[arg(long, default_value = "default")]
    token: String,
    /// The request method: GET, or HEAD (S3's HeadBucket: wrk cannot read an answer to
    /// HEAD without Content-Length, and mock-cloud's HeadBucket answers carry none).
    #[arg(long, default_value = "GET")]
    method: http::Method,
}

const PATH: &str = "/v1/accounts/default/buckets/b1";

#[derive(Debug)]
struct Report {
    requests: u64,
    errors: u64,
    elapsed: Duration,
    latencies_us: Vec<u32>,
}

impl Report {
    fn percentile(&self, p: f64) -> f64 {
        if self.latencies_us.is_empty() {
            return f64::NAN;
        }
        let i = ((self.latencies_us.len() - 1) as f64 * p).round() as usize;
        f64::from(self.latencies_us[i]) / 1000.0
    }

    fn rate(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }

    fn print(&self, name: &str) {
        println!(
            "{name:<28} {:>10.0} req/s  p50 {:>6.2} ms  p99 {:>6.2} ms  max {:>7.2} ms  ({} requests, {} non-2xx)",
            self.rate(),
            self.percentile(0.50),
            self.percentile(0.99),
            self.percentile(1.0),
            self.requests,
            self.errors
        );
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let client = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.client_threads)
        .enable_all()
        .build()?;
    if let Some(target) = &args.target {
        let uri: http::Uri = target.parse()?;
        let authority = uri
            .authority()
            .ok_or_else(|| anyhow::anyhow!("--target needs host:port"))?;
        let addr: SocketAddr = authority.as_str().parse()?;
        let path = uri
            .path_and_query()
            .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
        let to = Target {
            addr,
            path,
            host: authority.as_str().to_owned(),
        };
        let report = client.block_on(load(&to, &args))?;
        report.print(target);
        return Ok(());
    }

    let servers = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.server_threads)
        .enable_all()
        .build()?;
    let (cloud, cloud_addr) = servers.block_on(start_mock_cloud())?;
    let wiremock = servers.block_on(start_wiremock());
    let wiremock_addr = *wiremock.address();
    let floor_addr = start_floor()?;
    let raw_addr = start_raw()?;

    if let Some(seconds) = args.serve {
        println!("mock-cloud http://{cloud_addr}{PATH}");
        println!("wiremock http://{wiremock_addr}{PATH}");
        println!("floor http://{floor_addr}{PATH}");
        println!("raw http://{raw_addr}{PATH}");
        std::thread::sleep(Duration::from_secs(seconds));
        print_journal(&cloud);
        return Ok(());
    }
    let in_process = servers.block_on(in_process_cost(&cloud, 200_000))?;
    println!(
        "in-process handle(): {:.0} ns per GET (one thread, no socket)",
        in_process.as_nanos() as f64
    );
    println!(
        "loopback GET {PATH}, {} connections, {} s each, client threads {}",
        args.connections, args.seconds, args.client_threads
    );
    let ours = client.block_on(load(&Target::stub(cloud_addr), &args))?;
    ours.print("mock-cloud (quotas+journal)");
    let theirs = client.block_on(load(&Target::stub(wiremock_addr), &args))?;
    theirs.print("wiremock 0.6");
    let floor = client.block_on(load(&Target::stub(floor_addr), &args))?;
    floor.print("floor (hyper, fixed answer)");
    let raw = client.block_on(load(&Target::stub(raw_addr), &args))?;
    raw.print("raw (no HTTP, fixed bytes)");
    println!(
        "ratio mock-cloud / wiremock: {:.2}x (the floors: {:.2}x and {:.2}x; mock-cloud runs on \
         --server-threads workers, wiremock and the floors on one thread each: bench.sh \
         compares them on equal cores)",
        ours.rate() / theirs.rate(),
        floor.rate() / theirs.rate(),
        raw.rate() / theirs.rate()
    );
    print_journal(&cloud);
    drop(wiremock);
    Ok(())
}

fn print_journal(cloud: &MockCloud) {
    let stats = cloud.journal_stats();
    let summary = cloud.summary();
    println!(
        "journal: {} entries held, {} dropped, {} bytes/entry ({:.1} with spare capacity and names), {} requests counted, {} throttled",
        stats.len,
        stats.dropped,
        stats.bytes_per_entry,
        stats.memory_bytes as f64 / stats.len.max(1) as f64,
        summary.requests,
        summary.throttled
    );
}

/// A cloud whose read bucket is far above the load (so every GET runs the whole path, the
/// quota check included, and succeeds), with the journal on.
async fn start_mock_cloud() -> anyhow::Result<(MockCloud, SocketAddr)> {
    let quotas = Quotas::cloud_default().with_class(Class::Read, Some(Rate::new(u32::MAX, 1e9)));
    let config = Config::empty().with_account(
        AccountConfig::new("default")
            .with_token("default")
            .with_quotas(quotas),
    );
    let cloud = MockCloud::new(config)?;
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(mock_cloud::serve(
        listener,
        cloud.clone(),
        std::future::pending(),
    ));
    let mut sender = connect(addr).await?;
    let create = Request::post("/v1/accounts/default/buckets")
        .header("authorization", "Bearer default")
        .body(http_body_util::Full::new(Bytes::from_static(
            br#"{"name":"b1","spec":{"region":"eu"}}"#,
        )))?;
    let created = sender.send_request(create).await?;
    anyhow::ensure!(
        created.status() == 201,
        "cannot create the bucket: {}",
        created.status()
    );
    Ok((cloud, addr))
}

/// The mean time of one GET through [`MockCloud::handle`], without sockets.
async fn in_process_cost(cloud: &MockCloud, n: u32) -> anyhow::Result<Duration> {
    let started = Instant::now();
    for _ in 0..n {
        let request = Request::get(PATH)
            .header("authorization", "Bearer default")
            .body(Empty::<Bytes>::new())?;
        let response = cloud.handle(request).await;
        anyhow::ensure!(
            response.status() == 200,
            "in-process GET got {}",
            response.status()
        );
    }
    Ok(started.elapsed() / n)
}

/// The same resource as a wiremock stub: same path, same auth header match, a JSON body
/// of the same shape.
async fn start_wiremock() -> wiremock::MockServer {
    use wiremock::matchers::{header, method, path};
    let server = wiremock::MockServer::start().await;
    let body: serde_json::Value = serde_json::from_str(&stub_body()).expect("a JSON body");
    wiremock::Mock::given(method("GET"))
        .and(path(PATH))
        .and(header("authorization", "Bearer default"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(body))
        .mount(&server)
        .await;
    server
}

/// The body every stub answers: mock-cloud's answer for the bucket, in shape and length.
fn stub_body() -> String {
    serde_json::json!({
        "account": "default", "collection": "buckets", "name": "b1", "state": "available",
        "generation": 1, "created_at_us": 0, "spec": {"region": "eu"}
    })
    .to_string()
}

/// Runs `serve(listener)` on a current-thread runtime of a thread of its own, as wiremock
/// runs its server, and returns the listener's address.
fn spawn_stub<F>(
    serve: impl FnOnce(TcpListener) -> F + Send + 'static,
) -> anyhow::Result<SocketAddr>
where
    F: std::future::Future<Output = ()>,
{
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::spawn(move || {
        runtime.block_on(async move {
            if let Ok(listener) = TcpListener::from_std(listener) {
                serve(listener).await;
            }
        });
    });
    Ok(addr)
}

/// The hyper floor: hyper's HTTP/1 server answering every request with the same fixed
/// body and doing nothing else. What any server built on hyper and tokio pays per request
/// on this machine (loopback TCP, HTTP/1 parsing and encoding, the runtime).
fn start_floor() -> anyhow::Result<SocketAddr> {
    let body = Bytes::from(stub_body());
    spawn_stub(|listener| async move {
        while let Ok((stream, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |_request| {
                    std::future::ready(
                        http::Response::builder()
                            .header("content-type", "application/json")
                            .body(http_body_util::Full::new(body.clone())),
                    )
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

/// The socket floor: no HTTP at all. It reads bytes, counts the requests' ends
/// (`\r\n\r\n`; the benchmark's GETs have no body) and writes one fixed answer, as
/// hyper would frame it, for each. What any server on tokio's sockets pays per request on
/// this machine: the kernel's loopback TCP and the runtime, nothing more.
fn start_raw() -> anyhow::Result<SocketAddr> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = stub_body();
    let date = httpdate_now();
    let answer = Bytes::from(format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\ndate: {date}\r\n\r\n{body}",
        body.len()
    ));
    spawn_stub(|listener| async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let answer = answer.clone();
            tokio::spawn(async move {
                // The last three bytes read stay at the front of the buffer, so an end
                // split between two reads is counted; three bytes cannot hold a whole end,
                // so none is counted twice.
                let mut buf = vec![0u8; 8192];
                let mut kept = 0;
                let mut out = Vec::new();
                loop {
                    let n = match stream.read(&mut buf[kept..]).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    let filled = kept + n;
                    let ends = buf[..filled]
                        .windows(4)
                        .filter(|w| w == b"\r\n\r\n")
                        .count();
                    out.clear();
                    for _ in 0..ends {
                        out.extend_from_slice(&answer);
                    }
                    if stream.write_all(&out).await.is_err() {
                        return;
                    }
                    kept = filled.min(3);
                    buf.copy_within(filled - kept..filled, 0);
                }
            });
        }
    })
}

/// The current time as an HTTP date (the raw stub's `Date`, fixed at start: a floor does
/// no per-request work).
fn httpdate_now() -> String {
    jiff::Timestamp::now()
        .strftime("%a, %d %b %Y %H:%M:%S GMT")
        .to_string()
}

async fn connect(
    addr: SocketAddr,
) -> anyhow::Result<hyper::client::conn::http1::SendRequest<http_body_util::Full<Bytes>>> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (sender, connection) = handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    Ok(sender)
}

/// Where the load goes: an address, the path and query, and the `Host` header.
struct Target {
    addr: SocketAddr,
    path: String,
    host: String,
}

impl Target {
    /// One of the built-in pair of servers.
    fn stub(addr: SocketAddr) -> Target {
        Target {
            addr,
            path: PATH.to_owned(),
            host: "loadgen".to_owned(),
        }
    }
}

/// A keep-alive HTTP/1.1 connection to `addr`.
async fn open(addr: SocketAddr) -> anyhow::Result<SendRequest<Empty<Bytes>>> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (sender, connection) = handshake::<_, Empty<Bytes>>(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    Ok(sender)
}

/// Closed-loop load: a warm-up of a tenth of the time, then the measured period.
async fn load(target: &Target, args: &Args) -> anyhow::Result<Report> {
    let addr = target.addr;
    let measure = Duration::from_secs(args.seconds);
    let warmup = measure / 10;
    let start = Instant::now() + warmup;
    let end = start + measure;
    let mut tasks = Vec::new();
    for _ in 0..args.connections {
        let (path, host, token) = (target.path.clone(), target.host.clone(), args.token.clone());
        let method = args.method.clone();
        tasks.push(tokio::spawn(async move {
            let mut sender = open(addr).await?;
            let mut latencies = Vec::with_capacity(1 << 16);
            let (mut requests, mut errors) = (0u64, 0u64);
            loop {
                let sent = Instant::now();
                if sent >= end {
                    break;
                }
                let mut request = Request::builder()
                    .method(method.clone())
                    .uri(path.as_str())
                    .header("host", host.as_str());
                if !token.is_empty() {
                    request = request.header("authorization", format!("Bearer {token}"));
                }
                let request = request.body(Empty::new())?;
                // A server that closes the connection after an answer (HTTP/1.0, such as
                // moto's) gets a new one, its cost counted in the request's latency.
                if sender.ready().await.is_err() {
                    sender = open(addr).await?;
                    sender.ready().await?;
                }
                let response = match sender.send_request(request).await {
                    Ok(response) => response,
                    Err(err)
                        if err.is_closed() || err.is_canceled() || err.is_incomplete_message() =>
                    {
                        sender = open(addr).await?;
                        continue;
                    }
                    Err(err) => return Err(err.into()),
                };
                let ok = response.status().is_success();
                response.into_body().collect().await?;
                if sent >= start {
                    requests += 1;
                    errors += u64::from(!ok);
                    latencies.push(u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX));
                }
            }
            anyhow::Ok((requests, errors, latencies))
        }));
    }
    let mut report = Report {
        requests: 0,
        errors: 0,
        elapsed: measure,
        latencies_us: Vec::new(),
    };
    for task in tasks {
        let (requests, errors, latencies) = task.await??;
        report.requests += requests;
        report.errors += errors;
        report.latencies_us.extend(latencies);
    }
    report.latencies_us.sort_unstable();
    Ok(report)
}
