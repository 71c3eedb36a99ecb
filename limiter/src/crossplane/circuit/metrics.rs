//! What the breaker counts (circuit_metrics.go): opens, closes and events by outcome, as plain
//! counters for a caller to export.

use std::fmt;

use strum::{Display, IntoStaticStr};

/// `circuit.EventType` (breaker.go:30-43): how the event handler treated an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, IntoStaticStr, Display)]
pub enum EventType {
    /// Let through while the circuit was closed (`EventAllowed`).
    Allowed,
    /// Dropped while the circuit was open (`EventDropped`).
    Dropped,
    /// Let through as the open circuit's periodic probe (`EventHalfOpenAllowed`).
    HalfOpenAllowed,
}

impl EventType {
    /// All three, in the order metrics list them.
    pub const ALL: [EventType; 3] = [
        EventType::Allowed,
        EventType::Dropped,
        EventType::HalfOpenAllowed,
    ];

    /// The `result` label value.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One controller's breaker counters: `circuit_breaker_opens_total`,
/// `circuit_breaker_closes_total` and `circuit_breaker_events_total{result}`
/// (circuit_metrics.go:53-69), without the `controller` label, which is the breaker's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BreakerMetrics {
    /// Closed-to-open transitions (`IncOpen`).
    pub opens: u64,
    /// Open-to-closed transitions (`IncClose`).
    pub closes: u64,
    /// Events recorded as [`EventType::Allowed`].
    pub allowed: u64,
    /// Events recorded as [`EventType::Dropped`].
    pub dropped: u64,
    /// Events recorded as [`EventType::HalfOpenAllowed`].
    pub half_open_allowed: u64,
}

impl BreakerMetrics {
    /// `IncEvent(controller, result)`.
    pub(crate) fn inc_event(&mut self, et: EventType) {
        match et {
            EventType::Allowed => self.allowed += 1,
            EventType::Dropped => self.dropped += 1,
            EventType::HalfOpenAllowed => self.half_open_allowed += 1,
        }
    }

    /// The `circuit_breaker_events_total` counter of one result.
    #[must_use]
    pub fn events(&self, et: EventType) -> u64 {
        match et {
            EventType::Allowed => self.allowed,
            EventType::Dropped => self.dropped,
            EventType::HalfOpenAllowed => self.half_open_allowed,
        }
    }
}

impl fmt::Display for BreakerMetrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "opens={} closes={}", self.opens, self.closes)?;
        for et in EventType::ALL {
            write!(f, " {et}={}", self.events(et))?;
        }
        Ok(())
    }
}
