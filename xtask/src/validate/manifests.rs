//! The rendered manifests' contract with the harness and with `cargo xtask kind`: the names,
//! ports, env and security settings they rely on (`kubectl kustomize ci/manifests`), and
//! the example overlay ci/examples/provider-upjet-aws: its ProviderConfig's fields against
//! provider-upjet-aws's names (it has no published schema) and the names the harness is
//! given.
//!
//! The custom resources' schemas are not checked here: the server dry run against
//! mock-apiserver validates them against their CRDs, with unknown fields as errors
//! (kubectl sends `fieldValidation=Strict`), and `cargo xtask validate` proves on every run
//! that it does by sending a broken ProviderConfig ([`broken_provider_configs`]).

use serde_json::{Value, json};

use super::need::{Need, Objects, items, keys, named_ports, str_of};

/// The namespace of the whole stack.
pub const NAMESPACE: &str = crate::kind::NAMESPACE;

/// The fixed provider settings that belong in env: `cargo xtask kind` replaces the args.
const FIXED_FLAGS: [&str; 4] = [
    "--cloud-endpoint",
    "--metrics-addr",
    "--kubeconfig",
    "--namespace",
];

/// Checks `kubectl kustomize ci/manifests`'s objects.
pub fn check_stack(docs: &[Value]) -> Result<(), Vec<String>> {
    let by = Objects::new(docs);
    let mut n = Need::default();
    let obj = |n: &mut Need, kind: &str, name: &str| {
        let found = by.get(kind, name);
        n.need(!found.is_null(), format!("missing {kind} {name}"));
        found
    };

    obj(&mut n, "Namespace", NAMESPACE);
    for (name, port) in [("provider", "metrics"), ("mock-cloud", "http")] {
        let dep = obj(&mut n, "Deployment", name);
        let svc = obj(&mut n, "Service", name);
        if dep.is_null() || svc.is_null() {
            continue;
        }
        n.need(
            dep["metadata"]["namespace"] == NAMESPACE,
            format!("Deployment {name} namespace"),
        );
        n.need(
            svc["metadata"]["namespace"] == NAMESPACE,
            format!("Service {name} namespace"),
        );
        n.need(
            named_ports(&svc["spec"]["ports"], "port").contains(&(port, 8080)),
            format!("Service {name} must expose port 8080 named {port}"),
        );
        let pod = &dep["spec"]["template"]["spec"];
        let c = &pod["containers"][0];
        n.need(
            c["image"] == format!("loadtest/{name}:dev"),
            format!("{name} image is {}", c["image"]),
        );
        n.need(
            c["imagePullPolicy"] == "IfNotPresent",
            format!("{name} imagePullPolicy"),
        );
        n.need(
            pod["securityContext"]["runAsNonRoot"] == true,
            format!("{name} runAsNonRoot"),
        );
        n.need(
            pod["securityContext"]["runAsUser"] == 65532,
            format!("{name} runs as 65532"),
        );
        for probe in ["readinessProbe", "livenessProbe"] {
            n.need(!c[probe].is_null(), format!("{name} has no {probe}"));
        }
        let res = &c["resources"];
        n.need(
            ["cpu", "memory"]
                .iter()
                .all(|r| keys(&res["requests"]).any(|k| k == *r)),
            format!("{name} requests"),
        );
        n.need(
            keys(&res["limits"]).any(|k| k == "memory"),
            format!("{name} memory limit"),
        );
        n.need(
            dep["spec"]["selector"]["matchLabels"] == svc["spec"]["selector"],
            format!("{name} selectors"),
        );
    }

    let provider = obj(&mut n, "Deployment", "provider");
    if !provider.is_null() {
        let pod = &provider["spec"]["template"]["spec"];
        let c = &pod["containers"][0];
        let env = |name: &str| {
            items(&c["env"])
                .iter()
                .rev()
                .find(|e| e["name"] == name)
                .map(|e| &e["value"])
                .unwrap_or(&Value::Null)
        };
        n.need(
            env("PROVIDER_CLOUD_ENDPOINT") == "http://mock-cloud.loadtest-system.svc:8080",
            "provider env PROVIDER_CLOUD_ENDPOINT",
        );
        n.need(
            env("PROVIDER_METRICS_ADDR") == "0.0.0.0:8080",
            "provider env PROVIDER_METRICS_ADDR",
        );
        n.need(
            env("PROVIDER_SECRET_NAMESPACE") == NAMESPACE,
            "provider env PROVIDER_SECRET_NAMESPACE (Secrets readable in loadtest-system only)",
        );
        n.need(
            !items(&c["args"])
                .iter()
                .any(|a| FIXED_FLAGS.iter().any(|f| str_of(a).starts_with(f))),
            "fixed provider settings belong in env: cargo xtask kind replaces args",
        );
        n.need(
            pod["serviceAccountName"] == "provider",
            "provider serviceAccountName",
        );
        n.need(
            provider["spec"]["strategy"]["type"] == "Recreate",
            "provider strategy Recreate (no leader election)",
        );
    }

    let secret = obj(&mut n, "Secret", "mock-cloud-default");
    n.need(
        secret["stringData"]["token"] == "token-default",
        "Secret mock-cloud-default token",
    );
    let pc = obj(&mut n, "ProviderConfig", "default");
    if !pc.is_null() {
        n.need(
            pc["spec"]
                == json!({"account": "default", "credentials": {"secretRef": {
                    "namespace": NAMESPACE, "name": "mock-cloud-default", "key": "token"}}}),
            "ProviderConfig default spec",
        );
    }

    for d in docs {
        let kind = str_of(&d["kind"]);
        if kind != "ClusterRole" && kind != "Role" {
            continue;
        }
        let name = str_of(&d["metadata"]["name"]);
        for rule in items(&d["rules"]) {
            for field in ["verbs", "resources", "apiGroups"] {
                n.need(
                    !items(&rule[field]).iter().any(|v| v == "*"),
                    format!("{kind}/{name}: no * in {field}"),
                );
            }
            if items(&rule["resources"]).iter().any(|r| r == "secrets") {
                n.need(
                    items(&rule["verbs"])
                        .iter()
                        .all(|v| ["get", "list", "watch"].contains(&str_of(v))),
                    "Secrets are read-only",
                );
                n.need(
                    kind == "Role" && d["metadata"]["namespace"] == NAMESPACE,
                    "Secrets are readable in loadtest-system only (a Role, not a ClusterRole)",
                );
            }
        }
    }
    n.finish()
}

