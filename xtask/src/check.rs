//! `cargo xtask check`: the one check, the same locally and in CI.
//!
//! One build serves every step: the test step compiles the workspace's crates with
//! clippy-driver as their compiler (lints are errors), the dependencies once with rustc, and
//! the steps after it run the binaries that build made (`LOADTEST_BIN_DIR`): a
//! `cargo build -p X` would compile a second copy of up to seventy crates with X's own
//! features. The test step runs the tests under cargo-nextest (cargo test with
//! `--cargo-test`, or when nextest is not installed); the doc tests, which nextest does not
//! run, are a step of their own. Under nextest the steps after the tests run beside them at
//! the lowest CPU priority, in two lanes ([`Part`]), their output shown when the tests end.
//! The docs come from that build too: rustdoc reads the compiled dependencies the tests
//! link, where `cargo doc` would first check five hundred crates again (`crate::rustdoc`).
//! The tests replay every fuzz target's seeds, corpus and past crashes; fuzzing itself is
//! `cargo xtask fuzz`, or `--fuzz-seconds N` here.

use std::path::{Path, PathBuf};

use crate::step::{self, Error, Result, Steps, TEST_FEATURES};

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
    /// Only the test build (the one the test step compiles, with the same settings), then
    /// exit: `.ci/run` builds with this while it installs the Python tools, then runs the
    /// whole check, which finds everything built.
    #[arg(long)]
    pub build_only: bool,
}

/// Runs every step; a failure of the tests or of a step after them fails the check.
///
/// Under cargo-nextest the steps after the tests (doc tests, docs, the AWS clients, the
/// kind assets, hour-virtual, selfcheck) run beside the tests, at the lowest CPU priority
/// (`nice -n 19`), in two child processes ([`after_tests_lane`], one per [`Part`]): the
/// test step spends about half of the machine's two cores waiting on real time, and those
/// steps fill it. The tests run from the build's list of binaries (nextest's reuse of a
/// build), so no cargo of theirs waits on the doc steps' lock of the target directory.
pub fn run(root: &Path, a: &Args) -> Result {
    let steps = clock_from_env();
    let env = step::check_env(root)?;
    let cargo = |args: &[&str], env: &[(&str, String)]| step::command(root, "cargo", args, env);

    let nextest = !a.cargo_test && step::which("cargo-nextest").is_some();
    if a.build_only {
        if nextest {
            build_and_list(root, &steps, &env)?;
        } else {
            steps.step(&format!(
                "cargo test --workspace --all-targets --features {TEST_FEATURES} --locked --no-run (built by clippy-driver: lints are errors)"
            ));
            let mut args = step::TEST_BUILD.to_vec();
            args.push("--no-run");
            step::run(cargo(&args, &env), "the test build")?;
        }
        steps.step(&format!("the test build is done, in {}", steps.elapsed()));
        return Ok(());
    }

    steps.step("cargo fmt --all --check");
    step::run(cargo(&["fmt", "--all", "--check"], &[]), "formatting")?;

    if !a.cargo_test && !nextest {
        steps.step("cargo-nextest is not installed: the tests run under cargo test, the steps after them in turn (`cargo install cargo-nextest --locked` for the faster check)");
    }
    if nextest {
        tests_beside_the_rest(root, &steps, &env)?;
    } else {
        // cargo test runs one test binary after another, each ending on its slowest test:
        // on an idle 2-core machine 11 min against nextest's 5 min 26 s.
        steps.step(&format!(
            "cargo test --workspace --all-targets --features {TEST_FEATURES} --locked (built by clippy-driver: lints are errors)"
        ));
        step::run(cargo(&step::TEST_BUILD, &env), "the tests")?;
        after_tests(root, &steps, &env)?;
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

/// The environment variable that carries the check's clock (when it started, wall-clock
/// seconds since 1970) to the lane of steps beside the tests, so that their headings read
/// as the check's; and from `.ci/run` to the check, so that its headings count from CI's
/// start, including the time cargo takes to build `cargo xtask` before it runs.
const STARTED_AT: &str = "XTASK_CHECK_STARTED_AT";

/// A clock started at [`STARTED_AT`], or now.
fn clock_from_env() -> Steps {
    match std::env::var(STARTED_AT).ok().and_then(|s| s.parse().ok()) {
        Some(at) => Steps::started_at(at),
        None => Steps::start(),
    }
}

/// The test build and its list of binaries, then the tests under cargo-nextest with the
/// steps after them beside, their output followed once the tests end.
fn tests_beside_the_rest(root: &Path, steps: &Steps, env: &[(&str, String)]) -> Result {
    let (binaries, metadata) = build_and_list(root, steps, env)?;
    let dir = step::target_dir(root).join("check");
    let lanes = Part::ALL
        .into_iter()
        .map(|part| {
            let log = dir.join(format!("after-tests-{}.log", part.name()));
            Ok((part, start_lane(root, steps, env, part, &log)?))
        })
        .collect::<Result<Vec<(Part, Lane)>>>()?;
    steps.step(&format!(
        "cargo nextest run --no-fail-fast (every test of that build); beside it, at the lowest CPU priority, the steps after the tests in two lanes (their output in {}, shown when the tests end)",
        lanes
            .iter()
            .map(|(_, lane)| lane.log.strip_prefix(root).unwrap_or(&lane.log).display().to_string())
            .collect::<Vec<_>>()
            .join(" and ")
    ));
    let binaries = binaries.display().to_string();
    let metadata = metadata.display().to_string();
    let tests = step::run(
        step::command(
            root,
            "cargo",
            &[
                "nextest",
                "run",
                "--binaries-metadata",
                &binaries,
                "--cargo-metadata",
                &metadata,
                // Every failure named, not only the first.
                "--no-fail-fast",
            ],
            env,
        ),
        "the tests",
    );
    // Each lane's output in turn; every lane is followed to its end, so that each failure
    // is shown.
    let mut failures: Vec<String> = tests.err().map(|e| e.to_string()).into_iter().collect();
    for (part, mut lane) in lanes {
        println!(
            "\n--- the steps beside the tests, {} ({}):",
            part.what(),
            if lane.done() {
                "ended"
            } else {
                "still running, followed"
            }
        );
        if let Err(e) = lane.follow() {
            failures.push(e.to_string());
        }
    }
    match failures.len() {
        0 => Ok(()),
        _ => Err(Error::Failed(failures.join("; "))),
    }
}

/// The two lanes of steps after the tests. Each is a chain of steps where one waits on
/// the last: the docs lane is cargo and rustdoc, CPU-bound; the tools lane waits as much
/// on Python, kubectl, a download and its servers as it computes. In one lane the tools
/// ran after the docs, alone, for about 40 s after the tests had ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// The doc tests and the docs.
    Docs,
    /// The AWS clients, the vendored SDK's trim, the kind assets, hour-virtual and
    /// selfcheck.
    Tools,
}

impl Part {
    const ALL: [Part; 2] = [Part::Docs, Part::Tools];

    /// The name `--part` takes, as clap spells it.
    fn name(self) -> String {
        use clap::ValueEnum;
        self.to_possible_value()
            .expect("no part is skipped")
            .get_name()
            .to_owned()
    }

    fn what(self) -> &'static str {
        match self {
            Part::Docs => "doc tests and docs",
            Part::Tools => "AWS clients, the SDK's trim, kind assets, hour-virtual, selfcheck",
        }
    }
}

