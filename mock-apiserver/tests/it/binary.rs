//! The `mock-apiserver` binary: flags, kubeconfig, preloaded CRDs, graceful shutdown.

use std::process::Stdio;
use std::time::Duration;

use kube::api::Api;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use crate::support::{Bucket, bucket_crd_yaml, count, create_bucket};

const BOUND: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_preloads_crds_writes_a_kubeconfig_and_stops_cleanly_on_sigterm() {
    let dir = std::env::temp_dir().join(format!("mock-apiserver-binary-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (crd, kubeconfig) = (dir.join("crd.yaml"), dir.join("kubeconfig"));
    std::fs::write(&crd, bucket_crd_yaml()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mock-apiserver"))
        .args(["--listen", "127.0.0.1:0", "--write-kubeconfig"])
        .arg(&kubeconfig)
        .arg("--crd")
        .arg(&crd)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(BOUND, stdout.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        first.starts_with("mock-apiserver listening on http://127.0.0.1:"),
        "{first}"
    );

    let text = std::fs::read_to_string(&kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(
        serde_saphyr::from_str(&text).unwrap(),
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        first.rsplit(' ').next().unwrap(),
        config.cluster_url.to_string().trim_end_matches('/')
    );
    let buckets: Api<Bucket> = Api::default_namespaced(kube::Client::try_from(config).unwrap());
    create_bucket(&buckets, "b1", "eu").await;
    assert_eq!(count(&buckets).await, 1);

    let pid = child.id().unwrap().to_string();
    let killed = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .await
        .unwrap();
    assert!(killed.success());
    let status = tokio::time::timeout(BOUND, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "a clean shutdown exits 0: {status}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn help_explains_every_flag_and_bad_setup_exits_2() {
    let help = Command::new(env!("CARGO_BIN_EXE_mock-apiserver"))
        .arg("--help")
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--listen",
        "--write-kubeconfig",
        "--crd",
        "--qps",
        "--burst",
        "--max-in-flight",
        "--watch-history",
        "--bookmark-interval",
        "--gc",
    ] {
        assert!(text.contains(flag), "--help mentions {flag}:\n{text}");
    }
    let missing = Command::new(env!("CARGO_BIN_EXE_mock-apiserver"))
        .args(["--listen", "127.0.0.1:0", "--crd", "/nonexistent/crd.yaml"])
        .output()
        .await
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("reading /nonexistent/crd.yaml"));
}
