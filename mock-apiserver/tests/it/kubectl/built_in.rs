//! kubectl and built-in kinds: ConfigMaps, Secrets and Namespaces, a Deployment with its
//! Service and RBAC (dry run, apply, restart), and server-side apply's conflicts.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;

use super::Kubectl;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_applies_and_reapplies_built_in_config_maps() {
    let k = Kubectl::start().await;
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: \"1\"\n";
    let (ok, out, err) = k.run_with_input(&["apply", "-f", "-"], cm).await;
    assert!(ok && out.contains("created"), "{out}{err}");
    let (ok, out, err) = k
        .run_with_input(&["apply", "-f", "-"], &cm.replace("\"1\"", "\"2\""))
        .await;
    assert!(ok && out.contains("configured"), "{out}{err}");
    let configmaps: Api<ConfigMap> = Api::default_namespaced(k.client());
    assert_eq!(configmaps.get("c").await.unwrap().data.unwrap()["a"], "2");
    assert!(k.ok(&["get", "namespaces"]).await.contains("default"));
}

const STACK: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: web:dev, args: [--a=1]}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 8080, targetPort: http}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: web}
rules: [{apiGroups: [\"\"], resources: [secrets], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: web}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: web}
subjects: [{kind: ServiceAccount, name: web, namespace: default}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: web}
rules: [{apiGroups: [\"\"], resources: [events], verbs: [create]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: web}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: web}
subjects: [{kind: ServiceAccount, name: web, namespace: default}]
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_dry_runs_applies_and_restarts_deployments_services_and_rbac() {
    let k = Kubectl::start().await;
    let (ok, out, err) = k
        .run_with_input(&["apply", "--dry-run=server", "-f", "-"], STACK)
        .await;
    assert!(ok, "{out}{err}");
    for name in [
        "deployment.apps/web",
        "service/web",
        "role.rbac.authorization.k8s.io/web",
        "rolebinding.rbac.authorization.k8s.io/web",
        "clusterrole.rbac.authorization.k8s.io/web",
        "clusterrolebinding.rbac.authorization.k8s.io/web",
    ] {
        assert!(
            out.contains(&format!("{name} created (server dry run)")),
            "{name}: {out}"
        );
    }
    let deployments: Api<Deployment> = Api::default_namespaced(k.client());
    assert!(
        deployments.get_opt("web").await.unwrap().is_none(),
        "a dry run stores nothing"
    );

    let (ok, out, err) = k.run_with_input(&["apply", "-f", "-"], STACK).await;
    assert!(
        ok && out.contains("deployment.apps/web created"),
        "{out}{err}"
    );
    let (ok, out, err) = k
        .run_with_input(&["apply", "-f", "-"], &STACK.replace("--a=1", "--a=2"))
        .await;
    assert!(
        ok && out.contains("deployment.apps/web configured"),
        "{out}{err}"
    );
    assert!(out.contains("service/web unchanged"), "{out}");

    let restarted = k.ok(&["rollout", "restart", "deployment/web"]).await;
    assert!(restarted.contains("restarted"), "{restarted}");
    let web = deployments.get("web").await.unwrap();
    let template = web.spec.unwrap().template;
    assert!(
        template
            .metadata
            .unwrap()
            .annotations
            .unwrap()
            .contains_key("kubectl.kubernetes.io/restartedAt"),
        "the strategic-merge patch reached the pod template"
    );
    assert_eq!(
        template.spec.unwrap().containers[0].args.as_deref(),
        Some(&["--a=2".to_owned()][..]),
        "the patch kept the rest of the template"
    );
    assert_eq!(web.metadata.generation, Some(3));
    assert!(k.ok(&["get", "deploy,svc"]).await.contains("web"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_create_makes_namespaces_config_maps_and_secrets_from_protobuf_bodies() {
    let k = Kubectl::start().await;
    k.ok(&["create", "namespace", "crossplane-system"]).await;
    k.ok(&[
        "create",
        "configmap",
        "settings",
        "-n",
        "crossplane-system",
        "--from-literal=poll=1m",
    ])
    .await;
    k.ok(&[
        "create",
        "secret",
        "generic",
        "cloud-token",
        "-n",
        "crossplane-system",
        "--from-literal=token=s3cr3t",
    ])
    .await;
    let token = k
        .ok(&[
            "get",
            "secret",
            "cloud-token",
            "-n",
            "crossplane-system",
            "-o",
            "jsonpath={.data.token}",
        ])
        .await;
    assert_eq!(token, "czNjcjN0", "base64 of s3cr3t");
    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::namespaced(k.client(), "crossplane-system");
    assert_eq!(
        secrets.get("cloud-token").await.unwrap().data.unwrap()["token"].0,
        b"s3cr3t"
    );
    let poll = k
        .ok(&[
            "get",
            "configmap",
            "settings",
            "-n",
            "crossplane-system",
            "-o",
            "jsonpath={.data.poll}",
        ])
        .await;
    assert_eq!(poll, "1m");
}

const CM: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: \"1\"\n  b: \"1\"\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_server_side_applies_conflict_until_forced_and_show_their_owners() {
    // managedfields/internal/conflict.go for the message; kubectl prints it after
    // "error: " and exits non-zero without --force-conflicts.
    let k = Kubectl::start().await;
    let (ok, out, err) = k
        .run_with_input(
            &["apply", "--server-side", "--field-manager=alpha", "-f", "-"],
            CM,
        )
        .await;
    assert!(ok && out.contains("serverside-applied"), "{out}{err}");
    let beta = CM.replace("a: \"1\"\n  b: \"1\"", "a: \"2\"\n  c: \"3\"");
    let (ok, out, err) = k
        .run_with_input(
            &["apply", "--server-side", "--field-manager=beta", "-f", "-"],
            &beta,
        )
        .await;
    assert!(!ok, "{out}");
    assert!(
        err.contains("Apply failed with 1 conflict: conflict with \"alpha\": .data.a"),
        "{err}"
    );
    let (ok, out, err) = k
        .run_with_input(
            &[
                "apply",
                "--server-side",
                "--field-manager=beta",
                "--force-conflicts",
                "-f",
                "-",
            ],
            &beta,
        )
        .await;
    assert!(ok && out.contains("serverside-applied"), "{out}{err}");
    let yaml = k
        .ok(&[
            "get",
            "configmap",
            "settings",
            "-o",
            "yaml",
            "--show-managed-fields",
        ])
        .await;
    let alpha_entry =
        "    fieldsV1:\n      f:data:\n        f:b: {}\n    manager: alpha\n    operation: Apply\n";
    let beta_entry = "    fieldsV1:\n      f:data:\n        f:a: {}\n        f:c: {}\n    manager: beta\n    operation: Apply\n";
    assert!(
        yaml.contains(alpha_entry) && yaml.contains(beta_entry),
        "{yaml}"
    );
    let data = k
        .ok(&["get", "configmap", "settings", "-o", "jsonpath={.data}"])
        .await;
    assert_eq!(data, r#"{"a":"2","b":"1","c":"3"}"#);
    // Without --show-managed-fields kubectl hides them.
    let plain = k.ok(&["get", "configmap", "settings", "-o", "yaml"]).await;
    assert!(!plain.contains("managedFields"), "{plain}");
}
