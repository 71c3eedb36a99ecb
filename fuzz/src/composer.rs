//! The `composer_inputs` target: what composer reads from outside. The same bytes go to
//! every reader:
//! - as a `RunFunctionResponse` (a function's answer, `composer::function::decode_response`,
//!   the decoder the gRPC client's codec runs), then through a two-step pipeline
//!   (`function::pipeline::run`) that gets that answer from both steps, then each desired
//!   composed resource converted to JSON and rendered for an XR (`render_composed`);
//! - as text, in JSON and in YAML: a `CompositeResourceDefinition` (validated, then its XR
//!   CRD generated), a `Composition` (validated against known Functions) and a `Function`
//!   (its endpoint).
//!
//! Input: bytes (protobuf or text).
//!
//! Asserts: no panic; a decoded response encodes to bytes that decode to the same message;
//! the pipeline fails only for a FATAL result, keeps the smallest non-zero TTL and the last
//! step's desired state; a rendered resource carries the XR's label, the resource's name
//! annotation and one controller reference to the XR, and rendering fails only for a
//! metadata that is not an object or another controller; an XRD that validates generates
//! its CRD named `plural.group`; a Composition that validates has steps, each named once,
//! each calling a known Function; every refusal names its object.

use std::collections::HashSet;
use std::time::Duration;

use composer::api::{CompositeResourceDefinition, Composition, Function, FunctionSpec};
use composer::composite::{
    ANNOTATION_COMPOSITION_RESOURCE_NAME, LABEL_COMPOSITE, RenderError, render_composed,
};
use composer::function::pipeline::{self, PipelineError, Step};
use composer::function::proto::{RunFunctionRequest, RunFunctionResponse, Severity, State};
use composer::function::value::from_struct;
use composer::function::{FunctionRunner, RunFuture, decode_response};
use composer::xcrd::for_composite_resource;
use prost::Message as _;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The Functions a fuzzed Composition may call.
const FUNCTIONS: [&str; 2] = ["resources", "label"];

/// Runs one input.
///
/// # Panics
/// When a reader breaks a promise (see the module's docs).
pub fn check(data: &[u8]) {
    if let Ok(response) = decode_response(data) {
        response_holds(&response);
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for xrd in parsed::<CompositeResourceDefinition>(text) {
        xrd_holds(&xrd);
    }
    for composition in parsed::<Composition>(text) {
        composition_holds(&composition);
    }
    for function in parsed::<Function>(text) {
        let _ = function.endpoint();
    }
}

/// `text` read as JSON and as YAML, each when it reads.
fn parsed<T: DeserializeOwned>(text: &str) -> Vec<T> {
    let json = serde_json::from_str::<T>(text).ok();
    let yaml = serde_saphyr::from_str::<T>(text).ok();
    json.into_iter().chain(yaml).collect()
}

/// Answers every call with the same response.
struct Answer(RunFunctionResponse);

impl FunctionRunner for Answer {
    fn run<'a>(
        &'a self,
        _name: &'a str,
        _request: RunFunctionRequest,
        _deadline: tokio::time::Instant,
    ) -> RunFuture<'a> {
        let response = self.0.clone();
        Box::pin(async move { Ok(response) })
    }
}

