//! `harness sweep --kubernetes-job`: the ConfigMap and the Indexed Job it writes (one
//! completion per point, the index from the downward API, the sweep's flags passed
//! through, the scenario mounted), applied to a mock-apiserver with `--apply`; and, with
//! feature `aws`, two "pods" run as local processes with `JOB_COMPLETION_INDEX` that leave
//! their results in mock-cloud's S3, collected from there into one report.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ConfigMap;

use super::sweep::{SCENARIO, scenario_in};

/// A fresh directory for test `name`, with the sweep tests' scenario in it.
fn setup(name: &str) -> (PathBuf, PathBuf) {
    scenario_in(&format!("sweep-job-{name}"))
}

fn harness(file: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("sweep")
        .arg(file)
        .args(args)
        .env_remove("JOB_COMPLETION_INDEX")
        .output()
        .expect("runs")
}

/// The ConfigMap and the Job of a `--kubernetes-job`'s output.
fn manifests(yaml: &str) -> (ConfigMap, Job) {
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(yaml).unwrap();
    let docs: Vec<_> = docs.into_iter().filter(|d| !d.is_null()).collect();
    assert_eq!(docs.len(), 2, "{yaml}");
    (
        serde_json::from_value(docs[0].clone()).unwrap(),
        serde_json::from_value(docs[1].clone()).unwrap(),
    )
}

const DEFINITION: [&str; 8] = [
    "--vary",
    "provider.maxReconcileRate=2,5,20",
    "--set",
    "phases.hold.duration=1m",
    "--slo",
    "timeToReady.p99<=2m",
    "--budget",
    "cloudCalls.10s<=1000",
];

#[test]
fn the_job_has_a_completion_per_point_its_index_from_the_downward_api_and_the_sweeps_flags() {
    let (file, dir) = setup("shape");
    let out = dir.join("out");
    let mut args = DEFINITION.to_vec();
    args.extend([
        "--kubernetes-job",
        "--jobs",
        "2",
        "--timeout",
        "600",
        "--namespace",
        "sweeps",
        "--results",
        "s3://sweeps/r-1",
        "--s3-endpoint",
        "http://mock-cloud.loadtest-system:8080",
        "--s3-credentials-secret",
        "sweep-s3",
        "--out",
        out.to_str().unwrap(),
    ]);
    let run = harness(&file, &args);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // Written to standard output and to OUT/job.yaml alike; nothing runs.
    assert_eq!(
        std::fs::read_to_string(out.join("job.yaml")).unwrap(),
        stdout
    );
    assert!(!out.join("points").exists());
    let (cm, job) = manifests(&stdout);
    assert_eq!(cm.metadata.name.as_deref(), Some("sweep-small-sweep"));
    assert_eq!(cm.metadata.namespace.as_deref(), Some("sweeps"));
    assert_eq!(
        cm.data.unwrap()["sweep-small.yaml"],
        SCENARIO,
        "the scenario file, as it is"
    );
    assert_eq!(job.metadata.name.as_deref(), Some("sweep-small-sweep"));
    let spec = job.spec.unwrap();
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!(spec.completions, Some(3), "one completion per point");
    assert_eq!(spec.parallelism, Some(2));
    assert_eq!(spec.backoff_limit_per_index, Some(1));
    let rules = spec.pod_failure_policy.unwrap().rules;
    assert_eq!(rules[0].action, "FailIndex");
    assert_eq!(rules[0].on_exit_codes.as_ref().unwrap().values, [1, 2]);
    let pod = spec.template.spec.unwrap();
    assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
    assert_eq!(pod.active_deadline_seconds, Some(600));
    let c = &pod.containers[0];
    assert_eq!(c.image.as_deref(), Some("loadtest/harness:dev"));
    let mut expected = vec!["sweep", "/etc/harness/sweep/sweep-small.yaml"];
    expected.extend(DEFINITION);
    expected.extend([
        "--out",
        "/tmp/sweep",
        "--results",
        "s3://sweeps/r-1",
        "--s3-endpoint",
        "http://mock-cloud.loadtest-system:8080",
    ]);
    assert_eq!(c.args.as_deref().unwrap(), expected);
    let env = c.env.as_deref().unwrap();
    let index = env
        .iter()
        .find(|e| e.name == "JOB_COMPLETION_INDEX")
        .expect("the index wired");
    let field = index
        .value_from
        .as_ref()
        .unwrap()
        .field_ref
        .as_ref()
        .unwrap();
    assert_eq!(
        field.field_path,
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    );
    let secret = c.env_from.as_deref().unwrap()[0]
        .secret_ref
        .as_ref()
        .unwrap();
    assert_eq!(secret.name, "sweep-s3");
    // The ConfigMap mounted where the args read the scenario; scratch space for the output.
    let mounts = c.volume_mounts.as_deref().unwrap();
    let volumes = pod.volumes.unwrap();
    let scenario = mounts.iter().find(|m| m.name == "scenario").unwrap();
    assert_eq!(scenario.mount_path, "/etc/harness/sweep");
    let source = volumes.iter().find(|v| v.name == "scenario").unwrap();
    assert_eq!(
        source.config_map.as_ref().unwrap().name,
        "sweep-small-sweep"
    );
    assert!(mounts.iter().any(|m| m.mount_path == "/tmp"));
    let resources = c.resources.as_ref().unwrap();
    assert_eq!(resources.requests.as_ref().unwrap()["memory"].0, "1Gi");
    assert_eq!(resources.limits.as_ref().unwrap()["memory"].0, "1Gi");
    let security = c.security_context.as_ref().unwrap();
    assert_eq!(security.read_only_root_filesystem, Some(true));
}

