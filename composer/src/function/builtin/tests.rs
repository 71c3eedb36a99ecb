use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::*;
use crate::function::proto::{Ready, Resource, ResponseMeta, Severity, State};
use crate::function::value::{from_struct, to_struct};

fn object(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn resource(v: Value) -> Resource {
    Resource {
        resource: Some(to_struct(&object(v))),
        ..Default::default()
    }
}

fn input() -> Value {
    json!({
        "apiVersion": API_VERSION,
        "kind": KIND,
        "ttl": "30s",
        "resources": [{
            "name": "bucket",
            "count": 2,
            "base": {"apiVersion": "s3.aws.upbound.io/v1beta1", "kind": "Bucket", "spec": {"forProvider": {}}},
            "patches": [
                {"fromFieldPath": "spec.region", "toFieldPath": "spec.forProvider.region"},
                {"fromFieldPath": "spec.absent", "toFieldPath": "spec.forProvider.absent"},
            ],
        }],
    })
}

fn request(input: Value) -> RunFunctionRequest {
    RunFunctionRequest {
        meta: Some(crate::function::proto::RequestMeta {
            tag: "tag-1".into(),
            capabilities: vec![],
        }),
        observed: Some(State {
            composite: Some(resource(
                json!({"apiVersion": "example.org/v1", "kind": "XBucket", "spec": {"region": "eu-west-1"}}),
            )),
            resources: BTreeMap::from([(
                "bucket-0".to_owned(),
                resource(json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}})),
            )]),
        }),
        desired: Some(State {
            composite: None,
            resources: BTreeMap::from([("earlier".to_owned(), resource(json!({"kind": "Kept"})))]),
        }),
        input: Some(to_struct(&object(input))),
        ..Default::default()
    }
}

fn desired(response: &RunFunctionResponse, name: &str) -> (Value, Ready) {
    let r = &response.desired.as_ref().unwrap().resources[name];
    (
        Value::Object(from_struct(r.resource.as_ref().unwrap())),
        r.ready(),
    )
}

fn fatal_message(response: &RunFunctionResponse) -> &str {
    let [result] = response.results.as_slice() else {
        panic!("one result expected: {response:?}")
    };
    assert_eq!(result.severity(), Severity::Fatal);
    &result.message
}

#[test]
fn resources_are_composed_per_index_and_patched_from_the_xr_spec() {
    let response = Resources::run(request(input()));
    assert!(response.results.is_empty(), "{:?}", response.results);
    for name in ["bucket-0", "bucket-1"] {
        let (resource, _) = desired(&response, name);
        assert_eq!(
            resource,
            json!({"apiVersion": "s3.aws.upbound.io/v1beta1", "kind": "Bucket", "spec": {"forProvider": {"region": "eu-west-1"}}})
        );
    }
    assert_eq!(
        response.desired.as_ref().unwrap().resources.len(),
        3,
        "earlier steps' resources pass through"
    );
}

#[test]
fn readiness_follows_the_observed_ready_condition_and_an_unobserved_resource_is_not_ready() {
    let response = Resources::run(request(input()));
    assert_eq!(desired(&response, "bucket-0").1, Ready::True);
    assert_eq!(desired(&response, "bucket-1").1, Ready::False);
}

#[test]
fn a_readiness_check_of_none_is_always_ready() {
    let mut input = input();
    input["resources"][0]["readinessCheck"] = json!({"type": "None"});
    let response = Resources::run(request(input));
    assert_eq!(desired(&response, "bucket-1").1, Ready::True);
}

#[test]
fn the_ttl_tag_and_context_come_back_with_the_composed_names_listed() {
    let response = Resources::run(request(input()));
    let ResponseMeta { tag, ttl } = response.meta.clone().unwrap();
    assert_eq!(tag, "tag-1");
    assert_eq!(
        ttl,
        Some(prost_types::Duration {
            seconds: 30,
            nanos: 0
        })
    );
    let context = Value::Object(from_struct(response.context.as_ref().unwrap()));
    assert_eq!(context[CONTEXT_KEY], json!(["bucket-0", "bucket-1"]));
}

#[test]
fn the_xr_can_set_the_count() {
    let mut input = input();
    input["resources"][0]["countFromFieldPath"] = json!("spec.buckets");
    let mut req = request(input.clone());
    let xr = req.observed.as_mut().unwrap().composite.as_mut().unwrap();
    xr.resource.as_mut().unwrap().fields.insert(
        "spec".into(),
        crate::function::value::to_value(&json!({"buckets": 5})),
    );
    assert_eq!(Resources::run(req).desired.unwrap().resources.len(), 1 + 5);
    // Absent from the XR: the template's count.
    assert_eq!(
        Resources::run(request(input))
            .desired
            .unwrap()
            .resources
            .len(),
        1 + 2
    );
}

#[test]
fn a_count_that_is_not_a_non_negative_integer_is_fatal() {
    let mut input = input();
    input["resources"][0]["countFromFieldPath"] = json!("spec.region");
    let response = Resources::run(request(input));
    assert_eq!(
        fatal_message(&response),
        "bucket: spec.region is \"eu-west-1\", not a non-negative integer count"
    );
}

#[test]
fn bad_input_is_a_fatal_result_with_a_clear_message_and_the_desired_state_passes_through() {
    let cases = [
        (
            json!({"apiVersion": API_VERSION, "kind": KIND, "resource": []}),
            "the input is not a Resources (composer.loadtest.dev/v1alpha1): unknown field `resource`",
        ),
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap"}),
            "the input is v1, ConfigMap; this function takes composer.loadtest.dev/v1alpha1, Resources",
        ),
        (
            json!({"apiVersion": API_VERSION, "kind": KIND, "ttl": "soon"}),
            "ttl \"soon\" is not a non-negative duration such as 30s or 1m",
        ),
        (
            json!({"apiVersion": API_VERSION, "kind": KIND, "resources": [{"name": "a", "base": {}, "patches": [{"fromFieldPath": "spec..x", "toFieldPath": "x"}]}]}),
            "resources[0]: invalid field path \"spec..x\": empty field",
        ),
        (
            json!({"apiVersion": API_VERSION, "kind": KIND, "resources": [{"name": "a", "base": {}}, {"name": "a", "base": {}}]}),
            "resources[1]: name \"a\" is empty or repeated",
        ),
        (
            json!({"apiVersion": API_VERSION, "kind": KIND, "resources": [{"name": "a", "base": {}, "readinessCheck": {"type": "MatchString"}}]}),
            "resources[0].readinessCheck: type \"MatchString\" is not MatchCondition or None, or MatchCondition lacks matchCondition",
        ),
    ];
    for (input, expected) in cases {
        let response = Resources::run(request(input));
        let message = fatal_message(&response);
        assert!(
            message.starts_with(expected),
            "{message:?} does not start with {expected:?}"
        );
        assert_eq!(
            response.desired.unwrap().resources.len(),
            1,
            "the request's desired state passes through"
        );
    }
}

#[test]
fn a_step_with_no_input_is_fatal() {
    let mut req = request(input());
    req.input = None;
    assert_eq!(
        fatal_message(&Resources::run(req)),
        "the step has no input; this function needs a Resources (composer.loadtest.dev/v1alpha1)"
    );
}

#[test]
fn a_patch_through_a_scalar_is_fatal() {
    let mut input = input();
    input["resources"][0]["base"]["spec"] = json!("scalar");
    let message = fatal_message(&Resources::run(request(input))).to_owned();
    assert!(
        message.starts_with("bucket-0: patch to spec.forProvider.region: cannot write"),
        "{message}"
    );
}