fn response_holds(response: &RunFunctionResponse) {
    let bytes = response.encode_to_vec();
    let again = decode_response(&bytes).expect("an encoded response decodes");
    assert_eq!(
        again.encode_to_vec(),
        bytes,
        "a response changes through encode and decode"
    );

    let steps = [Step::new("one", "f", None), Step::new("two", "f", None)];
    let runner = Answer(response.clone());
    let outcome = crate::runtime().block_on(async {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        pipeline::run(
            &runner,
            &steps,
            State::default(),
            State::default(),
            deadline,
        )
        .await
    });
    let fatal = response
        .results
        .iter()
        .any(|r| r.severity() == Severity::Fatal);
    match outcome {
        Err(PipelineError::Fatal { step, .. }) => {
            assert!(fatal, "a pipeline failed with no FATAL result");
            assert_eq!(step, "one", "the first FATAL result stops the pipeline");
        }
        Err(PipelineError::Call { .. }) => panic!("the runner answered, yet the call failed"),
        Ok(outcome) => {
            assert!(!fatal, "a FATAL result did not stop the pipeline");
            let ttl = response
                .meta
                .as_ref()
                .and_then(|m| m.ttl)
                .and_then(|d| Duration::try_from(d).ok())
                .filter(|d| !d.is_zero());
            assert_eq!(outcome.ttl, ttl, "the pipeline's TTL");
            assert_eq!(
                outcome.desired,
                response.desired.clone().unwrap_or_default(),
                "the last step's desired state"
            );
            assert_eq!(outcome.conditions.len(), 2 * response.conditions.len());
        }
    }

    let xr = json!({
        "apiVersion": "example.org/v1", "kind": "XWidget",
        "metadata": {"name": "xr-0", "namespace": "default", "uid": "xr-uid",
                     "labels": {LABEL_COMPOSITE: "xr-0"}},
    });
    let desired = response.desired.clone().unwrap_or_default();
    for (name, resource) in &desired.resources {
        let _ = resource.ready();
        let object = Value::Object(
            resource
                .resource
                .as_ref()
                .map(from_struct)
                .unwrap_or_default(),
        );
        render_holds(name, &object, &xr);
    }
    if let Some(composite) = desired.composite.as_ref().and_then(|c| c.resource.as_ref()) {
        let _ = from_struct(composite);
    }
    if let Some(context) = &response.context {
        let _ = from_struct(context);
    }
}

fn render_holds(name: &str, desired: &Value, xr: &Value) {
    match render_composed(name, desired, None, xr) {
        Ok(rendered) => {
            let metadata = &rendered["metadata"];
            assert_eq!(metadata["labels"][LABEL_COMPOSITE], "xr-0", "{rendered}");
            assert_eq!(metadata["namespace"], "default", "{rendered}");
            if !name.is_empty() {
                assert_eq!(
                    metadata["annotations"][ANNOTATION_COMPOSITION_RESOURCE_NAME], name,
                    "{rendered}"
                );
            }
            let owners = metadata["ownerReferences"]
                .as_array()
                .expect("rendered owner references are a list");
            let controllers: Vec<&Value> = owners
                .iter()
                .filter(|o| o["controller"] == json!(true))
                .collect();
            assert_eq!(controllers.len(), 1, "one controller: {rendered}");
            assert_eq!(controllers[0]["uid"], "xr-uid", "{rendered}");
        }
        Err(RenderError::NotAnObject(n)) => {
            assert_eq!(n, name);
            let metadata = &desired["metadata"];
            let broken = !(metadata.is_null() || metadata.is_object())
                || !(metadata["ownerReferences"].is_null()
                    || metadata["ownerReferences"].is_array());
            assert!(broken, "refused as not an object: {desired}");
        }
        Err(RenderError::NoCompositeLabel) => panic!("the XR is labelled"),
        Err(RenderError::ControlledByOther { resource, .. }) => {
            assert_eq!(resource, name);
            let other = desired["metadata"]["ownerReferences"]
                .as_array()
                .is_some_and(|o| {
                    o.iter()
                        .any(|o| o["controller"] == json!(true) && o["uid"] != "xr-uid")
                });
            assert!(other, "refused for another controller: {desired}");
        }
    }
}

fn xrd_holds(xrd: &CompositeResourceDefinition) {
    let name = xrd.metadata.name.clone().unwrap_or_default();
    match xrd.validate() {
        Ok(()) => {
            assert!(xrd.referenceable_version().is_some());
            let crd = for_composite_resource(xrd)
                .unwrap_or_else(|e| panic!("a valid XRD generates no CRD: {e}"));
            assert_eq!(
                crd.metadata.name.as_deref(),
                Some(format!("{}.{}", xrd.spec.names.plural, xrd.spec.group).as_str())
            );
        }
        Err(error) => {
            let message = error.to_string();
            assert!(message.contains(&format!("{name:?}")), "{message}");
        }
    }
}

