//! [`GrpcRunner`]: calls a function served at an address, over plaintext HTTP/2, as
//! `crossplane render`'s Development runtime does.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::client::conn::http2::{self, SendRequest};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpStream;
use tokio::sync::Mutex;
use tokio::time::Instant;
use tonic::body::Body;

use super::error::{BoxError, FunctionError};
use super::metrics::FunctionMetrics;
use super::proto::RUN_FUNCTION_V1;
use super::proto::RunFunctionRequest;
use super::runner::{self, CallSettings, FunctionRunner, RunFuture};

/// grpc-go's connection backoff: the first retry after 1 s, growing ×1.6 to at most 120 s
/// (`google.golang.org/grpc/backoff.DefaultConfig`, without its ±20 % jitter).
const BACKOFF_BASE: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(120);
const BACKOFF_MULTIPLIER: f64 = 1.6;

/// Calls the function served at one address, insecure (no TLS), keeping one HTTP/2
/// connection for all calls.
///
/// # Semantics
/// - **Wait for ready** (on by default, as core's `grpc.WaitForReady(true)`): while no
///   connection can be made, the call retries on grpc-go's backoff (1 s, ×1.6, at most
///   120 s, no jitter) until its deadline, then fails with
///   [`FunctionError::DeadlineExceeded`] carrying the last connection error. So a function
///   that is down blocks its caller until the deadline. With it off, the first failed
///   connection is [`FunctionError::Unreachable`].
/// - **Connection**: one, made on the first call and again after it closes; calls share it
///   (HTTP/2 multiplexes them). A call that fails on a broken connection is not retried.
/// - **Sizes**: responses over 4 MiB are refused as [`FunctionError::MessageTooLarge`]
///   before they are read (grpc-go's default receive limit, which core keeps). Requests over
///   4 MiB are not sent: core would send them, and the function's own 4 MiB receive limit
///   (the SDKs' default) would refuse them; the error is the same kind either way.
/// - **Version**: v1 first; on `UNIMPLEMENTED`, v1beta1, on every call, as core does.
/// - The deadline travels to the function as `grpc-timeout`.
pub struct GrpcRunner {
    address: SocketAddr,
    wait_for_ready: bool,
    settings: CallSettings,
    connection: Mutex<Option<SendRequest<Body>>>,
}

impl GrpcRunner {
    /// Calls the function at `address`, waiting for it to be ready.
    #[must_use]
    pub fn new(address: SocketAddr) -> Self {
        GrpcRunner {
            address,
            wait_for_ready: true,
            settings: CallSettings::default(),
            connection: Mutex::new(None),
        }
    }

    /// Whether a call waits for the function to accept connections (default true).
    #[must_use]
    pub fn wait_for_ready(mut self, wait: bool) -> Self {
        self.wait_for_ready = wait;
        self
    }

    /// Accepts responses up to `bytes` (default 4 MiB).
    #[must_use]
    pub fn max_response_size(mut self, bytes: usize) -> Self {
        self.settings.max_response_size = bytes;
        self
    }

    /// Sends requests up to `bytes` (default 4 MiB).
    #[must_use]
    pub fn max_request_size(mut self, bytes: usize) -> Self {
        self.settings.max_request_size = bytes;
        self
    }

    /// Counts every gRPC call in `metrics`.
    #[must_use]
    pub fn metrics(mut self, metrics: Arc<FunctionMetrics>) -> Self {
        self.settings.metrics = Some(metrics);
        self
    }

    /// The function's address.
    #[must_use]
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The open connection, or a new one; waits for the function if so configured.
    async fn connection(
        &self,
        name: &str,
        started: Instant,
        deadline: Instant,
    ) -> Result<SendRequest<Body>, FunctionError> {
        // Callers queue here while one of them connects; each waits by its own deadline.
        let Ok(mut slot) = tokio::time::timeout_at(deadline, self.connection.lock()).await else {
            return Err(deadline_exceeded(name, started, None));
        };
        if let Some(open) = slot.as_ref().filter(|c| !c.is_closed()) {
            return Ok(open.clone());
        }
        let mut backoff = BACKOFF_BASE;
        loop {
            let attempt = tokio::time::timeout_at(deadline, connect(self.address)).await;
            let error = match attempt {
                Ok(Ok(connection)) => {
                    *slot = Some(connection.clone());
                    return Ok(connection);
                }
                Ok(Err(error)) => error,
                // The deadline passed while connecting (a peer that never speaks HTTP/2).
                Err(_) => return Err(deadline_exceeded(name, started, None)),
            };
            if !self.wait_for_ready {
                return Err(FunctionError::Unreachable {
                    function: name.to_owned(),
                    address: self.address.to_string(),
                    source: error,
                });
            }
            tracing::debug!(function = name, address = %self.address, error = %error, ?backoff, "function not ready; waiting");
            if Instant::now() + backoff >= deadline {
                tokio::time::sleep_until(deadline).await;
                return Err(deadline_exceeded(name, started, Some(error)));
            }
            tokio::time::sleep(backoff).await;
            backoff = backoff.mul_f64(BACKOFF_MULTIPLIER).min(BACKOFF_MAX);
        }
    }
}

fn deadline_exceeded(name: &str, started: Instant, last: Option<BoxError>) -> FunctionError {
    FunctionError::DeadlineExceeded {
        function: name.to_owned(),
        waited: started.elapsed(),
        last_connect_error: last,
    }
}

/// A TCP connection and an HTTP/2 handshake (prior knowledge, no TLS).
async fn connect(address: SocketAddr) -> Result<SendRequest<Body>, BoxError> {
    let stream = TcpStream::connect(address).await?;
    stream.set_nodelay(true)?;
    let (send, connection) = http2::handshake(TokioExecutor::new(), TokioIo::new(stream)).await?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!(error = %e, "function connection ended with an error");
        }
    });
    Ok(send)
}

impl FunctionRunner for GrpcRunner {
    fn run<'a>(
        &'a self,
        name: &'a str,
        request: RunFunctionRequest,
        deadline: Instant,
    ) -> RunFuture<'a> {
        Box::pin(async move {
            let started = Instant::now();
            let connection = match self.connection(name, started, deadline).await {
                Ok(connection) => connection,
                Err(error) => {
                    // Waiting for the function is part of the v1 call, as in gRPC.
                    self.settings
                        .record(name, RUN_FUNCTION_V1, Err(&error), started);
                    return Err(error);
                }
            };
            let transport = Http2 {
                send: connection,
                origin: self.address,
            };
            runner::call(transport, &self.settings, name, request, started, deadline).await
        })
    }
}

/// An HTTP/2 connection as the tower `Service` tonic's client sends through.
#[derive(Clone)]
struct Http2 {
    send: SendRequest<Body>,
    origin: SocketAddr,
}

impl tower::Service<http::Request<Body>> for Http2 {
    type Response = http::Response<hyper::body::Incoming>;
    type Error = hyper::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, hyper::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), hyper::Error>> {
        self.send.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<Body>) -> Self::Future {
        // HTTP/2 wants :scheme and :authority; tonic's client sends a bare path.
        let path = request.uri().path_and_query().map_or("/", |p| p.as_str());
        if let Ok(uri) = format!("http://{}{path}", self.origin).parse() {
            *request.uri_mut() = uri;
        }
        Box::pin(self.send.send_request(request))
    }
}
