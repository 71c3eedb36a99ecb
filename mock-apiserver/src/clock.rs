//! Wall-clock timestamps derived from tokio time.
//!
//! The server stamps objects (`creationTimestamp`, `deletionTimestamp`) with wall-clock
//! time, but every decision runs on tokio time. A [`Clock`] reads the wall clock once, at
//! construction (its epoch), and advances it with `tokio::time::Instant`, so a paused-time
//! test sees timestamps move exactly as far as its virtual clock. RFC 3339 formatting and
//! parsing is jiff's.

use std::time::Duration;

use jiff::Timestamp;
use tokio::time::Instant;

/// Wall-clock time that advances with tokio time.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    epoch: Timestamp,
    start: Instant,
}

impl Clock {
    /// Starts the clock now; its epoch is the wall-clock time read at the same moment.
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
            epoch: Timestamp::now(),
        }
    }

    /// A clock that reads `epoch` at tokio's `start`.
    pub fn at(epoch: Timestamp, start: Instant) -> Self {
        Self { epoch, start }
    }

    /// The wall-clock time at which the clock read zero.
    pub fn epoch(&self) -> Timestamp {
        self.epoch
    }

    /// The tokio instant at which the clock read zero.
    pub fn start(&self) -> Instant {
        self.start
    }

    /// Time since the epoch (tokio time).
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// The wall-clock time now: the epoch plus the tokio time elapsed since.
    pub fn now(&self) -> Timestamp {
        self.epoch
            .checked_add(self.elapsed())
            .unwrap_or(Timestamp::MAX)
    }

    /// Now as RFC 3339 with whole seconds (`metav1.Time`).
    pub fn rfc3339(&self) -> String {
        format_seconds(self.now())
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

/// `t` as RFC 3339 in UTC with whole seconds, truncated as Go's `time.RFC3339` layout
/// does (`metav1.Time`).
pub fn format_seconds(t: Timestamp) -> String {
    Timestamp::from_second(t.as_second())
        .unwrap_or(t)
        .to_string()
}

/// Seconds since the Unix epoch of an RFC 3339 text, or `None` when it is not one.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    text.parse::<Timestamp>().ok().map(|t| t.as_second())
}

/// Renders an age the way `kubectl get` does for its AGE column.
pub fn human_age(secs: i64) -> String {
    if secs < 0 {
        return "<invalid>".into();
    }
    let (m, h, d) = (secs / 60, secs / 3600, secs / 86_400);
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 600 => {
            let rest = s % 60;
            if rest == 0 {
                format!("{m}m")
            } else {
                format!("{m}m{rest}s")
            }
        }
        s if s < 3 * 3600 => format!("{m}m"),
        s if s < 8 * 3600 => {
            let rest = m % 60;
            if rest == 0 {
                format!("{h}h")
            } else {
                format!("{h}h{rest}m")
            }
        }
        s if s < 48 * 3600 => format!("{h}h"),
        s if s < 8 * 86_400 => {
            let rest = h % 24;
            if rest == 0 {
                format!("{d}d")
            } else {
                format!("{d}d{rest}h")
            }
        }
        s if s < 2 * 365 * 86_400 => format!("{d}d"),
        _ => format!("{}y", d / 365),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting_and_parsing_round_trip() {
        let t = Timestamp::new(1_763_722_800, 123_456_789).unwrap();
        assert_eq!(format_seconds(t), "2025-11-21T11:00:00Z");
        assert_eq!(
            parse_rfc3339("2025-11-21T11:00:00.123456Z"),
            Some(1_763_722_800)
        );
        assert_eq!(
            parse_rfc3339("2025-11-21T12:00:00+01:00"),
            Some(1_763_722_800)
        );
        assert_eq!(parse_rfc3339("yesterday"), None);
    }

    #[test]
    fn ages_read_like_kubectl() {
        assert_eq!(human_age(5), "5s");
        assert_eq!(human_age(330), "5m30s");
        assert_eq!(human_age(3600), "60m");
        assert_eq!(human_age(5 * 3600 + 60), "5h1m");
        assert_eq!(human_age(3 * 86_400), "3d");
    }

    #[tokio::test(start_paused = true)]
    async fn the_clock_advances_with_tokio_time() {
        let clock = Clock::new();
        let before = clock.now();
        tokio::time::advance(Duration::from_secs(90)).await;
        assert_eq!(clock.now().as_second() - before.as_second(), 90);
        assert_eq!(clock.elapsed(), Duration::from_secs(90));
    }
}
