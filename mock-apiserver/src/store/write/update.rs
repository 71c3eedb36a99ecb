//! Updating an object, with its status, immutable-metadata, resourceVersion, no-op,
//! generation and finalizer rules.

use std::sync::Arc;

use serde_json::{Value, json};

use super::track_update;
use crate::error::ApiError;
use crate::kinds;
use crate::object::{self, StoredObject};
use crate::registry::ResourceKind;
use crate::store::collector::Work;
use crate::store::{
    Fields, Store, Subresource, WriteOptions, Written, conflict, gc, invalid, key, not_found,
};

impl Store {
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
            self.remove_deleted(resource, &key(namespace, name), stored.clone());
            self.schedule(&mut inner, Work::Removed(new.clone()));
        } else {
            self.put_modified(resource, &key(namespace, name), stored.clone(), old.clone());
        }
        Ok(Written {
            object: stored,
            created: false,
            warnings,
        })
    }
}
