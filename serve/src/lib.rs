//! One accept loop for the workspace's HTTP servers (mock-cloud, mock-apiserver and the
//! provider's `/metrics` on HTTP/1.1; with the `http2` feature, composer's gRPC function
//! servers on plaintext HTTP/2), so they share one accept-error policy and one way to shut
//! down.
//!
//! # Semantics
//! - **Accept errors.** A per-connection error (`ECONNREFUSED`, `ECONNABORTED`,
//!   `ECONNRESET`: the peer gave up before we took the connection) is skipped at once.
//!   Any other error, above all `EMFILE`/`ENFILE` (out of file descriptors), is logged and
//!   the loop sleeps [`ACCEPT_ERROR_BACKOFF`] before it accepts again, as axum's
//!   `serve` does: retrying at once would spin at 100 % CPU until a descriptor frees.
//!   No accept error ends the server.
//! - **Shutdown.** When `shutdown` completes, the loop stops accepting, asks every open
//!   connection to finish gracefully (the request in flight completes; keep-alive ends),
//!   and waits for them for at most [`Options::drain_timeout`], after which the rest are
//!   dropped (an HTTP/2 connection sends GOAWAY and finishes its open streams). Streaming
//!   responses (watches) must end on their own: a server that streams
//!   ties its streams to its own stop signal.
//!
//! [`shutdown_signal`] is the stop signal of the servers' binaries: SIGINT or SIGTERM;
//! [`Beside`] runs a server (a `/metrics`) beside a binary's main work; with the `log` feature,
//! [`log::init`] is the binaries' one way to log.
//!
//! # Example
//! ```
//! use std::convert::Infallible;
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let service = tower::service_fn(|_req: http::Request<hyper::body::Incoming>| async {
//!     Ok::<_, Infallible>(http::Response::new(String::from("hello")))
//! });
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
//! let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
//! let server = tokio::spawn(serve::serve(listener, service, async { stopped.await.ok(); }, serve::Options::default()));
//! stop.send(()).unwrap();
//! server.await.unwrap();
//! # });
//! ```

use std::future::Future;
use std::io;
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

mod beside;
#[cfg(feature = "log")]
pub mod log;
mod signal;
pub use beside::{Beside, Stopped};
pub use signal::shutdown_signal;

/// How long the loop waits after an accept error that is not about one connection.
pub const ACCEPT_ERROR_BACKOFF: Duration = Duration::from_secs(1);

/// The HTTP version a server speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Protocol {
    /// HTTP/1.1, with keep-alive as [`Options::keep_alive`] says.
    #[default]
    Http1,
    /// HTTP/2 with prior knowledge (`h2c`, no upgrade, no TLS): how gRPC runs in plaintext.
    #[cfg(feature = "http2")]
    Http2,
}

/// How a server runs.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// The HTTP version.
    pub protocol: Protocol,
    /// How long open connections get to finish after shutdown starts; `None` waits for
    /// them all.
    pub drain_timeout: Option<Duration>,
    /// HTTP/1.1 keep-alive.
    pub keep_alive: bool,
    /// Set `TCP_NODELAY` on accepted sockets.
    pub nodelay: bool,
}

impl Default for Options {
    /// HTTP/1.1, keep-alive and `TCP_NODELAY` on; connections get 5 s to drain.
    fn default() -> Options {
        Options {
            protocol: Protocol::Http1,
            drain_timeout: Some(Duration::from_secs(5)),
            keep_alive: true,
            nodelay: true,
        }
    }
}

impl Options {
    /// Waits at most `timeout` for open connections at shutdown (`None`: for all of them).
    #[must_use]
    pub fn drain_timeout(mut self, timeout: Option<Duration>) -> Options {
        self.drain_timeout = timeout;
        self
    }

    /// Speaks `protocol`.
    #[must_use]
    pub fn protocol(mut self, protocol: Protocol) -> Options {
        self.protocol = protocol;
        self
    }
}

