//! Serving an [`ApiServer`] on a TCP socket (HTTP/1.1, plain text), through the workspace's
//! one accept loop (the `serve` crate).

use std::future::Future;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::server::ApiServer;
use crate::service::ApiService;

/// How long open connections get to finish after shutdown starts.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Serves `server` on `listener` until `shutdown` completes.
///
/// Each connection is served by its own task, with keep-alive and `TCP_NODELAY`. Accept
/// errors follow the `serve` crate's policy: an error about one connection is skipped, any
/// other (such as running out of file descriptors) is logged and the loop backs off for a
/// second; none ends the server.
///
/// On shutdown it stops accepting, ends the watch streams opened through this socket
/// (clients see a clean end of stream), lets in-flight requests finish for up to five
/// seconds, and returns. The [`ApiServer`] itself stays usable in-process.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let server = mock_apiserver::ApiServer::default();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
/// let task = tokio::spawn(mock_apiserver::serve(listener, server, async { stopped.await.ok(); }));
/// stop.send(()).unwrap();
/// task.await.unwrap();
/// # });
/// ```
pub async fn serve(listener: TcpListener, server: ApiServer, shutdown: impl Future<Output = ()>) {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let service = ApiService::new(server, Some(stop_rx));
    // Watches end when the stop signal flips, so the drain only waits for ordinary
    // requests: the same signal that ends the accept loop ends the streams.
    let shutdown = async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    };
    let options = serve::Options::default().drain_timeout(Some(DRAIN_TIMEOUT));
    serve::serve(listener, service, shutdown, options).await;
}
