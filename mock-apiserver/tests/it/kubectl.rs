//! kubectl, a client nobody here wrote, against the server on a loopback socket.
//!
//! Every test starts its own server on a free port, writes its own kubeconfig and uses
//! a fresh discovery cache; long-running commands are bounded by `--request-timeout`
//! or `--timeout`, and waits for output are bounded too.

mod built_in;
mod custom_resources;

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use kube::api::Api;
use mock_apiserver::{ApiServer, Config};
use tokio::process::Command;

use crate::support::{Bucket, Socket, bucket_crd_yaml};

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
                .any(|e| e.verb == mock_apiserver::Verb::Watch && &*e.resource == resource)
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