fn composition_holds(composition: &Composition) {
    let name = composition.metadata.name.clone().unwrap_or_default();
    let functions: Vec<Function> = FUNCTIONS
        .iter()
        .map(|f| {
            Function::new(
                f,
                FunctionSpec {
                    package: String::new(),
                },
            )
        })
        .collect();
    match composition.validate(&functions) {
        Ok(()) => {
            let pipeline = &composition.spec.pipeline;
            assert!(!pipeline.is_empty(), "a valid Composition has steps");
            let mut seen = HashSet::new();
            for step in pipeline {
                assert!(seen.insert(&step.step), "step {:?} twice", step.step);
                assert!(FUNCTIONS.contains(&step.function_ref.name.as_str()));
            }
        }
        Err(error) => {
            let message = error.to_string();
            assert!(message.contains(&format!("{name:?}")), "{message}");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn seed(name: &str) -> Vec<u8> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        std::fs::read(root.join("composer/tests/fuzz-seeds").join(name)).unwrap()
    }

    fn text(name: &str) -> String {
        String::from_utf8(seed(name)).unwrap()
    }

    #[test]
    fn the_manifest_seeds_reach_their_readers() {
        let xrds = parsed::<CompositeResourceDefinition>(&text("xrd.yaml"));
        assert_eq!(xrds.len(), 1, "YAML only");
        assert!(xrds[0].validate().is_ok());
        let cluster = parsed::<CompositeResourceDefinition>(&text("xrd-cluster.json"));
        assert_eq!(cluster.len(), 2, "JSON is YAML too");
        assert!(cluster[0].validate().is_ok());
        let two = parsed::<CompositeResourceDefinition>(&text("xrd-two-referenceable.yaml"));
        assert!(two[0].validate().is_err());
        let compositions = parsed::<Composition>(&text("composition.yaml"));
        assert_eq!(compositions[0].spec.pipeline.len(), 2);
        let bad = parsed::<Composition>(&text("composition-bad.json"));
        assert_eq!(bad.len(), 2);
        let functions = parsed::<Function>(&text("function.yaml"));
        assert!(functions[0].endpoint().is_ok());
    }

    #[test]
    fn the_response_seeds_decode_with_what_the_target_checks() {
        let resources = decode_response(&seed("response-resources.pb")).unwrap();
        assert_eq!(resources.desired.unwrap().resources.len(), 2);
        let other = decode_response(&seed("response-other-controller.pb")).unwrap();
        let x = &other.desired.unwrap().resources["x"];
        let object = Value::Object(from_struct(x.resource.as_ref().unwrap()));
        let refused = render_composed(
            "x",
            &object,
            None,
            &json!({"metadata": {"labels": {LABEL_COMPOSITE: "a"}, "uid": "b"}}),
        );
        assert!(matches!(
            refused,
            Err(RenderError::ControlledByOther { .. })
        ));
        let every = decode_response(&seed("response-every-field.pb")).unwrap();
        assert!(
            every
                .results
                .iter()
                .any(|r| r.severity() == Severity::Fatal)
        );
        for name in [
            "response-resources.pb",
            "response-other-controller.pb",
            "response-bad-metadata.pb",
            "response-every-field.pb",
        ] {
            check(&seed(name));
        }
    }

    #[test]
    fn a_refusal_passes_only_with_its_cause() {
        // Owner references that are not a list: refused as not an object, which holds.
        let desired = json!({"metadata": {"ownerReferences": "not a list"}});
        render_holds(
            "r",
            &desired,
            &json!({"metadata": {"labels": {LABEL_COMPOSITE: "xr-0"}, "namespace": "default", "uid": "xr-uid"}}),
        );
        // An unlabelled XR: a refusal the target never expects, so the check panics.
        let outcome = std::panic::catch_unwind(|| {
            render_holds("r", &json!({}), &json!({"metadata": {"uid": "xr-uid"}}));
        });
        assert!(
            outcome.is_err(),
            "an unlabelled XR breaks the target's assumption"
        );
    }
}
