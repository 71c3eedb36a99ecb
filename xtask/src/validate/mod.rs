//! `cargo xtask validate`: offline checks of the kind assets in ci/, everything that can be
//! checked on a machine with no Docker engine and no kind.
//!
//! 1. The manifests: `kubectl kustomize ci/manifests` validated against the Kubernetes
//!    schemas of the pinned node image's version (`kubernetes-validate --strict`), and the
//!    names, ports, env and security settings the harness relies on ([`manifests`]); the
//!    same for the example overlay ci/examples/provider-upjet-aws (its ProviderConfig's
//!    fields against provider-upjet-aws's names, having no published schema).
//! 2. The same manifests (and the example's, but its ProviderConfig) applied with
//!    `kubectl apply --dry-run=server` to a mock-apiserver started on loopback. That is
//!    where the custom resources are checked against their CRDs' schemas: mock-apiserver
//!    validates them as a real server does, and kubectl asks for `fieldValidation=Strict`,
//!    so an unknown field (which the server would prune) is an error too; two broken
//!    ProviderConfigs, one with an unknown field and one with a field of the wrong type,
//!    must be refused, which proves it on every run. Then run.sh's args patch on the
//!    applied provider Deployment, ci/kind/run.sh end to end with docker, kind, the
//!    harness and the pods stubbed (ci/kind/test-run.sh), and the two containers' command
//!    lines run as local processes: probes, a Bucket made Ready, SIGTERM, and every
//!    request the provider made allowed by its RBAC ([`pods`]).
//! 3. shellcheck on every ci/**/*.sh, .ci/run and the workflow's `run:` blocks.
//! 4. The Dockerfiles: hadolint, their COPY sources, cargo packages and binaries
//!    ([`docker`]).
//! 5. ci/github/loadtest.yml and ci/kind/cluster.yaml: expected keys, pinned versions that
//!    agree, every referenced file present ([`workflow`]).
//!
//! Needs kubectl, python3 with kubernetes-validate, curl and python3 (for test-run.sh),
//! shellcheck and hadolint (.ci/run installs them). A missing tool is an error when `CI` or
//! `REQUIRE_TOOLS` is set (.ci/run sets `REQUIRE_TOOLS=1`); otherwise the checks that need
//! it are skipped, with a message, so that a developer without them can still run the
//! rest.

mod docker;
mod manifests;
mod need;
mod pods;
mod workflow;

use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::step::{self, Error, Result, Steps};

/// The Kubernetes version of the pinned kind node image (ci/kind/cluster.yaml).
const K8S_VERSION: &str = "1.33.0";

/// `cargo xtask validate`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Environment: REQUIRE_TOOLS=1 or CI=1 makes a missing tool an error \
(otherwise its checks are skipped, with a message); LOADTEST_BIN_DIR, a directory with the \
mock-apiserver, provider and mock-cloud debug binaries to run (`cargo xtask check` passes its \
own build's; otherwise target/debug's, built when missing or older than their sources). \
Exit codes: 0 valid, 1 a check failed, 2 a missing tool or a command that could not start."
)]
pub struct Args {}

