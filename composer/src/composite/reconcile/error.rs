//! Why a reconcile failed, and the message core writes for it.

use std::time::Duration;

use crate::composite::{ComposeError, RevisionError, SelectError};

/// Why a reconcile failed (the queue backs the XR off). Each displays as core's error
/// does, which is the message of the XR's `Synced` condition.
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// An API request failed.
    #[error("cannot {action}")]
    Api {
        /// What was being done.
        action: &'static str,
        /// The client's error.
        #[source]
        source: kube::Error,
    },
    /// No Composition could be selected.
    #[error("cannot select Composition")]
    Select(#[source] SelectError),
    /// No usable revision.
    #[error("cannot fetch Composition")]
    Revision(#[source] RevisionError),
    /// The revision's pipeline is not valid (core does not wrap this error).
    #[error(transparent)]
    InvalidPipeline(RevisionError),
    /// Composing failed.
    #[error("cannot compose resources")]
    Compose(#[source] ComposeError),
    /// The XR does not read.
    #[error("cannot read the XR's spec.crossplane")]
    Machinery(#[source] serde_json::Error),
    /// The reconcile's deadline ([`RECONCILE_TIMEOUT`](super::RECONCILE_TIMEOUT)) passed:
    /// whatever request or call was in flight was abandoned, as Go's context cancels it.
    #[error("context deadline exceeded after {0:?}")]
    DeadlineExceeded(Duration),
}

pub(super) fn api(action: &'static str) -> impl FnOnce(kube::Error) -> ReconcileError {
    move |source| ReconcileError::Api { action, source }
}

/// An error's message as Go's wrapped errors print: each cause after `: `; an API server's
/// refusal is its `Status` message, as client-go's `StatusError` prints.
#[must_use]
pub fn error_message(error: &(dyn std::error::Error + 'static)) -> String {
    if let Some(kube::Error::Api(status)) = error.downcast_ref::<kube::Error>() {
        return status.message.clone();
    }
    let mut message = error.to_string();
    if let Some(source) = error.source() {
        message.push_str(": ");
        message.push_str(&error_message(source));
    }
    message
}

pub(super) fn is_conflict(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(s) if s.code == 409)
}
