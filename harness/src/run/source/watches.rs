//! The harness's own view of the managed resources, from watches: when each became Ready,
//! which reconcile request it last handled, when it was gone. The driver reads it live
//! (for a phase's `until`); the run reads it once at the end.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::runtime::watcher::{self, Event};
use provider::crd::EXTERNAL_NAME_ANNOTATION;
use tokio::sync::Notify;
use tokio::task::JoinSet;

use crate::result::waiting::Condition;
use crate::run::clock::RunClock;
use crate::run::objects::KindInfo;

/// Where a resource stands, as the watches saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    /// First time the Ready condition was True, µs since the run started.
    pub ready_us: Option<u64>,
    /// Ready right now.
    pub ready: bool,
    /// `status.lastHandledReconcileAt`.
    pub handled: Option<String>,
    /// `crossplane.io/external-name`.
    pub external_name: Option<String>,
    /// When the watch saw it deleted, µs.
    pub gone_us: Option<u64>,
    /// While it is not Ready: its last Ready and Synced conditions (and any other type its
    /// readiness names), to say why a phase waits for it.
    pub conditions: Vec<Condition>,
}

/// A resource's identity: kind and name (one namespace per run).
pub type Key = (String, String);

/// What the watches saw of every resource.
pub type SeenMap = HashMap<Key, Seen>;

/// The keys that changed since a subscriber last took them.
type ChangeLog = Arc<Mutex<Vec<Key>>>;

/// The live subscriptions' change logs (a dropped subscription's is forgotten).
type Subscribers = Arc<Mutex<Vec<Weak<Mutex<Vec<Key>>>>>>;

/// One watch per managed kind in the run's namespace.
pub struct Watches {
    seen: Arc<Mutex<SeenMap>>,
    changed: Arc<Notify>,
    subscribers: Subscribers,
    watches: JoinSet<()>,
}

/// The keys whose state changed since the subscription started or was last
/// [taken](Changes::take): what a waiter re-evaluates instead of every resource.
pub struct Changes {
    log: ChangeLog,
}