#[test]
fn results_on_a_volume_mount_the_claim_and_write_under_the_jobs_name() {
    let (file, _) = setup("volume");
    let run = harness(
        &file,
        &[
            "--vary",
            "seed=1,2",
            "--kubernetes-job",
            "--results-volume",
            "sweep-results",
            "--job-name",
            "Seeds_1",
        ],
    );
    assert_eq!(run.status.code(), Some(0));
    let (_, job) = manifests(&String::from_utf8_lossy(&run.stdout));
    assert_eq!(job.metadata.name.as_deref(), Some("seeds-1"));
    assert_eq!(job.metadata.namespace, None);
    let spec = job.spec.unwrap();
    assert_eq!(spec.parallelism, Some(2), "every point at once by default");
    let pod = spec.template.spec.unwrap();
    let args = pod.containers[0].args.clone().unwrap();
    assert_eq!(args[args.len() - 2..], ["--out", "/results/seeds-1"]);
    let claim = pod
        .volumes
        .unwrap()
        .into_iter()
        .find_map(|v| v.persistent_volume_claim)
        .unwrap();
    assert_eq!(claim.claim_name, "sweep-results");
    assert!(
        pod.containers[0]
            .volume_mounts
            .as_deref()
            .unwrap()
            .iter()
            .any(|m| m.name == "results" && m.mount_path == "/results")
    );
}

#[test]
fn a_job_without_a_place_for_results_and_results_without_points_apart_are_refused() {
    let (file, _) = setup("refused");
    for (args, expected) in [
        (
            vec!["--vary", "seed=1,2", "--kubernetes-job"],
            "--kubernetes-job needs --results s3://BUCKET/PREFIX or --results-volume CLAIM",
        ),
        (
            vec!["--vary", "seed=1,2", "--results", "s3://sweeps/x"],
            "--results is where points run apart leave their results",
        ),
        (
            vec!["--vary", "seed=1,2", "--collect", "--results", "/data"],
            "/data is not an S3 location: expected s3://BUCKET/PREFIX",
        ),
        (vec!["--vary", "seed=1,2", "--apply"], "--kubernetes-job"),
    ] {
        let run = harness(&file, &args);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

#[cfg(not(feature = "aws"))]
#[test]
fn results_in_s3_need_the_aws_feature_and_say_so() {
    let (file, dir) = setup("no-aws");
    let out = dir.join("out");
    let run = harness(
        &file,
        &[
            "--vary",
            "seed=1,2",
            "--collect",
            "--results",
            "s3://sweeps/x",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("built without: build it with feature `aws`"),
        "{stderr}"
    );
}

/// A runtime whose worker threads serve while the test blocks on child processes.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn apply_creates_the_configmap_and_the_job_through_the_kubeconfig() {
    let (file, dir) = setup("apply");
    let rt = runtime();
    let port = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = mock_apiserver::ApiServer::new(mock_apiserver::Config::default());
        tokio::spawn(mock_apiserver::serve(
            listener,
            server,
            std::future::pending(),
        ));
        port
    });
    let kubeconfig = dir.join("kubeconfig");
    mock_apiserver::write_kubeconfig(&kubeconfig, &format!("http://127.0.0.1:{port}")).unwrap();
    let mut args = DEFINITION.to_vec();
    args.extend([
        "--kubernetes-job",
        "--apply",
        "--kubeconfig",
        kubeconfig.to_str().unwrap(),
        "--results",
        "s3://sweeps/r-1",
    ]);
    let run = harness(&file, &args);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        stdout.contains(
            "configmap/sweep-small-sweep and job.batch/sweep-small-sweep applied in namespace default: 3 points, 3 at once"
        ),
        "{stdout}"
    );
    let (cm, job) = rt.block_on(async {
        let kc = kube::config::Kubeconfig::read_from(&kubeconfig).unwrap();
        let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap();
        let client = kube::Client::try_from(config).unwrap();
        let cm = kube::Api::<ConfigMap>::namespaced(client.clone(), "default")
            .get("sweep-small-sweep")
            .await
            .unwrap();
        let job = kube::Api::<Job>::namespaced(client, "default")
            .get("sweep-small-sweep")
            .await
            .unwrap();
        (cm, job)
    });
    assert_eq!(cm.data.unwrap()["sweep-small.yaml"], SCENARIO);
    let spec = job.spec.unwrap();
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!(spec.completions, Some(3));
    assert_eq!(spec.parallelism, Some(3));
    let managers: Vec<String> = job
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    assert_eq!(managers, ["harness-sweep"], "a server-side apply");
    // Applied again unchanged: the same objects, no error.
    let again = harness(&file, &args);
    assert_eq!(again.status.code(), Some(0));
}

#[cfg(feature = "aws")]
mod s3;