/// Whether an accept error concerns only the connection being accepted (skip it), rather
/// than the listener or the process (back off).
#[must_use]
pub fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Serves `service` on `listener`, one task per connection, until `shutdown` completes;
/// see the [crate docs](crate) for the accept-error policy and the drain.
pub async fn serve<S, B>(
    listener: TcpListener,
    service: S,
    shutdown: impl Future<Output = ()>,
    options: Options,
) where
    S: tower::Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                tracing::error!(error = %e, "accept failed; backing off");
                tokio::select! {
                    () = &mut shutdown => break,
                    () = tokio::time::sleep(ACCEPT_ERROR_BACKOFF) => continue,
                }
            }
        };
        if options.nodelay
            && let Err(e) = stream.set_nodelay(true)
        {
            tracing::debug!(error = %e, %peer, "cannot set TCP_NODELAY");
        }
        let service = TowerToHyperService::new(service.clone());
        let mut stop = stop_rx.clone();
        connections.spawn(async move {
            let stopping = async move {
                // An error means the sender is gone, which also means stop.
                let _ = stop.wait_for(|stopped| *stopped).await;
            };
            // Both connection types finish gracefully the same way, through an inherent
            // method each, hence a macro rather than a function.
            macro_rules! drive {
                ($connection:expr) => {{
                    let connection = $connection;
                    tokio::pin!(connection);
                    tokio::select! {
                        result = connection.as_mut() => result,
                        () = stopping => {
                            connection.as_mut().graceful_shutdown();
                            connection.await
                        }
                    }
                }};
            }
            let io = TokioIo::new(stream);
            let result = match options.protocol {
                Protocol::Http1 => drive!(
                    http1::Builder::new()
                        .keep_alive(options.keep_alive)
                        .serve_connection(io, service)
                ),
                #[cfg(feature = "http2")]
                Protocol::Http2 => drive!(
                    hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                        .serve_connection(io, service)
                ),
            };
            if let Err(e) = result {
                tracing::debug!(error = %e, %peer, "connection ended with an error");
            }
        });
    }
    tracing::info!(
        open = connections.len(),
        "shutting down: draining connections"
    );
    let _ = stop_tx.send(true);
    let drain = async { while connections.join_next().await.is_some() {} };
    match options.drain_timeout {
        None => drain.await,
        Some(limit) => {
            if tokio::time::timeout(limit, drain).await.is_err() {
                tracing::warn!(
                    open = connections.len(),
                    "connections still open after the drain timeout; closing them"
                );
                connections.shutdown().await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use bytes::Bytes;
    use http_body_util::{BodyExt, Empty, Full};
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;

    use super::*;

    #[test]
    fn only_errors_about_one_connection_are_skipped_without_a_pause() {
        for kind in [
            io::ErrorKind::ConnectionRefused,
            io::ErrorKind::ConnectionAborted,
            io::ErrorKind::ConnectionReset,
        ] {
            assert!(is_connection_error(&io::Error::from(kind)), "{kind:?}");
        }
        // EMFILE: "Too many open files".
        assert!(!is_connection_error(&io::Error::from_raw_os_error(24)));
        assert!(!is_connection_error(&io::Error::other("listener closed")));
    }

    #[tokio::test]
    async fn a_served_request_is_answered_and_shutdown_returns() {
        let service = tower::service_fn(|req: Request<Incoming>| async move {
            let path = req.uri().path().to_owned();
            Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(path))))
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve(
            listener,
            service,
            async {
                stopped.await.ok();
            },
            Options::default(),
        ));
        let client = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
        let response = client
            .get(format!("http://{addr}/hello").parse().unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&body[..], b"/hello");
        stop.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(10), server)
            .await
            .expect("serve returns after shutdown")
            .unwrap();
    }

    #[cfg(feature = "http2")]
    #[tokio::test]
    async fn an_http2_server_answers_a_prior_knowledge_client_and_shuts_down() {
        let service = tower::service_fn(|req: Request<Incoming>| async move {
            let version = format!("{:?}", req.version());
            Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(version))))
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let options = Options::default().protocol(Protocol::Http2);
        let server = tokio::spawn(serve(
            listener,
            service,
            async {
                stopped.await.ok();
            },
            options,
        ));
        let client = Client::builder(TokioExecutor::new())
            .http2_only(true)
            .build_http::<Empty<Bytes>>();
        let response = client
            .get(format!("http://{addr}/").parse().unwrap())
            .await
            .unwrap();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&body[..], b"HTTP/2.0");
        stop.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(10), server)
            .await
            .expect("serve returns after shutdown")
            .unwrap();
    }
}
