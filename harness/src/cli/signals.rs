//! The signals that stop a run: SIGINT (Ctrl-C, exit 130) and SIGTERM (CI cancelling a job,
//! exit 143).

use harness::result::Signal;

/// The next SIGINT or SIGTERM. If SIGTERM cannot be listened for, only SIGINT counts.
pub async fn next() -> Signal {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            return tokio::select! {
                _ = tokio::signal::ctrl_c() => Signal::Sigint,
                _ = term.recv() => Signal::Sigterm,
            };
        }
        tracing::warn!("cannot listen for SIGTERM; only Ctrl-C interrupts the run");
    }
    let _ = tokio::signal::ctrl_c().await;
    Signal::Sigint
}
