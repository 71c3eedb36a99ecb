//! Step 4 of an XR reconcile: pick the CompositionRevision and check its pipeline.
//!
//! Follows crossplane/crossplane's `composite/api.go` (`APIRevisionFetcher.Fetch`),
//! `apis/apiextensions/v1/composition_revision.go` (`LatestRevision`) and the
//! `ValidPipeline` check in `composite/reconciler.go`.

use super::{Machinery, NameRef, matches_labels};
use crate::api::{
    Composition, CompositionRevision, LABEL_COMPOSITION_NAME, TYPE_VALID_PIPELINE, UpdatePolicy,
};

/// The revision an XR uses.
#[derive(Debug)]
pub struct RevisionPick<'a> {
    /// The revision.
    pub revision: &'a CompositionRevision,
    /// Whether the XR's `compositionRevisionRef` changed, which core writes with an Update
    /// and announces with `Selected composition revision: <name>`.
    pub update: bool,
}

/// Why an XR has no usable revision.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum RevisionError {
    /// A Manual XR names a revision that does not exist.
    #[error("cannot get CompositionRevision {0:?}")]
    NotFound(String),
    /// No revision controlled by the Composition matches (core:
    /// `no compatible CompositionRevisions found`).
    #[error("no compatible CompositionRevisions found")]
    NoCompatibleRevision,
    /// The revision's `ValidPipeline` condition is not True.
    #[error(
        "selected CompositionRevision {name} does not have a valid function pipeline: {message}"
    )]
    InvalidPipeline {
        /// The revision.
        name: String,
        /// The condition's message, or `pipeline status unknown`.
        message: String,
    },
}

/// Picks the revision of `composition` an XR uses, changing `machinery`'s
/// `compositionRevisionRef`, and checks that its pipeline is valid.
///
/// `revisions` is what a cached List of CompositionRevisions returns (any Composition's).
///
/// # Semantics
/// - A Manual XR that names a revision uses it (a Get), whatever is newer.
/// - Otherwise the revisions labelled with the Composition's name (and, for an Automatic XR
///   with a `compositionRevisionSelector`, its labels) and controlled by the Composition
///   are candidates; the highest `revision` wins. An XR that named another is moved to it.
///   An XR with no policy set counts as neither Manual nor Automatic here, as in core.
///
/// # Errors
/// [`RevisionError`] for a missing revision, none compatible, or an invalid pipeline.
pub fn fetch_revision<'a>(
    machinery: &mut Machinery,
    composition: &Composition,
    revisions: &'a [CompositionRevision],
) -> Result<RevisionPick<'a>, RevisionError> {
    let policy = machinery.composition_update_policy;
    let revision = match (&machinery.composition_revision_ref, policy) {
        (Some(current), Some(UpdatePolicy::Manual)) => revisions
            .iter()
            .find(|r| r.metadata.name.as_deref() == Some(current.name.as_str()))
            .ok_or_else(|| RevisionError::NotFound(current.name.clone()))?,
        _ => {
            let mut labels = match (&machinery.composition_revision_selector, policy) {
                (Some(selector), Some(UpdatePolicy::Automatic)) => selector.match_labels.clone(),
                _ => Default::default(),
            };
            let name = composition.metadata.name.clone().unwrap_or_default();
            labels.insert(LABEL_COMPOSITION_NAME.to_owned(), name);
            revisions
                .iter()
                .filter(|r| matches_labels(r.metadata.labels.as_ref(), &labels))
                .filter(|r| controlled_by(r, composition))
                .filter(|r| r.spec.revision > 0)
                .max_by_key(|r| r.spec.revision)
                .ok_or(RevisionError::NoCompatibleRevision)?
        }
    };

    let name = revision.metadata.name.clone().unwrap_or_default();
    let update = machinery
        .composition_revision_ref
        .as_ref()
        .is_none_or(|current| current.name != name);
    if update {
        machinery.composition_revision_ref = Some(NameRef { name: name.clone() });
    }

    if !revision.valid_pipeline() {
        let message = revision
            .status
            .as_ref()
            .and_then(|s| s.conditions.iter().find(|c| c.type_ == TYPE_VALID_PIPELINE))
            .and_then(|c| c.message.clone())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "pipeline status unknown".to_owned());
        return Err(RevisionError::InvalidPipeline { name, message });
    }
    Ok(RevisionPick { revision, update })
}

