//! The signals that stop a server: SIGINT (Ctrl-C) and SIGTERM (Kubernetes, CI, `kill`).

use std::future::Future;

/// Completes on the first SIGINT or SIGTERM after this call, and logs which came.
///
/// Both are listened for from the call on (not from the first poll), so a signal that comes
/// before the server starts awaiting is not lost. A signal that cannot be listened for is
/// logged as a warning and only the other one stops the process. On a platform without
/// SIGTERM, Ctrl-C alone.
///
/// # Panics
/// Outside a tokio runtime with I/O enabled (tokio's signal handling needs its driver).
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let interrupt = signal(SignalKind::interrupt());
        let terminate = signal(SignalKind::terminate());
        async move {
            let signal = tokio::select! {
                () = next(interrupt, "SIGINT") => "SIGINT",
                () = next(terminate, "SIGTERM") => "SIGTERM",
            };
            tracing::info!(signal, "shutdown signal received");
        }
    }
    #[cfg(not(unix))]
    async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::warn!(%error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
        tracing::info!(signal = "Ctrl-C", "shutdown signal received");
    }
}

/// The next delivery of a signal, or never if it could not be listened for.
#[cfg(unix)]
async fn next(listener: std::io::Result<tokio::signal::unix::Signal>, name: &str) {
    match listener {
        Ok(mut listener) => {
            listener.recv().await;
        }
        Err(error) => {
            tracing::warn!(%error, "cannot listen for {name}; only the other signal stops the process");
            std::future::pending::<()>().await;
        }
    }
}
