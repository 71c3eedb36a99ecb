//! `Composition` and `CompositionRevision`, `apiextensions.crossplane.io/v1`: how an XR kind
//! is composed, and a numbered snapshot of that per change.
//!
//! Follows crossplane/crossplane's `apis/apiextensions/v1/composition_types.go`,
//! `composition_common.go` and `composition_revision_types.go`, Pipeline mode only (the only
//! mode v2 has). Step credentials and requirements are kept out: the reconciler here reads no
//! credential secrets and seeds no requirements.

use std::collections::BTreeSet;

use kube::CustomResource;
use serde::{Deserialize, Serialize};

use super::{ApiError, Function};

/// The label core puts on a revision naming its Composition (`LabelCompositionName`).
pub const LABEL_COMPOSITION_NAME: &str = "crossplane.io/composition-name";
/// The revision condition a usable pipeline has (`TypeValidPipeline`).
pub const TYPE_VALID_PIPELINE: &str = "ValidPipeline";

/// The specification of a Composition.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[kube(
    group = "apiextensions.crossplane.io",
    version = "v1",
    kind = "Composition",
    plural = "compositions",
    shortname = "comp",
    schema = "disabled"
)]
#[serde(rename_all = "camelCase")]
pub struct CompositionSpec {
    /// The XR kind this Composition composes.
    pub composite_type_ref: TypeReference,
    /// Pipeline, the default and the only mode.
    #[serde(default)]
    pub mode: CompositionMode,
    /// The functions to call, in order.
    #[serde(default)]
    pub pipeline: Vec<PipelineStep>,
}

/// A kind by `apiVersion` and `kind`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TypeReference {
    /// `group/version`.
    pub api_version: String,
    /// The kind.
    pub kind: String,
}

/// How a Composition composes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CompositionMode {
    /// A pipeline of functions.
    #[default]
    Pipeline,
    /// A mode from an older Crossplane (`Resources`), or anything else.
    #[serde(untagged)]
    Other(String),
}

/// One step of a pipeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PipelineStep {
    /// The step's name, unique in the pipeline.
    pub step: String,
    /// The function it calls.
    pub function_ref: FunctionReference,
    /// The function's input, any object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<serde_json::Value>,
}

/// A reference to a Function by name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionReference {
    /// The Function's name.
    pub name: String,
}

impl Composition {
    /// Checks the pipeline against the Functions there are: Pipeline mode, at least one step,
    /// unique step names, and every function present (core's revision controller sets
    /// `ValidPipeline=False` for a missing one).
    ///
    /// # Errors
    /// The first problem found.
    pub fn validate(&self, functions: &[Function]) -> Result<(), ApiError> {
        validate_spec(&self.name(), &self.spec, functions)
    }

    fn name(&self) -> String {
        self.metadata.name.clone().unwrap_or_default()
    }
}

fn validate_spec(
    composition: &str,
    spec: &CompositionSpec,
    functions: &[Function],
) -> Result<(), ApiError> {
    if let CompositionMode::Other(mode) = &spec.mode {
        return Err(ApiError::Mode {
            composition: composition.to_owned(),
            mode: mode.clone(),
        });
    }
    if spec.pipeline.is_empty() {
        return Err(ApiError::EmptyPipeline {
            composition: composition.to_owned(),
        });
    }
    let names: BTreeSet<&str> = functions
        .iter()
        .filter_map(|f| f.metadata.name.as_deref())
        .collect();
    let mut steps = BTreeSet::new();
    for step in &spec.pipeline {
        if !steps.insert(step.step.as_str()) {
            return Err(ApiError::DuplicateStep {
                composition: composition.to_owned(),
                step: step.step.clone(),
            });
        }
        if !names.contains(step.function_ref.name.as_str()) {
            return Err(ApiError::MissingFunction {
                composition: composition.to_owned(),
                step: step.step.clone(),
                function: step.function_ref.name.clone(),
            });
        }
    }
    Ok(())
}

/// The specification of a CompositionRevision: its Composition's spec when it was made, and
/// its number.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[kube(
    group = "apiextensions.crossplane.io",
    version = "v1",
    kind = "CompositionRevision",
    plural = "compositionrevisions",
    status = "CompositionRevisionStatus",
    schema = "disabled"
)]
#[serde(rename_all = "camelCase")]
pub struct CompositionRevisionSpec {
    /// The Composition's spec, copied.
    #[serde(flatten)]
    pub composition: CompositionSpec,
    /// The revision number, from 1, one more per change of the Composition.
    pub revision: i64,
}

/// A CompositionRevision's status.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompositionRevisionStatus {
    /// Its conditions (`ValidPipeline`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// A Crossplane condition (`apis/core/v2/condition.go`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// The condition's type, e.g. `Ready`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// A CamelCase reason.
    pub reason: String,
    /// A human message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When the status last changed, RFC 3339.
    pub last_transition_time: String,
    /// The generation it was observed at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

