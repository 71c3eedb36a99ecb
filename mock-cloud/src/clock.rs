//! One clock for everything: tokio's, so paused-time tests drive quotas, provisioning and
//! outages alike.

use std::time::Duration;

use governor::clock::Clock;
use governor::nanos::Nanos;
use tokio::time::Instant;

/// A governor [`Clock`] that reads `tokio::time::Instant`, counting from an epoch.
///
/// Governor's own clocks read the system clock; with this one, `tokio::time::pause` and
/// `advance` move the quota buckets too.
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    epoch: Instant,
}

impl TokioClock {
    /// A clock whose zero is `epoch`.
    pub fn new(epoch: Instant) -> TokioClock {
        TokioClock { epoch }
    }

    /// The zero of this clock.
    pub fn epoch(&self) -> Instant {
        self.epoch
    }

    /// Time since the epoch at `now` (zero before it).
    pub fn since_epoch(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.epoch)
    }
}

impl Clock for TokioClock {
    type Instant = Nanos;

    fn now(&self) -> Nanos {
        Nanos::from(self.since_epoch(Instant::now()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_clock_follows_paused_tokio_time() {
        let clock = TokioClock::new(Instant::now());
        let before = clock.now();
        tokio::time::advance(Duration::from_millis(1500)).await;
        let after = clock.now();
        assert_eq!(
            Duration::from(after) - Duration::from(before),
            Duration::from_millis(1500)
        );
    }
}
