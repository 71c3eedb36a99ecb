//! Deleting an object: preconditions, finalizers and the deletionTimestamp, and the
//! dependents' propagation policy; and deleting a namespace's contents.

use std::sync::Arc;

use serde_json::json;

use crate::error::ApiError;
use crate::object::{self, StoredObject};
use crate::registry::ResourceKind;
use crate::store::collector::{Work, deferred_finalizer};
use crate::store::{
    GarbageCollection, Inner, Preconditions, Propagation, Store, conflict, gc, key, not_found,
};

impl Store {
    /// Deletes an object: with finalizers it only gets a deletionTimestamp (once);
    /// without, it is removed and watchers get DELETED with a new resourceVersion. Its
    /// dependents are collected as `policy` says (see the `gc` module).
    pub fn delete(
        &self,
        kind: &ResourceKind,
        namespace: &str,
        name: &str,
        preconditions: &Preconditions,
        dry_run: bool,
        policy: Propagation,
    ) -> Result<Arc<StoredObject>, ApiError> {
        let mut inner = self.lock();
        self.delete_locked(
            &mut inner,
            kind,
            namespace,
            name,
            preconditions,
            dry_run,
            policy,
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub(in crate::store) fn delete_locked(
        &self,
        inner: &mut Inner,
        kind: &ResourceKind,
        namespace: &str,
        name: &str,
        preconditions: &Preconditions,
        dry_run: bool,
        policy: Propagation,
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
        let deleting = value["metadata"].get("deletionTimestamp").is_some();
        if dry_run || (deleting && !object::finalizers(&value).is_empty()) {
            return Ok(old);
        }
        let uid = value["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let immediate = self.garbage_collection == GarbageCollection::Immediate;
        if policy == Propagation::Orphan && immediate {
            self.orphan_dependents(inner, &uid);
        }
        // kube-apiserver's registry store adds the collector's finalizer
        // (`deletionFinalizersForGarbageCollection`); the collector removes it.
        let finalizer = match policy {
            Propagation::Orphan if immediate => None,
            _ => deferred_finalizer(policy),
        };
        if let Some(finalizer) = finalizer
            && !object::finalizers(&value).contains(&finalizer)
        {
            let meta = object::metadata_mut(&mut value);
            let finalizers = meta.entry("finalizers").or_insert_with(|| json!([]));
            if let Some(list) = finalizers.as_array_mut() {
                list.push(json!(finalizer));
            }
        }
        let has_finalizers = !object::finalizers(&value).is_empty();
        let rv = inner.resource_version + 1;
        inner.resource_version = rv;
        let meta = object::metadata_mut(&mut value);
        meta.insert("resourceVersion".into(), json!(rv.to_string()));
        if has_finalizers {
            meta.insert("deletionTimestamp".into(), json!(self.clock.rfc3339()));
            meta.insert("deletionGracePeriodSeconds".into(), json!(0));
            // Like the apiserver's markAsDeleting: the first deletionTimestamp bumps a set
            // generation, so controllers filtering on generation see the deletion start.
            if let Some(generation) = meta.get("generation").and_then(serde_json::Value::as_i64)
                && generation > 0
            {
                meta.insert("generation".into(), json!(generation + 1));
            }
        }
        let stored = Arc::new(StoredObject::from_value(&value, rv));
        let location = gc::location(kind, namespace, name);
        if has_finalizers {
            inner.index(kind, &location, Some(old.value()), &value);
        } else {
            inner.unindex(&location, &value);
        }
        let resource = self.resource_mut(inner, &storage);
        if has_finalizers {
            self.put_modified(resource, &key(namespace, name), stored.clone(), old.clone());
            match policy {
                Propagation::Foreground => self.schedule(inner, Work::DeleteDependents(uid)),
                Propagation::Orphan if !immediate => self.schedule(inner, Work::Orphan(uid)),
                _ => {}
            }
        } else {
            self.remove_deleted(resource, &key(namespace, name), stored.clone());
            self.schedule(inner, Work::Removed(value));
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
                    Propagation::Background,
                );
            }
        }
    }
}
