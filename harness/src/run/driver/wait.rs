//! Waiting for a phase's `until` in what the watches saw: which resources it waits for,
//! whether each meets it, and the wait itself (recounting on every change, at most every
//! [`RECOUNT`]), with a resync phase's early verdict.

use std::collections::HashSet;
use std::time::Duration;

use tokio::time::Instant;

use super::log::{PhaseEnd, Unmet};
use super::state::State;
use crate::run::handled::NotHandled;
use crate::run::progress::PhaseBar;
use crate::run::source::watches::{Key, SeenMap, Watches};
use crate::run::target::CloudControl;
use crate::scenario::Until;

/// Shortest time between two counts of a phase's `until`.
pub const RECOUNT: Duration = Duration::from_millis(50);

/// What a phase waits for: its `until`, its resources, its deadline, its bar.
pub struct Waiting<'a> {
    /// What the resources must meet.
    pub until: Until,
    /// The phase's resources.
    pub targets: &'a [(usize, u32)],
    /// What the watches saw.
    pub watches: &'a Watches,
    /// When the phase times out.
    pub deadline: Instant,
    /// Its progress.
    pub bar: &'a PhaseBar,
}

impl State<'_> {
    /// Whether `key` meets `until` in what the watches saw.
    fn meets(&self, until: Until, key: &Key, seen: &SeenMap) -> bool {
        let s = seen.get(key);
        match until {
            Until::AllReady | Until::ComposedReady => s.is_some_and(|s| s.ready),
            Until::AllHandled => {
                let want = self.requested.get(key);
                want.is_none() || s.and_then(|s| s.handled.as_ref()) == want
            }
            Until::AllGone => s.is_some_and(|s| s.gone_us.is_some()),
            Until::Elapsed => true,
        }
    }

    /// The resources of `targets` that a phase waits for to meet `until`.
    fn waited_for(&self, until: Until, targets: &[(usize, u32)]) -> Vec<(usize, u32)> {
        // Only resources that exist can become Ready; deleted ones count for AllGone.
        targets
            .iter()
            .copied()
            .filter(|k| match until {
                Until::AllReady | Until::AllHandled | Until::ComposedReady => {
                    self.is_live(k) && !self.never_ready(*k)
                }
                // A resource whose Observe fails for good keeps its finalizer: stuck by
                // design, not waited for.
                Until::AllGone => {
                    self.log
                        .records
                        .get(k)
                        .is_some_and(|r| r.deleted_us.is_some())
                        && !self.fails_for_good(*k)
                }
                Until::Elapsed => true,
            })
            .collect()
    }

    /// The resources of `targets` that have not met `until` in what the watches saw.
    #[must_use]
    pub fn unmet(&self, until: Until, targets: &[(usize, u32)], watches: &Watches) -> Unmet {
        let waited = self.waited_for(until, targets);
        let seen = watches.lock();
        Unmet {
            until,
            of: waited.len(),
            pending: waited
                .iter()
                .map(|(g, i)| self.key(*g, *i))
                .filter(|key| !self.meets(until, key, &seen))
                .collect(),
            composite: false,
        }
    }

    /// Waits until every relevant target meets `until`, or the deadline; with `early`
    /// (a resync phase), stops with its verdict while no requested resource has recorded
    /// its token.
    pub async fn wait_until(
        &self,
        w: &Waiting<'_>,
        mut early: Option<NotHandled>,
        cloud: &impl CloudControl,
    ) -> PhaseEnd {
        let (until, watches, deadline) = (w.until, w.watches, w.deadline);
        let relevant = self.waited_for(until, w.targets);
        w.bar.set_total(relevant.len());
        let keys: HashSet<Key> = relevant.iter().map(|(g, i)| self.key(*g, *i)).collect();
        // Subscribed before the first count, so that no change between the two is lost;
        // then only the keys that changed are looked at again.
        let changes = watches.subscribe();
        let mut pending: HashSet<Key> = {
            let seen = watches.lock();
            keys.iter()
                .filter(|key| !self.meets(until, key, &seen))
                .cloned()
                .collect()
        };
        loop {
            let changed = changes.take();
            if !changed.is_empty() {
                let seen = watches.lock();
                for key in changed {
                    if !keys.contains(&key) {
                        continue;
                    }
                    if self.meets(until, &key, &seen) {
                        pending.remove(&key);
                    } else {
                        pending.insert(key);
                    }
                }
            }
            w.bar.set(keys.len() - pending.len());
            if pending.is_empty() {
                return PhaseEnd::Completed;
            }
            if let Some(watch) = early.as_mut() {
                if self.any_handled(&keys, watches) {
                    // The provider records requests: no verdict, only the timeout.
                    early = None;
                } else {
                    watch.look(cloud, Instant::now()).await;
                    if let Some(f) = watch.verdict(Instant::now()) {
                        return PhaseEnd::Failed(f);
                    }
                }
            }
            if Instant::now() >= deadline {
                return PhaseEnd::TimedOut;
            }
            // Look again on a change, at most every RECOUNT.
            let next = Instant::now() + RECOUNT;
            tokio::select! {
                () = watches.changed() => tokio::time::sleep_until(next.min(deadline)).await,
                () = tokio::time::sleep_until(deadline) => {}
                () = tokio::time::sleep(Duration::from_millis(250)) => {}
            }
        }
    }

    /// Whether any of `keys` shows the token the driver asked it to handle.
    fn any_handled(&self, keys: &HashSet<Key>, watches: &Watches) -> bool {
        let seen = watches.lock();
        keys.iter().any(|k| {
            self.requested
                .get(k)
                .is_some_and(|t| seen.get(k).and_then(|s| s.handled.as_ref()) == Some(t))
        })
    }
}