/// The group of the example's ProviderConfig: provider-upjet-aws's, served only by its
/// own CRDs (which mock-apiserver is not given).
pub const UPJET_GROUP: &str = "aws.upbound.io/";

// apis/v1beta1/types.go of provider-upjet-aws: ProviderConfigSpec, EndpointConfig,
// URLConfig and ProviderCredentials.
const UPJET_SPEC: [&str; 8] = [
    "credentials",
    "assumeRoleChain",
    "endpoint",
    "skip_credentials_validation",
    "skip_region_validation",
    "s3_use_path_style",
    "skip_metadata_api_check",
    "skip_requesting_account_id",
];
const UPJET_ENDPOINT: [&str; 8] = [
    "url",
    "services",
    "hostnameImmutable",
    "partitionId",
    "signingName",
    "signingRegion",
    "signingMethod",
    "source",
];
const UPJET_URL: [&str; 3] = ["type", "static", "dynamic"];
const UPJET_CREDENTIALS: [&str; 6] = ["source", "secretRef", "env", "fs", "webIdentity", "upbound"];

/// Checks `kubectl kustomize ci/examples/provider-upjet-aws`'s objects.
pub fn check_upjet(docs: &[Value]) -> Result<(), Vec<String>> {
    let by = Objects::new(docs);
    let mut n = Need::default();
    let fields = |n: &mut Need, obj: &Value, allowed: &[&str], at: &str| {
        for key in keys(obj) {
            n.need(
                allowed.contains(&key),
                format!("{at}.{key} is not a field of provider-upjet-aws's ProviderConfigSpec"),
            );
        }
    };

    n.need(
        !docs.iter().any(|d| {
            str_of(&d["apiVersion"]).starts_with("mockcloud.example.org/")
                || (d["kind"] == "CustomResourceDefinition"
                    && str_of(&d["metadata"]["name"]).contains("mockcloud"))
        }),
        "this workspace's provider's kinds are left out",
    );
    n.need(
        by.get("Deployment", "provider").is_null(),
        "this workspace's provider is left out",
    );
    let pc = by.get("ProviderConfig", "default");
    n.need(
        pc["apiVersion"] == "aws.upbound.io/v1beta1",
        "ProviderConfig default of aws.upbound.io/v1beta1",
    );
    let spec = &pc["spec"];
    fields(&mut n, spec, &UPJET_SPEC, "spec");
    let endpoint = &spec["endpoint"];
    fields(&mut n, endpoint, &UPJET_ENDPOINT, "spec.endpoint");
    fields(&mut n, &endpoint["url"], &UPJET_URL, "spec.endpoint.url");
    let credentials = &spec["credentials"];
    fields(&mut n, credentials, &UPJET_CREDENTIALS, "spec.credentials");
    let services = items(&endpoint["services"]);
    n.need(
        ["s3", "sts"]
            .iter()
            .all(|s| services.iter().any(|v| v == s)),
        "the endpoint serves s3 and sts",
    );
    n.need(endpoint["url"]["type"] == "Static", "a Static endpoint URL");
    n.need(
        endpoint["url"]["static"] == "http://mock-cloud.loadtest-system:8080",
        "the endpoint is mock-cloud's Service",
    );
    for flag in [
        "s3_use_path_style",
        "skip_credentials_validation",
        "skip_region_validation",
        "skip_metadata_api_check",
        "skip_requesting_account_id",
    ] {
        n.need(spec[flag] == true, format!("spec.{flag}: true"));
    }
    let secret_ref = &credentials["secretRef"];
    n.need(
        credentials["source"] == "Secret",
        "credentials from a Secret",
    );
    let secret = by.get("Secret", str_of(&secret_ref["name"]));
    n.need(
        secret["metadata"]["namespace"] == secret_ref["namespace"],
        "the secretRef's namespace",
    );
    let creds = str_of(&secret["stringData"][str_of(&secret_ref["key"])]);
    n.need(
        creds.contains("aws_access_key_id = default")
            && creds.contains("aws_secret_access_key = default"),
        "mock-cloud's default keys",
    );
    let svc = by.get("Service", "mock-cloud");
    n.need(
        named_ports(&svc["spec"]["ports"], "port").contains(&("http", 8080)),
        "mock-cloud's Service on 8080",
    );
    let dep = by.get("Deployment", "provider-aws-s3");
    let pod = &dep["spec"]["template"]["spec"];
    n.need(
        dep["metadata"]["namespace"] == NAMESPACE,
        "provider-aws-s3 in loadtest-system",
    );
    n.need(
        dep["spec"]["strategy"]["type"] == "Recreate",
        "provider-aws-s3 Recreate",
    );
    let c = &pod["containers"][0];
    n.need(
        c["name"] == "provider-aws-s3",
        "container provider-aws-s3 (--provider-container)",
    );
    n.need(
        str_of(&c["image"]).starts_with("xpkg.upbound.io/upbound/provider-aws-s3:v"),
        "a pinned package image",
    );
    n.need(
        named_ports(&c["ports"], "containerPort").contains(&("metrics", 8080)),
        "controller-runtime's metrics port",
    );
    let sa = &pod["serviceAccountName"];
    n.need(
        sa == "provider-aws-s3",
        "serviceAccountName provider-aws-s3 (--provider-service-account)",
    );
    let fs = by.get("FlowSchema", "loadtest-provider");
    let subjects: Vec<&Value> = items(&fs["spec"]["rules"])
        .iter()
        .flat_map(|r| items(&r["subjects"]))
        .map(|s| &s["serviceAccount"])
        .collect();
    n.need(
        subjects == [&json!({"name": sa, "namespace": NAMESPACE})],
        format!(
            "the FlowSchema selects the provider's ServiceAccount: {}",
            Value::from(subjects.into_iter().cloned().collect::<Vec<_>>())
        ),
    );
    let binding = by.get("ClusterRoleBinding", "provider-aws-s3");
    n.need(
        items(&binding["subjects"])
            .contains(&json!({"kind": "ServiceAccount", "name": sa, "namespace": NAMESPACE})),
        "the provider's RBAC binds its ServiceAccount",
    );
    n.finish()
}

