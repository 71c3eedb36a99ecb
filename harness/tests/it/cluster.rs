//! `harness run --kubeconfig`: the cluster code path, against mock-apiserver, mock-cloud and
//! the provider started as separate processes, the way a cluster runs them. The test plays
//! the kubelet's one part the run needs: when the provider's Deployment is rolled, it stops
//! the provider process (SIGTERM) and starts a new one.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};

use crate::bins::binaries;
use crate::provider_process::{RESTART_PHASES, bucket_controller};

mod api_requests;
mod crossplane_core;
mod error_paths;
mod interrupt;
mod procs;
mod upjet_aws;

use api_requests::{api_requests_by, replica_clients};
use procs::{Proc, Provider, default_flags, free_port, listening, sigterm, spawn, wait_for};

/// The scenario of most of these tests: 20 Buckets in an account of their own, created,
/// held, and the provider restarted by rolling its Deployment.
fn scenario() -> String {
    [
        "\
apiVersion: harness/v1
name: cluster-path
description: the cluster code path, with a provider restart by rolling its Deployment
provider: {maxReconcileRate: 10, rateLimitModel: crossplane, pollInterval: 5s}
cloud:
  accounts:
    - name: team-a
  quotas:
    read: {burst: 100, perSecond: 50}
resources:
  - {name: bucket, kind: Bucket, count: 20, spec: {region: eu-west-1}, account: team-a}
",
        RESTART_PHASES,
    ]
    .concat()
}

/// mock-apiserver, mock-cloud and a provider as separate processes, the provider's
/// Deployment stored in the API server, and a kubelet stand-in.
struct Cluster {
    dir: PathBuf,
    kubeconfig: PathBuf,
    cloud_port: u16,
    metrics_port: u16,
    runtime: tokio::runtime::Runtime,
    client: kube::Client,
    /// A client of each of mock-apiserver's replicas (`--replicas`), each with its own
    /// journal; the one client when it runs one.
    replicas: Vec<kube::Client>,
    provider: Provider,
    running: Proc,
    _servers: (Proc, Proc),
}

/// The Deployments of `namespace`.
fn deployments(client: &kube::Client, namespace: &str) -> Api<DynamicObject> {
    Api::namespaced_with(
        client.clone(),
        namespace,
        &ApiResource::from_gvk(&GroupVersionKind::gvk("apps", "v1", "Deployment")),
    )
}

/// Creates the namespace `namespace` and in it the Deployment `name`, as a manifest would
/// deploy it as far as the harness reads it: one replica of one container `name` running
/// `image` with `args`, its pods' ServiceAccount `service_account` if any. The provider's
/// and Crossplane core's Deployments.
async fn deploy(
    client: &kube::Client,
    (namespace, name): (&str, &str),
    image: &str,
    service_account: Option<&str>,
    args: &[String],
) {
    let namespaces: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &ApiResource::from_gvk(&GroupVersionKind::gvk("", "v1", "Namespace")),
    );
    let ns = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}
    }))
    .unwrap();
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let mut pod = serde_json::json!({"containers": [{"name": name, "image": image, "args": args}]});
    if let Some(account) = service_account {
        pod["serviceAccountName"] = account.into();
    }
    let d = serde_json::from_value(serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod},
        },
    }))
    .unwrap();
    deployments(client, namespace)
        .create(&PostParams::default(), &d)
        .await
        .unwrap();
}

impl Cluster {
    fn start(name: &str) -> Cluster {
        Cluster::start_with(name, default_flags())
    }

    /// The stack with a provider started with `flags`.
    fn start_with(name: &str, flags: Vec<String>) -> Cluster {
        Cluster::start_stack(name, flags, false)
    }

    /// The stack with a provider started with `flags`; with `flow_control`, mock-apiserver
    /// runs API Priority and Fairness with the FlowSchema `loadtest-provider` that
    /// `harness flowschema` prints for the provider's ServiceAccount, the provider's
    /// kubeconfig impersonates that ServiceAccount (as a pod's token would name it), and
    /// every other request is `system:masters`'s (exempt).
    fn start_stack(name: &str, flags: Vec<String>, flow_control: bool) -> Cluster {
        let schema = flow_control
            .then(|| harness::run::flow_schema::manifest("loadtest-system", "provider"));
        Cluster::start_flow_control(name, flags, schema.as_deref(), &[])
    }

