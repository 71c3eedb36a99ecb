//! `cargo xtask check`: the one check, the same locally and in CI.
//!
//! One build serves every step: the test step compiles the workspace's crates with
//! clippy-driver as their compiler (lints are errors), the dependencies once with rustc, and
//! the steps after it run the binaries that build made (`LOADTEST_BIN_DIR`): a
//! `cargo build -p X` would compile a second copy of up to seventy crates with X's own
//! features. The test step runs the tests under cargo-nextest (cargo test with
//! `--cargo-test`, or when nextest is not installed); the doc tests, which nextest does not
//! run, are a step of their own.
//! The tests replay every fuzz target's seeds, corpus and past crashes; fuzzing itself is
//! `cargo xtask fuzz`, or `--fuzz-seconds N` here.

use std::path::Path;

use crate::step::{self, DOC_FEATURES, Result, Steps, TEST_FEATURES};

/// `cargo xtask check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Also fuzz every target for this many seconds after the checks (an instrumented
    /// release build of 4 to 5 minutes first). A crash fails the check.
    #[arg(
        long,
        env = "FUZZ_SECONDS",
        default_value_t = 0,
        value_name = "SECONDS"
    )]
    pub fuzz_seconds: u64,
    /// Run the test step under cargo test (one test binary after another, as many of its
    /// tests at a time as there are cores) instead of cargo-nextest (every crate's tests in one pool, a process per
    /// test, the slowest first: .config/nextest.toml). Without cargo-nextest installed the
    /// check uses cargo test and says so.
    #[arg(long, env = "CHECK_CARGO_TEST")]
    pub cargo_test: bool,
}

/// Runs every step in order; the first failure stops the check.
pub fn run(root: &Path, a: &Args) -> Result {
    let steps = Steps::start();
    let env = step::check_env(root)?;
    let bins = step::target_dir(root).join("debug");
    let cargo = |args: &[&str], env: &[(&str, String)]| step::command(root, "cargo", args, env);

    steps.step("cargo fmt --all --check");
    step::run(cargo(&["fmt", "--all", "--check"], &[]), "formatting")?;

    // The same build either way. cargo-nextest runs every crate's tests in one pool, a
    // process per test, the slowest first and the ones that wait on real time beside the
    // busy ones (.config/nextest.toml): on an idle 2-core machine the step took 5 min 26 s
    // against cargo test's 11 min, which runs one test binary after another, each ending on
    // its slowest test.
    let runner = if a.cargo_test {
        "test"
    } else if step::which("cargo-nextest").is_none() {
        steps.step("cargo-nextest is not installed: the tests run under cargo test (`cargo install cargo-nextest --locked` for the faster step)");
        "test"
    } else {
        "nextest run"
    };
    steps.step(&format!(
        "cargo {runner} --workspace --all-targets --features {TEST_FEATURES} --locked (built by clippy-driver: lints are errors)"
    ));
    let mut args: Vec<&str> = runner.split(' ').collect();
    args.extend_from_slice(&step::TEST_BUILD[1..]);
    if runner == "nextest run" {
        // Every failure named, not only the first.
        args.push("--no-fail-fast");
    }
    step::run(cargo(&args, &env), "the tests")?;

    steps.step(&format!(
        "cargo test --workspace --doc --features {TEST_FEATURES} --locked"
    ));
    step::run(
        cargo(
            &[
                "test",
                "--workspace",
                "--doc",
                "--features",
                TEST_FEATURES,
                "--locked",
            ],
            &env,
        ),
        "the doc tests",
    )?;

    steps.step(&format!(
        "cargo doc --workspace --no-deps --features {DOC_FEATURES} --locked (warnings are errors)"
    ));
    let mut doc_env = env.clone();
    doc_env.push(("RUSTDOCFLAGS", "-D warnings".to_owned()));
    step::run(
        cargo(
            &[
                "doc",
                "--workspace",
                "--no-deps",
                "--features",
                DOC_FEATURES,
                "--locked",
            ],
            &doc_env,
        ),
        "the docs",
    )?;

    steps.step(
        "ci/aws-clients.sh (boto3 and the AWS CLI against mock-cloud: S3, STS, DynamoDB, EC2, retry modes)",
    );
    step::run(
        step::command(root, "bash", &["ci/aws-clients.sh"], &env),
        "the AWS clients",
    )?;

    steps.step(
        "cargo xtask validate (kind assets: manifests, server dry run, shellcheck, Dockerfiles, workflow)",
    );
    crate::validate::validate(root, &steps, Some(&bins))?;

    // No step runs scenarios/smoke.yaml: the harness's tests run it in real time on the
    // embedded stack (virtual_time::smoke_gets_the_same_verdicts_and_call_counts_in_real_and_virtual_time,
    // whose verdicts must equal those of the virtual-time run that
    // virtual_time::two_virtual_runs_with_one_seed_write_the_same_result_apart_from_wall_time
    // requires to pass); the binary's `run` to its reports is soak.rs's short soak.
    let harness = bins.join("harness");
    for (what, args) in [
        (
            "harness run scenarios/hour-virtual.yaml (an hour of virtual time, about 15 s)",
            &[
                "run",
                "scenarios/hour-virtual.yaml",
                "--out",
                "target/hour-virtual",
            ][..],
        ),
        // A few generated scenarios through the whole model; the N ≥ 200 run that checks
        // the model is `harness selfcheck` with its defaults, a long run of its own.
        (
            "harness selfcheck -n 4 --seed 121 (four generated scenarios in virtual time, about 15 s)",
            &[
                "selfcheck",
                "-n",
                "4",
                "--seed",
                "121",
                "--out",
                "target/selfcheck",
            ][..],
        ),
    ] {
        steps.step(what);
        step::run(step::command(root, &harness, args, &env), what)?;
    }

    if a.fuzz_seconds > 0 {
        steps.step(&format!(
            "cargo xtask fuzz all {} (every fuzz target, {}s each, after an instrumented release build)",
            a.fuzz_seconds, a.fuzz_seconds
        ));
        crate::fuzz::run(
            root,
            &crate::fuzz::Args {
                target: Some("all".into()),
                seconds: Some(a.fuzz_seconds.to_string()),
                libfuzzer: Vec::new(),
            },
        )?;
    }

    steps.step(&format!("all checks passed in {}", steps.elapsed()));
    Ok(())
}
