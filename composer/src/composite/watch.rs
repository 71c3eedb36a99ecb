//! Realtime composition's watches: an informer-like loop per watched kind that turns
//! kube's watcher events into Create, Update and Delete events (an Update carries the
//! previous object, as an informer's does), maps them through [`Realtime`] and adds the
//! kept XRs to the controller's queue.
//!
//! Core starts one cluster-wide informer per composed kind and one on the XR kind
//! (`definition/reconciler.go`); no predicates are applied.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use kube::api::{Api, DynamicObject, ListParams};
use kube::runtime::watcher::{self, Event};
use limiter::controller::Request;
use limiter::crossplane::circuit::{Handled, WatchEvent};
use limiter::workqueue::WorkQueue;
use tokio::time::Instant;

use super::Realtime;
use crate::api::CompositionRevision;

/// Which map function a watch runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watched {
    /// The XR kind itself.
    Xr,
    /// A composed kind.
    Composed,
}

/// Watches `api` until the stream ends, feeding `queue` through `realtime`.
pub async fn watch(
    api: Api<DynamicObject>,
    watched: Watched,
    realtime: Arc<Realtime>,
    queue: WorkQueue<Request>,
) {
    let mut known: HashMap<(Option<String>, Option<String>), DynamicObject> = HashMap::new();
    let mut events = watcher::watcher(api, watcher::Config::default()).boxed();
    while let Some(event) = events.next().await {
        let Ok(event) = event else {
            tracing::debug!("watch error; the watcher retries");
            continue;
        };
        let (kind, object) = match event {
            Event::Apply(o) | Event::InitApply(o) => (None, o),
            Event::Delete(o) => (Some(WatchEvent::Delete), o),
            Event::Init | Event::InitDone => continue,
        };
        let key = (
            object.metadata.namespace.clone(),
            object.metadata.name.clone(),
        );
        let old = if kind == Some(WatchEvent::Delete) {
            known.remove(&key)
        } else {
            known.insert(key, object.clone())
        };
        let kind = kind.unwrap_or(if old.is_some() {
            WatchEvent::Update
        } else {
            WatchEvent::Create
        });
        let old = (kind == WatchEvent::Update).then_some(old).flatten();
        let now = Instant::now();
        let handled: Handled = match watched {
            Watched::Xr => realtime.xr(now, kind, old.as_ref(), &object),
            Watched::Composed => realtime.composed(now, kind, old.as_ref(), &object),
        };
        for request in handled.enqueued {
            queue.add(request);
        }
    }
}

/// Watches CompositionRevisions until the stream ends: each event maps to every Automatic
/// XR of the revision's Composition (listed from `xrs` at the time; core reads its cache),
/// through `realtime`, into `queue` (`definition/handlers.go`).
pub async fn watch_revisions(
    revisions: Api<CompositionRevision>,
    xrs: Api<DynamicObject>,
    realtime: Arc<Realtime>,
    queue: WorkQueue<Request>,
) {
    let mut known: HashMap<Option<String>, ()> = HashMap::new();
    let mut events = watcher::watcher(revisions, watcher::Config::default()).boxed();
    while let Some(event) = events.next().await {
        let Ok(event) = event else {
            tracing::debug!("watch error; the watcher retries");
            continue;
        };
        let (kind, revision) = match event {
            Event::Apply(r) | Event::InitApply(r) => {
                let seen = known.insert(r.metadata.name.clone(), ()).is_some();
                (
                    if seen {
                        WatchEvent::Update
                    } else {
                        WatchEvent::Create
                    },
                    r,
                )
            }
            Event::Delete(r) => {
                known.remove(&r.metadata.name);
                (WatchEvent::Delete, r)
            }
            Event::Init | Event::InitDone => continue,
        };
        let Ok(list) = xrs.list(&ListParams::default()).await else {
            tracing::debug!("cannot list XRs to map a revision event");
            continue;
        };
        let handled = realtime.revision(Instant::now(), kind, &revision, &list.items);
        for request in handled.enqueued {
            queue.add(request);
        }
    }
}
