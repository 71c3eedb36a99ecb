//! The object store: one global resourceVersion, per-resource maps, watch history and
//! fan-out.
//!
//! # Semantics
//! - Every change (create, real update, deletion step) takes the next value of one
//!   global counter as its resourceVersion; lists report the counter's current value.
//! - A write whose result equals the stored object is a no-op: no new resourceVersion,
//!   no watch event.
//! - `metadata.generation` moves only when something outside `metadata` and `status`
//!   changes.
//! - Each resource keeps its last events for watches that resume from a resourceVersion,
//!   as many as its [`WatchHistory`] says (`history.rs`); older resume points are expired
//!   (the watch answers ERROR 410).
//! - All work happens under one short lock; lookups are by key (no scans per write).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::broadcast;

use crate::clock::Clock;
use crate::error::{ApiError, Cause, Details};
use crate::object::StoredObject;
use crate::registry::ResourceKind;
use crate::schema::FieldValidation;

mod collector;
mod gc;
mod history;
mod ids;
mod write;

pub use collector::GarbageCollection;
pub(crate) use collector::run as run_collector;
pub use gc::Propagation;
use history::History;
pub use history::WatchHistory;

/// The type of a watch event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// An object appeared.
    Added,
    /// An object changed.
    Modified,
    /// An object is gone (the object is its last state, with a new resourceVersion).
    Deleted,
}

impl EventType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// What a watcher receives from the store.
#[derive(Debug, Clone)]
pub enum Event {
    /// An object changed; for MODIFIED, the previous version too, so watches with
    /// selectors can tell objects entering or leaving their selection.
    Change(EventType, Arc<StoredObject>, Option<Arc<StoredObject>>),
    /// History was dropped; open watches must answer ERROR 410 and end.
    Expired,
}

/// Which part of an object a write may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subresource {
    /// The main resource: everything except `status` when a status subresource exists.
    Main,
    /// The `/status` subresource: only `status`.
    Status,
}

/// Who owns the fields a write sets (`metadata.managedFields`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Fields<'a> {
    /// The server's own write: managed fields are left as they are.
    #[default]
    Untracked,
    /// A client's create, update or non-apply patch: recorded as an `Update` of this
    /// manager.
    Update(&'a str),
    /// A server-side apply: the change already carries its managed fields.
    Applied,
}

/// Options of a create or update.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteOptions<'a> {
    /// `dryRun=All`: validate and answer, but store nothing.
    pub dry_run: bool,
    /// Whether an update without `metadata.resourceVersion` is refused (PUT of a custom
    /// resource, as the real server does).
    pub require_resource_version: bool,
    /// Whether an update of a missing object creates it (server-side apply).
    pub create_if_missing: bool,
    /// What a custom resource's unknown fields do to the write.
    pub field_validation: FieldValidation,
    /// Who owns what the write sets.
    pub fields: Fields<'a>,
}

/// Preconditions of a delete.
#[derive(Debug, Clone, Default)]
pub struct Preconditions {
    /// The object's uid must be this.
    pub uid: Option<String>,
    /// The object's resourceVersion must be this.
    pub resource_version: Option<String>,
}

/// The start of a watch: events to send first, then a live receiver.
#[derive(Debug)]
pub struct WatchStart {
    /// Events to send before live ones (current objects as ADDED, or replayed history).
    pub initial: Vec<Event>,
    /// Live events.
    pub receiver: broadcast::Receiver<Event>,
    /// Set when the requested resourceVersion is older than the kept history:
    /// (requested, oldest still available).
    pub expired: Option<(u64, u64)>,
    /// The resourceVersion when the watch started.
    pub resource_version: u64,
}

/// One page of a list.
#[derive(Debug, Clone)]
pub struct Page {
    /// The objects of this page.
    pub items: Vec<Arc<StoredObject>>,
    /// The resourceVersion when the page was read.
    pub resource_version: u64,
    /// The key to continue after, when more objects may follow.
    pub next: Option<String>,
    /// How many objects of the listed range follow this page (whatever they are), when
    /// the page is not the last.
    pub remaining: Option<u64>,
}

