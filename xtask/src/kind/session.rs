//! One run of `cargo xtask kind`: the steps up to the harness's run, then, whatever
//! happened (a failed step, Ctrl-C, SIGTERM, a port-forward given up), the logs collected,
//! the background commands ended and the cluster this run created deleted.
//!
//! Every command runs at the workspace root with `KUBECONFIG` naming a file in a private
//! scratch directory: `kind create cluster` and `kind export kubeconfig` write the
//! cluster's admin credentials there, out of OUT_DIR (which CI uploads), and the directory
//! is removed at the end.

use std::fs::{self, File};
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::env::{Env, Interrupt, Tools, executable};
use super::supervise::{POLL, Policy, Supervised, utc_seconds};
use super::{NAMESPACE as NS, Settings, args_patch, images, patch_command};

/// SIGTERM's number, passed on with `kill`.
const SIGTERM: i32 = 15;
use crate::net::http_get_within;
use crate::step::{Result, Steps, WorkDir};

/// The apps of ci/manifests whose logs are kept, and their Services' port.
pub(super) const APPS: [&str; 2] = ["provider", "mock-cloud"];
const SERVICE_PORT: u16 = 8080;

/// The waits of a run.
pub struct Timing {
    /// The port-forwards' restarts.
    pub forward: Policy,
    /// The log followers' restarts.
    pub follow: Policy,
    /// How often, how far apart and how long each the forwarded ports are tried.
    pub http_attempts: u32,
    pub http_wait: Duration,
    pub http_timeout: Duration,
    /// The wait for the log followers' last lines before the logs are collected.
    pub settle: Duration,
    /// How long a command may take to exit after the signal that stopped the run is
    /// passed on to it (the harness writes its reports), before it is killed.
    pub grace: Duration,
}

impl Timing {
    pub fn standard() -> Timing {
        Timing {
            forward: Policy {
                delay: Duration::from_secs(1),
                max_delay: Duration::from_secs(5),
                healthy_after: Duration::from_secs(10),
                max_short_runs: Some(30),
            },
            follow: Policy {
                delay: Duration::from_secs(2),
                max_delay: Duration::from_secs(2),
                healthy_after: Duration::ZERO,
                max_short_runs: None,
            },
            http_attempts: 60,
            http_wait: Duration::from_secs(1),
            http_timeout: Duration::from_secs(2),
            settle: Duration::from_secs(1),
            grace: Duration::from_secs(30),
        }
    }
}

/// Where a run happens.
pub struct Ctx<'a> {
    pub root: &'a Path,
    pub env: &'a Env,
    pub interrupt: &'a Interrupt,
    pub timing: &'a Timing,
}

/// Why the steps stopped before the harness's exit code.
enum Stop {
    Interrupted(i32),
    Failed(String),
}

type Stopped<T = ()> = std::result::Result<T, Stop>;

/// Runs the steps and the cleanup; the exit code: the harness's, 2 when a step failed,
/// 128 + the signal when one arrived. Missing tools are an error before anything runs.
pub fn execute(ctx: &Ctx<'_>, s: &Settings) -> Result<i32> {
    let tools = Tools::find(ctx.env)?;
    let work = WorkDir::create("xtask-kind")?;
    let log_dir = ctx.root.join(&s.log_dir);
    fs::create_dir_all(&log_dir)
        .map_err(|e| crate::step::Error::Usage(format!("cannot create {}: {e}", s.log_dir)))?;
    let mut run = Run {
        ctx,
        s,
        tools,
        kubeconfig: work.0.join("kubeconfig"),
        log_dir,
        steps: Steps::start(),
        created: false,
        background: Vec::new(),
        forwards: 0,
    };
    let rc = match run.steps() {
        Ok(status) => code(status),
        Err(Stop::Interrupted(signal)) => 128 + signal,
        Err(Stop::Failed(why)) => {
            eprintln!("cargo xtask kind: {why}");
            2
        }
    };
    // A signal that came while the harness ended by itself still ends the run with it.
    let rc = ctx.interrupt.signal().map_or(rc, |signal| 128 + signal);
    run.cleanup(rc);
    drop(work);
    println!(
        "cargo xtask kind: exit {rc}; reports and logs in {}",
        s.out_dir
    );
    Ok(rc)
}