impl CompositionRevision {
    /// Whether the revision's pipeline is usable: `ValidPipeline` is True. Core's reconciler
    /// refuses any other and the XR backs off (`composite/reconciler.go`).
    #[must_use]
    pub fn valid_pipeline(&self) -> bool {
        self.status.as_ref().is_some_and(|status| {
            status
                .conditions
                .iter()
                .any(|c| c.type_ == TYPE_VALID_PIPELINE && c.status == "True")
        })
    }

    /// The name of the Composition this is a revision of, from its label.
    #[must_use]
    pub fn composition_name(&self) -> Option<&str> {
        self.metadata
            .labels
            .as_ref()?
            .get(LABEL_COMPOSITION_NAME)
            .map(String::as_str)
    }

    /// Checks the copied pipeline as [`Composition::validate`] does.
    ///
    /// # Errors
    /// The first problem found, naming the revision.
    pub fn validate(&self, functions: &[Function]) -> Result<(), ApiError> {
        validate_spec(
            self.metadata.name.as_deref().unwrap_or_default(),
            &self.spec.composition,
            functions,
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn composition(pipeline: serde_json::Value) -> Composition {
        serde_json::from_value(json!({
            "apiVersion": "apiextensions.crossplane.io/v1",
            "kind": "Composition",
            "metadata": {"name": "buckets"},
            "spec": {
                "compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XBucket"},
                "mode": "Pipeline",
                "pipeline": pipeline,
            },
        }))
        .unwrap()
    }

    fn function(name: &str) -> Function {
        serde_json::from_value(json!({
            "apiVersion": "pkg.crossplane.io/v1",
            "kind": "Function",
            "metadata": {"name": name},
            "spec": {"package": "xpkg.crossplane.io/example/function:v1"},
        }))
        .unwrap()
    }

    #[test]
    fn a_pipeline_whose_functions_exist_is_valid() {
        let c = composition(json!([
            {"step": "compose", "functionRef": {"name": "resources"}, "input": {"kind": "Resources"}},
            {"step": "label", "functionRef": {"name": "label"}},
        ]));
        c.validate(&[function("resources"), function("label")])
            .unwrap();
        assert_eq!(c.spec.pipeline[0].input, Some(json!({"kind": "Resources"})));
    }

    #[test]
    fn a_step_naming_a_missing_function_is_refused() {
        let c = composition(json!([{"step": "compose", "functionRef": {"name": "gone"}}]));
        let error = c.validate(&[function("resources")]).unwrap_err();
        assert_eq!(
            error.to_string(),
            r#"composition "buckets": step "compose" calls function "gone", which does not exist"#
        );
    }

    #[test]
    fn an_empty_pipeline_and_a_repeated_step_are_refused() {
        let empty = composition(json!([]));
        assert!(matches!(
            empty.validate(&[]),
            Err(ApiError::EmptyPipeline { .. })
        ));
        let twice = composition(json!([
            {"step": "a", "functionRef": {"name": "f"}},
            {"step": "a", "functionRef": {"name": "f"}},
        ]));
        assert!(matches!(
            twice.validate(&[function("f")]),
            Err(ApiError::DuplicateStep { .. })
        ));
    }

    #[test]
    fn a_mode_other_than_pipeline_is_refused() {
        let mut c = composition(json!([{"step": "a", "functionRef": {"name": "f"}}]));
        c.spec.mode = serde_json::from_value(json!("Resources")).unwrap();
        assert!(
            matches!(c.validate(&[function("f")]), Err(ApiError::Mode { ref mode, .. }) if mode == "Resources")
        );
    }

    #[test]
    fn a_revision_is_usable_only_when_its_pipeline_is_valid() {
        let mut revision: CompositionRevision = serde_json::from_value(json!({
            "apiVersion": "apiextensions.crossplane.io/v1",
            "kind": "CompositionRevision",
            "metadata": {"name": "buckets-1a2b3c", "labels": {LABEL_COMPOSITION_NAME: "buckets"}},
            "spec": {
                "compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XBucket"},
                "pipeline": [{"step": "a", "functionRef": {"name": "f"}}],
                "revision": 3,
            },
        }))
        .unwrap();
        assert_eq!(revision.spec.revision, 3);
        assert_eq!(revision.composition_name(), Some("buckets"));
        assert!(!revision.valid_pipeline());
        revision.status = Some(CompositionRevisionStatus {
            conditions: vec![Condition {
                type_: TYPE_VALID_PIPELINE.into(),
                status: "True".into(),
                reason: "ValidPipeline".into(),
                message: None,
                last_transition_time: "2026-01-01T00:00:00Z".into(),
                observed_generation: None,
            }],
        });
        assert!(revision.valid_pipeline());
        revision.validate(&[function("f")]).unwrap();
    }
}
