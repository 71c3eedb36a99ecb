use serde_json::{Value, json};

use super::*;
use crate::validate::need::{documents, tests::mutate};

/// ci/manifests as `kubectl kustomize` renders it, without the CRDs and the
/// ConfigMap's data (no check reads them).
fn stack() -> Vec<Value> {
    documents(include_str!("../fixtures/stack.yaml"), "stack.yaml").unwrap()
}

/// ci/examples/provider-upjet-aws as `kubectl kustomize` renders it, trimmed the same
/// way.
fn upjet() -> Vec<Value> {
    documents(include_str!("../fixtures/upjet.yaml"), "upjet.yaml").unwrap()
}

#[track_caller]
fn fails_with(result: Result<(), Vec<String>>, expected: &str) {
    let errors = result.expect_err("the check should fail");
    assert!(
        errors.iter().any(|e| e.contains(expected)),
        "no error with {expected:?} in {errors:?}"
    );
}

#[test]
fn the_rendered_stack_passes() {
    assert_eq!(check_stack(&stack()), Ok(()));
}

#[test]
fn each_broken_field_of_the_stack_is_named() {
    let s = stack();
    let cases: [(&str, &str, &str, Option<Value>, &str); 14] = [
        (
            "Namespace",
            NAMESPACE,
            "/metadata/name",
            Some(json!("x")),
            "missing Namespace",
        ),
        (
            "Service",
            "provider",
            "/spec/ports/0/port",
            Some(json!(9090)),
            "port 8080 named metrics",
        ),
        (
            "Deployment",
            "mock-cloud",
            "/spec/template/spec/containers/0/image",
            Some(json!("loadtest/mock-cloud:latest")),
            "mock-cloud image is",
        ),
        (
            "Deployment",
            "provider",
            "/spec/template/spec/securityContext/runAsUser",
            Some(json!(0)),
            "provider runs as 65532",
        ),
        (
            "Deployment",
            "provider",
            "/spec/template/spec/containers/0/livenessProbe",
            None,
            "provider has no livenessProbe",
        ),
        (
            "Deployment",
            "mock-cloud",
            "/spec/template/spec/containers/0/resources/limits",
            None,
            "mock-cloud memory limit",
        ),
        (
            "Deployment",
            "provider",
            "/spec/selector/matchLabels/app.kubernetes.io~1name",
            Some(json!("other")),
            "provider selectors",
        ),
        (
            "Deployment",
            "provider",
            "/spec/template/spec/containers/0/args/0",
            Some(json!("--metrics-addr=0.0.0.0:8080")),
            "belong in env",
        ),
        (
            "Deployment",
            "provider",
            "/spec/strategy/type",
            Some(json!("RollingUpdate")),
            "strategy Recreate",
        ),
        (
            "Deployment",
            "provider",
            "/spec/template/spec/serviceAccountName",
            Some(json!("default")),
            "serviceAccountName",
        ),
        (
            "Secret",
            "mock-cloud-default",
            "/stringData/token",
            Some(json!("x")),
            "mock-cloud-default token",
        ),
        (
            "ProviderConfig",
            "default",
            "/spec/account",
            Some(json!("other")),
            "ProviderConfig default spec",
        ),
        (
            "ClusterRole",
            "loadtest-provider",
            "/rules/0/verbs/0",
            Some(json!("*")),
            "no * in verbs",
        ),
        (
            "Role",
            "loadtest-provider-secrets",
            "/rules/0/verbs/0",
            Some(json!("delete")),
            "Secrets are read-only",
        ),
    ];
    for (kind, name, pointer, value, expected) in cases {
        fails_with(
            check_stack(&mutate(&s, kind, name, pointer, value)),
            expected,
        );
    }
}

