//! `cargo xtask`: the project's own commands, in Rust (the cargo-xtask convention): the
//! check CI runs, the kind assets' validation, a crate's fast test loop on the check's
//! build, fuzzing, and a scenario run against a kind cluster.
//!
//! `cargo xtask` is an alias (`.cargo/config.toml`) for `cargo run -p xtask --`; the crate
//! depends on clap, serde_json, serde-saphyr and signal-hook, so its first build takes
//! seconds.

mod check;
mod files;
mod fuzz;
mod kind;
mod net;
mod rustdoc;
mod step;
mod test;
mod trim_sdk;
mod validate;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The project's commands. Each prints its steps with the time since it started.
#[derive(Parser, Debug)]
#[command(name = "cargo xtask", bin_name = "cargo xtask", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Every check CI runs, in one build: formatting; clippy's lints (as errors) and every
    /// test in one test build; doc tests; docs; the AWS clients against mock-cloud; the kind
    /// assets; the hour-virtual and selfcheck runs.
    Check(check::Args),
    /// A crate's tests on the check's build (same features, same compiler settings, so
    /// nothing is compiled twice): `cargo xtask test harness -- some_test`.
    Test(test::Args),
    /// The fuzz targets for a bounded time, on stable Rust: an instrumented release build
    /// (4 to 5 minutes the first time), then SECONDS per target.
    Fuzz(fuzz::Args),
    /// Offline checks of the kind assets in ci/ (no Docker, no kind): the rendered
    /// manifests against the Kubernetes schemas and the harness's names, a server dry run
    /// against mock-apiserver (custom resources against their CRDs) with the provider's
    /// args patch, the containers' command lines as local processes, shellcheck, hadolint
    /// and the Dockerfiles, the workflow and the kind config.
    Validate(validate::Args),
    /// One scenario against a kind cluster, end to end: `cargo xtask kind
    /// scenarios/smoke.yaml`.
    ///
    /// Builds the images and the harness, creates the kind cluster (ci/kind/cluster.yaml),
    /// loads the images, applies ci/manifests, sets the provider's flags to the scenario's
    /// (`harness provider-args`), waits for both Deployments, port-forwards mock-cloud and
    /// the provider's metrics (started again whenever they end), runs `harness run
    /// SCENARIO --kubeconfig … --cloud-url …`, and always, also after a failure or Ctrl-C,
    /// collects the logs, ends the port-forwards and deletes the cluster it created. Exits
    /// with the harness's exit code.
    Kind(kind::Args),
    /// Builds the images ci/manifests runs (loadtest/provider and loadtest/mock-cloud, from
    /// ci/docker) and the one a sweep's Indexed Job runs (loadtest/harness), and loads them
    /// into the kind cluster.
    KindImages(kind::ImagesArgs),
    /// The workspace's docs as the check writes them: the check's test build, then rustdoc
    /// on each library and binary `cargo doc --workspace --no-deps` documents, on that
    /// build's compiled dependencies, warnings as errors, into target/doc.
    Docs,
    /// Cuts published AWS SDK crates (aws-sdk-ec2) down to the operations the project calls
    /// and writes them to vendor/ (vendor/README.md): `cargo xtask trim-sdk`, or `--check`
    /// to compare the copies with a fresh trim.
    TrimSdk(trim_sdk::Args),
    /// One lane of the steps `cargo xtask check` runs beside the tests: the doc tests and
    /// docs, or the AWS clients, the SDK's trim, the kind assets, hour-virtual and
    /// selfcheck; the check starts both.
    #[command(hide = true)]
    AfterTests {
        /// Which lane.
        #[arg(long, value_enum)]
        part: check::Part,
    },
}

fn main() -> ExitCode {
    // The check's test build runs this binary as its compiler wrapper (rustdoc.rs).
    if let Some(code) = rustdoc::as_rustc_wrapper() {
        return code;
    }
    let cli = Cli::parse();
    let root = step::workspace_root();
    let result = match cli.command {
        Command::Check(a) => check::run(&root, &a),
        Command::Test(a) => test::run(&root, &a),
        Command::Fuzz(a) => fuzz::run(&root, &a),
        Command::Validate(a) => validate::run(&root, &a),
        Command::Kind(a) => kind::run(&root, &a),
        Command::KindImages(a) => kind::images(&root, &a),
        Command::TrimSdk(a) => trim_sdk::run(&root, &a),
        Command::Docs => check::docs(&root),
        Command::AfterTests { part } => check::after_tests_lane(&root, part),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if !matches!(e, step::Error::Exit(_)) {
                eprintln!("cargo xtask: {e}");
            }
            ExitCode::from(e.code())
        }
    }
}
