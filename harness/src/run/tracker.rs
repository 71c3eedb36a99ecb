//! The harness's own view of the managed resources, from watches: when each became Ready,
//! which reconcile request it last handled, when it was gone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::runtime::watcher::{self, Event};
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::objects::api_resource;

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
}

/// A resource's identity: kind and name (one namespace per run).
pub type Key = (String, String);

/// Watches the three managed kinds in the run's namespace.
pub struct Tracker {
    seen: Arc<Mutex<HashMap<Key, Seen>>>,
    changed: Arc<Notify>,
    watches: JoinSet<()>,
}

fn is_ready(obj: &DynamicObject) -> bool {
    obj.data
        .pointer("/status/conditions")
        .and_then(|c| c.as_array())
        .is_some_and(|conds| {
            conds.iter().any(|c| {
                c.get("type").and_then(|t| t.as_str()) == Some("Ready")
                    && c.get("status").and_then(|s| s.as_str()) == Some("True")
            })
        })
}

fn observe(seen: &Mutex<HashMap<Key, Seen>>, kind: &str, obj: &DynamicObject, now_us: u64) {
    let Some(name) = obj.metadata.name.clone() else {
        return;
    };
    let mut map = seen.lock().unwrap_or_else(|e| e.into_inner());
    let entry = map.entry((kind.to_owned(), name)).or_default();
    entry.ready = is_ready(obj);
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
        .and_then(|a| a.get("crossplane.io/external-name"))
        .cloned();
}

impl Tracker {
    /// Starts one watch per kind.
    pub fn start(client: &kube::Client, namespace: &str, kinds: &[&str], start: Instant) -> Self {
        let seen: Arc<Mutex<HashMap<Key, Seen>>> = Arc::default();
        let changed = Arc::new(Notify::new());
        let mut watches = JoinSet::new();
        for kind in kinds {
            let api: Api<DynamicObject> =
                Api::namespaced_with(client.clone(), namespace, &api_resource(kind));
            let (seen, changed, kind) =
                (Arc::clone(&seen), Arc::clone(&changed), (*kind).to_owned());
            watches.spawn(async move {
                let mut events = watcher::watcher(api, watcher::Config::default()).boxed();
                while let Some(event) = events.next().await {
                    let now_us = start.elapsed().as_micros() as u64;
                    match event {
                        Ok(Event::Apply(obj) | Event::InitApply(obj)) => {
                            observe(&seen, &kind, &obj, now_us);
                        }
                        Ok(Event::Delete(obj)) => {
                            if let Some(name) = obj.metadata.name.clone() {
                                let mut map = seen.lock().unwrap_or_else(|e| e.into_inner());
                                let e = map.entry((kind.clone(), name)).or_default();
                                e.gone_us.get_or_insert(now_us);
                                e.ready = false;
                            }
                        }
                        Ok(Event::Init | Event::InitDone) => {}
                        Err(e) => {
                            tracing::debug!(error = %e, kind, "watch error; the watcher retries");
                            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                        }
                    }
                    changed.notify_waiters();
                }
            });
        }
        Tracker {
            seen,
            changed,
            watches,
        }
    }

    /// The state of every resource seen.
    pub fn lock(&self) -> MutexGuard<'_, HashMap<Key, Seen>> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Completes at the next change (or never, if nothing changes).
    pub async fn changed(&self) {
        self.changed.notified().await;
    }

    /// Stops the watches.
    pub async fn shut_down(&mut self) {
        self.watches.shutdown().await;
    }
}
