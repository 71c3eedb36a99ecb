//! When the garbage collector runs: at once inside the write (the default, for fast
//! tests), as a separate controller some time after the write (as kube-controller-
//! manager's `pkg/controller/garbagecollector` does), or never (a bare API server, as
//! envtest runs one).
//!
//! # Semantics
//! - [`GarbageCollection::Immediate`]: dependents go inside the DELETE that removes
//!   their owner; a foreground or orphaning delete completes inside its request.
//! - [`GarbageCollection::Async`]: the DELETE only does what kube-apiserver does: a
//!   background delete removes the owner; a foreground delete adds the
//!   `foregroundDeletion` finalizer and an orphaning one the `orphan` finalizer. Each
//!   step of the collector (looking at a removed object's dependents and at the owners
//!   waiting for it, deleting a foreground owner's dependents, orphaning) runs `delay`
//!   after the change that calls for it, on tokio time, so a chain of owners takes one
//!   delay per level. A foreground owner goes in the step that deletes its dependents
//!   when none of them blocks it any more (they had no finalizers); else one delay
//!   after its last blocking dependent goes.
//! - [`GarbageCollection::None`]: as `Async` with no collector: dependents keep their
//!   dangling references, and owners deleted in the foreground or orphaning keep their
//!   finalizer and `deletionTimestamp` until a client removes the finalizer.

use std::sync::Weak;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::{Inner, Store};
use crate::object;

/// The finalizer of a foreground deletion.
pub const FOREGROUND: &str = "foregroundDeletion";
/// The finalizer of an orphaning deletion.
pub const ORPHAN: &str = "orphan";

/// Whether and when the garbage collector acts on `ownerReferences`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum GarbageCollection {
    /// Inside the write that calls for it: dependents are gone when the DELETE answers.
    #[default]
    Immediate,
    /// As a separate controller: each collector step runs `delay` after the change that
    /// calls for it.
    Async {
        /// How long after a change the collector acts on it.
        delay: Duration,
    },
    /// Never: a bare API server without kube-controller-manager.
    None,
}

/// One step the collector owes.
#[derive(Debug, Clone)]
pub(super) enum Work {
    /// An object was removed: look at its dependents and at the owners waiting for it.
    Removed(Value),
    /// An owner is deleted in the foreground: delete its dependents.
    DeleteDependents(String),
    /// An owner is deleted orphaning: strip the references to it, then let it go.
    Orphan(String),
}

impl Store {
    /// Runs `work` now, queues it, or drops it, as the store's mode says.
    pub(super) fn schedule(&self, inner: &mut Inner, work: Work) {
        match self.garbage_collection {
            GarbageCollection::Immediate => self.perform(inner, work),
            GarbageCollection::Async { delay } => {
                inner.gc_queue.push_back((Instant::now() + delay, work));
                self.gc_wake.notify_one();
            }
            GarbageCollection::None => {}
        }
    }

    fn perform(&self, inner: &mut Inner, work: Work) {
        match work {
            Work::Removed(value) => self.collect(inner, &value),
            Work::DeleteDependents(owner) => self.delete_dependents(inner, &owner),
            Work::Orphan(owner) => {
                self.orphan_dependents(inner, &owner);
                self.remove_finalizer(inner, &owner, ORPHAN);
            }
        }
    }

    /// Takes `finalizer` off the object with `uid` (which goes if it was the last one).
    pub(super) fn remove_finalizer(&self, inner: &mut Inner, uid: &str, finalizer: &str) {
        let Some(location) = inner.uids.get(uid).cloned() else {
            return;
        };
        let Some(stored) = inner.lookup(&location) else {
            return;
        };
        let mut value = stored.to_value();
        let kept: Vec<Value> = object::finalizers(&value)
            .into_iter()
            .filter(|f| *f != finalizer)
            .map(|f| json!(f))
            .collect();
        object::metadata_mut(&mut value).insert("finalizers".into(), json!(kept));
        self.rewrite_locked(inner, &location, value);
    }

    /// Runs the queued steps due by `now`; answers when the next one is due.
    pub(super) fn run_due(&self, now: Instant) -> Option<Instant> {
        let mut inner = self.lock();
        while inner.gc_queue.front().is_some_and(|(due, _)| *due <= now) {
            if let Some((_, work)) = inner.gc_queue.pop_front() {
                self.perform(&mut inner, work);
            }
        }
        inner.gc_queue.front().map(|(due, _)| *due)
    }
}

/// The asynchronous collector: runs queued steps when they are due, until the store is
/// dropped.
pub(crate) async fn run(store: Weak<Store>) {
    loop {
        let Some(strong) = store.upgrade() else {
            return;
        };
        let next = strong.run_due(Instant::now());
        let wake = strong.gc_wake.clone();
        drop(strong);
        match next {
            Some(due) => {
                tokio::select! {
                    () = tokio::time::sleep_until(due) => {}
                    () = wake.notified() => {}
                }
            }
            None => wake.notified().await,
        }
    }
}

/// The finalizer a delete with `policy` adds when the collector does not act inside it.
pub(super) fn deferred_finalizer(policy: super::Propagation) -> Option<&'static str> {
    match policy {
        super::Propagation::Foreground => Some(FOREGROUND),
        super::Propagation::Orphan => Some(ORPHAN),
        super::Propagation::Background => None,
    }
}