    /// The stack with a provider started with `flags`, and with `apf_config` (a FlowSchema
    /// `loadtest-provider` and what it needs), mock-apiserver in priority-and-fairness
    /// mode with `server_flags` (see [`Cluster::start_stack`]).
    fn start_flow_control(
        name: &str,
        flags: Vec<String>,
        apf_config: Option<&str>,
        server_flags: &[&str],
    ) -> Cluster {
        // The clean-up deletes Buckets created seconds before: with crossplane-runtime's
        // 30 s creation grace the provider would hold each one back (requeued on its
        // backoff) until 30 s after its create, the tests' longest wait. A test that sets
        // the flag keeps its own.
        let mut flags = flags;
        if !flags
            .iter()
            .any(|f| f.starts_with("--creation-grace-period"))
        {
            flags.push("--creation-grace-period=1s".to_owned());
        }
        let bin = binaries();
        let dir = std::env::temp_dir().join(format!("harness-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let kubeconfig = dir.join("kubeconfig");
        let crds = dir.join("crds.yaml");
        std::fs::write(&crds, provider::crd::crds_yaml().unwrap()).unwrap();
        let api_port = free_port();
        let mut api = Command::new(bin.join("mock-apiserver"));
        api.args(["--listen", &format!("127.0.0.1:{api_port}")])
            .arg("--write-kubeconfig")
            .arg(&kubeconfig)
            .arg("--crd")
            .arg(&crds);
        let mut provider_kubeconfig = kubeconfig.clone();
        if let Some(config) = apf_config {
            let schema = dir.join("flowschema.yaml");
            std::fs::write(&schema, config).unwrap();
            api.args(["--priority-and-fairness", "--apf-config"])
                .arg(&schema)
                .args(["--user", "admin", "--group", "system:masters"]);
            provider_kubeconfig = dir.join("provider-kubeconfig");
            std::fs::write(
                &provider_kubeconfig,
                format!(
                    "apiVersion: v1
kind: Config
clusters: [{{name: mock, cluster: {{server: \"http://127.0.0.1:{api_port}\"}}}}]
users: [{{name: provider, user: {{as: \"system:serviceaccount:loadtest-system:provider\"}}}}]
contexts: [{{name: provider, context: {{cluster: mock, user: provider, namespace: default}}}}]
current-context: provider
"
                ),
            )
            .unwrap();
        }
        api.args(server_flags);
        let api = spawn(&mut api, &dir.join("mock-apiserver.log"));
        let cloud_port = free_port();
        let cloud = spawn(
            Command::new(bin.join("mock-cloud"))
                .args(["--listen", &format!("127.0.0.1:{cloud_port}")]),
            &dir.join("mock-cloud.log"),
        );
        wait_for("the servers", Duration::from_secs(30), || {
            listening(api_port) && listening(cloud_port) && kubeconfig.exists()
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let client = runtime.block_on(async {
            let kc = kube::config::Kubeconfig::read_from(&kubeconfig).unwrap();
            let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
                .await
                .unwrap();
            kube::Client::try_from(config).unwrap()
        });
        // What ci/manifests deploys, as far as the run reads it: the provider's Deployment.
        runtime.block_on(deploy(
            &client,
            ("loadtest-system", "provider"),
            "loadtest/provider:dev",
            Some("provider"),
            &flags,
        ));
        let replicas = runtime.block_on(replica_clients(&client));
        let metrics_port = free_port();
        let mut provider = Provider {
            bin: bin.join("provider"),
            kubeconfig: provider_kubeconfig,
            cloud: format!("http://127.0.0.1:{cloud_port}"),
            metrics_port,
            logs: dir.clone(),
            starts: 0,
            flags,
        };
        let running = provider.start();
        Cluster {
            dir,
            kubeconfig,
            cloud_port,
            metrics_port,
            runtime,
            client,
            replicas,
            provider,
            running,
            _servers: (api, cloud),
        }
    }

    /// Runs `harness run` on `scenario` in cluster mode, playing the kubelet meanwhile: a
    /// new pod template means a new provider process. Returns result.json.
    fn run(&mut self, scenario: &str, extra: &[&str]) -> serde_json::Value {
        let (status, stdout, stderr) = self.run_status(scenario, extra);
        assert!(status.success(), "exit {status}\n{stdout}\n{stderr}");
        self.result()
    }

    /// The last run's `result.json`.
    fn result(&self) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(self.dir.join("out/result.json")).unwrap())
            .unwrap()
    }

    /// Runs `harness run` and returns its exit status, standard output and error.
    fn run_status(
        &mut self,
        scenario: &str,
        extra: &[&str],
    ) -> (std::process::ExitStatus, String, String) {
        self.harness("run", scenario, extra)
    }

    /// `harness SUBCOMMAND` (`run`, `calibrate`) on `scenario` against the stack, its
    /// reports in `out`, its standard output and error in `harness.out` and `harness.err`.
    fn harness_command(&self, subcommand: &str, scenario: &str, extra: &[&str]) -> Command {
        let path = self.dir.join("scenario.yaml");
        std::fs::write(&path, scenario).unwrap();
        let out = self.dir.join("out");
        let mut run = Command::new(env!("CARGO_BIN_EXE_harness"));
        run.arg(subcommand)
            .arg(&path)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args([
                "--cloud-url",
                &format!("http://127.0.0.1:{}", self.cloud_port),
            ])
            .args([
                "--provider-metrics-url",
                &format!("http://127.0.0.1:{}/metrics", self.metrics_port),
            ])
            .args(extra)
            .arg("--out")
            .arg(&out)
            .stdout(std::fs::File::create(self.dir.join("harness.out")).unwrap())
            .stderr(std::fs::File::create(self.dir.join("harness.err")).unwrap());
        run
    }

    /// Runs `harness SUBCOMMAND` (`run`, `calibrate`) on `scenario` against the stack, its
    /// reports in `out`; returns its exit status, standard output and error.
    fn harness(
        &mut self,
        subcommand: &str,
        scenario: &str,
        extra: &[&str],
    ) -> (std::process::ExitStatus, String, String) {
        let mut run = self.harness_command(subcommand, scenario, extra);
        let mut run = run.spawn().expect("harness starts");
        let template = |d: &DynamicObject| d.data.pointer("/spec/template").cloned();
        let deployments = deployments(&self.client, "loadtest-system");
        let mut last = template(&self.runtime.block_on(deployments.get("provider")).unwrap());
        // The kubelet stand-in reads the Deployment only when the run may roll it, so that
        // a run without restarts has no client but the harness and the provider.
        let rolls = scenario.contains("action: restart");
        let deadline = Instant::now() + Duration::from_secs(240);
        let status = loop {
            if let Some(status) = run.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "the run did not finish in time");
            if !rolls {
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
            if let Ok(d) = self.runtime.block_on(deployments.get("provider")) {
                let now = template(&d);
                if now != last {
                    last = now;
                    sigterm(&mut self.running);
                    self.running = self.provider.start();
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let read = |name: &str| std::fs::read_to_string(self.dir.join(name)).unwrap_or_default();
        (status, read("harness.out"), read("harness.err"))
    }

    fn secret_exists(&self, name: &str) -> bool {
        self.runtime.block_on(async {
            let secrets: Api<DynamicObject> = Api::namespaced_with(
                self.client.clone(),
                "loadtest-system",
                &kube::api::ApiResource::from_gvk(&GroupVersionKind::gvk("", "v1", "Secret")),
            );
            secrets.get_opt(name).await.unwrap().is_some()
        })
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        sigterm(&mut self.running);
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn calls(result: &serde_json::Value, phase: &str, action: &str) -> u64 {
    result["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == phase)
        .and_then(|p| p["calls"][action].as_u64())
        .unwrap_or(0)
}

#[test]
fn a_cluster_run_measures_separate_processes_and_rolls_the_provider() {
    let mut cluster = Cluster::start("cluster-journal");
    let result = cluster.run(&scenario(), &[]);
    assert_eq!(
        cluster.provider.starts, 2,
        "the restart phase rolled the Deployment once"
    );
    let run = &result["run"];
    assert_eq!(run["target"]["kind"], "cluster", "{run}");
    assert_eq!(run["provider_starts"], 2, "{run}");
    assert!(
        run["api_requests_measured_by"]
            .as_str()
            .unwrap()
            .starts_with("mock-apiserver's request journal"),
        "{run}"
    );
    assert_eq!(
        calls(&result, "create", "create"),
        20,
        "one cloud create per bucket"
    );
    assert!(
        calls(&result, "restart", "get") >= 20,
        "the new provider observed every bucket"
    );
    let provider_check = &result["provider"];
    assert!(
        provider_check["provider_cloud_calls"].as_u64().unwrap_or(0) > 0,
        "the provider's metrics were read across its restart: {provider_check}"
    );
    // The buckets' controller was busy, and its realised concurrency is read from the
    // scraped time spent reconciling, summed across the restart.
    let buckets = provider_check["concurrency"]
        .as_array()
        .and_then(|cs| {
            cs.iter().find(|c| {
                c["controller"]
                    .as_str()
                    .is_some_and(|n| n.contains("bucket"))
            })
        })
        .unwrap_or_else(|| panic!("the buckets' concurrency: {provider_check}"));
    assert!(buckets["busy_s"].as_f64().unwrap_or(0.0) > 0.0, "{buckets}");
    // controller-runtime's and client-go's names, scraped and summed across the restart.
    let controller = bucket_controller(provider_check);
    let reconciles: u64 = controller["reconciles"]
        .as_object()
        .map(|r| r.values().filter_map(serde_json::Value::as_u64).sum())
        .unwrap_or(0);
    assert!(reconciles >= 20, "{controller}");
    assert!(
        controller["queue_adds"].as_u64().unwrap_or(0) >= 20,
        "{controller}"
    );
    assert!(
        provider_check["api_requests"]["provider"]
            .as_u64()
            .unwrap_or(0)
            > 0,
        "rest_client_requests_total: {provider_check}"
    );
    // The journal counts the provider's User-Agent only: the kubelet stand-in's reads of
    // the Deployment (another client) and the harness's are not the provider's.
    let by = api_requests_by(&result);
    assert!(
        by.keys().all(|k| !k.ends_with("deployments.apps")),
        "{by:#?}"
    );
    assert!(by.contains_key("create events.events.k8s.io"), "{by:#?}");
    // The run deleted what it created: the buckets (their finalizers released by the
    // provider), then the namespace, the Secret and the ProviderConfig.
    assert!(!cluster.secret_exists("mock-cloud-team-a"));
}

/// A Deployment whose args disagree with the scenario's settings (no profile: this
/// workspace's provider, whose flags the harness knows) stops the run before it starts,
/// with exit 2 naming each flag; `--no-settings-check` runs it anyway and says so.
#[test]
fn a_deployment_whose_args_differ_from_the_scenario_is_refused_naming_each_flag() {
    let flags = [
        "--max-reconcile-rate=20",
        "--rate-limit-model=crossplane",
        "--poll-interval=7s",
    ]
    .map(str::to_owned)
    .to_vec();
    let mut cluster = Cluster::start_with("cluster-settings", flags);
    let (status, stdout, stderr) = cluster.run_status(&scenario(), &[]);
    assert_eq!(status.code(), Some(2), "{stdout}\n{stderr}");
    for named in [
        "--max-reconcile-rate=20 (the scenario says 10)",
        "--poll-interval=7s (the scenario says 5s)",
    ] {
        assert!(stderr.contains(named), "{named} not in {stderr}");
    }
    assert!(!stderr.contains("--rate-limit-model"), "{stderr}");
    assert!(
        !cluster.secret_exists("mock-cloud-team-a"),
        "nothing was created"
    );
    let scenario = scenario()
        .replace("  - {name: restart, action: restart, timeout: 60s}\n", "")
        .replace("count: 20", "count: 2")
        .replace("  - {check: apiRequests, window: 1s}\n", "")
        .replace("  - {check: cloudCalls, window: 1s}\n", "");
    let (status, stdout, stderr) = cluster.run_status(&scenario, &["--no-settings-check"]);
    assert!(status.code() != Some(2), "{stdout}\n{stderr}");
    let result: serde_json::Value = cluster.result();
    let notes = result["run"]["notes"].to_string();
    assert!(notes.contains("(--no-settings-check)"), "{notes}");
}
