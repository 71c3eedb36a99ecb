//! Event names: `util.GenerateEventName`, `<object>.<time in nanoseconds, hex>`.

use std::sync::Mutex;

use k8s_openapi::jiff::Timestamp;

/// Gives event names from their time, one nanosecond past the last name's when the clock
/// has not moved since: on a paused clock the events of one reconcile share an instant, and
/// the API server would refuse the second as a duplicate (a refusal client-go does not
/// retry), where Go's clock reads a later nanosecond.
#[derive(Debug)]
pub(super) struct Names {
    last_ns: Mutex<i128>,
}

impl Default for Names {
    fn default() -> Self {
        Names {
            last_ns: Mutex::new(i128::MIN),
        }
    }
}

impl Names {
    /// The name of an event about `object` at `now`.
    pub(super) fn name(&self, object: &str, now: Timestamp) -> String {
        let mut last = self
            .last_ns
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let ns = now.as_nanosecond().max(last.saturating_add(1));
        *last = ns;
        format!("{object}.{ns:x}")
    }
}
