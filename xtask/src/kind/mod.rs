//! `cargo xtask kind SCENARIO …`: one scenario against a kind cluster, end to end (what
//! ci/kind/run.sh did), and `cargo xtask kind-images`, the images it runs and the
//! harness's, which a sweep's Indexed Job runs (what ci/kind/build-images.sh did).
//!
//! [`session`] runs the steps, [`cleanup`] what follows them whatever happened, [`supervise`] keeps the port-forwards and
//! the log followers running, [`mod@images`] builds and loads the images, and [`mod@env`] reads
//! the environment and the signals. The tests (`tests`) run it all with docker, kind,
//! kubectl, cargo and the harness replaced by small scripts that record their calls.

mod cleanup;
mod env;
mod images;
mod session;
mod supervise;
#[cfg(test)]
mod tests;

use std::path::Path;

use serde_json::{Value, json};

use crate::step::{Error, Result};
use env::{Env, Interrupt};
use session::{Ctx, Timing};

pub use images::{ALL_IMAGES, Args as ImagesArgs};

/// The namespace of ci/manifests.
pub const NAMESPACE: &str = "loadtest-system";

const ENVIRONMENT: &str = "\
Environment (all optional; an empty value counts as unset):
  CLUSTER_NAME   kind cluster (default: loadtest). If it exists already it is reused and
                 left running; otherwise it is created, and deleted at the end.
  KEEP_CLUSTER   1: do not delete the cluster this command created.
  KIND_IMAGE     node image instead of the one pinned in ci/kind/cluster.yaml.
  KIND_CONFIG    kind config (default: ci/kind/cluster.yaml).
  MANIFESTS      kustomize directory to deploy (default: ci/manifests; an overlay patches
                 flags or images per environment).
  OUT_DIR        reports and logs (default: out/kind/SCENARIO-FILE-NAME): the harness
                 writes result.json, junit.xml and report.html, and logs/ gets the rest.
  HARNESS        harness binary (default: built with cargo, release profile).
  SKIP_BUILD     1: do not build the images (cargo xtask kind-images --build-only ran).
  SKIP_LOAD      1: do not load the images into kind (an overlay's images come from a
                 registry, and the cluster pulls them).
  IMAGE_TAG      tag of loadtest/provider and loadtest/mock-cloud (default: dev, the tag
                 in ci/manifests).
  CLOUD_PORT     local port forwarded to mock-cloud (default: 18080).
  METRICS_PORT   local port forwarded to the provider's metrics (default: 18081).
  WAIT_TIMEOUT   how long to wait for each rollout (default: 180s).

Relative paths are taken from the workspace root. Needs docker, kind and kubectl.

A port-forward that ends (its pod went away) is started again, 1 s later, then up to 5 s
apart; after 30 runs in a row that ended within 10 s of starting it is given up, and the
run ends with exit 2.

Exit code: the harness's (0 pass, 1 a bound or SLO failed, 2 bad scenario or setup); 2
when the cluster or the stack cannot be set up or a tool is missing; 130 on Ctrl-C and 143
on SIGTERM, after the logs are collected and the cluster deleted (a second Ctrl-C ends it
at once).";

/// `cargo xtask kind`.
#[derive(clap::Args, Debug)]
#[command(after_help = ENVIRONMENT)]
pub struct Args {
    /// The scenario file, e.g. scenarios/smoke.yaml.
    pub scenario: String,
    /// More `harness run` flags. `--set PATH=VALUE` also reaches `harness provider-args`,
    /// so the provider runs with the overridden settings. --out, --kubeconfig and
    /// --cloud-url are set by this command (OUT_DIR names the reports' directory).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "HARNESS_RUN_FLAGS"
    )]
    pub flags: Vec<String>,
}

/// What a run does, from its arguments and environment.
#[derive(Debug, PartialEq)]
pub struct Settings {
    pub scenario: String,
    /// The `harness run` flags given, passed on as they are.
    pub flags: Vec<String>,
    /// The `--set` flags among them, for `harness provider-args`.
    pub sets: Vec<String>,
    pub cluster: String,
    pub keep_cluster: bool,
    pub kind_image: Option<String>,
    pub kind_config: String,
    pub manifests: String,
    pub out_dir: String,
    pub log_dir: String,
    /// `None`: build it (`cargo build --release`) and run `TARGET/release/harness`.
    pub harness: Option<String>,
    /// The target directory's harness, where the build puts it.
    pub built_harness: String,
    pub skip_build: bool,
    pub skip_load: bool,
    pub image_tag: String,
    pub cloud_port: u16,
    pub metrics_port: u16,
    pub wait_timeout: String,
}