/// The outcome of a write.
#[derive(Debug, Clone)]
pub struct Written {
    /// The object as stored (or as it would be, for a dry run).
    pub object: Arc<StoredObject>,
    /// Whether the write created the object.
    pub created: bool,
    /// `Warning` header texts (unknown fields under `fieldValidation=Warn`).
    pub warnings: Vec<String>,
}

#[derive(Debug)]
struct Resource {
    objects: BTreeMap<Box<str>, Arc<StoredObject>>,
    history: History,
    /// Events with a resourceVersion at or below this are no longer in `history`.
    expired_through: u64,
    sender: broadcast::Sender<Event>,
}

#[derive(Debug)]
struct Inner {
    resource_version: u64,
    resources: HashMap<String, Resource>,
    uid_state: rand_xoshiro::SplitMix64,
    /// Where each stored object lives, by uid (the collector's owner lookup).
    uids: HashMap<String, gc::Location>,
    /// The objects that name each uid in their `ownerReferences`.
    dependents: HashMap<String, BTreeSet<gc::Location>>,
    /// The kind of each resource that has stored objects, by storage key.
    kinds: HashMap<String, Arc<ResourceKind>>,
    /// The asynchronous collector's steps, in the order they are due.
    gc_queue: VecDeque<(tokio::time::Instant, collector::Work)>,
}

/// The store. Cheap to share behind an `Arc`; every method takes the lock briefly.
#[derive(Debug)]
pub struct Store {
    inner: Mutex<Inner>,
    clock: Clock,
    history: WatchHistory,
    channel: usize,
    garbage_collection: GarbageCollection,
    /// Wakes the asynchronous collector when a step is queued or the store goes.
    gc_wake: Arc<tokio::sync::Notify>,
}

impl Drop for Store {
    fn drop(&mut self) {
        self.gc_wake.notify_one();
    }
}

fn key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

fn details(kind: &ResourceKind, name: &str) -> Box<Details> {
    Box::new(Details::new(name, &kind.group, &kind.plural))
}

/// 404 for an object.
pub fn not_found(kind: &ResourceKind, name: &str) -> ApiError {
    ApiError::NotFound {
        message: format!("{} \"{name}\" not found", kind.qualified()),
        details: Some(details(kind, name)),
    }
}

fn invalid(kind: &ResourceKind, name: &str, field: &str, detail: impl Into<String>) -> ApiError {
    let qualified = if kind.group.is_empty() {
        kind.kind.clone()
    } else {
        format!("{}.{}", kind.kind, kind.group)
    };
    let detail = detail.into();
    let reason = if detail.starts_with("Required") {
        "FieldValueRequired"
    } else if detail.starts_with("Forbidden") {
        "FieldValueForbidden"
    } else {
        "FieldValueInvalid"
    };
    ApiError::Invalid {
        kind: qualified,
        name: name.to_owned(),
        causes: vec![Cause {
            reason,
            field: field.to_owned(),
            message: detail,
        }],
        details: Box::new(Details::new(name, &kind.group, &kind.kind)),
    }
}

fn conflict(kind: &ResourceKind, name: &str, reason: impl Into<String>) -> ApiError {
    ApiError::Conflict {
        resource: kind.qualified(),
        name: name.to_owned(),
        reason: reason.into(),
        details: details(kind, name),
    }
}

impl Store {
    /// An empty store keeping the watch events `history` says per resource for resuming
    /// watches and buffering `channel` events per resource for slow watchers; its uids and
    /// `generateName` suffixes are drawn from `seed`.
    pub fn new(clock: Clock, history: WatchHistory, channel: usize, seed: u64) -> Self {
        Self {
            inner: Mutex::new(Inner {
                resource_version: 0,
                resources: HashMap::new(),
                uid_state: rand_xoshiro::rand_core::SeedableRng::seed_from_u64(seed),
                uids: HashMap::new(),
                dependents: HashMap::new(),
                kinds: HashMap::new(),
                gc_queue: VecDeque::new(),
            }),
            clock,
            history,
            channel: channel.max(16),
            garbage_collection: GarbageCollection::default(),
            gc_wake: Arc::new(tokio::sync::Notify::new()),
        }
    }

