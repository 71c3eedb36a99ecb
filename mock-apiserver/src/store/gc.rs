//! The garbage collector: what kube-controller-manager's does with `ownerReferences`,
//! run at once inside the write that makes it necessary, later, or never, as the
//! store's [`GarbageCollection`](super::GarbageCollection) mode says (the `collector`
//! module).
//!
//! # Semantics
//! Owners are matched by uid. When an object is removed, each dependent is classified
//! by its owner references (kube's `classifyReferences`): *dangling* (the owner is gone),
//! *waiting* (the owner is being deleted in the foreground) or *solid* (any other live
//! owner). A dependent with a solid owner loses its dangling and waiting references;
//! one without is deleted: in the foreground when a waiting owner needs it gone and it
//! has dependents of its own, else as its own finalizers say (`orphan`,
//! `foregroundDeletion`) or in the background.
//! - `propagationPolicy: Background` (the default): the owner goes at once, then its
//!   dependents.
//! - `Foreground`: the owner gets a `deletionTimestamp` and the `foregroundDeletion`
//!   finalizer; its dependents are deleted; the finalizer is removed once no dependent
//!   with `blockOwnerDeletion: true` remains.
//! - `Orphan` (or `orphanDependents: true`): the dependents lose their references to
//!   the owner, then the owner is deleted.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Value, json};

use super::collector::Work;
use super::{Inner, Store, key};
use crate::object::{self, StoredObject};
use crate::registry::ResourceKind;

pub use super::collector::{FOREGROUND, ORPHAN};

/// How a delete treats the object's dependents (`DeleteOptions.propagationPolicy`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Propagation {
    /// Delete the object now and its dependents after it.
    #[default]
    Background,
    /// Delete the dependents first; the object waits with `foregroundDeletion`.
    Foreground,
    /// Keep the dependents, without their references to the object.
    Orphan,
}

/// Where an object lives: its resource's storage key and `namespace/name`.
pub type Location = (String, String);

/// The uid and owner uids of an object.
fn identity(value: &Value) -> (String, Vec<String>) {
    let meta = &value["metadata"];
    let uid = meta["uid"].as_str().unwrap_or_default().to_owned();
    (uid, owner_uids(value))
}

