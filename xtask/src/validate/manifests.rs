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
mod tests;
