//! What the steps share ([`Validation`]): running commands and kubectl at the root, the
//! workspace's binaries, and processes in the background.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use super::manifests;
use crate::files::{io_error, newer_source};
use crate::step::{self, Error, Result, Steps};

/// A process killed (and reaped) when dropped.
pub(super) struct Killed(pub(super) Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What the steps share: where they run, their clock, the binaries, the scratch directory.
pub(super) struct Validation<'a> {
    pub(super) root: &'a Path,
    pub(super) steps: &'a Steps,
    pub(super) bin_dir: Option<&'a Path>,
    pub(super) work: &'a Path,
}

impl Validation<'_> {
    /// `program args` at the root, without the variables `cargo run` set.
    pub(super) fn command(&self, program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Command {
        step::command(self.root, program, args, &[])
    }

    /// kubectl against the mock-apiserver of the server checks.
    pub(super) fn kubectl(&self, args: &[&str]) -> Command {
        self.kubectl_in(self.work, args)
    }

    /// kubectl against the mock-apiserver whose kubeconfig is in `dir`.
    pub(super) fn kubectl_in(&self, dir: &Path, args: &[&str]) -> Command {
        let kubeconfig = dir.join("kubeconfig").display().to_string();
        let cache = dir.join("cache").display().to_string();
        let mut all = vec!["--kubeconfig", &kubeconfig, "--cache-dir", &cache];
        all.extend(args);
        self.command("kubectl", &all)
    }

    /// Runs `c` for its output; a failure to start names `what`.
    pub(super) fn output(&self, mut c: Command, what: &str) -> Result<Output> {
        c.stdin(Stdio::null())
            .output()
            .map_err(|e| Error::Usage(format!("{what}: cannot start {:?}: {e}", c.get_program())))
    }

    /// Runs `c` and fails unless it succeeds, with its stderr as the reason.
    pub(super) fn succeed(&self, c: Command, what: &str) -> Result<String> {
        let out = self.output(c, what)?;
        if !out.status.success() {
            return Err(Error::Failed(format!(
                "{what} failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim_end()
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// After a server dry run: `kubectl -n NAMESPACE get KINDS -o name` against the
    /// mock-apiserver whose kubeconfig is in `dir` must list nothing (a dry run stores no
    /// object).
    pub(super) fn nothing_stored(&self, dir: &Path, kinds: &str) -> Result {
        let what = format!("kubectl get {kinds}");
        let stored = self.succeed(
            self.kubectl_in(
                dir,
                &["-n", manifests::NAMESPACE, "get", kinds, "-o", "name"],
            ),
            &what,
        )?;
        if stored.trim().is_empty() {
            Ok(())
        } else {
            Err(Error::Failed(format!(
                "the dry run stored objects: {stored}"
            )))
        }
    }

    /// The debug binary of `package`: LOADTEST_BIN_DIR's when given; otherwise the target
    /// directory's, built only when missing or older than the workspace's sources.
    pub(super) fn binary(&self, package: &str) -> Result<PathBuf> {
        if let Some(dir) = self.bin_dir {
            let path = dir.join(package);
            if !path.is_file() {
                return Err(Error::Usage(format!(
                    "no {package} binary in LOADTEST_BIN_DIR ({})",
                    dir.display()
                )));
            }
            return Ok(path);
        }
        let path = step::target_dir(self.root).join("debug").join(package);
        let built = fs::metadata(&path).and_then(|m| m.modified()).ok();
        let sources = [
            "limiter",
            "mock-apiserver",
            "mock-cloud",
            "provider",
            "serve",
            "composer",
            "live-heap",
            "harness",
        ]
        .iter()
        .map(|d| self.root.join(d))
        .chain(["Cargo.toml", "Cargo.lock"].map(|f| self.root.join(f)));
        let stale = match built {
            None => true,
            Some(built) => sources
                .into_iter()
                .any(|s| newer_source(&s, built).unwrap_or(true)),
        };
        if stale {
            let mut c = self.command("cargo", &["build", "--locked", "-q", "-p", package]);
            c.stdout(Stdio::inherit());
            step::run(c, &format!("cargo build -p {package}"))?;
        }
        Ok(path)
    }

    /// A mock-apiserver on a loopback port with its kubeconfig and log in `dir`, serving the
    /// CRD files `crds`, once kubectl gets an answer from it.
    pub(super) fn start_apiserver(&self, dir: &Path, crds: &[String]) -> Result<Killed> {
        let apiserver = self.binary("mock-apiserver")?;
        let kubeconfig = dir.join("kubeconfig").display().to_string();
        let mut args = vec!["--listen", "127.0.0.1:0", "--write-kubeconfig", &kubeconfig];
        for crd in crds {
            args.extend(["--crd", crd]);
        }
        let log_path = dir.join("apiserver.log");
        let mut server = self.spawn(&apiserver, &args, &[], &log_path)?;
        for _ in 0..100 {
            let written = fs::metadata(dir.join("kubeconfig")).is_ok_and(|m| m.len() > 0);
            if written
                && self
                    .output(self.kubectl_in(dir, &["version"]), "kubectl version")?
                    .status
                    .success()
            {
                return Ok(server);
            }
            if let Ok(Some(status)) = server.0.try_wait() {
                return Err(Error::Failed(format!(
                    "mock-apiserver exited ({status}): {}",
                    fs::read_to_string(&log_path).unwrap_or_default()
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(Error::Failed(
            "mock-apiserver did not answer within 10 s".to_owned(),
        ))
    }

    /// `program args` with `env` added, in the background, its output into `log`.
    pub(super) fn spawn(
        &self,
        program: &Path,
        args: &[&str],
        env: &[(String, String)],
        log: &Path,
    ) -> Result<Killed> {
        let out = fs::File::create(log).map_err(|e| io_error(log, e))?;
        let err = out.try_clone().map_err(|e| io_error(log, e))?;
        let mut c = self.command(program, args);
        c.envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        let child = c
            .spawn()
            .map_err(|e| Error::Usage(format!("cannot start {}: {e}", program.display())))?;
        Ok(Killed(child))
    }
}
