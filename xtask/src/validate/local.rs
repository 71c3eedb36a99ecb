//! The containers of ci/manifests run as local processes, against a mock-apiserver and
//! mock-cloud on loopback.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::need::{self, report};
use super::pods;
use super::validation::Validation;
use crate::files::{files_under, io_error, read, write};
use crate::net::{free_port, http_get, probe};
use crate::step::{Error, Result};

impl Validation<'_> {
    /// the rendered Deployments give them ([`pods`]), to check what only a cluster would
    /// otherwise show: that the flags and env parse, that the probe paths answer 200 on the
    /// container ports, that the provider reaches mock-cloud through the endpoint in its
    /// env and signs in with the default ProviderConfig's Secret, that a Bucket becomes
    /// Ready, that SIGTERM stops the provider cleanly within the pod's grace period, and
    /// that every API request the provider made in all that is allowed by the RBAC the
    /// manifests bind to its ServiceAccount (read from mock-apiserver's request journal;
    /// mock-apiserver itself authorizes nothing). Scratch files, logs included, in `dir`.
    pub(super) fn pods(&self, dir: &Path, stack: &[Value]) -> Result {
        let (cloud_port, metrics_port) = (free_port()?, free_port()?);
        let (processes, grace) =
            pods::processes(stack, dir, cloud_port, metrics_port).map_err(Error::Failed)?;
        for p in &processes {
            for (file, text) in &p.files {
                if let Some(parent) = file.parent() {
                    fs::create_dir_all(parent).map_err(|e| io_error(parent, e))?;
                }
                write(file, text)?;
            }
        }
        let _server = self.start_apiserver(dir, &[])?;
        let k = |args: &[&str], what: &str| self.succeed(self.kubectl_in(dir, args), what);
        k(
            &["apply", "-f", "ci/manifests/crds/"],
            "kubectl apply of the CRDs",
        )?;
        k(
            &[
                "wait",
                "--for",
                "condition=established",
                "--timeout=30s",
                "-f",
                "ci/manifests/crds/",
            ],
            "the CRDs established",
        )?;
        let stack_file = self.work.join("stack.yaml").display().to_string();
        k(&["apply", "-f", &stack_file], "kubectl apply of the stack")?;
        let kubeconfig =
            need::document(&read(&dir.join("kubeconfig"))?, "kubeconfig").map_err(Error::Failed)?;
        let server = str_of_value(&kubeconfig["clusters"][0]["cluster"]["server"]).to_owned();
        let journal = |since: u64| -> Result<Vec<Value>> {
            let (status, body) = http_get(&server, &format!("/mock/v1/requests?since={since}"))
                .map_err(|e| Error::Failed(format!("mock-apiserver's journal: {e}")))?;
            let json: Value = serde_json::from_slice(&body)
                .map_err(|e| Error::Failed(format!("mock-apiserver's journal ({status}): {e}")))?;
            Ok(json["entries"].as_array().cloned().unwrap_or_default())
        };

        let mut running = Vec::new();
        let mut first = 0;
        for p in &processes {
            if p.name == "provider" {
                // The journal's entries from here on are the provider's and kubectl's.
                first = journal(0)?
                    .last()
                    .and_then(|e| e["seq"].as_u64())
                    .unwrap_or(0);
            }
            let binary = self.binary(p.name)?;
            let env: Vec<String> = p.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
            println!(
                "{}: {} {} {}",
                p.name,
                env.join(" "),
                binary.display(),
                p.args.join(" ")
            );
            let args: Vec<&str> = p.args.iter().map(String::as_str).collect();
            running.push(self.spawn(
                &binary,
                &args,
                &p.env,
                &dir.join(format!("{}.log", p.name)),
            )?);
            for path in &p.probes {
                probe(p.name, p.port, path)?;
                println!("{} probe {path}: 200", p.name);
            }
        }

        k(
            &["create", "namespace", "harness-pods"],
            "kubectl create namespace",
        )?;
        let bucket = dir.join("bucket.yaml");
        write(
            &bucket,
            "apiVersion: mockcloud.example.org/v1alpha1\nkind: Bucket\n\
             metadata: {name: pods-check, namespace: harness-pods}\n\
             spec:\n  forProvider: {region: eu-west-1}\n  providerConfigRef: {name: default}\n",
        )?;
        k(
            &["apply", "-f", &bucket.display().to_string()],
            "kubectl apply of a Bucket",
        )?;
        k(
            &[
                "-n",
                "harness-pods",
                "wait",
                "--for=condition=Ready",
                "--timeout=30s",
                "bucket/pods-check",
            ],
            "the Bucket did not become Ready",
        )?;
        println!("a Bucket became Ready through the default ProviderConfig and mock-cloud");

        let provider = &mut running[1].0;
        let pid = provider.id().to_string();
        self.succeed(self.command("kill", &["-TERM", &pid]), "kill -TERM")?;
        let mut exited = None;
        for _ in 0..grace * 10 {
            exited = provider
                .try_wait()
                .map_err(|e| Error::Failed(format!("the provider: {e}")))?;
            if exited.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        match exited {
            None => {
                return Err(Error::Failed(format!(
                    "the provider outlived its {grace}s grace period after SIGTERM"
                )));
            }
            Some(status) if !status.success() => {
                return Err(Error::Failed(format!(
                    "the provider exited with {status} after SIGTERM"
                )));
            }
            Some(_) => {}
        }
        println!("SIGTERM: the provider stopped cleanly (exit 0) within {grace}s");

        // Least privilege, as far as a run goes.
        println!("{}", report(pods::check_rbac(stack, &journal(first)?))?);
        Ok(())
    }
}

fn str_of_value(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// The last 20 lines of each log in `dir`, each line prefixed with its file's name.
pub(super) fn log_tails(dir: &Path) -> String {
    let mut logs: Vec<PathBuf> = files_under(dir, ".log").unwrap_or_default();
    logs.sort();
    let mut out = String::new();
    for log in logs {
        let text = fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let name = log.file_name().unwrap_or_default().to_string_lossy();
        for line in &lines[lines.len().saturating_sub(20)..] {
            out.push_str(&format!("\n  {name}: {line}"));
        }
    }
    out
}
