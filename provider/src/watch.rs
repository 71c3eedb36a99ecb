//! kube's watcher and reflector feeding our own work queue, through crossplane-runtime's
//! event filter (`resource.DesiredStateChanged()`).

use std::collections::{BTreeMap, HashMap, HashSet};

use futures::StreamExt;
use kube::api::Api;
use kube::runtime::reflector::store::Writer;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use limiter::controller::Request;
use limiter::workqueue::{AddOpts, WorkQueue};
use serde::de::DeserializeOwned;

use crate::crd::{CREATE_FAILED_ANNOTATION, CREATE_PENDING_ANNOTATION};

/// Priority of the events of an initial list (controller-runtime's `LowPriority`).
const INITIAL_LIST_PRIORITY: i64 = -100;

/// What the event filter compares: generation, labels, and annotations without the two keys
/// crossplane-runtime ignores (`external-create-pending`, `external-create-failed`), plus
/// whether deletion started. (A real API server bumps `metadata.generation` when it sets
/// `deletionTimestamp`, which is how crossplane-runtime's filter passes the first deletion;
/// comparing the deletion state directly gives the same result on servers that do not.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    uid: Option<String>,
    generation: Option<i64>,
    deleting: bool,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
}

impl Fingerprint {
    /// The fingerprint of `obj`.
    pub fn of<K: Resource>(obj: &K) -> Self {
        let mut annotations = obj.annotations().clone();
        annotations.remove(CREATE_PENDING_ANNOTATION);
        annotations.remove(CREATE_FAILED_ANNOTATION);
        Fingerprint {
            uid: obj.meta().uid.clone(),
            generation: obj.meta().generation,
            deleting: obj.meta().deletion_timestamp.is_some(),
            labels: obj.labels().clone(),
            annotations,
        }
    }
}

/// crossplane-runtime's `DesiredStateChanged` predicate, per object: the first sight of an
/// object passes (a create, or the initial list), an update passes if its fingerprint
/// changed, a delete always passes. Status-only, finalizer-only, pending- and failed-stamp
/// writes do not pass, and neither do relists of unchanged objects.
#[derive(Debug, Default)]
pub struct EventFilter {
    seen: HashMap<Request, Fingerprint>,
}

impl EventFilter {
    /// Whether an applied object passes; remembers it.
    pub fn applied<K: Resource>(&mut self, obj: &K) -> bool {
        let key = request_of(obj);
        let fingerprint = Fingerprint::of(obj);
        let changed = self.seen.get(&key) != Some(&fingerprint);
        if changed {
            self.seen.insert(key, fingerprint);
        }
        changed
    }

    /// Forgets a deleted object (a delete always passes).
    pub fn deleted(&mut self, key: &Request) {
        self.seen.remove(key);
    }

    /// The objects remembered but absent from a completed relist: they were deleted while
    /// the watch was down. They are forgotten and returned.
    pub fn missing_after_relist(&mut self, listed: &HashSet<Request>) -> Vec<Request> {
        let gone: Vec<Request> = self
            .seen
            .keys()
            .filter(|k| !listed.contains(k))
            .cloned()
            .collect();
        for k in &gone {
            self.seen.remove(k);
        }
        gone
    }
}

/// The request for an object.
pub fn request_of<K: Resource>(obj: &K) -> Request {
    Request::new(obj.namespace().unwrap_or_default(), obj.name_any())
}

/// A kind the provider watches into a reflector's cache.
pub trait Watched:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug + Send + Sync + 'static
{
}

impl<K> Watched for K where
    K: Resource<DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static
{
}

/// The watch of `api`, reflected into `writer`, retried with kube's default backoff.
fn reflected<K: Watched>(
    api: Api<K>,
    writer: Writer<K>,
) -> impl futures::Stream<Item = Result<watcher::Event<K>, watcher::Error>> {
    watcher(api, watcher::Config::default())
        .default_backoff()
        .reflect(writer)
}