impl Settings {
    /// The settings of `cargo xtask kind SCENARIO FLAGS…` in `env`, the scenario read from
    /// under `root`.
    pub fn new(root: &Path, scenario: &str, flags: &[String], env: &Env) -> Result<Settings> {
        if !root.join(scenario).is_file() {
            return Err(Error::Usage(format!("no such scenario file: {scenario}")));
        }
        let mut sets = Vec::new();
        let mut rest = flags.iter();
        while let Some(flag) = rest.next() {
            let name = flag.split_once('=').map_or(flag.as_str(), |(n, _)| n);
            match name {
                "--set" if flag == "--set" => {
                    let value = rest
                        .next()
                        .ok_or_else(|| Error::Usage("--set needs PATH=VALUE".to_owned()))?;
                    sets.extend(["--set".to_owned(), value.clone()]);
                }
                "--set" => sets.push(flag.clone()),
                "--out" | "--kubeconfig" | "--cloud-url" => {
                    return Err(Error::Usage(format!(
                        "{name} is set by cargo xtask kind (use OUT_DIR for the reports)"
                    )));
                }
                _ => {}
            }
        }
        let stem = Path::new(scenario)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let out_dir = env
            .get("OUT_DIR")
            .unwrap_or_else(|| format!("out/kind/{stem}"));
        let port = |name: &str, default: u16| match env.get(name) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| Error::Usage(format!("{name}={v} is not a port number"))),
        };
        let target = env
            .get("CARGO_TARGET_DIR")
            .unwrap_or_else(|| "target".into());
        let or = |name: &str, default: &str| env.get(name).unwrap_or_else(|| default.to_owned());
        Ok(Settings {
            scenario: scenario.to_owned(),
            flags: flags.to_vec(),
            sets,
            cluster: or("CLUSTER_NAME", "loadtest"),
            keep_cluster: env.is_one("KEEP_CLUSTER"),
            kind_image: env.get("KIND_IMAGE"),
            kind_config: or("KIND_CONFIG", "ci/kind/cluster.yaml"),
            manifests: or("MANIFESTS", "ci/manifests"),
            log_dir: format!("{out_dir}/logs"),
            out_dir,
            harness: env.get("HARNESS"),
            built_harness: format!("{target}/release/harness"),
            skip_build: env.is_one("SKIP_BUILD"),
            skip_load: env.is_one("SKIP_LOAD"),
            image_tag: or("IMAGE_TAG", "dev"),
            cloud_port: port("CLOUD_PORT", 18080)?,
            metrics_port: port("METRICS_PORT", 18081)?,
            wait_timeout: or("WAIT_TIMEOUT", "180s"),
        })
    }
}

/// The JSON patch that replaces the provider container's args with `provider_args`, the
/// JSON array of strings `harness provider-args --json` prints. The fixed settings are
/// env in the manifest, so nothing else is lost; an unchanged template rolls nothing.
pub fn args_patch(provider_args: &str) -> std::result::Result<String, String> {
    let args: Value = serde_json::from_str(provider_args)
        .map_err(|e| format!("the provider's flags are not JSON ({e}): {provider_args}"))?;
    let strings = args
        .as_array()
        .is_some_and(|a| a.iter().all(Value::is_string));
    if !strings {
        return Err(format!(
            "the provider's flags are not an array of strings: {provider_args}"
        ));
    }
    Ok(json!([{
        "op": "replace",
        "path": "/spec/template/spec/containers/0/args",
        "value": args,
    }])
    .to_string())
}

/// kubectl's arguments that apply `patch` (an [`args_patch`]) to the provider Deployment in
/// the namespace `ns`.
pub fn patch_command<'a>(ns: &'a str, patch: &'a str) -> [&'a str; 8] {
    [
        "-n",
        ns,
        "patch",
        "deployment",
        "provider",
        "--type=json",
        "-p",
        patch,
    ]
}

/// `cargo xtask kind`: the run, with the process's environment and signals.
pub fn run(root: &Path, a: &Args) -> Result {
    let env = Env::process();
    let settings = Settings::new(root, &a.scenario, &a.flags, &env)?;
    let interrupt = Interrupt::install()?;
    let ctx = Ctx {
        root,
        env: &env,
        interrupt: &interrupt,
        timing: &Timing::standard(),
    };
    match session::execute(&ctx, &settings)? {
        0 => Ok(()),
        rc => Err(Error::Exit(u8::try_from(rc).unwrap_or(2))),
    }
}

/// `cargo xtask kind-images`.
pub fn images(root: &Path, a: &ImagesArgs) -> Result {
    images::run(root, a, &Env::process())
}
