//! The composite reconciler's steps that need no API server: reading an XR's
//! `spec.crossplane`, selecting its Composition, and picking its CompositionRevision.
//!
//! Each step is a pure function of the objects a cached read would return; it changes the
//! XR's [`Machinery`] in place and says whether core would send an XR Update for it, so the
//! reconciler that calls it (and a budget that counts its writes) knows the cost.

mod machinery;
mod revision;
mod select;

pub use machinery::{LabelSelector, Machinery, NameRef, ResourceRef};
pub use revision::{RevisionError, RevisionPick, fetch_revision};
pub use select::{SelectError, Selection, select_composition};

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
