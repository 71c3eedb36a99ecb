//! `cargo xtask kind` end to end with its tools replaced by small shell scripts written
//! into a scratch directory put first on PATH: docker, kind, kubectl, cargo and the
//! harness each append their command line to a calls file and act just enough for the
//! run to go on (kind writes a kubeconfig, kubectl's port-forwards and log followers stay
//! up until killed, the harness writes junit.xml). The forwarded ports are answered by
//! the test itself. What is checked is the run's own logic: the commands and their order,
//! the files it leaves, the cleanup, the exit code, and that nothing it started is left
//! running.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::env::{Env, INT, Interrupt};
use super::session::{self, Ctx, Timing};
use super::supervise::Policy;
use super::{Settings, args_patch};
use crate::step::{self, WorkDir};

mod images;
mod runs;
mod settings;
mod stubs;

use stubs::answering_port;

/// A scratch directory with the stubs, the calls file and the run's OUT_DIR, and the
/// environment of a run against them.
struct Fake {
    dir: WorkDir,
    vars: BTreeMap<String, String>,
    cloud_port: u16,
    metrics_port: u16,
}

impl Fake {
    /// Stubs of every tool; the forwarded ports answered with 200.
    fn new() -> Fake {
        let dir = WorkDir::create("xtask-kind-test").unwrap();
        let bin = dir.0.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(dir.0.join("state")).unwrap();
        stubs::write(&bin);
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
        let d = |p: &str| dir.0.join(p).display().to_string();
        let vars: BTreeMap<String, String> = [
            ("PATH", path),
            ("STUB_BIN", bin.display().to_string()),
            ("STUB_CALLS", d("calls")),
            ("STUB_PIDS", d("pids")),
            ("STUB_STATE", d("state")),
            ("HARNESS", d("bin/harness")),
            ("OUT_DIR", d("out")),
            ("CLUSTER_NAME", "stub".to_owned()),
            ("WAIT_TIMEOUT", "30s".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let mut fake = Fake {
            dir,
            vars,
            cloud_port: answering_port(),
            metrics_port: answering_port(),
        };
        fake.ports(fake.cloud_port, fake.metrics_port);
        fake
    }

    fn set(&mut self, name: &str, value: &str) -> &mut Fake {
        self.vars.insert(name.to_owned(), value.to_owned());
        self
    }

    fn ports(&mut self, cloud: u16, metrics: u16) {
        self.set("CLOUD_PORT", &cloud.to_string());
        self.set("METRICS_PORT", &metrics.to_string());
    }

    fn out(&self) -> PathBuf {
        self.dir.0.join("out")
    }

    /// `cargo xtask kind scenarios/smoke.yaml --set provider.maxReconcileRate=7` with fast
    /// restarts and waits; its exit code (`Err`: a usage error, the message).
    fn run(&self, interrupt: &Interrupt) -> Result<i32, String> {
        let env = Env::fixed(self.vars.clone());
        let root = step::workspace_root();
        let flags = ["--set".to_owned(), "provider.maxReconcileRate=7".to_owned()];
        let settings = Settings::new(&root, "scenarios/smoke.yaml", &flags, &env)
            .map_err(|e| e.to_string())?;
        let ctx = Ctx {
            root: &root,
            env: &env,
            interrupt,
            timing: &fast(),
        };
        session::execute(&ctx, &settings).map_err(|e| e.to_string())
    }

    /// The calls, one a line; the temporary kubeconfig's path replaced by `$KUBECONFIG`.
    fn calls(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.dir.0.join("calls")).unwrap_or_default();
        let kubeconfig = self.read_state("harness-kubeconfig");
        text.lines()
            .map(|l| match &kubeconfig {
                Some(k) => l.replace(k.as_str(), "$KUBECONFIG"),
                None => l.to_owned(),
            })
            .collect()
    }

    /// The calls of the steps, without the background ones (whose order with the steps
    /// varies).
    fn steps(&self) -> Vec<String> {
        self.calls()
            .into_iter()
            .filter(|c| !c.contains(" port-forward ") && !c.contains(" logs --follow "))
            .collect()
    }

    fn read_state(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.0.join("state").join(name))
            .ok()
            .map(|s| s.trim().to_owned())
    }

    /// The processes the stubs left up (port-forwards, log followers) that still run.
    fn still_running(&self) -> Vec<String> {
        let pids = std::fs::read_to_string(self.dir.0.join("pids")).unwrap_or_default();
        pids.lines()
            .filter(|pid| Path::new(&format!("/proc/{pid}")).exists())
            .map(str::to_owned)
            .collect()
    }

