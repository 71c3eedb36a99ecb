//! The `composer` binary as a process against mock-apiserver on a loopback socket: it
//! discovers the XRD, the Composition, its revision and the in-process Function, composes
//! an XR created after it started, and brings it to Ready once the composed resources
//! report Ready; SIGTERM stops it with 0; bad flags and a missing kubeconfig exit 2 with
//! the reason.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use composer::api::{ANNOTATION_RUNTIME, LABEL_COMPOSITION_NAME, TYPE_VALID_PIPELINE};
use composer::function::builtin::{API_VERSION, KIND};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use mock_apiserver::{ApiServer, Config};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_composer");
/// The bound on every wait, in real time.
const WAIT: Duration = Duration::from_secs(30);
const N: usize = 2;

/// The binary's process, killed if the test ends before it is stopped.
struct Process(Option<Child>);

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(child) = &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn crd(
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
    scope: &str,
) -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": plural},
            "scope": scope,
            "versions": [{"name": version, "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}}],
        },
    }))
    .unwrap()
}

fn api(
    client: &kube::Client,
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(group, version, kind);
    Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(&gvk, plural),
    )
}

fn object(v: Value) -> DynamicObject {
    serde_json::from_value(v).unwrap()
}

/// Polls `check` every 100 ms until it answers, or panics after [`WAIT`] with `what`.
async fn wait_for<T, F: Future<Output = Option<T>>>(what: &str, mut check: impl FnMut() -> F) -> T {
    let until = tokio::time::Instant::now() + WAIT;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < until,
            "waited {WAIT:?} for {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Crossplane's kinds, the composed kind, a Function run in process, an XRD, a Composition
/// of two Widgets and its valid revision.
async fn cluster(client: &kube::Client) {
    let pp = PostParams::default();
    let crds = Api::<CustomResourceDefinition>::all(client.clone());
    let x = "apiextensions.crossplane.io";
    for crd in [
        crd(
            x,
            "v2",
            "CompositeResourceDefinition",
            "compositeresourcedefinitions",
            "Cluster",
        ),
        crd(x, "v1", "Composition", "compositions", "Cluster"),
        crd(
            x,
            "v1",
            "CompositionRevision",
            "compositionrevisions",
            "Cluster",
        ),
        crd(
            "pkg.crossplane.io",
            "v1",
            "Function",
            "functions",
            "Cluster",
        ),
        crd("test.example.org", "v1", "Widget", "widgets", "Namespaced"),
    ] {
        crds.create(&pp, &crd).await.unwrap();
    }
    let functions = api(client, "pkg.crossplane.io", "v1", "Function", "functions");
    functions
        .create(
            &pp,
            &object(json!({
                "apiVersion": "pkg.crossplane.io/v1", "kind": "Function",
                "metadata": {"name": "resources", "annotations": {ANNOTATION_RUNTIME: "InProcess"}},
                "spec": {"package": "xpkg.example.org/function-resources:v0.1.0"},
            })),
        )
        .await
        .unwrap();
    let xrds = api(
        client,
        x,
        "v2",
        "CompositeResourceDefinition",
        "compositeresourcedefinitions",
    );
    xrds.create(&pp, &object(json!({
        "apiVersion": "apiextensions.crossplane.io/v2", "kind": "CompositeResourceDefinition",
        "metadata": {"name": "xwidgets.example.org"},
        "spec": {"group": "example.org", "names": {"kind": "XWidget", "plural": "xwidgets"},
            "versions": [{"name": "v1", "referenceable": true, "served": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"region": {"type": "string"}}}}}}}]},
    })))
    .await
    .unwrap();
    // A 1 s TTL: no watch on Widgets, so the requeue sees their Ready status.
    let pipeline = json!([{"step": "compose", "functionRef": {"name": "resources"}, "input": {
        "apiVersion": API_VERSION, "kind": KIND, "ttl": "1s",
        "resources": [{"name": "widget", "count": N,
            "base": {"apiVersion": "test.example.org/v1", "kind": "Widget"},
            "patches": [{"fromFieldPath": "spec.region", "toFieldPath": "spec.region"}]}]}}]);
    let spec = json!({"compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XWidget"},
        "mode": "Pipeline", "pipeline": pipeline});
    let composition = api(client, x, "v1", "Composition", "compositions")
        .create(
            &pp,
            &object(json!({
                "apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition",
                "metadata": {"name": "widgets"}, "spec": spec,
            })),
        )
        .await
        .unwrap();
    let mut revision_spec = spec.clone();
    revision_spec["revision"] = json!(1);
    let revisions = api(
        client,
        x,
        "v1",
        "CompositionRevision",
        "compositionrevisions",
    );
    revisions
        .create(
            &pp,
            &object(json!({
                "apiVersion": "apiextensions.crossplane.io/v1", "kind": "CompositionRevision",
                "metadata": {"name": "widgets-1", "labels": {LABEL_COMPOSITION_NAME: "widgets"},
                    "ownerReferences": [{"apiVersion": "apiextensions.crossplane.io/v1",
                        "kind": "Composition", "name": "widgets",
                        "uid": composition.metadata.uid, "controller": true}]},
                "spec": revision_spec,
            })),
        )
        .await
        .unwrap();
    let valid = json!({"status": {"conditions": [{"type": TYPE_VALID_PIPELINE, "status": "True",
        "reason": "ValidPipeline", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}});
    revisions
        .patch_status("widgets-1", &PatchParams::default(), &Patch::Merge(&valid))
        .await
        .unwrap();
}

fn kubeconfig(name: &str, url: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("composer-{name}-{}.kubeconfig", std::process::id()));
    mock_apiserver::write_kubeconfig(&path, url).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_composes_an_xr_on_mock_apiserver_until_ready_and_stops_on_sigterm() {
    let server = ApiServer::new(Config::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(mock_apiserver::serve(listener, server.clone(), async {
        let _ = stopped.await;
    }));
    let client = kube::Client::new(server.service(), "default");
    cluster(&client).await;

    let path = kubeconfig("compose", &url);
    let mut process = Process(Some(
        Command::new(BIN)
            .arg("--kubeconfig")
            .arg(&path)
            .args([
                "--max-concurrent-reconciles=4",
                "--circuit-breaker-mode=eager",
            ])
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    ));

    // The binary applies the XR CRD from the XRD; then an XR can be created.
    let crds = Api::<CustomResourceDefinition>::all(client.clone());
    let crd = wait_for("the XR CRD", || async {
        crds.get_opt("xwidgets.example.org").await.unwrap()
    })
    .await;
    assert_eq!(crd.spec.names.kind, "XWidget");
    let gvk = GroupVersionKind::gvk("example.org", "v1", "XWidget");
    let xrs: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "default",
        &ApiResource::from_gvk_with_plural(&gvk, "xwidgets"),
    );
    xrs.create(
        &PostParams::default(),
        &object(json!({
            "apiVersion": "example.org/v1", "kind": "XWidget",
            "metadata": {"name": "xr-0"}, "spec": {"region": "eu-west-1"},
        })),
    )
    .await
    .unwrap();

    // The XR watch enqueues it; its reconcile composes the Widgets.
    let widgets = api(&client, "test.example.org", "v1", "Widget", "widgets");
    let composed = wait_for("the composed Widgets", || async {
        let items = widgets.list(&ListParams::default()).await.unwrap().items;
        (items.len() == N).then_some(items)
    })
    .await;
    for w in &composed {
        assert_eq!(w.metadata.namespace.as_deref(), Some("default"));
        assert_eq!(w.data["spec"]["region"], "eu-west-1");
        assert_eq!(
            w.metadata.labels.as_ref().unwrap()["crossplane.io/composite"],
            "xr-0"
        );
    }
    let xr = xrs.get("xr-0").await.unwrap();
    assert_eq!(
        xr.data["spec"]["crossplane"]["compositionRevisionRef"]["name"],
        "widgets-1"
    );
    let refs = xr.data["spec"]["crossplane"]["resourceRefs"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(refs, N);

    // The provider's part; the 1 s TTL requeue then finds them Ready.
    let widgets_ns = Api::<DynamicObject>::namespaced_with(
        client.clone(),
        "default",
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("test.example.org", "v1", "Widget"),
            "widgets",
        ),
    );
    for w in &composed {
        let ready = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        widgets_ns
            .patch_status(
                w.metadata.name.as_deref().unwrap(),
                &PatchParams::default(),
                &Patch::Merge(&ready),
            )
            .await
            .unwrap();
    }
    wait_for("the XR to become Ready", || async {
        let xr = xrs.get("xr-0").await.unwrap();
        let conditions = xr.data["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        conditions
            .iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
            .then_some(())
    })
    .await;

    // Settled: over the next two seconds, the XR's status applies are the TTL's requeues
    // (about one a second), not a loop of reconciles fed by the XR's own watch events.
    let from = server.journal().last_seq();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let applies = server
        .journal()
        .since(from)
        .iter()
        .filter(|e| e.resource == "xwidgets/status")
        .count();
    eprintln!("XR status writes in 2 s: {applies}");
    assert!(
        (1..=4).contains(&applies),
        "{applies} XR status writes in 2 s"
    );

    // SIGTERM: a clean stop, exit code 0.
    let mut child = process.0.take().unwrap();
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let until = std::time::Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            std::time::Instant::now() < until,
            "composer did not stop on SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut log = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut log).unwrap();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("started the XR controller"), "{log}");
    let _ = stop.send(());
    served.await.unwrap();
    let _ = std::fs::remove_file(path);
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

#[test]
fn bad_flags_exit_2_with_the_reason() {
    for (args, words) in [
        (&["--poll-interval=60"][..], "missing unit in duration"),
        (&["--circuit-breaker-refill-rate=0"], "not a number above 0"),
        (&["--max-reconcile-rate=-1"], "whole number above 0"),
        (&["--circuit-breaker-mode=fast"], "released or eager"),
        (
            &["--enable-realtime-compositions=maybe"],
            "enable-realtime-compositions",
        ),
        (&["--no-such-flag"], "--no-such-flag"),
    ] {
        let output = run(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(words), "{args:?}: {stderr}");
    }
}

#[test]
fn a_missing_kubeconfig_exits_2_with_the_reason() {
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-such.kubeconfig");
    let output = run(&["--kubeconfig", missing.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot read --kubeconfig"), "{stderr}");
}

#[test]
fn help_explains_the_flags_and_exit_codes() {
    let output = run(&["--help"]);
    assert_eq!(output.status.code(), Some(0));
    let help = String::from_utf8_lossy(&output.stdout);
    for words in [
        "--max-reconcile-rate",
        "--circuit-breaker-cooldown",
        "Exit codes",
        "InProcess",
    ] {
        assert!(help.contains(words), "{words} missing from --help");
    }
}