/// The example's objects that mock-apiserver serves: all but the ProviderConfig, whose
/// CRD comes with provider-upjet-aws.
pub fn served_by_mock_apiserver(docs: &[Value]) -> Vec<&Value> {
    docs.iter()
        .filter(|d| !str_of(&d["apiVersion"]).starts_with(UPJET_GROUP))
        .collect()
}

/// `docs` as a stream for `kubectl apply -f`: YAML documents, each written as JSON (which
/// is YAML). Not a `v1` `List`: kubectl validates a List against the server's OpenAPI v2
/// document, which mock-apiserver does not serve.
pub fn stream(docs: &[&Value]) -> String {
    docs.iter().map(|d| format!("---\n{d}\n")).collect()
}

/// ProviderConfig `default` of the stack, broken two ways the server dry run must refuse:
/// an unknown field (an error under `fieldValidation=Strict`: the server would prune it)
/// and a field of the wrong type. Each with the text the refusal must contain.
pub fn broken_provider_configs(docs: &[Value]) -> Option<Vec<(Value, &'static str)>> {
    let pc = docs
        .iter()
        .find(|d| d["kind"] == "ProviderConfig" && d["metadata"]["name"] == "default")?;
    let mut unknown = pc.clone();
    unknown["spec"]["colour"] = json!("blue");
    let mut mistyped = pc.clone();
    mistyped["spec"]["account"] = json!(7);
    Some(vec![
        (unknown, r#"unknown field "spec.colour""#),
        (mistyped, "spec.account"),
    ])
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::validate::need::{documents, tests::mutate};

    /// ci/manifests as `kubectl kustomize` renders it, without the CRDs and the
    /// ConfigMap's data (no check reads them).
    fn stack() -> Vec<Value> {
        documents(include_str!("fixtures/stack.yaml"), "stack.yaml").unwrap()
    }

    /// ci/examples/provider-upjet-aws as `kubectl kustomize` renders it, trimmed the same
    /// way.
    fn upjet() -> Vec<Value> {
        documents(include_str!("fixtures/upjet.yaml"), "upjet.yaml").unwrap()
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
}