    fn read_out(&self, file: &str) -> String {
        std::fs::read_to_string(self.out().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
    }
}

/// The text of every file under `dir`.
fn all_text(dir: &Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            text.push_str(&all_text(&path));
        } else {
            text.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
    text
}

/// A loopback port nothing listens on.
fn silent_port() -> u16 {
    crate::net::free_port().unwrap()
}

/// The standard timing, made fast: restarts after 10 ms, 3 short runs (under 5 s) in a
/// row give a port-forward up, 40 tries 50 ms apart for a forwarded port.
fn fast() -> Timing {
    let ms = Duration::from_millis;
    Timing {
        forward: Policy {
            delay: ms(10),
            max_delay: ms(40),
            healthy_after: Duration::from_secs(5),
            max_short_runs: Some(3),
        },
        follow: Policy {
            delay: ms(10),
            max_delay: ms(10),
            healthy_after: Duration::ZERO,
            max_short_runs: None,
        },
        http_attempts: 40,
        http_wait: ms(50),
        http_timeout: ms(500),
        settle: ms(100),
        grace: Duration::from_secs(5),
    }
}

const PATCH: &str = r#"kubectl -n loadtest-system patch deployment provider --type=json -p [{"op":"replace","path":"/spec/template/spec/containers/0/args","value":["--max-reconcile-rate=7","--poll-interval=20s"]}]"#;

/// The step calls of a run on a new cluster from the harness's validation to its run.
fn steps_to_the_harness(f: &Fake) -> Vec<String> {
    let out = f.out().display().to_string();
    let (cloud, metrics) = (f.cloud_port, f.metrics_port);
    [
        "harness validate scenarios/smoke.yaml",
        "harness provider-args scenarios/smoke.yaml --set provider.maxReconcileRate=7 --json",
        "docker build --file ci/docker/provider.Dockerfile --tag loadtest/provider:dev .",
        "docker build --file ci/docker/mock-cloud.Dockerfile --tag loadtest/mock-cloud:dev .",
        "kind get clusters",
        "kind create cluster --name stub --config ci/kind/cluster.yaml --wait 120s",
        "kind export kubeconfig --name stub",
        "kubectl version",
        "kind version",
        "kind load docker-image --name stub loadtest/provider:dev loadtest/mock-cloud:dev",
        "kubectl apply -f ci/manifests/crds/",
        "kubectl wait --for condition=established --timeout=60s -f ci/manifests/crds/",
        "kubectl apply -k ci/manifests",
        PATCH,
        "kubectl -n loadtest-system rollout status deployment/mock-cloud --timeout=30s",
        "kubectl -n loadtest-system rollout status deployment/provider --timeout=30s",
        &format!(
            "harness run scenarios/smoke.yaml --kubeconfig $KUBECONFIG --cloud-url http://127.0.0.1:{cloud} \
             --provider-cloud-url http://mock-cloud.loadtest-system.svc:8080 \
             --provider-metrics-url http://127.0.0.1:{metrics}/metrics \
             --provider-deployment loadtest-system/provider --out {out} --set provider.maxReconcileRate=7"
        ),
    ]
    .map(str::to_owned)
    .to_vec()
}

/// The cleanup's calls once the cluster exists.
fn collecting() -> Vec<String> {
    let logs = "--all-containers --timestamps --pod-running-timeout=2s --previous";
    vec![
        "kubectl -n loadtest-system get deployments,replicasets,pods,services,events -o wide"
            .to_owned(),
        "kubectl -n loadtest-system describe deployments,pods".to_owned(),
        format!("kubectl -n loadtest-system logs deployment/provider {logs}"),
        format!("kubectl -n loadtest-system logs deployment/mock-cloud {logs}"),
    ]
}

/// The cluster's end after the harness ran: its logs exported into the output, then deleted.
fn teardown(f: &Fake) -> Vec<String> {
    vec![
        format!(
            "kind export logs --name stub {}/logs/kind",
            f.out().display()
        ),
        "kind delete cluster --name stub".to_owned(),
    ]
}

/// Every step of a run whose harness ran to its end: up to it, the logs, the teardown.
fn whole_run(f: &Fake) -> Vec<String> {
    [steps_to_the_harness(f), collecting(), teardown(f)].concat()
}

fn concat(parts: &[&[String]], more: &[&str]) -> Vec<String> {
    let mut all: Vec<String> = parts.concat();
    all.extend(more.iter().map(|s| (*s).to_owned()));
    all
}

/// The background calls, sorted.
fn background(f: &Fake) -> Vec<String> {
    let mut calls: Vec<String> = f
        .calls()
        .into_iter()
        .filter(|c| c.contains(" port-forward ") || c.contains(" logs --follow "))
        .collect();
    calls.sort();
    calls.dedup();
    calls
}

fn expected_background(f: &Fake) -> Vec<String> {
    let follow = |app: &str| {
        format!(
            "kubectl -n loadtest-system logs --follow --selector app.kubernetes.io/name={app} \
             --all-containers --prefix --timestamps --tail=-1 --max-log-requests=4"
        )
    };
    let forward = |app: &str, port: u16| {
        format!("kubectl -n loadtest-system port-forward --address 127.0.0.1 svc/{app} {port}:8080")
    };
    let mut calls = vec![
        follow("mock-cloud"),
        follow("provider"),
        forward("mock-cloud", f.cloud_port),
        forward("provider", f.metrics_port),
    ];
    calls.sort();
    calls
}
