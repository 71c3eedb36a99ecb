//! A resync phase's early verdict: the provider reconciles the resources it was asked to,
//! yet none of them records the token. crossplane-runtime records
//! `crossplane.io/reconcile-requested-at` in `status.lastHandledReconcileAt` only for a
//! managed type that implements `Get/SetLastHandledReconcileAt`; for any other type the
//! annotation brings one reconcile and nothing else, and a resync phase would wait out its
//! timeout.
//!
//! # Semantics
//! The evidence that reconciles go on is the cloud's journal: a call for a requested
//! resource (by its cloud name) after the phase's last write comes from a reconcile that
//! ran after the request. Such a reconcile of a provider that tracks requests writes the
//! token with its status within milliseconds; [`NotHandled`] gives it `grace` from the first
//! such call the harness sees, and the verdict is due only when no requested resource shows
//! its token by then. A provider that reconciles nothing (stopped, saturated) gives no
//! evidence: the phase then waits for its timeout as before.

use std::collections::HashSet;
use std::time::Duration;

use tokio::time::Instant;

use super::target::CloudControl;
use crate::result::PhaseFailure;

/// Watches one resync phase for a provider that does not record reconcile requests.
#[derive(Debug)]
pub(crate) struct NotHandled {
    /// The cloud names of the requested resources.
    names: HashSet<String>,
    /// The next journal entry to read.
    cursor: u64,
    /// The requested resources seen in the journal since the phase's writes.
    reconciled: HashSet<String>,
    /// When the harness first saw one.
    first: Option<Instant>,
    grace: Duration,
}

impl NotHandled {
    /// Watches for calls for `names` (the requested resources' cloud names) from journal
    /// entry `from` on (the first after the phase's writes), with `grace`.
    pub(crate) fn new(names: HashSet<String>, from: u64, grace: Duration) -> NotHandled {
        NotHandled {
            names,
            cursor: from,
            reconciled: HashSet::new(),
            first: None,
            grace,
        }
    }

    /// Reads the journal's new entries; the first call for a requested resource starts the
    /// grace at `now`. A journal that cannot be read is tried again at the next look.
    pub(crate) async fn look(&mut self, cloud: &impl CloudControl, now: Instant) {
        let calls = match cloud.calls_since(self.cursor).await {
            Ok(page) => page.calls,
            Err(e) => {
                tracing::debug!(error = %e, "cannot read the cloud's journal; trying again");
                return;
            }
        };
        for call in calls {
            self.cursor = call.seq + 1;
            if self.names.contains(&call.name) {
                self.reconciled.insert(call.name);
                self.first.get_or_insert(now);
            }
        }
    }

    /// The verdict at `now` when no requested resource has recorded its token: due once
    /// `grace` has passed since the first reconcile seen.
    pub(crate) fn verdict(&self, now: Instant) -> Option<PhaseFailure> {
        let first = self.first?;
        (now >= first + self.grace).then(|| PhaseFailure::ReconcileRequestsNotImplemented {
            requested: self.names.len() as u64,
            reconciled: self.reconciled.len() as u64,
            grace_ms: u64::try_from(self.grace.as_millis()).unwrap_or(u64::MAX),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::clock::RunClock;
    use crate::run::target::fake::{FakeCloud, cloud_get};

    #[tokio::test(start_paused = true)]
    async fn the_verdict_is_due_a_grace_after_the_first_reconcile_of_a_requested_resource() {
        let cloud = FakeCloud::new(RunClock::start());
        let names = ["a", "b", "c"].map(str::to_owned).into_iter().collect();
        let mut watch = NotHandled::new(names, 1, Duration::from_secs(10));
        let t0 = Instant::now();
        // Before the writes (seq 0) and another resource: no evidence.
        cloud
            .calls
            .lock()
            .unwrap()
            .extend([cloud_get(0, "a"), cloud_get(1, "other")]);
        watch.look(&cloud, t0).await;
        assert_eq!(watch.verdict(t0 + Duration::from_secs(60)), None);
        cloud.calls.lock().unwrap().extend([
            cloud_get(2, "a"),
            cloud_get(3, "b"),
            cloud_get(4, "a"),
        ]);
        let seen = t0 + Duration::from_secs(1);
        watch.look(&cloud, seen).await;
        assert_eq!(watch.verdict(seen + Duration::from_millis(9_999)), None);
        assert_eq!(
            watch.verdict(seen + Duration::from_secs(10)),
            Some(PhaseFailure::ReconcileRequestsNotImplemented {
                requested: 3,
                reconciled: 2,
                grace_ms: 10_000
            })
        );
    }
}
