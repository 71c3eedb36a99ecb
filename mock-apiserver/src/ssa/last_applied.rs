//! kubectl's client-side-apply annotation as server-side apply treats it
//! (`managedfields/internal/lastappliedmanager.go` and `lastappliedupdater.go`): the
//! first `kubectl apply --server-side` over a client-side-applied object takes the fields
//! the annotation still describes without conflict, and every apply by `kubectl` keeps
//! the annotation up to date.

use serde_json::Value;

use super::set::FieldSet;
use super::shape::Shape;
use super::walk::{compare, to_field_set};

/// `kubectl.kubernetes.io/last-applied-configuration`.
const ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The only manager the annotation matters to.
pub const KUBECTL: &str = "kubectl";

/// The fields whose conflicts a `kubectl` apply may override: those the annotation on
/// `live` sets with the value they still have (`allowedConflictsFromLastApplied`).
/// `None` without a usable annotation.
pub fn allowed_conflicts(live: &Value, shape: Shape<'_>, api_version: &str) -> Option<FieldSet> {
    let text = live["metadata"]["annotations"][ANNOTATION].as_str()?;
    let last: Value = serde_json::from_str(text).ok()?;
    if last["apiVersion"].as_str() != Some(api_version) {
        return None;
    }
    let fields = to_field_set(&last, shape).ok()?;
    let comparison = compare(&last, live, shape).ok()?;
    Some(
        fields
            .difference(&comparison.modified)
            .difference(&comparison.added)
            .difference(&comparison.removed),
    )
}

/// Rewrites the annotation of `object`, when it has one, from the apply configuration
/// (`buildLastApplied`: the configuration without the annotation, as JSON with a final
/// line break).
pub fn update_annotation(object: &mut Value, config: &Value) {
    let has = object["metadata"]["annotations"]
        .get(ANNOTATION)
        .is_some_and(|v| v.as_str().is_some_and(|s| !s.is_empty()));
    if !has {
        return;
    }
    let mut config = config.clone();
    if let Some(annotations) = config
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(Value::as_object_mut)
    {
        annotations.remove(ANNOTATION);
    }
    let text = format!("{config}\n");
    object["metadata"]["annotations"][ANNOTATION] = Value::String(text);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_fields_the_annotation_still_matches_may_be_overridden() {
        let last = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}});
        let live = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "c", "annotations": {ANNOTATION: format!("{last}\n")}},
            "data": {"a": "1", "b": "changed"},
        });
        let allowed = allowed_conflicts(&live, Shape::Deduced, "v1").unwrap();
        let field = |a: &str, b: &str| {
            [
                super::super::path::PathElement::Field(a.into()),
                super::super::path::PathElement::Field(b.into()),
            ]
        };
        assert!(allowed.has(&field("data", "a")));
        assert!(!allowed.has(&field("data", "b")));
        assert!(allowed_conflicts(&live, Shape::Deduced, "v2").is_none());
    }

    #[test]
    fn the_annotation_follows_the_configuration_without_itself() {
        let mut object = json!({"metadata": {"annotations": {ANNOTATION: "{}\n", "x": "y"}}});
        let config = json!({"apiVersion": "v1", "metadata": {"annotations": {ANNOTATION: "old"}}});
        update_annotation(&mut object, &config);
        assert_eq!(
            object["metadata"]["annotations"][ANNOTATION],
            "{\"apiVersion\":\"v1\",\"metadata\":{\"annotations\":{}}}\n"
        );
        let mut plain = json!({"metadata": {}});
        update_annotation(&mut plain, &config);
        assert_eq!(plain, json!({"metadata": {}}));
    }
}
