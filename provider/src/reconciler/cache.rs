//! Reads from the informer cache, corrected by our own last write.

use std::collections::HashMap;
use std::sync::Arc;

use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};
use parking_lot::Mutex;

use super::meta::newer_resource_version;
use crate::crd::Managed;

/// The reflector's store plus the object each of our writes returned.
///
/// # Semantics
/// crossplane-runtime reads only the informer cache, so the reconcile that follows its own
/// write often sees the object from before that write, and its next PUT fails with 409
/// (docs/managed-reconciler.md, "Pitfalls a reproduction must avoid"). Here a read returns
/// our last written copy while the cache has not caught up with it (compared by
/// resourceVersion), and the cache's copy as soon as it has (or when a newer write by someone else arrived). Objects missing
/// from the cache are missing: a deletion is never hidden.
pub struct ReadYourWrites<K: Managed> {
    store: Store<K>,
    written: Mutex<HashMap<(String, String), Arc<K>>>,
}

impl<K: Managed> ReadYourWrites<K> {
    /// Reads `store`.
    pub fn new(store: Store<K>) -> Self {
        ReadYourWrites {
            store,
            written: Mutex::new(HashMap::new()),
        }
    }

    /// The freshest copy of `namespace/name`, or `None` if the cache has no such object.
    pub fn get(&self, namespace: &str, name: &str) -> Option<K> {
        let key = (namespace.to_owned(), name.to_owned());
        let reference = ObjectRef::new(name);
        // Cluster-scoped objects have no namespace (their requests carry an empty one).
        let reference = if namespace.is_empty() {
            reference
        } else {
            reference.within(namespace)
        };
        let cached = self.store.get(&reference);
        let mut written = self.written.lock();
        let Some(cached) = cached else {
            written.remove(&key);
            return None;
        };
        if let Some(ours) = written.get(&key) {
            let ours_newer = newer_resource_version(
                ours.resource_version().as_deref(),
                cached.resource_version().as_deref(),
            );
            if ours_newer == Some(true) && ours.uid() == cached.uid() {
                return Some(K::clone(ours));
            }
            written.remove(&key);
        }
        Some(K::clone(&cached))
    }

    /// Remembers what a write returned.
    pub fn remember(&self, obj: &K) {
        let key = (obj.namespace().unwrap_or_default(), obj.name_any());
        self.written.lock().insert(key, Arc::new(obj.clone()));
    }

    /// The cache itself.
    pub fn store(&self) -> &Store<K> {
        &self.store
    }
}
