//! The writes of the store: create, update (with its status, resourceVersion, no-op,
//! generation and finalizer rules) and delete.

use std::sync::Arc;

use serde_json::{Value, json};

use super::collector::{Work, deferred_finalizer};
use super::ids::{new_uid, random_suffix};
use super::{
    Event, EventType, Fields, GarbageCollection, Inner, Preconditions, Propagation, Store,
    Subresource, WriteOptions, Written, conflict, details, gc, invalid, key, namespace_exists,
    not_found,
};
use crate::error::{ApiError, Details};
use crate::kinds;
use crate::object::{self, StoredObject};
use crate::registry::ResourceKind;
use crate::ssa;

impl Store {
    /// Creates an object from a client's body.
    pub fn create(
        &self,
        kind: &ResourceKind,
        namespace: &str,
        body: Value,
        options: WriteOptions<'_>,
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
        options: WriteOptions<'_>,
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
        if kind.status_subresource {
            let object = body.as_object_mut().expect("checked above");
            if kind.custom {
                object.remove("status");
            } else {
                // A built-in kind's create strategy resets the status to its zero value,
                // which Go writes as `"status": {}`: clients read an empty status, never none.
                object.insert("status".into(), json!({}));
            }
        }
        let warnings = match &kind.structural {
            Some(schema) => schema
                .0
                .admit(kind, &mut body, None, options.field_validation)?,
            None => Vec::new(),
        };
        kinds::on_create(kind, &mut body, &self.clock)
            .map_err(|detail| invalid(kind, &name, detail.0, detail.1))?;
        object::normalize(&mut body);
        if let Fields::Update(manager) = options.fields {
            track_update(
                kind,
                Subresource::Main,
                manager,
                &self.clock,
                None,
                &mut body,
            )?;
        }
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
        if !options.dry_run {
            inner.index(kind, &gc::location(kind, namespace, &name), None, &body);
        }
        // The body is not used after this: stored as it is, not copied.
        let stored = Arc::new(StoredObject::from_owned(body, rv));
        if !options.dry_run {
            inner.resource_version = rv;
            let resource = self.resource_mut(inner, &storage);
            resource
                .objects
                .insert(key(namespace, &name).into(), stored.clone());
            self.publish(
                resource,
                Event::Change(EventType::Added, stored.clone(), None),
            );
        }
        Ok(Written {
            object: stored,
            created: true,
            warnings,
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
        options: WriteOptions<'_>,
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
        let old_value = old.value();
        let mut new = change(Some(old_value))?;
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
        // A status write that repeats the stored status changes nothing: the stored object
        // has passed admission and normalisation already, so the full path below would
        // rebuild it byte for byte and find a no-op. A controller's steady polls write their
        // unchanged status every time; answering them here spares a copy of the object.
        let managed_unchanged = options.fields != Fields::Applied
            || new["metadata"].get("managedFields") == old_value["metadata"].get("managedFields");
        if subresource == Subresource::Status
            && new.get("status") == old_value.get("status")
            && managed_unchanged
        {
            return Ok(Written {
                object: old.clone(),
                created: false,
                warnings: Vec::new(),
            });
        }
        match subresource {
            Subresource::Status => {
                let status = new.as_object_mut().and_then(|o| o.remove("status"));
                let managed = object::metadata_mut(&mut new).remove("managedFields");
                new = old_value.clone();
                let object = new.as_object_mut().expect("stored objects are objects");
                match status {
                    Some(status) => object.insert("status".into(), status),
                    None => object.remove("status"),
                };
                if options.fields == Fields::Applied {
                    let meta = object::metadata_mut(&mut new);
                    match managed {
                        Some(managed) => meta.insert("managedFields".into(), managed),
                        None => meta.remove("managedFields"),
                    };
                }
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
        let warnings = match &kind.structural {
            Some(schema) => {
                schema
                    .0
                    .admit(kind, &mut new, Some(old_value), options.field_validation)?
            }
            None => Vec::new(),
        };
        kinds::on_update(kind, &mut new)
            .map_err(|detail| invalid(kind, name, detail.0, detail.1))?;
        object::normalize(&mut new);
        let deleting = old_meta.get("deletionTimestamp").is_some();
        if deleting {
            let before = object::finalizers(old_value);
            if object::finalizers(&new).iter().any(|f| !before.contains(f)) {
                return Err(invalid(
                    kind,
                    name,
                    "metadata.finalizers",
                    "Forbidden: no new finalizers can be added if the object is being deleted",
                ));
            }
        }
        if let Fields::Update(manager) = options.fields {
            track_update(
                kind,
                subresource,
                manager,
                &self.clock,
                Some(old_value),
                &mut new,
            )?;
        }
        if new == *old_value {
            return Ok(Written {
                object: old.clone(),
                created: false,
                warnings,
            });
        }
        if object::spec_differs(old_value, &new) {
            let generation = old_meta["generation"].as_i64().unwrap_or(0) + 1;
            object::metadata_mut(&mut new).insert("generation".into(), json!(generation));
        }
        if options.dry_run {
            return Ok(Written {
                object: Arc::new(StoredObject::from_owned(new, old.resource_version)),
                created: false,
                warnings,
            });
        }
        let rv = inner.resource_version + 1;
        inner.resource_version = rv;
        object::metadata_mut(&mut new).insert("resourceVersion".into(), json!(rv.to_string()));
        let stored = Arc::new(StoredObject::from_owned(new, rv));
        let new = stored.value();
        let location = gc::location(kind, namespace, name);
        let removed = deleting && object::finalizers(new).is_empty();
        if removed {
            inner.unindex(&location, old_value);
        } else {
            inner.index(kind, &location, Some(old_value), new);
        }
        let resource = self.resource_mut(&mut inner, &storage);
        if removed {
            resource.objects.remove(key(namespace, name).as_str());
            self.publish(
                resource,
                Event::Change(EventType::Deleted, stored.clone(), None),
            );
            self.schedule(&mut inner, Work::Removed(new.clone()));
        } else {
            resource
                .objects
                .insert(key(namespace, name).into(), stored.clone());
            self.publish(
                resource,
                Event::Change(EventType::Modified, stored.clone(), Some(old.clone())),
            );
        }
        Ok(Written {
            object: stored,
            created: false,
            warnings,
        })
    }

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
    pub(super) fn delete_locked(
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
            resource
                .objects
                .insert(key(namespace, name).into(), stored.clone());
            self.publish(
                resource,
                Event::Change(EventType::Modified, stored.clone(), Some(old.clone())),
            );
            match policy {
                Propagation::Foreground => self.schedule(inner, Work::DeleteDependents(uid)),
                Propagation::Orphan if !immediate => self.schedule(inner, Work::Orphan(uid)),
                _ => {}
            }
        } else {
            resource.objects.remove(key(namespace, name).as_str());
            self.publish(
                resource,
                Event::Change(EventType::Deleted, stored.clone(), None),
            );
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

    /// Applies `change` to every stored object of a resource, keeping resourceVersions
    /// and sending no events: what a read would show anyway (defaults of a new schema).
    pub fn rewrite_quietly(&self, kind: &ResourceKind, mut change: impl FnMut(&mut Value)) {
        let mut inner = self.lock();
        let Some(resource) = inner.resources.get_mut(&kind.storage_key()) else {
            return;
        };
        for stored in resource.objects.values_mut() {
            let mut value = stored.to_value();
            change(&mut value);
            if value != *stored.value() {
                *stored = Arc::new(StoredObject::from_owned(value, stored.resource_version));
            }
        }
    }

    /// Drops every object of a resource (when its CRD is deleted).
    pub fn drop_resource(&self, storage_key: &str) {
        let mut inner = self.lock();
        if let Some(resource) = inner.resources.remove(storage_key) {
            for (key, stored) in &resource.objects {
                inner.unindex(&(storage_key.to_owned(), key.to_string()), stored.value());
            }
            let _ = resource.sender.send(Event::Expired);
        }
    }
}

/// Records a client's non-apply write in `new`'s managed fields.
fn track_update(
    kind: &ResourceKind,
    subresource: Subresource,
    manager: &str,
    clock: &crate::clock::Clock,
    old: Option<&Value>,
    new: &mut Value,
) -> Result<(), ApiError> {
    let api_version = kind.api_version();
    let now = clock.rfc3339();
    let writer = ssa::Writer {
        manager,
        api_version: &api_version,
        kind: &kind.kind,
        status: subresource == Subresource::Status,
        status_subresource: kind.status_subresource,
        shape: ssa::Shape::of(kind),
        now: &now,
    };
    ssa::update(&writer, old, new).map_err(ssa::api_error)
}