/// The test build under cargo-nextest, writing its list of binaries and cargo's metadata
/// (what `cargo nextest run` reads to run a build without building) under
/// `target/check/`; their paths.
fn build_and_list(
    root: &Path,
    steps: &Steps,
    env: &[(&str, String)],
) -> Result<(PathBuf, PathBuf)> {
    let dir = step::target_dir(root).join("check");
    std::fs::create_dir_all(&dir).map_err(|e| Error::Usage(format!("{}: {e}", dir.display())))?;
    let binaries = dir.join("binaries-metadata.json");
    let metadata = dir.join("cargo-metadata.json");
    steps.step(&format!(
        "cargo nextest list --workspace --all-targets --features {TEST_FEATURES} --locked --list-type binaries-only (the test build, by clippy-driver: lints are errors)"
    ));
    let mut list: Vec<&str> = vec!["nextest", "list"];
    list.extend_from_slice(&step::TEST_BUILD[1..]);
    list.extend_from_slice(&["--list-type", "binaries-only", "--message-format", "json"]);
    step::run_to_file(
        step::command(root, "cargo", &list, env),
        &binaries,
        "the test build",
    )?;
    step::run_to_file(
        step::command(
            root,
            "cargo",
            &["metadata", "--format-version", "1", "--locked"],
            env,
        ),
        &metadata,
        "cargo metadata",
    )?;
    Ok((binaries, metadata))
}

/// A child process running [`after_tests_lane`], its output going to a file.
struct Lane {
    child: std::process::Child,
    log: PathBuf,
}

/// Starts `cargo xtask` (this binary) `after-tests --part PART` under `nice -n 19` when
/// `nice` is installed, its output to `log`.
fn start_lane(
    root: &Path,
    steps: &Steps,
    env: &[(&str, String)],
    part: Part,
    log: &Path,
) -> Result<Lane> {
    // The test build has just built this binary again (its own compiler settings differ
    // from `cargo run`'s), replacing the file this process runs from.
    let built = step::target_dir(root).join("debug").join("xtask");
    let me = if built.is_file() {
        built
    } else {
        std::env::current_exe()
            .map_err(|e| Error::Usage(format!("cannot find cargo xtask's own binary: {e}")))?
    };
    let me = me.display().to_string();
    let mut env = env.to_vec();
    env.push((STARTED_AT, steps.started_unix().to_string()));
    let mut c = match step::which("nice") {
        Some(nice) => step::command(
            root,
            nice,
            &["-n", "19", &me, "after-tests", "--part", &part.name()],
            &env,
        ),
        None => step::command(root, &me, &["after-tests", "--part", &part.name()], &env),
    };
    let out =
        std::fs::File::create(log).map_err(|e| Error::Usage(format!("{}: {e}", log.display())))?;
    let err = out
        .try_clone()
        .map_err(|e| Error::Usage(format!("{}: {e}", log.display())))?;
    c.stdout(out).stderr(err);
    let child = c
        .spawn()
        .map_err(|e| Error::Usage(format!("cannot start the steps beside the tests: {e}")))?;
    Ok(Lane {
        child,
        log: log.to_path_buf(),
    })
}

