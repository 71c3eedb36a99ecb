//! The `composer` binary as a process against mock-apiserver on a loopback socket: it
//! discovers the Composition, its revision and the in-process Function, starts the
//! controller of an XRD created after it started, composes an XR of it, and brings it to Ready once the composed resources
//! report Ready; SIGTERM stops it with 0; bad flags and a missing kubeconfig exit 2 with
//! the reason.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use composer::api::ANNOTATION_RUNTIME;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::ResourceExt as _;
use kube::api::{Api, ListParams, PostParams};
use mock_apiserver::{ApiServer, Config};
use serde_json::json;

use crate::fixture::{
    Cluster, X, is_true, object, resource, widget_resource, widgets_pipeline, xr, xr_resource, xrd,
};

const BIN: &str = env!("CARGO_BIN_EXE_composer");
/// The bound on every wait, in real time.
const WAIT: Duration = Duration::from_secs(30);
const N: usize = 2;

/// The binary's process, killed if the test ends before it is stopped, and its standard
/// error, read as it is written (so a full pipe never stops the process) and printed when
/// the test fails.
struct Process {
    child: Option<Child>,
    log: Option<std::thread::JoinHandle<String>>,
}

impl Process {
    fn start(command: &mut Command) -> Process {
        let mut child = command.stderr(Stdio::piped()).spawn().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let log = std::thread::spawn(move || {
            let mut log = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut log);
            log
        });
        Process {
            child: Some(child),
            log: Some(log),
        }
    }

    /// Everything the process wrote to standard error; it has ended.
    fn log(&mut self) -> String {
        self.log
            .take()
            .map(|log| log.join().unwrap_or_default())
            .unwrap_or_default()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            eprintln!("composer's standard error:\n{}", self.log());
        }
    }
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

