//! kubectl, a client nobody here wrote, against the server on a loopback socket.
//!
//! Every test starts its own server on a free port, writes its own kubeconfig and uses
//! a fresh discovery cache; long-running commands are bounded by `--request-timeout`
//! or `--timeout`, and waits for output are bounded too.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::{Resource, ResourceExt};
use mock_apiserver::{ApiServer, Config};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use crate::support::{Bucket, Socket, bucket, bucket_crd_yaml};

/// A bound on any single wait for kubectl, so a broken server fails the test instead of
/// hanging it.
pub(crate) const BOUND: Duration = Duration::from_secs(60);

pub(crate) struct Kubectl {
    dir: PathBuf,
    socket: Socket,
    pub(crate) server: ApiServer,
}

static NEXT_DIR: AtomicUsize = AtomicUsize::new(0);

impl Kubectl {
    pub(crate) async fn start() -> Self {
        Self::start_with(ApiServer::new(Config::default())).await
    }

    /// Serves `server` on a fresh socket, with its own kubeconfig and discovery cache.
    pub(crate) async fn start_with(server: ApiServer) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "mock-apiserver-kubectl-{}-{}",
            std::process::id(),
            NEXT_DIR.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let socket = Socket::start(server.clone()).await;
        mock_apiserver::write_kubeconfig(&dir.join("kubeconfig"), &socket.url()).unwrap();
        std::fs::write(dir.join("crd.yaml"), bucket_crd_yaml()).unwrap();
        Self {
            dir,
            socket,
            server,
        }
    }

    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("kubectl");
        command
            .arg("--kubeconfig")
            .arg(self.dir.join("kubeconfig"))
            .arg("--cache-dir")
            .arg(self.dir.join("cache"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        command
    }

    /// Runs kubectl, returning (success, stdout, stderr).
    pub(crate) async fn run(&self, args: &[&str]) -> (bool, String, String) {
        self.run_with_input(args, "").await
    }

    pub(crate) async fn run_with_input(
        &self,
        args: &[&str],
        input: &str,
    ) -> (bool, String, String) {
        let mut child = self.command(args).spawn().expect("kubectl runs");
        let mut stdin = child.stdin.take().unwrap();
        tokio::io::AsyncWriteExt::write_all(&mut stdin, input.as_bytes())
            .await
            .unwrap();
        drop(stdin);
        let output = tokio::time::timeout(BOUND, child.wait_with_output())
            .await
            .expect("kubectl finishes")
            .unwrap();
        let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
        (
            output.status.success(),
            text(output.stdout),
            text(output.stderr),
        )
    }

    /// Runs kubectl and insists it succeeds; returns stdout.
    pub(crate) async fn ok(&self, args: &[&str]) -> String {
        let (success, stdout, stderr) = self.run(args).await;
        assert!(success, "kubectl {args:?} failed:\n{stdout}\n{stderr}");
        stdout
    }

    pub(crate) async fn with_crd(self) -> Self {
        let crd = self.dir.join("crd.yaml");
        let out = self.ok(&["apply", "-f", crd.to_str().unwrap()]).await;
        assert!(out.contains("buckets.example.org created"), "{out}");
        self
    }

    /// Waits (bounded) until kubectl has a watch open on buckets, as the journal shows.
    pub(crate) async fn wait_for_watch(&self) {
        self.wait_for_watch_of("buckets").await;
    }

    /// Waits (bounded) until kubectl has a watch open on `resource`.
    pub(crate) async fn wait_for_watch_of(&self, resource: &str) {
        for _ in 0..1200 {
            let journal = self.server.journal().since(0);
            if journal
                .iter()
                .any(|e| e.verb == mock_apiserver::Verb::Watch && e.resource == resource)
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("kubectl never started watching");
    }

    /// The kubeconfig file kubectl uses.
    pub(crate) fn kubeconfig(&self) -> PathBuf {
        self.dir.join("kubeconfig")
    }

    pub(crate) fn client(&self) -> kube::Client {
        kube::Client::new(self.server.service(), "default")
    }

    pub(crate) fn buckets(&self) -> Api<Bucket> {
        Api::default_namespaced(self.client())
    }
}

impl Drop for Kubectl {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        let _ = &self.socket;
    }
}

