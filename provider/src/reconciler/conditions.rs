//! The conditions crossplane-runtime sets (`pkg/conditions`, `apis/core/v2/condition.go`).

use crate::crd::Condition;

/// `Ready`.
pub const READY: &str = "Ready";
/// `Synced`.
pub const SYNCED: &str = "Synced";

fn condition(type_: &str, status: &str, reason: &str, message: Option<String>) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        last_transition_time: String::new(),
        reason: reason.to_owned(),
        message,
        observed_generation: None,
    }
}

/// Ready=True `Available`: the cloud resource is ready for use.
#[must_use]
pub fn available() -> Condition {
    condition(READY, "True", "Available", None)
}

/// Ready=False `Unavailable`: the cloud resource exists but is not usable.
#[must_use]
pub fn unavailable() -> Condition {
    condition(READY, "False", "Unavailable", None)
}

/// Ready=False `Creating`.
#[must_use]
pub fn creating() -> Condition {
    condition(READY, "False", "Creating", None)
}

/// Ready=False `Deleting`.
#[must_use]
pub fn deleting() -> Condition {
    condition(READY, "False", "Deleting", None)
}

/// Synced=True `ReconcileSuccess`.
#[must_use]
pub fn reconcile_success() -> Condition {
    condition(SYNCED, "True", "ReconcileSuccess", None)
}

/// Synced=False `ReconcileError` with the error's text.
#[must_use]
pub fn reconcile_error(message: impl Into<String>) -> Condition {
    condition(SYNCED, "False", "ReconcileError", Some(message.into()))
}

/// Synced=False `ReconcilePaused`.
#[must_use]
pub fn reconcile_paused() -> Condition {
    condition(SYNCED, "False", "ReconcilePaused", None)
}

/// An error and its causes on one line, `a: b: c`, for condition messages and events.
#[must_use]
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        text.push_str(": ");
        text.push_str(&e.to_string());
        source = e.source();
    }
    text
}