/// Crossplane's kinds, the composed kind, a Function run in process, a Composition of two
/// Widgets and its valid revision: the objects the binary reads at start. The XRD comes
/// after the start (the binary's XRD watch starts its controller), and the XR CRD from the
/// binary.
async fn cluster(server: ApiServer) -> Cluster {
    let cluster = Cluster::new(server).await;
    let pp = PostParams::default();
    cluster
        .all(&resource(
            "pkg.crossplane.io",
            "v1",
            "Function",
            "functions",
        ))
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
    // A 1 s TTL: no watch on Widgets, so the requeue sees their Ready status.
    cluster
        .composition("widgets", &widgets_pipeline(N, "1s"))
        .await;
    cluster
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
    let cluster = cluster(server.clone()).await;
    let client = cluster.client.clone();

    let path = kubeconfig("compose", &url);
    let mut process = Process::start(
        Command::new(BIN)
            .arg("--kubeconfig")
            .arg(&path)
            .args([
                "--max-concurrent-reconciles=4",
                "--circuit-breaker-mode=eager",
            ])
            .env("RUST_LOG", "info")
            .stdout(Stdio::null()),
    );

    // The binary has read what it reads at start once its revision controller (started
    // after the XRDs are listed) has made revision 2.
    let composition: composer::api::Composition =
        Api::all(client.clone()).get("widgets").await.unwrap();
    let newest = format!(
        "widgets-{}",
        &composer::composite::composition_hash(&composition)[..7]
    );
    let revisions = Api::<composer::api::CompositionRevision>::all(client.clone());
    let revision = wait_for("the binary's revision", || async {
        revisions.get_opt(&newest).await.unwrap()
    })
    .await;
    // An XRD created after that: the binary's XRD watch applies its XR CRD and starts its
    // controller; then an XR can be created.
    cluster
        .all(&resource(
            X,
            "v2",
            "CompositeResourceDefinition",
            "compositeresourcedefinitions",
        ))
        .create(
            &PostParams::default(),
            &object(serde_json::to_value(xrd()).unwrap()),
        )
        .await
        .unwrap();
    let crds = Api::<CustomResourceDefinition>::all(client.clone());
    let crd = wait_for("the XR CRD", || async {
        crds.get_opt("xwidgets.example.org").await.unwrap()
    })
    .await;
    assert_eq!(crd.spec.names.kind, "XWidget");
    let xrs = cluster.api(&xr_resource());
    let created = xrs
        .create(&PostParams::default(), &xr("xr-0"))
        .await
        .unwrap();
    let uid = created.metadata.uid.unwrap();

    // The XR watch enqueues it; its reconcile composes the Widgets, named as core names
    // them (so a later reconcile that reads the XR before its references reach the cache
    // applies the same two, not two more).
    let widgets = cluster.all(&widget_resource());
    let composed = wait_for("the composed Widgets", || async {
        let items = widgets.list(&ListParams::default()).await.unwrap().items;
        (items.len() >= N).then_some(items)
    })
    .await;
    assert_eq!(composed.len(), N, "{composed:?}");
    for w in &composed {
        let id = &w.annotations()[composer::composite::ANNOTATION_COMPOSITION_RESOURCE_NAME];
        assert_eq!(
            w.name_any(),
            composer::composite::child_name("xr-0-", &uid, id)
        );
        assert_eq!(w.metadata.namespace.as_deref(), Some("default"));
        assert_eq!(w.data["spec"]["region"], "eu-west-1");
        assert_eq!(
            w.metadata.labels.as_ref().unwrap()["crossplane.io/composite"],
            "xr-0"
        );
    }
    // The binary's revision controller made revision 2 (the test made revision 1 by hand,
    // without the hash label), named by the Composition's hash; the XR uses the newest.
    assert_eq!(revision.spec.revision, 2);
    let xr = wait_for("the XR on the newest revision", || async {
        let xr = xrs.get("xr-0").await.unwrap();
        (xr.data["spec"]["crossplane"]["compositionRevisionRef"]["name"] == newest.as_str())
            .then_some(xr)
    })
    .await;
    let refs = xr.data["spec"]["crossplane"]["resourceRefs"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(refs, N);

    // The provider's part; the 1 s TTL requeue then finds them Ready.
    assert_eq!(cluster.mark_ready(&widget_resource()).await, N);
    wait_for("the XR to become Ready", || async {
        is_true(&xrs.get("xr-0").await.unwrap(), "Ready").then_some(())
    })
    .await;

    // Settled: within five windows of two seconds comes one in which the XR's status
    // writes are only the TTL's requeues (about one a second, more when the machine is busy
    // and requeues bunch up) and change nothing, not a loop of reconciles fed by the XR's
    // own watch events. Such a loop needs a write that changes the XR (a new
    // resourceVersion, so a watch event) in each turn, so no window of it is quiet. The
    // writes that settle the XR may fall in the first window: a status apply that changes
    // it (Ready is read a moment before the last condition lands) and the status Update
    // that follows a changed status.
    let mut windows = Vec::new();
    let settled = loop {
        let from = server.journal().last_seq();
        tokio::time::sleep(Duration::from_secs(2)).await;
        let writes: Vec<_> = server
            .journal()
            .since(from)
            .into_iter()
            .filter(|e| &*e.resource == "xwidgets/status")
            .collect();
        assert!(!writes.is_empty(), "the TTL requeues the XR");
        // An Update's outcome is unknown to the journal (`None`): it counts as a change.
        let changed = writes.iter().filter(|e| e.changed != Some(false)).count();
        eprintln!(
            "XR status writes in 2 s: {} ({changed} changed the XR)",
            writes.len()
        );
        windows.push((writes.len(), changed));
        if changed == 0 {
            break true;
        }
        if windows.len() == 5 {
            break false;
        }
    };
    assert!(
        settled,
        "the XR's status kept changing; (writes, changes) per 2 s: {windows:?}"
    );

    // SIGTERM: a clean stop, exit code 0.
    let mut child = process.child.take().unwrap();
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
    let log = process.log();
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

#[test]
fn print_crds_prints_the_four_open_crds_crossplane_s_kinds_need() {
    let out = run(&["--print-crds"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let crds: Vec<CustomResourceDefinition> = text
        .split("---\n")
        .filter(|d| !d.trim().is_empty())
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let names: Vec<_> = crds
        .iter()
        .map(|c| c.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "compositeresourcedefinitions.apiextensions.crossplane.io",
            "compositions.apiextensions.crossplane.io",
            "compositionrevisions.apiextensions.crossplane.io",
            "functions.pkg.crossplane.io",
        ]
    );
}
