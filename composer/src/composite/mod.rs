//! The composite reconciler's steps that need no API server: reading an XR's
//! `spec.crossplane`, selecting its Composition, picking its CompositionRevision, rendering a desired composed
//! resource's metadata, the field managers of its applies, its `Synced` and `Ready` conditions, and its requeue.
//!
//! Each step is a pure function of the objects a cached read would return; it changes the
//! XR's [`Machinery`] in place and says whether core would send an XR Update for it, so the
//! reconciler that calls it (and a budget that counts its writes) knows the cost.

mod child_name;
mod compose;
mod conditions;
mod controller;
mod events;
mod field_owner;
mod machinery;
mod outcome;
mod realtime;
mod reconcile;
mod render;
mod requeue;
mod revision;
mod revisions;
mod select;
mod watch;

pub use child_name::child_name;
pub use compose::{ComposeError, Composed, Composer};
pub use conditions::{deleting, mark, reconcile_error, reconcile_success, responsive_condition};
pub use controller::{
    DEFAULT_MAX_CONCURRENT_RECONCILES, XrdController, XrdSettings, start, start_xrd, xr_queue,
};
pub use events::{
    REASON_COMPOSE, REASON_COMPOSITION_SELECTION, REASON_DELETE, REASON_INIT,
    REASON_RECONCILE_REQUEST_HANDLED, REASON_SELECT_COMPOSITION, REPORTING_CONTROLLER, Recorded,
    Recorder,
};
pub use field_owner::{FIELD_OWNER_COMPOSED_PREFIX, FIELD_OWNER_XR, composed_field_owner};
pub use machinery::{LabelSelector, Machinery, NameRef, ResourceRef};
pub use outcome::{ComposedState, Outcome, XrCondition, outcome, stable_n_and_some_more};
pub use realtime::Realtime;
pub use reconcile::{
    FINALIZER, RECONCILE_TIMEOUT, ReconcileError, Reconciler, UPDATE_TIMEOUT, error_message,
};
pub use render::{
    ANNOTATION_COMPOSITION_RESOURCE_NAME, LABEL_COMPOSITE, RenderError, render_composed,
};
pub use requeue::{RECONCILE_REQUESTED_AT_ANNOTATION, Requeue, RequeueSettings, jitter, requeue};
pub use revision::{RevisionError, RevisionPick, fetch_revision};
pub use revisions::{
    LABEL_COMPOSITION_HASH, RevisionChange, composition_hash, new_revision, reconcile_composition,
    run_revision_controllers, validate_revision,
};
pub use select::{SelectError, Selection, select_composition};
pub use watch::{
    Cache, Cached, LOW_PRIORITY, Watched, composition_resource, resync_period, revision_resource,
    watch, watch_cached, watch_compositions, watch_into, watch_revisions, watch_revisions_cached,
    watch_revisions_with_resync, watch_with_resync,
};

use std::collections::BTreeMap;

/// Whether `labels` has every `match_labels` entry (a `MatchingLabels` list filter).
#[must_use]
pub fn matches_labels(
    labels: Option<&BTreeMap<String, String>>,
    match_labels: &BTreeMap<String, String>,
) -> bool {
    match_labels
        .iter()
        .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
}