fn owner_uids(value: &Value) -> Vec<String> {
    value["metadata"]["ownerReferences"]
        .as_array()
        .map(|refs| {
            refs.iter()
                .filter_map(|r| r["uid"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

impl Inner {
    /// Records a stored object (created or changed) in the uid and owner indexes.
    pub(super) fn index(
        &mut self,
        kind: &ResourceKind,
        location: &Location,
        old: Option<&Value>,
        new: &Value,
    ) {
        let (uid, owners) = identity(new);
        if old.is_none() {
            self.uids.insert(uid.clone(), location.clone());
            if !self.kinds.contains_key(&location.0) {
                self.kinds
                    .insert(location.0.clone(), Arc::new(kind.clone()));
            }
        }
        let before = old.map(owner_uids).unwrap_or_default();
        if before == owners {
            return;
        }
        for owner in before {
            if let Some(set) = self.dependents.get_mut(&owner) {
                set.remove(location);
                if set.is_empty() {
                    self.dependents.remove(&owner);
                }
            }
        }
        for owner in owners {
            self.dependents
                .entry(owner)
                .or_default()
                .insert(location.clone());
        }
    }

    /// Forgets a removed object's own entries (its dependents keep theirs until the
    /// collector has looked at them).
    pub(super) fn unindex(&mut self, location: &Location, value: &Value) {
        let (uid, owners) = identity(value);
        self.uids.remove(&uid);
        for owner in owners {
            if let Some(set) = self.dependents.get_mut(&owner) {
                set.remove(location);
                if set.is_empty() {
                    self.dependents.remove(&owner);
                }
            }
        }
    }

    pub(super) fn lookup(&self, location: &Location) -> Option<Arc<StoredObject>> {
        self.resources
            .get(&location.0)
            .and_then(|r| r.objects.get(location.1.as_str()))
            .cloned()
    }
}

/// An owner reference's standing, as kube's garbage collector classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    Dangling,
    Waiting,
    Solid,
}

impl Store {
    fn standing(&self, inner: &Inner, owner_uid: &str) -> Standing {
        let Some(owner) = inner.uids.get(owner_uid).and_then(|l| inner.lookup(l)) else {
            return Standing::Dangling;
        };
        let value = owner.to_value();
        if value["metadata"].get("deletionTimestamp").is_some()
            && object::finalizers(&value).contains(&FOREGROUND)
        {
            Standing::Waiting
        } else {
            Standing::Solid
        }
    }

    /// Writes a changed object under the lock: a new resourceVersion and a MODIFIED
    /// event, or, for a deleting object whose last finalizer went, its removal.
    pub(super) fn rewrite_locked(&self, inner: &mut Inner, location: &Location, mut new: Value) {
        let Some(old) = inner.lookup(location) else {
            return;
        };
        object::normalize(&mut new);
        let old_value = old.to_value();
        if new == old_value {
            return;
        }
        let rv = inner.resource_version + 1;
        inner.resource_version = rv;
        object::metadata_mut(&mut new).insert("resourceVersion".into(), json!(rv.to_string()));
        let stored = Arc::new(StoredObject::from_value(&new, rv));
        let removed = new["metadata"].get("deletionTimestamp").is_some()
            && object::finalizers(&new).is_empty();
        if removed {
            inner.unindex(location, &old_value);
        } else if let Some(kind) = inner.kinds.get(&location.0).cloned() {
            inner.index(&kind, location, Some(&old_value), &new);
        }
        let resource = self.resource_mut(inner, &location.0);
        if removed {
            self.remove_deleted(resource, &location.1, stored);
            self.schedule(inner, Work::Removed(new));
        } else {
            self.put_modified(resource, &location.1, stored, old);
        }
    }

    /// Runs the collector for an object that was just removed: its dependents, then its
    /// owners that wait in the foreground for it.
    pub(super) fn collect(&self, inner: &mut Inner, removed: &Value) {
        let (uid, owners) = identity(removed);
        let dependents: BTreeSet<Location> = inner.dependents.remove(&uid).unwrap_or_default();
        for dependent in &dependents {
            self.attempt_to_delete(inner, dependent);
        }
        for owner in owners {
            self.release_if_unblocked(inner, &owner);
        }
    }

    /// The collector's `attemptToDeleteItem` for one dependent.
    fn attempt_to_delete(&self, inner: &mut Inner, location: &Location) {
        let Some(stored) = inner.lookup(location) else {
            return;
        };
        let mut value = stored.to_value();
        let refs = value["metadata"]["ownerReferences"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let standings: Vec<Standing> = refs
            .iter()
            .map(|r| self.standing(inner, r["uid"].as_str().unwrap_or_default()))
            .collect();
        if standings.contains(&Standing::Solid) {
            if standings.iter().all(|s| *s == Standing::Solid) {
                return;
            }
            let kept: Vec<Value> = refs
                .into_iter()
                .zip(&standings)
                .filter(|(_, s)| **s == Standing::Solid)
                .map(|(r, _)| r)
                .collect();
            object::metadata_mut(&mut value).insert("ownerReferences".into(), json!(kept));
            self.rewrite_locked(inner, location, value);
            return;
        }
        let (uid, _) = identity(&value);
        let finalizers = object::finalizers(&value);
        let policy =
            if standings.contains(&Standing::Waiting) && inner.dependents.contains_key(&uid) {
                Propagation::Foreground
            } else if finalizers.contains(&ORPHAN) {
                Propagation::Orphan
            } else if finalizers.contains(&FOREGROUND) {
                Propagation::Foreground
            } else {
                Propagation::Background
            };
        let Some(kind) = inner.kinds.get(&location.0).cloned() else {
            return;
        };
        let (namespace, name) = location.1.split_once('/').unwrap_or(("", &location.1));
        // The dependent may have finalizers of its own; then it only starts deleting.
        let _ = self.delete_locked(
            inner,
            &kind,
            namespace,
            name,
            &super::Preconditions::default(),
            false,
            policy,
        );
    }

    /// Removes `owner`'s `foregroundDeletion` finalizer once no dependent that blocks
    /// its deletion remains.
    pub(super) fn release_if_unblocked(&self, inner: &mut Inner, owner: &str) {
        let Some(location) = inner.uids.get(owner).cloned() else {
            return;
        };
        if self.standing(inner, owner) != Standing::Waiting {
            return;
        }
        let blocked = inner.dependents.get(owner).is_some_and(|set| {
            set.iter().any(|dependent| {
                inner.lookup(dependent).is_some_and(|d| {
                    d.to_value()["metadata"]["ownerReferences"]
                        .as_array()
                        .is_some_and(|refs| {
                            refs.iter().any(|r| {
                                r["uid"] == owner && r["blockOwnerDeletion"] == json!(true)
                            })
                        })
                })
            })
        });
        if blocked {
            return;
        }
        let Some(stored) = inner.lookup(&location) else {
            return;
        };
        let mut value = stored.to_value();
        let finalizers: Vec<Value> = object::finalizers(&value)
            .into_iter()
            .filter(|f| *f != FOREGROUND)
            .map(|f| json!(f))
            .collect();
        object::metadata_mut(&mut value).insert("finalizers".into(), json!(finalizers));
        self.rewrite_locked(inner, &location, value);
    }

    /// Takes the references to `owner` out of all its dependents (an orphaning delete).
    pub(super) fn orphan_dependents(&self, inner: &mut Inner, owner: &str) {
        let dependents: BTreeSet<Location> = inner.dependents.remove(owner).unwrap_or_default();
        for location in dependents {
            let Some(stored) = inner.lookup(&location) else {
                continue;
            };
            let mut value = stored.to_value();
            let kept: Vec<Value> = value["metadata"]["ownerReferences"]
                .as_array()
                .map(|refs| refs.iter().filter(|r| r["uid"] != owner).cloned().collect())
                .unwrap_or_default();
            object::metadata_mut(&mut value).insert("ownerReferences".into(), json!(kept));
            self.rewrite_locked(inner, &location, value);
        }
    }

    /// The dependents of a foreground deletion: each is looked at by the collector.
    pub(super) fn delete_dependents(&self, inner: &mut Inner, owner: &str) {
        let dependents: Vec<Location> = inner
            .dependents
            .get(owner)
            .map(|set| set.iter().cloned().collect())
            .unwrap_or_default();
        for dependent in dependents {
            self.attempt_to_delete(inner, &dependent);
        }
        self.release_if_unblocked(inner, owner);
    }
}

/// `namespace/name` of an object, the key within its resource.
pub fn location(kind: &ResourceKind, namespace: &str, name: &str) -> Location {
    (kind.storage_key(), key(namespace, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Clock;
    use crate::registry::Registry;
    use crate::store::{Preconditions, WriteOptions, create_default_namespace, edit};

    struct Setup {
        store: Store,
        configmaps: Arc<ResourceKind>,
        secrets: Arc<ResourceKind>,
    }

    fn setup() -> Setup {
        let store = Store::new(Clock::new(), crate::store::WatchHistory::Fixed(64), 64, 7);
        let registry = Registry::with_builtins();
        let namespaces = registry.get("", "v1", "namespaces").unwrap();
        create_default_namespace(&store, &namespaces);
        Setup {
            store,
            configmaps: registry.get("", "v1", "configmaps").unwrap(),
            secrets: registry.get("", "v1", "secrets").unwrap(),
        }
    }

    impl Setup {
        /// Creates a ConfigMap owner and returns its uid.
        fn owner(&self, name: &str) -> String {
            let written = self
                .store
                .create(
                    &self.configmaps,
                    "default",
                    json!({"metadata": {"name": name}}),
                    WriteOptions::default(),
                )
                .unwrap();
            written.object.to_value()["metadata"]["uid"]
                .as_str()
                .unwrap()
                .to_owned()
        }

        /// Creates a Secret owned by `owners` (uid, blockOwnerDeletion).
        fn dependent(&self, name: &str, owners: &[(&str, bool)], finalizers: &[&str]) {
            let refs: Vec<Value> = owners
                .iter()
                .map(|(uid, block)| {
                    json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": uid,
                           "controller": true, "blockOwnerDeletion": block})
                })
                .collect();
            self.store
                .create(
                    &self.secrets,
                    "default",
                    json!({"metadata": {"name": name, "ownerReferences": refs,
                                        "finalizers": finalizers}}),
                    WriteOptions::default(),
                )
                .unwrap();
        }

        fn secret(&self, name: &str) -> Option<Value> {
            self.store
                .get(&self.secrets, "default", name)
                .ok()
                .map(|o| o.to_value())
        }

        fn delete(&self, name: &str, policy: Propagation) -> Value {
            self.store
                .delete(
                    &self.configmaps,
                    "default",
                    name,
                    &Preconditions::default(),
                    false,
                    policy,
                )
                .unwrap()
                .to_value()
        }
    }

    #[test]
    fn a_background_delete_takes_the_dependents_whose_owners_are_all_gone() {
        let s = setup();
        let owner = s.owner("o");
        let other = s.owner("p");
        s.dependent("connection", &[(&owner, true)], &[]);
        s.dependent("shared", &[(&owner, false), (&other, false)], &[]);
        s.delete("o", Propagation::Background);
        assert!(s.secret("connection").is_none());
        let shared = s.secret("shared").expect("a live owner keeps it");
        let refs = shared["metadata"]["ownerReferences"].as_array().unwrap();
        assert_eq!(refs.len(), 1, "the dangling reference is removed");
        assert_eq!(refs[0]["uid"], other);
    }

    #[test]
    fn a_foreground_delete_waits_for_blocking_dependents_only() {
        let s = setup();
        let owner = s.owner("o");
        s.dependent("blocking", &[(&owner, true)], &["example.org/keep"]);
        s.dependent("free", &[(&owner, false)], &["example.org/keep"]);
        let marked = s.delete("o", Propagation::Foreground);
        assert_eq!(marked["metadata"]["finalizers"], json!([FOREGROUND]));
        assert!(marked["metadata"]["deletionTimestamp"].is_string());
        for name in ["blocking", "free"] {
            let d = s.secret(name).unwrap();
            assert!(
                d["metadata"]["deletionTimestamp"].is_string(),
                "{name} is deleting"
            );
        }
        // Releasing the non-blocking dependent does not release the owner...
        let release = |name: &str| {
            edit(&s.store, &s.secrets, name, |v| {
                v["metadata"]["finalizers"] = json!([]);
            })
            .unwrap();
        };
        release("free");
        assert!(s.store.get(&s.configmaps, "default", "o").is_ok());
        // ...the blocking one does.
        release("blocking");
        assert!(s.secret("blocking").is_none());
        assert!(s.store.get(&s.configmaps, "default", "o").is_err());
    }

    #[test]
    fn a_foreground_delete_without_dependents_completes_at_once() {
        let s = setup();
        s.owner("o");
        s.delete("o", Propagation::Foreground);
        assert!(s.store.get(&s.configmaps, "default", "o").is_err());
    }

    #[test]
    fn an_orphaning_delete_keeps_the_dependents_without_their_references() {
        let s = setup();
        let owner = s.owner("o");
        s.dependent("kept", &[(&owner, true)], &[]);
        s.delete("o", Propagation::Orphan);
        let kept = s.secret("kept").expect("orphaned, not deleted");
        assert!(kept["metadata"].get("ownerReferences").is_none());
        assert!(s.store.get(&s.configmaps, "default", "o").is_err());
    }
}