/// `cargo xtask validate` on its own: the checks, then the time they took.
pub fn run(root: &Path, _a: &Args) -> Result {
    let steps = Steps::start();
    let bin_dir = std::env::var_os("LOADTEST_BIN_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from);
    validate(root, &steps, bin_dir.as_deref())?;
    steps.step(&format!(
        "cargo xtask validate passed in {}",
        steps.elapsed()
    ));
    Ok(())
}

/// Every check, as steps of `steps`; the binaries from `bin_dir` when given.
pub fn validate(root: &Path, steps: &Steps, bin_dir: Option<&Path>) -> Result {
    let mut tools = Tools::from_env();
    let work = WorkDir::create()?;
    let v = Validation {
        root,
        steps,
        bin_dir,
        work: &work.0,
    };

    // --- 1. manifests, offline; 2. server dry run and local runs -------------------------
    if tools.have(
        Tool::Program("kubectl"),
        "kustomize build and server dry run",
    )? {
        let stack = v.kustomize("ci/manifests", "stack.yaml")?;
        if tools.have(Tool::Python("kubernetes_validate"), "schema validation")? {
            v.kubernetes_validate(
                "Kubernetes kinds",
                "stack.yaml",
                // ProviderConfig has no published schema: the dry run checks it.
                "api version mockcloud.example.org/",
            )?;
            println!(
                "every Kubernetes kind valid (the ProviderConfig: against its CRD in the server dry run)"
            );
        }
        steps.step("the names, ports and settings the harness uses");
        report(manifests::check_stack(&stack))?;
        println!("contract checks passed");

        let upjet = v.kustomize("ci/examples/provider-upjet-aws", "upjet.yaml")?;
        if tools.have(
            Tool::Python("kubernetes_validate"),
            "schema validation of the example",
        )? {
            v.kubernetes_validate(
                "the example's Kubernetes kinds",
                "upjet.yaml",
                // Its ProviderConfig's CRD is the provider's (no published schema).
                "api version aws.upbound.io/",
            )?;
            println!("every Kubernetes kind valid (the ProviderConfig: next check)");
        }
        steps.step(
            "the example's ProviderConfig against provider-upjet-aws's field names; the names the harness is given",
        );
        report(manifests::check_upjet(&upjet))?;
        println!("ProviderConfig fields, endpoint, credentials and the harness's names check out");

        v.server_checks(&mut tools, &stack, &upjet)?;
    }

    // --- 3. shell scripts --------------------------------------------------------------
    let mut scripts = files_under(&root.join("ci"), ".sh")?
        .iter()
        .map(|p| relative(root, p))
        .collect::<Vec<_>>();
    scripts.sort();
    scripts.push(".ci/run".to_owned());
    if tools.have(Tool::Program("shellcheck"), "shellcheck")? {
        steps.step(&format!("shellcheck {}", scripts.join(" ")));
        let mut args = vec!["--severity=style"];
        args.extend(scripts.iter().map(String::as_str));
        step::run(v.command("shellcheck", &args), "shellcheck")?;
        for s in &scripts {
            let text = read(&root.join(s))?;
            if !text.starts_with("#!/usr/bin/env bash\n") {
                return Err(Error::Failed(format!(
                    "{s} does not start with #!/usr/bin/env bash"
                )));
            }
        }
        println!("{} scripts clean", scripts.len());
    }

    // --- 4. Dockerfiles -----------------------------------------------------------------
    let mut dockerfiles = files_under(&root.join("ci/docker"), ".Dockerfile")?
        .iter()
        .map(|p| relative(root, p))
        .collect::<Vec<_>>();
    dockerfiles.sort();
    if dockerfiles.len() != 2 {
        return Err(Error::Failed(format!(
            "expected 2 Dockerfiles in ci/docker, found {}",
            dockerfiles.len()
        )));
    }
    if tools.have(Tool::Program("hadolint"), "hadolint")? {
        steps.step(&format!("hadolint {}", dockerfiles.join(" ")));
        let mut args = vec!["--no-color"];
        args.extend(dockerfiles.iter().map(String::as_str));
        step::run(v.command("hadolint", &args), "hadolint")?;
        println!("clean");
    }
    steps.step("Dockerfiles: COPY sources, .dockerignore, cargo packages and binaries");
    let metadata = v.output(
        v.command(
            "cargo",
            &["metadata", "--locked", "--no-deps", "--format-version", "1"],
        ),
        "cargo metadata",
    )?;
    let metadata: Value = serde_json::from_slice(&metadata.stdout)
        .map_err(|e| Error::Failed(format!("cargo metadata's output: {e}")))?;
    let (packages, bins) = (docker::packages(&metadata), docker::binaries(&metadata));
    report(docker::check_dockerignore(&read(
        &root.join(".dockerignore"),
    )?))?;
    for path in &dockerfiles {
        let text = read(&root.join(path))?;
        println!(
            "{}",
            report(docker::check_dockerfile(
                root, path, &text, &packages, &bins
            ))?
        );
    }

    // --- 5. workflow and kind config ----------------------------------------------------
    steps.step("ci/github/loadtest.yml and ci/kind/cluster.yaml");
    let wf_path = "ci/github/loadtest.yml";
    let cluster_path = "ci/kind/cluster.yaml";
    let wf = need::document(&read(&root.join(wf_path))?, wf_path).map_err(Error::Failed)?;
    let cluster_text = read(&root.join(cluster_path))?;
    let cluster = need::document(&cluster_text, cluster_path).map_err(Error::Failed)?;
    let w = report(workflow::check(root, &wf, &cluster, &cluster_text))?;
    println!("{}", w.summary);
    if tools.have(
        Tool::Program("shellcheck"),
        "shellcheck of the workflow's run: blocks",
    )? {
        let dir = v.work.join("run-blocks");
        fs::create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
        let mut files = Vec::new();
        for (i, body) in w.run_blocks.iter().enumerate() {
            let file = dir.join(format!("step{i}.sh"));
            write(&file, body)?;
            files.push(file.display().to_string());
        }
        let mut args = vec!["--severity=style"];
        args.extend(files.iter().map(String::as_str));
        step::run(
            v.command("shellcheck", &args),
            "shellcheck of the run: blocks",
        )?;
        println!("the workflow's run: blocks pass shellcheck");
    }

    if !tools.skipped.is_empty() {
        println!("skipped (tools missing): {}", tools.skipped.join(", "));
    }
    Ok(())
}

/// Prints a check's unmet expectations and fails on them.
fn report<T>(result: std::result::Result<T, Vec<String>>) -> Result<T> {
    result.map_err(|errors| {
        for e in &errors {
            println!("  error: {e}");
        }
        Error::Failed(format!("{} check(s) failed (above)", errors.len()))
    })
}

/// A tool a check needs.
#[derive(Clone, Copy, Debug)]
enum Tool {
    /// A program on PATH.
    Program(&'static str),
    /// A module python3 imports.
    Python(&'static str),
}

impl Tool {
    fn name(self) -> String {
        match self {
            Tool::Program(p) => p.to_owned(),
            Tool::Python("kubernetes_validate") => "kubernetes-validate".to_owned(),
            Tool::Python(m) => format!("python3's module {m}"),
        }
    }

    fn installed(self) -> bool {
        match self {
            Tool::Program(p) => step::which(p).is_some(),
            Tool::Python(m) => Command::new("python3")
                .args(["-c", &format!("import {m}")])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success()),
        }
    }
}

/// Which tools are missing, and whether that is an error.
struct Tools {
    required: bool,
    skipped: Vec<String>,
}

impl Tools {
    fn from_env() -> Tools {
        let set = |name| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        Tools {
            required: set("CI") || set("REQUIRE_TOOLS"),
            skipped: Vec::new(),
        }
    }

    /// Whether `tool` can be used for the checks `what`: a missing tool fails when CI or
    /// REQUIRE_TOOLS is set and skips them otherwise.
    fn have(&mut self, tool: Tool, what: &str) -> Result<bool> {
        if tool.installed() {
            return Ok(true);
        }
        let name = tool.name();
        if self.required {
            return Err(Error::Usage(format!(
                "{name} is not installed (needed for: {what}); .ci/run installs it"
            )));
        }
        println!(
            "SKIP {what}: {name} is not installed (CI and REQUIRE_TOOLS are unset, so this is not an error)"
        );
        self.skipped.push(what.to_owned());
        Ok(false)
    }
}

/// A scratch directory, removed when dropped.
struct WorkDir(PathBuf);

impl WorkDir {
    fn create() -> Result<WorkDir> {
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let dir =
            std::env::temp_dir().join(format!("xtask-validate-{}-{nanos}", std::process::id()));
        fs::create_dir(&dir).map_err(|e| io_error(&dir, e))?;
        Ok(WorkDir(dir))
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A process killed (and reaped) when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What the steps share: where they run, their clock, the binaries, the scratch directory.
struct Validation<'a> {
    root: &'a Path,
    steps: &'a Steps,
    bin_dir: Option<&'a Path>,
    work: &'a Path,
}

impl Validation<'_> {
    /// `program args` at the root, without the variables `cargo run` set.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Command {
        step::command(self.root, program, args, &[])
    }

    /// kubectl against the mock-apiserver of the server checks.
    fn kubectl(&self, args: &[&str]) -> Command {
        self.kubectl_in(self.work, args)
    }

    /// kubectl against the mock-apiserver whose kubeconfig is in `dir`.
    fn kubectl_in(&self, dir: &Path, args: &[&str]) -> Command {
        let kubeconfig = dir.join("kubeconfig").display().to_string();
        let cache = dir.join("cache").display().to_string();
        let mut all = vec!["--kubeconfig", &kubeconfig, "--cache-dir", &cache];
        all.extend(args);
        self.command("kubectl", &all)
    }

    /// Runs `c` for its output; a failure to start names `what`.
    fn output(&self, mut c: Command, what: &str) -> Result<Output> {
        c.stdin(Stdio::null())
            .output()
            .map_err(|e| Error::Usage(format!("{what}: cannot start {:?}: {e}", c.get_program())))
    }

    /// Runs `c` and fails unless it succeeds, with its stderr as the reason.
    fn succeed(&self, c: Command, what: &str) -> Result<String> {
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

    /// `kubectl kustomize dir` into the scratch file `file`; its documents.
    fn kustomize(&self, dir: &str, file: &str) -> Result<Vec<Value>> {
        self.steps.step(&format!("kubectl kustomize {dir}"));
        let text = self.succeed(
            self.command("kubectl", &["kustomize", dir]),
            &format!("kubectl kustomize {dir}"),
        )?;
        write(&self.work.join(file), &text)?;
        let docs = need::documents(&text, dir).map_err(Error::Failed)?;
        println!("{} objects rendered", docs.len());
        Ok(docs)
    }

    /// `kubernetes-validate --strict` on the scratch file `file`; a line of its output that
    /// does not contain `expected` (a kind without a schema is only a warning there) is an
    /// error here.
    fn kubernetes_validate(&self, what: &str, file: &str, expected: &str) -> Result {
        self.steps.step(&format!(
            "kubernetes-validate --strict -k {K8S_VERSION} ({what})"
        ));
        let path = self.work.join(file).display().to_string();
        let out = self.output(
            self.command(
                "python3",
                &[
                    "-m",
                    "kubernetes_validate",
                    "--strict",
                    "--quiet",
                    "-k",
                    K8S_VERSION,
                    &path,
                ],
            ),
            "kubernetes-validate",
        )?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if !out.status.success() {
            print!("{text}");
            return Err(Error::Failed(format!(
                "{what} do not validate against Kubernetes {K8S_VERSION}"
            )));
        }
        let unexpected: Vec<&str> = text
            .lines()
            .filter(|l| !l.is_empty() && !l.contains(expected))
            .collect();
        if !unexpected.is_empty() {
            println!("{}", unexpected.join("\n"));
            return Err(Error::Failed(format!(
                "unexpected kubernetes-validate output for {what} (above)"
            )));
        }
        Ok(())
    }

    /// The debug binary of `package`: LOADTEST_BIN_DIR's when given; otherwise the target
    /// directory's, built only when missing or older than the workspace's sources.
    fn binary(&self, package: &str) -> Result<PathBuf> {
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
        let sources = ["limiter", "mock-apiserver", "mock-cloud", "provider"]
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

    /// Step 2: the server dry runs against mock-apiserver, ci/kind/test-run.sh, and the
    /// containers as local processes.
    fn server_checks(&self, tools: &mut Tools, stack: &[Value], upjet: &[Value]) -> Result {
        let (steps, work) = (self.steps, self.work);
        steps.step("kubectl apply --dry-run=server against mock-apiserver");
        let apiserver = self.binary("mock-apiserver")?;
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
        let stored = self.succeed(
            self.kubectl(&[
                "-n",
                manifests::NAMESPACE,
                "get",
                "deployments",
                "-o",
                "name",
            ]),
            "kubectl get deployments",
        )?;
        if !stored.trim().is_empty() {
            return Err(Error::Failed(format!(
                "the dry run stored objects: {stored}"
            )));
        }
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

        steps.step("run.sh's args patch on the applied provider Deployment");
        let stack_file = work.join("stack.yaml").display().to_string();
        self.succeed(self.kubectl(&["apply", "-f", &stack_file]), "kubectl apply")?;
        let ns = manifests::NAMESPACE;
        print!(
            "{}",
            self.succeed(
                self.kubectl(&[
                    "-n",
                    ns,
                    "patch",
                    "deployment",
                    "provider",
                    "--type=json",
                    "-p",
                    r#"[{"op":"replace","path":"/spec/template/spec/containers/0/args","value":["--max-reconcile-rate=20","--poll-interval=30s"]}]"#,
                ]),
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
        let args = jsonpath("{.spec.template.spec.containers[0].args}")?;
        let endpoint = jsonpath(
            r#"{.spec.template.spec.containers[0].env[?(@.name=="PROVIDER_CLOUD_ENDPOINT")].value}"#,
        )?;
        if args != r#"["--max-reconcile-rate=20","--poll-interval=30s"]"# {
            return Err(Error::Failed(format!("args after the patch: {args}")));
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

        let local = "ci/kind/test-run.sh";
        if tools.have(Tool::Program("curl"), local)?
            && tools.have(Tool::Program("python3"), local)?
        {
            steps.step(
                "ci/kind/run.sh end to end, with docker, kind, the harness and the pods stubbed",
            );
            let apiserver = apiserver.display().to_string();
            step::run(
                self.command("bash", &["ci/kind/test-run.sh", &apiserver]),
                "ci/kind/test-run.sh",
            )?;
        }
        steps.step("the containers' command lines, run as local processes");
        let dir = work.join("pods");
        fs::create_dir(&dir).map_err(|e| io_error(&dir, e))?;
        self.pods(&dir, stack).map_err(|e| match e {
            Error::Failed(m) => Error::Failed(format!("{m}{}", log_tails(&dir))),
            usage => usage,
        })
    }

    /// A mock-apiserver on a loopback port with its kubeconfig and log in `dir`, serving the
    /// CRD files `crds`, once kubectl gets an answer from it.
    fn start_apiserver(&self, dir: &Path, crds: &[String]) -> Result<Killed> {
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
    fn spawn(
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

    /// The two containers of ci/manifests as local processes, with exactly the command lines
    /// the rendered Deployments give them ([`pods`]), to check what only a cluster would
    /// otherwise show: that the flags and env parse, that the probe paths answer 200 on the
    /// container ports, that the provider reaches mock-cloud through the endpoint in its
    /// env and signs in with the default ProviderConfig's Secret, that a Bucket becomes
    /// Ready, that SIGTERM stops the provider cleanly within the pod's grace period, and
    /// that every API request the provider made in all that is allowed by the RBAC the
    /// manifests bind to its ServiceAccount (read from mock-apiserver's request journal;
    /// mock-apiserver itself authorizes nothing). Scratch files, logs included, in `dir`.
    fn pods(&self, dir: &Path, stack: &[Value]) -> Result {
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

    /// `kubectl apply --dry-run=server` of the scratch file `file`, printed; every one of
    /// its `objects` must be answered.
    fn dry_run(&self, file: &str, objects: usize, what: &str) -> Result {
        let path = self.work.join(file).display().to_string();
        // (stderr: kubectl's warnings about preloaded objects without last-applied
        // annotations)
        let out = self.succeed(
            self.kubectl(&["apply", "--dry-run=server", "-f", &path]),
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

/// Whether a file under `path` (or `path` itself) that cargo builds from (`*.rs`,
/// Cargo.toml, Cargo.lock) was modified after `than`.
fn newer_source(path: &Path, than: SystemTime) -> std::io::Result<bool> {
    let meta = fs::metadata(path)?;
    if meta.is_dir() {
        for entry in fs::read_dir(path)? {
            if newer_source(&entry?.path(), than)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let source = name.ends_with(".rs") || name == "Cargo.toml" || name == "Cargo.lock";
    Ok(source && meta.modified()? > than)
}

/// The files under `dir` (recursively) whose names end with `suffix`.
fn files_under(dir: &Path, suffix: &str) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| io_error(dir, e))? {
        let path = entry.map_err(|e| io_error(dir, e))?.path();
        if path.is_dir() {
            out.extend(files_under(&path, suffix)?);
        } else if path.to_str().is_some_and(|p| p.ends_with(suffix)) {
            out.push(path);
        }
    }
    Ok(out)
}

/// `path` relative to `root`, as a string.
fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn read(path: &Path) -> Result<String> {
    fs::read_to_string(path).map_err(|e| io_error(path, e))
}

fn write(path: &Path, text: &str) -> Result {
    fs::File::create(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| io_error(path, e))
}

fn io_error(path: &Path, e: std::io::Error) -> Error {
    Error::Usage(format!("{}: {e}", path.display()))
}

fn str_of_value(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// A loopback port free at the time of asking.
fn free_port() -> Result<u16> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| Error::Usage(format!("no free loopback port: {e}")))
}

/// `GET base + path` over HTTP/1.0 (`base` is `http://host:port`, as in a kubeconfig), with
/// one second to connect and five to answer: the status and the body.
fn http_get(base: &str, path: &str) -> std::io::Result<(u16, Vec<u8>)> {
    let invalid =
        |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned());
    let host = base
        .strip_prefix("http://")
        .ok_or_else(|| invalid("not an http:// address"))?
        .trim_end_matches('/');
    let addr = host
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| invalid("no address"))?;
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n")?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| invalid("no end of the headers"))?;
    let status = std::str::from_utf8(&response[..split])
        .ok()
        .and_then(|head| head.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| invalid("no status line"))?;
    Ok((status, response[split + 4..].to_vec()))
}

/// `name`'s probe `path` on loopback `port` answers 200, within 10 s.
fn probe(name: &str, port: u16, path: &str) -> Result {
    let base = format!("http://127.0.0.1:{port}");
    let mut last = String::from("no answer");
    for _ in 0..50 {
        match http_get(&base, path) {
            Ok((200, _)) => return Ok(()),
            Ok((status, _)) => last = status.to_string(),
            Err(e) => last = e.to_string(),
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Err(Error::Failed(format!(
        "{name} probe {path} answered {last}"
    )))
}

/// The last 20 lines of each log in `dir`, each line prefixed with its file's name.
fn log_tails(dir: &Path) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_and_dockerfiles_are_found_under_ci() {
        let root = step::workspace_root();
        let scripts = files_under(&root.join("ci"), ".sh").unwrap();
        assert!(scripts.iter().any(|p| p.ends_with("ci/kind/run.sh")));
        assert!(scripts.iter().all(|p| p.to_str().unwrap().ends_with(".sh")));
        let dockerfiles = files_under(&root.join("ci/docker"), ".Dockerfile").unwrap();
        assert_eq!(dockerfiles.len(), 2);
        assert_eq!(relative(&root, &root.join("ci/x.sh")), "ci/x.sh");
    }

    #[test]
    fn a_source_newer_than_the_binary_is_found() {
        let root = step::workspace_root();
        let lib = root.join("xtask/src");
        assert!(newer_source(&lib, SystemTime::UNIX_EPOCH).unwrap());
        let future = SystemTime::now() + Duration::from_secs(3600);
        assert!(!newer_source(&lib, future).unwrap());
        // Only what cargo builds from counts.
        assert!(!newer_source(&root.join("README.md"), SystemTime::UNIX_EPOCH).unwrap());
    }

    #[test]
    fn http_get_gives_the_status_and_the_body() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut request = [0; 1024];
            let n = conn.read(&mut request).unwrap();
            conn.write_all(b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy")
                .unwrap();
            String::from_utf8_lossy(&request[..n]).into_owned()
        });
        let (status, body) = http_get(&format!("http://127.0.0.1:{port}"), "/readyz?x=1").unwrap();
        assert_eq!((status, body.as_slice()), (503, &b"busy"[..]));
        let request = server.join().unwrap();
        assert!(
            request.starts_with("GET /readyz?x=1 HTTP/1.0\r\n"),
            "{request}"
        );
        assert!(http_get("https://127.0.0.1:1", "/").is_err());
    }

    #[test]
    fn a_missing_tool_is_an_error_only_when_required() {
        let missing = Tool::Program("no-such-tool-for-xtask");
        let mut optional = Tools {
            required: false,
            skipped: Vec::new(),
        };
        assert!(!optional.have(missing, "a check").unwrap());
        assert_eq!(optional.skipped, ["a check"]);
        let mut required = Tools {
            required: true,
            skipped: Vec::new(),
        };
        let err = required.have(missing, "a check").unwrap_err();
        assert_eq!(err.code(), 2);
        assert!(err.to_string().contains("needed for: a check"), "{err}");
    }
}