impl Lane {
    /// Whether the lane has ended.
    fn done(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Prints the lane's output so far and then as it comes, until the lane ends; its
    /// result.
    fn follow(mut self) -> Result {
        use std::io::{Read, Seek, SeekFrom, Write};
        let mut file = std::fs::File::open(&self.log)
            .map_err(|e| Error::Usage(format!("{}: {e}", self.log.display())))?;
        let mut at = 0;
        let mut buf = Vec::new();
        loop {
            let status = self
                .child
                .try_wait()
                .map_err(|e| Error::Usage(format!("the steps beside the tests: {e}")))?;
            buf.clear();
            file.seek(SeekFrom::Start(at))
                .and_then(|_| file.read_to_end(&mut buf))
                .map_err(|e| Error::Usage(format!("{}: {e}", self.log.display())))?;
            at += buf.len() as u64;
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(&buf).and_then(|()| out.flush());
            drop(out);
            match status {
                Some(s) if s.success() => return Ok(()),
                Some(s) => {
                    return Err(Error::Failed(format!(
                        "the steps beside the tests failed ({s})"
                    )));
                }
                None => std::thread::sleep(std::time::Duration::from_millis(200)),
            }
        }
    }
}

/// `cargo xtask after-tests --part PART`, a lane [`run`] starts beside the tests: one part
/// of the steps after them, on the check's clock.
pub fn after_tests_lane(root: &Path, part: Part) -> Result {
    let steps = clock_from_env();
    let env = step::check_env(root)?;
    match part {
        Part::Docs => after_tests_docs(root, &steps, &env)?,
        Part::Tools => after_tests_tools(root, &steps, &env)?,
    }
    steps.step(&format!(
        "the steps beside the tests passed: {}",
        part.what()
    ));
    Ok(())
}

/// `cargo xtask docs`: the check's test build, then its doc step.
pub fn docs(root: &Path) -> Result {
    let steps = Steps::start();
    let env = step::check_env(root)?;
    steps.step(&format!(
        "cargo test --workspace --all-targets --features {TEST_FEATURES} --locked --no-run (the check's build)"
    ));
    let mut args = step::TEST_BUILD.to_vec();
    args.push("--no-run");
    step::run(step::command(root, "cargo", &args, &env), "the test build")?;
    steps.step("rustdoc of the workspace's libraries and binaries (warnings are errors)");
    crate::rustdoc::document(root, &env)?;
    steps.step(&format!("done in {}", steps.elapsed()));
    Ok(())
}

/// The steps after the tests, in order; the first failure stops them.
fn after_tests(root: &Path, steps: &Steps, env: &[(&str, String)]) -> Result {
    after_tests_docs(root, steps, env)?;
    after_tests_tools(root, steps, env)
}

/// The doc tests, then the docs.
fn after_tests_docs(root: &Path, steps: &Steps, env: &[(&str, String)]) -> Result {
    let cargo = |args: &[&str], env: &[(&str, String)]| step::command(root, "cargo", args, env);

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
            env,
        ),
        "the doc tests",
    )?;

    steps.step(
        "rustdoc of the workspace's libraries and binaries, as cargo doc --workspace --no-deps documents them, on the test build's compiled dependencies (warnings are errors)",
    );
    crate::rustdoc::document(root, env)
}

/// The steps after the tests that run the build's binaries and the tools beside them, in
/// order; the first failure stops them.
fn after_tests_tools(root: &Path, steps: &Steps, env: &[(&str, String)]) -> Result {
    let bins = step::target_dir(root).join("debug");
    steps.step(
        "ci/aws-clients.sh (boto3 and the AWS CLI against mock-cloud: S3, STS, DynamoDB, EC2, retry modes)",
    );
    step::run(
        step::command(root, "bash", &["ci/aws-clients.sh"], env),
        "the AWS clients",
    )?;

    let trimmed: Vec<String> = crate::trim_sdk::SDKS
        .iter()
        .map(|s| format!("{} {}", s.name, s.version))
        .collect();
    steps.step(&format!(
        "cargo xtask trim-sdk --check (vendor/ holds the trim of the published {})",
        trimmed.join(", ")
    ));
    crate::trim_sdk::check(root)?;

    steps.step(
        "cargo xtask validate (kind assets: manifests, server dry run, shellcheck, Dockerfiles, workflow)",
    );
    crate::validate::validate(root, steps, Some(&bins))?;

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
        step::run(step::command(root, &harness, args, env), what)?;
    }
    Ok(())
}