#[test]
fn the_provider_env_and_secret_scope_are_checked() {
    let s = stack();
    let env = "/spec/template/spec/containers/0/env";
    let mut broken = s.clone();
    let dep = broken
        .iter_mut()
        .find(|d| d["kind"] == "Deployment" && d["metadata"]["name"] == "provider")
        .unwrap();
    let vars = dep.pointer_mut(env).unwrap().as_array_mut().unwrap();
    vars.retain(|e| e["name"] != "PROVIDER_SECRET_NAMESPACE");
    fails_with(check_stack(&broken), "PROVIDER_SECRET_NAMESPACE");

    let mut cluster_wide = s.clone();
    let role = cluster_wide
        .iter_mut()
        .find(|d| d["kind"] == "Role")
        .unwrap();
    role["kind"] = json!("ClusterRole");
    fails_with(check_stack(&cluster_wide), "a Role, not a ClusterRole");
}

#[test]
fn the_rendered_example_passes() {
    assert_eq!(check_upjet(&upjet()), Ok(()));
}

#[test]
fn each_broken_field_of_the_example_is_named() {
    let u = upjet();
    let cases: [(&str, &str, &str, Option<Value>, &str); 10] = [
        (
            "ProviderConfig",
            "default",
            "/spec/skipRegionValidation",
            Some(json!(true)),
            "spec.skipRegionValidation is not a field",
        ),
        (
            "ProviderConfig",
            "default",
            "/spec/endpoint/url/kind",
            Some(json!("Static")),
            "spec.endpoint.url.kind is not a field",
        ),
        (
            "ProviderConfig",
            "default",
            "/spec/endpoint/services/1",
            None,
            "s3 and sts",
        ),
        (
            "ProviderConfig",
            "default",
            "/spec/endpoint/url/static",
            Some(json!("http://mock-cloud:8080")),
            "mock-cloud's Service",
        ),
        (
            "ProviderConfig",
            "default",
            "/spec/s3_use_path_style",
            Some(json!(false)),
            "spec.s3_use_path_style: true",
        ),
        (
            "ProviderConfig",
            "default",
            "/spec/credentials/source",
            Some(json!("IRSA")),
            "credentials from a Secret",
        ),
        (
            "Secret",
            "mock-cloud-aws",
            "/metadata/namespace",
            Some(json!("default")),
            "the secretRef's namespace",
        ),
        (
            "Deployment",
            "provider-aws-s3",
            "/spec/template/spec/containers/0/image",
            Some(json!("xpkg.upbound.io/upbound/provider-aws-s3:latest")),
            "a pinned package image",
        ),
        (
            "FlowSchema",
            "loadtest-provider",
            "/spec/rules/0/subjects/0/serviceAccount/name",
            Some(json!("provider")),
            "the FlowSchema selects",
        ),
        (
            "ClusterRoleBinding",
            "provider-aws-s3",
            "/subjects/0/namespace",
            Some(json!("default")),
            "binds its ServiceAccount",
        ),
    ];
    for (kind, name, pointer, value, expected) in cases {
        fails_with(
            check_upjet(&mutate(&u, kind, name, pointer, value)),
            expected,
        );
    }
    let mut with_ours = u.clone();
    with_ours.extend(stack().into_iter().filter(|d| d["kind"] == "Deployment"));
    fails_with(
        check_upjet(&with_ours),
        "this workspace's provider is left out",
    );
}

#[test]
fn the_served_set_leaves_out_the_upjet_provider_config_only() {
    let u = upjet();
    let served = served_by_mock_apiserver(&u);
    assert_eq!(served.len(), u.len() - 1);
    assert!(!served.iter().any(|d| d["kind"] == "ProviderConfig"));
    let text = stream(&served);
    let back = documents(&text, "stream").unwrap();
    assert_eq!(back.iter().collect::<Vec<_>>(), served);
}

#[test]
fn the_broken_provider_configs_differ_from_the_good_one_in_one_field_each() {
    let s = stack();
    let good = s.iter().find(|d| d["kind"] == "ProviderConfig").unwrap();
    let broken = broken_provider_configs(&s).unwrap();
    assert_eq!(broken.len(), 2);
    assert_eq!(broken[0].0["spec"]["colour"], "blue");
    assert_eq!(broken[1].0["spec"]["account"], 7);
    for (b, _) in &broken {
        let mut b = b.clone();
        let spec = b["spec"].as_object_mut().unwrap();
        spec.remove("colour");
        spec.insert("account".into(), json!("default"));
        assert_eq!(&b, good);
    }
    assert!(broken_provider_configs(&upjet()[..0]).is_none());
}
