//! Why a phase ended before its `until` without waiting for its timeout: the harness found
//! that the `until` cannot be met, and says why.

use serde::{Deserialize, Serialize};

/// A phase's verdict when it stopped early. The phase fails (exit 1), and the run goes on
/// with the next phase: unlike a timeout, nothing is left half done.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum PhaseFailure {
    /// A resync phase: the provider reconciled resources it was asked to, but for the
    /// grace after the first of those reconciles none recorded the token in
    /// `status.lastHandledReconcileAt`. crossplane-runtime records it only for a managed
    /// type that implements `Get/SetLastHandledReconcileAt`.
    #[serde(rename_all = "camelCase")]
    ReconcileRequestsNotImplemented {
        /// Resources the phase asked to reconcile.
        requested: u64,
        /// Of them, those the provider observed in the cloud after the request.
        reconciled: u64,
        /// The grace, ms.
        grace_ms: u64,
    },
}

impl PhaseFailure {
    /// What failed, in a few words: `this provider does not implement reconcile requests`.
    #[must_use]
    pub fn headline(&self) -> &'static str {
        match self {
            PhaseFailure::ReconcileRequestsNotImplemented { .. } => {
                "this provider does not implement reconcile requests"
            }
        }
    }

    /// The kind, as JUnit's failure type: `reconcileRequestsNotImplemented`.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            PhaseFailure::ReconcileRequestsNotImplemented { .. } => {
                "reconcileRequestsNotImplemented"
            }
        }
    }

    /// The headline with the evidence.
    #[must_use]
    pub fn message(&self) -> String {
        match self {
            PhaseFailure::ReconcileRequestsNotImplemented {
                requested,
                reconciled,
                grace_ms,
            } => format!(
                "{}: it reconciled {reconciled} of the {requested} resources asked (their Observes reached the cloud), and {} after the first none had recorded the token in status.lastHandledReconcileAt (crossplane-runtime records it only for a managed type with Get/SetLastHandledReconcileAt)",
                self.headline(),
                limiter::go::GoDuration::from_std(std::time::Duration::from_millis(*grace_ms))
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_says_what_the_provider_lacks_and_the_evidence() {
        let f = PhaseFailure::ReconcileRequestsNotImplemented {
            requested: 100,
            reconciled: 97,
            grace_ms: 10_000,
        };
        assert!(
            f.message().starts_with(
                "this provider does not implement reconcile requests: it reconciled 97 of the 100 resources asked"
            ),
            "{}",
            f.message()
        );
        assert!(f.message().contains(", and 10s after the first"));
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["kind"], "reconcileRequestsNotImplemented");
        assert_eq!(json["graceMs"], 10_000);
    }
}