/// `metav1.IsControlledBy`: a controller owner reference with the owner's uid.
fn controlled_by(revision: &CompositionRevision, composition: &Composition) -> bool {
    let Some(uid) = composition.metadata.uid.as_deref() else {
        return false;
    };
    revision
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.controller == Some(true) && o.uid == uid)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::composite::LabelSelector;

    fn composition() -> Composition {
        serde_json::from_value(json!({
            "apiVersion": "apiextensions.crossplane.io/v1",
            "kind": "Composition",
            "metadata": {"name": "buckets", "uid": "comp-uid"},
            "spec": {
                "compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XBucket"},
                "pipeline": [{"step": "a", "functionRef": {"name": "f"}}],
            },
        }))
        .unwrap()
    }

    fn revision(
        name: &str,
        number: i64,
        owner: &str,
        valid: Option<bool>,
        labels: serde_json::Value,
    ) -> CompositionRevision {
        let mut labels = labels;
        labels[LABEL_COMPOSITION_NAME] = json!("buckets");
        let conditions = match valid {
            None => json!([]),
            Some(v) => json!([{"type": TYPE_VALID_PIPELINE, "status": if v {"True"} else {"False"},
                "reason": "x", "message": "function f is missing",
                "lastTransitionTime": "2026-01-01T00:00:00Z"}]),
        };
        serde_json::from_value(json!({
            "apiVersion": "apiextensions.crossplane.io/v1",
            "kind": "CompositionRevision",
            "metadata": {"name": name, "labels": labels, "ownerReferences": [{
                "apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition",
                "name": "buckets", "uid": owner, "controller": true,
            }]},
            "spec": {
                "compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XBucket"},
                "pipeline": [{"step": "a", "functionRef": {"name": "f"}}],
                "revision": number,
            },
            "status": {"conditions": conditions},
        }))
        .unwrap()
    }

    fn automatic() -> Machinery {
        Machinery {
            composition_ref: Some(NameRef {
                name: "buckets".into(),
            }),
            composition_update_policy: Some(UpdatePolicy::Automatic),
            ..Default::default()
        }
    }

    #[test]
    fn an_automatic_xr_moves_to_the_newest_revision_its_composition_controls() {
        let revisions = [
            revision("buckets-1", 1, "comp-uid", Some(true), json!({})),
            revision("buckets-3", 3, "comp-uid", Some(true), json!({})),
            revision("stranger-9", 9, "other-uid", Some(true), json!({})),
        ];
        let mut m = automatic();
        m.composition_revision_ref = Some(NameRef {
            name: "buckets-1".into(),
        });
        let pick = fetch_revision(&mut m, &composition(), &revisions).unwrap();
        assert_eq!(pick.revision.metadata.name.as_deref(), Some("buckets-3"));
        assert!(pick.update);
        assert_eq!(
            m.composition_revision_ref.as_ref().unwrap().name,
            "buckets-3"
        );
        // Once there, no more Updates.
        assert!(
            !fetch_revision(&mut m, &composition(), &revisions)
                .unwrap()
                .update
        );
    }

    #[test]
    fn a_manual_xr_stays_on_its_revision() {
        let revisions = [
            revision("buckets-1", 1, "comp-uid", Some(true), json!({})),
            revision("buckets-2", 2, "comp-uid", Some(true), json!({})),
        ];
        let mut m = automatic();
        m.composition_update_policy = Some(UpdatePolicy::Manual);
        m.composition_revision_ref = Some(NameRef {
            name: "buckets-1".into(),
        });
        let pick = fetch_revision(&mut m, &composition(), &revisions).unwrap();
        assert_eq!(pick.revision.spec.revision, 1);
        assert!(!pick.update);
        m.composition_revision_ref = Some(NameRef {
            name: "gone".into(),
        });
        assert_eq!(
            fetch_revision(&mut m, &composition(), &revisions).unwrap_err(),
            RevisionError::NotFound("gone".into())
        );
    }

    #[test]
    fn a_manual_xr_without_a_revision_gets_the_newest_once() {
        let revisions = [revision("buckets-2", 2, "comp-uid", Some(true), json!({}))];
        let mut m = automatic();
        m.composition_update_policy = Some(UpdatePolicy::Manual);
        assert!(
            fetch_revision(&mut m, &composition(), &revisions)
                .unwrap()
                .update
        );
    }

    #[test]
    fn an_automatic_xr_s_revision_selector_narrows_the_candidates() {
        let revisions = [
            revision(
                "buckets-1",
                1,
                "comp-uid",
                Some(true),
                json!({"channel": "stable"}),
            ),
            revision(
                "buckets-2",
                2,
                "comp-uid",
                Some(true),
                json!({"channel": "beta"}),
            ),
        ];
        let mut m = automatic();
        m.composition_revision_selector = Some(LabelSelector {
            match_labels: [("channel".to_owned(), "stable".to_owned())].into(),
        });
        let pick = fetch_revision(&mut m, &composition(), &revisions).unwrap();
        assert_eq!(pick.revision.spec.revision, 1);
    }

    #[test]
    fn no_controlled_revision_is_an_error() {
        let revisions = [revision(
            "stranger-1",
            1,
            "other-uid",
            Some(true),
            json!({}),
        )];
        assert_eq!(
            fetch_revision(&mut automatic(), &composition(), &revisions).unwrap_err(),
            RevisionError::NoCompatibleRevision
        );
    }

    #[test]
    fn a_revision_without_a_valid_pipeline_is_refused_with_its_message() {
        let invalid = [revision("buckets-1", 1, "comp-uid", Some(false), json!({}))];
        let error = fetch_revision(&mut automatic(), &composition(), &invalid).unwrap_err();
        assert_eq!(
            error.to_string(),
            "selected CompositionRevision buckets-1 does not have a valid function pipeline: function f is missing"
        );
        let unknown = [revision("buckets-1", 1, "comp-uid", None, json!({}))];
        let error = fetch_revision(&mut automatic(), &composition(), &unknown).unwrap_err();
        assert!(error.to_string().ends_with("pipeline status unknown"));
    }
}
