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
//! - Each resource keeps its last `history` events for watches that resume from a
//!   resourceVersion; older resume points are expired (the watch answers ERROR 410).
//! - All work happens under one short lock; lookups are by key (no scans per write).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::clock::Clock;
use crate::error::{ApiError, Details};
use crate::kinds;
use crate::object::{self, StoredObject};
use crate::registry::ResourceKind;

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
    /// An object changed.
    Change(EventType, Arc<StoredObject>),
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

/// Options of a create or update.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteOptions {
    /// `dryRun=All`: validate and answer, but store nothing.
    pub dry_run: bool,
    /// Whether an update without `metadata.resourceVersion` is refused (PUT of a custom
    /// resource, as the real server does).
    pub require_resource_version: bool,
    /// Whether an update of a missing object creates it (server-side apply).
    pub create_if_missing: bool,
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

/// The outcome of a write.
#[derive(Debug, Clone)]
pub struct Written {
    /// The object as stored (or as it would be, for a dry run).
    pub object: Arc<StoredObject>,
    /// Whether the write created the object.
    pub created: bool,
}

#[derive(Debug)]
struct Resource {
    objects: BTreeMap<Box<str>, Arc<StoredObject>>,
    history: VecDeque<Event>,
    /// Events with a resourceVersion at or below this are no longer in `history`.
    expired_through: u64,
    sender: broadcast::Sender<Event>,
}

#[derive(Debug)]
struct Inner {
    resource_version: u64,
    resources: HashMap<String, Resource>,
    uid_state: u64,
}

