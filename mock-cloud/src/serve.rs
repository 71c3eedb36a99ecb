//! Serving a [`MockCloud`] over HTTP/1.1 on a socket, with graceful shutdown.

use std::future::Future;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};

use crate::cloud::MockCloud;
use crate::http::Switchable;

/// Serves `cloud` on `listener` until `shutdown` completes, then stops accepting, lets
/// every open connection finish its request in flight, and returns.
///
/// `PUT /admin/v1/config` replaces the served cloud (see [`Switchable`]); the `cloud`
/// handle passed in then keeps the old one. Use [`serve_switchable`] to keep a handle on
/// whichever cloud is current.
///
/// Each connection is served by its own task, with keep-alive. Accept errors (such as
/// running out of file descriptors) are logged and retried after a short pause; they
/// never end the server.
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

/// [`serve`] for a [`Switchable`] cloud the caller keeps a clone of.
pub async fn serve_switchable(
    listener: TcpListener,
    cloud: Switchable,
    shutdown: impl Future<Output = ()>,
) {
    let (stop_tx, stop_rx) = watch::channel(false);
    let (done_tx, mut done_rx) = mpsc::channel::<()>(1);
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(err) => {
                tracing::warn!(error = %err, "accept failed; retrying");
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        if let Err(err) = stream.set_nodelay(true) {
            tracing::debug!(error = %err, %peer, "cannot set TCP_NODELAY");
        }
        let service = TowerToHyperService::new(cloud.clone());
        let mut stop = stop_rx.clone();
        let done = done_tx.clone();
        tokio::spawn(async move {
            let connection = http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            let stopping = async move {
                let _ = stop.wait_for(|stop| *stop).await;
            };
            let result = tokio::select! {
                result = connection.as_mut() => result,
                () = stopping => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(err) = result {
                tracing::debug!(error = %err, %peer, "connection ended with an error");
            }
            drop(done);
        });
    }
    tracing::info!("shutting down: waiting for open connections");
    let _ = stop_tx.send(true);
    drop(done_tx);
    let _ = done_rx.recv().await;
}
