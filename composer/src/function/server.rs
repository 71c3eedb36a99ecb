//! [`FunctionServer`]: serves a [`Function`] over plaintext HTTP/2 on a TCP listener, as a
//! function run with `--insecure` does.

use std::io;
use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::service::{Function, FunctionService};

/// A running gRPC server for one function; see [`FunctionService`] for what it answers.
///
/// # Semantics
/// The accept loop is the workspace's (the `serve` crate): one accept-error policy, and on
/// [`FunctionServer::shutdown`] a GOAWAY to each connection and a drain of at most 5 s.
/// Dropping the server without `shutdown` stops it too, without waiting.
pub struct FunctionServer {
    address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl FunctionServer {
    /// Serves `function` on `address` (port 0 picks a free port; see
    /// [`FunctionServer::address`]).
    ///
    /// # Errors
    /// The address cannot be bound.
    pub async fn bind<F: Function>(address: SocketAddr, function: F) -> io::Result<FunctionServer> {
        FunctionServer::bind_service(address, FunctionService::new(function)).await
    }

    /// Serves `service` on `address`.
    ///
    /// # Errors
    /// The address cannot be bound.
    pub async fn bind_service<F: Function + ?Sized>(
        address: SocketAddr,
        service: FunctionService<F>,
    ) -> io::Result<FunctionServer> {
        let listener = TcpListener::bind(address).await?;
        FunctionServer::serve(listener, service)
    }

    /// Serves `service` on a bound `listener`.
    ///
    /// # Errors
    /// The listener has no local address.
    pub fn serve<F: Function + ?Sized>(
        listener: TcpListener,
        service: FunctionService<F>,
    ) -> io::Result<FunctionServer> {
        FunctionServer::serve_dyn(listener, service.into_dyn())
    }

    /// [`FunctionServer::serve`] for any function, behind one `dyn`: compiled once.
    fn serve_dyn(
        listener: TcpListener,
        service: FunctionService<dyn Function>,
    ) -> io::Result<FunctionServer> {
        let address = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let options = serve::Options::default().protocol(serve::Protocol::Http2);
        let task = tokio::spawn(serve::serve(
            listener,
            service,
            async {
                // A dropped sender also stops the server.
                let _ = stopped.await;
            },
            options,
        ));
        tracing::info!(%address, "function server listening");
        Ok(FunctionServer {
            address,
            stop: Some(stop),
            task,
        })
    }

    /// Where the server listens.
    #[must_use]
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Stops accepting, lets open calls finish (at most 5 s), and returns.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Err(e) = (&mut self.task).await {
            tracing::warn!(error = %e, "function server task failed");
        }
    }
}

impl Drop for FunctionServer {
    fn drop(&mut self) {
        if self.stop.is_some() {
            self.task.abort();
        }
    }
}