/// A process's exit code, as a shell gives it (128 + the signal that ended it).
fn code(status: ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(2)
}

pub(super) struct Run<'a> {
    pub(super) ctx: &'a Ctx<'a>,
    pub(super) s: &'a Settings,
    tools: Tools,
    pub(super) kubeconfig: PathBuf,
    log_dir: PathBuf,
    pub(super) steps: Steps,
    /// Whether this run created the cluster (then it deletes it).
    pub(super) created: bool,
    /// The log followers and the port-forwards, the first `forwards` of them being the
    /// port-forwards.
    pub(super) background: Vec<Supervised>,
    pub(super) forwards: usize,
}

impl Run<'_> {
    /// `program args` at the root with KUBECONFIG set.
    fn cmd(&self, program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Command {
        let mut c = self.ctx.env.command(self.ctx.root, program, args);
        c.env("KUBECONFIG", &self.kubeconfig);
        c
    }

    pub(super) fn kubectl(&self, args: &[&str]) -> Command {
        self.cmd(&self.tools.kubectl, args)
    }

    pub(super) fn kind(&self, args: &[&str]) -> Command {
        self.cmd(&self.tools.kind, args)
    }

    pub(super) fn log(&self, name: &str) -> PathBuf {
        self.log_dir.join(name)
    }

    /// Every step up to the harness's run; its exit status.
    fn steps(&mut self) -> Stopped<ExitStatus> {
        let (s, root) = (self.s, self.ctx.root);
        let harness = match &s.harness {
            Some(h) => h.clone(),
            None => {
                // Always asked: cargo rebuilds only what changed, and a stale harness would
                // mislead.
                self.steps.step("cargo build --release --locked -p harness");
                let build = ["build", "--release", "--locked", "-p", "harness"];
                self.check(self.cmd("cargo", &build), "cargo build -p harness")?;
                s.built_harness.clone()
            }
        };
        let harness_path = root.join(&harness);
        if !executable(&harness_path) {
            return Err(Stop::Failed(format!("no harness binary at {harness}")));
        }

        self.steps.step(&format!("harness validate {}", s.scenario));
        let validate = self.cmd(&harness_path, &["validate", &s.scenario]);
        self.check(validate, "harness validate")?;
        let mut args = vec!["provider-args", s.scenario.as_str()];
        args.extend(s.sets.iter().map(String::as_str));
        args.push("--json");
        let out = self.capture(self.cmd(&harness_path, &args), "harness provider-args")?;
        let provider_args = out.trim_end_matches('\n');
        println!("provider flags: {provider_args}");
        write(
            &self.log("provider-args.json"),
            &format!("{provider_args}\n"),
        )?;
        let patch = args_patch(provider_args).map_err(Stop::Failed)?;

        if !s.skip_build {
            self.steps.step("building images");
            let docker = &self.tools.docker;
            for (heading, c) in
                images::build(self.ctx.env, root, docker, &s.image_tag, &images::IMAGES)
            {
                println!("{heading}");
                self.check(c, heading.trim_start_matches("==> "))?;
            }
        }

        // --- cluster and stack ------------------------------------------------------------
        let mut get = self.kind(&["get", "clusters"]);
        get.stderr(Stdio::null());
        let clusters = match self.capture(get, "kind get clusters") {
            Ok(clusters) => clusters,
            // As none: the create says why if kind cannot work.
            Err(Stop::Failed(_)) => String::new(),
            Err(stop) => return Err(stop),
        };
        if clusters.lines().any(|c| c == s.cluster) {
            self.steps.step(&format!(
                "reusing kind cluster {} (it is left running)",
                s.cluster
            ));
        } else {
            self.steps
                .step(&format!("kind create cluster --name {}", s.cluster));
            self.created = true;
            let mut args = vec!["create", "cluster", "--name", &s.cluster];
            args.extend(["--config", &s.kind_config]);
            if let Some(image) = &s.kind_image {
                args.extend(["--image", image]);
            }
            args.extend(["--wait", "120s"]);
            self.check(self.kind(&args), "kind create cluster")?;
        }
        let export = self.kind(&["export", "kubeconfig", "--name", &s.cluster]);
        self.check(export, "kind export kubeconfig")?;
        let versions = self.log("versions.txt");
        let mut c = self.kubectl(&["version"]);
        c.stdout(create(&versions)?);
        self.check(c, "kubectl version")?;
        let mut c = self.kind(&["version"]);
        c.stdout(append(&versions)?);
        self.check(c, "kind version")?;

        if !s.skip_load {
            self.steps.step("loading images");
            let (heading, c) = images::load(
                self.ctx.env,
                root,
                &self.tools.kind,
                &s.cluster,
                &s.image_tag,
                &images::IMAGES,
            );
            println!("{heading}");
            self.check(c, "kind load docker-image")?;
        }

        self.steps.step(&format!("applying {}", s.manifests));
        // CRDs first: the ProviderConfig in the same apply needs its kind to be served.
        let crds = "ci/manifests/crds/";
        self.check(
            self.kubectl(&["apply", "-f", crds]),
            "kubectl apply of the CRDs",
        )?;
        let established = ["wait", "--for", "condition=established", "--timeout=60s"];
        let c = self.kubectl(&[&established[..], &["-f", crds]].concat());
        self.check(c, "kubectl wait for the CRDs")?;
        let c = self.kubectl(&["apply", "-k", &s.manifests]);
        self.check(c, &format!("kubectl apply -k {}", s.manifests))?;
        for app in ["mock-cloud", "provider"] {
            self.follow_logs(app);
        }
        // The scenario's settings replace the args.
        let c = self.kubectl(&patch_command(NS, &patch));
        self.check(c, "kubectl patch of the provider's args")?;

        self.steps.step("waiting for mock-cloud and the provider");
        let timeout = format!("--timeout={}", s.wait_timeout);
        for app in ["mock-cloud", "provider"] {
            let deployment = format!("deployment/{app}");
            let c = self.kubectl(&["-n", NS, "rollout", "status", &deployment, &timeout]);
            self.check(c, &format!("the rollout of {app}"))?;
        }

        self.steps.step(&format!(
            "port-forwarding mock-cloud to :{} and the provider's metrics to :{}",
            s.cloud_port, s.metrics_port
        ));
        self.forward("mock-cloud", s.cloud_port);
        self.forward("provider", s.metrics_port);
        let cloud = format!("http://127.0.0.1:{}", s.cloud_port);
        let metrics = format!("http://127.0.0.1:{}/metrics", s.metrics_port);
        self.wait_http(&cloud, "/admin/v1/summary", "mock-cloud")?;
        let metrics_base = format!("http://127.0.0.1:{}", s.metrics_port);
        self.wait_http(&metrics_base, "/metrics", "provider metrics")?;

        // --- the run ----------------------------------------------------------------------
        self.steps.step(&format!(
            "harness run {} against kind-{}",
            s.scenario, s.cluster
        ));
        let kubeconfig = self.kubeconfig.display().to_string();
        let provider_cloud = format!("http://mock-cloud.{NS}.svc:{SERVICE_PORT}");
        let deployment = format!("{NS}/provider");
        let mut args = vec!["run", s.scenario.as_str()];
        args.extend(["--kubeconfig", &kubeconfig, "--cloud-url", &cloud]);
        args.extend(["--provider-cloud-url", &provider_cloud]);
        args.extend(["--provider-metrics-url", &metrics]);
        args.extend(["--provider-deployment", &deployment, "--out", &s.out_dir]);
        args.extend(s.flags.iter().map(String::as_str));
        self.wait(self.cmd(&harness_path, &args), "harness run")
    }

    /// Follows the logs of every pod of `app`, the replaced ones included, into
    /// LOG_DIR/APP.log (kubectl's errors into APP.follow-errors.log); a follower started
    /// again reads from the time the previous one ended.
    fn follow_logs(&mut self, app: &str) {
        let (env, root) = (self.ctx.env.clone(), self.ctx.root.to_path_buf());
        let (kubectl, kubeconfig) = (self.tools.kubectl.clone(), self.kubeconfig.clone());
        let selector = format!("app.kubernetes.io/name={app}");
        let supervised = Supervised::start(
            &format!("the log follower of {app}"),
            self.ctx.timing.follow,
            self.log(&format!("{app}.log")),
            self.log(&format!("{app}.follow-errors.log")),
            self.ctx.interrupt.clone(),
            Box::new(move |last_end| {
                let since = last_end.map(utc_seconds);
                let mut args = vec!["-n", NS, "logs", "--follow", "--selector", &selector];
                args.extend(["--all-containers", "--prefix", "--timestamps", "--tail=-1"]);
                args.push("--max-log-requests=4");
                if let Some(since) = &since {
                    args.extend(["--since-time", since]);
                }
                let mut c = env.command(&root, &kubectl, &args);
                c.env("KUBECONFIG", &kubeconfig);
                c
            }),
        );
        self.background.push(supervised);
    }

    /// Forwards 127.0.0.1:`port` to `app`'s Service, into LOG_DIR/port-forward-APP.log.
    fn forward(&mut self, app: &str, port: u16) {
        let (env, root) = (self.ctx.env.clone(), self.ctx.root.to_path_buf());
        let (kubectl, kubeconfig) = (self.tools.kubectl.clone(), self.kubeconfig.clone());
        let (service, ports) = (format!("svc/{app}"), format!("{port}:{SERVICE_PORT}"));
        let log = self.log(&format!("port-forward-{app}.log"));
        let supervised = Supervised::start(
            &format!("the port-forward to {app}"),
            self.ctx.timing.forward,
            log.clone(),
            log,
            self.ctx.interrupt.clone(),
            Box::new(move |_| {
                let args = ["-n", NS, "port-forward", "--address", "127.0.0.1"];
                let mut c =
                    env.command(&root, &kubectl, &[&args[..], &[&service, &ports]].concat());
                c.env("KUBECONFIG", &kubeconfig);
                c
            }),
        );
        // The port-forwards go first: `wait` watches them.
        self.background.insert(self.forwards, supervised);
        self.forwards += 1;
    }

    /// Why the run must stop, if it must: a signal, or a port-forward given up.
    fn must_stop(&self) -> Option<Stop> {
        if let Some(signal) = self.ctx.interrupt.signal() {
            return Some(Stop::Interrupted(signal));
        }
        self.background[..self.forwards]
            .iter()
            .find_map(Supervised::gave_up)
            .map(|why| Stop::Failed(format!("{why} (see {}/port-forward-*.log)", self.s.log_dir)))
    }

    /// Tries `base` + `path` until it answers below 400 (as `curl -f`), through the
    /// port-forward.
    fn wait_http(&self, base: &str, path: &str, what: &str) -> Stopped {
        let t = self.ctx.timing;
        let url = format!("{base}{path}");
        for _ in 0..t.http_attempts {
            if let Some(stop) = self.must_stop() {
                return Err(stop);
            }
            if http_get_within(base, path, t.http_timeout, t.http_timeout)
                .is_ok_and(|(status, _)| status < 400)
            {
                println!("{what}: reachable at {url}");
                return Ok(());
            }
            self.pause(t.http_wait)?;
        }
        Err(Stop::Failed(format!(
            "{what}: not reachable at {url} (see {}/port-forward-*.log)",
            self.s.log_dir
        )))
    }

    /// Sleeps `d`, or less if the run must stop.
    fn pause(&self, d: Duration) -> Stopped {
        let until = Instant::now() + d;
        while Instant::now() < until {
            if let Some(stop) = self.must_stop() {
                return Err(stop);
            }
            std::thread::sleep(POLL.min(until - Instant::now()));
        }
        Ok(())
    }

    /// Runs `c` to its end, or stops it when the run must stop.
    fn wait(&self, mut c: Command, what: &str) -> Stopped<ExitStatus> {
        let mut child = c.spawn().map_err(|e| {
            Stop::Failed(format!("{what}: cannot start {:?}: {e}", c.get_program()))
        })?;
        self.wait_child(&mut child, what)
    }

    /// Waits for `child`; when the run must stop, passes the signal on to it (SIGTERM
    /// for a port-forward given up) and ends it.
    fn wait_child(&self, child: &mut Child, what: &str) -> Stopped<ExitStatus> {
        loop {
            match child.try_wait() {
                Ok(Some(status)) => return Ok(status),
                Ok(None) => {}
                Err(e) => {
                    self.end(child, SIGTERM);
                    return Err(Stop::Failed(format!("{what}: {e}")));
                }
            }
            if let Some(stop) = self.must_stop() {
                let signal = match stop {
                    Stop::Interrupted(signal) => signal,
                    Stop::Failed(_) => SIGTERM,
                };
                self.end(child, signal);
                return Err(stop);
            }
            std::thread::sleep(POLL);
        }
    }

    /// Passes `signal` on to `child`, gives it the grace period to exit, then kills it.
    fn end(&self, child: &mut Child, signal: i32) {
        let kill = self.ctx.env.tool("kill").unwrap_or_else(|| "kill".into());
        let _ = self
            .cmd(kill, &[&format!("-{signal}"), &child.id().to_string()])
            .stderr(Stdio::null())
            .status();
        let until = Instant::now() + self.ctx.timing.grace;
        while Instant::now() < until {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(POLL);
        }
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Runs `c`; a failure stops the run.
    fn check(&self, c: Command, what: &str) -> Stopped {
        let status = self.wait(c, what)?;
        if status.success() {
            Ok(())
        } else {
            Err(Stop::Failed(format!("{what} failed ({status})")))
        }
    }

    /// Runs `c` for its stdout; a failure stops the run.
    fn capture(&self, mut c: Command, what: &str) -> Stopped<String> {
        c.stdout(Stdio::piped());
        let mut child = c.spawn().map_err(|e| {
            Stop::Failed(format!("{what}: cannot start {:?}: {e}", c.get_program()))
        })?;
        let mut stdout = child.stdout.take().expect("piped");
        let reader = std::thread::spawn(move || {
            let mut out = Vec::new();
            stdout.read_to_end(&mut out).map(|_| out)
        });
        let status = self.wait_child(&mut child, what)?;
        let out = reader
            .join()
            .ok()
            .and_then(|r| r.ok())
            .ok_or_else(|| Stop::Failed(format!("{what}: cannot read its output")))?;
        if !status.success() {
            return Err(Stop::Failed(format!("{what} failed ({status})")));
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
}

fn create(path: &Path) -> Stopped<File> {
    File::create(path).map_err(|e| Stop::Failed(format!("{}: {e}", path.display())))
}

fn append(path: &Path) -> Stopped<File> {
    fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| Stop::Failed(format!("{}: {e}", path.display())))
}

fn write(path: &Path, text: &str) -> Stopped {
    fs::write(path, text).map_err(|e| Stop::Failed(format!("{}: {e}", path.display())))
}
