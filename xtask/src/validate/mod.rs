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
//!    must be refused, which proves it on every run. Then `cargo xtask kind`'s args patch
//!    (`crate::kind::args_patch`) on the applied provider Deployment, and the two
//!    containers' command lines run as local processes: probes, a Bucket made Ready,
//!    SIGTERM, and every request the provider made allowed by its RBAC ([`pods`]).
//!    (`cargo xtask kind` itself is tested by the crate's own tests, with its tools
//!    stubbed.)
//!    The sweep's Indexed Job as the harness writes it from scenarios/sweep-r.yaml
//!    (`harness sweep --kubernetes-job`, results in S3 and on a volume): its shape, the
//!    same schema validation, and a server dry run that stores nothing ([`sweep_job`]).
//! 3. shellcheck on every ci/**/*.sh, .ci/run and the workflow's `run:` blocks.
//! 4. The Dockerfiles, one for each image `cargo xtask kind-images` builds (provider,
//!    mock-cloud, harness): hadolint, their COPY sources, cargo packages and binaries
//!    ([`docker`]).
//! 5. ci/github/loadtest.yml and ci/kind/cluster.yaml: expected keys, pinned versions that
//!    agree, every referenced file present ([`workflow`]).
//!
//! Needs kubectl, python3 with kubernetes-validate, shellcheck and hadolint (.ci/run
//! installs them). A missing tool is an error when `CI` or
//! `REQUIRE_TOOLS` is set (.ci/run sets `REQUIRE_TOOLS=1`); otherwise the checks that need
//! it are skipped, with a message, so that a developer without them can still run the
//! rest.

mod docker;
mod local;
mod manifests;
mod need;
mod pods;
mod schemas;
mod server;
mod sweep_job;
mod tools;
mod validation;
mod workflow;

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::files::{files_under, io_error, read, relative, write};
use crate::step::{self, Error, Result, Steps, WorkDir};
use need::report;
use tools::{Tool, Tools};
use validation::Validation;

/// `cargo xtask validate`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Environment: REQUIRE_TOOLS=1 or CI=1 makes a missing tool an error \
(otherwise its checks are skipped, with a message); LOADTEST_BIN_DIR, a directory with the \
mock-apiserver, provider, mock-cloud and harness debug binaries to run (`cargo xtask check` passes its \
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
    let work = WorkDir::create("xtask-validate")?;
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
                Some("api version mockcloud.example.org/"),
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
                Some("api version aws.upbound.io/"),
            )?;
            println!("every Kubernetes kind valid (the ProviderConfig: next check)");
        }
        steps.step(
            "the example's ProviderConfig against provider-upjet-aws's field names; the names the harness is given",
        );
        report(manifests::check_upjet(&upjet))?;
        println!("ProviderConfig fields, endpoint, credentials and the harness's names check out");

        v.server_checks(&stack, &upjet)?;
        v.sweep_job(&mut tools)?;
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
    let expected: Vec<String> = crate::kind::ALL_IMAGES
        .iter()
        .map(|name| format!("ci/docker/{name}.Dockerfile"))
        .collect();
    let mut sorted = expected.clone();
    sorted.sort();
    if dockerfiles != sorted {
        return Err(Error::Failed(format!(
            "expected the Dockerfiles of `cargo xtask kind-images`'s images in ci/docker ({}), found {}",
            expected.join(", "),
            dockerfiles.join(", ")
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