/// Watches `api` into `writer` (the reconciler's cache) and adds every passing event to
/// `queue`. Objects of an initial list are added once the list is complete and in the
/// cache, with low priority. Runs until aborted.
pub async fn feed_queue<K>(
    api: Api<K>,
    writer: Writer<K>,
    queue: WorkQueue<Request>,
    kind: &'static str,
) where
    K: Watched,
{
    let mut filter = EventFilter::default();
    let mut listing: Option<(HashSet<Request>, Vec<Request>)> = None;
    let stream = reflected(api, writer);
    futures::pin_mut!(stream);
    while let Some(event) = stream.next().await {
        match event {
            Ok(watcher::Event::Init) => listing = Some((HashSet::new(), Vec::new())),
            Ok(watcher::Event::InitApply(obj)) => {
                let key = request_of(&obj);
                let passes = filter.applied(&obj);
                if let Some((listed, pass)) = listing.as_mut() {
                    listed.insert(key.clone());
                    if passes {
                        pass.push(key);
                    }
                }
            }
            Ok(watcher::Event::InitDone) => {
                let Some((listed, pass)) = listing.take() else {
                    continue;
                };
                tracing::debug!(
                    kind,
                    objects = listed.len(),
                    passing = pass.len(),
                    "initial list complete"
                );
                for key in filter.missing_after_relist(&listed) {
                    queue.add(key);
                }
                for key in pass {
                    queue.add_with_opts(
                        AddOpts::default().with_priority(INITIAL_LIST_PRIORITY),
                        key,
                    );
                }
            }
            Ok(watcher::Event::Apply(obj)) => {
                if filter.applied(&obj) {
                    queue.add(request_of(&obj));
                }
            }
            Ok(watcher::Event::Delete(obj)) => {
                let key = request_of(&obj);
                filter.deleted(&key);
                queue.add(key);
            }
            Err(error) => tracing::warn!(kind, %error, "watch failed; retrying with backoff"),
        }
    }
}

/// Watches `api` into `writer` only (ProviderConfigs, Secrets). Runs until aborted.
pub async fn reflect_only<K>(api: Api<K>, writer: Writer<K>, kind: &'static str)
where
    K: Watched,
{
    let stream = reflected(api, writer);
    futures::pin_mut!(stream);
    while let Some(event) = stream.next().await {
        if let Err(error) = event {
            tracing::warn!(kind, %error, "watch failed; retrying with backoff");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::{Bucket, BucketSpec, FINALIZER};

    fn bucket() -> Bucket {
        let mut b = Bucket::new("b", BucketSpec::in_region("eu"));
        b.metadata.namespace = Some("default".into());
        b.metadata.generation = Some(1);
        b
    }

    #[test]
    fn status_finalizer_and_pending_writes_do_not_pass_but_spec_and_annotations_do() {
        let mut filter = EventFilter::default();
        let mut b = bucket();
        assert!(filter.applied(&b), "first sight passes");
        assert!(!filter.applied(&b), "an unchanged relist does not");
        b.status = Some(crate::crd::ManagedStatus::default());
        b.metadata.finalizers = Some(vec![FINALIZER.into()]);
        b.annotations_mut()
            .insert(CREATE_PENDING_ANNOTATION.into(), "t".into());
        b.annotations_mut()
            .insert(CREATE_FAILED_ANNOTATION.into(), "t".into());
        assert!(!filter.applied(&b));
        b.annotations_mut()
            .insert("crossplane.io/reconcile-requested-at".into(), "1".into());
        assert!(filter.applied(&b));
        b.metadata.generation = Some(2);
        assert!(filter.applied(&b));
        b.labels_mut().insert("team".into(), "a".into());
        assert!(filter.applied(&b));
    }

    #[test]
    fn objects_missing_from_a_relist_count_as_deleted() {
        let mut filter = EventFilter::default();
        filter.applied(&bucket());
        let gone = filter.missing_after_relist(&HashSet::new());
        assert_eq!(gone, vec![Request::new("default", "b")]);
    }
}