/// The store. Cheap to share behind an `Arc`; every method takes the lock briefly.
#[derive(Debug)]
pub struct Store {
    inner: Mutex<Inner>,
    clock: Clock,
    history: usize,
    channel: usize,
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
    ApiError::Invalid {
        kind: qualified,
        name: name.to_owned(),
        field: field.to_owned(),
        detail: detail.into(),
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
    /// An empty store keeping `history` events per resource for resuming watches and
    /// buffering `channel` events per resource for slow watchers.
    pub fn new(clock: Clock, history: usize, channel: usize) -> Self {
        let seed =
            std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), 0_u8);
        Self {
            inner: Mutex::new(Inner {
                resource_version: 0,
                resources: HashMap::new(),
                uid_state: seed,
            }),
            clock,
            history: history.max(1),
            channel: channel.max(16),
        }
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
        mut keep: impl FnMut(&StoredObject) -> bool,
    ) -> (Vec<Arc<StoredObject>>, u64) {
        let inner = self.lock();
        let Some(resource) = inner.resources.get(&kind.storage_key()) else {
            return (Vec::new(), inner.resource_version);
        };
        let items = match namespace {
            Some(ns) => {
                let prefix = format!("{ns}/");
                resource
                    .objects
                    .range::<str, _>((
                        std::ops::Bound::Included(prefix.as_str()),
                        std::ops::Bound::Unbounded,
                    ))
                    .take_while(|(k, _)| k.starts_with(&prefix))
                    .map(|(_, v)| v)
                    .filter(|o| keep(o))
                    .cloned()
                    .collect()
            }
            None => resource
                .objects
                .values()
                .filter(|o| keep(o))
                .cloned()
                .collect(),
        };
        (items, inner.resource_version)
    }

    /// Number of objects stored for a resource.
    pub fn count(&self, kind: &ResourceKind) -> usize {
        self.lock()
            .resources
            .get(&kind.storage_key())
            .map_or(0, |r| r.objects.len())
    }

    /// Creates an object from a client's body.
    pub fn create(
        &self,
        kind: &ResourceKind,
        namespace: &str,
        body: Value,
        options: WriteOptions,
    ) -> Result<Written, ApiError> {
        let mut inner = self.lock();
        self.create_locked(&mut inner, kind, namespace, body, options)
    }

    fn create_locked(
        &self,
        inner: &mut Inner,
        kind: &ResourceKind,
        namespace: &str,
        mut body: Value,
        options: WriteOptions,
    ) -> Result<Written, ApiError> {
        if !body.is_object() {
            return Err(ApiError::bad_request("the body must be a JSON object"));
        }
        if kind.namespaced && !namespace_exists(inner, namespace) {
            return Err(ApiError::NotFound {
                message: format!("namespaces \"{namespace}\" not found"),
                details: Some(Box::new(Details::new(namespace, "", "namespaces"))),
            });
        }
        let meta = object::metadata_mut(&mut body);
        let name = match meta
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        {
            Some(name) => name.to_owned(),
            None => {
                let Some(prefix) = meta
                    .get("generateName")
                    .and_then(Value::as_str)
                    .filter(|p| !p.is_empty())
                else {
                    return Err(invalid(
                        kind,
                        "",
                        "metadata.name",
                        "Required value: name or generateName is required",
                    ));
                };
                let prefix = prefix.to_owned();
                let resource = inner.resources.get(&kind.storage_key());
                let mut candidate = String::new();
                for _ in 0..16 {
                    candidate = format!("{prefix}{}", random_suffix(&mut inner.uid_state));
                    if resource.is_none_or(|r| {
                        !r.objects.contains_key(key(namespace, &candidate).as_str())
                    }) {
                        break;
                    }
                }
                candidate
            }
        };
        if !object::valid_name(&name) {
            return Err(invalid(
                kind,
                &name,
                "metadata.name",
                format!(
                    "Invalid value: {name:?}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'"
                ),
            ));
        }
        let meta = object::metadata_mut(&mut body);
        meta.insert("name".into(), json!(name));
        if kind.namespaced {
            meta.insert("namespace".into(), json!(namespace));
        } else {
            meta.remove("namespace");
        }
        meta.insert("uid".into(), json!(new_uid(&mut inner.uid_state)));
        meta.insert("creationTimestamp".into(), json!(self.clock.rfc3339()));
        meta.insert("generation".into(), json!(1));
        meta.remove("deletionTimestamp");
        meta.remove("deletionGracePeriodSeconds");
        meta.remove("resourceVersion");
        body["apiVersion"] = json!(kind.api_version());
        body["kind"] = json!(kind.kind);
        if kind.status_subresource && kind.custom {
            body.as_object_mut()
                .expect("checked above")
                .remove("status");
        }
        kinds::on_create(kind, &mut body, &self.clock)
            .map_err(|detail| invalid(kind, &name, detail.0, detail.1))?;
        object::normalize(&mut body);
        let storage = kind.storage_key();
        let exists = inner
            .resources
            .get(&storage)
            .is_some_and(|r| r.objects.contains_key(key(namespace, &name).as_str()));
        if exists {
            return Err(ApiError::AlreadyExists {
                resource: kind.qualified(),
                name: name.clone(),
                details: details(kind, &name),
            });
        }
        let rv = if options.dry_run {
            inner.resource_version
        } else {
            inner.resource_version + 1
        };
        object::metadata_mut(&mut body).insert("resourceVersion".into(), json!(rv.to_string()));
        let stored = Arc::new(StoredObject::from_value(&body, rv));
        if !options.dry_run {
            inner.resource_version = rv;
            let resource = self.resource_mut(inner, &storage);
            resource
                .objects
                .insert(key(namespace, &name).into(), stored.clone());
            self.publish(resource, Event::Change(EventType::Added, stored.clone()));
        }
        Ok(Written {
            object: stored,
            created: true,
        })
    }

    /// Updates an object: `change` gets the stored object (or `None` when it is missing
    /// and `create_if_missing` is set) and returns the desired one. Status, immutable
    /// metadata, resourceVersion checks, no-op detection, generation and finalizer rules
    /// are applied here.
    pub fn update(
        &self,
        kind: &ResourceKind,
        namespace: &str,
        name: &str,
        subresource: Subresource,
        options: WriteOptions,
        change: impl FnOnce(Option<&Value>) -> Result<Value, ApiError>,
    ) -> Result<Written, ApiError> {
        let mut inner = self.lock();
        let storage = kind.storage_key();
        let old = inner
            .resources
            .get(&storage)
            .and_then(|r| r.objects.get(key(namespace, name).as_str()))
            .cloned();
        let Some(old) = old else {
            if !options.create_if_missing {
                return Err(not_found(kind, name));
            }
            let mut body = change(None)?;
            if subresource == Subresource::Status {
                return Err(not_found(kind, name));
            }
            object::metadata_mut(&mut body).insert("name".into(), json!(name));
            return self.create_locked(&mut inner, kind, namespace, body, options);
        };
        let old_value = old.to_value();
        let mut new = change(Some(&old_value))?;
        if !new.is_object() {
            return Err(ApiError::bad_request("the object must be a JSON object"));
        }
        let old_rv = old.resource_version.to_string();
        match new["metadata"]["resourceVersion"]
            .as_str()
            .filter(|s| !s.is_empty())
        {
            Some(rv) if rv != old_rv => {
                return Err(conflict(
                    kind,
                    name,
                    "the object has been modified; please apply your changes to the latest version and try again",
                ));
            }
            None if options.require_resource_version => {
                return Err(invalid(
                    kind,
                    name,
                    "metadata.resourceVersion",
                    "Invalid value: 0x0: must be specified for an update",
                ));
            }
            _ => {}
        }
        if new["metadata"]["name"].as_str().is_some_and(|n| n != name) {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                new["metadata"]["name"].as_str().unwrap_or_default()
            )));
        }
        match subresource {
            Subresource::Status => {
                let status = new.as_object_mut().and_then(|o| o.remove("status"));
                new = old_value.clone();
                let object = new.as_object_mut().expect("stored objects are objects");
                match status {
                    Some(status) => object.insert("status".into(), status),
                    None => object.remove("status"),
                };
            }
            Subresource::Main if kind.status_subresource => {
                let object = new.as_object_mut().expect("checked above");
                match old_value.get("status") {
                    Some(status) => object.insert("status".into(), status.clone()),
                    None => object.remove("status"),
                };
            }
            Subresource::Main => {}
        }
        let old_meta = &old_value["metadata"];
        let meta = object::metadata_mut(&mut new);
        for field in [
            "name",
            "namespace",
            "uid",
            "creationTimestamp",
            "generation",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
        ] {
            match old_meta.get(field) {
                Some(value) => meta.insert(field.into(), value.clone()),
                None => meta.remove(field),
            };
        }
        meta.insert("resourceVersion".into(), json!(old_rv));
        new["apiVersion"] = json!(kind.api_version());
        new["kind"] = json!(kind.kind);
        kinds::on_update(kind, &mut new)
            .map_err(|detail| invalid(kind, name, detail.0, detail.1))?;
        object::normalize(&mut new);
        let deleting = old_meta.get("deletionTimestamp").is_some();
        if deleting {
            let before = object::finalizers(&old_value);
            if object::finalizers(&new).iter().any(|f| !before.contains(f)) {
                return Err(invalid(
                    kind,
                    name,
                    "metadata.finalizers",
                    "Forbidden: no new finalizers can be added if the object is being deleted",
                ));
            }
        }
        if new == old_value {
            return Ok(Written {
                object: old,
                created: false,
            });
        }
        if object::spec_differs(&old_value, &new) {
            let generation = old_meta["generation"].as_i64().unwrap_or(0) + 1;
            object::metadata_mut(&mut new).insert("generation".into(), json!(generation));
        }
        if options.dry_run {
            return Ok(Written {
                object: Arc::new(StoredObject::from_value(&new, old.resource_version)),
                created: false,
            });
        }
        let rv = inner.resource_version + 1;
        inner.resource_version = rv;
        object::metadata_mut(&mut new).insert("resourceVersion".into(), json!(rv.to_string()));
        let stored = Arc::new(StoredObject::from_value(&new, rv));
        let resource = self.resource_mut(&mut inner, &storage);
        if deleting && object::finalizers(&new).is_empty() {
            resource.objects.remove(key(namespace, name).as_str());
            self.publish(resource, Event::Change(EventType::Deleted, stored.clone()));
        } else {
            resource
                .objects
                .insert(key(namespace, name).into(), stored.clone());
            self.publish(resource, Event::Change(EventType::Modified, stored.clone()));
        }
        Ok(Written {
            object: stored,
            created: false,
        })
    }

    /// Deletes an object: with finalizers it only gets a deletionTimestamp (once);
    /// without, it is removed and watchers get DELETED with a new resourceVersion.
    pub fn delete(
        &self,
        kind: &ResourceKind,
        namespace: &str,
        name: &str,
        preconditions: &Preconditions,
        dry_run: bool,
    ) -> Result<Arc<StoredObject>, ApiError> {
        let mut inner = self.lock();
        self.delete_locked(&mut inner, kind, namespace, name, preconditions, dry_run)
    }

    fn delete_locked(
        &self,
        inner: &mut Inner,
        kind: &ResourceKind,
        namespace: &str,
        name: &str,
        preconditions: &Preconditions,
        dry_run: bool,
    ) -> Result<Arc<StoredObject>, ApiError> {
        let storage = kind.storage_key();
        let old = inner
            .resources
            .get(&storage)
            .and_then(|r| r.objects.get(key(namespace, name).as_str()))
            .cloned()
            .ok_or_else(|| not_found(kind, name))?;
        let mut value = old.to_value();
        if let Some(uid) = &preconditions.uid {
            let actual = value["metadata"]["uid"].as_str().unwrap_or_default();
            if uid != actual {
                return Err(conflict(
                    kind,
                    name,
                    format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"
                    ),
                ));
            }
        }
        if let Some(rv) = &preconditions.resource_version
            && *rv != old.resource_version.to_string()
        {
            return Err(conflict(
                kind,
                name,
                format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                    old.resource_version
                ),
            ));
        }
        let has_finalizers = !object::finalizers(&value).is_empty();
        if has_finalizers && value["metadata"].get("deletionTimestamp").is_some() {
            return Ok(old);
        }
        if dry_run {
            return Ok(old);
        }
        let rv = inner.resource_version + 1;
        inner.resource_version = rv;
        let meta = object::metadata_mut(&mut value);
        meta.insert("resourceVersion".into(), json!(rv.to_string()));
        if has_finalizers {
            meta.insert("deletionTimestamp".into(), json!(self.clock.rfc3339()));
            meta.insert("deletionGracePeriodSeconds".into(), json!(0));
        }
        let stored = Arc::new(StoredObject::from_value(&value, rv));
        let resource = self.resource_mut(inner, &storage);
        if has_finalizers {
            resource
                .objects
                .insert(key(namespace, name).into(), stored.clone());
            self.publish(resource, Event::Change(EventType::Modified, stored.clone()));
        } else {
            resource.objects.remove(key(namespace, name).as_str());
            self.publish(resource, Event::Change(EventType::Deleted, stored.clone()));
        }
        Ok(stored)
    }

    /// Deletes every object of a namespace, in every resource (what the namespace
    /// controller does); objects with finalizers are only marked for deletion.
    pub fn delete_namespace_contents(&self, kinds: &[Arc<ResourceKind>], namespace: &str) {
        let mut inner = self.lock();
        for kind in kinds.iter().filter(|k| k.namespaced) {
            let prefix = format!("{namespace}/");
            let names: Vec<String> = inner
                .resources
                .get(&kind.storage_key())
                .map(|r| {
                    r.objects
                        .range::<str, _>((
                            std::ops::Bound::Included(prefix.as_str()),
                            std::ops::Bound::Unbounded,
                        ))
                        .take_while(|(k, _)| k.starts_with(&prefix))
                        .map(|(_, o)| o.name.to_string())
                        .collect()
                })
                .unwrap_or_default();
            for name in names {
                // Objects may disappear between listing and deleting only through this
                // same lock, so a failure here is a not-found we can ignore.
                let _ = self.delete_locked(
                    &mut inner,
                    kind,
                    namespace,
                    &name,
                    &Preconditions::default(),
                    false,
                );
            }
        }
    }

    /// Drops every object of a resource (when its CRD is deleted).
    pub fn drop_resource(&self, storage_key: &str) {
        let mut inner = self.lock();
        if let Some(resource) = inner.resources.remove(storage_key) {
            let _ = resource.sender.send(Event::Expired);
        }
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
                    .map(|o| Event::Change(EventType::Added, o.clone()))
                    .collect(),
                None,
            ),
            Some(rv) if rv < resource.expired_through => {
                (Vec::new(), Some((rv, resource.expired_through + 1)))
            }
            Some(rv) => (
                resource
                    .history
                    .iter()
                    .filter(|e| matches!(e, Event::Change(_, o) if o.resource_version > rv))
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
                history: VecDeque::new(),
                expired_through: 0,
                sender: broadcast::channel(self.channel).0,
            })
    }

    fn publish(&self, resource: &mut Resource, event: Event) {
        if resource.history.len() >= self.history
            && let Some(Event::Change(_, dropped)) = resource.history.pop_front()
        {
            resource.expired_through = dropped.resource_version;
        }
        resource.history.push_back(event.clone());
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

fn next_random(state: &mut u64) -> u64 {
    // splitmix64
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn new_uid(state: &mut u64) -> String {
    let (a, b) = (next_random(state), next_random(state));
    let a = (a & 0xFFFF_FFFF_FFFF_0FFF) | 0x4000;
    let b = (b & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xFFFF,
        a & 0xFFFF,
        b >> 48,
        b & 0xFFFF_FFFF_FFFF
    )
}

fn random_suffix(state: &mut u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut n = next_random(state);
    (0..5)
        .map(|_| {
            let c = ALPHABET[(n % ALPHABET.len() as u64) as usize] as char;
            n /= ALPHABET.len() as u64;
            c
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    fn setup() -> (Store, Arc<ResourceKind>, Arc<ResourceKind>) {
        let store = Store::new(Clock::new(), 4, 64);
        let registry = Registry::with_builtins();
        let ns = registry.get("", "v1", "namespaces").unwrap();
        let cm = registry.get("", "v1", "configmaps").unwrap();
        store
            .create(
                &ns,
                "",
                json!({"metadata": {"name": "default"}}),
                WriteOptions::default(),
            )
            .unwrap();
        (store, ns, cm)
    }

    fn cm(name: &str) -> Value {
        json!({"metadata": {"name": name, "labels": {"app": "x"}}, "data": {"k": "v"}})
    }

    #[test]
    fn creates_stamp_metadata_and_bump_the_global_resource_version() {
        let (store, _, kind) = setup();
        let before = store.resource_version();
        let written = store
            .create(&kind, "default", cm("a"), WriteOptions::default())
            .unwrap();
        let value = written.object.to_value();
        assert_eq!(written.object.resource_version, before + 1);
        assert_eq!(
            value["metadata"]["resourceVersion"],
            (before + 1).to_string()
        );
        assert_eq!(value["metadata"]["generation"], 1);
        assert_eq!(value["kind"], "ConfigMap");
        assert_eq!(value["metadata"]["uid"].as_str().unwrap().len(), 36);
        let again = store.create(&kind, "default", cm("a"), WriteOptions::default());
        assert!(matches!(again, Err(ApiError::AlreadyExists { .. })));
    }

    #[test]
    fn creating_in_a_missing_namespace_is_not_found() {
        let (store, _, kind) = setup();
        let err = store
            .create(&kind, "nowhere", cm("a"), WriteOptions::default())
            .unwrap_err();
        assert_eq!(err.code(), 404);
    }

    #[test]
    fn a_no_op_update_keeps_the_resource_version_and_emits_nothing() {
        let (store, _, kind) = setup();
        store
            .create(&kind, "default", cm("a"), WriteOptions::default())
            .unwrap();
        let rv = store.resource_version();
        let mut watch = store.watch(&kind, Some(rv));
        let written = store
            .update(
                &kind,
                "default",
                "a",
                Subresource::Main,
                WriteOptions::default(),
                |old| Ok(old.unwrap().clone()),
            )
            .unwrap();
        assert_eq!(written.object.resource_version, rv);
        assert_eq!(store.resource_version(), rv);
        assert!(watch.receiver.try_recv().is_err());
    }

    #[test]
    fn generation_moves_only_on_spec_changes() {
        let (store, _, kind) = setup();
        store
            .create(&kind, "default", cm("a"), WriteOptions::default())
            .unwrap();
        let relabel = store
            .update(
                &kind,
                "default",
                "a",
                Subresource::Main,
                WriteOptions::default(),
                |old| {
                    let mut v = old.unwrap().clone();
                    v["metadata"]["labels"]["app"] = json!("y");
                    Ok(v)
                },
            )
            .unwrap();
        assert_eq!(relabel.object.to_value()["metadata"]["generation"], 1);
        let change = store
            .update(
                &kind,
                "default",
                "a",
                Subresource::Main,
                WriteOptions::default(),
                |old| {
                    let mut v = old.unwrap().clone();
                    v["data"]["k"] = json!("w");
                    Ok(v)
                },
            )
            .unwrap();
        assert_eq!(change.object.to_value()["metadata"]["generation"], 2);
    }

    #[test]
    fn a_stale_resource_version_is_a_conflict() {
        let (store, _, kind) = setup();
        store
            .create(&kind, "default", cm("a"), WriteOptions::default())
            .unwrap();
        let err = store
            .update(
                &kind,
                "default",
                "a",
                Subresource::Main,
                WriteOptions::default(),
                |old| {
                    let mut v = old.unwrap().clone();
                    v["metadata"]["resourceVersion"] = json!("1");
                    v["data"]["k"] = json!("w");
                    Ok(v)
                },
            )
            .unwrap_err();
        assert_eq!(err.reason(), "Conflict");
    }

    #[test]
    fn finalizers_hold_a_deletion_until_they_are_removed() {
        let (store, _, kind) = setup();
        let mut body = cm("a");
        body["metadata"]["finalizers"] = json!(["f"]);
        store
            .create(&kind, "default", body, WriteOptions::default())
            .unwrap();
        let marked = store
            .delete(&kind, "default", "a", &Preconditions::default(), false)
            .unwrap();
        let value = marked.to_value();
        assert!(value["metadata"]["deletionTimestamp"].is_string());
        assert_eq!(value["metadata"]["deletionGracePeriodSeconds"], 0);
        let again = store
            .delete(&kind, "default", "a", &Preconditions::default(), false)
            .unwrap();
        assert_eq!(again.resource_version, marked.resource_version);
        let add = store.update(
            &kind,
            "default",
            "a",
            Subresource::Main,
            WriteOptions::default(),
            |old| {
                let mut v = old.unwrap().clone();
                v["metadata"]["finalizers"] = json!(["f", "g"]);
                Ok(v)
            },
        );
        assert_eq!(add.unwrap_err().code(), 422);
        store
            .update(
                &kind,
                "default",
                "a",
                Subresource::Main,
                WriteOptions::default(),
                |old| {
                    let mut v = old.unwrap().clone();
                    v["metadata"]["finalizers"] = json!([]);
                    Ok(v)
                },
            )
            .unwrap();
        assert_eq!(store.get(&kind, "default", "a").unwrap_err().code(), 404);
    }

    #[test]
    fn watches_resume_from_history_and_expire_when_it_is_gone() {
        let (store, _, kind) = setup();
        let start = store.resource_version();
        for i in 0..3 {
            store
                .create(
                    &kind,
                    "default",
                    cm(&format!("c{i}")),
                    WriteOptions::default(),
                )
                .unwrap();
        }
        let resumed = store.watch(&kind, Some(start + 1));
        assert_eq!(resumed.initial.len(), 2);
        assert!(resumed.expired.is_none());
        for i in 3..10 {
            store
                .create(
                    &kind,
                    "default",
                    cm(&format!("c{i}")),
                    WriteOptions::default(),
                )
                .unwrap();
        }
        assert!(store.watch(&kind, Some(start)).expired.is_some());
        assert_eq!(store.watch(&kind, None).initial.len(), 10);
    }

    #[test]
    fn generate_name_gets_a_random_suffix() {
        let (store, _, kind) = setup();
        let written = store
            .create(
                &kind,
                "default",
                json!({"metadata": {"generateName": "gen-"}}),
                WriteOptions::default(),
            )
            .unwrap();
        assert!(written.object.name.starts_with("gen-"));
        assert_eq!(written.object.name.len(), 9);
    }
}
