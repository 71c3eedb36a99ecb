//! The CPU time of a reconcile: the wall time spent inside its polls. Waits (a rate
//! limiter's, the cloud's latency) are time between polls and do not count; the in-process
//! API server's and cloud's handling of its requests, polled inline, does. A measurement for
//! the `provider_reconcile_cpu_seconds` metric, which no decision reads: on tokio's paused
//! clock it is the only real time a reconcile has.

use std::future::Future;
use std::time::Duration;

/// Runs `work`, returning its output and the wall time spent polling it.
pub async fn timed<F: Future>(work: F) -> (F::Output, Duration) {
    let mut work = std::pin::pin!(work);
    let mut spent = Duration::ZERO;
    let output = std::future::poll_fn(|cx| {
        let start = std::time::Instant::now();
        let poll = work.as_mut().poll(cx);
        spent += start.elapsed();
        poll
    })
    .await;
    (output, spent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn waiting_between_polls_is_not_cpu_time() {
        let ((), spent) = timed(tokio::time::sleep(Duration::from_secs(3600))).await;
        assert!(spent < Duration::from_secs(1), "{spent:?}");
        let (sum, spent) = timed(async {
            let started = std::time::Instant::now();
            let mut x = 0_u64;
            while started.elapsed() < Duration::from_millis(5) {
                x = std::hint::black_box(x + 1);
            }
            x
        })
        .await;
        assert!(sum > 0);
        assert!(spent >= Duration::from_millis(5), "{spent:?}");
    }
}
