//! A server beside a binary's main work, such as the `/metrics` of the provider and of
//! composer: listening on the address a flag gave (or not at all), stopped when the work
//! has ended.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::{JoinError, JoinHandle};

/// The stop signal a server beside the work is given: it completes when [`Beside::stop`]
/// is called, or when the [`Beside`] is dropped.
pub type Stopped = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A server running beside the work, or none (no address was given).
pub struct Beside {
    stop: oneshot::Sender<()>,
    task: Option<JoinHandle<()>>,
}

impl Beside {
    /// Listens on `addr` and spawns `server` on the listener with its stop signal; no
    /// server without an address. `flag` names the address in the error and `what` in the
    /// log line (`serving /metrics`).
    ///
    /// # Errors
    /// `addr` cannot be listened on: `cannot listen on FLAG ADDR: …`.
    pub async fn start<F, Fut>(
        addr: Option<SocketAddr>,
        flag: &str,
        what: &str,
        server: F,
    ) -> io::Result<Beside>
    where
        F: FnOnce(TcpListener, Stopped) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let (stop, stopped) = oneshot::channel::<()>();
        let task = match addr {
            Some(addr) => {
                let listener = TcpListener::bind(addr).await.map_err(|e| {
                    io::Error::new(e.kind(), format!("cannot listen on {flag} {addr}: {e}"))
                })?;
                tracing::info!(%addr, "serving {what}");
                let stopped: Stopped = Box::pin(async {
                    let _ = stopped.await;
                });
                Some(tokio::spawn(server(listener, stopped)))
            }
            None => None,
        };
        Ok(Beside { stop, task })
    }

    /// Stops the server and waits until it has ended.
    ///
    /// # Errors
    /// The server's task panicked.
    pub async fn stop(self) -> Result<(), JoinError> {
        let _ = self.stop.send(());
        match self.task {
            Some(task) => task.await,
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    #[tokio::test]
    async fn a_server_beside_runs_until_stopped_and_none_without_an_address() {
        let ended = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&ended);
        let addr = Some("127.0.0.1:0".parse().unwrap());
        let beside = Beside::start(
            addr,
            "--metrics-addr",
            "/metrics",
            |_listener, stopped| async move {
                stopped.await;
                seen.store(true, Ordering::SeqCst);
            },
        )
        .await
        .unwrap();
        assert!(!ended.load(Ordering::SeqCst));
        beside.stop().await.unwrap();
        assert!(ended.load(Ordering::SeqCst));

        let none = Beside::start(None, "--metrics-addr", "/metrics", |_, _| async {
            unreachable!("no server without an address")
        })
        .await
        .unwrap();
        assert!(none.task.is_none());
        none.stop().await.unwrap();
    }

    #[tokio::test]
    async fn an_address_in_use_is_an_error_that_names_the_flag() {
        let taken = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = taken.local_addr().unwrap();
        let err = Beside::start(Some(addr), "--metrics-addr", "/metrics", |_, _| async {})
            .await
            .err()
            .unwrap();
        assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
        assert!(
            err.to_string()
                .starts_with(&format!("cannot listen on --metrics-addr {addr}: ")),
            "{err}"
        );
    }
}