    /// The store with its garbage collector running as `mode` says (an asynchronous one
    /// needs [`run_collector`] spawned).
    #[must_use]
    pub fn with_garbage_collection(mut self, mode: GarbageCollection) -> Self {
        self.garbage_collection = mode;
        self
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The current (latest) resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.lock().resource_version
    }

    /// The clock objects are stamped with.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Looks up one object.
    pub fn get(
        &self,
        kind: &ResourceKind,
        namespace: &str,
        name: &str,
    ) -> Result<Arc<StoredObject>, ApiError> {
        let inner = self.lock();
        inner
            .resources
            .get(&kind.storage_key())
            .and_then(|r| r.objects.get(key(namespace, name).as_str()))
            .cloned()
            .ok_or_else(|| not_found(kind, name))
    }

    /// Lists the objects of a resource (in one namespace, or all when `None`) that
    /// `keep` accepts, with the current resourceVersion.
    pub fn list(
        &self,
        kind: &ResourceKind,
        namespace: Option<&str>,
        keep: impl FnMut(&StoredObject) -> bool,
    ) -> (Vec<Arc<StoredObject>>, u64) {
        let page = self.list_page(kind, namespace, None, None, keep);
        (page.items, page.resource_version)
    }

    /// Lists at most `limit` objects that `keep` accepts, in key order, starting after
    /// the key `after` (from an earlier page's [`Page::next`]).
    pub fn list_page(
        &self,
        kind: &ResourceKind,
        namespace: Option<&str>,
        after: Option<&str>,
        limit: Option<usize>,
        mut keep: impl FnMut(&StoredObject) -> bool,
    ) -> Page {
        use std::ops::Bound;
        let inner = self.lock();
        let resource_version = inner.resource_version;
        let Some(resource) = inner.resources.get(&kind.storage_key()) else {
            return Page {
                items: Vec::new(),
                resource_version,
                next: None,
                remaining: None,
            };
        };
        let prefix = namespace.map(|ns| format!("{ns}/")).unwrap_or_default();
        let start = match after {
            Some(key) if key >= prefix.as_str() => Bound::Excluded(key),
            _ => Bound::Included(prefix.as_str()),
        };
        let limit = limit.unwrap_or(usize::MAX);
        let mut items = Vec::new();
        let mut next = None;
        let mut range = resource
            .objects
            .range::<str, _>((start, Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(&prefix));
        for (key, object) in range.by_ref() {
            if !keep(object) {
                continue;
            }
            items.push(object.clone());
            if items.len() == limit {
                next = Some(key.to_string());
                break;
            }
        }
        let rest = if next.is_some() { range.count() } else { 0 };
        if rest == 0 {
            next = None;
        }
        Page {
            items,
            resource_version,
            remaining: next.as_ref().map(|_| rest as u64),
            next,
        }
    }

    /// Whether watch history older than `resource_version` is gone for this resource
    /// (so a list continued from it would be inconsistent with a watch from it).
    pub fn expired(&self, kind: &ResourceKind, resource_version: u64) -> bool {
        self.lock()
            .resources
            .get(&kind.storage_key())
            .is_some_and(|r| resource_version < r.expired_through)
    }

    /// Number of objects stored for a resource.
    pub fn count(&self, kind: &ResourceKind) -> usize {
        self.lock()
            .resources
            .get(&kind.storage_key())
            .map_or(0, |r| r.objects.len())
    }

    /// Starts a watch of a resource from `from` (`None`: current objects as ADDED first).
    pub fn watch(&self, kind: &ResourceKind, from: Option<u64>) -> WatchStart {
        let mut inner = self.lock();
        let current = inner.resource_version;
        let storage = kind.storage_key();
        let resource = self.resource_mut(&mut inner, &storage);
        let receiver = resource.sender.subscribe();
        let (initial, expired) = match from {
            None => (
                resource
                    .objects
                    .values()
                    .map(|o| Event::Change(EventType::Added, o.clone(), None))
                    .collect(),
                None,
            ),
            Some(rv) if rv < resource.expired_through => {
                (Vec::new(), Some((rv, resource.expired_through + 1)))
            }
            Some(rv) => (
                resource
                    .history
                    .events()
                    .filter(|e| matches!(e, Event::Change(_, o, _) if o.resource_version > rv))
                    .cloned()
                    .collect(),
                None,
            ),
        };
        WatchStart {
            initial,
            receiver,
            expired,
            resource_version: current,
        }
    }

    /// The resourceVersion a watcher may bookmark: the current one when its receiver
    /// holds no undelivered event, else `None`. Checked under the store lock so no
    /// write can slip between the two reads.
    pub fn bookmark_version(&self, receiver: &broadcast::Receiver<Event>) -> Option<u64> {
        let inner = self.lock();
        receiver.is_empty().then_some(inner.resource_version)
    }

    /// Forgets all watch history and tells every open watch its history expired: open
    /// watches answer ERROR 410 and end, and resuming from any earlier resourceVersion
    /// gets 410 too, so kube's watcher relists (as after etcd compaction).
    pub fn expire_history(&self) {
        let mut inner = self.lock();
        // The compaction takes a resourceVersion of its own, so every earlier resume
        // point expires while a list taken afterwards can still be watched from.
        inner.resource_version += 1;
        let current = inner.resource_version;
        for resource in inner.resources.values_mut() {
            resource.history.clear();
            resource.expired_through = current;
            let _ = resource.sender.send(Event::Expired);
        }
    }

    fn resource_mut<'a>(&self, inner: &'a mut Inner, storage: &str) -> &'a mut Resource {
        inner
            .resources
            .entry(storage.to_owned())
            .or_insert_with(|| Resource {
                objects: BTreeMap::new(),
                history: History::new(self.history),
                expired_through: 0,
                sender: broadcast::channel(self.channel).0,
            })
    }

    /// Stores `stored` under `key` and tells the watchers that `old` was modified into it.
    fn put_modified(
        &self,
        resource: &mut Resource,
        key: &str,
        stored: Arc<StoredObject>,
        old: Arc<StoredObject>,
    ) {
        resource.objects.insert(key.into(), stored.clone());
        self.publish(
            resource,
            Event::Change(EventType::Modified, stored, Some(old)),
        );
    }

    /// Removes `key` and tells the watchers that `stored`, its last state, was deleted.
    fn remove_deleted(&self, resource: &mut Resource, key: &str, stored: Arc<StoredObject>) {
        resource.objects.remove(key);
        self.publish(resource, Event::Change(EventType::Deleted, stored, None));
    }

    fn publish(&self, resource: &mut Resource, event: Event) {
        let now = tokio::time::Instant::now();
        if let Some(dropped) = resource.history.push(now, event.clone()) {
            resource.expired_through = dropped;
        }
        // No receivers is fine: nobody is watching this resource.
        let _ = resource.sender.send(event);
    }
}

fn namespace_exists(inner: &Inner, namespace: &str) -> bool {
    inner
        .resources
        .get("/namespaces")
        .is_some_and(|r| r.objects.contains_key(key("", namespace).as_str()))
}

/// Creates the namespace `default` (of the kind `namespaces`), which the tests' objects
/// live in.
#[cfg(test)]
fn create_default_namespace(store: &Store, namespaces: &ResourceKind) {
    store
        .create(
            namespaces,
            "",
            serde_json::json!({"metadata": {"name": "default"}}),
            WriteOptions::default(),
        )
        .unwrap();
}

/// Updates `default/name` with `change` applied to the stored object, for the tests.
#[cfg(test)]
fn edit(
    store: &Store,
    kind: &ResourceKind,
    name: &str,
    change: impl FnOnce(&mut serde_json::Value),
) -> Result<Written, ApiError> {
    store.update(
        kind,
        "default",
        name,
        Subresource::Main,
        WriteOptions::default(),
        |old| {
            let mut v = old.unwrap().clone();
            change(&mut v);
            Ok(v)
        },
    )
}

#[cfg(test)]
mod tests;
