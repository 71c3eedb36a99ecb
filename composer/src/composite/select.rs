//! Step 3 of an XR reconcile: select the Composition.
//!
//! Follows crossplane/crossplane's `internal/controller/apiextensions/composite/api.go`: the
//! chain core's definition controller builds (`definition/reconciler.go`), in its order:
//! `EnforcedCompositionSelector`, `APIDefaultCompositionSelector`,
//! `APILabelSelectorResolver`.

use std::collections::BTreeMap;

use super::{Machinery, NameRef, matches_labels};
use crate::api::{CompositeResourceDefinition, Composition};

/// What selecting the Composition did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// Whether core sends an XR Update now (the enforced or label selectors changed the
    /// reference; the default selector only sets it, and a later Update carries it).
    pub update: bool,
    /// Normal events with reason `CompositionSelection`, in order.
    pub events: Vec<&'static str>,
}

/// Why no Composition could be selected.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// No Composition composes the XR's kind with the selector's labels (core:
    /// `no compatible Compositions found`).
    #[error("no compatible Compositions found")]
    NoCompatibleComposition,
}

/// Selects the Composition of an XR of `api_version` and `kind`, changing `machinery`.
///
/// `pick` chooses among the compatible candidates (sorted by name) when a label selector
/// matches more than one; core picks at random.
///
/// # Semantics
/// - An XRD's `enforcedCompositionRef` replaces any other reference (an Update and an
///   event, unless already in place).
/// - With neither a reference nor a selector, the XRD's `defaultCompositionRef` is set
///   (an event, no Update).
/// - With no reference yet, Compositions whose labels match the selector (every one when
///   there is none) and whose `compositeTypeRef` is the XR's kind are candidates; none is
///   an error, one chosen is an Update.
///
/// # Errors
/// [`SelectError::NoCompatibleComposition`].
pub fn select_composition(
    api_version: &str,
    kind: &str,
    machinery: &mut Machinery,
    xrd: &CompositeResourceDefinition,
    compositions: &[Composition],
    pick: impl FnOnce(usize) -> usize,
) -> Result<Selection, SelectError> {
    let mut selection = Selection::default();

    if let Some(enforced) = &xrd.spec.enforced_composition_ref
        && machinery.composition_ref.as_ref().map(|r| &r.name) != Some(&enforced.name)
    {
        machinery.composition_ref = Some(NameRef {
            name: enforced.name.clone(),
        });
        selection
            .events
            .push("Enforced composition has been selected");
        selection.update = true;
    }

    if machinery.composition_ref.is_none()
        && machinery.composition_selector.is_none()
        && let Some(default) = &xrd.spec.default_composition_ref
    {
        machinery.composition_ref = Some(NameRef {
            name: default.name.clone(),
        });
        selection
            .events
            .push("Default composition has been selected");
    }

    if machinery.composition_ref.is_none() {
        let empty = BTreeMap::new();
        let labels = machinery
            .composition_selector
            .as_ref()
            .map_or(&empty, |s| &s.match_labels);
        let mut candidates: Vec<&str> = compositions
            .iter()
            .filter(|c| matches_labels(c.metadata.labels.as_ref(), labels))
            .filter(|c| {
                c.spec.composite_type_ref.api_version == api_version
                    && c.spec.composite_type_ref.kind == kind
            })
            .filter_map(|c| c.metadata.name.as_deref())
            .collect();
        if candidates.is_empty() {
            return Err(SelectError::NoCompatibleComposition);
        }
        candidates.sort_unstable();
        let chosen = candidates[pick(candidates.len()) % candidates.len()];
        machinery.composition_ref = Some(NameRef {
            name: chosen.to_owned(),
        });
        selection.update = true;
    }
    Ok(selection)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::composite::LabelSelector;

    fn xrd(extra: serde_json::Value) -> CompositeResourceDefinition {
        let mut spec = json!({
            "group": "example.org",
            "names": {"kind": "XBucket", "plural": "xbuckets"},
            "versions": [{"name": "v1", "referenceable": true, "served": true}],
        });
        spec.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        serde_json::from_value(json!({
            "apiVersion": "apiextensions.crossplane.io/v2",
            "kind": "CompositeResourceDefinition",
            "metadata": {"name": "xbuckets.example.org"},
            "spec": spec,
        }))
        .unwrap()
    }

    fn composition(name: &str, kind: &str, labels: serde_json::Value) -> Composition {
        serde_json::from_value(json!({
            "apiVersion": "apiextensions.crossplane.io/v1",
            "kind": "Composition",
            "metadata": {"name": name, "labels": labels},
            "spec": {
                "compositeTypeRef": {"apiVersion": "example.org/v1", "kind": kind},
                "pipeline": [{"step": "a", "functionRef": {"name": "f"}}],
            },
        }))
        .unwrap()
    }

    fn select(
        machinery: &mut Machinery,
        xrd: &CompositeResourceDefinition,
        compositions: &[Composition],
    ) -> Result<Selection, SelectError> {
        select_composition(
            "example.org/v1",
            "XBucket",
            machinery,
            xrd,
            compositions,
            |_| 0,
        )
    }

    #[test]
    fn an_xr_with_a_reference_keeps_it_and_costs_nothing() {
        let mut m = Machinery {
            composition_ref: Some(NameRef {
                name: "mine".into(),
            }),
            ..Default::default()
        };
        assert_eq!(
            select(&mut m, &xrd(json!({})), &[]),
            Ok(Selection::default())
        );
        assert_eq!(m.composition_ref.unwrap().name, "mine");
    }

    #[test]
    fn the_enforced_composition_replaces_the_xr_s_with_an_update() {
        let mut m = Machinery {
            composition_ref: Some(NameRef {
                name: "mine".into(),
            }),
            ..Default::default()
        };
        let x = xrd(json!({"enforcedCompositionRef": {"name": "enforced"}}));
        let s = select(&mut m, &x, &[]).unwrap();
        assert!(s.update);
        assert_eq!(s.events, ["Enforced composition has been selected"]);
        assert_eq!(m.composition_ref.as_ref().unwrap().name, "enforced");
        // Already in place: nothing more.
        assert_eq!(select(&mut m, &x, &[]), Ok(Selection::default()));
    }

    #[test]
    fn the_default_composition_is_set_without_an_update() {
        let mut m = Machinery::default();
        let s = select(
            &mut m,
            &xrd(json!({"defaultCompositionRef": {"name": "dflt"}})),
            &[],
        )
        .unwrap();
        assert!(!s.update);
        assert_eq!(s.events, ["Default composition has been selected"]);
        assert_eq!(m.composition_ref.unwrap().name, "dflt");
    }

    #[test]
    fn a_selector_picks_among_compatible_compositions_with_matching_labels() {
        let compositions = [
            composition("a", "XBucket", json!({"tier": "gold"})),
            composition("b", "XBucket", json!({"tier": "silver"})),
            composition("c", "XQueue", json!({"tier": "gold"})),
            composition("d", "XBucket", json!({"tier": "gold", "zone": "1"})),
        ];
        let mut m = Machinery {
            composition_selector: Some(LabelSelector {
                match_labels: [("tier".to_owned(), "gold".to_owned())].into(),
            }),
            ..Default::default()
        };
        let mut seen = 0;
        let s = select_composition(
            "example.org/v1",
            "XBucket",
            &mut m,
            &xrd(json!({})),
            &compositions,
            |n| {
                seen = n;
                1
            },
        )
        .unwrap();
        assert_eq!(seen, 2, "a and d are the candidates");
        assert!(s.update && s.events.is_empty());
        assert_eq!(m.composition_ref.unwrap().name, "d");
    }

    #[test]
    fn an_xr_without_a_compatible_composition_is_an_error() {
        let mut m = Machinery::default();
        let error = select(
            &mut m,
            &xrd(json!({})),
            &[composition("q", "XQueue", json!({}))],
        )
        .unwrap_err();
        assert_eq!(error.to_string(), "no compatible Compositions found");
        assert!(m.composition_ref.is_none());
    }
}