const B1: &str =
    "apiVersion: example.org/v1alpha1\nkind: Bucket\nmetadata:\n  name: b1\nspec:\n  region: eu\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_applies_a_crd_and_then_applies_gets_and_describes_custom_resources() {
    let k = Kubectl::start().await.with_crd().await;
    let (ok, out, err) = k.run_with_input(&["apply", "-f", "-"], B1).await;
    assert!(
        ok && out.contains("bucket.example.org/b1 created"),
        "{out}{err}"
    );
    let (ok, out, err) = k
        .run_with_input(&["apply", "-f", "-"], &B1.replace("eu", "us"))
        .await;
    assert!(
        ok && out.contains("bucket.example.org/b1 configured"),
        "{out}{err}"
    );

    let table = k.ok(&["get", "buckets"]).await;
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["NAME", "READY", "REGION", "AGE"],
        "printer columns come from the CRD"
    );
    assert!(table.lines().nth(1).unwrap().starts_with("b1"), "{table}");
    assert!(
        k.ok(&["get", "bk"]).await.contains("us"),
        "short names work"
    );

    let yaml = k.ok(&["get", "bucket", "b1", "-o", "yaml"]).await;
    assert!(
        yaml.contains("region: us") && yaml.contains("resourceVersion:"),
        "{yaml}"
    );

    let b1 = k.buckets().get("b1").await.unwrap();
    let recorder = Recorder::new(
        k.client(),
        Reporter {
            controller: "provider".into(),
            instance: None,
        },
    );
    let event = Event {
        type_: EventType::Warning,
        reason: "QuotaExceeded".into(),
        note: Some("the cloud said no".into()),
        action: "Create".into(),
        secondary: None,
    };
    recorder.publish(&event, &b1.object_ref(&())).await.unwrap();
    let described = k.ok(&["describe", "bucket", "b1"]).await;
    assert!(
        described.contains("Name:") && described.contains("b1"),
        "{described}"
    );
    assert!(
        described.contains("QuotaExceeded") && described.contains("the cloud said no"),
        "{described}"
    );

    let (ok, out, err) = k
        .run_with_input(
            &["apply", "--server-side", "-f", "-"],
            &B1.replace("eu", "ap"),
        )
        .await;
    assert!(ok && out.contains("serverside-applied"), "{out}{err}");
    assert_eq!(k.buckets().get("b1").await.unwrap().spec.region, "ap");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_annotates_labels_and_merge_patches_but_strategic_patches_of_custom_resources_fail()
{
    let k = Kubectl::start().await.with_crd().await;
    k.buckets()
        .create(&PostParams::default(), &bucket("b1", "eu"))
        .await
        .unwrap();
    k.ok(&[
        "annotate",
        "bucket",
        "b1",
        "crossplane.io/poll-interval=10s",
    ])
    .await;
    k.ok(&["label", "bucket", "b1", "tier=gold"]).await;
    k.ok(&[
        "patch",
        "bucket",
        "b1",
        "--type=merge",
        "-p",
        r#"{"spec":{"region":"us"}}"#,
    ])
    .await;
    let b1 = k.buckets().get("b1").await.unwrap();
    assert_eq!(b1.annotations()["crossplane.io/poll-interval"], "10s");
    assert_eq!(b1.labels()["tier"], "gold");
    assert_eq!(b1.spec.region, "us");
    assert_eq!(
        k.ok(&["get", "buckets", "-l", "tier=gold", "-o", "name"])
            .await
            .trim(),
        "bucket.example.org/b1"
    );

    let (ok, _, err) = k
        .run(&["patch", "bucket", "b1", "-p", r#"{"spec":{"region":"ap"}}"#])
        .await;
    assert!(
        !ok && err.contains("not supported"),
        "strategic merge is refused: {err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_watch_prints_the_current_rows_and_then_changes() {
    let k = Kubectl::start().await.with_crd().await;
    k.buckets()
        .create(&PostParams::default(), &bucket("b1", "eu"))
        .await
        .unwrap();
    let mut child = k
        .command(&["get", "buckets", "-w", "--request-timeout=20s"])
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next_line = async || {
        tokio::time::timeout(BOUND, lines.next_line())
            .await
            .expect("a line in time")
            .unwrap()
    };
    assert!(next_line().await.unwrap().starts_with("NAME"));
    assert!(next_line().await.unwrap().contains("eu"));
    k.buckets()
        .patch(
            "b1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"region": "ap"}})),
        )
        .await
        .unwrap();
    let changed = next_line().await.unwrap();
    assert!(
        changed.starts_with("b1") && changed.contains("ap"),
        "{changed}"
    );
    child.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_wait_sees_a_ready_condition_written_through_status() {
    let k = Kubectl::start().await.with_crd().await;
    let b1 = k
        .buckets()
        .create(&PostParams::default(), &bucket("b1", "eu"))
        .await
        .unwrap();
    let waiter = k
        .command(&[
            "wait",
            "--for=condition=Ready",
            "bucket/b1",
            "--timeout=50s",
        ])
        .spawn()
        .unwrap();
    k.wait_for_watch().await;
    let status = json!({"status": {"conditions": [
        {"type": "Ready", "status": "True", "observedGeneration": b1.metadata.generation}
    ]}});
    k.buckets()
        .patch_status("b1", &PatchParams::default(), &Patch::Merge(status))
        .await
        .unwrap();
    let output = tokio::time::timeout(BOUND, waiter.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("condition met"),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        k.ok(&["get", "buckets"])
            .await
            .lines()
            .nth(1)
            .unwrap()
            .contains("True"),
        "READY column shows it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_delete_removes_objects_and_waits_for_finalizers_to_be_released() {
    let k = Kubectl::start().await.with_crd().await;
    k.buckets()
        .create(&PostParams::default(), &bucket("plain", "eu"))
        .await
        .unwrap();
    let out = k.ok(&["delete", "bucket", "plain"]).await;
    assert!(out.contains("deleted"), "{out}");
    assert!(k.buckets().get_opt("plain").await.unwrap().is_none());

    let mut held = bucket("held", "eu");
    held.metadata.finalizers = Some(vec!["example.org/cleanup".into()]);
    k.buckets()
        .create(&PostParams::default(), &held)
        .await
        .unwrap();
    k.ok(&["delete", "bucket", "held", "--wait=false"]).await;
    let marked = k.buckets().get("held").await.unwrap();
    assert!(marked.metadata.deletion_timestamp.is_some());

    let deleter = k
        .command(&["delete", "bucket", "held", "--timeout=50s"])
        .spawn()
        .unwrap();
    k.wait_for_watch().await;
    k.buckets()
        .patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    let output = tokio::time::timeout(BOUND, deleter.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(k.buckets().get_opt("held").await.unwrap().is_none());
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crd_applied_with_kubectl_is_established_and_deleting_it_removes_the_kind() {
    let k = Kubectl::start().await.with_crd().await;
    k.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/buckets.example.org",
        "--timeout=30s",
    ])
    .await;
    k.buckets()
        .create(&PostParams::default(), &bucket("b1", "eu"))
        .await
        .unwrap();
    let crd = k.dir.join("crd.yaml");
    k.ok(&["delete", "-f", crd.to_str().unwrap()]).await;
    assert_eq!(
        k.server.object_count("example.org", "v1alpha1", "buckets"),
        0
    );
    let fresh_cache = k.dir.join("cache-after-delete");
    let (ok, _, err) = k
        .run(&[
            "--cache-dir",
            fresh_cache.to_str().unwrap(),
            "get",
            "buckets",
        ])
        .await;
    assert!(
        !ok && err.contains("the server doesn't have a resource type"),
        "{err}"
    );
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