impl Changes {
    /// The keys that changed since the last call (a key that changed twice is there twice).
    pub fn take(&self) -> Vec<Key> {
        std::mem::take(&mut *self.log.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Whether `obj` has every condition of `ready` (type, status).
#[must_use]
pub fn has_conditions(obj: &serde_json::Value, ready: &[(String, String)]) -> bool {
    let conds = obj
        .pointer("/status/conditions")
        .and_then(|c| c.as_array())
        .map_or(&[][..], Vec::as_slice);
    ready.iter().all(|(t, s)| {
        conds.iter().any(|c| {
            c.get("type").and_then(|v| v.as_str()) == Some(t.as_str())
                && c.get("status").and_then(|v| v.as_str()) == Some(s.as_str())
        })
    })
}

/// The conditions of `obj` that say why it is not ready: `Ready`, `Synced`, and the types
/// of `ready`, in the object's order.
fn why_not_ready(obj: &serde_json::Value, ready: &[(String, String)]) -> Vec<Condition> {
    let text = |c: &serde_json::Value, k: &str| {
        c.get(k)
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    obj.pointer("/status/conditions")
        .and_then(|c| c.as_array())
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter(|c| {
            let t = c.get("type").and_then(serde_json::Value::as_str);
            t.is_some_and(|t| t == "Ready" || t == "Synced" || ready.iter().any(|(r, _)| r == t))
        })
        .map(|c| Condition {
            kind: text(c, "type"),
            status: text(c, "status"),
            reason: text(c, "reason"),
            message: text(c, "message"),
        })
        .collect()
}

/// The short kinds' readiness: `Ready` is `True`.
fn ready_true() -> Vec<(String, String)> {
    vec![("Ready".to_owned(), "True".to_owned())]
}

/// Applies one watch event to `seen`: the synchronous heart of the source, tested without
/// a server.
pub fn apply_event(seen: &mut SeenMap, kind: &str, event: &Event<DynamicObject>, now_us: u64) {
    apply_event_with(seen, kind, &ready_true(), event, now_us);
}

/// [`apply_event`] for a kind whose Ready objects have the conditions `ready`.
pub fn apply_event_with(
    seen: &mut SeenMap,
    kind: &str,
    ready: &[(String, String)],
    event: &Event<DynamicObject>,
    now_us: u64,
) {
    match event {
        Event::Apply(obj) | Event::InitApply(obj) => {
            let Some(name) = obj.metadata.name.clone() else {
                return;
            };
            let entry = seen.entry((kind.to_owned(), name)).or_default();
            entry.ready = has_conditions(&obj.data, ready);
            entry.conditions = if entry.ready {
                Vec::new()
            } else {
                why_not_ready(&obj.data, ready)
            };
            if entry.ready && entry.ready_us.is_none() {
                entry.ready_us = Some(now_us);
            }
            entry.handled = obj
                .data
                .pointer("/status/lastHandledReconcileAt")
                .and_then(|v| v.as_str())
                .map(str::to_owned);
            entry.external_name = obj
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(EXTERNAL_NAME_ANNOTATION))
                .cloned();
        }
        Event::Delete(obj) => {
            if let Some(name) = obj.metadata.name.clone() {
                let e = seen.entry((kind.to_owned(), name)).or_default();
                e.gone_us.get_or_insert(now_us);
                e.ready = false;
            }
        }
        Event::Init | Event::InitDone => {}
    }
}

/// Adds the keys `event` touched to every live subscription, forgetting dropped ones.
fn publish(
    subscribers: &Mutex<Vec<Weak<Mutex<Vec<Key>>>>>,
    kind: &str,
    event: &Event<DynamicObject>,
) {
    let name = match event {
        Event::Apply(obj) | Event::InitApply(obj) | Event::Delete(obj) => obj.metadata.name.clone(),
        Event::Init | Event::InitDone => None,
    };
    let Some(name) = name else {
        return;
    };
    let mut subscribers = subscribers.lock().unwrap_or_else(|e| e.into_inner());
    subscribers.retain(|s| match s.upgrade() {
        Some(log) => {
            log.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((kind.to_owned(), name.clone()));
            true
        }
        None => false,
    });
}

impl Watches {
    /// Starts one watch per kind (in its namespace, or cluster-wide).
    #[must_use]
    pub fn start(client: &kube::Client, kinds: &[KindInfo], clock: RunClock) -> Self {
        let seen: Arc<Mutex<SeenMap>> = Arc::default();
        let changed = Arc::new(Notify::new());
        let subscribers: Subscribers = Arc::default();
        let mut watches = JoinSet::new();
        for kind in kinds {
            let api: Api<DynamicObject> = kind.api(client);
            let (seen, changed) = (Arc::clone(&seen), Arc::clone(&changed));
            let (kind, ready) = (kind.name.clone(), kind.ready.clone());
            let subscribers = Arc::clone(&subscribers);
            watches.spawn(async move {
                let mut events = watcher::watcher(api, watcher::Config::default()).boxed();
                while let Some(event) = events.next().await {
                    match event {
                        Ok(event) => {
                            let mut map = seen.lock().unwrap_or_else(|e| e.into_inner());
                            apply_event_with(&mut map, &kind, &ready, &event, clock.now().0);
                            drop(map);
                            publish(&subscribers, &kind, &event);
                        }
                        Err(e) => {
                            tracing::debug!(error = %e, kind = %kind, "watch error; the watcher retries");
                            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                        }
                    }
                    changed.notify_waiters();
                }
            });
        }
        Watches {
            seen,
            changed,
            subscribers,
            watches,
        }
    }

    /// From now on, collects the keys whose state changes.
    #[must_use]
    pub fn subscribe(&self) -> Changes {
        let log: ChangeLog = Arc::default();
        self.subscribers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::downgrade(&log));
        Changes { log }
    }

    /// The state of every resource seen.
    pub fn lock(&self) -> MutexGuard<'_, SeenMap> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Completes at the next change (or never, if nothing changes).
    pub async fn changed(&self) {
        self.changed.notified().await;
    }

    /// Stops the watches and hands back what they saw.
    pub async fn finish(mut self) -> SeenMap {
        self.watches.shutdown().await;
        std::mem::take(&mut *self.lock())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket(ready: &str) -> DynamicObject {
        let mut obj = DynamicObject::new(
            "b-0",
            &crate::run::objects::kind_info(crate::scenario::Kind::Bucket, "ns").resource,
        );
        obj.data =
            serde_json::json!({"status": {"conditions": [{"type": "Ready", "status": ready}]}});
        obj
    }

    #[test]
    fn ready_is_dated_once_and_deletion_is_seen() {
        let mut seen = SeenMap::new();
        apply_event(&mut seen, "Bucket", &Event::Apply(bucket("False")), 5);
        apply_event(&mut seen, "Bucket", &Event::Apply(bucket("True")), 9);
        apply_event(&mut seen, "Bucket", &Event::Apply(bucket("True")), 12);
        let key = ("Bucket".to_owned(), "b-0".to_owned());
        assert_eq!(seen[&key].ready_us, Some(9));
        assert!(seen[&key].ready);
        apply_event(&mut seen, "Bucket", &Event::Delete(bucket("True")), 20);
        assert_eq!(seen[&key].gone_us, Some(20));
        assert!(!seen[&key].ready);
    }

    #[test]
    fn a_resource_that_is_not_ready_keeps_its_ready_and_synced_conditions_until_it_is() {
        let mut obj = bucket("False");
        obj.data = serde_json::json!({"status": {"conditions": [
            {"type": "Ready", "status": "False", "reason": "Creating"},
            {"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "cannot connect"},
            {"type": "Other", "status": "True"},
        ]}});
        let mut seen = SeenMap::new();
        apply_event(&mut seen, "Bucket", &Event::Apply(obj), 5);
        let key = ("Bucket".to_owned(), "b-0".to_owned());
        let kinds: Vec<&str> = seen[&key]
            .conditions
            .iter()
            .map(|c| c.kind.as_str())
            .collect();
        assert_eq!(kinds, ["Ready", "Synced"]);
        assert_eq!(seen[&key].conditions[1].message, "cannot connect");
        apply_event(&mut seen, "Bucket", &Event::Apply(bucket("True")), 9);
        assert!(seen[&key].conditions.is_empty(), "a Ready one keeps none");
    }
}
