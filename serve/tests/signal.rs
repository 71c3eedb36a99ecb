//! `shutdown_signal` against real signals sent to this test process (a binary of its own, so
//! no other test sees them).

#![cfg(unix)]

use serve::shutdown_signal;

fn send(signal: &str) {
    let status = std::process::Command::new("kill")
        .args([signal, &std::process::id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill {signal} failed: {status}");
}

/// Pending until `signal` is sent, which may come before the first poll, then complete.
async fn stops_on(signal: &str) {
    let stop = shutdown_signal();
    tokio::pin!(stop);
    tokio::select! {
        biased;
        () = &mut stop => panic!("completed before {signal} was sent"),
        () = std::future::ready(()) => {}
    }
    let stop_before_poll = shutdown_signal();
    send(signal);
    stop.await;
    stop_before_poll.await;
}

#[tokio::test]
async fn sigterm_and_sigint_each_stop_it() {
    stops_on("-TERM").await;
    stops_on("-INT").await;
}
