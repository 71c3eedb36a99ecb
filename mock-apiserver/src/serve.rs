//! Serving an [`ApiServer`] on a TCP socket (HTTP/1.1, plain text).

use std::future::Future;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use crate::server::ApiServer;
use crate::service::ApiService;

/// How long open connections get to finish after shutdown starts.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Serves `server` on `listener` until `shutdown` completes.
///
/// On shutdown it stops accepting, ends the watch streams opened through this socket
/// (clients see a clean end of stream), lets in-flight requests finish for up to five
/// seconds, and returns. The [`ApiServer`] itself stays usable in-process.
pub async fn serve(
    listener: TcpListener,
    server: ApiServer,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let service = ApiService::new(server, Some(stop_rx.clone()));
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        tracing::warn!(%error, "accept failed");
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let service = TowerToHyperService::new(service.clone());
                let mut stop = stop_rx.clone();
                connections.spawn(async move {
                    let stopped = async move {
                        // An error means the sender is gone, which also means stop.
                        let _ = stop.wait_for(|stopped| *stopped).await;
                    };
                    let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
                    tokio::pin!(connection);
                    tokio::select! {
                        result = connection.as_mut() => {
                            if let Err(error) = result {
                                tracing::debug!(%peer, %error, "connection ended with an error");
                            }
                        }
                        () = stopped => {
                            connection.as_mut().graceful_shutdown();
                            let _ = connection.await;
                        }
                    }
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    tracing::info!("shutting down");
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(DRAIN_TIMEOUT, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            open = connections.len(),
            "connections still open after the drain timeout; closing them"
        );
        connections.shutdown().await;
    }
    Ok(())
}
