//! Creating an object: name generation, the namespace check, the server-set metadata
//! (uid, creationTimestamp, generation) and the admission of the body.

use std::sync::Arc;

use serde_json::{Value, json};

use super::track_update;
use crate::error::{ApiError, Details};
use crate::kinds;
use crate::object::{self, StoredObject};
use crate::registry::ResourceKind;
use crate::store::ids::{new_uid, random_suffix};
use crate::store::{
    Event, EventType, Fields, Inner, Store, Subresource, WriteOptions, Written, details, gc,
    invalid, key, namespace_exists,
};

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

    pub(super) fn create_locked(
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
}
