//! The provider's clock as the AWS SDK's time source: the SDK signs requests and paces its
//! retries on `SystemTime` values, which here come from the provider's one clock (wall time
//! at its start plus tokio's elapsed time), so a run on paused time signs with the time the
//! in-process cloud checks. Nothing here reads the system clock.

use std::time::{Duration, SystemTime};

use aws_smithy_async::time::TimeSource;

use crate::reconciler::meta::Clock;

/// [`Clock`] as an SDK [`TimeSource`].
#[derive(Clone, Copy)]
pub struct ClockTime(Clock);

impl ClockTime {
    /// The SDK time of `clock`.
    #[must_use]
    pub fn new(clock: Clock) -> Self {
        ClockTime(clock)
    }

    /// Seconds since the Unix epoch now (the start of an adaptive-mode rate limiter).
    #[must_use]
    pub fn seconds_since_epoch(&self) -> f64 {
        self.since_epoch().as_secs_f64()
    }

    fn since_epoch(&self) -> Duration {
        let t = self.0.precise_now();
        Duration::new(
            u64::try_from(t.as_second()).unwrap_or(0),
            u32::try_from(t.subsec_nanosecond()).unwrap_or(0),
        )
    }
}

impl std::fmt::Debug for ClockTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClockTime")
    }
}

impl TimeSource for ClockTime {
    fn now(&self) -> SystemTime {
        SystemTime::UNIX_EPOCH + self.since_epoch()
    }
}
