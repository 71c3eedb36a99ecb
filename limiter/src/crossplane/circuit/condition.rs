//! The `Responsive` condition the XR reconciler sets from the breaker's state
//! (composite/reconciler.go:601-607; apis/apiextensions/v1/conditions.go:43, 57-58, 128-147).

use std::fmt;

use super::breaker::State;

/// `TypeResponsive`.
pub const TYPE_RESPONSIVE: &str = "Responsive";
/// `ReasonWatchCircuitOpen`.
pub const REASON_WATCH_CIRCUIT_OPEN: &str = "WatchCircuitOpen";
/// `ReasonWatchCircuitClosed`.
pub const REASON_WATCH_CIRCUIT_CLOSED: &str = "WatchCircuitClosed";

/// A `Responsive` condition (its `LastTransitionTime` left out: it is the reconcile's clock).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Responsive {
    /// `True` while the circuit is closed, `False` while it is open.
    pub status: bool,
    /// [`REASON_WATCH_CIRCUIT_OPEN`] or [`REASON_WATCH_CIRCUIT_CLOSED`].
    pub reason: &'static str,
    /// `Too many watch events from <trigger>. Allowing events periodically.` while open; empty
    /// while closed.
    pub message: String,
}

impl Responsive {
    /// `WatchCircuitOpen(s.TriggeredBy)` when `s.IsOpen`, else `WatchCircuitClosed()`.
    #[must_use]
    pub fn from_state(s: &State) -> Self {
        if s.is_open {
            Responsive {
                status: false,
                reason: REASON_WATCH_CIRCUIT_OPEN,
                message: format!(
                    "Too many watch events from {}. Allowing events periodically.",
                    s.triggered_by
                ),
            }
        } else {
            Responsive {
                status: true,
                reason: REASON_WATCH_CIRCUIT_CLOSED,
                message: String::new(),
            }
        }
    }
}

impl fmt::Display for Responsive {
    /// `type=Responsive status=False reason=WatchCircuitOpen message=Too many ...`: the message
    /// last and unquoted, as `corev1.ConditionStatus` prints `True`/`False`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = if self.status { "True" } else { "False" };
        write!(
            f,
            "type={TYPE_RESPONSIVE} status={status} reason={} message={}",
            self.reason, self.message
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_circuit_names_its_trigger_in_gos_words() {
        let s = State {
            is_open: true,
            next_allowed_at: None,
            triggered_by: "Bucket/b (team-a)".to_owned(),
        };
        assert_eq!(
            Responsive::from_state(&s).to_string(),
            "type=Responsive status=False reason=WatchCircuitOpen message=Too many watch events \
             from Bucket/b (team-a). Allowing events periodically."
        );
    }

    #[test]
    fn a_closed_circuit_is_responsive_with_no_message() {
        let s = State {
            is_open: false,
            next_allowed_at: None,
            triggered_by: String::new(),
        };
        let c = Responsive::from_state(&s);
        assert!(c.status);
        assert_eq!(c.reason, "WatchCircuitClosed");
        assert!(c.message.is_empty());
    }
}
