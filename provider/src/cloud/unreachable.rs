//! Telling the operator, in the log, that the cloud endpoint cannot be reached: at warn level,
//! with the reason, at most once per interval however many reconciles fail on it (each
//! failure also reaches the resource's status and events, which only `kubectl describe`
//! shows).

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

/// How often the warning may repeat while the endpoint stays unreachable.
pub const WARN_INTERVAL: Duration = Duration::from_secs(30);

/// When the last warning was given; shared by the clones of a client.
#[derive(Clone, Debug, Default)]
pub struct UnreachableLog {
    last: Arc<Mutex<Option<Instant>>>,
}

impl UnreachableLog {
    /// Whether a failure at `now` is to be logged: the first one, then one per
    /// [`WARN_INTERVAL`].
    pub fn due(&self, now: Instant) -> bool {
        let mut last = self.last.lock();
        match *last {
            Some(at) if now.saturating_duration_since(at) < WARN_INTERVAL => false,
            _ => {
                *last = Some(now);
                true
            }
        }
    }

    /// Logs `error` against `endpoint` at warn level if one is due.
    pub fn failed(&self, endpoint: &str, error: &(dyn std::error::Error + 'static)) {
        if self.due(Instant::now()) {
            tracing::warn!(
                endpoint,
                reason = %reason(error),
                "cannot reach the cloud endpoint (repeated at most every {}s while it lasts)",
                WARN_INTERVAL.as_secs()
            );
        }
    }
}

/// The error and every cause under it, joined: "cannot reach the cloud: connection refused".
pub fn reason(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_is_given_once_per_interval() {
        let log = UnreachableLog::default();
        let t0 = Instant::now();
        assert!(log.due(t0));
        assert!(!log.due(t0 + Duration::from_secs(1)));
        assert!(
            !log.clone()
                .due(t0 + WARN_INTERVAL - Duration::from_millis(1))
        );
        assert!(log.due(t0 + WARN_INTERVAL));
        assert!(!log.due(t0 + WARN_INTERVAL + Duration::from_secs(29)));
    }

    #[test]
    fn the_reason_names_every_cause() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
        let e = crate::cloud::CloudError::Transport(Box::new(io));
        assert_eq!(reason(&e), "cannot reach the cloud: connection refused");
    }
}
