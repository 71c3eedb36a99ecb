//! Step 2: the manifests applied with `kubectl apply --dry-run=server` to a mock-apiserver
//! on loopback, the provider's args patch of `cargo xtask kind`, then the containers as
//! local processes.

use std::fs;
use std::path::Path;

use serde_json::Value;

use super::local::log_tails;
use super::manifests;
use super::validation::Validation;
use crate::files::{files_under, io_error, relative, write};
use crate::step::{Error, Result};

impl Validation<'_> {
    /// Step 2: the server dry runs against mock-apiserver, the args patch, and the
    /// containers as local processes.
    pub(super) fn server_checks(&self, stack: &[Value], upjet: &[Value]) -> Result {
        let (steps, work) = (self.steps, self.work);
        steps.step("kubectl apply --dry-run=server against mock-apiserver");
        let mut crds = files_under(&self.root.join("ci/manifests/crds"), ".yaml")?;
        crds.sort();
        let crds: Vec<String> = crds.iter().map(|c| relative(self.root, c)).collect();
        let server = self.start_apiserver(work, &crds)?;
        // As on a real server, a dry run creates no namespace for the objects inside it.
        self.succeed(
            self.kubectl(&["create", "namespace", manifests::NAMESPACE]),
            "kubectl create namespace",
        )?;
        self.dry_run("stack.yaml", stack.len(), "the server dry run")?;
        self.nothing_stored(work, "deployments")?;
        // The custom resources' schemas are checked by that dry run: prove that a broken
        // ProviderConfig is refused, not pruned or let through.
        let broken = manifests::broken_provider_configs(stack)
            .ok_or_else(|| Error::Failed("no ProviderConfig default in ci/manifests".to_owned()))?;
        for (i, (pc, expected)) in broken.iter().enumerate() {
            let file = work.join(format!("broken-{i}.json"));
            write(&file, &pc.to_string())?;
            let file = file.display().to_string();
            let out = self.output(
                self.kubectl(&["apply", "--dry-run=server", "-f", &file]),
                "kubectl apply",
            )?;
            let stderr = String::from_utf8_lossy(&out.stderr);
            if out.status.success() || !stderr.contains(expected) {
                return Err(Error::Failed(format!(
                    "the dry run must refuse a ProviderConfig with {expected} (its CRD's schema): \
                     exit {}, {}{}",
                    out.status,
                    String::from_utf8_lossy(&out.stdout),
                    stderr.trim_end()
                )));
            }
            println!(
                "refused, as it must be: {}",
                stderr.trim_end().lines().last().unwrap_or_default()
            );
        }

        steps.step(
            "kubectl apply --dry-run=server of ci/examples/provider-upjet-aws (its ProviderConfig left out: only the provider's CRDs serve it)",
        );
        let served = manifests::served_by_mock_apiserver(upjet);
        write(&work.join("upjet-served.yaml"), &manifests::stream(&served))?;
        println!(
            "{} of {} objects served by mock-apiserver",
            served.len(),
            upjet.len()
        );
        self.dry_run(
            "upjet-served.yaml",
            served.len(),
            "the example's server dry run",
        )?;

        steps.step("cargo xtask kind's args patch on the applied provider Deployment");
        let stack_file = work.join("stack.yaml").display().to_string();
        self.succeed(self.kubectl(&["apply", "-f", &stack_file]), "kubectl apply")?;
        let ns = manifests::NAMESPACE;
        let args = r#"["--max-reconcile-rate=20","--poll-interval=30s"]"#;
        let patch = crate::kind::args_patch(args).map_err(Error::Failed)?;
        print!(
            "{}",
            self.succeed(
                self.kubectl(&crate::kind::patch_command(ns, &patch)),
                "kubectl patch",
            )?
        );
        let jsonpath = |path: &str| {
            self.succeed(
                self.kubectl(&[
                    "-n",
                    ns,
                    "get",
                    "deployment",
                    "provider",
                    "-o",
                    &format!("jsonpath={path}"),
                ]),
                "kubectl get deployment provider",
            )
        };
        let applied = jsonpath("{.spec.template.spec.containers[0].args}")?;
        let endpoint = jsonpath(
            r#"{.spec.template.spec.containers[0].env[?(@.name=="PROVIDER_CLOUD_ENDPOINT")].value}"#,
        )?;
        if applied != args {
            return Err(Error::Failed(format!("args after the patch: {applied}")));
        }
        if endpoint != "http://mock-cloud.loadtest-system.svc:8080" {
            return Err(Error::Failed(format!("env lost by the patch: {endpoint}")));
        }
        println!("args replaced, env kept");
        print!(
            "{}",
            self.succeed(
                self.kubectl(&["-n", ns, "rollout", "restart", "deployment/provider"]),
                "kubectl rollout restart",
            )?
        );
        drop(server);

        steps.step("the containers' command lines, run as local processes");
        let dir = work.join("pods");
        fs::create_dir(&dir).map_err(|e| io_error(&dir, e))?;
        self.pods(&dir, stack).map_err(|e| match e {
            Error::Failed(m) => Error::Failed(format!("{m}{}", log_tails(&dir))),
            usage => usage,
        })
    }

    /// its `objects` must be answered.
    pub(super) fn dry_run(&self, file: &str, objects: usize, what: &str) -> Result {
        self.dry_run_in(self.work, file, objects, what)
    }

    /// [`Self::dry_run`] against the mock-apiserver whose kubeconfig is in `dir`.
    pub(super) fn dry_run_in(&self, dir: &Path, file: &str, objects: usize, what: &str) -> Result {
        let path = self.work.join(file).display().to_string();
        // (stderr: kubectl's warnings about preloaded objects without last-applied
        // annotations)
        let out = self.succeed(
            self.kubectl_in(dir, &["apply", "--dry-run=server", "-f", &path]),
            what,
        )?;
        print!("{out}");
        let answered = out
            .lines()
            .filter(|l| l.ends_with("(server dry run)"))
            .count();
        if answered != objects {
            return Err(Error::Failed(format!(
                "{what} answered for {answered} of {objects} objects"
            )));
        }
        Ok(())
    }
}
