//! Serving a [`MockCloud`] over HTTP/1.1 on a socket, with graceful shutdown, through the
//! workspace's one accept loop (the `serve` crate).

use std::future::Future;

use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::cloud::MockCloud;
use crate::http::Switchable;

/// Serves `cloud` on `listener` until `shutdown` completes, then stops accepting, lets
/// every open connection finish its request in flight, and returns.
///
/// `PUT /admin/v1/config` replaces the served cloud (see [`Switchable`]); the `cloud`
/// handle passed in then keeps the old one. Use [`serve_switchable`] to keep a handle on
/// whichever cloud is current.
///
/// Each connection is served by its own task, with keep-alive and `TCP_NODELAY`. Accept
/// errors follow the `serve` crate's policy: an error about one connection is skipped, any
/// other (such as running out of file descriptors) is logged and the loop backs off for a
/// second; none ends the server. The drain has no time limit: a request held by injected
/// latency is answered before the server returns.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let cloud = mock_cloud::MockCloud::new(mock_cloud::Config::default()).unwrap();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
/// let server = tokio::spawn(mock_cloud::serve(listener, cloud, async { stopped.await.ok(); }));
/// stop.send(()).unwrap();
/// server.await.unwrap();
/// # });
/// ```
pub async fn serve(listener: TcpListener, cloud: MockCloud, shutdown: impl Future<Output = ()>) {
    serve_switchable(listener, Switchable::new(cloud), shutdown).await;
}

/// [`serve()`] for a [`Switchable`] cloud the caller keeps a clone of.
pub async fn serve_switchable(
    listener: TcpListener,
    cloud: Switchable,
    shutdown: impl Future<Output = ()>,
) {
    let options = serve::Options::default().drain_timeout(None);
    serve::serve(listener, cloud, shutdown, options).await;
}

/// A cloud [`serve_loopback`] serves on a free port of 127.0.0.1. Dropping it stops the
/// server, which then drains as [`serve()`]'s does.
pub struct Loopback {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    /// The cloud served (a handle on its state: its journal, summary and inventory).
    pub cloud: MockCloud,
    _stop: oneshot::Sender<()>,
}

/// Serves `cloud` as [`serve()`] does, on a free port of 127.0.0.1 and in a task of its own,
/// until the [`Loopback`] returned is dropped: a cloud a test reaches over HTTP.
///
/// # Errors
/// The port cannot be bound.
pub async fn serve_loopback(cloud: MockCloud) -> std::io::Result<Loopback> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(serve(listener, cloud.clone(), async {
        stopped.await.ok();
    }));
    Ok(Loopback {
        url,
        cloud,
        _stop: stop,
    })
}
