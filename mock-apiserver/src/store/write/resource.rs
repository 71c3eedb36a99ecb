//! Writes to a whole resource at once: quiet rewrites (a new schema's defaults) and
//! dropping every object when the resource goes away.

use std::sync::Arc;

use serde_json::Value;

use crate::object::StoredObject;
use crate::registry::ResourceKind;
use crate::store::{Event, Store};

impl Store {
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
